// The ffi::Errors of the threshold_backward FFI handlers (see ffi_error.h).
#include "xla_ffi/ffi_error.h"

#include <utility>

namespace jax_threshold::ffi_handler {

namespace ffi = ::xla::ffi;
using aclnn::aclnnStatus;

const char* StatusName(aclnnStatus status) {
  switch (status) {
    case aclnn::ACLNN_SUCCESS:
      return "ACLNN_SUCCESS";
    case aclnn::ACLNN_ERR_PARAM_NULLPTR:
      return "ACLNN_ERR_PARAM_NULLPTR";
    case aclnn::ACLNN_ERR_PARAM_INVALID:
      return "ACLNN_ERR_PARAM_INVALID";
    case aclnn::ACLNN_ERR_INNER_CREATE_EXECUTOR:
      return "ACLNN_ERR_INNER_CREATE_EXECUTOR";
    case aclnn::ACLNN_ERR_INNER_NULLPTR:
      return "ACLNN_ERR_INNER_NULLPTR";
    case aclnn::ACLNN_ERR_INNER_TILING_ERROR:
      return "ACLNN_ERR_INNER_TILING_ERROR";
    case aclnn::ACLNN_ERR_RUNTIME_ERROR:
      return "ACLNN_ERR_RUNTIME_ERROR";
    default:
      return "unknown aclnn status";
  }
}

ffi::Error AclnnError(const char* function, aclnnStatus status) {
  const char* reason = aclnn::aclGetRecentErrMsg();
  const bool bad_param =
      status == aclnn::ACLNN_ERR_PARAM_NULLPTR || status == aclnn::ACLNN_ERR_PARAM_INVALID;
  return ffi::Error(bad_param ? ffi::ErrorCode::kInvalidArgument : ffi::ErrorCode::kInternal,
                    std::string("jax_threshold: ") + function + " failed with aclnn status " +
                        std::to_string(status) + " (" + StatusName(status) +
                        "): " + (reason != nullptr && *reason ? reason : "no reason given"));
}

ffi::Error InvalidArgument(std::string message) {
  return ffi::Error(ffi::ErrorCode::kInvalidArgument, "jax_threshold: " + std::move(message));
}

ffi::Future ReadyFuture(ffi::Error error) {
  ffi::Promise promise;
  ffi::Future future(promise);
  if (error.success()) {
    promise.SetAvailable();
  } else {
    promise.SetError(std::move(error));
  }
  return future;
}

}  // namespace jax_threshold::ffi_handler
