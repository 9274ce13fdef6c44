// Host-side entry points of the kernels when they run on the CPU through the project's
// implementation of the AscendC primitives (ascend_kernels/cpu_ascendc/).
//
// A launch is `block_dim` independent blocks ("AI cores"). The caller decides where the blocks
// run (inline, std::threads, a thread pool): it calls `run_block(i)` once for every i in
// [0, block_dim), in any order, from any threads. Each call emulates one core with its own
// unified buffer; GetBlockIdx()/GetBlockNum() answer i / block_dim.
#pragma once

#include <cstdint>
#include <functional>

#include "ascend_kernels/dtype_soc_table.h"
#include "ascend_kernels/kernel_args.h"

namespace ascend_kernels {

struct HostLaunch {
  uint32_t block_dim = 0;
  std::function<void(uint32_t block_idx)> run_block;
};

// Pointers are the kernel's GM arguments: tensors of tiling->dtype, as large as the tiling
// reads and writes; ThresholdGradV2D's `threshold` is one element of the tiling's gm_dtype when
// its threshold source is kDevice (else unused, may be null). `tiling` must outlive the launch.
// `ub_size` is the platform's UB (the tiling input); each block runs under the AscendC rules of
// `soc`'s arch, with the part of ub_size they let a kernel use. A dtype no kernel runs gives an
// empty launch (block_dim 0, no run_block).
HostLaunch MakeThresholdGradV2DLaunch(const void* grad, const void* feature, const void* threshold,
                                      void* out, void* workspace,
                                      const ThresholdGradV2DTilingData* tiling, uint64_t ub_size,
                                      Soc soc = Soc::kHost);

HostLaunch MakeReluGradLaunch(const void* grad, const void* feature, void* out, void* workspace,
                              const ReluGradTilingData* tiling, uint64_t ub_size,
                              Soc soc = Soc::kHost);

}  // namespace ascend_kernels
