// A HostStream whose kernel blocks run on XLA's CPU intra-op thread pool (xla::ffi::ThreadPool).
//
// The ffi::ThreadPool handed to an FFI handler is only valid while that handler runs (it points at
// the call's execution context on XLA's stack), so the stream works in three stages:
//   1. While the handler runs, Launch() only queues the launch.
//   2. Flush() (still in the handler) schedules at most NumWorkers() - 1 pool tasks over every
//      queued block, and the calling thread claims blocks too until none is left unclaimed.
//      Nobody ever waits on another task: a thread that finds no unclaimed block just returns,
//      and whichever thread finishes a launch's last block calls its `done`. Because the caller
//      claims every block no pool task has started, the work completes even if the pool never
//      runs our tasks (e.g. XLA waiting on the handler's future from the pool's only thread).
//      A launch made after Flush() while the handler still runs (the executor chains its next
//      step - copy-in, kernel, copy-out - from the previous step's `done`) starts the same way
//      at once, on the launching thread plus pool helpers.
//   3. Close() (last thing the handler does) flushes and forgets the pool. A launch made later
//      runs inline on the thread that makes it (a pool thread finishing the previous step).
//
// Lifetime: every launch holds a strong reference to `owner` (the per-call state that owns the
// executors, the workspace and this stream) until its `done` has returned.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "aclnn/host_stream.h"  // PollFor
#include "jax_threshold/aclnn_threshold_backward.h"
#include "xla/ffi/api/ffi.h"

namespace jax_threshold::ffi_handler {

class XlaThreadPoolStream final : public aclnn::HostStream {
 public:
  // `pool` may be null: everything then runs inline on the thread that flushes or launches.
  // `num_workers` counts the pool threads used plus the calling thread (>= 1).
  XlaThreadPoolStream(xla::ffi::ThreadPool* pool, uint32_t num_workers);
  ~XlaThreadPoolStream() override;

  uint32_t NumWorkers() const override { return num_workers_; }
  void Launch(uint32_t n, std::function<void(uint32_t)> block,
              std::function<void()> done) override;

  // Keeps `owner` alive while any launch of this stream is running.
  void SetOwner(std::weak_ptr<void> owner) { owner_ = std::move(owner); }

  // Schedules the queued launches on the pool and runs blocks on the calling thread until no
  // block is left unclaimed. Launches made after Flush() start at once.
  void Flush();
  // Forgets the pool (it dies with the handler's call frame). Later launches run inline.
  void Close();
  // Polls until every launch made on this stream has finished (its `done` returned), for at most
  // `limit`; true if they have. For the handler after Close(): every block is claimed by then,
  // so this waits only on blocks already running, never on a queued pool task. A call that
  // finishes while its handler polls returns a ready future, and the thread waiting for the
  // result is not parked and woken (20-50 us a wake on the VM of benchmarks/README.md).
  bool WaitFinished(std::chrono::microseconds limit) const;

  // First exception message a block threw (empty if none). A throwing block still counts as
  // finished, so `done` runs and the caller can report this as the call's error.
  std::string FirstError() const;

  struct Launched;  // one Launch(): its blocks, its claim / finish counters, its `done`
  struct Batch;     // launches handed to the pool together

  void RecordError(const char* what);
  void LaunchFinished() { unfinished_.fetch_sub(1, std::memory_order_release); }

 private:
  void Start(const std::shared_ptr<Batch>& batch);

  // Recursive: ffi::ThreadPool::Schedule runs a task inline when the pool refuses it, and that
  // task may launch again on the same thread.
  std::recursive_mutex mu_;
  xla::ffi::ThreadPool* pool_;  // guarded by mu_; null after Close()
  const uint32_t num_workers_;
  bool flushed_ = false;  // guarded by mu_
  std::vector<std::shared_ptr<Launched>> queued_;  // guarded by mu_
  std::weak_ptr<void> owner_;
  std::atomic<uint32_t> unfinished_{0};  // launches whose `done` has not returned
  mutable std::mutex error_mu_;
  std::string first_error_;  // guarded by error_mu_
};

//===-- implementation (header-only: only ffi_handler.cpp uses it) ----------------------===//

struct XlaThreadPoolStream::Launched {
  // Declared first so it is released last: the executor that `block` / `done` belong to lives in
  // the owner.
  std::shared_ptr<void> owner;
  XlaThreadPoolStream* stream = nullptr;
  uint32_t n = 0;
  std::function<void(uint32_t)> block;
  std::function<void()> done;
  std::atomic<uint32_t> next{0};      // next unclaimed block
  std::atomic<uint32_t> finished{0};  // blocks that have returned
};

struct XlaThreadPoolStream::Batch {
  std::vector<std::shared_ptr<Launched>> launches;
  uint64_t TotalBlocks() const {
    uint64_t total = 0;
    for (const auto& l : launches) total += l->n;
    return total;
  }
};


namespace stream_detail {
inline void RunGuarded(XlaThreadPoolStream* stream, const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    stream->RecordError(e.what());
  } catch (...) {
    stream->RecordError("unknown exception in a kernel block");
  }
}

// Claims and runs blocks until none is left unclaimed; the thread that finishes a launch's last
// block calls its `done`. Never waits for another thread.
inline void Drain(const XlaThreadPoolStream::Batch& batch) {
  for (const auto& l : batch.launches) {
    uint32_t ran = 0;
    for (uint32_t i; (i = l->next.fetch_add(1, std::memory_order_relaxed)) < l->n;) {
      RunGuarded(l->stream, [&] { l->block(i); });
      ++ran;
    }
    if (ran != 0 && l->finished.fetch_add(ran, std::memory_order_acq_rel) + ran == l->n) {
      RunGuarded(l->stream, l->done);
      l->stream->LaunchFinished();  // `l` keeps the owner, so the stream, alive
    }
  }
}

}  // namespace stream_detail

inline XlaThreadPoolStream::XlaThreadPoolStream(xla::ffi::ThreadPool* pool, uint32_t num_workers)
    : pool_(pool), num_workers_(std::max<uint32_t>(num_workers, 1)) {}

inline XlaThreadPoolStream::~XlaThreadPoolStream() = default;

inline void XlaThreadPoolStream::Launch(uint32_t n, std::function<void(uint32_t)> block,
                                        std::function<void()> done) {
  if (n == 0) {
    if (done) stream_detail::RunGuarded(this, done);
    return;
  }
  auto launched = std::make_shared<Launched>();
  launched->owner = owner_.lock();
  launched->stream = this;
  launched->n = n;
  launched->block = std::move(block);
  launched->done = done ? std::move(done) : [] {};
  unfinished_.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    if (pool_ != nullptr && !flushed_) {  // the handler flushes everything it launched at once
      queued_.push_back(std::move(launched));
      return;
    }
  }
  auto batch = std::make_shared<Batch>();
  batch->launches.push_back(std::move(launched));
  Start(batch);
}

inline void XlaThreadPoolStream::Start(const std::shared_ptr<Batch>& batch) {
  {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    if (pool_ != nullptr) {
      const uint64_t helpers = std::min<uint64_t>(batch->TotalBlocks() - 1, num_workers_ - 1);
      for (uint64_t k = 0; k < helpers; ++k) {
        pool_->Schedule([batch] { stream_detail::Drain(*batch); });
      }
    }
  }
  stream_detail::Drain(*batch);  // the calling thread claims whatever no helper has started
}

inline void XlaThreadPoolStream::Flush() {
  auto batch = std::make_shared<Batch>();
  {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    flushed_ = true;
    batch->launches.swap(queued_);
  }
  if (!batch->launches.empty()) Start(batch);
}

inline void XlaThreadPoolStream::Close() {
  Flush();
  std::lock_guard<std::recursive_mutex> lock(mu_);
  pool_ = nullptr;
}

inline bool XlaThreadPoolStream::WaitFinished(std::chrono::microseconds limit) const {
  return aclnn::PollFor(limit, [this] { return unfinished_.load(std::memory_order_acquire) == 0; });
}

inline void XlaThreadPoolStream::RecordError(const char* what) {
  std::lock_guard<std::mutex> lock(error_mu_);
  if (first_error_.empty()) {
    first_error_ = (what != nullptr && *what) ? what : "kernel block failed";
  }
}

inline std::string XlaThreadPoolStream::FirstError() const {
  std::lock_guard<std::mutex> lock(error_mu_);
  return first_error_;
}

}  // namespace jax_threshold::ffi_handler
