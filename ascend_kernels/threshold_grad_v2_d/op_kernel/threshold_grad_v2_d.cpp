// ThresholdGradV2D (AscendC): out = feature > threshold ? grad : 0.
//
// One block of the kernel class (common/threshold_grad_kernel.h) on the element type of
// tiling.dtype; vector cores only. `threshold` is read (one element of the tiling's gm_dtype) when
// the tiling says ThresholdSource::kDevice, else unused and may be null; the workspace is unused.
// The tiling struct is passed by value: the launch copies it into the kernel's arguments in
// stream order, so the host keeps no device copy (kernel_args.h).
#include "kernel_operator.h"

#include "../../common/threshold_grad_kernel.h"

extern "C" __global__ __aicore__ void threshold_grad_v2_d(GM_ADDR grad, GM_ADDR feature,
                                                          GM_ADDR threshold, GM_ADDR out,
                                                          GM_ADDR workspace,
                                                          ThresholdGradV2DTilingData tiling) {
  (void)workspace;
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
  ascend_kernels::RunKernelBlock<ascend_kernels::KernelOp::kThresholdGradV2D>(
      grad, feature, threshold, out, tiling);
}
