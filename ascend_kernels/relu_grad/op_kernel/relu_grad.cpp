// ReluGrad (AscendC): out = feature > 0 ? grad : 0 over contiguous tensors. A select, like
// ThresholdGradV2D at threshold 0 bit for bit (upstream multiplies by the mask: inf * 0 = NaN).
//
// The kernel class is kernel_common::SelectKernel (common/select_kernel.h); this file defines the
// operator's entry points, one per dtype of the table, as the host launcher and the NPU build call
// them.
#include "kernel_operator.h"

#include "../../common/select_kernel.h"
#include "ascend_kernels/kernel_args.h"

// relu_grad_<name> for every row of the dtype table; a build whose SoC lacks a row's feature keeps
// the symbol with an empty body (select_kernel.h).
ASCEND_KERNELS_KERNEL_DTYPES(ASCEND_KERNELS_RELU_GRAD_ENTRY)
