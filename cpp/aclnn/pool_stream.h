// PoolStream: a HostStream whose blocks run on a thread pool the caller lends for a while (XLA's
// CPU intra-op pool, for the FFI handler), and the split of a call over such a pool.
//
// The pool is valid only while the lender says so (XLA's ffi::ThreadPool points at the call's
// execution context on XLA's stack), so the stream works in three stages:
//   1. Until Flush(), Launch() only queues the launch.
//   2. Flush() schedules at most NumWorkers() - 1 pool tasks over every queued block, and the
//      calling thread claims blocks too until none is left unclaimed. Nobody ever waits on
//      another task: a thread that finds no unclaimed block just returns, and whichever thread
//      finishes a launch's last block calls its `done`. Because the caller claims every block no
//      pool task has started, the work completes even if the pool never runs our tasks (e.g. XLA
//      waiting on the handler's future from the pool's only thread). A launch made after Flush()
//      while the pool is lent (the executor chains its next step from the previous step's
//      `done`) starts the same way at once, on the launching thread plus pool helpers.
//   3. Close() flushes and forgets the pool. A launch made later runs inline on the thread that
//      makes it (a pool thread finishing the previous step).
//
// Lifetime: every launch holds a strong reference to `owner` (the per-call state that owns the
// executor, the workspace and this stream) until its `done` has returned.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "jax_threshold/aclnn_threshold_backward.h"

namespace jax_threshold::aclnn {

// The custom call's lowering picks its synchronous targets (one block on the calling thread) for
// outputs up to this size: below it one kernel block does the work in less time than handing
// blocks to the pool costs.
inline constexpr uint64_t kInlineMaxBytes = 64 * 1024;
// Blocks (core_num) of a pooled call: kBlocksPerWorker per worker, each writing at least
// kMinBlockBytes, at most kMaxCores.
inline constexpr int64_t kBlocksPerWorker = 4;
inline constexpr int64_t kMinBlockBytes = 64 * 1024;
inline constexpr uint32_t kMaxCores = 256;

// How a call with `out_bytes` of output runs on a pool of `pool_threads` threads: on `workers`
// threads (pool helpers plus the caller, no more than the host runs at once) over `blocks` kernel
// blocks claimed dynamically, so a helper that wakes late takes fewer of them instead of holding
// up the call.
struct HostSplit {
  int64_t workers = 1;
  int64_t blocks = 1;
};
HostSplit SplitHostCall(int64_t pool_threads, uint64_t out_bytes);

class PoolStream : public HostStream {
 public:
  using Schedule = std::function<void(std::function<void()>)>;

  // `schedule` runs a task on the pool (it may run it inline); null: everything runs inline on
  // the thread that flushes or launches. `num_workers` counts pool threads used plus the caller.
  PoolStream(Schedule schedule, uint32_t num_workers);
  ~PoolStream() override;

  uint32_t NumWorkers() const override { return num_workers_; }
  void Launch(uint32_t n, std::function<void(uint32_t)> block, std::function<void()> done) override;

  // Keeps `owner` alive while any launch of this stream is running.
  void SetOwner(std::weak_ptr<void> owner) { owner_ = std::move(owner); }

  // Schedules the queued launches on the pool and runs blocks on the calling thread until no
  // block is left unclaimed. Launches made after Flush() start at once.
  void Flush();
  // Forgets the pool. Later launches run inline.
  void Close();
  // Polls until every launch made on this stream has finished (its `done` returned), for at
  // most `limit`; true if they have. After Close() every block is claimed, so this waits only on
  // blocks already running, never on a queued pool task: a call that finishes meanwhile can
  // report a ready result instead of waking a waiting thread later.
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

  // Recursive: a schedule that runs a task inline may launch again on the same thread.
  std::recursive_mutex mu_;
  Schedule schedule_;  // guarded by mu_; empty after Close()
  const uint32_t num_workers_;
  bool flushed_ = false;                           // guarded by mu_
  std::vector<std::shared_ptr<Launched>> queued_;  // guarded by mu_
  std::weak_ptr<void> owner_;
  std::atomic<uint32_t> unfinished_{0};  // launches whose `done` has not returned
  mutable std::mutex error_mu_;
  std::string first_error_;  // guarded by error_mu_
};

}  // namespace jax_threshold::aclnn
