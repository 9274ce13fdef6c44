// Phase one with a threshold tensor (aclnnThresholdBackwardBatchedGetWorkspaceSize, the public
// header) and the broadcast rule it shares with the scalar phase one: shapes, empty results, one
// plan for many thresholds, and the bits of every slice against an independent reference.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "aclnn/broadcast.h"
#include "aclnn/executor.h"
#include "executor_test_util.h"
#include "planned_run.h"

using namespace executor_test;

namespace {

Planned Plan(const HostTensor& g, const HostTensor& x, const HostTensor& t, HostTensor& out,
             uint32_t core_num = 4) {
  PlatformInfo info;
  info.soc = SocVersion::kHost;
  info.ub_size = kHostUbSize;
  info.core_num = core_num;
  Planned p{};
  aclOpExecutor* e = nullptr;
  p.status = aclnnThresholdBackwardBatchedGetWorkspaceSize(
      g.tensor.get(), x.tensor.get(), t.tensor.get(), out.tensor.get(), &p.ws, &e, &info);
  p.executor.reset(e);
  p.message = aclGetRecentErrMsg();
  return p;
}

// Runs the plan (synchronously, or on a ThreadPoolHostStream) and compares every element of out
// with grad_output where x > its threshold, else 0.
void RunAndCompare(const HostTensor& g, const HostTensor& x, const HostTensor& t, HostTensor& out,
                   uint32_t core_num, bool on_stream) {
  Planned p = Plan(g, x, t, out, core_num);
  ASSERT_EQ(p.status, ACLNN_SUCCESS) << p.message;
  ASSERT_NO_FATAL_FAILURE(RunPlanned(p, on_stream));
  const std::vector<int64_t>& shape = out.shape;
  const size_t rank = shape.size();
  auto index_of = [&](const HostTensor& op, int64_t linear) {  // broadcast operand index
    int64_t idx = 0, stride = 1;
    for (size_t d = rank; d-- > 0;) {
      const int64_t i = linear % shape[d];
      linear /= shape[d];
      const size_t od = d + op.shape.size() - rank;
      if (d + op.shape.size() < rank) continue;
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
    // Float x: the threshold rounded once to float32 (every threshold here is a float32 value).
    std::vector<unsigned char> expected(elem, 0);
    if (xv > tv) std::memcpy(expected.data(), g.At(index_of(g, i)), elem);
    if (std::memcmp(out.At(i), expected.data(), elem) != 0 && reported++ < 3) {
      ADD_FAILURE() << "element " << i << " x=" << static_cast<double>(xv)
                    << " t=" << static_cast<double>(tv);
    }
  }
}

HostTensor Filled(aclDataType dtype, std::vector<int64_t> shape, std::mt19937_64& rng,
                  int zero_every = 0) {
  HostTensor t = MakeTensor(dtype, shape);
  std::normal_distribution<double> normal(0, 1.5);
  for (int64_t i = 0; i < Numel(shape); ++i) {
    const double v = zero_every > 0 && i % zero_every == 0 ? 0.0 : normal(rng);
    StoreDouble(dtype, v, t.At(i));
  }
  return t;
}

}  // namespace

TEST(BroadcastRule, ShapesAlignAtTheLastDimAndOnesStretch) {
  std::vector<int64_t> a{4, 1, 3}, b{2, 1}, c{1}, out;
  EXPECT_EQ(BroadcastShapes({&a, &b, &c}, &out), BroadcastResult::kOk);
  EXPECT_EQ(out, (std::vector<int64_t>{4, 2, 3}));
  std::vector<int64_t> d{5};
  EXPECT_EQ(BroadcastShapes({&a, &d}, &out), BroadcastResult::kIncompatible);
  std::vector<int64_t> big{int64_t{1} << 40, 1}, big2{int64_t{1} << 40};
  EXPECT_EQ(BroadcastShapes({&big, &big2}, &out), BroadcastResult::kOverflow);
}

TEST(BroadcastRule, RowMajorStridesReportOverflow) {
  std::vector<int64_t> strides;
  EXPECT_TRUE(CheckedRowMajorStrides({2, 3, 4}, &strides));
  EXPECT_EQ(strides, (std::vector<int64_t>{12, 4, 1}));
  EXPECT_FALSE(CheckedRowMajorStrides({0, int64_t{1} << 62, 4}, &strides));
}

TEST(BatchedThreshold, OneElementThresholdOfHigherRankGivesTheBroadcastShape) {
  std::mt19937_64 rng(1);
  HostTensor g = Filled(ACL_FLOAT, {3}, rng), x = Filled(ACL_FLOAT, {3}, rng);
  HostTensor t = Filled(ACL_FLOAT, {1, 1}, rng);
  HostTensor out = MakeTensor(ACL_FLOAT, {1, 3});
  RunAndCompare(g, x, t, out, 1, false);
  HostTensor flat = MakeTensor(ACL_FLOAT, {3});
  Planned p = Plan(g, x, t, flat);
  EXPECT_EQ(p.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(p.message.find("not the broadcast shape [1,3]"), std::string::npos) << p.message;
}

TEST(BatchedThreshold, ThresholdThatDoesNotBroadcastIsInvalidAndNamed) {
  std::mt19937_64 rng(2);
  HostTensor g = Filled(ACL_FLOAT, {4, 3}, rng), x = Filled(ACL_FLOAT, {4, 3}, rng);
  HostTensor t = Filled(ACL_FLOAT, {2, 1}, rng);
  HostTensor out = MakeTensor(ACL_FLOAT, {4, 3});
  Planned p = Plan(g, x, t, out);
  EXPECT_EQ(p.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(p.message.find("threshold [2,1] do not broadcast to out [4,3]"), std::string::npos);
  EXPECT_EQ(p.executor, nullptr);
}

TEST(BatchedThreshold, EmptyResultWithHugeDimsPlansNothing) {
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
  ASSERT_EQ(aclnnThresholdBackwardBatchedGetWorkspaceSize(g.get(), x.get(), t.get(), out.get(), &ws,
                                                          &e, nullptr),
            ACLNN_SUCCESS)
      << aclGetRecentErrMsg();
  ExecutorPtr owned(e);
  EXPECT_EQ(ws, 0u);
  EXPECT_EQ(std::string(aclnnThresholdBackwardKernelName(e)), "");
  EXPECT_EQ(aclnnThresholdBackward(nullptr, 0, e, nullptr), ACLNN_SUCCESS);
}

TEST(BatchedThreshold, PerElementFloat16ThresholdsMatchTheReference) {
  std::mt19937_64 rng(3);
  for (bool on_stream : {false, true}) {
    HostTensor g = Filled(ACL_FLOAT16, {5, 700}, rng), x = Filled(ACL_FLOAT16, {5, 700}, rng);
    HostTensor t = Filled(ACL_FLOAT16, {5, 700}, rng, /*zero_every=*/3);  // both kernels
    HostTensor out = MakeTensor(ACL_FLOAT16, {5, 700});
    RunAndCompare(g, x, t, out, 4, on_stream);
  }
}

TEST(BatchedThreshold, RowThresholdsOverLargeSlicesMatchTheReference) {
  std::mt19937_64 rng(4);
  for (bool on_stream : {false, true}) {
    HostTensor g = Filled(ACL_FLOAT, {1, 40000}, rng), x = Filled(ACL_FLOAT, {3, 40000}, rng);
    HostTensor t = Filled(ACL_FLOAT, {3, 1}, rng, /*zero_every=*/2);
    HostTensor out = MakeTensor(ACL_FLOAT, {3, 40000});
    RunAndCompare(g, x, t, out, 8, on_stream);
  }
}

TEST(BatchedThreshold, LargeStridedSlicesEachGetTheirOwnWorkspace) {
  std::mt19937_64 rng(7);
  for (bool on_stream : {false, true}) {
    HostTensor g = Filled(ACL_FLOAT, {1, 40000}, rng);
    HostTensor x = MakeTensor(ACL_FLOAT, {3, 40000}, {80000, 2});  // every other element: copied
    std::normal_distribution<double> normal(0, 1.5);
    for (int64_t i = 0; i < 3 * 40000; ++i) StoreDouble(ACL_FLOAT, normal(rng), x.At(i));
    HostTensor t = Filled(ACL_FLOAT, {3, 1}, rng, /*zero_every=*/2);
    HostTensor out = MakeTensor(ACL_FLOAT, {3, 40000});
    Planned p = Plan(g, x, t, out, 8);
    ASSERT_EQ(p.status, ACLNN_SUCCESS) << p.message;
    EXPECT_GE(p.ws, 3u * 40000 * 4);  // a contiguous copy of x per slice
    RunAndCompare(g, x, t, out, 8, on_stream);
  }
}

TEST(BatchedThreshold, ColumnThresholdsOverStridedSlicesUseTheWorkspace) {
  std::mt19937_64 rng(5);
  // The threshold varies along the inner dim: each slice is a strided column, copied into out.
  HostTensor g = Filled(ACL_FLOAT, {6, 1}, rng), x = Filled(ACL_FLOAT, {6, 900}, rng);
  HostTensor t = Filled(ACL_FLOAT, {900}, rng, /*zero_every=*/4);
  HostTensor out = MakeTensor(ACL_FLOAT, {6, 900});
  Planned p = Plan(g, x, t, out);
  ASSERT_EQ(p.status, ACLNN_SUCCESS) << p.message;
  EXPECT_GT(p.ws, 0u);
  RunAndCompare(g, x, t, out, 4, false);
  RunAndCompare(g, x, t, out, 4, true);
}

TEST(BatchedThreshold, RankAboveEightIsLoopedOver) {
  std::mt19937_64 rng(6);
  // Alternating broadcasts keep ten dims after merging; the leading ones are looped over.
  const std::vector<int64_t> gs{2, 1, 2, 1, 2, 1, 2, 1, 2, 1}, xs{1, 2, 1, 2, 1, 2, 1, 2, 1, 2};
  HostTensor g = Filled(ACL_INT32, gs, rng), x = Filled(ACL_INT32, xs, rng);
  HostTensor t = Filled(ACL_FLOAT, {}, rng);
  HostTensor out = MakeTensor(ACL_INT32, std::vector<int64_t>(10, 2));
  RunAndCompare(g, x, t, out, 4, false);
}
