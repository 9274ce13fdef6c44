// ThresholdGradV2D's operator definition: the dtypes it runs on each SoC (docs/behaviour.md §2),
// int64 only where the SoC's API has the exact-integer path at any threshold.
#pragma once

#include "common/op_host/op_dtypes.h"

namespace ascend_kernels {

constexpr KernelDTypeList ThresholdGradV2DDtypes(KernelSoc soc) {
  return OpDtypes(soc, KernelOp::kThresholdGradV2D);
}

}  // namespace ascend_kernels
