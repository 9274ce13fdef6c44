#include "threshold_grad_v2_d/op_host/threshold_grad_v2_d_tiling.h"

#include "common/op_host/elementwise_tiling.h"

namespace jax_threshold::aclnn {

using ascend_kernels::KernelDType;

uint64_t ThresholdGradV2DUbDataNumber(KernelDType dtype) {
  return ascend_kernels::FactsOfDType(static_cast<int32_t>(dtype)).ub_divisor;
}

uint64_t KernelDTypeSize(KernelDType dtype) {
  const ascend_kernels::DTypeFacts facts =
      ascend_kernels::FactsOfDType(static_cast<int32_t>(dtype));
  return facts.ub_divisor == 0 ? 0 : facts.bytes;
}

bool ThresholdGradV2DTiling(uint64_t num_elements, KernelDType dtype, uint64_t ub_size,
                            uint64_t core_num, ascend_kernels::ElementwiseTiling* tiling,
                            std::string* error) {
  const uint64_t divisor = ThresholdGradV2DUbDataNumber(dtype);
  if (divisor == 0) {
    *error =
        "ThresholdGradV2D tiling: unsupported dtype " + std::to_string(static_cast<int32_t>(dtype));
    return false;
  }
  return ComputeElementwiseTiling(num_elements, KernelDTypeSize(dtype), divisor, ub_size, core_num,
                                  tiling, error);
}

}  // namespace jax_threshold::aclnn
