// PoolStream (the FFI handler's stream kind) from many threads at once: each thread runs its own
// executors on its own PoolStream over one shared pool, as concurrent XLA calls share the CPU
// intra-op pool; every result matches the reference and every stream finishes.
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include "aclnn/executor.h"
#include "aclnn/host_stream.h"
#include "aclnn/pool_stream.h"
#include "executor_test_util.h"
#include "thread_pool_host_stream.h"

using namespace executor_test;

namespace {

TEST(PoolStream, ThreadsShareOnePoolEachWithItsOwnStream) {
  ThreadPoolHostStream pool(3);
  const PoolStream::Schedule schedule = [&pool](std::function<void()> task) {
    pool.Launch(1, [task = std::move(task)](uint32_t) { task(); }, nullptr);
  };
  constexpr int kThreads = 4, kCalls = 12, kN = 100003;  // several blocks and a tail
  std::vector<int> ok(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &ok, &schedule] {
      for (int call = 0; call < kCalls; ++call) {
        std::vector<float> g(kN), x(kN), out(kN, -7.0f);
        for (int i = 0; i < kN; ++i) {
          g[i] = static_cast<float>(i + t);
          x[i] = static_cast<float>((i + call) % 5) * 0.25f;
        }
        const int64_t shape[1] = {kN};
        TensorPtr tg(aclCreateTensor(shape, 1, ACL_FLOAT, nullptr, 0, g.data()));
        TensorPtr tx(aclCreateTensor(shape, 1, ACL_FLOAT, nullptr, 0, x.data()));
        TensorPtr tout(aclCreateTensor(shape, 1, ACL_FLOAT, nullptr, 0, out.data()));
        const float threshold = 0.5f;
        ScalarPtr thr(aclCreateScalar(&threshold, ACL_FLOAT));
        PlatformInfo host = HostPlatformInfo();
        host.core_num = 8;
        uint64_t ws = 0;
        aclOpExecutor* e = nullptr;
        if (aclnnThresholdBackwardGetWorkspaceSize(tg.get(), tx.get(), thr.get(), tout.get(), &ws,
                                                   &e, &host) != ACLNN_SUCCESS) {
          return;
        }
        ExecutorPtr executor(e);
        PoolStream stream(schedule, 3);
        std::promise<void> done;
        if (aclnnThresholdBackward(nullptr, 0, e, &stream, [&done] { done.set_value(); }) !=
            ACLNN_SUCCESS) {
          return;
        }
        stream.Flush();
        done.get_future().wait();
        stream.Close();
        if (!stream.WaitFinished(std::chrono::seconds(60))) return;
        if (aclnnThresholdBackwardRunStatus(e) != ACLNN_SUCCESS) return;
        for (int i = 0; i < kN; ++i) {
          if (out[i] != (x[i] > threshold ? g[i] : 0.0f)) return;
        }
      }
      ok[t] = 1;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok, std::vector<int>(kThreads, 1));
}

}  // namespace
