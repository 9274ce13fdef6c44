#include "aclnn/host_stream.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>

namespace jax_threshold::aclnn {
namespace {

uint32_t HardwareThreads() { return std::max(1u, std::thread::hardware_concurrency()); }

}  // namespace

PlatformInfo HostPlatformInfo() {
  PlatformInfo info;  // keeps the default (910B) ub_size
  info.soc = SocVersion::kHost;
  info.core_num = HardwareThreads();
  return info;
}

std::string RunBlocksSynchronously(uint32_t n, const std::function<void(uint32_t)>& block,
                                   uint32_t max_threads) {
  if (n == 0) return {};
  if (max_threads == 0) max_threads = HardwareThreads();
  const uint32_t threads = std::min(n, max_threads);
  std::atomic<uint32_t> next{0};
  std::mutex error_mu;
  std::string error;
  auto work = [&] {
    for (uint32_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) {
      try {
        block(i);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (error.empty()) error = e.what()[0] ? e.what() : "kernel block failed";
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (error.empty()) error = "kernel block failed";
      }
    }
  };
  std::vector<std::thread> helpers;
  helpers.reserve(threads - 1);
  for (uint32_t t = 1; t < threads; ++t) helpers.emplace_back(work);
  work();
  for (auto& h : helpers) h.join();
  return error;
}

ThreadPoolHostStream::ThreadPoolHostStream(uint32_t num_workers) {
  if (num_workers == 0) num_workers = HardwareThreads();
  workers_.reserve(num_workers);
  for (uint32_t i = 0; i < num_workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPoolHostStream::~ThreadPoolHostStream() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPoolHostStream::Launch(uint32_t n, std::function<void(uint32_t)> block,
                                  std::function<void()> done) {
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

void ThreadPoolHostStream::WorkerLoop() {
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

}  // namespace jax_threshold::aclnn
