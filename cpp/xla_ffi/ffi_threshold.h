// The threshold of a threshold_backward custom call as the handlers hand it to the executor:
// the operand target's buffer, read in place, and the checks of its dtype and rank.
#pragma once

#include <cstdint>
#include <vector>

#include "jax_threshold/aclnn_threshold_backward.h"
#include "xla/ffi/api/ffi.h"

namespace jax_threshold::ffi_handler {

// The threshold as the handler sees it: elements of `dtype` at `data` (row-major, shape `dims`).
struct ThresholdValues {
  aclnn::aclDataType dtype = aclnn::ACL_DT_UNDEFINED;
  void* data = nullptr;
  std::vector<int64_t> dims;
};

// The operand target's threshold buffer, read in place.
ThresholdValues OperandThreshold(const xla::ffi::AnyBuffer& threshold);

// kInvalidArgument unless the threshold has a dtype the lowering emits (primitive.py): for
// float16, bfloat16 and float32 x float32, for float64 x float64, for integer x x's dtype,
// float32 or float64.
xla::ffi::Error CheckThresholdDtype(aclnn::aclDataType x_dtype, aclnn::aclDataType threshold);

// kInvalidArgument unless the threshold is 0-d or of the result's rank, as the lowering emits it
// (phase one checks that it broadcasts).
xla::ffi::Error CheckThresholdRank(const ThresholdValues& threshold, size_t result_rank);

}  // namespace jax_threshold::ffi_handler
