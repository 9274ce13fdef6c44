// Phase one with a threshold tensor: an extension of the aclnn API for callers whose threshold is
// an array (a vmap-batched threshold in the XLA custom call), one plan for the whole call.
//
// grad_output, x and threshold broadcast (NumPy rules, aclnn/broadcast.h) to out, of any rank.
// Each threshold element covers a slice of out: phase one plans one slice (validating, tiling,
// sizing its copies as aclnnThresholdBackwardGetWorkspaceSize does) and phase two,
// aclnnThresholdBackward, runs that plan once per slice with the slice's pointers and threshold
// (ReluGrad where it is exactly 0, else ThresholdGradV2D). Memory is O(1) in the number of
// slices, and time O(out). Before planning, out's size-1 dims are dropped and adjacent dims are
// merged where every operand's strides allow, and dims beyond the kernel's rank of 8 are looped
// over like the threshold's. Slices of at most kSmallSliceBytes of output run whole, in up to
// core_num blocks of consecutive slices; larger ones one after another, each on every block.
#pragma once

#include <cstdint>

#include "jax_threshold/aclnn_threshold_backward.h"

namespace jax_threshold::aclnn {

inline constexpr uint64_t kSmallSliceBytes = 64 * 1024;

// Status codes as aclnnThresholdBackwardGetWorkspaceSize's. Besides its checks: the threshold's
// dtype must be real, its data host memory; out's shape must be the broadcast shape of the three
// (PARAM_INVALID naming all four shapes otherwise). An empty out plans nothing (workspace 0)
// before any stride or size is computed; every stride and byte count is overflow-checked.
aclnnStatus aclnnThresholdBackwardBatchedGetWorkspaceSize(
    const aclTensor* grad_output, const aclTensor* x, const aclTensor* threshold, aclTensor* out,
    uint64_t* workspace_size, aclOpExecutor** executor, const PlatformInfo* platform = nullptr);

// Phase one with a threshold tensor in device memory, whose data phase one and phase two never
// read: the same checks and plan as aclnnThresholdBackwardBatchedGetWorkspaceSize (the threshold's
// data pointer must be non-null), except that every launch is ThresholdGradV2D (at threshold 0
// it gives ReluGrad's bits: docs/behaviour.md §1), checked with a nonzero threshold's dtype list,
// and its kernel reads the launch's threshold element at Init (ThresholdSource::kGm in the
// tiling, the element's address as the kernel's `threshold` argument). So the tiling does not
// depend on the threshold's value: one tiling serves every slice. Besides those checks, the
// threshold's dtype must be one the kernel converts for x's dtype (float16 / bfloat16 / float32
// x: float32; float64 x: float64; integer x: x's dtype, float32 or float64), else PARAM_INVALID.
// Phase two runs it on host streams like any plan (the kernels see host memory there) and on the
// NPU with aclnnThresholdBackwardOnNpu.
aclnnStatus aclnnThresholdBackwardDeviceThresholdGetWorkspaceSize(
    const aclTensor* grad_output, const aclTensor* x, const aclTensor* threshold, aclTensor* out,
    uint64_t* workspace_size, aclOpExecutor** executor, const PlatformInfo* platform = nullptr);

}  // namespace jax_threshold::aclnn
