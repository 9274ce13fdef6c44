// ReluGrad (AscendC): out = feature > 0 ? grad : 0 over contiguous tensors. A select, like
// ThresholdGradV2D at threshold 0 bit for bit (upstream multiplies by the mask: inf * 0 = NaN).
//
// The kernel class is kernel_common::SelectKernel (common/select_kernel.h); this file defines the
// operator's entry points, one per dtype, as the host launcher and the NPU build call them.
#include "kernel_operator.h"

#include "../../common/select_kernel.h"
#include "ascend_kernels/kernel_args.h"

#define RELU_GRAD_ENTRY(SUFFIX, TYPE) ASCEND_KERNELS_RELU_GRAD_ENTRY(relu_grad_##SUFFIX, TYPE)

RELU_GRAD_ENTRY(float32, float)
RELU_GRAD_ENTRY(float16, half)
#if ASCEND_KERNELS_HAS_BF16
RELU_GRAD_ENTRY(bfloat16, bfloat16_t)
#else
ASCEND_KERNELS_ABSENT_RELU_GRAD_ENTRY(relu_grad_bfloat16)  // no bfloat16 Cast on this arch
#endif
RELU_GRAD_ENTRY(int32, int32_t)
RELU_GRAD_ENTRY(int8, int8_t)
RELU_GRAD_ENTRY(uint8, uint8_t)
#if ASCEND_KERNELS_HAS_INT64
RELU_GRAD_ENTRY(int64, int64_t)  // host SoC and the Ascend950 (soc_features.h)
#endif
#if defined(ASCEND_KERNELS_CPU_ASCENDC)
RELU_GRAD_ENTRY(float64, double)  // host SoC only
#endif
