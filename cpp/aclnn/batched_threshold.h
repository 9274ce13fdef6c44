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

}  // namespace jax_threshold::aclnn
