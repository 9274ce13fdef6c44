// The threshold scalar -> the kernel's ThresholdParams, exactly per docs/behaviour.md §1.
#pragma once

#include "aclnn/tensor.h"
#include "ascend_kernels/kernel_args.h"

namespace jax_threshold::aclnn {

// float16 / bfloat16 / float32 x: the threshold rounded once to float32.
// float64 x: the threshold as a double (rounded once if it is a wide integer).
// Integer x: exact real comparison. For integer x, x > t <=> x > floor(t), so k = floor(t) is
// computed exactly from the scalar; k below the dtype's range -> kAllPass, above -> kNonePass,
// NaN -> kNonePass, otherwise kCompare with threshold_int = k.
// `threshold` must be a real scalar (kind != kInvalid).
ascend_kernels::ThresholdParams MakeThresholdParams(const aclScalar& threshold, aclDataType dtype);

}  // namespace jax_threshold::aclnn
