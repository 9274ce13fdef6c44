// The executor's workspace (docs/behaviour.md §2, "The workspace"): what phase one asks the caller
// for, and what phase two accepts from it.
//
// Phase one plans its buffers at kWorkspaceAlignment-aligned offsets from an aligned base, and asks
// for kWorkspaceAlignment - 1 bytes more than they need: whatever alignment the caller's
// allocation has, phase two finds an aligned base inside it (NumPy's 16-byte alignment, a byte
// offset into a larger buffer, aclrtMalloc's). Phase two refuses with ACLNN_ERR_PARAM_INVALID a
// workspace that is too small, whose address range wraps, or that shares a byte with the extent
// of any tensor of the call (grad_output, x, out): the kernels would overwrite their own inputs
// or out.
#pragma once

#include <cstdint>
#include <string>

#include "aclnn/view_bounds.h"
#include "jax_threshold/aclnn_threshold_backward.h"

namespace jax_threshold::aclnn {

// What phase one fixes about the workspace: the bytes its buffers use from the aligned base
// (`planned`), the size it reports (`size`: planned plus the alignment slack, 0 when nothing
// is planned), and the byte extents of the tensors the workspace must stay clear of.
struct WorkspacePlan {
  uint64_t planned = 0;
  uint64_t size = 0;
  static constexpr int kTensors = 3;  // grad_output, x, out
  ViewBounds tensors[kTensors];
};

// Phase one: `plan` for `planned` bytes of buffers beside `tensors`; false when the reported size
// would exceed `max_bytes`.
bool PlanWorkspace(uint64_t planned, uint64_t max_bytes, const ViewBounds (&tensors)[3],
                   WorkspacePlan* plan);

// Phase two: the aligned base of the planned buffers inside the caller's workspace, or an aclnn
// status with a message (PARAM_NULLPTR: no workspace when one is planned; PARAM_INVALID: too
// small, wrapping, or overlapping a tensor). With nothing planned the workspace is not used and
// `*base` is null.
aclnnStatus PlaceWorkspace(const WorkspacePlan& plan, void* workspace, uint64_t workspace_size,
                           char** base, std::string* error);

}  // namespace jax_threshold::aclnn
