// The threshold of a threshold_backward custom call (see ffi_threshold.h).
#include "xla_ffi/ffi_threshold.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "ascend_kernels/dtype_soc_table.h"
#include "xla_ffi/ffi_buffer.h"
#include "xla_ffi/ffi_error.h"

namespace jax_threshold::ffi_handler {

namespace ffi = ::xla::ffi;
using aclnn::aclDataType;

ffi::Error EncodeStaticThreshold(std::string_view dtype_name, double value_float, int64_t value_int,
                                 ThresholdValues& threshold, unsigned char (&storage)[8]) {
  auto store = [&](auto value, aclDataType dtype) {
    static_assert(sizeof(value) <= sizeof(storage));
    std::memcpy(storage, &value, sizeof(value));
    threshold.dtype = dtype;
    threshold.data = storage;
    threshold.dims.clear();
    return ffi::Error::Success();
  };
  auto store_int = [&](auto tag, aclDataType dtype) {
    using T = decltype(tag);
    if (value_int < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
        value_int > static_cast<int64_t>(std::numeric_limits<T>::max())) {
      return InvalidArgument("threshold_int " + std::to_string(value_int) + " is out of range of " +
                             std::string(dtype_name));
    }
    return store(static_cast<T>(value_int), dtype);
  };
  if (dtype_name == "float32") {
    const float f = static_cast<float>(value_float);
    if (!std::isnan(value_float) && static_cast<double>(f) != value_float) {
      return InvalidArgument("threshold_float is not a float32 value");
    }
    return store(f, aclnn::ACL_FLOAT);
  }
  if (dtype_name == "float64") return store(value_float, aclnn::ACL_DOUBLE);
  if (dtype_name == "int8") return store_int(int8_t{}, aclnn::ACL_INT8);
  if (dtype_name == "uint8") return store_int(uint8_t{}, aclnn::ACL_UINT8);
  if (dtype_name == "int32") return store_int(int32_t{}, aclnn::ACL_INT32);
  if (dtype_name == "int64") return store_int(int64_t{}, aclnn::ACL_INT64);
  return InvalidArgument("unsupported threshold_dtype '" + std::string(dtype_name) +
                         "' (float32, float64, int8, uint8, int32, int64)");
}

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
