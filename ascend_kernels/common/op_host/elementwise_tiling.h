// The per-core split both operators tile by (docs/behaviour.md §3): a pure function of the element
// count, the dtype's row (its size and UB divisor) and the platform.
#pragma once

#include <cstdint>
#include <string>

#include "ascend_kernels/kernel_args.h"

namespace ascend_kernels {

inline constexpr uint64_t kTilingBlockSize = 256;  // bytes, docs/behaviour.md §3 BLOCK_SIZE

// Fills `tiling` and returns true, or returns false with a reason in `error` (n == 0, a dtype no
// kernel runs, a UB too small for one block per buffer, core_num == 0, sizes that overflow).
bool ElementwiseTilingFor(uint64_t num_elements, int32_t dtype, uint64_t ub_size, uint64_t core_num,
                          ElementwiseTiling* tiling, std::string* error);

}  // namespace ascend_kernels
