// A fake of the XLA FFI C API (xla/ffi/api/c_api.h) for calling the project's handlers as XLA's
// CPU runtime does: errors, futures, an intra-op thread pool of real threads and the state an
// instantiate stage sets for the execute stage (deleted with the fake). Every other API
// function returns an UNIMPLEMENTED error. Misuse that XLA's runtime would not survive (a future
// completed twice, an error destroyed that is not one) aborts with a message.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "xla/ffi/api/c_api.h"

namespace jax_threshold::fuzz {

struct PoolOptions {
  int num_threads = 1;            // threads of the pool (and what NumThreads reports)
  bool flush_denormals = false;   // pool threads run with FTZ/DAZ set, as XLA's CPU threads do
  bool refuse_schedule = false;   // Schedule returns an error (the binding then runs it inline)
  bool fail_num_threads = false;  // NumThreads returns an error (the binding then reports 0)
  void* stream = nullptr;         // what Stream_Get gives; null: Stream_Get is unimplemented
  int32_t device_ordinal = -1;    // what DeviceOrdinal_Get gives; negative: it is unimplemented
};

// What a handler's call ended with: its synchronous error, or its future's outcome.
struct CallOutcome {
  bool has_future = false;
  XLA_FFI_Error_Code code = XLA_FFI_Error_Code_OK;
  std::string message;
};

class FakeXlaFfiApi {
 public:
  explicit FakeXlaFfiApi(const PoolOptions& options);
  ~FakeXlaFfiApi();  // waits (bounded) for every scheduled task, then joins the threads
  FakeXlaFfiApi(const FakeXlaFfiApi&) = delete;
  FakeXlaFfiApi& operator=(const FakeXlaFfiApi&) = delete;

  const XLA_FFI_Api* api() const { return &api_; }
  XLA_FFI_ExecutionContext* ctx() { return ctx_; }

  // The outcome of a handler call that returned `error` and left `future` in its call frame:
  // waits at most `timeout` for the future (aborting with a message when it does not complete)
  // and takes ownership of both.
  CallOutcome Finish(XLA_FFI_Error* error, XLA_FFI_Future* future,
                     std::chrono::milliseconds timeout);

  // Waits at most `timeout` until no scheduled task is queued or running; aborts otherwise.
  void Drain(std::chrono::milliseconds timeout);

  // Tasks scheduled so far (each ran, or runs, on a pool thread).
  int64_t scheduled() const;

  // A state type, as XLA registers it: the fake deletes a state of this type with `deleter`.
  void RegisterType(int64_t type_id, void (*deleter)(void*));

 private:
  void Worker();

  XLA_FFI_Api api_{};
  XLA_FFI_ExecutionContext* ctx_;
  PoolOptions options_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_, idle_cv_;
  std::deque<std::function<void()>> queue_;
  int running_ = 0;
  int64_t scheduled_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
  std::map<int64_t, void (*)(void*)> types_;

  friend XLA_FFI_Error* FakeSchedule(XLA_FFI_ThreadPool_Schedule_Args* args);
  friend XLA_FFI_Error* FakeNumThreads(XLA_FFI_ThreadPool_NumThreads_Args* args);
  friend XLA_FFI_Error* FakeStreamGet(XLA_FFI_Stream_Get_Args* args);
  friend XLA_FFI_Error* FakeDeviceOrdinalGet(XLA_FFI_DeviceOrdinal_Get_Args* args);
};

}  // namespace jax_threshold::fuzz
