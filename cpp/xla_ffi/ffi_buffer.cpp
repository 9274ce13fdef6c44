// An XLA FFI buffer as the aclnn executor sees it (see ffi_buffer.h).
#include "xla_ffi/ffi_buffer.h"

#include <limits>
#include <string>

#include "ascend_kernels/dtype_soc_table.h"
#include "xla_ffi/ffi_error.h"

namespace jax_threshold::ffi_handler {

namespace ffi = ::xla::ffi;
using aclnn::aclDataType;

aclDataType ToAclDataType(ffi::DataType dtype) {
  switch (dtype) {
    case ffi::DataType::F32:
      return aclnn::ACL_FLOAT;
    case ffi::DataType::F16:
      return aclnn::ACL_FLOAT16;
    case ffi::DataType::BF16:
      return aclnn::ACL_BF16;
    case ffi::DataType::F64:
      return aclnn::ACL_DOUBLE;
    case ffi::DataType::S8:
      return aclnn::ACL_INT8;
    case ffi::DataType::S16:
      return aclnn::ACL_INT16;
    case ffi::DataType::S32:
      return aclnn::ACL_INT32;
    case ffi::DataType::S64:
      return aclnn::ACL_INT64;
    case ffi::DataType::U8:
      return aclnn::ACL_UINT8;
    case ffi::DataType::U16:
      return aclnn::ACL_UINT16;
    case ffi::DataType::U32:
      return aclnn::ACL_UINT32;
    case ffi::DataType::U64:
      return aclnn::ACL_UINT64;
    case ffi::DataType::PRED:
      return aclnn::ACL_BOOL;
    case ffi::DataType::C64:
      return aclnn::ACL_COMPLEX64;
    case ffi::DataType::C128:
      return aclnn::ACL_COMPLEX128;
    default:
      return aclnn::ACL_DT_UNDEFINED;  // phase one rejects it with its name
  }
}

std::vector<int64_t> Dims(const ffi::AnyBuffer& buffer) {
  auto dims = buffer.dimensions();
  return std::vector<int64_t>(dims.begin(), dims.end());
}

ffi::Error CheckedExtent(const ffi::AnyBuffer& buffer, const char* what, BufferExtent* extent) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const uint64_t width = ascend_kernels::FactsOfDType(ToAclDataType(buffer.element_type())).bytes;
  int64_t elements = 1;
  bool zero = false, overflow = false;
  for (int64_t d : buffer.dimensions()) {
    if (d < 0) {
      return InvalidArgument(std::string(what) + " has a negative dimension (" + std::to_string(d) +
                             ")");
    }
    if (d == 0) zero = true;
    if (!zero && !overflow && d > 0 && elements > kMax / d) overflow = true;
    if (!zero && !overflow) elements *= d;
  }
  if (zero) elements = 0;
  if (overflow && !zero) {
    return InvalidArgument(std::string(what) + "'s element count overflows int64");
  }
  if (width > 0 && static_cast<uint64_t>(elements) > static_cast<uint64_t>(kMax) / width) {
    return InvalidArgument(std::string(what) + "'s byte size overflows int64");
  }
  extent->elements = elements;
  extent->bytes = static_cast<uint64_t>(elements) * width;
  return ffi::Error::Success();
}

}  // namespace jax_threshold::ffi_handler
