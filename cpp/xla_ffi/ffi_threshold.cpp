// The threshold of a threshold_backward custom call (see ffi_threshold.h).
#include "xla_ffi/ffi_threshold.h"

#include <string>

#include "ascend_kernels/dtype_soc_table.h"
#include "xla_ffi/ffi_buffer.h"
#include "xla_ffi/ffi_error.h"

namespace jax_threshold::ffi_handler {

namespace ffi = ::xla::ffi;
using aclnn::aclDataType;

ThresholdValues OperandThreshold(const ffi::AnyBuffer& threshold) {
  ThresholdValues t;
  t.dtype = ToAclDataType(threshold.element_type());
  t.data = threshold.untyped_data();
  t.dims = Dims(threshold);
  return t;
}

ffi::Error CheckThresholdDtype(aclDataType x_dtype, aclDataType t) {
  // x without a kernel is phase one's to refuse: such an x takes the integer rule here.
  const bool allowed = ascend_kernels::FactsOfDType(x_dtype).ub_divisor != 0
                           ? ascend_kernels::TakesThresholdDtype(x_dtype, t)
                           : t == x_dtype || t == aclnn::ACL_FLOAT || t == aclnn::ACL_DOUBLE;
  if (allowed) return ffi::Error::Success();
  return InvalidArgument(std::string("a threshold of dtype ") +
                         ascend_kernels::FactsOfDType(t).name +
                         " is not one the lowering emits for x of dtype " +
                         ascend_kernels::FactsOfDType(x_dtype).name);
}

ffi::Error CheckThresholdRank(const ThresholdValues& threshold, size_t result_rank) {
  if (threshold.dims.empty() || threshold.dims.size() == result_rank) {
    return ffi::Error::Success();
  }
  return InvalidArgument("the threshold has rank " + std::to_string(threshold.dims.size()) +
                         "; the lowering emits a 0-d threshold or one of the result's rank " +
                         std::to_string(result_rank));
}

}  // namespace jax_threshold::ffi_handler
