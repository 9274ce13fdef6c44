// A HostStream for the tests: in order and asynchronous, on its own std::thread workers, so the
// executor's asynchronous path runs without XLA.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "jax_threshold/aclnn_threshold_backward.h"

namespace jax_threshold::aclnn {

// An in-order asynchronous stream. Launch() queues the blocks and returns; the workers run them,
// and the worker that finishes the last block calls done(). Launches do not wait for each other:
// ordering is the caller's (the executor launches its next step from the previous done()).
class ThreadPoolHostStream final : public HostStream {
 public:
  explicit ThreadPoolHostStream(uint32_t num_workers = 0) {
    if (num_workers == 0) num_workers = std::max(1u, std::thread::hardware_concurrency());
    workers_.reserve(num_workers);
    for (uint32_t i = 0; i < num_workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  }
  ~ThreadPoolHostStream() override {  // drains queued work, then joins
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
  }
  ThreadPoolHostStream(const ThreadPoolHostStream&) = delete;
  ThreadPoolHostStream& operator=(const ThreadPoolHostStream&) = delete;

  uint32_t NumWorkers() const override { return static_cast<uint32_t>(workers_.size()); }
  void Launch(uint32_t n, std::function<void(uint32_t)> block,
              std::function<void()> done) override {
    if (n == 0) {
      if (done) done();
      return;
    }
    struct Shared {
      std::function<void(uint32_t)> block;
      std::function<void()> done;
      std::atomic<uint32_t> remaining;
    };
    auto shared = std::make_shared<Shared>();
    shared->block = std::move(block);
    shared->done = std::move(done);
    shared->remaining.store(n);
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (uint32_t i = 0; i < n; ++i) {
        tasks_.emplace_back([shared, i] {
          shared->block(i);
          if (shared->remaining.fetch_sub(1) == 1 && shared->done) shared->done();
        });
      }
    }
    cv_.notify_all();
  }

 private:
  void WorkerLoop() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
        if (tasks_.empty()) return;  // stopping and drained
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace jax_threshold::aclnn
