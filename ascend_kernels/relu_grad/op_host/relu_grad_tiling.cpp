#include "relu_grad/op_host/relu_grad_tiling.h"

#include "common/op_host/elementwise_tiling.h"
#include "threshold_grad_v2_d/op_host/threshold_grad_v2_d_tiling.h"

namespace jax_threshold::aclnn {

uint64_t ReluGradUbDataNumber(ascend_kernels::KernelDType dtype) {
  return ThresholdGradV2DUbDataNumber(dtype);
}

bool ReluGradTiling(uint64_t num_elements, ascend_kernels::KernelDType dtype, uint64_t ub_size,
                    uint64_t core_num, ascend_kernels::ElementwiseTiling* tiling,
                    std::string* error) {
  const uint64_t divisor = ReluGradUbDataNumber(dtype);
  if (divisor == 0) {
    *error = "ReluGrad tiling: unsupported dtype " + std::to_string(static_cast<int32_t>(dtype));
    return false;
  }
  return ComputeElementwiseTiling(num_elements, KernelDTypeSize(dtype), divisor, ub_size, core_num,
                                  tiling, error);
}

}  // namespace jax_threshold::aclnn
