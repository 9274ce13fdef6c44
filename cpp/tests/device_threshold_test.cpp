// Phase one with a device-side threshold (aclnnThresholdBackwardDeviceThresholdGetWorkspaceSize)
// run on the CPU: the kernel reads each launch's threshold element at Init. Its results equal the
// host-threshold plan's bit for bit (which runs ReluGrad at threshold 0) for every dtype, 0-d and
// batched thresholds, small and large slices, on the synchronous runner and a host stream.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "aclnn/executor.h"
#include "executor_test_util.h"
#include "planned_run.h"

using namespace executor_test;

namespace {

enum class Reader { kHost, kDevice };

Planned Plan(Reader reader, const HostTensor& g, const HostTensor& x, const HostTensor& t,
             HostTensor& out, SocVersion soc = SocVersion::kHost) {
  PlatformInfo info;
  info.soc = soc;
  info.ub_size = soc == SocVersion::kHost ? kHostUbSize : 196608;
  info.core_num = 4;
  Planned p{};
  aclOpExecutor* e = nullptr;
  const auto phase_one = reader == Reader::kDevice
                             ? aclnnThresholdBackwardDeviceThresholdGetWorkspaceSize
                             : aclnnThresholdBackwardBatchedGetWorkspaceSize;
  p.status =
      phase_one(g.tensor.get(), x.tensor.get(), t.tensor.get(), out.tensor.get(), &p.ws, &e, &info);
  p.executor.reset(e);
  p.message = aclGetRecentErrMsg();
  return p;
}

// Threshold values that exercise every branch of the conversion for x of `x`'s dtype: 0 and -0
// (ReluGrad on the host), NaN, infinities, halves, range ends and beyond.
void FillThresholds(HostTensor& t, aclDataType x, std::mt19937_64& rng) {
  const double floats[] = {0.0,
                           -0.0,
                           std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           1.0,
                           -1.5,
                           2.5,
                           0.25,
                           1e-9,
                           -128.5,
                           127.5,
                           255.5,
                           300.0,
                           -3e9,
                           3e9,
                           1e30};
  const int64_t ints[] = {0, 1, -1, 2, -2, 100, -100, 127, -128, 255, 1 << 30};
  for (int64_t i = 0; i < Numel(t.shape); ++i) {
    unsigned char* p = t.At(i);
    if (t.dtype == ACL_FLOAT || t.dtype == ACL_DOUBLE) {
      StoreDouble(t.dtype, floats[(i + rng() % 3) % std::size(floats)], p);
    } else {
      const int64_t v = ints[(i + rng() % 3) % std::size(ints)];
      std::memcpy(p, &v, t.Elem());  // little-endian: the low bytes (wraps for narrow dtypes)
    }
  }
  (void)x;
}

// The grad values include -0.0, NaN and infinities (FillRandom), whose bits must pass through.
void ExpectSameAsHostPlan(aclDataType dtype, aclDataType t_dtype, std::vector<int64_t> out_shape,
                          std::vector<int64_t> t_shape, bool on_stream, uint64_t seed,
                          SocVersion soc = SocVersion::kHost) {
  SCOPED_TRACE(std::string(DtypeName(dtype)) + " x, " + DtypeName(t_dtype) + " threshold of rank " +
               std::to_string(t_shape.size()) + ", " + std::to_string(Numel(out_shape)) +
               " elements" + (on_stream ? ", on a stream" : ""));
  std::mt19937_64 rng(seed);
  HostTensor g = MakeTensor(dtype, out_shape);
  HostTensor x = MakeTensor(dtype, out_shape);
  HostTensor t = MakeTensor(t_dtype, t_shape);
  FillRandom(g, rng);
  FillRandom(x, rng);
  FillThresholds(t, dtype, rng);
  HostTensor host_out = MakeTensor(dtype, out_shape, {}, 0, 0x11);
  HostTensor device_out = MakeTensor(dtype, out_shape, {}, 0, 0x77);

  Planned host = Plan(Reader::kHost, g, x, t, host_out, soc);
  ASSERT_EQ(host.status, ACLNN_SUCCESS) << host.message;
  Planned device = Plan(Reader::kDevice, g, x, t, device_out, soc);
  ASSERT_EQ(device.status, ACLNN_SUCCESS) << device.message;
  const ExecutorPlan* plan = GetExecutorPlan(device.executor.get());
  EXPECT_TRUE(plan->HasDeviceThreshold());
  EXPECT_STREQ(aclnnThresholdBackwardKernelName(device.executor.get()), "ThresholdGradV2D");
  ASSERT_NO_FATAL_FAILURE(RunPlanned(host, false));
  ASSERT_NO_FATAL_FAILURE(RunPlanned(device, on_stream));
  const int64_t n = Numel(out_shape);
  int reported = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (std::memcmp(host_out.At(i), device_out.At(i), host_out.Elem()) != 0 && reported++ < 3) {
      ADD_FAILURE() << "element " << i << " differs from the host-threshold plan's";
    }
  }
}

struct Pair {
  aclDataType x, t;
};

// Every pair the lowering emits (the dtype table's threshold dtypes of each x dtype): float32
// thresholds for 16/32-bit float x, float64 for float64 x, x's own dtype, float32 or float64 for
// integer x.
std::vector<Pair> EveryPair() {
  std::vector<Pair> pairs;
  for (aclDataType x : KernelDtypes()) {
    for (aclDataType t : TableDtypes()) {
      if (ascend_kernels::TakesThresholdDtype(x, t)) pairs.push_back({x, t});
    }
  }
  return pairs;
}

TEST(DeviceThreshold, ZeroDimThresholdMatchesTheHostPlanForEveryDtype) {
  uint64_t seed = 1;
  for (const Pair& p : EveryPair()) {
    for (int repeat = 0; repeat < 6; ++repeat) {  // a different threshold value each time
      ExpectSameAsHostPlan(p.x, p.t, {3, 1001}, {}, false, seed++);
    }
  }
}

TEST(DeviceThreshold, BatchedThresholdOfSmallSlicesMatchesTheHostPlanForEveryDtype) {
  uint64_t seed = 100;
  for (const Pair& p : EveryPair()) {
    ExpectSameAsHostPlan(p.x, p.t, {17, 5, 33}, {17, 1, 1}, false, seed++);
    ExpectSameAsHostPlan(p.x, p.t, {6, 40}, {6, 40}, false, seed++);  // one threshold per element
  }
}

TEST(DeviceThreshold, BatchedThresholdOfLargeSlicesMatchesTheHostPlanForEveryDtype) {
  uint64_t seed = 200;
  for (const Pair& p : EveryPair()) {
    ExpectSameAsHostPlan(p.x, p.t, {3, 70000}, {3, 1}, false, seed++);
  }
}

TEST(DeviceThreshold, RunsOnAHostStream) {
  ExpectSameAsHostPlan(ACL_FLOAT, ACL_FLOAT, {4, 30000}, {4, 1}, true, 300);
  ExpectSameAsHostPlan(ACL_INT8, ACL_DOUBLE, {9, 50}, {9, 1}, true, 301);
  ExpectSameAsHostPlan(ACL_BF16, ACL_FLOAT, {5000}, {}, true, 302);
}

TEST(DeviceThreshold, RunsUnderTheAscend910BRules) {
  uint64_t seed = 400;
  for (const Pair& p : EveryPair()) {
    if (!SocRuns(SocVersion::kAscend910B, p.x, false)) continue;  // not a 910B dtype
    ExpectSameAsHostPlan(p.x, p.t, {2, 40000}, {2, 1}, false, seed++, SocVersion::kAscend910B);
  }
}

// ReluGrad's contract through ThresholdGradV2D: at threshold 0 and -0.0 the bits are ReluGrad's,
// including -0.0, NaN and infinite grads.
TEST(DeviceThreshold, ZeroThresholdGivesReluGradsBits) {
  for (aclDataType dtype : KernelDtypes(/*integer=*/false)) {
    for (double zero : {0.0, -0.0}) {
      std::mt19937_64 rng(7);
      HostTensor g = MakeTensor(dtype, {4096});
      HostTensor x = MakeTensor(dtype, {4096});
      FillRandom(g, rng);
      FillRandom(x, rng);
      const aclDataType t_dtype = dtype == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;
      HostTensor t = MakeTensor(t_dtype, {});
      StoreDouble(t_dtype, zero, t.At(0));
      HostTensor relu_out = MakeTensor(dtype, {4096}, {}, 0, 0x11);
      HostTensor device_out = MakeTensor(dtype, {4096}, {}, 0, 0x77);
      Planned relu = Plan(Reader::kHost, g, x, t, relu_out);
      ASSERT_EQ(relu.status, ACLNN_SUCCESS) << relu.message;
      ASSERT_STREQ(aclnnThresholdBackwardKernelName(relu.executor.get()), "ReluGrad");
      Planned device = Plan(Reader::kDevice, g, x, t, device_out);
      ASSERT_EQ(device.status, ACLNN_SUCCESS) << device.message;
      ASSERT_NO_FATAL_FAILURE(RunPlanned(relu, false));
      ASSERT_NO_FATAL_FAILURE(RunPlanned(device, false));
      EXPECT_EQ(std::memcmp(relu_out.storage.data(), device_out.storage.data(), 4096 * g.Elem()), 0)
          << DtypeName(dtype) << " at threshold " << zero;
    }
  }
}

// The threshold is read when the kernel runs, not when the plan is made.
TEST(DeviceThreshold, KernelReadsTheThresholdWhenItRuns) {
  HostTensor g = MakeTensor(ACL_FLOAT, {64});
  HostTensor x = MakeTensor(ACL_FLOAT, {64});
  for (int i = 0; i < 64; ++i) {
    StoreDouble(ACL_FLOAT, 1.0, g.At(i));
    StoreDouble(ACL_FLOAT, i - 32, x.At(i));
  }
  HostTensor t = MakeTensor(ACL_FLOAT, {});
  StoreDouble(ACL_FLOAT, 100.0, t.At(0));  // nothing passes
  HostTensor out = MakeTensor(ACL_FLOAT, {64});
  Planned p = Plan(Reader::kDevice, g, x, t, out);
  ASSERT_EQ(p.status, ACLNN_SUCCESS) << p.message;
  StoreDouble(ACL_FLOAT, -3.5, t.At(0));  // written after phase one, before phase two
  ASSERT_NO_FATAL_FAILURE(RunPlanned(p, false));
  for (int i = 0; i < 64; ++i) {
    float v;
    std::memcpy(&v, out.At(i), 4);
    EXPECT_EQ(v, i - 32 > -3.5 ? 1.0f : 0.0f) << "element " << i;
  }
}

// Every slice of a batch shares the plan's one tiling, whatever the thresholds' values.
TEST(DeviceThreshold, TilingDoesNotDependOnTheThresholdsValue) {
  std::mt19937_64 rng(9);
  HostTensor g = MakeTensor(ACL_INT32, {8, 100});
  HostTensor x = MakeTensor(ACL_INT32, {8, 100});
  HostTensor t1 = MakeTensor(ACL_INT32, {8, 1});
  HostTensor t2 = MakeTensor(ACL_INT32, {8, 1});
  FillThresholds(t1, ACL_INT32, rng);
  FillThresholds(t2, ACL_INT32, rng);
  HostTensor out = MakeTensor(ACL_INT32, {8, 100});
  Planned a = Plan(Reader::kDevice, g, x, t1, out);
  Planned b = Plan(Reader::kDevice, g, x, t2, out);
  ASSERT_EQ(a.status, ACLNN_SUCCESS) << a.message;
  ASSERT_EQ(b.status, ACLNN_SUCCESS) << b.message;
  const auto& ta = GetExecutorPlan(a.executor.get())->threshold_grad_tiling;
  const auto& tb = GetExecutorPlan(b.executor.get())->threshold_grad_tiling;
  EXPECT_EQ(std::memcmp(&ta, &tb, sizeof ta), 0);
  EXPECT_EQ(ta.threshold.gm_dtype, static_cast<int32_t>(ACL_INT32));
}

TEST(DeviceThreshold, RefusesAThresholdDtypeTheKernelDoesNotRead) {
  HostTensor g = MakeTensor(ACL_FLOAT, {8});
  HostTensor x = MakeTensor(ACL_FLOAT, {8});
  HostTensor out = MakeTensor(ACL_FLOAT, {8});
  for (aclDataType t_dtype : {ACL_DOUBLE, ACL_INT32, ACL_FLOAT16}) {
    HostTensor t = MakeTensor(t_dtype, {});
    Planned p = Plan(Reader::kDevice, g, x, t, out);
    EXPECT_EQ(p.status, ACLNN_ERR_PARAM_INVALID);
    EXPECT_NE(p.message.find(std::string("threshold has dtype ") + DtypeName(t_dtype)),
              std::string::npos)
        << p.message;
    EXPECT_EQ(p.executor, nullptr);
  }
  HostTensor gi = MakeTensor(ACL_INT8, {8});
  HostTensor xi = MakeTensor(ACL_INT8, {8});
  HostTensor oi = MakeTensor(ACL_INT8, {8});
  HostTensor ti = MakeTensor(ACL_INT32, {});
  EXPECT_EQ(Plan(Reader::kDevice, gi, xi, ti, oi).status, ACLNN_ERR_PARAM_INVALID);
}

// One rule, the dtype table's, checked once x's dtype is known to have a kernel: an x dtype
// without one is refused for its own dtype whatever the threshold's, and the message names the
// dtypes the kernel reads.
TEST(DeviceThreshold, ChecksTheThresholdDtypeOnceXHasAKernel) {
  HostTensor g = MakeTensor(ACL_FLOAT, {8});
  const aclDataType unsupported = UnsupportedDtype();  // the table's: no kernel runs it
  HostTensor x16 = MakeTensor(unsupported, {8});
  HostTensor out16 = MakeTensor(unsupported, {8});
  for (aclDataType t_dtype : {unsupported, ACL_FLOAT16, ACL_FLOAT, ACL_DOUBLE}) {
    HostTensor t = MakeTensor(t_dtype, {});
    Planned p = Plan(Reader::kDevice, g, x16, t, out16);
    EXPECT_EQ(p.status, ACLNN_ERR_PARAM_INVALID);
    EXPECT_NE(
        p.message.find(std::string("x has dtype ") + DtypeName(unsupported) + ", not supported"),
        std::string::npos)
        << p.message;
  }
  HostTensor x = MakeTensor(ACL_INT8, {8});
  HostTensor out = MakeTensor(ACL_INT8, {8});
  HostTensor gi = MakeTensor(ACL_INT8, {8});
  HostTensor t = MakeTensor(ACL_FLOAT16, {});
  Planned p = Plan(Reader::kDevice, gi, x, t, out);
  EXPECT_EQ(p.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(p.message.find("(it reads float32, int8, float64)"), std::string::npos) << p.message;
}

// An empty call plans nothing, and still refuses a threshold dtype the kernel does not read.
TEST(DeviceThreshold, AnEmptyCallChecksTheThresholdDtypeToo) {
  HostTensor g = MakeTensor(ACL_FLOAT, {0});
  HostTensor x = MakeTensor(ACL_FLOAT, {0});
  HostTensor out = MakeTensor(ACL_FLOAT, {0});
  HostTensor bad = MakeTensor(ACL_FLOAT16, {});
  Planned p = Plan(Reader::kDevice, g, x, bad, out);
  EXPECT_EQ(p.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(p.message.find("threshold has dtype float16"), std::string::npos) << p.message;
  HostTensor good = MakeTensor(ACL_FLOAT, {});
  Planned q = Plan(Reader::kDevice, g, x, good, out);
  EXPECT_EQ(q.status, ACLNN_SUCCESS) << q.message;
  EXPECT_EQ(q.ws, 0u);
}

TEST(DeviceThreshold, ChecksShapesAsTheBatchedPhaseOneDoes) {
  HostTensor g = MakeTensor(ACL_FLOAT, {4, 8});
  HostTensor x = MakeTensor(ACL_FLOAT, {4, 8});
  HostTensor t = MakeTensor(ACL_FLOAT, {3, 1});
  HostTensor out = MakeTensor(ACL_FLOAT, {4, 8});
  Planned device = Plan(Reader::kDevice, g, x, t, out);
  Planned host = Plan(Reader::kHost, g, x, t, out);
  EXPECT_EQ(device.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(device.status, host.status);
  EXPECT_EQ(device.message, host.message);
}

}  // namespace
