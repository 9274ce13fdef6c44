// An XLA FFI buffer as the aclnn executor sees it (see ffi_buffer.h).
#include "xla_ffi/ffi_buffer.h"

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

}  // namespace jax_threshold::ffi_handler
