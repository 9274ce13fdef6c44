#include "aclnn/pool_stream.h"

#include <algorithm>
#include <exception>
#include <thread>
#include <utility>

#include "aclnn/host_stream.h"  // PollFor

namespace jax_threshold::aclnn {

struct PoolStream::Launched {
  // Declared first so it is released last: the executor that `block` / `done` belong to lives in
  // the owner.
  std::shared_ptr<void> owner;
  PoolStream* stream = nullptr;
  uint32_t n = 0;
  std::function<void(uint32_t)> block;
  std::function<void()> done;
  std::atomic<uint32_t> next{0};      // next unclaimed block
  std::atomic<uint32_t> finished{0};  // blocks that have returned
};

struct PoolStream::Batch {
  std::vector<std::shared_ptr<Launched>> launches;
  uint64_t TotalBlocks() const {
    uint64_t total = 0;
    for (const auto& l : launches) total += l->n;
    return total;
  }
};

namespace {

void RunGuarded(PoolStream* stream, const std::function<void()>& fn) {
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
void Drain(const PoolStream::Batch& batch) {
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

int64_t HostThreads() {
  static const int64_t threads = std::max<int64_t>(1, std::thread::hardware_concurrency());
  return threads;
}

}  // namespace

HostSplit SplitHostCall(int64_t pool_threads, uint64_t out_bytes) {
  HostSplit split;
  split.workers = std::clamp<int64_t>(pool_threads + 1, 1, HostThreads());
  split.blocks =
      std::clamp<int64_t>(std::min<int64_t>(split.workers * kBlocksPerWorker,
                                            static_cast<int64_t>(out_bytes / kMinBlockBytes)),
                          1, kMaxCores);
  return split;
}

PoolStream::PoolStream(Schedule schedule, uint32_t num_workers)
    : schedule_(std::move(schedule)), num_workers_(std::max<uint32_t>(num_workers, 1)) {}

PoolStream::~PoolStream() = default;

void PoolStream::Launch(uint32_t n, std::function<void(uint32_t)> block,
                        std::function<void()> done) {
  if (n == 0) {
    if (done) RunGuarded(this, done);
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
    if (schedule_ && !flushed_) {  // everything launched before Flush() starts together
      queued_.push_back(std::move(launched));
      return;
    }
  }
  auto batch = std::make_shared<Batch>();
  batch->launches.push_back(std::move(launched));
  Start(batch);
}

void PoolStream::Start(const std::shared_ptr<Batch>& batch) {
  {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    if (schedule_) {
      const uint64_t helpers = std::min<uint64_t>(batch->TotalBlocks() - 1, num_workers_ - 1);
      for (uint64_t k = 0; k < helpers; ++k) schedule_([batch] { Drain(*batch); });
    }
  }
  Drain(*batch);  // the calling thread claims whatever no helper has started
}

void PoolStream::Flush() {
  auto batch = std::make_shared<Batch>();
  {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    flushed_ = true;
    batch->launches.swap(queued_);
  }
  if (!batch->launches.empty()) Start(batch);
}

void PoolStream::Close() {
  Flush();
  std::lock_guard<std::recursive_mutex> lock(mu_);
  schedule_ = nullptr;
}

bool PoolStream::WaitFinished(std::chrono::microseconds limit) const {
  return PollFor(limit, [this] { return unfinished_.load(std::memory_order_acquire) == 0; });
}

void PoolStream::RecordError(const char* what) {
  std::lock_guard<std::mutex> lock(error_mu_);
  if (first_error_.empty())
    first_error_ = (what != nullptr && *what) ? what : "kernel block failed";
}

std::string PoolStream::FirstError() const {
  std::lock_guard<std::mutex> lock(error_mu_);
  return first_error_;
}

}  // namespace jax_threshold::aclnn
