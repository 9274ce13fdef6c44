// Phase two on an Ascend NPU (built with JAX_THRESHOLD_ASCEND): like aclnnThresholdBackward
// on the device, it submits the planned kernel launches on `stream` and returns without waiting.
// `device` is the stream's device, which the caller has checked is the calling thread's current
// device (the ACL calls here act on the current one); the first-use check is kept per `device`.
//
// A device-threshold batch (a vmapped threshold) is one ThresholdGradV2D launch over all the
// platform's cores (ThresholdBatch::core_num): its tiling splits every slice's elements, slice
// after slice, and carries the batch's looped dims and strides, from which each block finds its
// slices' tensors and threshold elements (kernel_args.h, ThresholdBatchTiling). Batches the tiling
// cannot describe (more than kMaxBatchRank looped dims, negative strides) and host-threshold
// batches run one launch per slice.
//
// Each launch passes its tiling struct (the plan's, or a batch's or slice's) by value: the
// generated aclrtlaunch_<entry> copies it into the launch's arguments in stream order, so no tiling
// lives in device memory and nothing is shared between devices or calls. A device-threshold plan
// (aclnnThresholdBackwardDeviceThresholdGetWorkspaceSize) passes each launch its threshold
// element's device address and a tiling that does not depend on its value; nothing on the device is
// read here.
//
// A launch that did not run is an error: each kernel entry is run once per device and dtype at its
// first use, on one element over a sentinel, and waited for (ACLNN_ERR_RUNTIME_ERROR naming the
// entry when it left the sentinel). Apart from that one-time check, a call allocates no device
// memory of its own and never synchronises; CANN's generated launcher itself allocates and frees an
// 8-byte overflow-status buffer on every launch.
//
// Refused with ACLNN_ERR_PARAM_INVALID (nothing submitted): plans that need the executor's
// strided / broadcast copies or a workspace (these are host code: broadcast in JAX first).
#pragma once

#include <cstdint>

#include "acl/acl.h"
#include "jax_threshold/aclnn_threshold_backward.h"

namespace jax_threshold::aclnn {

aclnnStatus aclnnThresholdBackwardOnNpu(void* workspace, uint64_t workspace_size,
                                        aclOpExecutor* executor, aclrtStream stream,
                                        int32_t device);

}  // namespace jax_threshold::aclnn
