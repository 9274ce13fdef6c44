// An XLA FFI buffer as the aclnn executor takes it: its element type as an aclDataType, its dims
// and its data. The handlers decode, and leave every check of what they decode to phase one.
#pragma once

#include <array>
#include <cstdint>

#include "ascend_kernels/kernel_args.h"  // the operand order
#include "jax_threshold/aclnn_threshold_backward.h"
#include "xla/ffi/api/ffi.h"

namespace jax_threshold::ffi_handler {

// ACL_DT_UNDEFINED for a type the executor has no name for; phase one rejects it with its name.
aclnn::aclDataType ToAclDataType(xla::ffi::DataType dtype);

struct Operand {
  aclnn::aclDataType dtype = aclnn::ACL_DT_UNDEFINED;
  xla::ffi::Span<const int64_t> dims;  // row-major
  void* data = nullptr;
};

// A call's operands, in the operand order (ascend_kernels::kOperandGrad, ...).
using Operands = std::array<Operand, ascend_kernels::kNumOperands>;

inline Operand Decode(const xla::ffi::AnyBuffer& buffer) {
  return {ToAclDataType(buffer.element_type()), buffer.dimensions(), buffer.untyped_data()};
}

}  // namespace jax_threshold::ffi_handler
