#include "tiling/threshold_grad_v2_d_tiling.h"

#include "tiling/elementwise_tiling.h"

namespace jax_threshold::aclnn {

using ascend_kernels::KernelDType;

uint64_t ThresholdGradV2DUbDataNumber(KernelDType dtype) {
  switch (dtype) {
    case KernelDType::kFloat32:
    case KernelDType::kFloat16:
      return 7;
    case KernelDType::kInt32:
    case KernelDType::kInt64:
    case KernelDType::kFloat64:
      return 8;
    case KernelDType::kBFloat16:
      return 10;
    case KernelDType::kInt8:
    case KernelDType::kUInt8:
      return 14;
  }
  return 0;
}

uint64_t KernelDTypeSize(KernelDType dtype) {
  switch (dtype) {
    case KernelDType::kInt8:
    case KernelDType::kUInt8:
      return 1;
    case KernelDType::kFloat16:
    case KernelDType::kBFloat16:
      return 2;
    case KernelDType::kFloat32:
    case KernelDType::kInt32:
      return 4;
    case KernelDType::kInt64:
    case KernelDType::kFloat64:
      return 8;
  }
  return 0;
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
