// Phase one with a device threshold (aclnnThresholdBackwardDeviceThresholdGetWorkspaceSize) run on
// the CPU, where "device" memory is host memory: the kernel reads each slice's threshold element.
// Shapes and dtypes are checked, a batch is looped over in one launch or one per slice, and every
// element equals an independent reference (and, for one threshold element, the scalar plan's
// bits: ReluGrad's at 0) for every dtype, on the synchronous runner and a host stream.
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

Planned Plan(const HostTensor& g, const HostTensor& x, const HostTensor& t, HostTensor& out,
             SocVersion soc = SocVersion::kHost, uint32_t core_num = 4) {
  PlatformInfo info;  // the SoC's own UB
  info.soc = soc;
  info.core_num = core_num;
  Planned p{};
  aclOpExecutor* e = nullptr;
  p.status = aclnnThresholdBackwardDeviceThresholdGetWorkspaceSize(
      g.tensor.get(), x.tensor.get(), t.tensor.get(), out.tensor.get(), &p.ws, &e, &info);
  p.executor.reset(e);
  p.message = aclGetRecentErrMsg();
  return p;
}

// The scalar phase one with the threshold's one element as its scalar.
Planned PlanScalar(const HostTensor& g, const HostTensor& x, const HostTensor& t, HostTensor& out) {
  PlatformInfo info;
  info.soc = SocVersion::kHost;
  ScalarPtr scalar(aclCreateScalar(t.At(0), t.dtype));
  Planned p{};
  aclOpExecutor* e = nullptr;
  p.status = aclnnThresholdBackwardGetWorkspaceSize(g.tensor.get(), x.tensor.get(), scalar.get(),
                                                    out.tensor.get(), &p.ws, &e, &info);
  p.executor.reset(e);
  p.message = aclGetRecentErrMsg();
  return p;
}

// Every element of out against the contract: grad_output where x > its threshold as real numbers
// (exact in long double for every dtype pair the kernel reads), else 0.
void ExpectReference(const HostTensor& g, const HostTensor& x, const HostTensor& t,
                     const HostTensor& out) {
  const std::vector<int64_t>& shape = out.shape;
  const size_t rank = shape.size();
  auto index_of = [&](const HostTensor& op, int64_t linear) {  // broadcast operand index
    int64_t idx = 0, stride = 1;
    for (size_t d = rank; d-- > 0;) {
      const int64_t i = linear % shape[d];
      linear /= shape[d];
      if (d + op.shape.size() < rank) continue;
      const size_t od = d + op.shape.size() - rank;
      if (op.shape[od] != 1) idx += i * stride;
      stride *= op.shape[od];
    }
    return idx;
  };
  const size_t elem = out.Elem();
  int reported = 0;
  for (int64_t i = 0; i < Numel(shape); ++i) {
    const long double xv = LoadExact(x.dtype, x.At(index_of(x, i)));
    const long double tv = LoadExact(t.dtype, t.At(index_of(t, i)));
    std::vector<unsigned char> expected(elem, 0);
    if (xv > tv) std::memcpy(expected.data(), g.At(index_of(g, i)), elem);
    if (std::memcmp(out.At(i), expected.data(), elem) != 0 && reported++ < 3) {
      ADD_FAILURE() << "element " << i << " x=" << static_cast<double>(xv)
                    << " t=" << static_cast<double>(tv);
    }
  }
}

// Threshold values that exercise every branch of the conversion: 0 and -0, NaN, infinities,
// halves, integer range ends and beyond.
void FillThresholds(HostTensor& t, std::mt19937_64& rng) {
  const double floats[] = {0.0,      -0.0,      std::numeric_limits<double>::quiet_NaN(),
                           INFINITY, -INFINITY, 1.0,
                           -1.5,     2.5,       0.25,
                           1e-9,     -128.5,    127.5,
                           255.5,    300.0,     -3e9,
                           3e9,      1e30};
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
}

HostTensor Filled(aclDataType dtype, std::vector<int64_t> shape, std::mt19937_64& rng) {
  HostTensor t = MakeTensor(dtype, shape);
  FillRandom(t, rng);
  return t;
}

// The grad values include -0.0, NaN and infinities (FillRandom), whose bits must pass through.
void ExpectExact(aclDataType dtype, aclDataType t_dtype, std::vector<int64_t> out_shape,
                 std::vector<int64_t> t_shape, bool on_stream, uint64_t seed,
                 SocVersion soc = SocVersion::kHost, std::vector<int64_t> g_shape = {}) {
  SCOPED_TRACE(std::string(DtypeName(dtype)) + " x, " + DtypeName(t_dtype) + " threshold " +
               ShapeString(t_shape) + ", out " + ShapeString(out_shape) +
               (on_stream ? ", on a stream" : ""));
  std::mt19937_64 rng(seed);
  HostTensor g = Filled(dtype, g_shape.empty() ? out_shape : g_shape, rng);
  HostTensor x = Filled(dtype, out_shape, rng);
  HostTensor t = MakeTensor(t_dtype, t_shape);
  FillThresholds(t, rng);
  HostTensor out = MakeTensor(dtype, out_shape, {}, 0, 0x77);
  Planned device = Plan(g, x, t, out, soc);
  ASSERT_EQ(device.status, ACLNN_SUCCESS) << device.message;
  EXPECT_EQ(device.ws, 0u);
  EXPECT_STREQ(aclnnThresholdBackwardKernelName(device.executor.get()), "ThresholdGradV2D");
  ASSERT_NO_FATAL_FAILURE(RunPlanned(device, on_stream));
  ExpectReference(g, x, t, out);
  if (Numel(t_shape) != 1) return;
  HostTensor scalar_out = MakeTensor(dtype, out_shape, {}, 0, 0x11);
  Planned scalar = PlanScalar(g, x, t, scalar_out);
  ASSERT_EQ(scalar.status, ACLNN_SUCCESS) << scalar.message;
  ASSERT_NO_FATAL_FAILURE(RunPlanned(scalar, false));
  EXPECT_EQ(std::memcmp(out.storage.data(), scalar_out.storage.data(), Numel(out_shape) * g.Elem()),
            0)
      << "the scalar plan's bits differ";
}

struct Pair {
  aclDataType x, t;
};

// Every pair the lowering emits (the dtype table's threshold dtypes of each x dtype).
std::vector<Pair> EveryPair() {
  std::vector<Pair> pairs;
  for (aclDataType x : KernelDtypes()) {
    for (aclDataType t : TableDtypes()) {
      if (ascend_kernels::TakesThresholdDtype(x, t)) pairs.push_back({x, t});
    }
  }
  return pairs;
}

TEST(DeviceThreshold, ZeroDimThresholdIsExactForEveryDtype) {
  uint64_t seed = 1;
  for (const Pair& p : EveryPair()) {
    for (int repeat = 0; repeat < 6; ++repeat) {  // a different threshold value each time
      ExpectExact(p.x, p.t, {3, 1001}, {}, false, seed++);
    }
  }
}

TEST(DeviceThreshold, BatchOfSmallSlicesIsExactForEveryDtype) {
  uint64_t seed = 100;
  for (const Pair& p : EveryPair()) {
    ExpectExact(p.x, p.t, {17, 5, 33}, {17, 1, 1}, false, seed++);
    ExpectExact(p.x, p.t, {6, 40}, {6, 40}, false, seed++);  // one threshold per element
  }
}

TEST(DeviceThreshold, BatchOfLargeSlicesIsExactForEveryDtype) {
  uint64_t seed = 200;
  for (const Pair& p : EveryPair()) ExpectExact(p.x, p.t, {3, 70000}, {3, 1}, false, seed++);
}

TEST(DeviceThreshold, RunsOnAHostStream) {
  ExpectExact(ACL_FLOAT, ACL_FLOAT, {4, 30000}, {4, 1}, true, 300);
  ExpectExact(ACL_INT8, ACL_DOUBLE, {9, 50}, {9, 1}, true, 301);
  ExpectExact(ACL_BF16, ACL_FLOAT, {5000}, {}, true, 302);
  ExpectExact(ACL_FLOAT16, ACL_FLOAT, {5, 700}, {5, 700}, true, 303);
  // One launch per slice: more looped dims than the tiling's batch holds.
  ExpectExact(ACL_INT32, ACL_FLOAT, std::vector<int64_t>(6, 2), {2, 1, 2, 1, 2, 1}, true, 304,
              SocVersion::kHost, {1, 2, 1, 2, 1, 2});
}

// Every SoC row the kernels run on, under its AscendC rules and with its own UB: each dtype it
// runs, with each threshold dtype.
class DeviceThresholdOnSoc : public ::testing::TestWithParam<SocVersion> {};

TEST_P(DeviceThresholdOnSoc, RunsUnderItsRules) {
  uint64_t seed = 400;
  for (const Pair& p : EveryPair()) {
    if (!SocRuns(GetParam(), p.x, false)) continue;
    ExpectExact(p.x, p.t, {2, 40000}, {2, 1}, false, seed++, GetParam());
  }
}

INSTANTIATE_TEST_SUITE_P(
    EverySoc, DeviceThresholdOnSoc, ::testing::ValuesIn(RunnableSocs()),
    [](const ::testing::TestParamInfo<SocVersion>& info) {
      return std::string(
          ascend_kernels::SocRowOf(static_cast<ascend_kernels::Soc>(info.param)).name);
    });

// A batch is one launch with the tiling's ThresholdBatchTiling where that describes it, over a
// grad_output broadcast along the batch; a threshold varying along an inner dim loops over every
// dim before it, so its slices stay contiguous.
TEST(DeviceThreshold, BatchRunsInOneLaunchWhereTheTilingDescribesIt) {
  std::mt19937_64 rng(4);
  for (bool on_stream : {false, true}) {
    HostTensor g = Filled(ACL_FLOAT, {1, 40000}, rng), x = Filled(ACL_FLOAT, {3, 40000}, rng);
    HostTensor t = MakeTensor(ACL_FLOAT, {3, 1});
    FillThresholds(t, rng);
    HostTensor out = MakeTensor(ACL_FLOAT, {3, 40000});
    Planned p = Plan(g, x, t, out, SocVersion::kHost, 8);
    ASSERT_EQ(p.status, ACLNN_SUCCESS) << p.message;
    const ExecutorPlan* plan = GetExecutorPlan(p.executor.get());
    EXPECT_EQ(plan->threshold_grad_tiling.batch.slice_num, 3u);
    EXPECT_EQ(plan->slices.count, 1);
    ASSERT_NO_FATAL_FAILURE(RunPlanned(p, on_stream));
    ExpectReference(g, x, t, out);
  }
  HostTensor g = Filled(ACL_FLOAT, {6, 1}, rng), x = Filled(ACL_FLOAT, {6, 900}, rng);
  HostTensor t = MakeTensor(ACL_FLOAT, {900});
  FillThresholds(t, rng);
  HostTensor out = MakeTensor(ACL_FLOAT, {6, 900});
  Planned p = Plan(g, x, t, out);
  ASSERT_EQ(p.status, ACLNN_SUCCESS) << p.message;
  EXPECT_EQ(p.ws, 0u);
  EXPECT_EQ(GetExecutorPlan(p.executor.get())->threshold_grad_tiling.batch.slice_num, 6u * 900);
  ASSERT_NO_FATAL_FAILURE(RunPlanned(p, false));
  ExpectReference(g, x, t, out);
}

// Alternating broadcasts keep ten dims after merging: the leading ones are looped over, with a
// 0-d threshold too.
TEST(DeviceThreshold, RankAboveEightIsLoopedOver) {
  std::mt19937_64 rng(6);
  const std::vector<int64_t> gs{2, 1, 2, 1, 2, 1, 2, 1, 2, 1}, xs{1, 2, 1, 2, 1, 2, 1, 2, 1, 2};
  HostTensor g = Filled(ACL_INT32, gs, rng), x = Filled(ACL_INT32, xs, rng);
  HostTensor t = MakeTensor(ACL_FLOAT, {});
  FillThresholds(t, rng);
  HostTensor out = MakeTensor(ACL_INT32, std::vector<int64_t>(10, 2));
  Planned p = Plan(g, x, t, out);
  ASSERT_EQ(p.status, ACLNN_SUCCESS) << p.message;
  ASSERT_NO_FATAL_FAILURE(RunPlanned(p, false));
  ExpectReference(g, x, t, out);
}

// A batch runs its tensors in place: one whose slices would need a copy is refused, naming it.
TEST(DeviceThreshold, BatchOfStridedSlicesIsRefusedNamingTheTensor) {
  std::mt19937_64 rng(7);
  HostTensor g = Filled(ACL_FLOAT, {1, 400}, rng);
  HostTensor x = MakeTensor(ACL_FLOAT, {3, 400}, {800, 2});  // every other element
  HostTensor t = MakeTensor(ACL_FLOAT, {3, 1});
  HostTensor out = MakeTensor(ACL_FLOAT, {3, 400});
  Planned p = Plan(g, x, t, out);
  EXPECT_EQ(p.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(p.executor, nullptr);
  EXPECT_NE(p.message.find("but x is strided, unaligned or overlaps out"), std::string::npos)
      << p.message;
  HostTensor transposed = MakeTensor(ACL_FLOAT, {3, 400}, {1, 3});
  HostTensor contiguous = Filled(ACL_FLOAT, {3, 400}, rng);
  p = Plan(g, contiguous, t, transposed);
  EXPECT_EQ(p.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(p.message.find("but out is"), std::string::npos) << p.message;
  // A whole-tensor plan (one threshold element) makes its copies.
  HostTensor t0 = MakeTensor(ACL_FLOAT, {});
  FillThresholds(t0, rng);
  HostTensor out0 = MakeTensor(ACL_FLOAT, {3, 400});
  for (int64_t i = 0; i < 3 * 400; ++i) StoreDouble(ACL_FLOAT, i % 7 - 3.0, x.At(i));
  p = Plan(g, x, t0, out0);
  ASSERT_EQ(p.status, ACLNN_SUCCESS) << p.message;
  EXPECT_GT(p.ws, 0u);
  ASSERT_NO_FATAL_FAILURE(RunPlanned(p, false));
  ExpectReference(g, x, t0, out0);
}

// In place (out is x's view) runs; a threshold or an input overlapping out otherwise is refused.
TEST(DeviceThreshold, OverlapWithOutIsInPlaceOrRefused) {
  std::mt19937_64 rng(8);
  HostTensor g = Filled(ACL_FLOAT, {4, 64}, rng), x = Filled(ACL_FLOAT, {4, 64}, rng);
  HostTensor x_before = MakeTensor(ACL_FLOAT, {4, 64});
  x_before.storage = x.storage;
  HostTensor t = MakeTensor(ACL_FLOAT, {4, 1});
  FillThresholds(t, rng);
  Planned p = Plan(g, x, t, x);
  ASSERT_EQ(p.status, ACLNN_SUCCESS) << p.message;
  ASSERT_NO_FATAL_FAILURE(RunPlanned(p, false));
  ExpectReference(g, x_before, t, x);

  HostTensor shifted = MakeTensor(ACL_FLOAT, {4, 64});  // out one element past x
  shifted.tensor.reset(
      aclCreateTensor(shifted.shape.data(), 2, ACL_FLOAT, nullptr, 1, x.storage.data()));
  p = Plan(g, x, t, shifted);
  EXPECT_EQ(p.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(p.message.find("but x is"), std::string::npos) << p.message;

  HostTensor inside_out = MakeTensor(ACL_FLOAT, {1});  // a threshold element of out's
  inside_out.tensor.reset(
      aclCreateTensor(inside_out.shape.data(), 1, ACL_FLOAT, nullptr, 5, g.storage.data()));
  p = Plan(x, x_before, inside_out, g);
  EXPECT_EQ(p.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(p.message.find("threshold overlaps out"), std::string::npos) << p.message;
}

// The kernel reads the threshold in place: one not aligned to its element is refused, whatever
// x's dtype, and never reaches the kernel.
TEST(DeviceThreshold, UnalignedThresholdIsRefused) {
  std::mt19937_64 rng(9);
  HostTensor g = Filled(ACL_INT32, {2, 8}, rng), x = Filled(ACL_INT32, {2, 8}, rng);
  HostTensor out = MakeTensor(ACL_INT32, {2, 8});
  HostTensor t = MakeTensor(ACL_FLOAT, {2});
  const int64_t one = 1;
  t.tensor.reset(aclCreateTensor(&one, 1, ACL_FLOAT, nullptr, 0,
                                 reinterpret_cast<char*>(t.storage.data()) + 1));
  Planned p = Plan(g, x, t, out);
  EXPECT_EQ(p.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(p.message.find("threshold's data is not aligned to its 4-byte element"),
            std::string::npos)
      << p.message;
  EXPECT_EQ(p.executor, nullptr);
}

// ReluGrad's contract through ThresholdGradV2D: at threshold 0 and -0.0 the bits are ReluGrad's,
// including -0.0, NaN and infinite grads.
TEST(DeviceThreshold, ZeroThresholdGivesReluGradsBits) {
  for (aclDataType dtype : KernelDtypes(/*integer=*/false)) {
    for (double zero : {0.0, -0.0}) {
      std::mt19937_64 rng(7);
      HostTensor g = Filled(dtype, {4096}, rng);
      HostTensor x = Filled(dtype, {4096}, rng);
      const aclDataType t_dtype = dtype == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;
      HostTensor t = MakeTensor(t_dtype, {});
      StoreDouble(t_dtype, zero, t.At(0));
      HostTensor relu_out = MakeTensor(dtype, {4096}, {}, 0, 0x11);
      HostTensor device_out = MakeTensor(dtype, {4096}, {}, 0, 0x77);
      Planned relu = PlanScalar(g, x, t, relu_out);
      ASSERT_EQ(relu.status, ACLNN_SUCCESS) << relu.message;
      ASSERT_STREQ(aclnnThresholdBackwardKernelName(relu.executor.get()), "ReluGrad");
      Planned device = Plan(g, x, t, device_out);
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
  Planned p = Plan(g, x, t, out);
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
  FillThresholds(t1, rng);
  FillThresholds(t2, rng);
  HostTensor out = MakeTensor(ACL_INT32, {8, 100});
  Planned a = Plan(g, x, t1, out);
  Planned b = Plan(g, x, t2, out);
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
    Planned p = Plan(g, x, t, out);
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
  EXPECT_EQ(Plan(gi, xi, ti, oi).status, ACLNN_ERR_PARAM_INVALID);
  HostTensor complex = MakeTensor(ACL_COMPLEX64, {});
  Planned p = Plan(g, x, complex, out);
  EXPECT_EQ(p.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(p.message.find("expected an integer or floating-point array"), std::string::npos)
      << p.message;
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
    Planned p = Plan(g, x16, t, out16);
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
  Planned p = Plan(gi, x, t, out);
  EXPECT_EQ(p.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(p.message.find("(it reads float32, int8, float64)"), std::string::npos) << p.message;
}

// An empty call plans nothing, and still refuses a threshold dtype the kernel does not read.
TEST(DeviceThreshold, AnEmptyCallChecksTheThresholdDtypeToo) {
  HostTensor g = MakeTensor(ACL_FLOAT, {0});
  HostTensor x = MakeTensor(ACL_FLOAT, {0});
  HostTensor out = MakeTensor(ACL_FLOAT, {0});
  HostTensor bad = MakeTensor(ACL_FLOAT16, {});
  Planned p = Plan(g, x, bad, out);
  EXPECT_EQ(p.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(p.message.find("threshold has dtype float16"), std::string::npos) << p.message;
  HostTensor good = MakeTensor(ACL_FLOAT, {});
  Planned q = Plan(g, x, good, out);
  EXPECT_EQ(q.status, ACLNN_SUCCESS) << q.message;
  EXPECT_EQ(q.ws, 0u);
}

TEST(DeviceThreshold, EmptyResultWithHugeDimsPlansNothing) {
  const std::vector<int64_t> shape{0, int64_t{1} << 62, 4};
  std::vector<int64_t> zeros(3, 0);
  std::vector<unsigned char> storage(16);
  auto make = [&](aclDataType dtype, const std::vector<int64_t>& s) {
    return TensorPtr(aclCreateTensor(s.data(), s.size(), dtype, zeros.data(), 0, storage.data()));
  };
  TensorPtr g = make(ACL_FLOAT, shape), x = make(ACL_FLOAT, shape), out = make(ACL_FLOAT, shape);
  TensorPtr t = make(ACL_FLOAT, {});
  uint64_t ws = 7;
  aclOpExecutor* e = nullptr;
  ASSERT_EQ(aclnnThresholdBackwardDeviceThresholdGetWorkspaceSize(g.get(), x.get(), t.get(),
                                                                  out.get(), &ws, &e, nullptr),
            ACLNN_SUCCESS)
      << aclGetRecentErrMsg();
  ExecutorPtr owned(e);
  EXPECT_EQ(ws, 0u);
  EXPECT_STREQ(aclnnThresholdBackwardKernelName(e), "");
  EXPECT_EQ(aclnnThresholdBackward(nullptr, 0, e, nullptr), ACLNN_SUCCESS);
}

TEST(DeviceThreshold, ShapesBroadcastToOutOrAreRefusedAndNamed) {
  std::mt19937_64 rng(2);
  HostTensor g = Filled(ACL_FLOAT, {4, 3}, rng), x = Filled(ACL_FLOAT, {4, 3}, rng);
  HostTensor t = MakeTensor(ACL_FLOAT, {2, 1});
  HostTensor out = MakeTensor(ACL_FLOAT, {4, 3});
  Planned p = Plan(g, x, t, out);
  EXPECT_EQ(p.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(p.message.find("threshold [2,1] do not broadcast to out [4,3]"), std::string::npos);
  EXPECT_EQ(p.executor, nullptr);
  // A one-element threshold of higher rank gives the broadcast shape.
  HostTensor g3 = Filled(ACL_FLOAT, {3}, rng), x3 = Filled(ACL_FLOAT, {3}, rng);
  HostTensor t11 = MakeTensor(ACL_FLOAT, {1, 1});
  FillThresholds(t11, rng);
  HostTensor out13 = MakeTensor(ACL_FLOAT, {1, 3});
  p = Plan(g3, x3, t11, out13);
  ASSERT_EQ(p.status, ACLNN_SUCCESS) << p.message;
  ASSERT_NO_FATAL_FAILURE(RunPlanned(p, false));
  ExpectReference(g3, x3, t11, out13);
  HostTensor flat = MakeTensor(ACL_FLOAT, {3});
  p = Plan(g3, x3, t11, flat);
  EXPECT_EQ(p.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(p.message.find("not the broadcast shape [1,3]"), std::string::npos) << p.message;
}

TEST(BroadcastRule, ShapesAlignAtTheLastDimAndOnesStretch) {
  std::vector<int64_t> a{4, 1, 3}, b{2, 1}, c{1}, out;
  EXPECT_EQ(BroadcastShapes({&a, &b, &c}, &out), BroadcastResult::kOk);
  EXPECT_EQ(out, (std::vector<int64_t>{4, 2, 3}));
  std::vector<int64_t> d{5};
  EXPECT_EQ(BroadcastShapes({&a, &d}, &out), BroadcastResult::kIncompatible);
  std::vector<int64_t> big{int64_t{1} << 40, 1}, big2{int64_t{1} << 40};
  EXPECT_EQ(BroadcastShapes({&big, &big2}, &out), BroadcastResult::kOverflow);
}

}  // namespace
