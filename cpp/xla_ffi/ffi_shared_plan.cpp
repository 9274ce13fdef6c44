// A batch of small slices that share one phase-one plan (see ffi_shared_plan.h).
#include "xla_ffi/ffi_shared_plan.h"

#include <cstring>
#include <exception>
#include <memory>

#include "aclnn/executor.h"
#include "aclnn/tensor.h"
#include "aclnn/threshold_params.h"
#include "ascend_kernels/host_launch.h"
#include "xla_ffi/denormal_mode.h"

namespace jax_threshold::ffi_handler {

SharedPlanSlices::~SharedPlanSlices() {
  for (aclnn::aclOpExecutor* e : executors) {
    if (e != nullptr) aclnn::aclDestroyAclOpExecutor(e);
  }
}

std::array<int64_t, 4> SharedPlanSlices::Offsets(int64_t k) const {
  std::array<int64_t, 4> offset{};
  for (size_t d = sizes.size(); d-- > 0;) {
    const int64_t i = k % sizes[d];
    k /= sizes[d];
    for (int op = 0; op < 4; ++op) offset[op] += i * strides[d][op];
  }
  return offset;
}

bool SharedPlanSlices::SupportsThresholdDtype(aclnn::aclDataType dtype) {
  switch (dtype) {
    case aclnn::ACL_FLOAT: case aclnn::ACL_DOUBLE: case aclnn::ACL_INT8: case aclnn::ACL_UINT8:
    case aclnn::ACL_INT32: case aclnn::ACL_INT64:
      return true;
    default:
      return false;
  }
}

bool SharedPlanSlices::ThresholdIsZero(int64_t k) const {
  const char* p = threshold_data + Offsets(k)[kThreshold] * static_cast<int64_t>(threshold_bytes);
  unsigned char bytes[8] = {};
  std::memcpy(bytes, p, threshold_bytes);
  // Floats: ±0 (every bit but the sign clear); integers: all bits clear.
  if (threshold_dtype == aclnn::ACL_FLOAT) {
    uint32_t v;
    std::memcpy(&v, bytes, 4);
    return (v & 0x7FFFFFFFu) == 0;
  }
  if (threshold_dtype == aclnn::ACL_DOUBLE) {
    uint64_t v;
    std::memcpy(&v, bytes, 8);
    return (v & 0x7FFFFFFFFFFFFFFFull) == 0;
  }
  for (uint64_t i = 0; i < threshold_bytes; ++i) {
    if (bytes[i] != 0) return false;
  }
  return true;
}

bool SharedPlanSlices::IsShareable(const aclnn::aclOpExecutor* executor) {
  const aclnn::ExecutorPlan* plan = aclnn::GetExecutorPlan(executor);
  return plan != nullptr && plan->kernel != aclnn::KernelKind::kNone && !plan->grad_copy &&
         !plan->x_copy && !plan->out_copy && plan->workspace_size == 0 &&
         plan->tiling().block_dim == 1;
}

void SharedPlanSlices::Run(int64_t begin, int64_t end) {
  ScopedDenormalsAsNumbers guard;
  try {
    for (int64_t k = begin; k < end; ++k) {
      const std::array<int64_t, 4> offset = Offsets(k);
      const int which = ThresholdIsZero(k) ? 1 : 0;
      const aclnn::ExecutorPlan& plan = *aclnn::GetExecutorPlan(executors[which]);
      const auto shift = [&](int op) {
        return (offset[op] - base[which][op]) * static_cast<int64_t>(element_bytes);
      };
      const char* grad = plan.grad + shift(kGrad);
      const char* x = plan.x + shift(kX);
      char* out = plan.out + shift(kOut);
      ascend_kernels::ThresholdGradV2DTilingData tiling;
      ascend_kernels::HostLaunch launch;
      if (plan.kernel == aclnn::KernelKind::kReluGrad) {
        launch = ascend_kernels::MakeReluGradLaunch(plan.dtype, grad, x, out, nullptr,
                                                    &plan.relu_grad_tiling, plan.ub_size);
      } else {
        std::unique_ptr<aclnn::aclScalar, decltype(&aclnn::aclDestroyScalar)> scalar(
            aclnn::aclCreateScalar(threshold_data + offset[kThreshold] *
                                                        static_cast<int64_t>(threshold_bytes),
                                   threshold_dtype),
            &aclnn::aclDestroyScalar);
        if (scalar == nullptr) throw std::bad_alloc();
        tiling = plan.threshold_grad_tiling;
        tiling.threshold = aclnn::MakeThresholdParams(*scalar, plan.dtype);
        launch = ascend_kernels::MakeThresholdGradV2DLaunch(plan.dtype, grad, x, out, nullptr,
                                                            &tiling, plan.ub_size);
      }
      for (uint32_t b = 0; b < launch.block_dim; ++b) launch.run_block(b);
    }
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(error_mu_);
    if (first_error_.empty()) first_error_ = std::string("kernel block failed: ") + e.what();
  }
}

std::string SharedPlanSlices::FirstError() const {
  std::lock_guard<std::mutex> lock(error_mu_);
  return first_error_;
}

}  // namespace jax_threshold::ffi_handler
