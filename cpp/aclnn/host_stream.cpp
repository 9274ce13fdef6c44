#include "aclnn/host_stream.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace jax_threshold::aclnn {
namespace {

uint32_t HardwareThreads() { return std::max(1u, std::thread::hardware_concurrency()); }

// Polls `done()` (pausing between polls) for at most `limit`; true once it held. For waits on
// work already running on another thread, which finishes sooner than a parked thread wakes.
template <typename Done>
bool PollFor(std::chrono::microseconds limit, Done done) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= until) return false;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  return true;
}

}  // namespace

PlatformInfo HostPlatformInfo() {
  PlatformInfo info;
  info.soc = SocVersion::kHost;
  info.ub_size = kHostUbSize;
  info.core_num = HardwareThreads() * kHostBlocksPerThread;
  return info;
}

namespace {

// One RunBlocksSynchronously call: its blocks, claimed through `next`, counted in `finished`.
struct SyncJob {
  const std::function<void(uint32_t)>* block = nullptr;  // the caller's; valid until finished == n
  uint32_t n = 0;
  uint32_t max_helpers = 0;  // workers that may join besides the caller
  std::atomic<uint32_t> next{0};
  std::atomic<uint32_t> helpers{0};
  std::atomic<uint32_t> finished{0};
  std::mutex mu;  // guards error; with done_cv, the caller's wait for blocks still running
  std::condition_variable done_cv;
  std::string error;

  // Claims and runs blocks until none is left unclaimed.
  void Drain() {
    uint32_t ran = 0;
    for (uint32_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) {
      try {
        (*block)(i);
      } catch (const std::exception& e) {
        RecordError(e.what()[0] ? e.what() : "kernel block failed");
      } catch (...) {
        RecordError("kernel block failed");
      }
      ++ran;
    }
    if (ran != 0 && finished.fetch_add(ran) + ran == n) {
      std::lock_guard<std::mutex> lock(mu);  // the caller may be between its check and its wait
      done_cv.notify_all();
    }
  }
  void RecordError(const char* what) {
    std::lock_guard<std::mutex> lock(mu);
    if (error.empty()) error = what;
  }
};

// The workers behind RunBlocksSynchronously: hardware threads - 1 std::threads, started on first
// use and kept for the life of the process; between calls they poll for kSpin, then park on a
// condition variable.
// Creating and joining threads per call would cost a large part of a mid-sized call
// (benchmarks/README.md). Calls from many threads at once share the workers; each caller also runs
// its own blocks, so a call finishes even when every worker is busy with other calls (or, after
// fork(), when the workers do not exist in the child).
class SyncWorkers {
 public:
  static SyncWorkers& Get() {
    static SyncWorkers* workers = new SyncWorkers(HardwareThreads() - 1);  // never destroyed:
    return *workers;  // threads parked at exit must not be joined from a static destructor
  }

  std::string Run(uint32_t n, const std::function<void(uint32_t)>& block, uint32_t max_threads) {
    auto job = std::make_shared<SyncJob>();
    job->block = &block;
    job->n = n;
    job->max_helpers = std::min<uint32_t>({max_threads - 1, n - 1, num_workers_});
    if (job->max_helpers > 0) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        jobs_.push_back(job);
        queued_.store(true, std::memory_order_release);
      }
      if (job->max_helpers == 1) {
        cv_.notify_one();
      } else {
        cv_.notify_all();
      }
    }
    job->Drain();
    // No block is left unclaimed: what remains is running on workers now. Poll for it a while
    // rather than park at once (a parked caller wakes as late as a parked worker does).
    PollFor(kSpin, [&] { return job->finished.load(std::memory_order_acquire) == n; });
    std::unique_lock<std::mutex> lock(job->mu);
    job->done_cv.wait(lock, [&] { return job->finished.load() == n; });
    return job->error;
  }

 private:
  explicit SyncWorkers(uint32_t num_workers) : num_workers_(num_workers) {
    for (uint32_t i = 0; i < num_workers; ++i) std::thread([this] { WorkerLoop(); }).detach();
  }

  // The oldest job with unclaimed blocks and room for a helper; drops jobs with none left.
  // Called with mu_ held; leaves queued_ false when it found nothing to take.
  std::shared_ptr<SyncJob> TakeJob() {
    for (auto it = jobs_.begin(); it != jobs_.end();) {
      SyncJob& job = **it;
      if (job.next.load() >= job.n) {
        it = jobs_.erase(it);
        continue;
      }
      if (job.helpers.fetch_add(1) < job.max_helpers) return *it;
      ++it;
    }
    queued_.store(false, std::memory_order_relaxed);
    return nullptr;
  }

  // After a job, a worker polls for the next one for kSpin before it parks: waking a parked
  // thread costs a large part of a mid-sized call (benchmarks/README.md), and calls from Python
  // come back to back. Bounded, so an idle process stops spinning.
  static constexpr std::chrono::microseconds kSpin{200};

  void WorkerLoop() {
    for (;;) {
      std::shared_ptr<SyncJob> job;
      PollFor(kSpin, [&] {
        if (!queued_.load(std::memory_order_acquire)) return false;
        std::lock_guard<std::mutex> lock(mu_);
        return (job = TakeJob()) != nullptr;
      });
      if (job == nullptr) {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return (job = TakeJob()) != nullptr; });
      }
      job->Drain();
    }
  }

  const uint32_t num_workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<SyncJob>> jobs_;  // guarded by mu_
  std::atomic<bool> queued_{false};  // a hint for spinning workers: jobs_ may be non-empty
};

}  // namespace

std::string RunBlocksSynchronously(uint32_t n, const std::function<void(uint32_t)>& block,
                                   uint32_t max_threads) {
  if (n == 0) return {};
  if (max_threads == 0) max_threads = HardwareThreads();
  return SyncWorkers::Get().Run(n, block, max_threads);
}

}  // namespace jax_threshold::aclnn
