// ThresholdGradV2D (AscendC): out = feature > threshold ? grad : 0 over contiguous tensors.
//
// The kernel class is kernel_common::SelectKernel (common/select_kernel.h); this file defines the
// operator's entry points, one per dtype, as the host launcher and the NPU build call them.
#include "kernel_operator.h"

#include "../../common/select_kernel.h"
#include "ascend_kernels/kernel_args.h"

#define THRESHOLD_GRAD_V2_D_ENTRY(SUFFIX, TYPE) \
  ASCEND_KERNELS_THRESHOLD_GRAD_ENTRY(threshold_grad_v2_d_##SUFFIX, TYPE)

THRESHOLD_GRAD_V2_D_ENTRY(float32, float)
THRESHOLD_GRAD_V2_D_ENTRY(float16, half)
#if ASCEND_KERNELS_HAS_BF16
THRESHOLD_GRAD_V2_D_ENTRY(bfloat16, bfloat16_t)
#else
ASCEND_KERNELS_ABSENT_THRESHOLD_GRAD_ENTRY(
    threshold_grad_v2_d_bfloat16)  // no bfloat16 Cast on this arch
#endif
THRESHOLD_GRAD_V2_D_ENTRY(int32, int32_t)
THRESHOLD_GRAD_V2_D_ENTRY(int8, int8_t)
THRESHOLD_GRAD_V2_D_ENTRY(uint8, uint8_t)
#if defined(ASCEND_KERNELS_CPU_ASCENDC)
THRESHOLD_GRAD_V2_D_ENTRY(int64, int64_t)   // host SoC only
THRESHOLD_GRAD_V2_D_ENTRY(float64, double)  // host SoC only
#endif
