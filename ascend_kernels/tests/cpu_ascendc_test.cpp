// The CPU implementation of the AscendC primitives: conversions, the primitives' results, and
// that each hardware precondition aborts with a clear message (each death test has a passing
// twin, so it can fail).
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "flush_to_zero.h"
#include "kernel_fixture.h"
#include "kernel_operator.h"

namespace {

using namespace AscendC;

constexpr uint64_t kUb = 8192;

TEST(CpuAscendcConversions, HalfToFloatToHalfRoundTripsEveryBitPattern) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const uint16_t h = static_cast<uint16_t>(b);
    const float f = cpu_ascendc::HalfBitsToFloat(h);
    const uint16_t back = cpu_ascendc::FloatToHalfBits(f);
    if (std::isnan(f)) {
      EXPECT_TRUE((back & 0x7c00) == 0x7c00 && (back & 0x3ff) != 0 &&
                  (back & 0x8000) == (h & 0x8000));
    } else {
      EXPECT_EQ(back, h) << b;
    }
  }
}

// The compiler's IEEE binary16 type: g++ 12 has _Float16 in C++ on x86-64 but not on aarch64,
// where __fp16 (the same format) is the one both g++ and clang take.
#if defined(__aarch64__)
using CompilerHalf = __fp16;
#define CPU_ASCENDC_TEST_COMPILER_HALF 1
#elif defined(__FLT16_MAX__)
using CompilerHalf = _Float16;
#define CPU_ASCENDC_TEST_COMPILER_HALF 1
#endif

#if defined(CPU_ASCENDC_TEST_COMPILER_HALF)
// Against the compiler's own float -> binary16 conversion (round to nearest even).
TEST(CpuAscendcConversions, FloatToHalfMatchesTheCompilersFloat16Conversion) {
  std::mt19937 rng(3);
  int bad = 0;
  for (int i = 0; i < 2000000; ++i) {
    uint32_t u = rng();
    if (i % 2)
      u = (u & 0x8000ffffu) | ((0x30u + (u >> 16) % 0x20u) << 23);  // dense near half's range
    const float f = cpu_ascendc::BitsFloat(u);
    if (std::isnan(f)) continue;
    const CompilerHalf ref = static_cast<CompilerHalf>(f);
    uint16_t rb;
    std::memcpy(&rb, &ref, 2);
    if (rb != cpu_ascendc::FloatToHalfBits(f)) ++bad;
  }
  EXPECT_EQ(bad, 0);
}
#endif

TEST(CpuAscendcConversions, FloatToBfloat16RoundsToNearestEven) {
  EXPECT_TRUE(cpu_ascendc::FloatToBf16Bits(cpu_ascendc::BitsFloat(0x3f808000u)) ==
              0x3f80);  // tie -> even
  EXPECT_TRUE(cpu_ascendc::FloatToBf16Bits(cpu_ascendc::BitsFloat(0x3f818000u)) ==
              0x3f82);  // tie -> even (up)
  EXPECT_TRUE(cpu_ascendc::FloatToBf16Bits(cpu_ascendc::BitsFloat(0x3f808001u)) == 0x3f81);
  EXPECT_TRUE(cpu_ascendc::FloatToBf16Bits(cpu_ascendc::BitsFloat(0x7f7fffffu)) ==
              0x7f80);  // max float -> inf
  EXPECT_TRUE(cpu_ascendc::FloatToBf16Bits(cpu_ascendc::BitsFloat(0x7f800001u)) ==
              0x7fc0);  // NaN stays NaN
  EXPECT_TRUE(cpu_ascendc::Bf16BitsToFloat(0xc000) == -2.0f);
}

// A minimal kernel body over one queue, parameterised by what it does wrong.
enum class Misuse {
  kNone,
  kCopyNotWholeBlocks,
  kUbOverflow,
  kDeQueEmpty,
  kAllocBeyondNum,
  kGmOverrun,
  kMisalignedUb,
  kCompareCount,
  kOutsideGmTensor,
  kFreeQueued,
  kNoCore,
  kGetValuePastEnd
};

void MiniKernel(Misuse misuse) {
  if (misuse == Misuse::kNoCore) {
    (void)GetBlockIdx();
    return;
  }
  std::vector<float> storage(256);
  float* gm = storage.data();
  cpu_ascendc::CoreScope core(0, 1, kUb,
                              {{reinterpret_cast<const uint8_t*>(gm), 256 * sizeof(float)}});
  TPipe pipe;
  TQue<TPosition::VECIN, 2> que;
  TBuf<TPosition::VECCALC> mask;
  pipe.InitBuffer(que, 2, 1024);
  pipe.InitBuffer(mask, misuse == Misuse::kUbOverflow ? kUb : 64);
  GlobalTensor<float> g;
  g.SetGlobalBuffer(gm, misuse == Misuse::kOutsideGmTensor ? 257 : 256);
  (void)g.GetValue(misuse == Misuse::kGetValuePastEnd ? 256 : 255);
  LocalTensor<float> a = que.AllocTensor<float>();
  if (misuse == Misuse::kAllocBeyondNum) {
    (void)que.AllocTensor<float>();
    (void)que.AllocTensor<float>();
  }
  DataCopy(a, g, misuse == Misuse::kCopyNotWholeBlocks ? 7 : 64);
  if (misuse == Misuse::kGmOverrun) DataCopy(a, g[200], 64);
  if (misuse == Misuse::kMisalignedUb) DataCopy(a[1], g, 64);
  if (misuse == Misuse::kCompareCount) CompareScalar(mask.Get<uint8_t>(), a, 0.0f, CMPMODE::GT, 32);
  CompareScalar(mask.Get<uint8_t>(), a, 0.0f, CMPMODE::GT, 64);
  que.EnQue(a);
  if (misuse == Misuse::kFreeQueued) que.FreeTensor(a);
  LocalTensor<float> b = que.DeQue<float>();
  if (misuse == Misuse::kDeQueEmpty) (void)que.DeQue<float>();
  que.FreeTensor(b);
}

// Each misuse aborts with its message; the same kernel without it runs to the end.
TEST(CpuAscendcPreconditionDeathTest, EachMisuseAbortsNamingTheBrokenRule) {
  MiniKernel(Misuse::kNone);
  EXPECT_DEATH(MiniKernel(Misuse::kCopyNotWholeBlocks), "not a multiple of 32 bytes");
  EXPECT_DEATH(MiniKernel(Misuse::kUbOverflow), "UB overflow");
  EXPECT_DEATH(MiniKernel(Misuse::kDeQueEmpty), "queue is empty");
  EXPECT_DEATH(MiniKernel(Misuse::kAllocBeyondNum), "buffers are in use");
  EXPECT_DEATH(MiniKernel(Misuse::kGmOverrun), "overruns the buffer");
  EXPECT_DEATH(MiniKernel(Misuse::kMisalignedUb), "not 32-byte aligned");
  EXPECT_DEATH(MiniKernel(Misuse::kCompareCount), "not a multiple of 256 bytes");
  EXPECT_DEATH(MiniKernel(Misuse::kOutsideGmTensor), "not inside any GM tensor");
  EXPECT_DEATH(MiniKernel(Misuse::kFreeQueued), "still queued");
  EXPECT_DEATH(MiniKernel(Misuse::kNoCore), "not running a kernel block");
  EXPECT_DEATH(MiniKernel(Misuse::kGetValuePastEnd), "GetValue: offset 256 past the end");
}

// Through the real kernels: a UB too small for the tiling's tile, and a tiling whose tile counts
// do not cover the cores' elements, abort instead of corrupting memory.
TEST(CpuAscendcPreconditionDeathTest, KernelWithTooSmallUbOrUncoveredElementsAborts) {
  std::vector<float> g(1024, 1.0f), x(1024, 1.0f);  // a whole number of blocks: no clipping
  auto t = kt::SpecTiling(1024, 4, 7, kt::kUb910B, kt::kCores910B);
  kt::Run<float>(false, g, x, kt::FloatParams(0.f, 0.), t, kt::kUb910B, 1, true);
  EXPECT_DEATH(kt::Run<float>(false, g, x, kt::FloatParams(0.f, 0.), t, 8192, 1, true),
               "UB overflow");
  auto bad = t;
  bad.small_tail_data_num = bad.small_tail_data_num / 2;  // tiles no longer cover the core
  bad.big_tail_data_num = bad.big_tail_data_num / 2;
  EXPECT_DEATH(kt::Run<float>(false, g, x, kt::FloatParams(0.f, 0.), bad, kt::kUb910B, 1, true),
               "do not cover");
}

TEST(CpuAscendcVectorOps, CompareSelectDuplicateAndWrappingAddsGiveTheirResults) {
  cpu_ascendc::CoreScope core(0, 1, kUb);
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf, m;
  pipe.InitBuffer(buf, 3 * 256);
  pipe.InitBuffer(m, 32);
  LocalTensor<float> a = buf.Get<float>(), b = a[64], c = a[128];
  for (int i = 0; i < 64; ++i) a.SetValue(i, static_cast<float>(i % 5) - 2.0f);
  for (int i = 0; i < 64; ++i) b.SetValue(i, 100.0f + i);
  CompareScalar(m.Get<uint8_t>(), a, 0.0f, CMPMODE::GT, 64);
  Select(c, m.Get<uint8_t>(), b, -1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(c.GetValue(i), (i % 5) - 2 > 0 ? 100.0f + i : -1.0f) << i;
  LocalTensor<int32_t> n = buf.Get<int32_t>();
  Duplicate(n, INT32_MAX, 64);
  Adds(n, n, 1, 64);  // wraps like the hardware, no UB
  EXPECT_EQ(n.GetValue(3), INT32_MIN);
}

// DataCopy GM -> UB copies: UB keeps the values GM had at the copy, whatever GM holds later, and
// a UB -> GM copy (whole blocks or DataCopyPad's exact bytes) writes exactly its range.
TEST(CpuAscendcDataCopy, UbKeepsTheValuesGmHadAtTheCopyAndCopyOutWritesExactlyItsBytes) {
  alignas(64) float gm[256];
  alignas(64) float out[256 + 8];
  for (int i = 0; i < 256; ++i) gm[i] = static_cast<float>(i) - 100.0f;
  cpu_ascendc::CoreScope core(0, 1, kUb,
                              {{reinterpret_cast<const uint8_t*>(gm), sizeof gm},
                               {reinterpret_cast<const uint8_t*>(out), sizeof out}});
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf, m;
  pipe.InitBuffer(buf, 4 * 256 * sizeof(float));
  pipe.InitBuffer(m, 32);
  GlobalTensor<float> g, o;
  g.SetGlobalBuffer(gm, 256);
  o.SetGlobalBuffer(out, 256 + 8);
  LocalTensor<float> a = buf.Get<float>(), c = a[512];
  DataCopy(a, g, 256);
  CompareScalar(m.Get<uint8_t>(), a, 0.0f, CMPMODE::GT, 64);
  Select(c, m.Get<uint8_t>(), a, -1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64);
  DataCopy(g, c, 64);  // GM [0, 64) overwritten by the kernel
  for (int i = 0; i < 64; ++i) EXPECT_EQ(a.GetValue(i), static_cast<float>(i) - 100.0f) << i;
  for (int i = 0; i < 64; ++i) EXPECT_EQ(gm[i], i - 100.0f > 0.0f ? i - 100.0f : -1.0f) << i;
  for (float& v : out) v = 42.0f;
  DataCopyPad(o, a, DataCopyExtParams(1, 100 * sizeof(float), 0, 0, 0));
  for (int i = 0; i < 256 + 8; ++i) EXPECT_EQ(out[i], i < 100 ? a.GetValue(i) : 42.0f) << i;
  DataCopy(o[8], a, 64);  // a 32-byte (not 64-byte) aligned GM destination
  for (int i = 8; i < 72; ++i) EXPECT_EQ(out[i], a.GetValue(i - 8)) << i;
}

// A GM tensor with only its element's alignment (NumPy may hand out 8-byte aligned doubles) is
// copied like any other.
TEST(CpuAscendcDataCopy, GmSourceAlignedOnlyToItsElementIsCopied) {
  alignas(64) double gm[64 + 1];
  for (int i = 0; i < 65; ++i) gm[i] = static_cast<double>(i) - 20.5;
  const double* src = gm + 1;  // 8 bytes past a 64-byte boundary
  cpu_ascendc::CoreScope core(0, 1, kUb,
                              {{reinterpret_cast<const uint8_t*>(src), 64 * sizeof(double)}});
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf, m;
  pipe.InitBuffer(buf, 2 * 64 * sizeof(double));
  pipe.InitBuffer(m, 32);
  GlobalTensor<double> g;
  g.SetGlobalBuffer(const_cast<double*>(src), 64);
  LocalTensor<double> a = buf.Get<double>(), c = a[64];
  DataCopy(a, g, 64);
  CompareScalar(m.Get<uint8_t>(), a, 0.0, CMPMODE::GT, 64);
  Select(c, m.Get<uint8_t>(), a, -1.0, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(c.GetValue(i), src[i] > 0.0 ? src[i] : -1.0) << i;
}

// A scalar GM read returns the element at the tensor's position.
TEST(CpuAscendcGlobalTensor, GetValueReadsTheElementAtTheOffset) {
  alignas(64) int64_t gm[4] = {-5, 7, INT64_MIN, INT64_MAX};
  cpu_ascendc::CoreScope core(0, 1, kUb, {{reinterpret_cast<const uint8_t*>(gm), sizeof gm}});
  GlobalTensor<int64_t> g;
  g.SetGlobalBuffer(gm, 4);
  EXPECT_EQ(g.GetValue(0), -5);
  EXPECT_EQ(g.GetValue(3), INT64_MAX);
  EXPECT_EQ(g[1].GetValue(1), INT64_MIN);
  DataCacheCleanAndInvalid<int64_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(g[3]);
  EXPECT_EQ(g.GetValue(3), INT64_MAX);
}

TEST(CpuAscendcPreconditionDeathTest, ScalarGmAccessWithoutABufferAborts) {
  GlobalTensor<int32_t> none;
  EXPECT_DEATH(
      (DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(
          none)),
      "DataCacheCleanAndInvalid: GlobalTensor has no buffer");
  EXPECT_DEATH((void)none.GetValue(0), "GetValue: GlobalTensor has no buffer");
}

// A select's result is in dst when it returns: later writes to its mask or its source leave it.
TEST(CpuAscendcVectorOps, SelectResultIsFixedWhenSelectReturns) {
  cpu_ascendc::CoreScope core(0, 1, kUb);
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf, m;
  pipe.InitBuffer(buf, 2 * 256 * sizeof(float));
  pipe.InitBuffer(m, 32);
  LocalTensor<float> a = buf.Get<float>(), c = a[256];
  LocalTensor<uint8_t> mask = m.Get<uint8_t>();
  for (int i = 0; i < 256; ++i) a.SetValue(i, static_cast<float>((i * 37) % 101) - 50.0f);
  auto expect = [](int i) {
    return (i * 37) % 101 - 50.0f > 0.0f ? (i * 37) % 101 - 50.0f : -1.0f;
  };
  CompareScalar(mask, a, 0.0f, CMPMODE::GT, 256);
  Select(c, mask, a, -1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 256);
  CompareScalar(mask, a, 1e9f, CMPMODE::GT, 256);
  Duplicate(a, 9.0f, 256);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(c.GetValue(i), expect(i)) << i;
  Select(a, mask, a, 3.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 256);  // in place, nothing selected
  for (int i = 0; i < 256; ++i) EXPECT_EQ(a.GetValue(i), 3.0f) << i;
}

// Widening casts and the compares of their results, on NaN, subnormal and ordinary values.
TEST(CpuAscendcVectorOps, WideningCastsFeedCompareExactly) {
  constexpr int kN = 256;
  alignas(64) uint16_t xb[kN];  // bfloat16 bits
  for (int i = 0; i < kN; ++i) {
    xb[i] = static_cast<uint16_t>(cpu_ascendc::FloatBits(static_cast<float>(i % 17) - 8.25f) >> 16);
  }
  xb[7] = 0x7fc0;  // NaN
  xb[9] = 0x0001;  // a subnormal
  alignas(64) int8_t xs[kN];
  alignas(64) uint8_t xu[kN];
  for (int i = 0; i < kN; ++i) {
    xs[i] = static_cast<int8_t>(i * 37 + 5);
    xu[i] = static_cast<uint8_t>(i * 37 + 5);
  }
  cpu_ascendc::CoreScope core(0, 1, kUb);
  TPipe pipe;
  TBuf<TPosition::VECCALC> in, wide, h, c, m;
  pipe.InitBuffer(in, 2 * kN * sizeof(uint16_t));
  pipe.InitBuffer(wide, kN * sizeof(float));
  pipe.InitBuffer(h, kN * sizeof(half));
  pipe.InitBuffer(c, kN * sizeof(half));
  pipe.InitBuffer(m, 64);
  LocalTensor<bfloat16_t> xbu = in.Get<bfloat16_t>();
  LocalTensor<int8_t> su = in.Get<int8_t>()[2 * kN];
  LocalTensor<uint8_t> uu = in.Get<uint8_t>()[3 * kN];
  for (int i = 0; i < kN; ++i) {
    xbu.SetValue(i, bfloat16_t::FromBits(xb[i]));
    su.SetValue(i, xs[i]);
    uu.SetValue(i, xu[i]);
  }
  LocalTensor<float> w = wide.Get<float>();
  LocalTensor<half> xh = h.Get<half>(), minus_one = c.Get<half>();
  LocalTensor<uint8_t> mask = m.Get<uint8_t>();
  auto mask_bit = [&](int i) { return (mask.GetValue(i / 8) >> (i % 8)) & 1; };
  auto widened = [&](int i) { return cpu_ascendc::Bf16BitsToFloat(xb[i]); };

  Cast(w, xbu, RoundMode::CAST_NONE, kN);
  for (int i = 0; i < kN; ++i) {
    const float v = w.GetValue(i), e = widened(i);
    EXPECT_EQ(std::memcmp(&v, &e, sizeof v), 0) << i;
  }
  CompareScalar(mask, w, 0.5f, CMPMODE::GT, kN);
  for (int i = 0; i < kN; ++i) EXPECT_EQ(mask_bit(i), widened(i) > 0.5f ? 1 : 0) << i;
  CompareScalar(mask, w, -1.0f, CMPMODE::NE, kN);  // NaN != t holds
  for (int i = 0; i < kN; ++i) EXPECT_EQ(mask_bit(i), widened(i) != -1.0f ? 1 : 0) << i;
  CompareScalar(mask, w, 0.0f, CMPMODE::GT, kN);  // the subnormal is above 0
  EXPECT_EQ(mask_bit(9), 1);

  Duplicate(minus_one, static_cast<half>(-1.0f), kN);
  Cast(xh, su, RoundMode::CAST_NONE, kN);
  CompareScalar(mask, xh, static_cast<half>(3.0f), CMPMODE::GT, kN);
  for (int i = 0; i < kN; ++i) EXPECT_EQ(mask_bit(i), xs[i] > 3 ? 1 : 0) << i;
  Select(xh, mask, minus_one, static_cast<half>(0.0f), SELMODE::VSEL_TENSOR_SCALAR_MODE, kN);
  for (int i = 0; i < kN; ++i)
    EXPECT_EQ(static_cast<float>(xh.GetValue(i)), xs[i] > 3 ? -1.0f : 0.0f) << i;
  Cast(xh, uu, RoundMode::CAST_NONE, kN);
  CompareScalar(mask, xh, static_cast<half>(200.0f), CMPMODE::GE, kN);
  for (int i = 0; i < kN; ++i) EXPECT_EQ(mask_bit(i), xu[i] >= 200 ? 1 : 0) << i;
  for (int i = 0; i < kN; ++i)
    EXPECT_EQ(static_cast<float>(xh.GetValue(i)), static_cast<float>(xu[i])) << i;
}

// A block runs with subnormals as numbers even on a thread that flushes them (XLA's CPU threads
// set FTZ and DAZ on x86-64, FPCR.FZ on AArch64), and the thread gets its own mode back when the
// block ends.
TEST(CpuAscendcCoreScope, BlockComparesSubnormalsOnAFlushingThreadAndRestoresItsMode) {
  if (!flush_to_zero::kAvailable) GTEST_SKIP() << "no flush-to-zero control on this architecture";
  uint8_t bits = 0;
  bool flushes_outside = false;
  uint64_t after = 0, flushing = 0;
  {
    flush_to_zero::ScopedFlushing ftz;
    flushing = ftz.flushing_controls();
    flushes_outside = flush_to_zero::SubnormalComparesAsZero();
    {
      cpu_ascendc::CoreScope core(0, 1, kUb);
      TPipe pipe;
      TBuf<TPosition::VECCALC> buf, m;
      pipe.InitBuffer(buf, 64 * sizeof(float));
      pipe.InitBuffer(m, 32);
      LocalTensor<float> a = buf.Get<float>();
      Duplicate(a, 1e-40f, 64);
      CompareScalar(m.Get<uint8_t>(), a, 0.0f, CMPMODE::GT, 64);
      bits = m.Get<uint8_t>().GetValue(0);
    }
    after = flush_to_zero::Controls();
  }
  EXPECT_TRUE(flushes_outside);  // the thread really flushes
  EXPECT_EQ(bits, 0xff);
  EXPECT_EQ(after, flushing);
}

}  // namespace
