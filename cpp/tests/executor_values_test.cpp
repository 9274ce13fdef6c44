// Phase two end to end: results equal an independent scalar reference bit for bit for every
// dtype, both kernels, broadcast and strided inputs, strided/overlapping outs (memory outside
// out's view untouched), scalars, odd sizes, HostStream runs, and many threads at once.
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include "aclnn/executor.h"
#include "aclnn/host_stream.h"
#include "executor_test_util.h"
#include "thread_pool_host_stream.h"

using namespace executor_test;

namespace {

// The host runs every kernel dtype.
const std::vector<aclDataType> kHostDtypes = KernelDtypes();

// A threshold both as the executor gets it and as the reference compares it.
struct Threshold {
  ScalarPtr scalar;
  bool is_int;
  int64_t int_value;
  long double exact;
};

Threshold DoubleThreshold(double v) {
  return {ScalarPtr(aclCreateScalar(&v, ACL_DOUBLE)), false, 0, static_cast<long double>(v)};
}
Threshold IntThreshold(int64_t v) {
  return {ScalarPtr(aclCreateScalar(&v, ACL_INT64)), true, v, static_cast<long double>(v)};
}

// Broadcast `t` (row-major linear index over `shape`) back to its own linear index.
int64_t SourceIndex(const HostTensor& t, const std::vector<int64_t>& shape, int64_t linear) {
  int64_t src = 0, mul = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    const int64_t i = linear % shape[d];
    linear /= shape[d];
    const size_t lead = shape.size() - t.shape.size();
    if (d < lead) continue;
    const int64_t td = t.shape[d - lead];
    src += (td == 1 ? 0 : i) * mul;
    mul *= td;
  }
  return src;
}

struct CaseSpec {
  aclDataType dtype;
  std::vector<int64_t> grad_shape, x_shape;
  std::vector<int64_t> grad_strides, x_strides, out_strides;  // empty: contiguous
  int64_t out_offset = 0;
  SocVersion soc = SocVersion::kHost;
  uint32_t core_num = 48;
};

// Runs one case (stream null: synchronous) and checks every element and every byte outside out's
// view. Returns false if anything failed.
bool RunAndCheck(const CaseSpec& c, Threshold& thr, std::mt19937_64& rng,
                 HostStream* stream = nullptr, const char* expect_kernel = nullptr) {
  const int before = ::testing::Test::HasFailure() ? 1 : 0;
  int failures = 0;
  HostTensor g = MakeTensor(c.dtype, c.grad_shape, c.grad_strides);
  HostTensor x = MakeTensor(c.dtype, c.x_shape, c.x_strides);
  FillRandom(g, rng);
  FillRandom(x, rng);
  // Broadcast shape.
  const size_t rank = std::max(c.grad_shape.size(), c.x_shape.size());
  std::vector<int64_t> shape(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const size_t ga = rank - c.grad_shape.size(), xa = rank - c.x_shape.size();
    const int64_t gd = i < ga ? 1 : c.grad_shape[i - ga];
    const int64_t xd = i < xa ? 1 : c.x_shape[i - xa];
    shape[i] = gd == 1 ? xd : gd;
  }
  HostTensor out = MakeTensor(c.dtype, shape, c.out_strides, c.out_offset, 0x5A);
  const std::vector<unsigned char> out_before = out.storage;

  PlatformInfo info = PlatformOf(c.soc);  // tiled at the SoC's own UB
  info.core_num = c.core_num;
  uint64_t ws_size = 0;
  aclOpExecutor* raw = nullptr;
  aclnnStatus st = aclnnThresholdBackwardGetWorkspaceSize(
      g.tensor.get(), x.tensor.get(), thr.scalar.get(), out.tensor.get(), &ws_size, &raw, &info);
  EXPECT_EQ(st, ACLNN_SUCCESS);
  if (st != ACLNN_SUCCESS) {
    std::fprintf(stderr, "  %s\n", aclGetRecentErrMsg());
    return false;
  }
  ExecutorPtr exec(raw);
  if (expect_kernel != nullptr) {
    EXPECT_EQ(std::string(aclnnThresholdBackwardKernelName(raw)), std::string(expect_kernel));
  }
  std::vector<unsigned char> ws(ws_size);
  if (stream == nullptr) {
    EXPECT_EQ(aclnnThresholdBackward(ws.data(), ws_size, raw, nullptr), ACLNN_SUCCESS);
  } else {
    std::promise<void> done;
    EXPECT_EQ(
        aclnnThresholdBackward(ws.data(), ws_size, raw, stream, [&done] { done.set_value(); }),
        ACLNN_SUCCESS);
    exec.reset();  // the run in flight keeps the plan alive
    done.get_future().wait();
  }

  const int64_t n = Numel(shape);
  const long double t = ReferenceThreshold(c.dtype, thr.exact, thr.is_int, thr.int_value);
  std::vector<bool> in_view(out.storage.size(), false);
  const size_t elem = out.Elem();
  int reported = 0;
  for (int64_t i = 0; i < n; ++i) {
    const unsigned char* xp = x.At(SourceIndex(x, shape, i));
    const unsigned char* gp = g.At(SourceIndex(g, shape, i));
    const long double xv = LoadExact(c.dtype, xp);
    std::vector<unsigned char> expected(elem, 0);  // 0 of every dtype is all-zero bits
    if (xv > t) std::memcpy(expected.data(), gp, elem);
    const unsigned char* op = out.At(i);
    for (size_t b = 0; b < elem; ++b)
      in_view[static_cast<size_t>(op - out.storage.data()) + b] = true;
    if (std::memcmp(op, expected.data(), elem) != 0 && reported++ < 3) {
      ++failures;
      ADD_FAILURE() << (std::string("value mismatch, dtype ") + DtypeName(c.dtype) + " element " +
                        std::to_string(i) + " x=" + std::to_string(static_cast<double>(xv)));
    }
  }
  for (size_t b = 0; b < out.storage.size(); ++b) {
    if (!in_view[b] && out.storage[b] != out_before[b]) {
      ++failures;
      ADD_FAILURE() << "byte outside out's view written";
      break;
    }
  }
  return failures == 0 && (before != 0 || !::testing::Test::HasFailure());
}

}  // namespace

TEST(ExecutorValues, CannDocumentedExampleGivesTheContractsResult) {
  const int64_t dims[] = {2, 2};
  float x[] = {0.2f, 1.2f, 2.2f, 3.2f}, g[] = {4.5f, 4.4f, 4.3f, 4.2f}, out[4] = {9, 9, 9, 9};
  TensorPtr xt(aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0, x));
  TensorPtr gt(aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0, g));
  TensorPtr ot(aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0, out));
  for (double t : {1.0, 0.0}) {
    ScalarPtr thr(aclCreateScalar(&t, ACL_DOUBLE));
    uint64_t ws = 1;
    aclOpExecutor* e = nullptr;
    EXPECT_EQ(aclnnThresholdBackwardGetWorkspaceSize(gt.get(), xt.get(), thr.get(), ot.get(), &ws,
                                                     &e, nullptr),
              ACLNN_SUCCESS);
    EXPECT_EQ(ws, 0u);
    EXPECT_EQ(aclnnThresholdBackward(nullptr, 0, e, nullptr), ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(e);
    EXPECT_EQ(out[0], t == 1.0 ? 0.0f : 4.5f);
    EXPECT_EQ(out[1], 4.4f);
    EXPECT_EQ(out[2], 4.3f);
    EXPECT_EQ(out[3], 4.2f);
  }
}

TEST(ExecutorValues, EveryDtypeMatchesTheOracleOnBothKernels) {
  std::mt19937_64 rng(1);
  for (aclDataType d : kHostDtypes) {
    for (int64_t n : {1, 3, 63, 257, 1000, 7001, 100003}) {
      {
        Threshold t = DoubleThreshold(0.0);
        RunAndCheck({d, {n}, {n}}, t, rng, nullptr, "ReluGrad");
      }
      for (double tv : {1.0, 2.5, -1.5, 1e-9, -0.5}) {
        Threshold t = DoubleThreshold(tv);
        RunAndCheck({d, {n}, {n}}, t, rng, nullptr, "ThresholdGradV2D");
      }
    }
  }
}

TEST(ExecutorValues, IntegerXComparesRealThresholdsExactly) {
  std::mt19937_64 rng(2);
  const double doubles[] = {NAN,
                            INFINITY,
                            -INFINITY,
                            127.5,
                            -128.5,
                            255.0,
                            256.0,
                            2147483647.5,
                            -2147483648.5,
                            9.3e18,
                            9.223372036854775807e18,
                            -9.3e18,
                            16777217.0};
  const int64_t ints[] = {-1, 1, 127, -128, 255, 2147483647, INT64_MIN, INT64_MAX, 16777217};
  for (aclDataType d : KernelDtypes(/*integer=*/true)) {
    for (double v : doubles) {
      Threshold t = DoubleThreshold(v);
      RunAndCheck({d, {300}, {300}}, t, rng);
    }
    for (int64_t v : ints) {
      Threshold t = IntThreshold(v);
      RunAndCheck({d, {300}, {300}}, t, rng);
    }
  }
  // The float paths round the threshold once to float32 (2^24 + 1 -> 2^24).
  for (aclDataType d : KernelDtypes(/*integer=*/false)) {
    for (int64_t v : {int64_t{16777217}, int64_t{-3}, INT64_MAX}) {
      Threshold t = IntThreshold(v);
      RunAndCheck({d, {300}, {300}}, t, rng);
    }
    Threshold t = DoubleThreshold(NAN);
    RunAndCheck({d, {300}, {300}}, t, rng);
  }
}

TEST(ExecutorValues, ZeroDimAndBroadcastOperandsMatchTheOracle) {
  std::mt19937_64 rng(3);
  for (aclDataType d : kHostDtypes) {
    for (double tv : {0.0, 0.5}) {
      Threshold t = DoubleThreshold(tv);
      RunAndCheck({d, {}, {}}, t, rng);                // 0-d
      RunAndCheck({d, {}, {5, 3}}, t, rng);            // scalar grad
      RunAndCheck({d, {5, 3}, {}}, t, rng);            // scalar x
      RunAndCheck({d, {4, 1, 3}, {1, 7, 1}}, t, rng);  // both broadcast
      RunAndCheck({d, {3}, {2, 5, 3}}, t, rng);        // rank differs
      RunAndCheck({d, {1, 1}, {1}}, t, rng);
    }
  }
}

// The kernel's broadcast copy-in: rows shorter than a 32-byte block, whole blocks, longer than a
// tile; rows in groups and split across cores; broadcast along inner, outer and alternating dims;
// both inputs broadcast; as many merged dims as a tensor's rank allows. Every SoC that runs the
// kernels, several core counts.
TEST(ExecutorValues, EveryBroadcastPatternMatchesTheOracle) {
  std::mt19937_64 rng(11);
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> patterns = {
      {{1, 3}, {700, 3}},
      {{700, 1}, {700, 3}},
      {{1, 3}, {700, 1}},
      {{1, 8}, {300, 8}},
      {{300, 1}, {300, 8}},
      {{1, 20000}, {3, 20000}},
      {{3, 1}, {3, 20000}},
      {{5, 1, 7}, {5, 40, 7}},
      {{1, 40, 1}, {5, 40, 7}},
      {{2, 1, 3, 1}, {2, 5, 3, 9}},
      {{1}, {4099}},
      {{4099}, {1}},
      {{1, 33, 1, 5}, {7, 33, 11, 5}},
      {{3, 1, 2, 1, 2, 1, 2, 1}, {1, 2, 1, 3, 1, 2, 1, 5}},  // 8 merged dims, the most
  };
  for (SocVersion soc : RunnableSocs()) {
    for (uint32_t cores : {1u, 7u}) {
      for (aclDataType d : KernelDtypes()) {
        if (!SocRuns(soc, d, /*zero=*/false)) continue;
        Threshold t = DoubleThreshold(0.25);
        for (const auto& [gs, xs] : patterns) {
          CaseSpec c{d, gs, xs};
          c.soc = soc;
          c.core_num = cores;
          ASSERT_TRUE(RunAndCheck(c, t, rng)) << DtypeName(d) << " soc " << static_cast<int>(soc);
          CaseSpec swapped{d, xs, gs};
          swapped.soc = soc;
          swapped.core_num = cores;
          ASSERT_TRUE(RunAndCheck(swapped, t, rng));
        }
      }
    }
  }
  Threshold zero = IntThreshold(0);  // a dtype a SoC runs at threshold 0 only: ReluGrad
  for (SocVersion soc : RunnableSocs()) {
    for (aclDataType d : KernelDtypes()) {
      if (!SocRuns(soc, d, /*zero=*/true) || SocRuns(soc, d, /*zero=*/false)) continue;
      CaseSpec c{d, {1, 5}, {300, 5}};
      c.soc = soc;
      RunAndCheck(c, zero, rng, nullptr, "ReluGrad");
      CaseSpec column{d, {300, 5}, {300, 1}};
      column.soc = soc;
      RunAndCheck(column, zero, rng, nullptr, "ReluGrad");
    }
  }
}

TEST(ExecutorValues, StridedInputsAndOutMatchTheOracle) {
  std::mt19937_64 rng(4);
  for (aclDataType d : kHostDtypes) {
    for (double tv : {0.0, 1.0}) {
      Threshold t = DoubleThreshold(tv);
      // Transposed x, every-other-element grad, out with a gap between rows.
      RunAndCheck({d, {6, 5}, {6, 5}, {10, 2}, {1, 6}, {8, 1}}, t, rng);
      // Out transposed, with a storage offset; grad broadcast along rows with a stride.
      CaseSpec c{d, {1, 9}, {7, 9}, {0, 3}, {}, {1, 7}};
      c.out_offset = 5;
      RunAndCheck(c, t, rng);
      // 1-element dims with odd strides still count as contiguous.
      RunAndCheck({d, {3, 1, 4}, {3, 1, 4}, {4, 99, 1}, {4, -5, 1}, {4, 7, 1}}, t, rng);
    }
  }
}

TEST(ExecutorValues, NegativeStridesMatchTheOracle) {
  std::mt19937_64 rng(5);
  for (aclDataType d : {ACL_FLOAT, ACL_INT8, ACL_DOUBLE}) {
    // Views start at the last element of their storage.
    HostTensor g = MakeTensor(d, {10}, {-1}, 9);
    HostTensor x = MakeTensor(d, {10}, {-1}, 9);
    FillRandom(g, rng);
    FillRandom(x, rng);
    HostTensor out = MakeTensor(d, {10}, {-1}, 9, 0);
    const double tv = 0.5;
    ScalarPtr thr(aclCreateScalar(&tv, ACL_DOUBLE));
    uint64_t ws = 0;
    aclOpExecutor* e = nullptr;
    const PlatformInfo host = HostPlatformInfo();
    EXPECT_EQ(aclnnThresholdBackwardGetWorkspaceSize(g.tensor.get(), x.tensor.get(), thr.get(),
                                                     out.tensor.get(), &ws, &e, &host),
              ACLNN_SUCCESS);
    std::vector<unsigned char> buf(ws);
    EXPECT_EQ(aclnnThresholdBackward(buf.data(), ws, e, nullptr), ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(e);
    for (int64_t i = 0; i < 10; ++i) {
      const bool pass = LoadExact(d, x.At(i)) > 0.5L;
      std::vector<unsigned char> zero(out.Elem(), 0);
      EXPECT_TRUE(std::memcmp(out.At(i), pass ? g.At(i) : zero.data(), out.Elem()) == 0);
    }
  }
}

TEST(ExecutorValues, OutViewWithOverlappingElementsIsWrittenSerially) {
  // Out with stride 0: every element lands on the same address; the last one written wins,
  // and nothing else is touched.
  std::mt19937_64 rng(6);
  HostTensor g = MakeTensor(ACL_FLOAT, {1000});
  HostTensor x = MakeTensor(ACL_FLOAT, {1000});
  FillRandom(g, rng);
  FillRandom(x, rng);
  HostTensor out = MakeTensor(ACL_FLOAT, {1000}, {0}, 3, 0x5A);
  const std::vector<unsigned char> before = out.storage;
  double tv = 0.5;
  ScalarPtr thr(aclCreateScalar(&tv, ACL_DOUBLE));
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  EXPECT_EQ(aclnnThresholdBackwardGetWorkspaceSize(g.tensor.get(), x.tensor.get(), thr.get(),
                                                   out.tensor.get(), &ws, &e, nullptr),
            ACLNN_SUCCESS);
  EXPECT_EQ(GetExecutorPlan(e)->out_copy->block_dim, 1u);
  std::vector<unsigned char> buf(ws);
  EXPECT_EQ(aclnnThresholdBackward(buf.data(), ws, e, nullptr), ACLNN_SUCCESS);
  aclDestroyAclOpExecutor(e);
  const bool pass = LoadExact(ACL_FLOAT, x.At(999)) > 0.5L;
  float expected = 0, got;
  if (pass) std::memcpy(&expected, g.At(999), 4);
  std::memcpy(&got, out.At(0), 4);
  EXPECT_TRUE(std::memcmp(&got, &expected, 4) == 0);
  for (size_t b = 0; b < before.size(); ++b) {
    if (b >= 12 && b < 16) continue;
    EXPECT_EQ(int(out.storage[b]), int(before[b]));
  }
}

// Data not aligned to the element (legal in NumPy) is copied byte-wise through the workspace,
// exactly.
TEST(ExecutorValues, UnalignedDataIsCopied) {
  std::mt19937_64 rng(11);
  for (aclDataType d : KernelDtypes()) {
    constexpr int64_t n = 300;
    const size_t elem = DtypeSize(d);
    if (elem == 1) continue;  // every address is aligned
    HostTensor g_src = MakeTensor(d, {n});
    HostTensor x_src = MakeTensor(d, {n});
    FillRandom(g_src, rng);
    FillRandom(x_src, rng);
    // The same values one byte past an aligned address.
    std::vector<unsigned char> gbuf(n * elem + 16), xbuf(n * elem + 16), obuf(n * elem + 16, 0x5A);
    std::memcpy(gbuf.data() + 1, g_src.storage.data(), n * elem);
    std::memcpy(xbuf.data() + 1, x_src.storage.data(), n * elem);
    const std::vector<unsigned char> obefore = obuf;
    const int64_t shape[] = {n};
    for (int which = 0; which < 4; ++which) {  // unaligned: g, x, out, all three
      void* gp = which == 0 || which == 3 ? gbuf.data() + 1 : g_src.storage.data();
      void* xp = which == 1 || which == 3 ? xbuf.data() + 1 : x_src.storage.data();
      HostTensor aligned_out = MakeTensor(d, {n}, {}, 0, 0x5A);
      unsigned char* op = which >= 2 ? obuf.data() + 1 : aligned_out.storage.data();
      TensorPtr g(aclCreateTensor(shape, 1, d, nullptr, 0, gp));
      TensorPtr x(aclCreateTensor(shape, 1, d, nullptr, 0, xp));
      TensorPtr out(aclCreateTensor(shape, 1, d, nullptr, 0, op));
      const double tv = 0.5;
      ScalarPtr thr(aclCreateScalar(&tv, ACL_DOUBLE));
      uint64_t ws = 0;
      aclOpExecutor* e = nullptr;
      const PlatformInfo host = HostPlatformInfo();
      EXPECT_EQ(aclnnThresholdBackwardGetWorkspaceSize(g.get(), x.get(), thr.get(), out.get(), &ws,
                                                       &e, &host),
                ACLNN_SUCCESS);
      const ExecutorPlan* p = GetExecutorPlan(e);
      EXPECT_EQ(p->grad_copy.has_value(), which == 0 || which == 3);
      EXPECT_EQ(p->x_copy.has_value(), which == 1 || which == 3);
      EXPECT_EQ(p->out_copy.has_value(), which >= 2);
      std::vector<unsigned char> buf(ws);
      EXPECT_EQ(aclnnThresholdBackward(buf.data(), ws, e, nullptr), ACLNN_SUCCESS);
      aclDestroyAclOpExecutor(e);
      for (int64_t i = 0; i < n; ++i) {
        const bool pass = LoadExact(d, x_src.At(i)) > 0.5L;
        std::vector<unsigned char> expected(elem, 0);
        if (pass) std::memcpy(expected.data(), g_src.At(i), elem);
        EXPECT_TRUE(std::memcmp(op + i * elem, expected.data(), elem) == 0);
      }
      if (which >= 2) {  // nothing outside out's bytes changed
        EXPECT_EQ(int(obuf[0]), int(obefore[0]));
        for (size_t b = 1 + n * elem; b < obuf.size(); ++b)
          EXPECT_EQ(int(obuf[b]), int(obefore[b]));
      }
    }
  }
}

// out partly overlapping an input (out = buf[:-1], grad = buf[1:]) must not mix old and new
// values at tile boundaries: the input is copied first (copy semantics). The
// exact same view (in place) still runs without a copy.
TEST(ExecutorValues, PartialOverlapGivesCopySemantics) {
  std::mt19937_64 rng(12);
  for (aclDataType d : {ACL_FLOAT, ACL_INT8, ACL_FLOAT16}) {
    const int64_t n = 70000;  // several tiles on several cores
    const size_t elem = DtypeSize(d);
    HostTensor buf = MakeTensor(d, {n + 1});
    HostTensor x = MakeTensor(d, {n});
    FillRandom(buf, rng);
    FillRandom(x, rng);
    const std::vector<unsigned char> original = buf.storage;
    const int64_t shape[] = {n};
    for (int shift : {1, -1}) {
      buf.storage = original;
      unsigned char* base = buf.storage.data();
      TensorPtr g(aclCreateTensor(shape, 1, d, nullptr, shift > 0 ? 1 : 0, base));
      TensorPtr out(aclCreateTensor(shape, 1, d, nullptr, shift > 0 ? 0 : 1, base));
      const double tv = 0.5;
      ScalarPtr thr(aclCreateScalar(&tv, ACL_DOUBLE));
      uint64_t ws = 0;
      aclOpExecutor* e = nullptr;
      EXPECT_EQ(aclnnThresholdBackwardGetWorkspaceSize(g.get(), x.tensor.get(), thr.get(),
                                                       out.get(), &ws, &e, nullptr),
                ACLNN_SUCCESS);
      EXPECT_TRUE(GetExecutorPlan(e)->grad_copy.has_value());
      EXPECT_TRUE(!GetExecutorPlan(e)->x_copy.has_value());
      std::vector<unsigned char> wsbuf(ws);
      EXPECT_EQ(aclnnThresholdBackward(wsbuf.data(), ws, e, nullptr), ACLNN_SUCCESS);
      aclDestroyAclOpExecutor(e);
      const int64_t g_at = shift > 0 ? 1 : 0, out_at = shift > 0 ? 0 : 1;
      int bad = 0;
      for (int64_t i = 0; i < n; ++i) {
        const bool pass = LoadExact(d, x.At(i)) > 0.5L;
        std::vector<unsigned char> expected(elem, 0);
        if (pass) std::memcpy(expected.data(), original.data() + (g_at + i) * elem, elem);
        bad += std::memcmp(base + (out_at + i) * elem, expected.data(), elem) != 0;
      }
      EXPECT_EQ(bad, 0);
    }
    // In place: the same view, no copy, the right answer.
    buf.storage = original;
    TensorPtr same(aclCreateTensor(shape, 1, d, nullptr, 0, buf.storage.data()));
    const double tv = 0.5;
    ScalarPtr thr(aclCreateScalar(&tv, ACL_DOUBLE));
    uint64_t ws = 0;
    aclOpExecutor* e = nullptr;
    EXPECT_EQ(aclnnThresholdBackwardGetWorkspaceSize(same.get(), x.tensor.get(), thr.get(),
                                                     same.get(), &ws, &e, nullptr),
              ACLNN_SUCCESS);
    EXPECT_EQ(ws, 0u);
    EXPECT_EQ(aclnnThresholdBackward(nullptr, 0, e, nullptr), ACLNN_SUCCESS);
    aclDestroyAclOpExecutor(e);
    int bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      const bool pass = LoadExact(d, x.At(i)) > 0.5L;
      std::vector<unsigned char> expected(elem, 0);
      if (pass) std::memcpy(expected.data(), original.data() + i * elem, elem);
      bad += std::memcmp(buf.storage.data() + i * elem, expected.data(), elem) != 0;
    }
    EXPECT_EQ(bad, 0);
  }
}

TEST(ExecutorValues, EverySocAndCoreCountGivesTheSameBits) {
  std::mt19937_64 rng(7);
  for (SocVersion soc : RunnableSocs()) {
    for (uint32_t cores : {1u, 3u, 48u}) {
      Threshold t = DoubleThreshold(0.25);
      CaseSpec c{ACL_FLOAT16, {50001}, {50001}};
      c.soc = soc;
      c.core_num = cores;
      RunAndCheck(c, t, rng);
    }
  }
  Threshold zero = IntThreshold(0);  // the dtypes a SoC runs at threshold 0 only
  for (SocVersion soc : RunnableSocs()) {
    for (aclDataType d : KernelDtypes()) {
      if (!SocRuns(soc, d, /*zero=*/true) || SocRuns(soc, d, /*zero=*/false)) continue;
      CaseSpec c{d, {4097}, {4097}};
      c.soc = soc;
      RunAndCheck(c, zero, rng, nullptr, "ReluGrad");
    }
  }
}

TEST(ExecutorValues, ThreadPoolHostStreamRunsAsynchronouslyAndCallsOnDone) {
  std::mt19937_64 rng(8);
  ThreadPoolHostStream stream(3);
  EXPECT_EQ(stream.NumWorkers(), 3u);
  for (aclDataType d : kHostDtypes) {
    Threshold t = DoubleThreshold(0.75);
    RunAndCheck({d, {4, 1}, {4, 70001}, {}, {}, {}}, t, rng, &stream);
    RunAndCheck({d, {33, 65}, {33, 65}, {}, {1, 33}, {1, 33}}, t, rng, &stream);
    Threshold z = DoubleThreshold(0.0);
    RunAndCheck({d, {1000}, {1000}}, z, rng, &stream);
  }
  // An empty executor on a stream still calls on_done.
  HostTensor e = MakeTensor(ACL_FLOAT, {0});
  double tv = 1;
  ScalarPtr thr(aclCreateScalar(&tv, ACL_DOUBLE));
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  EXPECT_EQ(aclnnThresholdBackwardGetWorkspaceSize(e.tensor.get(), e.tensor.get(), thr.get(),
                                                   e.tensor.get(), &ws, &ex, nullptr),
            ACLNN_SUCCESS);
  bool called = false;
  EXPECT_EQ(aclnnThresholdBackward(nullptr, 0, ex, &stream, [&called] { called = true; }),
            ACLNN_SUCCESS);
  EXPECT_TRUE(called);
  aclDestroyAclOpExecutor(ex);
}

TEST(ExecutorValues, ManyThreadsPlanAndRunAtOnce) {
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  ThreadPoolHostStream shared_stream(2);
  for (int i = 0; i < 12; ++i) {
    threads.emplace_back([i, &ok, &shared_stream] {
      std::mt19937_64 rng(100 + i);
      bool good = true;
      for (int k = 0; k < 6; ++k) {
        const aclDataType d = kHostDtypes[(i + k) % 8];
        Threshold t = (k % 3 == 0) ? DoubleThreshold(0.0) : DoubleThreshold(0.5 * (i % 4) - 1);
        CaseSpec c{d, {17, 1}, {17, 301}, {}, {}, {1, 17}};
        good &= RunAndCheck(c, t, rng, (k % 2) ? &shared_stream : nullptr);
      }
      if (good) ok.fetch_add(1);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 12);
}
