// The CPU implementation of the AscendC primitives: conversions, and that each hardware
// precondition aborts with a clear message (each death test has a passing twin, so it can fail).
#include <cmath>
#include <limits>
#include <random>

#include "kernel_fixture.h"
#include "kernel_operator.h"
#include "test_harness.h"

namespace {

using namespace AscendC;

constexpr uint64_t kUb = 8192;

TEST(HalfRoundTripIsExact) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const uint16_t h = static_cast<uint16_t>(b);
    const float f = cpu_ascendc::HalfBitsToFloat(h);
    const uint16_t back = cpu_ascendc::FloatToHalfBits(f);
    if (std::isnan(f)) {
      CHECK((back & 0x7c00) == 0x7c00 && (back & 0x3ff) != 0 && (back & 0x8000) == (h & 0x8000));
    } else {
      CHECK_MSG(back == h, std::to_string(b));
    }
  }
}

#if defined(__FLT16_MAX__)
// Against the compiler's own float -> _Float16 conversion (round to nearest even).
TEST(FloatToHalfMatchesCompiler) {
  std::mt19937 rng(3);
  int bad = 0;
  for (int i = 0; i < 2000000; ++i) {
    uint32_t u = rng();
    if (i % 2) u = (u & 0x8000ffffu) | ((0x30u + (u >> 16) % 0x20u) << 23);  // dense near half's range
    const float f = cpu_ascendc::BitsFloat(u);
    if (std::isnan(f)) continue;
    const _Float16 ref = static_cast<_Float16>(f);
    uint16_t rb;
    std::memcpy(&rb, &ref, 2);
    if (rb != cpu_ascendc::FloatToHalfBits(f)) ++bad;
  }
  CHECK(bad == 0);
}
#endif

TEST(Bf16RoundsToNearestEven) {
  CHECK(cpu_ascendc::FloatToBf16Bits(cpu_ascendc::BitsFloat(0x3f808000u)) == 0x3f80);  // tie -> even
  CHECK(cpu_ascendc::FloatToBf16Bits(cpu_ascendc::BitsFloat(0x3f818000u)) == 0x3f82);  // tie -> even (up)
  CHECK(cpu_ascendc::FloatToBf16Bits(cpu_ascendc::BitsFloat(0x3f808001u)) == 0x3f81);
  CHECK(cpu_ascendc::FloatToBf16Bits(cpu_ascendc::BitsFloat(0x7f7fffffu)) == 0x7f80);  // max float -> inf
  CHECK(cpu_ascendc::FloatToBf16Bits(cpu_ascendc::BitsFloat(0x7f800001u)) == 0x7fc0);  // NaN stays NaN
  CHECK(cpu_ascendc::Bf16BitsToFloat(0xc000) == -2.0f);
}

// A minimal kernel body over one queue, parameterised by what it does wrong.
enum class Misuse { kNone, kCopyNotWholeBlocks, kUbOverflow, kDeQueEmpty, kAllocBeyondNum, kGmOverrun,
                    kMisalignedUb, kCompareCount, kOutsideGmTensor, kFreeQueued, kNoCore };

void MiniKernel(Misuse misuse) {
  if (misuse == Misuse::kNoCore) {
    (void)GetBlockIdx();
    return;
  }
  std::vector<float> storage(256);
  float* gm = storage.data();
  cpu_ascendc::CoreScope core(0, 1, kUb, {{reinterpret_cast<const uint8_t*>(gm), 256 * sizeof(float)}});
  TPipe pipe;
  TQue<TPosition::VECIN, 2> que;
  TBuf<TPosition::VECCALC> mask;
  pipe.InitBuffer(que, 2, 1024);
  pipe.InitBuffer(mask, misuse == Misuse::kUbOverflow ? kUb : 64);
  GlobalTensor<float> g;
  g.SetGlobalBuffer(gm, misuse == Misuse::kOutsideGmTensor ? 257 : 256);
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

TEST(PreconditionsAbort) {
  EXPECT_ABORT(MiniKernel(Misuse::kNone); std::abort(), "");  // the twin: only the explicit abort
  std::string err;
  CHECK(!test::DiesWithAbort([] { MiniKernel(Misuse::kNone); }, "", &err));
  EXPECT_ABORT(MiniKernel(Misuse::kCopyNotWholeBlocks), "not a multiple of 32 bytes");
  EXPECT_ABORT(MiniKernel(Misuse::kUbOverflow), "UB overflow");
  EXPECT_ABORT(MiniKernel(Misuse::kDeQueEmpty), "queue is empty");
  EXPECT_ABORT(MiniKernel(Misuse::kAllocBeyondNum), "buffers are in use");
  EXPECT_ABORT(MiniKernel(Misuse::kGmOverrun), "overruns the buffer");
  EXPECT_ABORT(MiniKernel(Misuse::kMisalignedUb), "not 32-byte aligned");
  EXPECT_ABORT(MiniKernel(Misuse::kCompareCount), "not a multiple of 256 bytes");
  EXPECT_ABORT(MiniKernel(Misuse::kOutsideGmTensor), "not inside any GM tensor");
  EXPECT_ABORT(MiniKernel(Misuse::kFreeQueued), "still queued");
  EXPECT_ABORT(MiniKernel(Misuse::kNoCore), "not running a kernel block");
}

// Through the real kernels: a UB too small for the tiling's tile, and a tiling whose tile counts
// do not cover the cores' elements, abort instead of corrupting memory.
TEST(KernelPreconditionsAbort) {
  std::vector<float> g(1024, 1.0f), x(1024, 1.0f);  // a whole number of blocks: no clipping
  auto t = kt::SpecTiling(1024, 4, 7, kt::kUb910B, kt::kCores910B);
  auto ok = [&] { kt::Run<float>(false, g, x, kt::FloatParams(0.f, 0.), t, kt::kUb910B, 1, true); };
  std::string err;
  CHECK(!test::DiesWithAbort(ok, "", &err));
  EXPECT_ABORT(kt::Run<float>(false, g, x, kt::FloatParams(0.f, 0.), t, 8192, 1, true), "UB overflow");
  auto bad = t;
  bad.small_tail_data_num = bad.small_tail_data_num / 2;  // tiles no longer cover the core
  bad.big_tail_data_num = bad.big_tail_data_num / 2;
  EXPECT_ABORT(kt::Run<float>(false, g, x, kt::FloatParams(0.f, 0.), bad, kt::kUb910B, 1, true),
               "do not cover");
}

TEST(VectorOpsBasics) {
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
  for (int i = 0; i < 64; ++i) CHECK(c.GetValue(i) == ((i % 5) - 2 > 0 ? 100.0f + i : -1.0f));
  LocalTensor<int32_t> n = buf.Get<int32_t>();
  Duplicate(n, INT32_MAX, 64);
  Adds(n, n, 1, 64);  // wraps like the hardware, no UB
  CHECK(n.GetValue(3) == INT32_MIN);
}


// DataCopy GM -> UB of float32 is deferred (deferred_copy.h): UB must still read as the values GM
// had at DataCopy time, through every way of touching it.
// A GM source with less than the 16 bytes of alignment the vector loops' aligned SIMD loads need
// (NumPy may hand out 8-byte aligned doubles) is never read in place.
TEST(DeferredCopyOfMisalignedGmIsMade) {
  alignas(64) double gm[64 + 1];
  alignas(64) double out[64];
  for (int i = 0; i < 65; ++i) gm[i] = static_cast<double>(i) - 20.5;
  const double* src = gm + 1;  // 8 bytes past a 64-byte boundary
  cpu_ascendc::CoreScope core(0, 1, kUb, {{reinterpret_cast<const uint8_t*>(src), 64 * sizeof(double)},
                                          {reinterpret_cast<const uint8_t*>(out), sizeof out}});
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf, m;
  pipe.InitBuffer(buf, 2 * 64 * sizeof(double));
  pipe.InitBuffer(m, 32);
  GlobalTensor<double> g;
  g.SetGlobalBuffer(const_cast<double*>(src), 64);
  LocalTensor<double> a = buf.Get<double>(), c = a[64];
  auto& deferred = cpu_ascendc::ThreadDeferredCopies();
  DataCopy(a, g, 64);
  CompareScalar(m.Get<uint8_t>(), a, 0.0, CMPMODE::GT, 64);
  CHECK(deferred.Pending() == 0);  // made, not read from the misaligned GM
  Select(c, m.Get<uint8_t>(), a, -1.0, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64);
  for (int i = 0; i < 64; ++i) CHECK(c.GetValue(i) == (src[i] > 0.0 ? src[i] : -1.0));
}

// 16 bytes are enough (malloc's and NumPy's usual alignment): read in place, never copied.
TEST(DeferredCopyOf16ByteAlignedGmIsReadInPlace) {
  alignas(64) float gm[64 + 4];
  for (int i = 0; i < 68; ++i) gm[i] = static_cast<float>(i) - 30.5f;
  const float* src = gm + 4;  // 16 bytes past a 64-byte boundary: not 32-byte aligned
  cpu_ascendc::CoreScope core(0, 1, kUb, {{reinterpret_cast<const uint8_t*>(src), 64 * sizeof(float)}});
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf, m;
  pipe.InitBuffer(buf, 2 * 64 * sizeof(float));
  pipe.InitBuffer(m, 32);
  GlobalTensor<float> g;
  g.SetGlobalBuffer(const_cast<float*>(src), 64);
  LocalTensor<float> a = buf.Get<float>(), c = a[64];
  auto& deferred = cpu_ascendc::ThreadDeferredCopies();
  DataCopy(a, g, 64);
  CompareScalar(m.Get<uint8_t>(), a, 0.0f, CMPMODE::GT, 64);
  Select(c, m.Get<uint8_t>(), a, -1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64);
  CHECK(deferred.Pending() == 1);  // both read GM in place
  for (int i = 0; i < 64; ++i) CHECK(c.GetValue(i) == (src[i] > 0.0f ? src[i] : -1.0f));
  CHECK(a.GetValue(5) == src[5]);  // a scalar read makes the copy
  CHECK(deferred.Pending() == 0);
}

TEST(DeferredCopyKeepsCopySemantics) {
  alignas(64) float gm[256];
  alignas(64) float out[256];
  for (int i = 0; i < 256; ++i) gm[i] = static_cast<float>(i) - 100.0f;
  cpu_ascendc::CoreScope core(0, 1, kUb, {{reinterpret_cast<const uint8_t*>(gm), sizeof gm},
                                          {reinterpret_cast<const uint8_t*>(out), sizeof out}});
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf, m;
  pipe.InitBuffer(buf, 4 * 256 * sizeof(float));
  pipe.InitBuffer(m, 32);
  GlobalTensor<float> g, o;
  g.SetGlobalBuffer(gm, 256);
  o.SetGlobalBuffer(out, 256);
  LocalTensor<float> a = buf.Get<float>(), b = a[256], c = a[512], d = a[768];
  auto& deferred = cpu_ascendc::ThreadDeferredCopies();

  // Read through the primitives (straight from GM), then GM overwritten in place: UB keeps the
  // old values, made before the write.
  DataCopy(a, g, 256);
  CHECK(deferred.Pending() == 1);
  CompareScalar(m.Get<uint8_t>(), a, 0.0f, CMPMODE::GT, 64);
  Select(c, m.Get<uint8_t>(), a, -1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64);
  for (int i = 0; i < 64; ++i) CHECK(c.GetValue(i) == (gm[i] > 0.0f ? gm[i] : -1.0f));
  CHECK(deferred.Pending() == 1);  // read from GM, not made
  DataCopy(g, c, 64);              // GM [0, 64) overwritten: the copy is made first
  CHECK(deferred.Pending() == 0);
  for (int i = 0; i < 64; ++i) CHECK(a.GetValue(i) == static_cast<float>(i) - 100.0f);

  // A scalar read, an in-place op and a partial overwrite each make the copy first.
  for (int i = 0; i < 256; ++i) gm[i] = static_cast<float>(i);
  DataCopy(b, g, 256);
  CHECK(b.GetValue(7) == 7.0f);
  CHECK(deferred.Pending() == 0);
  DataCopy(b, g, 256);
  Maxs(b, b, 5.0f, 64);  // in place on the first 64: made, then clamped
  CHECK(b.GetValue(3) == 5.0f && b.GetValue(7) == 7.0f && b.GetValue(100) == 100.0f);
  DataCopy(b, g, 256);
  DataCopy(b[64], g, 64);  // overwrites part of the pending copy: the rest stays right
  CHECK(b.GetValue(10) == 10.0f && b.GetValue(64 + 10) == 10.0f && b.GetValue(200) == 200.0f);

  // A tile copied over a pending one of the same place replaces it; the result leaves intact.
  DataCopy(d, g, 256);
  for (int i = 0; i < 256; ++i) gm[i] = -static_cast<float>(i);
  DataCopy(d, g, 256);  // the first copy is dropped, never made
  CHECK(deferred.Pending() == 1);
  DataCopy(o, d, 256);
  for (int i = 0; i < 256; ++i) CHECK(out[i] == -static_cast<float>(i));
}


// In a launch that streams its output, a select of GM-read src0 runs straight into GM when its
// dst is copied out; its UB bytes keep the select's values whatever happens to the mask, src0's
// UB buffer or GM afterwards.
TEST(DeferredSelectRunsIntoGmWithSelectSemantics) {
  alignas(64) float grad[256];
  alignas(64) float x[256];
  alignas(64) float out[256 + 8];
  for (int i = 0; i < 256; ++i) {
    grad[i] = static_cast<float>(i) + 0.5f;
    x[i] = static_cast<float>((i * 37) % 101) - 50.0f;
  }
  auto expect = [&](int i, float fill) { return x[i] > 0.0f ? static_cast<float>(i) + 0.5f : fill; };
  cpu_ascendc::CoreScope core(0, 1, kUb, {{reinterpret_cast<const uint8_t*>(grad), sizeof grad},
                                          {reinterpret_cast<const uint8_t*>(x), sizeof x},
                                          {reinterpret_cast<const uint8_t*>(out), sizeof out}});
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf, m;
  pipe.InitBuffer(buf, 4 * 256 * sizeof(float));
  pipe.InitBuffer(m, 32);
  GlobalTensor<float> g, xg, o;
  g.SetGlobalBuffer(grad, 256);
  xg.SetGlobalBuffer(x, 256);
  o.SetGlobalBuffer(out, 256 + 8);
  LocalTensor<float> a = buf.Get<float>(), b = a[256], c = a[512], d = a[768];
  LocalTensor<uint8_t> mask = m.Get<uint8_t>();
  auto& selects = cpu_ascendc::ThreadDeferredVectorOps();
  cpu_ascendc::CurrentCore().stream_gm_stores = true;

  DataCopy(a, g, 256);
  DataCopy(b, xg, 256);
  CompareScalar(mask, b, 0.0f, CMPMODE::GT, 256);
  Select(c, mask, a, -1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 256);
  CHECK(selects.Pending() == 1);
  DataCopy(o, c, 256);  // selected into GM
  for (int i = 0; i < 256; ++i) CHECK(out[i] == expect(i, -1.0f));
  CHECK(selects.Pending() == 1);  // UB not written yet
  CompareScalar(mask, b, 1e9f, CMPMODE::GT, 256);  // mask cleared: the select keeps its own
  DataCopy(a, xg, 256);                             // src0's UB buffer refilled
  for (int i = 0; i < 256; ++i) CHECK(c.GetValue(i) == expect(i, -1.0f));  // made on read
  CHECK(selects.Pending() == 0);

  // GM under src0 written before the copy-out: the select is made first, with the old values.
  CompareScalar(mask, b, 0.0f, CMPMODE::GT, 256);
  DataCopy(a, g, 256);
  Select(c, mask, a, -2.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 256);
  Duplicate(d, 9.0f, 64);
  DataCopy(g, d, 64);  // grad[0, 64) = 9
  CHECK(selects.Pending() == 0);
  DataCopy(o, c, 256);
  for (int i = 0; i < 256; ++i) CHECK(out[i] == expect(i, -2.0f));
  for (int i = 0; i < 64; ++i) grad[i] = static_cast<float>(i) + 0.5f;

  // A select overwritten whole is dropped; one overwritten in part is made first.
  DataCopy(a, g, 256);
  Select(c, mask, a, -3.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 256);
  Select(c, mask, a, -4.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 256);
  CHECK(selects.Pending() == 1);
  Duplicate(c, 7.0f, 64);
  CHECK(selects.Pending() == 0);
  for (int i = 0; i < 256; ++i) CHECK(c.GetValue(i) == (i < 64 ? 7.0f : expect(i, -4.0f)));

  // A copy-out of any length (DataCopyPad) writes exactly its bytes.
  Select(c, mask, a, -5.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 256);
  for (float& v : out) v = 42.0f;
  DataCopyPad(o, c, DataCopyExtParams(1, 100 * sizeof(float), 0, 0, 0));
  for (int i = 0; i < 256 + 8; ++i) CHECK(out[i] == (i < 100 ? expect(i, -5.0f) : 42.0f));
  CHECK(selects.Pending() == 1);

  // At a 64-byte and at a 32-byte aligned GM address (the streaming stores need 64).
  DataCopy(o, c, 256);
  DataCopy(o[8], c, 128);
  cpu_ascendc::loops::StoreFence();
  for (int i = 0; i < 256; ++i) CHECK(out[i] == (i < 8 ? expect(i, -5.0f) : i < 136 ? expect(i - 8, -5.0f) : expect(i, -5.0f)));

  // The output is src0's own GM (in place): the select is made, then copied.
  DataCopy(a, g, 256);
  Select(c, mask, a, -6.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 256);
  DataCopy(g, c, 256);
  CHECK(selects.Pending() == 0);
  for (int i = 0; i < 256; ++i) CHECK(grad[i] == expect(i, -6.0f));
}

// Selects that are not deferred: in place, src0 already in UB, and any select of a launch whose
// output is not streamed (into the caches, a select into L1 and a block copy out measured faster).
TEST(DeferredSelectOnlyForGmReadSourcesAndStreamedOutputs) {
  alignas(64) float grad[64];
  for (int i = 0; i < 64; ++i) grad[i] = static_cast<float>(i) - 31.5f;
  cpu_ascendc::CoreScope core(0, 1, kUb, {{reinterpret_cast<const uint8_t*>(grad), sizeof grad}});
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf, m;
  pipe.InitBuffer(buf, 2 * 64 * sizeof(float));
  pipe.InitBuffer(m, 32);
  GlobalTensor<float> g;
  g.SetGlobalBuffer(grad, 64);
  LocalTensor<float> a = buf.Get<float>(), c = a[64];
  LocalTensor<uint8_t> mask = m.Get<uint8_t>();
  auto& selects = cpu_ascendc::ThreadDeferredVectorOps();
  DataCopy(a, g, 64);
  CompareScalar(mask, a, 0.0f, CMPMODE::GT, 64);
  Select(c, mask, a, 1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64);  // not streamed
  CHECK(selects.Pending() == 0);
  cpu_ascendc::CurrentCore().stream_gm_stores = true;
  Select(a, mask, a, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64);  // in place
  CHECK(selects.Pending() == 0);
  Select(c, mask, a, 1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64);  // src0 in UB
  CHECK(selects.Pending() == 0);
  for (int i = 0; i < 64; ++i) CHECK(c.GetValue(i) == (grad[i] > 0.0f ? grad[i] : 1.0f));
}

// A widening Cast of GM-read data is recorded (AVX-512 hosts) and the CompareScalar of its result
// reads the narrow source; the float copy still reads back right, made when touched, and a Cast
// over part of it keeps the rest pending.
TEST(DeferredCastFeedsCompareWithCastSemantics) {
  const bool defers = cpu_ascendc::loops::BestIsa() == cpu_ascendc::loops::Isa::kAvx512;
  constexpr int kN = 256;
  alignas(64) uint16_t xb[kN];  // bfloat16 bits
  for (int i = 0; i < kN; ++i) {
    xb[i] = static_cast<uint16_t>(cpu_ascendc::FloatBits(static_cast<float>(i % 17) - 8.25f) >> 16);
  }
  xb[7] = 0x7fc0;  // NaN
  xb[9] = 0x0001;  // a subnormal
  auto widened = [&](int i) { return cpu_ascendc::Bf16BitsToFloat(xb[i]); };
  cpu_ascendc::CoreScope core(0, 1, kUb, {{reinterpret_cast<const uint8_t*>(xb), sizeof xb}});
  TPipe pipe;
  TBuf<TPosition::VECCALC> in, wide, m, o;
  pipe.InitBuffer(in, kN * sizeof(uint16_t));
  pipe.InitBuffer(o, kN * sizeof(uint16_t));
  pipe.InitBuffer(wide, kN * sizeof(float));
  pipe.InitBuffer(m, 64);
  GlobalTensor<bfloat16_t> gb;
  gb.SetGlobalBuffer(reinterpret_cast<bfloat16_t*>(xb), kN);
  LocalTensor<bfloat16_t> xbu = in.Get<bfloat16_t>();
  LocalTensor<float> w = wide.Get<float>();
  LocalTensor<bfloat16_t> other = o.Get<bfloat16_t>();
  LocalTensor<uint8_t> mask = m.Get<uint8_t>();
  auto& ops = cpu_ascendc::ThreadDeferredVectorOps();
  auto mask_bit = [&](int i) { return (mask.GetValue(i / 8) >> (i % 8)) & 1; };

  DataCopy(xbu, gb, kN);
  Cast(w, xbu, RoundMode::CAST_NONE, kN);
  CHECK(ops.Pending() == (defers ? 1 : 0));
  CompareScalar(mask, w, 0.5f, CMPMODE::GT, kN);
  for (int i = 0; i < kN; ++i) CHECK(mask_bit(i) == (widened(i) > 0.5f ? 1 : 0));
  CompareScalar(mask, w, -1.0f, CMPMODE::NE, kN);  // NaN != t holds
  for (int i = 0; i < kN; ++i) CHECK(mask_bit(i) == (widened(i) != -1.0f ? 1 : 0));
  CHECK(ops.Pending() == (defers ? 1 : 0));  // compares read GM, the copy stays pending

  // A Cast over the first 128: the last 128 stay pending, and read back as the first Cast's.
  Cast(w, xbu[128], RoundMode::CAST_NONE, 128);
  CHECK(ops.Pending() == (defers ? 2 : 0));
  CompareScalar(mask, w[64], 0.0f, CMPMODE::LE, 64);  // inside the second Cast: it is made, then read
  CHECK(ops.Pending() == (defers ? 1 : 0));
  for (int i = 0; i < 64; ++i) CHECK(mask_bit(i) == (widened(192 + i) <= 0.0f ? 1 : 0));
  for (int i = 0; i < kN; ++i) {
    const float v = w.GetValue(i);
    const float expect = widened(i < 128 ? i + 128 : i);
    CHECK(std::memcmp(&v, &expect, sizeof v) == 0);
  }

  CHECK(ops.Pending() == 0);

  // GM under the source written by the kernel before the compare: the Cast is made first, with
  // the bits it would have read.
  uint16_t old_bits[kN];
  std::memcpy(old_bits, xb, sizeof xb);
  DataCopy(xbu, gb, kN);
  Cast(w, xbu, RoundMode::CAST_NONE, kN);
  Duplicate(other, bfloat16_t::FromBits(0x3f80), kN);  // 1.0
  DataCopy(gb, other, kN);
  CHECK(ops.Pending() == 0);
  CHECK(xb[5] == 0x3f80);
  for (int i = 0; i < kN; ++i) {
    const float v = w.GetValue(i), expect = cpu_ascendc::Bf16BitsToFloat(old_bits[i]);
    CHECK(std::memcmp(&v, &expect, sizeof v) == 0);
  }
}

// int8 -> half: the compare reads the bytes; the Select that overwrites the half buffer drops it.
TEST(DeferredByteCastFeedsCompare) {
  const bool defers = cpu_ascendc::loops::BestIsa() == cpu_ascendc::loops::Isa::kAvx512;
  constexpr int kN = 256;
  alignas(64) int8_t xs[kN];
  alignas(64) uint8_t xu[kN];
  for (int i = 0; i < kN; ++i) {
    xs[i] = static_cast<int8_t>(i * 37 + 5);
    xu[i] = static_cast<uint8_t>(i * 37 + 5);
  }
  cpu_ascendc::CoreScope core(0, 1, kUb, {});
  TPipe pipe;
  TBuf<TPosition::VECCALC> in, h, c, m;
  pipe.InitBuffer(in, 2 * kN);
  pipe.InitBuffer(h, kN * sizeof(half));
  pipe.InitBuffer(c, kN * sizeof(half));
  pipe.InitBuffer(m, 64);
  GlobalTensor<int8_t> gs;
  GlobalTensor<uint8_t> gu;
  gs.SetGlobalBuffer(xs, kN);
  gu.SetGlobalBuffer(xu, kN);
  LocalTensor<int8_t> su = in.Get<int8_t>();
  LocalTensor<uint8_t> uu = in.Get<uint8_t>()[kN];
  LocalTensor<half> xh = h.Get<half>(), minus_one = c.Get<half>();
  LocalTensor<uint8_t> mask = m.Get<uint8_t>();
  auto& ops = cpu_ascendc::ThreadDeferredVectorOps();
  auto mask_bit = [&](int i) { return (mask.GetValue(i / 8) >> (i % 8)) & 1; };
  Duplicate(minus_one, static_cast<half>(-1.0f), kN);

  DataCopy(su, gs, kN);
  Cast(xh, su, RoundMode::CAST_NONE, kN);
  CHECK(ops.Pending() == (defers ? 1 : 0));
  CompareScalar(mask, xh, static_cast<half>(3.0f), CMPMODE::GT, kN);
  for (int i = 0; i < kN; ++i) CHECK(mask_bit(i) == (xs[i] > 3 ? 1 : 0));
  Select(xh, mask, minus_one, static_cast<half>(0.0f), SELMODE::VSEL_TENSOR_SCALAR_MODE, kN);
  CHECK(ops.Pending() == 0);  // overwritten whole: dropped
  for (int i = 0; i < kN; ++i) CHECK(static_cast<float>(xh.GetValue(i)) == (xs[i] > 3 ? -1.0f : 0.0f));

  DataCopy(uu, gu, kN);
  Cast(xh, uu, RoundMode::CAST_NONE, kN);
  CompareScalar(mask, xh, static_cast<half>(200.0f), CMPMODE::GE, kN);
  for (int i = 0; i < kN; ++i) CHECK(mask_bit(i) == (xu[i] >= 200 ? 1 : 0));
  for (int i = 0; i < kN; ++i) CHECK(static_cast<float>(xh.GetValue(i)) == static_cast<float>(xu[i]));
  CHECK(ops.Pending() == 0);
}

}  // namespace
