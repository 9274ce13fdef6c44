// Phase two on an Ascend NPU (built with JAX_THRESHOLD_ASCEND): like aclnnThresholdBackward
// on the device, it submits the planned kernel launches on `stream` and returns, with no stream
// synchronisation and no per-call device allocation.
//
// Each launch's tiling struct (the plan's, or a batch slice's with its threshold) must be in
// device memory. Tilings live in a process-wide cache of immutable device buffers keyed by their
// bytes: a tiling is uploaded once (aclrtMalloc + a synchronous aclrtMemcpy, before the launch
// that first uses it) and reused by every later call with the same shapes, dtype and threshold,
// so a compiled program's calls allocate nothing. A device-threshold plan
// (aclnnThresholdBackwardDeviceThresholdGetWorkspaceSize) passes each launch its threshold
// element's device address and one tiling that does not depend on the threshold's value, so
// every slice of a batch and every call with the same shapes share one cached buffer; nothing
// on the device is read here. The cache holds at most kMaxNpuTilings buffers (128 bytes each); a
// call needing more (a host-read batch of many distinct thresholds) puts the rest in one buffer
// of its own, synchronises the stream and frees it (correct, slower).
//
// Refused with ACLNN_ERR_PARAM_INVALID (nothing submitted): plans that need the executor's
// strided / broadcast copies or a workspace (these are host code: broadcast in JAX first).
#pragma once

#include <cstdint>

#include "acl/acl.h"
#include "jax_threshold/aclnn_threshold_backward.h"

namespace jax_threshold::aclnn {

inline constexpr uint64_t kMaxNpuTilings = 4096;

aclnnStatus aclnnThresholdBackwardOnNpu(void* workspace, uint64_t workspace_size,
                                        aclOpExecutor* executor, aclrtStream stream);

}  // namespace jax_threshold::aclnn
