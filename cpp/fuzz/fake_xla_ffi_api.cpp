// A fake of the XLA FFI C API (see fake_xla_ffi_api.h).
#include "fuzz/fake_xla_ffi_api.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

// The opaque types of c_api.h, as this fake defines them.
struct XLA_FFI_Error {
  XLA_FFI_Error_Code code;
  std::string message;
};

struct XLA_FFI_ExecutionContext {
  jax_threshold::fuzz::FakeXlaFfiApi* owner;
  // The per-executable state the instantiate stage set, as XLA keeps it for the execute stage.
  int64_t state_type = 0;
  void* state = nullptr;
};

namespace jax_threshold::fuzz {
namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "fake XLA FFI API: %s\n", what);
  std::abort();
}

XLA_FFI_Error* NewError(XLA_FFI_Error_Code code, std::string message) {
  return new XLA_FFI_Error{code, std::move(message)};
}

XLA_FFI_Error* ErrorCreate(XLA_FFI_Error_Create_Args* args) {
  if (args->errc == XLA_FFI_Error_Code_OK) Fail("Error_Create with code OK");
  return NewError(args->errc, args->message != nullptr ? args->message : "");
}

void ErrorGetMessage(XLA_FFI_Error_GetMessage_Args* args) {
  args->message = args->error->message.c_str();
}

void ErrorDestroy(XLA_FFI_Error_Destroy_Args* args) { delete args->error; }

XLA_FFI_Error* ContextGet(XLA_FFI_ExecutionContext_Get_Args*) {
  return NewError(XLA_FFI_Error_Code_NOT_FOUND, "no user data in this execution context");
}

XLA_FFI_Error* StateSet(XLA_FFI_State_Set_Args* args) {
  XLA_FFI_ExecutionContext* ctx = args->ctx;
  if (ctx->state != nullptr) {
    return NewError(XLA_FFI_Error_Code_ALREADY_EXISTS, "the state is already set");
  }
  ctx->state_type = args->type_id->type_id;
  ctx->state = args->state;
  return nullptr;
}

XLA_FFI_Error* StateGet(XLA_FFI_State_Get_Args* args) {
  XLA_FFI_ExecutionContext* ctx = args->ctx;
  if (ctx->state == nullptr || ctx->state_type != args->type_id->type_id) {
    return NewError(XLA_FFI_Error_Code_NOT_FOUND, "no state of this type was set");
  }
  args->state = ctx->state;
  return nullptr;
}

template <typename Args>
XLA_FFI_Error* Unimplemented(Args*) {
  return NewError(XLA_FFI_Error_Code_UNIMPLEMENTED, "not provided by the fake XLA FFI API");
}

}  // namespace

XLA_FFI_Error* FakeStreamGet(XLA_FFI_Stream_Get_Args* args) {
  FakeXlaFfiApi* self = args->ctx->owner;
  if (self->options_.stream == nullptr) return Unimplemented(args);
  args->stream = self->options_.stream;
  return nullptr;
}

XLA_FFI_Error* FakeDeviceOrdinalGet(XLA_FFI_DeviceOrdinal_Get_Args* args) {
  FakeXlaFfiApi* self = args->ctx->owner;
  if (self->options_.device_ordinal < 0) return Unimplemented(args);
  args->device_ordinal = self->options_.device_ordinal;
  return nullptr;
}

FakeXlaFfiApi::FakeXlaFfiApi(const FakeOptions& options)
    : ctx_(new XLA_FFI_ExecutionContext{this}), options_(options) {
  api_.struct_size = XLA_FFI_Api_STRUCT_SIZE;
  api_.api_version = {XLA_FFI_Api_Version_STRUCT_SIZE, nullptr, XLA_FFI_API_MAJOR,
                      XLA_FFI_API_MINOR};
  api_.XLA_FFI_Error_Create = ErrorCreate;
  api_.XLA_FFI_Error_GetMessage = ErrorGetMessage;
  api_.XLA_FFI_Error_Destroy = ErrorDestroy;
  api_.XLA_FFI_Handler_Register = Unimplemented<XLA_FFI_Handler_Register_Args>;
  api_.XLA_FFI_Stream_Get = FakeStreamGet;
  api_.XLA_FFI_Type_Register = Unimplemented<XLA_FFI_Type_Register_Args>;
  api_.XLA_FFI_ExecutionContext_Get = ContextGet;
  api_.XLA_FFI_State_Set = StateSet;
  api_.XLA_FFI_State_Get = StateGet;
  api_.XLA_FFI_DeviceMemory_Allocate = Unimplemented<XLA_FFI_DeviceMemory_Allocate_Args>;
  api_.XLA_FFI_DeviceMemory_Free = Unimplemented<XLA_FFI_DeviceMemory_Free_Args>;
  api_.XLA_FFI_ThreadPool_Schedule = Unimplemented<XLA_FFI_ThreadPool_Schedule_Args>;
  api_.XLA_FFI_ThreadPool_NumThreads = Unimplemented<XLA_FFI_ThreadPool_NumThreads_Args>;
  api_.XLA_FFI_Future_Create = Unimplemented<XLA_FFI_Future_Create_Args>;
  api_.XLA_FFI_Future_SetAvailable = Unimplemented<XLA_FFI_Future_SetAvailable_Args>;
  api_.XLA_FFI_Future_SetError = Unimplemented<XLA_FFI_Future_SetError_Args>;
  api_.XLA_FFI_RunId_Get = Unimplemented<XLA_FFI_RunId_Get_Args>;
  api_.XLA_FFI_DeviceOrdinal_Get = FakeDeviceOrdinalGet;
}

FakeXlaFfiApi::~FakeXlaFfiApi() {
  if (ctx_->state != nullptr) {
    const auto type = types_.find(ctx_->state_type);
    if (type == types_.end()) Fail("a state of a type that was not registered");
    type->second(ctx_->state);
  }
  delete ctx_;
}

void FakeXlaFfiApi::RegisterType(int64_t type_id, void (*deleter)(void*)) {
  types_[type_id] = deleter;
}

CallOutcome FakeXlaFfiApi::Outcome(XLA_FFI_Error* error) {
  CallOutcome outcome;
  if (error != nullptr) {
    outcome.code = error->code;
    outcome.message = std::move(error->message);
    delete error;
  }
  return outcome;
}

}  // namespace jax_threshold::fuzz
