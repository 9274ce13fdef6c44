// An XLA FFI buffer as the aclnn executor sees it: its element type as an aclDataType, its dims.
#pragma once

#include <cstdint>
#include <vector>

#include "jax_threshold/aclnn_threshold_backward.h"
#include "xla/ffi/api/ffi.h"

namespace jax_threshold::ffi_handler {

// ACL_DT_UNDEFINED for a type the executor has no name for; phase one rejects it with its name.
aclnn::aclDataType ToAclDataType(xla::ffi::DataType dtype);

std::vector<int64_t> Dims(const xla::ffi::AnyBuffer& buffer);

}  // namespace jax_threshold::ffi_handler
