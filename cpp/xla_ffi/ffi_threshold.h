// The threshold of a threshold_backward custom call as the handlers hand it to the executor: the
// operand target's buffer, or the static target's attributes encoded as a 0-d buffer.
#pragma once

#include <cstdint>
#include <string_view>
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

// The static target's threshold, stored in its own dtype so the executor sees the same scalar as
// through the operand target. `threshold.data` points into `storage` on success; an unknown
// threshold_dtype, or a value that threshold_dtype cannot hold exactly, is kInvalidArgument.
xla::ffi::Error EncodeStaticThreshold(std::string_view dtype_name, double value_float,
                                      int64_t value_int, ThresholdValues& threshold,
                                      unsigned char (&storage)[8]);

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
