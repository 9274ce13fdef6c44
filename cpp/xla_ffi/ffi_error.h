// The ffi::Errors the threshold_backward FFI handlers return: every message starts with
// "jax_threshold: "; aclnn failures carry the status code, its name and aclGetRecentErrMsg().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jax_threshold/aclnn_threshold_backward.h"
#include "xla/ffi/api/ffi.h"

namespace jax_threshold::ffi_handler {

// The enumerator's name ("ACLNN_ERR_PARAM_INVALID", ...), or "unknown aclnn status".
const char* StatusName(aclnn::aclnnStatus status);

// kInvalidArgument for the ACLNN_ERR_PARAM_* statuses, kInternal otherwise.
// Must be called on the thread that got `status`: the reason is thread-local.
xla::ffi::Error AclnnError(const char* function, aclnn::aclnnStatus status);

xla::ffi::Error InvalidArgument(std::string message);

// A future already completed with `error` (success or failure): what an asynchronous CPU handler
// returns when it has nothing left running.
xla::ffi::Future ReadyFuture(xla::ffi::Error error);

}  // namespace jax_threshold::ffi_handler
