#include "tiling/relu_grad_tiling.h"

#include "tiling/elementwise_tiling.h"
#include "tiling/threshold_grad_v2_d_tiling.h"

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
