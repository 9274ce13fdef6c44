// CANN's executor reuse: repeatable executors, rebinding tensor addresses, destroying, and the
// lifetimes of runs against all three in every order and from several threads.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include "aclnn/executor.h"
#include "executor_test_util.h"
#include "thread_pool_host_stream.h"

using namespace executor_test;

namespace {

ScalarPtr Float(float v) { return ScalarPtr(aclCreateScalar(&v, ACL_FLOAT)); }

// Row-major float32 tensor over `data`.
TensorPtr View(std::vector<float>& data, const std::vector<int64_t>& shape) {
  return TensorPtr(aclCreateTensor(shape.data(), shape.size(), ACL_FLOAT, nullptr, 0, data.data()));
}

std::vector<float> Expected(const std::vector<float>& g, const std::vector<float>& x, float t) {
  std::vector<float> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = x[i] > t ? g[i % g.size()] : 0.0f;
  return out;
}

struct Planned {
  std::vector<float> g, x, out;
  TensorPtr tg, tx, tout;
  aclOpExecutor* executor = nullptr;
  uint64_t ws_size = 0;
};

// grad_output of `g_shape` broadcast against x of `x_shape` (float32), threshold 0.5.
void Plan(Planned* p, std::vector<int64_t> g_shape, std::vector<int64_t> x_shape, float t = 0.5f) {
  p->g.assign(Numel(g_shape), 0);
  p->x.assign(Numel(x_shape), 0);
  for (size_t i = 0; i < p->g.size(); ++i) p->g[i] = 1.0f + static_cast<float>(i);
  for (size_t i = 0; i < p->x.size(); ++i) p->x[i] = static_cast<float>(i % 3) * 0.4f;
  p->out.assign(p->x.size(), -7.0f);
  p->tg = View(p->g, g_shape);
  p->tx = View(p->x, x_shape);
  p->tout = View(p->out, x_shape);
  auto thr = Float(t);
  ASSERT_EQ(aclnnThresholdBackwardGetWorkspaceSize(p->tg.get(), p->tx.get(), thr.get(),
                                                   p->tout.get(), &p->ws_size, &p->executor),
            ACLNN_SUCCESS);
}

TEST(ExecutorReuse, NonRepeatableRunsOnceAndDestroyIsAnErrorCode) {
  Planned p;
  Plan(&p, {8}, {8});
  EXPECT_EQ(aclnnThresholdBackward(nullptr, 0, p.executor, nullptr), ACLNN_SUCCESS);
  EXPECT_EQ(aclnnThresholdBackward(nullptr, 0, p.executor, nullptr), ACLNN_ERR_PARAM_INVALID);
  // Not repeatable: an error code, and the executor is released all the same (no leak).
  EXPECT_EQ(aclDestroyAclOpExecutor(p.executor), ACLNN_ERR_PARAM_INVALID);
  // Used after destruction: error codes, never a crash.
  EXPECT_EQ(aclnnThresholdBackward(nullptr, 0, p.executor, nullptr), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclSetAclOpExecutorRepeatable(p.executor), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclSetInputTensorAddr(p.executor, 0, p.tg.get(), p.g.data()), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclDestroyAclOpExecutor(p.executor), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclDestroyAclOpExecutor(nullptr), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclSetAclOpExecutorRepeatable(nullptr), ACLNN_ERR_PARAM_NULLPTR);
}

TEST(ExecutorReuse, RepeatableRunsUntilDestroyedWithReboundAddresses) {
  Planned p;
  Plan(&p, {3, 5}, {3, 5});
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(p.executor), ACLNN_SUCCESS);
  EXPECT_EQ(aclnnThresholdBackward(nullptr, 0, p.executor, nullptr), ACLNN_SUCCESS);
  EXPECT_EQ(p.out, Expected(p.g, p.x, 0.5f));
  for (int round = 0; round < 3; ++round) {
    std::vector<float> g2(15), x2(15), out2(15, -1.0f);
    for (int i = 0; i < 15; ++i) {
      g2[i] = -2.0f * static_cast<float>(i + round);
      x2[i] = static_cast<float>((i + round) % 4) * 0.3f;
    }
    ASSERT_EQ(aclSetInputTensorAddr(p.executor, 0, p.tg.get(), g2.data()), ACLNN_SUCCESS);
    ASSERT_EQ(aclSetInputTensorAddr(p.executor, 1, p.tx.get(), x2.data()), ACLNN_SUCCESS);
    ASSERT_EQ(aclSetOutputTensorAddr(p.executor, 0, p.tout.get(), out2.data()), ACLNN_SUCCESS);
    ASSERT_EQ(aclnnThresholdBackward(nullptr, 0, p.executor, nullptr), ACLNN_SUCCESS);
    EXPECT_EQ(out2, Expected(g2, x2, 0.5f));
  }
  EXPECT_EQ(aclDestroyAclOpExecutor(p.executor), ACLNN_SUCCESS);
  EXPECT_EQ(aclnnThresholdBackward(nullptr, 0, p.executor, nullptr), ACLNN_ERR_PARAM_INVALID);
}

TEST(ExecutorReuse, RebindingChecksIndexSizeAndAlignment) {
  Planned p;
  Plan(&p, {4}, {4});
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(p.executor), ACLNN_SUCCESS);
  std::vector<float> other(8, 0.0f);
  EXPECT_EQ(aclSetInputTensorAddr(p.executor, 2, p.tg.get(), other.data()),
            ACLNN_ERR_PARAM_INVALID);  // a scalar-threshold plan has two inputs
  EXPECT_EQ(aclSetInputTensorAddr(p.executor, 3, p.tg.get(), other.data()),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclSetOutputTensorAddr(p.executor, 1, p.tout.get(), other.data()),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclSetInputTensorAddr(p.executor, 0, nullptr, other.data()), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclSetInputTensorAddr(p.executor, 0, p.tg.get(), nullptr), ACLNN_ERR_PARAM_NULLPTR);
  auto bigger = View(other, {8});
  EXPECT_EQ(aclSetInputTensorAddr(p.executor, 0, bigger.get(), other.data()),
            ACLNN_ERR_PARAM_INVALID);  // another size
  const int64_t shape[] = {4};
  TensorPtr as_int(aclCreateTensor(shape, 1, ACL_INT32, nullptr, 0, other.data()));
  EXPECT_EQ(aclSetInputTensorAddr(p.executor, 0, as_int.get(), other.data()),
            ACLNN_ERR_PARAM_INVALID);  // another dtype
  EXPECT_EQ(
      aclSetInputTensorAddr(p.executor, 0, p.tg.get(), reinterpret_cast<char*>(other.data()) + 1),
      ACLNN_ERR_PARAM_INVALID);  // planned aligned, now not
  // Failed rebindings left the plan as it was.
  EXPECT_EQ(aclnnThresholdBackward(nullptr, 0, p.executor, nullptr), ACLNN_SUCCESS);
  EXPECT_EQ(p.out, Expected(p.g, p.x, 0.5f));
  EXPECT_EQ(aclDestroyAclOpExecutor(p.executor), ACLNN_SUCCESS);
}

TEST(ExecutorReuse, ReboundOutMayNotOverlapAnInputUnlikeThePlan) {
  Planned p;
  Plan(&p, {6}, {6});
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(p.executor), ACLNN_SUCCESS);
  // out onto x: planned disjoint (direct kernel writes), so the run refuses it.
  ASSERT_EQ(aclSetOutputTensorAddr(p.executor, 0, p.tout.get(), p.x.data()), ACLNN_SUCCESS);
  EXPECT_EQ(aclnnThresholdBackward(nullptr, 0, p.executor, nullptr), ACLNN_ERR_PARAM_INVALID);
  // Back to a disjoint out: runs.
  ASSERT_EQ(aclSetOutputTensorAddr(p.executor, 0, p.tout.get(), p.out.data()), ACLNN_SUCCESS);
  EXPECT_EQ(aclnnThresholdBackward(nullptr, 0, p.executor, nullptr), ACLNN_SUCCESS);
  EXPECT_EQ(p.out, Expected(p.g, p.x, 0.5f));
  EXPECT_EQ(aclDestroyAclOpExecutor(p.executor), ACLNN_SUCCESS);
}

TEST(ExecutorReuse, InPlacePlanStaysInPlaceWhenBothMove) {
  std::vector<float> g = {1, 2, 3, 4}, x = {0.1f, 0.9f, 0.2f, 0.7f};
  auto tg = View(g, {4});
  auto tx = View(x, {4});
  auto thr = Float(0.5f);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  // out is x's view: in place.
  ASSERT_EQ(
      aclnnThresholdBackwardGetWorkspaceSize(tg.get(), tx.get(), thr.get(), tx.get(), &ws, &e),
      ACLNN_SUCCESS);
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
  std::vector<float> x2 = {0.6f, 0.4f, 0.8f, 0.0f};
  ASSERT_EQ(aclSetInputTensorAddr(e, 1, tx.get(), x2.data()), ACLNN_SUCCESS);
  // x moved but out did not: they no longer overlap, which the plan allows.
  ASSERT_EQ(aclnnThresholdBackward(nullptr, 0, e, nullptr), ACLNN_SUCCESS);
  EXPECT_EQ(x, Expected(g, x2, 0.5f));
  ASSERT_EQ(aclSetOutputTensorAddr(e, 0, tx.get(), x2.data()), ACLNN_SUCCESS);
  const std::vector<float> want = Expected(g, x2, 0.5f);
  ASSERT_EQ(aclnnThresholdBackward(nullptr, 0, e, nullptr), ACLNN_SUCCESS);  // in place again
  EXPECT_EQ(x2, want);
  EXPECT_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
}

TEST(ExecutorReuse, BroadcastPlanReusedAcrossAddresses) {
  Planned p;
  Plan(&p, {1, 7}, {5, 7});
  EXPECT_EQ(p.ws_size, 0u);  // the kernel reads the broadcast grad_output where it is
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(p.executor), ACLNN_SUCCESS);
  std::vector<float> g2(7), out2(35);
  for (int i = 0; i < 7; ++i) g2[i] = 10.0f * static_cast<float>(i);
  ASSERT_EQ(aclSetInputTensorAddr(p.executor, 0, p.tg.get(), g2.data()), ACLNN_SUCCESS);
  ASSERT_EQ(aclSetOutputTensorAddr(p.executor, 0, p.tout.get(), out2.data()), ACLNN_SUCCESS);
  ASSERT_EQ(aclnnThresholdBackward(nullptr, 0, p.executor, nullptr), ACLNN_SUCCESS);
  EXPECT_EQ(out2, Expected(g2, p.x, 0.5f));
  EXPECT_EQ(aclDestroyAclOpExecutor(p.executor), ACLNN_SUCCESS);
}

TEST(ExecutorReuse, WorkspaceMayNotOverlapAReboundTensor) {
  // A strided grad_output, broadcast: copied at its own size into the workspace.
  std::vector<float> g(14), x(35), out(35);
  for (int i = 0; i < 14; ++i) g[i] = 1.0f + static_cast<float>(i);
  for (int i = 0; i < 35; ++i) x[i] = static_cast<float>(i % 3) * 0.4f;
  const int64_t g_shape[2] = {1, 7}, g_strides[2] = {14, 2};
  TensorPtr tg(aclCreateTensor(g_shape, 2, ACL_FLOAT, g_strides, 0, g.data()));
  TensorPtr tx = View(x, {5, 7}), tout = View(out, {5, 7});
  auto thr = Float(0.5f);
  uint64_t ws_size = 0;
  aclOpExecutor* e = nullptr;
  ASSERT_EQ(aclnnThresholdBackwardGetWorkspaceSize(tg.get(), tx.get(), thr.get(), tout.get(),
                                                   &ws_size, &e),
            ACLNN_SUCCESS);
  ASSERT_GT(ws_size, 0u);
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
  std::vector<uint8_t> ws(ws_size);
  ASSERT_EQ(aclnnThresholdBackward(ws.data(), ws.size(), e, nullptr), ACLNN_SUCCESS);
  std::vector<float> g_row(7);
  for (int i = 0; i < 7; ++i) g_row[i] = g[2 * i];
  EXPECT_EQ(out, Expected(g_row, x, 0.5f));
  std::vector<float> in_ws(ws_size / 4 + 64);
  ASSERT_EQ(aclSetOutputTensorAddr(e, 0, tout.get(), in_ws.data()), ACLNN_SUCCESS);
  EXPECT_EQ(aclnnThresholdBackward(in_ws.data(), ws_size, e, nullptr), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
}

TEST(ExecutorReuse, DeviceThresholdPlanRebindsItsThreshold) {
  std::vector<float> g(12), x(12), out(12), t1 = {0.5f}, t2 = {-1.0f};
  for (int i = 0; i < 12; ++i) {
    g[i] = static_cast<float>(i) + 1;
    x[i] = static_cast<float>(i % 4) * 0.3f - 0.2f;
  }
  auto tg = View(g, {3, 4});
  auto tx = View(x, {3, 4});
  auto tout = View(out, {3, 4});
  auto tt = View(t1, {});
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  PlatformInfo host;
  host.soc = SocVersion::kHost;
  ASSERT_EQ(aclnnThresholdBackwardDeviceThresholdGetWorkspaceSize(tg.get(), tx.get(), tt.get(),
                                                                  tout.get(), &ws, &e, &host),
            ACLNN_SUCCESS);
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
  ASSERT_EQ(aclnnThresholdBackward(nullptr, 0, e, nullptr), ACLNN_SUCCESS);
  EXPECT_EQ(out, Expected(g, x, 0.5f));
  ASSERT_EQ(aclSetInputTensorAddr(e, 2, tt.get(), t2.data()), ACLNN_SUCCESS);
  ASSERT_EQ(aclnnThresholdBackward(nullptr, 0, e, nullptr), ACLNN_SUCCESS);
  EXPECT_EQ(out, Expected(g, x, -1.0f));
  EXPECT_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);

  // A scalar threshold is part of the plan: there is no input 2 to rebind.
  ScalarPtr scalar(aclCreateScalar(t1.data(), ACL_FLOAT));
  ASSERT_EQ(aclnnThresholdBackwardGetWorkspaceSize(tg.get(), tx.get(), scalar.get(), tout.get(),
                                                   &ws, &e, &host),
            ACLNN_SUCCESS);
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
  EXPECT_EQ(aclSetInputTensorAddr(e, 2, tt.get(), t2.data()), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("index 2 is out of range"), std::string::npos);
  EXPECT_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
}

TEST(ExecutorReuse, NoRebindingWhileARunIsInFlight) {
  Planned p;
  Plan(&p, {4}, {4});
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(p.executor), ACLNN_SUCCESS);
  ExecutorPlan* plan = p.executor->plan.get();
  {
    std::lock_guard<std::mutex> lock(plan->bindings_mu);
    ++plan->bindings.runs_in_flight;  // as StartRun does for a run in flight
  }
  std::vector<float> other(4);
  EXPECT_EQ(aclSetInputTensorAddr(p.executor, 0, p.tg.get(), other.data()),
            ACLNN_ERR_PARAM_INVALID);
  EndRun(plan);
  EXPECT_EQ(aclSetInputTensorAddr(p.executor, 0, p.tg.get(), other.data()), ACLNN_SUCCESS);
  EXPECT_EQ(aclDestroyAclOpExecutor(p.executor), ACLNN_SUCCESS);
}

TEST(ExecutorReuse, ManyThreadsPlanRunAndDestroyAtOnce) {
  std::vector<std::thread> threads;
  std::vector<int> ok(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t, &ok] {
      for (int i = 0; i < 50; ++i) {
        Planned p;
        Plan(&p, {9}, {9});
        if (aclSetAclOpExecutorRepeatable(p.executor) != ACLNN_SUCCESS) return;
        if (aclnnThresholdBackward(nullptr, 0, p.executor, nullptr) != ACLNN_SUCCESS) return;
        if (aclnnThresholdBackward(nullptr, 0, p.executor, nullptr) != ACLNN_SUCCESS) return;
        if (p.out != Expected(p.g, p.x, 0.5f)) return;
        if (aclDestroyAclOpExecutor(p.executor) != ACLNN_SUCCESS) return;
      }
      ok[t] = 1;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok, std::vector<int>(8, 1));
}

// A HostStream that holds its launches until Open(): a run on it stays in flight as long as the
// test wants.
class GateStream final : public HostStream {
 public:
  uint32_t NumWorkers() const override { return 1; }
  void Launch(uint32_t n, std::function<void(uint32_t)> block,
              std::function<void()> done) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (!open_) {
      queued_.push_back({n, std::move(block), std::move(done)});
      return;
    }
    lock.unlock();
    for (uint32_t b = 0; b < n; ++b) block(b);
    done();  // the executor launches its next step from here
  }
  void Open() {
    std::vector<Queued> queued;
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
      queued.swap(queued_);
    }
    for (Queued& q : queued) {
      for (uint32_t b = 0; b < q.n; ++b) q.block(b);
      q.done();
    }
  }

 private:
  struct Queued {
    uint32_t n;
    std::function<void(uint32_t)> block;
    std::function<void()> done;
  };
  std::mutex mu_;
  bool open_ = false;
  std::vector<Queued> queued_;
};

bool InFlight(ExecutorPlan& plan) {
  std::lock_guard<std::mutex> lock(plan.bindings_mu);
  return plan.bindings.runs_in_flight > 0;
}

TEST(ExecutorLifetimes, AnExecutorThatHasRunIsNotMadeRepeatable) {
  Planned p;
  Plan(&p, {8}, {8});
  ASSERT_EQ(aclnnThresholdBackward(nullptr, 0, p.executor, nullptr), ACLNN_SUCCESS);
  EXPECT_EQ(aclSetAclOpExecutorRepeatable(p.executor), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("before its first run"), std::string::npos)
      << aclGetRecentErrMsg();
  std::vector<float> out2(8, -3.0f);
  EXPECT_EQ(aclSetOutputTensorAddr(p.executor, 0, p.tout.get(), out2.data()), ACLNN_SUCCESS);
  EXPECT_EQ(aclnnThresholdBackward(nullptr, 0, p.executor, nullptr), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(out2, std::vector<float>(8, -3.0f));  // never written
  EXPECT_EQ(p.out, Expected(p.g, p.x, 0.5f));
  EXPECT_EQ(aclDestroyAclOpExecutor(p.executor), ACLNN_ERR_PARAM_INVALID);  // not repeatable
}

TEST(ExecutorLifetimes, AFailedRunIsNotARunAndRepeatableStaysTheFirstStep) {
  Planned p;
  Plan(&p, {8}, {8});
  // out onto x, which the plan did not allow: the run is refused, so it is not a run.
  ASSERT_EQ(aclSetOutputTensorAddr(p.executor, 0, p.tout.get(), p.x.data()), ACLNN_SUCCESS);
  EXPECT_EQ(aclnnThresholdBackward(nullptr, 0, p.executor, nullptr), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclSetAclOpExecutorRepeatable(p.executor), ACLNN_SUCCESS);
  EXPECT_EQ(aclSetAclOpExecutorRepeatable(p.executor), ACLNN_SUCCESS);  // again: still fine
  ASSERT_EQ(aclSetOutputTensorAddr(p.executor, 0, p.tout.get(), p.out.data()), ACLNN_SUCCESS);
  EXPECT_EQ(aclnnThresholdBackward(nullptr, 0, p.executor, nullptr), ACLNN_SUCCESS);
  EXPECT_EQ(aclSetAclOpExecutorRepeatable(p.executor), ACLNN_SUCCESS);  // repeatable already
  EXPECT_EQ(p.out, Expected(p.g, p.x, 0.5f));
  EXPECT_EQ(aclDestroyAclOpExecutor(p.executor), ACLNN_SUCCESS);
}

TEST(ExecutorLifetimes, RepeatableIsRefusedWhileTheFirstRunIsInFlight) {
  Planned p;
  Plan(&p, {8}, {8});
  GateStream stream;
  std::promise<void> done;
  ASSERT_EQ(aclnnThresholdBackward(nullptr, 0, p.executor, &stream, [&] { done.set_value(); }),
            ACLNN_SUCCESS);
  EXPECT_EQ(aclSetAclOpExecutorRepeatable(p.executor), ACLNN_ERR_PARAM_INVALID);
  stream.Open();
  done.get_future().wait();
  EXPECT_EQ(p.out, Expected(p.g, p.x, 0.5f));
  EXPECT_EQ(aclDestroyAclOpExecutor(p.executor), ACLNN_ERR_PARAM_INVALID);
}

TEST(ExecutorLifetimes, RebindDestroyRunIsAnErrorCodeAndWritesNothing) {
  Planned p;
  Plan(&p, {8}, {8});
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(p.executor), ACLNN_SUCCESS);
  std::vector<float> out2(8, -3.0f);
  ASSERT_EQ(aclSetOutputTensorAddr(p.executor, 0, p.tout.get(), out2.data()), ACLNN_SUCCESS);
  EXPECT_EQ(aclDestroyAclOpExecutor(p.executor), ACLNN_SUCCESS);
  EXPECT_EQ(aclnnThresholdBackward(nullptr, 0, p.executor, nullptr), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclnnThresholdBackwardRunStatus(p.executor), ACLNN_ERR_PARAM_INVALID);
  EXPECT_STREQ(aclnnThresholdBackwardKernelName(p.executor), "");
  EXPECT_EQ(out2, std::vector<float>(8, -3.0f));
  EXPECT_EQ(p.out, std::vector<float>(8, -7.0f));
}

TEST(ExecutorLifetimes, DestroyWaitsForAnAsynchronousRunsLastLaunch) {
  // A strided out: three steps (kernel into the workspace, copy into out), all held by the gate.
  std::vector<float> g(64), x(64), out(128, -7.0f);
  for (int i = 0; i < 64; ++i) {
    g[i] = 1.0f + static_cast<float>(i);
    x[i] = static_cast<float>(i % 3) * 0.4f;
  }
  TensorPtr tg = View(g, {64}), tx = View(x, {64});
  const int64_t shape[1] = {64}, strides[1] = {2};
  TensorPtr tout(aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, out.data()));
  auto thr = Float(0.5f);
  uint64_t ws_size = 0;
  aclOpExecutor* e = nullptr;
  ASSERT_EQ(aclnnThresholdBackwardGetWorkspaceSize(tg.get(), tx.get(), thr.get(), tout.get(),
                                                   &ws_size, &e),
            ACLNN_SUCCESS);
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
  std::vector<uint8_t> ws(ws_size);
  GateStream stream;
  ASSERT_EQ(aclnnThresholdBackward(ws.data(), ws.size(), e, &stream), ACLNN_SUCCESS);
  std::atomic<bool> destroy_returned{false};
  std::thread destroyer([&] {
    EXPECT_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
    destroy_returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the destroy is waiting by now
  EXPECT_FALSE(destroy_returned.load());
  // While destroy waits, nothing more is admitted.
  EXPECT_EQ(aclnnThresholdBackward(ws.data(), ws.size(), e, nullptr), ACLNN_ERR_PARAM_INVALID);
  stream.Open();
  destroyer.join();
  const std::vector<float> want = Expected(g, x, 0.5f);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(out[2 * i], want[i]) << i;
}

TEST(ExecutorLifetimes, DestroyDuringASynchronousRunWaitsForIt) {
  // Large enough that the run is seen in flight; when it is not, the test checks less, never
  // wrongly.
  Planned p;
  Plan(&p, {1 << 22}, {1 << 22});
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(p.executor), ACLNN_SUCCESS);
  const std::shared_ptr<ExecutorPlan> plan = p.executor->plan;  // no run or destroy yet
  std::atomic<bool> returned{false};
  std::thread runner([&] {
    EXPECT_EQ(aclnnThresholdBackward(nullptr, 0, p.executor, nullptr), ACLNN_SUCCESS);
    returned = true;
  });
  while (!InFlight(*plan) && !returned.load()) std::this_thread::yield();
  EXPECT_EQ(aclDestroyAclOpExecutor(p.executor), ACLNN_SUCCESS);
  // Returned: the run has finished, every element is written.
  EXPECT_FALSE(InFlight(*plan));
  EXPECT_EQ(p.out, Expected(p.g, p.x, 0.5f));
  runner.join();
}

// Two threads run, one rebinds and one destroys, all at once, round after round: every status is
// one the contract allows, every out is either untouched or exactly the oracle's, and a destroyed
// executor runs no more.
TEST(ExecutorLifetimes, RunRebindAndDestroyFromThreadsAtOnce) {
  constexpr int kRounds = 60, kN = 20000;
  for (int round = 0; round < kRounds; ++round) {
    Planned p;
    Plan(&p, {kN}, {kN});
    ASSERT_EQ(aclSetAclOpExecutorRepeatable(p.executor), ACLNN_SUCCESS);
    std::vector<std::vector<float>> outs(4, std::vector<float>(kN, -7.0f));
    std::atomic<int> go{0};
    std::atomic<bool> destroyed{false};
    aclnnStatus run_status[2][3], rebind_status[4], destroy_status = -1;
    auto run = [&](int r) {
      ++go;
      while (go.load() < 4) std::this_thread::yield();
      for (int i = 0; i < 3; ++i) {
        const bool after_destroy = destroyed.load();
        run_status[r][i] = aclnnThresholdBackward(nullptr, 0, p.executor, nullptr);
        if (after_destroy) EXPECT_EQ(run_status[r][i], ACLNN_ERR_PARAM_INVALID);
      }
    };
    std::thread runner(run, 0), runner2(run, 1);
    std::thread rebinder([&] {
      ++go;
      while (go.load() < 4) std::this_thread::yield();
      for (int i = 0; i < 4; ++i) {
        rebind_status[i] = aclSetOutputTensorAddr(p.executor, 0, p.tout.get(), outs[i].data());
      }
    });
    std::thread destroyer([&] {
      ++go;
      while (go.load() < 4) std::this_thread::yield();
      std::this_thread::sleep_for(std::chrono::microseconds(50 * (round % 8)));
      destroy_status = aclDestroyAclOpExecutor(p.executor);
      destroyed = true;
    });
    runner.join();
    runner2.join();
    rebinder.join();
    destroyer.join();
    EXPECT_EQ(destroy_status, ACLNN_SUCCESS);
    for (const auto& statuses : run_status) {
      for (aclnnStatus s : statuses) {
        EXPECT_TRUE(s == ACLNN_SUCCESS || s == ACLNN_ERR_PARAM_INVALID) << s;
      }
    }
    for (aclnnStatus s : rebind_status) {
      EXPECT_TRUE(s == ACLNN_SUCCESS || s == ACLNN_ERR_PARAM_INVALID) << s;
    }
    const std::vector<float> want = Expected(p.g, p.x, 0.5f);
    const std::vector<float> untouched(kN, -7.0f);
    EXPECT_TRUE(p.out == want || p.out == untouched);
    for (const auto& out : outs) EXPECT_TRUE(out == want || out == untouched);
    EXPECT_EQ(aclnnThresholdBackward(nullptr, 0, p.executor, nullptr), ACLNN_ERR_PARAM_INVALID);
    if (HasFailure()) break;
  }
}

}  // namespace
