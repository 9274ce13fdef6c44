// Host-side entry points of the kernels when they run on the CPU through the project's
// implementation of the AscendC primitives (ascend_kernels/cpu_ascendc/).
//
// A launch is `block_dim` independent blocks ("AI cores"). The caller decides where the blocks
// run (inline, std::threads, XLA's thread pool): it calls `run_block(i)` once for every
// i in [0, block_dim), in any order, from any threads. Each call emulates one core with its own
// unified buffer of `ub_size` bytes; GetBlockIdx()/GetBlockNum() answer i / block_dim.
#pragma once

#include <cstdint>
#include <functional>

#include "ascend_kernels/dtype_soc_table.h"  // KernelSoc: whose AscendC rules a launch runs under
#include "ascend_kernels/kernel_args.h"

namespace ascend_kernels {

struct HostLaunch {
  const char* kernel_name = "";
  uint32_t block_dim = 0;
  std::function<void(uint32_t block_idx)> run_block;
};

// Pointers are the kernel's GM arguments: contiguous tensors of tiling->tiling.total_num
// elements of `dtype`; ThresholdGradV2D's `threshold` is one element of the tiling's gm_dtype
// when its threshold source is kDevice (else unused, may be null). `tiling` must outlive the
// launch. `ub_size` is the platform's UB (the tiling input); each block gets the part of it `soc`
// lets a kernel use.
HostLaunch MakeThresholdGradV2DLaunch(KernelDType dtype, const void* grad, const void* feature,
                                      const void* threshold, void* out, void* workspace,
                                      const ThresholdGradV2DTilingData* tiling, uint64_t ub_size,
                                      KernelSoc soc = KernelSoc::kHost);

HostLaunch MakeReluGradLaunch(KernelDType dtype, const void* grad, const void* feature, void* out,
                              void* workspace, const ReluGradTilingData* tiling, uint64_t ub_size,
                              KernelSoc soc = KernelSoc::kHost);

}  // namespace ascend_kernels
