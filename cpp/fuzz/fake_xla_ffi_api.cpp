// A fake of the XLA FFI C API (see fake_xla_ffi_api.h).
#include "fuzz/fake_xla_ffi_api.h"

#include <xmmintrin.h>

#include <cstdio>
#include <cstdlib>
#include <utility>

// The opaque types of c_api.h, as this fake defines them.
struct XLA_FFI_Error {
  XLA_FFI_Error_Code code;
  std::string message;
};

struct XLA_FFI_Future {
  std::mutex mu;
  std::condition_variable cv;
  bool completed = false;
  XLA_FFI_Error* error = nullptr;  // owned; null for a future that is available
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

XLA_FFI_Error* FutureCreate(XLA_FFI_Future_Create_Args* args) {
  args->future = new XLA_FFI_Future;
  return nullptr;
}

void Complete(XLA_FFI_Future* future, XLA_FFI_Error* error) {
  std::lock_guard<std::mutex> lock(future->mu);
  if (future->completed) Fail("a future completed twice");
  future->completed = true;
  future->error = error;
  future->cv.notify_all();
}

XLA_FFI_Error* FutureSetAvailable(XLA_FFI_Future_SetAvailable_Args* args) {
  Complete(args->future, nullptr);
  return nullptr;
}

XLA_FFI_Error* FutureSetError(XLA_FFI_Future_SetError_Args* args) {
  if (args->error == nullptr) Fail("Future_SetError without an error");
  Complete(args->future, args->error);
  return nullptr;
}

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

XLA_FFI_Error* FakeSchedule(XLA_FFI_ThreadPool_Schedule_Args* args) {
  FakeXlaFfiApi* self = args->ctx->owner;
  if (self->options_.refuse_schedule) {
    return NewError(XLA_FFI_Error_Code_UNAVAILABLE, "the thread pool refuses tasks");
  }
  {
    std::lock_guard<std::mutex> lock(self->mu_);
    self->queue_.push_back([task = args->task, data = args->data] { task(data); });
    ++self->scheduled_;
  }
  self->work_cv_.notify_one();
  return nullptr;
}

XLA_FFI_Error* FakeNumThreads(XLA_FFI_ThreadPool_NumThreads_Args* args) {
  FakeXlaFfiApi* self = args->ctx->owner;
  if (self->options_.fail_num_threads) {
    return NewError(XLA_FFI_Error_Code_UNAVAILABLE, "the thread pool has no size");
  }
  *args->num_threads = self->options_.num_threads;
  return nullptr;
}

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

FakeXlaFfiApi::FakeXlaFfiApi(const PoolOptions& options)
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
  api_.XLA_FFI_ThreadPool_Schedule = FakeSchedule;
  api_.XLA_FFI_ThreadPool_NumThreads = FakeNumThreads;
  api_.XLA_FFI_Future_Create = FutureCreate;
  api_.XLA_FFI_Future_SetAvailable = FutureSetAvailable;
  api_.XLA_FFI_Future_SetError = FutureSetError;
  api_.XLA_FFI_RunId_Get = Unimplemented<XLA_FFI_RunId_Get_Args>;
  api_.XLA_FFI_DeviceOrdinal_Get = FakeDeviceOrdinalGet;
  for (int i = 0; i < options_.num_threads; ++i) threads_.emplace_back([this] { Worker(); });
}

FakeXlaFfiApi::~FakeXlaFfiApi() {
  Drain(std::chrono::seconds(10));
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
  if (ctx_->state != nullptr) {
    const auto type = types_.find(ctx_->state_type);
    if (type == types_.end()) Fail("a state of a type that was not registered");
    type->second(ctx_->state);
  }
  delete ctx_;
}

void FakeXlaFfiApi::Worker() {
  if (options_.flush_denormals) _mm_setcsr(_mm_getcsr() | 0x8040);  // FTZ | DAZ
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lock.unlock();
    task();
    lock.lock();
    --running_;
    if (running_ == 0 && queue_.empty()) idle_cv_.notify_all();
  }
}

void FakeXlaFfiApi::Drain(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!idle_cv_.wait_for(lock, timeout, [this] { return running_ == 0 && queue_.empty(); })) {
    Fail("scheduled tasks did not finish in time (a task waits for another, or hangs)");
  }
}

void FakeXlaFfiApi::RegisterType(int64_t type_id, void (*deleter)(void*)) {
  types_[type_id] = deleter;
}

int64_t FakeXlaFfiApi::scheduled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return scheduled_;
}

CallOutcome FakeXlaFfiApi::Finish(XLA_FFI_Error* error, XLA_FFI_Future* future,
                                  std::chrono::milliseconds timeout) {
  CallOutcome outcome;
  if (error != nullptr) {
    if (future != nullptr) Fail("a handler returned both an error and a future");
    outcome.code = error->code;
    outcome.message = std::move(error->message);
    delete error;
    return outcome;
  }
  if (future == nullptr) return outcome;  // a synchronous success
  outcome.has_future = true;
  {
    std::unique_lock<std::mutex> lock(future->mu);
    if (!future->cv.wait_for(lock, timeout, [future] { return future->completed; })) {
      Fail("the handler's future did not complete in time (a hang)");
    }
    if (future->error != nullptr) {
      outcome.code = future->error->code;
      outcome.message = std::move(future->error->message);
      delete future->error;
    }
  }
  // Whoever completed the future may still be returning from Complete: free it once every task
  // has finished (a completion on this thread has already returned).
  Drain(timeout);
  delete future;
  return outcome;
}

}  // namespace jax_threshold::fuzz
