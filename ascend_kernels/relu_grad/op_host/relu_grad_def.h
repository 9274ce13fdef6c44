// ReluGrad's operator definition: the dtypes it runs on each SoC (docs/behaviour.md §2), int64
// where the SoC's API has it at threshold 0 (the Ascend950's count-form Maxs/Mins/Adds).
#pragma once

#include "common/op_host/op_dtypes.h"

namespace ascend_kernels {

constexpr KernelDTypeList ReluGradDtypes(KernelSoc soc) {
  return OpDtypes(soc, KernelOp::kReluGrad);
}

}  // namespace ascend_kernels
