// ReluGrad (AscendC): out = feature > 0 ? grad : 0. A select, like ThresholdGradV2D at threshold
// 0 bit for bit (upstream multiplies by the mask: inf * 0 = NaN).
//
// One block of the kernel class (common/threshold_grad_kernel.h) on the element type of
// tiling.dtype; vector cores only. The workspace is unused; the tiling struct is passed by value.
#include "kernel_operator.h"

#include "../../common/threshold_grad_kernel.h"

extern "C" __global__ __aicore__ void relu_grad(GM_ADDR grad, GM_ADDR feature, GM_ADDR out,
                                                GM_ADDR workspace, ReluGradTilingData tiling) {
  (void)workspace;
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
  ascend_kernels::RunKernelBlock<ascend_kernels::KernelOp::kReluGrad>(grad, feature, nullptr, out,
                                                                      tiling);
}
