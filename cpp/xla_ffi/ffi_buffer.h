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

// A buffer's element count and byte size, computed before anything reads its size: XLA FFI's own
// element_count() and size_bytes() overflow on dims no buffer can have (negative, or a product
// beyond int64) and have no byte width for an element type newer than these headers.
struct BufferExtent {
  int64_t elements = 0;
  uint64_t bytes = 0;  // 0 for an element type the executor has no name for (phase one refuses it)
};

// kInvalidArgument, naming `what`, for a negative dim or a count or byte size beyond int64.
xla::ffi::Error CheckedExtent(const xla::ffi::AnyBuffer& buffer, const char* what,
                              BufferExtent* extent);

}  // namespace jax_threshold::ffi_handler
