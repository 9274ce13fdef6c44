// A fake of the XLA FFI C API (xla/ffi/api/c_api.h) for calling the project's handlers as XLA's
// runtime does: errors, the state an instantiate stage sets for the execute stage (deleted with
// the fake), and the stream and device ordinal a call may ask for. Every other API function
// returns an UNIMPLEMENTED error. Misuse that XLA's runtime would not survive aborts with a
// message.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "xla/ffi/api/c_api.h"

namespace jax_threshold::fuzz {

struct FakeOptions {
  void* stream = nullptr;       // what Stream_Get gives; null: Stream_Get is unimplemented
  int32_t device_ordinal = -1;  // what DeviceOrdinal_Get gives; negative: it is unimplemented
};

// What a handler's call ended with.
struct CallOutcome {
  XLA_FFI_Error_Code code = XLA_FFI_Error_Code_OK;
  std::string message;
};

class FakeXlaFfiApi {
 public:
  explicit FakeXlaFfiApi(const FakeOptions& options = {});
  ~FakeXlaFfiApi();
  FakeXlaFfiApi(const FakeXlaFfiApi&) = delete;
  FakeXlaFfiApi& operator=(const FakeXlaFfiApi&) = delete;

  const XLA_FFI_Api* api() const { return &api_; }
  XLA_FFI_ExecutionContext* ctx() { return ctx_; }

  // The outcome of a handler call that returned `error` (null: success); takes ownership of it.
  static CallOutcome Outcome(XLA_FFI_Error* error);

  // A state type, as XLA registers it: the fake deletes a state of this type with `deleter`.
  void RegisterType(int64_t type_id, void (*deleter)(void*));

 private:
  XLA_FFI_Api api_{};
  XLA_FFI_ExecutionContext* ctx_;
  FakeOptions options_;
  std::map<int64_t, void (*)(void*)> types_;

  friend XLA_FFI_Error* FakeStreamGet(XLA_FFI_Stream_Get_Args* args);
  friend XLA_FFI_Error* FakeDeviceOrdinalGet(XLA_FFI_DeviceOrdinal_Get_Args* args);
};

}  // namespace jax_threshold::fuzz
