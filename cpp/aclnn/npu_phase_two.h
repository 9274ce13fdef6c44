// Phase two on an Ascend NPU (built with JAX_THRESHOLD_ASCEND): like aclnnThresholdBackward on
// the device, it submits the plan's launches (LaunchAt: one, or one per slice) on `stream` and
// returns without waiting. `device` is the stream's device, which the caller has checked is the
// calling thread's current one (the ACL calls here act on it).
//
// Each launch passes its tiling by value: the generated aclrtlaunch_<entry> copies it into the
// launch's arguments in stream order, so no tiling lives in device memory and nothing is shared
// between devices or calls. A device threshold is read by the kernel, never here.
//
// A launch that did not run is an error: each kernel entry is run once per device and dtype at
// its first use, on one element over a sentinel, and waited for (ACLNN_ERR_RUNTIME_ERROR naming
// the entry when it left the sentinel). Apart from that, a call allocates no device memory of
// its own and never synchronises (CANN's generated launcher allocates and frees an 8-byte
// overflow-status buffer per launch). Plans with the executor's copies, which are host code, are
// refused with ACLNN_ERR_PARAM_INVALID.
#pragma once

#include <cstdint>

#include "acl/acl.h"
#include "jax_threshold/aclnn_threshold_backward.h"

namespace jax_threshold::aclnn {

aclnnStatus aclnnThresholdBackwardOnNpu(void* workspace, uint64_t workspace_size,
                                        aclOpExecutor* executor, aclrtStream stream,
                                        int32_t device);

}  // namespace jax_threshold::aclnn
