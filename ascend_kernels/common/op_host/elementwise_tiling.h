// The per-core split shared by ThresholdGradV2D and ReluGrad (docs/behaviour.md §3): a pure
// function of the element count, the element size, the kernel's UB divisor and the platform.
#pragma once

#include <cstdint>
#include <string>

#include "ascend_kernels/kernel_args.h"

namespace jax_threshold::aclnn {

inline constexpr uint64_t kTilingBlockSize = 256;  // bytes, docs/behaviour.md §3 BLOCK_SIZE

// Fills `tiling` and returns true, or returns false with a reason in `error` (n == 0, a UB too
// small for one block per buffer, core_num == 0, sizes that overflow).
// `ub_data_number` is how many tile-sized buffers the kernel keeps in UB for this dtype.
bool ComputeElementwiseTiling(uint64_t num_elements, uint64_t dtype_bytes, uint64_t ub_data_number,
                              uint64_t ub_size, uint64_t core_num,
                              ascend_kernels::ElementwiseTiling* tiling, std::string* error);

}  // namespace jax_threshold::aclnn
