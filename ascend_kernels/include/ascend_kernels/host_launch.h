// Host-side entry points of the kernels when they run on the CPU through the project's
// implementation of the AscendC primitives (ascend_kernels/cpu_ascendc/).
//
// A launch is `block_dim` independent blocks ("AI cores"). The caller decides where the blocks
// run (inline, std::threads, a thread pool): it calls RunBlock(i) once for every i in
// [0, block_dim), in any order, from any threads. Each call emulates one core with its own
// unified buffer; GetBlockIdx()/GetBlockNum() answer i / block_dim. A launch is plain data:
// making and running one allocates nothing.
#pragma once

#include <cstdint>

#include "ascend_kernels/dtype_soc_table.h"
#include "ascend_kernels/kernel_args.h"

namespace ascend_kernels {

struct HostLaunch {
  uint32_t block_dim = 0;  // 0: a dtype no kernel runs, or an unknown SoC: nothing to run
  KernelOp op = KernelOp::kThresholdGradV2D;
  const void* grad = nullptr;
  const void* feature = nullptr;
  const void* threshold = nullptr;
  void* out = nullptr;
  void* workspace = nullptr;
  const void* tiling = nullptr;  // ThresholdGradV2DTilingData or ReluGradTilingData, by op
  uint64_t ub_size = 0;
  Soc soc = Soc::kHost;

  void RunBlock(uint32_t block_idx) const;
};

// Pointers are the kernel's GM arguments: tensors of tiling->dtype, as large as the tiling
// reads and writes; ThresholdGradV2D's `threshold` is one element of the tiling's gm_dtype when
// its threshold source is kDevice (else unused, may be null). `tiling` must outlive the launch.
// `ub_size` is the platform's UB (the tiling input); each block runs under the AscendC rules of
// `soc`'s arch, with the part of ub_size they let a kernel use.
HostLaunch MakeThresholdGradV2DLaunch(const void* grad, const void* feature, const void* threshold,
                                      void* out, void* workspace,
                                      const ThresholdGradV2DTilingData* tiling, uint64_t ub_size,
                                      Soc soc = Soc::kHost);

HostLaunch MakeReluGradLaunch(const void* grad, const void* feature, void* out, void* workspace,
                              const ReluGradTilingData* tiling, uint64_t ub_size,
                              Soc soc = Soc::kHost);

}  // namespace ascend_kernels
