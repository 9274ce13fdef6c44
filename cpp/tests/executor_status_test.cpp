// Phase one's status codes in docs/behaviour.md §2 order (each step's failure with every later step
// failing too), SoC dtype lists, kernel choice, empty tensors, and phase two's run errors.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include "aclnn/executor.h"
#include "executor_test_util.h"

using namespace executor_test;

namespace {

ScalarPtr Double(double v) { return ScalarPtr(aclCreateScalar(&v, ACL_DOUBLE)); }
ScalarPtr Int64(int64_t v) { return ScalarPtr(aclCreateScalar(&v, ACL_INT64)); }

struct Result {
  aclnnStatus status;
  uint64_t ws;
  ExecutorPtr executor;
  std::string message;
};

Result Plan(const aclTensor* g, const aclTensor* x, const aclScalar* thr, aclTensor* out,
            SocVersion soc = SocVersion::kAscend910B) {
  PlatformInfo info;
  info.soc = soc;
  Result r{};
  r.ws = 12345;
  aclOpExecutor* e = nullptr;
  r.status = aclnnThresholdBackwardGetWorkspaceSize(g, x, thr, out, &r.ws, &e, &info);
  r.executor.reset(e);
  r.message = aclGetRecentErrMsg();
  return r;
}

bool Contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST(PhaseOneStatus, NullThresholdOutOrWorkspaceSizeIsNullptrFirst) {
  // Everything later is wrong too: grad null, bool dtypes, rank 9, no broadcast.
  HostTensor bad = MakeTensor(ACL_BOOL, std::vector<int64_t>(9, 2));
  HostTensor out = MakeTensor(ACL_FLOAT, {3});
  auto thr = Double(1.0);
  Result r = Plan(nullptr, bad.tensor.get(), nullptr, out.tensor.get());
  EXPECT_EQ(r.status, ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_TRUE(Contains(r.message, "threshold"));
  EXPECT_TRUE(r.executor == nullptr);
  r = Plan(nullptr, bad.tensor.get(), thr.get(), nullptr);
  EXPECT_EQ(r.status, ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_TRUE(Contains(r.message, "out"));
  aclOpExecutor* e = nullptr;
  EXPECT_EQ(aclnnThresholdBackwardGetWorkspaceSize(nullptr, bad.tensor.get(), thr.get(),
                                                   out.tensor.get(), nullptr, &e, nullptr),
            ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_TRUE(Contains(aclGetRecentErrMsg(), "workspace_size"));
  uint64_t ws = 0;
  EXPECT_EQ(aclnnThresholdBackwardGetWorkspaceSize(nullptr, bad.tensor.get(), thr.get(),
                                                   out.tensor.get(), &ws, nullptr, nullptr),
            ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_TRUE(Contains(aclGetRecentErrMsg(), "executor"));
}

TEST(PhaseOneStatus, NullGradOutputOrXIsNullptrSecond) {
  HostTensor bad = MakeTensor(ACL_BOOL, std::vector<int64_t>(9, 2));
  HostTensor out = MakeTensor(ACL_COMPLEX64, {3});
  auto thr = Double(1.0);
  Result r = Plan(nullptr, bad.tensor.get(), thr.get(), out.tensor.get());
  EXPECT_EQ(r.status, ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_TRUE(Contains(r.message, "grad_output"));
  r = Plan(bad.tensor.get(), nullptr, thr.get(), out.tensor.get());
  EXPECT_EQ(r.status, ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_TRUE(Contains(r.message, "x is null"));
}

TEST(PhaseOneStatus, UnsupportedOrMismatchedDtypesAreInvalid) {
  auto thr = Double(1.0);
  // Unsupported dtype, with rank 9, no broadcast and a wrong out shape as well.
  const aclDataType unsupported = UnsupportedDtype();
  HostTensor g9 = MakeTensor(unsupported, std::vector<int64_t>(9, 2));
  HostTensor x9 = MakeTensor(unsupported, std::vector<int64_t>(9, 3));
  HostTensor out = MakeTensor(unsupported, {5});
  Result r = Plan(g9.tensor.get(), x9.tensor.get(), thr.get(), out.tensor.get());
  EXPECT_EQ(r.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_TRUE(Contains(r.message, DtypeName(unsupported)));
  std::string listed = "supported: ";  // the default SoC's, in the table's order
  for (aclDataType d : KernelDtypes()) {
    if (!SocRuns(SocVersion::kAscend910B, d, false)) continue;
    listed += std::string(listed.size() > 11 ? ", " : "") + DtypeName(d);
  }
  EXPECT_TRUE(Contains(r.message, (listed + ")").c_str())) << r.message;
  EXPECT_TRUE(Contains(r.message, "float32, int32, float16, int8, uint8"));
  // grad dtype != x dtype (both supported).
  HostTensor gf = MakeTensor(ACL_FLOAT, std::vector<int64_t>(9, 2));
  HostTensor xh = MakeTensor(ACL_FLOAT16, std::vector<int64_t>(9, 3));
  r = Plan(gf.tensor.get(), xh.tensor.get(), thr.get(), out.tensor.get());
  EXPECT_EQ(r.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_TRUE(Contains(r.message, "differs"));
  // out dtype != x dtype.
  HostTensor xf = MakeTensor(ACL_FLOAT, std::vector<int64_t>(9, 3));
  r = Plan(gf.tensor.get(), xf.tensor.get(), thr.get(), out.tensor.get());
  EXPECT_EQ(r.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_TRUE(Contains(r.message, (std::string("out dtype ") + DtypeName(unsupported)).c_str()));
  // A complex threshold.
  HostTensor g = MakeTensor(ACL_FLOAT, {4});
  float c[2] = {1, 0};
  ScalarPtr complex_thr(aclCreateScalar(c, ACL_COMPLEX64));
  r = Plan(g.tensor.get(), g.tensor.get(), complex_thr.get(), g.tensor.get());
  EXPECT_EQ(r.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_TRUE(Contains(r.message, "threshold"));
  // An undefined dtype.
  HostTensor u = MakeTensor(ACL_DT_UNDEFINED, {4});
  r = Plan(u.tensor.get(), u.tensor.get(), thr.get(), u.tensor.get());
  EXPECT_EQ(r.status, ACLNN_ERR_PARAM_INVALID);
}

TEST(PhaseOneStatus, RankAboveEightIsInvalid) {
  auto thr = Double(1.0);
  HostTensor g9 = MakeTensor(ACL_FLOAT, std::vector<int64_t>(9, 2));
  HostTensor x9 = MakeTensor(ACL_FLOAT, std::vector<int64_t>(9, 3));
  HostTensor x1 = MakeTensor(ACL_FLOAT, {3});
  HostTensor out = MakeTensor(ACL_FLOAT, {5});
  Result r = Plan(g9.tensor.get(), x9.tensor.get(), thr.get(), out.tensor.get());
  EXPECT_EQ(r.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_TRUE(Contains(r.message, "rank 9"));
  r = Plan(x1.tensor.get(), x9.tensor.get(), thr.get(), out.tensor.get());
  EXPECT_EQ(r.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_TRUE(Contains(r.message, "x has rank 9"));
  // Rank 8 is fine.
  HostTensor g8 = MakeTensor(ACL_FLOAT, std::vector<int64_t>(8, 2));
  r = Plan(g8.tensor.get(), g8.tensor.get(), thr.get(), g8.tensor.get());
  EXPECT_EQ(r.status, ACLNN_SUCCESS);
}

TEST(PhaseOneStatus, ShapesThatDoNotBroadcastAreInvalid) {
  auto thr = Double(1.0);
  HostTensor g = MakeTensor(ACL_FLOAT, {2, 3});
  HostTensor x = MakeTensor(ACL_FLOAT, {0, 4});  // empty, and no broadcast with g
  HostTensor out = MakeTensor(ACL_FLOAT, {7});
  Result r = Plan(g.tensor.get(), x.tensor.get(), thr.get(), out.tensor.get());
  EXPECT_EQ(r.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_TRUE(Contains(r.message, "do not broadcast"));
}

TEST(PhaseOneStatus, OutShapeOtherThanTheBroadcastShapeIsInvalid) {
  auto thr = Double(1.0);
  HostTensor g = MakeTensor(ACL_FLOAT, {0, 1});
  HostTensor x = MakeTensor(ACL_FLOAT, {3});
  HostTensor out = MakeTensor(ACL_FLOAT, {3});  // broadcast shape is {0, 3}; x is empty too
  Result r = Plan(g.tensor.get(), x.tensor.get(), thr.get(), out.tensor.get());
  EXPECT_EQ(r.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_TRUE(Contains(r.message, "out shape [3]"));
  HostTensor out2 = MakeTensor(ACL_FLOAT, {3, 0});
  r = Plan(g.tensor.get(), x.tensor.get(), thr.get(), out2.tensor.get());
  EXPECT_EQ(r.status, ACLNN_ERR_PARAM_INVALID);
}

TEST(PhaseOneStatus, EmptyTensorsPlanNothingAndRunAsNoOp) {
  auto thr = Double(1.0);
  HostTensor g = MakeTensor(ACL_FLOAT, {0, 1});
  HostTensor x = MakeTensor(ACL_FLOAT, {3});
  HostTensor out = MakeTensor(ACL_FLOAT, {0, 3});
  Result r = Plan(g.tensor.get(), x.tensor.get(), thr.get(), out.tensor.get());
  EXPECT_EQ(r.status, ACLNN_SUCCESS);
  EXPECT_EQ(r.ws, 0u);
  EXPECT_TRUE(r.executor != nullptr);
  EXPECT_EQ(std::string(aclnnThresholdBackwardKernelName(r.executor.get())), std::string(""));
  EXPECT_EQ(aclnnThresholdBackward(nullptr, 0, r.executor.get(), nullptr), ACLNN_SUCCESS);
  EXPECT_EQ(aclnnThresholdBackward(nullptr, 0, r.executor.get(), nullptr), ACLNN_ERR_PARAM_INVALID);
  // Empty tensors need no data pointer.
  TensorPtr nodata(
      aclCreateTensor(std::vector<int64_t>{0}.data(), 1, ACL_FLOAT, nullptr, 0, nullptr));
  r = Plan(nodata.get(), nodata.get(), thr.get(), nodata.get());
  EXPECT_EQ(r.status, ACLNN_SUCCESS);
}

TEST(PhaseOneStatus, ThresholdExactlyZeroPicksReluGrad) {
  HostTensor g = MakeTensor(ACL_FLOAT, {4});
  struct Case {
    ScalarPtr thr;
    const char* kernel;
  };
  float neg_zero_f = -0.0f;
  uint8_t zero_u8 = 0;
  std::vector<Case> cases;
  cases.push_back({Double(0.0), "ReluGrad"});
  cases.push_back({Double(-0.0), "ReluGrad"});
  cases.push_back({Int64(0), "ReluGrad"});
  cases.push_back({ScalarPtr(aclCreateScalar(&neg_zero_f, ACL_FLOAT)), "ReluGrad"});
  cases.push_back({ScalarPtr(aclCreateScalar(&zero_u8, ACL_UINT8)), "ReluGrad"});
  cases.push_back({Double(1e-9), "ThresholdGradV2D"});  // no FLT_EPSILON snapping
  cases.push_back({Double(-1e-30), "ThresholdGradV2D"});
  cases.push_back({Double(NAN), "ThresholdGradV2D"});
  cases.push_back({Int64(1), "ThresholdGradV2D"});
  for (auto& c : cases) {
    Result r = Plan(g.tensor.get(), g.tensor.get(), c.thr.get(), g.tensor.get());
    EXPECT_EQ(r.status, ACLNN_SUCCESS);
    EXPECT_EQ(std::string(aclnnThresholdBackwardKernelName(r.executor.get())),
              std::string(c.kernel));
  }
}

TEST(PhaseOneStatus, EachSocAcceptsItsDtypeList) {
  // The table's lists, spot-checked against docs/behaviour.md §2.
  EXPECT_TRUE(SocRuns(SocVersion::kAscend910B, ACL_BF16, false));
  EXPECT_FALSE(SocRuns(SocVersion::kAscend910B, ACL_INT64, true));
  EXPECT_TRUE(SocRuns(SocVersion::kAscend950, ACL_INT64, true));
  EXPECT_FALSE(SocRuns(SocVersion::kAscend950, ACL_INT64, false));
  EXPECT_TRUE(SocRuns(SocVersion::kHost, ACL_DOUBLE, false));
  EXPECT_FALSE(SocRuns(SocVersion::kAscend950, ACL_DOUBLE, true));
  EXPECT_FALSE(SocRuns(SocVersion::kAscend910, ACL_FLOAT, false));  // refused: below
  // Phase one plans exactly the table's lists.
  for (SocVersion soc : Socs()) {
    for (aclDataType d : TableDtypes()) {
      for (double t : {0.0, 0.5}) {
        HostTensor a = MakeTensor(d, {3});
        auto thr = Double(t);
        Result r = Plan(a.tensor.get(), a.tensor.get(), thr.get(), a.tensor.get(), soc);
        const bool ok = SocRuns(soc, d, t == 0.0);
        EXPECT_EQ(r.status, ok ? ACLNN_SUCCESS : ACLNN_ERR_PARAM_INVALID)
            << DtypeName(d) << " on " << static_cast<int>(soc);
        if (!ok) EXPECT_TRUE(Contains(r.message, DtypeName(d)));
      }
    }
  }
}

TEST(PhaseOneStatus, PhaseTwoRefusesBadWorkspaceNullAndSecondRun) {
  EXPECT_EQ(aclnnThresholdBackward(nullptr, 0, nullptr, nullptr), ACLNN_ERR_PARAM_NULLPTR);
  auto thr = Double(0.5);
  // A strided out needs workspace.
  HostTensor g = MakeTensor(ACL_FLOAT, {4, 4});
  HostTensor out = MakeTensor(ACL_FLOAT, {4, 4}, {1, 4});
  Result r = Plan(g.tensor.get(), g.tensor.get(), thr.get(), out.tensor.get());
  EXPECT_EQ(r.status, ACLNN_SUCCESS);
  EXPECT_TRUE(r.ws >= 64u);
  std::vector<unsigned char> ws(r.ws);
  EXPECT_EQ(aclnnThresholdBackward(nullptr, r.ws, r.executor.get(), nullptr),
            ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclnnThresholdBackward(ws.data(), r.ws - 1, r.executor.get(), nullptr),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_TRUE(Contains(aclGetRecentErrMsg(), "smaller"));
  // Rejected runs do not use up the executor.
  EXPECT_EQ(aclnnThresholdBackward(ws.data(), r.ws, r.executor.get(), nullptr), ACLNN_SUCCESS);
  EXPECT_EQ(aclnnThresholdBackward(ws.data(), r.ws, r.executor.get(), nullptr),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_TRUE(Contains(aclGetRecentErrMsg(), "already run"));
  EXPECT_EQ(aclnnThresholdBackwardRunStatus(r.executor.get()), ACLNN_SUCCESS);
  EXPECT_EQ(aclnnThresholdBackwardRunStatus(nullptr), ACLNN_ERR_PARAM_NULLPTR);
}

// The Ascend910's AscendC API (dav_c100) cannot run the kernels (no DataCopyPad, CompareScalar
// or tensor-scalar Select): every dtype is PARAM_INVALID, with the reason, before rank checks.
TEST(PhaseOneStatus, Ascend910IsRefusedWithItsReason) {
  auto thr = Double(0.5);
  for (aclDataType d : {ACL_FLOAT, ACL_FLOAT16, ACL_INT32, ACL_INT8, ACL_UINT8}) {
    HostTensor a = MakeTensor(d, {40});
    Result r =
        Plan(a.tensor.get(), a.tensor.get(), thr.get(), a.tensor.get(), SocVersion::kAscend910);
    EXPECT_EQ(r.status, ACLNN_ERR_PARAM_INVALID);
    EXPECT_TRUE(r.executor == nullptr);
    EXPECT_TRUE(Contains(r.message, "Ascend910 is not supported"));
    EXPECT_TRUE(Contains(r.message, "DataCopyPad"));
    EXPECT_TRUE(Contains(r.message, DtypeName(d)));
  }
  // An out-of-range SocVersion is refused the same way, never run under unknown rules.
  HostTensor b = MakeTensor(ACL_FLOAT, {40});
  Result u =
      Plan(b.tensor.get(), b.tensor.get(), thr.get(), b.tensor.get(), static_cast<SocVersion>(7));
  EXPECT_EQ(u.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_TRUE(Contains(u.message, "unknown soc"));
  // Its twin on the 910B runs.
  HostTensor a = MakeTensor(ACL_FLOAT, {40});
  EXPECT_EQ(Plan(a.tensor.get(), a.tensor.get(), thr.get(), a.tensor.get(), SocVersion::kAscend910B)
                .status,
            ACLNN_SUCCESS);
}

// A platform claiming more UB than the SoC has (kernel_utils_constants.h TOTAL_UB_SIZE) is
// refused before tiling; the host's UB is whatever the caller tiles for.
TEST(PhaseOneStatus, UbSizeBeyondTheSocIsInvalid) {
  HostTensor g = MakeTensor(ACL_FLOAT, {4});
  auto thr = Double(0.5);
  struct Case {
    SocVersion soc;
    uint64_t ub;
    aclnnStatus status;
  };
  std::vector<Case> cases = {{SocVersion::kAscend910B, 196608, ACLNN_SUCCESS},
                             {SocVersion::kAscend950, 248 * 1024, ACLNN_SUCCESS},
                             {SocVersion::kHost, 1 << 20, ACLNN_SUCCESS}};
  for (SocVersion soc : RunnableSocs()) {  // every SoC's own UB, and one block more
    const uint64_t ub = ascend_kernels::SocRowOf(static_cast<ascend_kernels::Soc>(soc)).ub_bytes;
    if (ub == 0) continue;
    cases.push_back({soc, ub, ACLNN_SUCCESS});
    cases.push_back({soc, ub + 32, ACLNN_ERR_PARAM_INVALID});
  }
  for (const auto& c : cases) {
    PlatformInfo info;
    info.soc = c.soc;
    info.ub_size = c.ub;
    uint64_t ws = 0;
    aclOpExecutor* e = nullptr;
    EXPECT_EQ(aclnnThresholdBackwardGetWorkspaceSize(g.tensor.get(), g.tensor.get(), thr.get(),
                                                     g.tensor.get(), &ws, &e, &info),
              c.status);
    ExecutorPtr owned(e);
    if (c.status != ACLNN_SUCCESS) EXPECT_TRUE(Contains(aclGetRecentErrMsg(), "unified buffer"));
  }
}

// A platform that names only its SoC is tiled with that SoC's row: its UB, and its cores for an
// output large enough to fill them.
TEST(PhaseOneStatus, ASocAloneIsTiledWithItsRowsUbAndCores) {
  HostTensor g = MakeTensor(ACL_FLOAT, {1 << 20});
  auto thr = Double(0.5);
  for (SocVersion soc : RunnableSocs()) {
    const ascend_kernels::SocRow& row =
        ascend_kernels::SocRowOf(static_cast<ascend_kernels::Soc>(soc));
    if (row.ub_bytes == 0) continue;  // the host's platform is this machine's
    PlatformInfo info;
    info.soc = soc;
    uint64_t ws = 0;
    aclOpExecutor* e = nullptr;
    ASSERT_EQ(aclnnThresholdBackwardGetWorkspaceSize(g.tensor.get(), g.tensor.get(), thr.get(),
                                                     g.tensor.get(), &ws, &e, &info),
              ACLNN_SUCCESS)
        << row.name << ": " << aclGetRecentErrMsg();
    ExecutorPtr owned(e);
    const ExecutorPlan* p = GetExecutorPlan(e);
    EXPECT_EQ(p->ub_size, row.ub_bytes) << row.name;
    EXPECT_EQ(p->threshold_grad_tiling.tiling.block_dim, row.default_cores) << row.name;
  }
}

// The caller's platform parameters are checked in phase one, so phase two never runs on a
// unified buffer the kernels cannot use.
TEST(PhaseOneStatus, PlatformParamsAreValidated) {
  HostTensor g = MakeTensor(ACL_FLOAT, {4});
  HostTensor empty = MakeTensor(ACL_FLOAT, {0});
  auto thr = Double(0.5);
  auto plan = [&](const PlatformInfo& info, HostTensor& t) {
    uint64_t ws = 0;
    aclOpExecutor* e = nullptr;
    const aclnnStatus status = aclnnThresholdBackwardGetWorkspaceSize(
        t.tensor.get(), t.tensor.get(), thr.get(), t.tensor.get(), &ws, &e, &info);
    aclDestroyAclOpExecutor(e);
    return status;
  };
  for (uint64_t ub : {0ull, 512ull, 2000ull, 16384ull - 32, 196608ull + 16, 1ull << 40, ~0ull}) {
    PlatformInfo info;
    info.ub_size = ub;
    EXPECT_EQ(plan(info, g), ACLNN_ERR_PARAM_INVALID);
    EXPECT_TRUE(Contains(aclGetRecentErrMsg(), "ub_size"));
    EXPECT_EQ(plan(info, empty), ACLNN_ERR_PARAM_INVALID);  // also when nothing would run
  }
  for (uint32_t cores : {0u, 4097u, 0xFFFFFFFFu}) {
    PlatformInfo info;
    info.core_num = cores;
    EXPECT_EQ(plan(info, g), ACLNN_ERR_PARAM_INVALID);
    EXPECT_TRUE(Contains(aclGetRecentErrMsg(), "core_num"));
  }
  // Accepted ones run (16416 = 32 * 513: the host's UB allocation must cope with it).
  for (uint64_t ub : {16384ull, 16416ull, 196608ull, 1ull << 20}) {
    PlatformInfo info;
    info.ub_size = ub;
    info.core_num = ub == 16416 ? 4096 : 1;
    if (ub > 196608) info.soc = SocVersion::kHost;  // beyond the 910B's unified buffer
    HostTensor x = MakeTensor(ACL_FLOAT, {5000}, {}, 0, 0);
    HostTensor out = MakeTensor(ACL_FLOAT, {5000});
    uint64_t ws = 0;
    aclOpExecutor* e = nullptr;
    EXPECT_EQ(aclnnThresholdBackwardGetWorkspaceSize(x.tensor.get(), x.tensor.get(), thr.get(),
                                                     out.tensor.get(), &ws, &e, &info),
              ACLNN_SUCCESS);
    std::vector<unsigned char> buf(ws);
    EXPECT_EQ(aclnnThresholdBackward(buf.data(), ws, e, nullptr), ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(e);
  }
}

// Three zero-stride int8 views of 512 * ((2^55 + 1) / 3) elements need three workspace copies
// whose byte count wraps around 2^64: phase one refuses them rather than size a wrapped workspace.
TEST(PhaseOneStatus, WorkspaceOverflowIsRefused) {
  const int64_t n = 512 * (((int64_t{1} << 55) + 1) / 3);
  HostTensor g = MakeTensor(ACL_INT8, {n}, {0});
  HostTensor x = MakeTensor(ACL_INT8, {n}, {0});
  HostTensor out = MakeTensor(ACL_INT8, {n}, {0});
  auto thr = Double(0.5);
  Result r = Plan(g.tensor.get(), x.tensor.get(), thr.get(), out.tensor.get());
  EXPECT_EQ(r.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_TRUE(r.executor == nullptr);
  EXPECT_TRUE(Contains(r.message, "overflow"));
  // The same count of float32: n * 4 bytes alone overflows.
  HostTensor gf = MakeTensor(ACL_FLOAT, {n}, {0});
  HostTensor of = MakeTensor(ACL_FLOAT, {n}, {0});
  r = Plan(gf.tensor.get(), gf.tensor.get(), thr.get(), of.tensor.get());
  EXPECT_EQ(r.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_TRUE(Contains(r.message, "bytes"));
  // Three copies of 2^60 int8 fit in 63 bits: planned, with the size they really need.
  const int64_t m = int64_t{1} << 60;
  HostTensor gm = MakeTensor(ACL_INT8, {m}, {0});
  HostTensor xm = MakeTensor(ACL_INT8, {m}, {0});
  HostTensor om = MakeTensor(ACL_INT8, {m}, {0});
  r = Plan(gm.tensor.get(), xm.tensor.get(), thr.get(), om.tensor.get());
  EXPECT_EQ(r.status, ACLNN_SUCCESS);
  EXPECT_EQ(r.ws, 3 * static_cast<uint64_t>(m) + kWorkspaceAlignment - 1);  // + alignment slack
}

// Strides and offsets whose byte extent cannot be represented are refused before anything is
// planned (nothing is read through them).
TEST(PhaseOneStatus, UnrepresentableViewsAreRefused) {
  auto thr = Double(0.5);
  std::vector<unsigned char> storage(64);
  auto view = [&](std::vector<int64_t> shape, std::vector<int64_t> strides, int64_t offset) {
    return TensorPtr(aclCreateTensor(shape.data(), shape.size(), ACL_FLOAT, strides.data(), offset,
                                     storage.data()));
  };
  HostTensor x = MakeTensor(ACL_FLOAT, {2, 3});
  HostTensor out = MakeTensor(ACL_FLOAT, {2, 3});
  const int64_t big = INT64_MAX / 2;
  for (auto& g :
       {view({2, 3}, {big, 1}, 0), view({2, 3}, {INT64_MIN, 1}, 0), view({2, 3}, {3, 1}, big),
        view({2, 3}, {big / 4, -(big / 4)}, 0), view({2, 3}, {3, 1}, -big)}) {
    Result r = Plan(g.get(), x.tensor.get(), thr.get(), out.tensor.get());
    EXPECT_EQ(r.status, ACLNN_ERR_PARAM_INVALID);
    EXPECT_TRUE(Contains(r.message, "grad_output"));
  }
}

// A broadcast whose element count overflows int64 says so.
TEST(PhaseOneStatus, BroadcastOverflowIsNamed) {
  HostTensor g = MakeTensor(ACL_FLOAT, {int64_t{1} << 32, 1}, {0, 0});
  HostTensor x = MakeTensor(ACL_FLOAT, {1, int64_t{1} << 32}, {0, 0});
  HostTensor out = MakeTensor(ACL_FLOAT, {1});
  auto thr = Double(0.5);
  Result r = Plan(g.tensor.get(), x.tensor.get(), thr.get(), out.tensor.get());
  EXPECT_EQ(r.status, ACLNN_ERR_PARAM_INVALID);
  EXPECT_TRUE(Contains(r.message, "overflows int64"));
  EXPECT_TRUE(!Contains(r.message, "do not broadcast"));
}

TEST(PhaseOneStatus, WorkspaceSizeCoversEveryPlannedCopy) {
  auto thr = Double(0.5);
  HostTensor g = MakeTensor(ACL_FLOAT, {100});
  // Contiguous everything: zero-copy, no workspace.
  Result r = Plan(g.tensor.get(), g.tensor.get(), thr.get(), g.tensor.get());
  EXPECT_EQ(r.ws, 0u);
  const ExecutorPlan* p = GetExecutorPlan(r.executor.get());
  EXPECT_TRUE(!p->grad_copy && !p->x_copy && !p->out_copy);
  // A broadcast grad and a strided out: the kernel reads grad where it is; out's buffer of 400
  // bytes, aligned to 512, plus the slack that lets phase two align it inside any workspace.
  HostTensor g1 = MakeTensor(ACL_FLOAT, {1});
  HostTensor out = MakeTensor(ACL_FLOAT, {100}, {2});
  r = Plan(g1.tensor.get(), g.tensor.get(), thr.get(), out.tensor.get());
  EXPECT_EQ(r.ws, 512u + kWorkspaceAlignment - 1);
  p = GetExecutorPlan(r.executor.get());
  EXPECT_TRUE(!p->grad_copy && !p->x_copy && p->out_copy);
  // A strided x of 10 rows, broadcast over 100 columns: copied at its own size (40 bytes), not
  // out's.
  HostTensor x10 = MakeTensor(ACL_FLOAT, {10, 1}, {3, 1});
  HostTensor g100 = MakeTensor(ACL_FLOAT, {10, 100});
  r = Plan(g100.tensor.get(), x10.tensor.get(), thr.get(), g100.tensor.get());
  EXPECT_EQ(r.ws, 512u + kWorkspaceAlignment - 1);
  p = GetExecutorPlan(r.executor.get());
  EXPECT_TRUE(!p->grad_copy && p->x_copy && !p->out_copy);
}

// Broadcast inputs are read through the kernel's copy-in: the workspace does not grow with out.
TEST(PhaseOneStatus, BroadcastInputsNeedNoWorkspace) {
  auto thr = Double(0.5);
  for (int64_t rows : {1, 10, 1000}) {
    HostTensor row = MakeTensor(ACL_FLOAT, {1, 64});
    HostTensor column = MakeTensor(ACL_FLOAT, {rows, 1});
    HostTensor full = MakeTensor(ACL_FLOAT, {rows, 64});
    for (auto [g, x] :
         {std::pair{&row, &full}, std::pair{&full, &column}, std::pair{&row, &column}}) {
      Result r = Plan(g->tensor.get(), x->tensor.get(), thr.get(), full.tensor.get());
      ASSERT_EQ(r.status, ACLNN_SUCCESS) << r.message;
      EXPECT_EQ(r.ws, 0u) << rows;
      const ExecutorPlan* p = GetExecutorPlan(r.executor.get());
      EXPECT_TRUE(!p->grad_copy && !p->x_copy && !p->out_copy);
    }
  }
}
