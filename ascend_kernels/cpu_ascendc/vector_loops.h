// The element loops behind the vector primitives (vector_ops.h), on raw pointers the primitive
// has already checked (alignment, extent, overlap): no checks in here.
//
// Each operation is one plain loop, vectorised by the compiler. On x86-64 the loop is compiled
// for three instruction sets (the baseline, AVX2, AVX-512) and the best one the host has runs;
// every variant computes the same bits (integer ops and IEEE compares only), and the tests run
// each loop in every variant the host can execute. Nothing else depends on the host.
//
// Six loops have an AVX-512 form written with intrinsics (the 16-bit Select, the half compare,
// int8 <-> half, and the byte CompareScalar and Select of the two-op path), where the compiler does
// not vectorise the plain loop well (benchmarks/README.md, "Why six loops have AVX-512
// intrinsics"). Each returns
// how many elements it did; the plain loop does the rest, and the tests check both against the
// same scalar reference.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

// x86 dispatch of the loops; not in a device-only compile (tools/kernel_device_check.sh), which
// has no host CPU to dispatch for.
#if CPU_ASCENDC_X86_LOOPS && !defined(__CUDA__)
#define CPU_ASCENDC_X86_LOOPS 1
#include <immintrin.h>
#else
#define CPU_ASCENDC_X86_LOOPS 0
#endif

#include "ascendc_types.h"

namespace cpu_ascendc {
namespace loops {

// Ordered: a higher variant needs every lower one's instructions.
enum class Isa { kBaseline, kAvx2, kAvx512 };

inline bool HostHas(Isa isa) {
#if CPU_ASCENDC_X86_LOOPS
  __builtin_cpu_init();
  switch (isa) {
    case Isa::kBaseline:
      return true;
    case Isa::kAvx2:
      return __builtin_cpu_supports("avx2") != 0;
    case Isa::kAvx512:
      return __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("avx512f") != 0 &&
             __builtin_cpu_supports("avx512bw") != 0 && __builtin_cpu_supports("avx512dq") != 0 &&
             __builtin_cpu_supports("avx512vl") != 0;
  }
  return false;
#else
  return isa == Isa::kBaseline;
#endif
}

inline Isa BestIsa() {
  static const Isa best = HostHas(Isa::kAvx512) ? Isa::kAvx512
                          : HostHas(Isa::kAvx2) ? Isa::kAvx2
                                                : Isa::kBaseline;
  return best;
}

// Runs `loop` (a lambda holding one plain loop) compiled for `isa`: the lambda is inlined into a
// function built for that target, where the compiler vectorises it with that target's vectors.
#if defined(__clang__)
#define CPU_ASCENDC_LOOP [&]()
#else
#define CPU_ASCENDC_LOOP [&]() __attribute__((always_inline))
#endif
#if CPU_ASCENDC_X86_LOOPS
template <typename Loop>
__attribute__((target("avx2"), noinline)) void RunAvx2(const Loop& loop) {
  loop();
}
// g++ vectorises at 256 bits on an AVX-512 target unless told otherwise; clang rejects that
// option (and with it the whole target attribute) and uses 512 bits by itself.
#if defined(__clang__)
#define CPU_ASCENDC_AVX512_LOOPS "avx2,avx512f,avx512bw,avx512dq,avx512vl"
#else
#define CPU_ASCENDC_AVX512_LOOPS "avx2,avx512f,avx512bw,avx512dq,avx512vl,prefer-vector-width=512"
#endif
template <typename Loop>
__attribute__((target(CPU_ASCENDC_AVX512_LOOPS), noinline)) void RunAvx512(const Loop& loop) {
  loop();
}
#endif
template <typename Loop>
inline void RunFor(Isa isa, const Loop& loop) {
#if CPU_ASCENDC_X86_LOOPS
  if (isa == Isa::kAvx512) return RunAvx512(loop);
  if (isa == Isa::kAvx2) return RunAvx2(loop);
#endif
  (void)isa;
  loop();
}

// dst[i] = f(src[i]). dst and src are disjoint, or the same array of one type.
template <typename D, typename S, typename F>
inline void Map(D* dst, const S* src, uint64_t n, F f, Isa isa = BestIsa()) {
  if constexpr (std::is_same_v<D, S>) {
    if (dst == src) {
      RunFor(
          isa, CPU_ASCENDC_LOOP {
            D* const p = dst;
            const uint64_t count = n;
            for (uint64_t i = 0; i < count; ++i) p[i] = f(p[i]);
          });
      return;
    }
  }
  RunFor(
      isa, CPU_ASCENDC_LOOP {
        D* __restrict d = dst;
        const S* __restrict s = src;
        const uint64_t count = n;
        for (uint64_t i = 0; i < count; ++i) d[i] = f(s[i]);
      });
}

// dst[i] = f(a[i], b[i]). Each source is dst itself or disjoint from it.
template <typename T, typename F>
inline void Zip(T* dst, const T* a, const T* b, uint64_t n, F f, Isa isa = BestIsa()) {
  if (a == dst && b == dst) return Map(dst, dst, n, [f](T v) { return f(v, v); }, isa);
  if (a == dst || b == dst) {
    const T* other = a == dst ? b : a;
    const bool dst_first = a == dst;
    RunFor(
        isa, CPU_ASCENDC_LOOP {
          T* __restrict d = dst;
          const T* __restrict o = other;
          const uint64_t count = n;
          if (dst_first) {
            for (uint64_t i = 0; i < count; ++i) d[i] = f(d[i], o[i]);
          } else {
            for (uint64_t i = 0; i < count; ++i) d[i] = f(o[i], d[i]);
          }
        });
    return;
  }
  RunFor(
      isa, CPU_ASCENDC_LOOP {
        T* __restrict d = dst;
        const T* __restrict x = a;
        const T* __restrict y = b;
        const uint64_t count = n;
        for (uint64_t i = 0; i < count; ++i) d[i] = f(x[i], y[i]);
      });
}

// Mask bits: dst bit i (LSB first in each byte) = pred(i), for n a multiple of 8. Each chunk
// is a vectorised loop into one byte per element, then eight bytes packed into one by a multiply.
constexpr uint64_t kMaskChunk = 256;
template <typename Pred>
inline void Mask(uint8_t* dst, uint64_t n, Pred pred, Isa isa = BestIsa()) {
  RunFor(
      isa, CPU_ASCENDC_LOOP {
        uint8_t* __restrict d = dst;
        alignas(64) uint8_t bytes[kMaskChunk];
        for (uint64_t c = 0; c < n; c += kMaskChunk) {
          const uint64_t len = n - c < kMaskChunk ? n - c : kMaskChunk;
          for (uint64_t i = 0; i < len; ++i) bytes[i] = pred(c + i) ? 1 : 0;
          for (uint64_t k = 0; k < len / 8; ++k) {
            uint64_t w;
            std::memcpy(&w, bytes + 8 * k, sizeof w);  // byte j (0 or 1) at bit 8j
            d[c / 8 + k] =
                static_cast<uint8_t>((w * 0x0102040810204080ull) >> 56);  // bit 8j -> bit 56 + j
          }
        }
      });
}

// Mask bits of load(i) <mode> t, i < n (C++ semantics: false on NaN except NE).
template <typename C, typename Load>
inline void CompareMask(uint8_t* d, uint64_t n, AscendC::CMPMODE mode, C t, Load load,
                        Isa isa = BestIsa()) {
  using AscendC::CMPMODE;
  switch (mode) {
    case CMPMODE::LT:
      return Mask(d, n, [=](uint64_t i) { return load(i) < t; }, isa);
    case CMPMODE::GT:
      return Mask(d, n, [=](uint64_t i) { return load(i) > t; }, isa);
    case CMPMODE::EQ:
      return Mask(d, n, [=](uint64_t i) { return load(i) == t; }, isa);
    case CMPMODE::LE:
      return Mask(d, n, [=](uint64_t i) { return load(i) <= t; }, isa);
    case CMPMODE::GE:
      return Mask(d, n, [=](uint64_t i) { return load(i) >= t; }, isa);
    case CMPMODE::NE:
      return Mask(d, n, [=](uint64_t i) { return load(i) != t; }, isa);
  }
}

// Select on element bits: dst[i] = mask bit i ? src[i] : fill. dst is src or disjoint from it.
// Each chunk's mask bits are spread to one byte per element (bit j of a byte kept in byte j by
// a multiply), then a vectorised blend.
#if CPU_ASCENDC_X86_LOOPS
#define CPU_ASCENDC_AVX512 __attribute__((target("avx2,avx512f,avx512bw,avx512dq,avx512vl")))
// Select on 16-bit elements, 32 a step: 32 mask bits are a mask register for one blend. Returns
// the elements done (a multiple of 32); the caller runs the rest.
CPU_ASCENDC_AVX512 inline uint64_t Avx512Select16(uint16_t* dst, const uint8_t* mask,
                                                  const uint16_t* src, uint16_t fill, uint64_t n) {
  const __m512i f = _mm512_set1_epi16(static_cast<short>(fill));
  uint64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    uint32_t bits;
    std::memcpy(&bits, mask + i / 8, sizeof bits);
    const __m512i v = _mm512_loadu_si512(src + i);
    _mm512_storeu_si512(dst + i, _mm512_mask_blend_epi16(static_cast<__mmask32>(bits), f, v));
  }
  return i;
}

// Select on bytes, 64 a step: 64 mask bits are one mask register. As Avx512Select16.
CPU_ASCENDC_AVX512 inline uint64_t Avx512Select8(uint8_t* dst, const uint8_t* mask,
                                                 const uint8_t* src, uint8_t fill, uint64_t n) {
  const __m512i f = _mm512_set1_epi8(static_cast<char>(fill));
  uint64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    uint64_t bits;
    std::memcpy(&bits, mask + i / 8, sizeof bits);
    const __m512i v = _mm512_loadu_si512(src + i);
    _mm512_storeu_si512(dst + i, _mm512_mask_blend_epi8(static_cast<__mmask64>(bits), f, v));
  }
  return i;
}
#endif

template <typename B>
inline void SelectBits(B* dst, const uint8_t* mask, const B* src, B fill, uint64_t n,
                       Isa isa = BestIsa()) {
#if CPU_ASCENDC_X86_LOOPS
  if constexpr (sizeof(B) <= 2) {
    if (isa == Isa::kAvx512) {
      const uint64_t done = sizeof(B) == 2 ? Avx512Select16(reinterpret_cast<uint16_t*>(dst), mask,
                                                            reinterpret_cast<const uint16_t*>(src),
                                                            static_cast<uint16_t>(fill), n)
                                           : Avx512Select8(reinterpret_cast<uint8_t*>(dst), mask,
                                                           reinterpret_cast<const uint8_t*>(src),
                                                           static_cast<uint8_t>(fill), n);
      if (done == n) return;
      dst += done, src += done, mask += done / 8, n -= done;
    }
  }
#endif
  RunFor(
      isa, CPU_ASCENDC_LOOP {
        // Local copies: a byte store may alias anything the lambda reaches by reference.
        B* const to = dst;
        const B* const from = src;
        const uint8_t* const bits = mask;
        const B f = fill;
        const uint64_t count = n;
        alignas(64) uint8_t bytes[kMaskChunk];
        for (uint64_t c = 0; c < count; c += kMaskChunk) {
          const uint64_t len = count - c < kMaskChunk ? count - c : kMaskChunk;
          for (uint64_t k = 0; k < (len + 7) / 8; ++k) {
            const uint64_t w = (bits[c / 8 + k] * 0x0101010101010101ull) & 0x8040201008040201ull;
            std::memcpy(bytes + 8 * k, &w, sizeof w);
          }
          B* const d = to + c;
          const B* const s = from + c;
          for (uint64_t i = 0; i < len; ++i) {
            const B keep = static_cast<B>(B{0} - static_cast<B>(bytes[i] != 0));
            d[i] = static_cast<B>((s[i] & keep) | (f & static_cast<B>(~keep)));
          }
        }
      });
}

// CompareScalar on int8/uint8: mask bits of src[i] <mode> t, i < n.
#if CPU_ASCENDC_X86_LOOPS
// 64 bytes a step, the compare's mask register being the 64 mask bits; kPred is the
// _MM_CMPINT_ predicate. Returns the elements done (a multiple of 64); the caller runs the rest.
template <typename I, int kPred>
CPU_ASCENDC_AVX512 inline uint64_t Avx512CompareBytes(uint8_t* d, const I* src, uint64_t n, I t) {
  const __m512i b = _mm512_set1_epi8(static_cast<char>(t));
  uint64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i x = _mm512_loadu_si512(src + i);
    uint64_t bits;
    if constexpr (std::is_signed_v<I>) {
      bits = _mm512_cmp_epi8_mask(x, b, kPred);
    } else {
      bits = _mm512_cmp_epu8_mask(x, b, kPred);
    }
    std::memcpy(d + i / 8, &bits, sizeof bits);
  }
  return i;
}
#endif
template <typename I>
inline void CompareBytes(uint8_t* d, const I* src, uint64_t n, AscendC::CMPMODE mode, I t,
                         Isa isa = BestIsa()) {
#if CPU_ASCENDC_X86_LOOPS
  if (isa == Isa::kAvx512) {
    using AscendC::CMPMODE;
    const uint64_t done =
        mode == CMPMODE::LT   ? Avx512CompareBytes<I, _MM_CMPINT_LT>(d, src, n, t)
        : mode == CMPMODE::GT ? Avx512CompareBytes<I, _MM_CMPINT_NLE>(d, src, n, t)
        : mode == CMPMODE::EQ ? Avx512CompareBytes<I, _MM_CMPINT_EQ>(d, src, n, t)
        : mode == CMPMODE::LE ? Avx512CompareBytes<I, _MM_CMPINT_LE>(d, src, n, t)
        : mode == CMPMODE::GE ? Avx512CompareBytes<I, _MM_CMPINT_NLT>(d, src, n, t)
                              : Avx512CompareBytes<I, _MM_CMPINT_NE>(d, src, n, t);
    if (done == n) return;
    d += done / 8, src += done, n -= done;
  }
#endif
  CompareMask(d, n, mode, t, [src](uint64_t i) { return src[i]; }, isa);
}

// ---- Conversions, branch-free so that the loops vectorise. ----

// A byte integer to binary16 bits, exactly (|v| <= 255 needs 8 of the 11 significant bits):
// float(v) scaled by 2^-112 has the half's exponent bias (15 = 127 - 112) and its low 13
// mantissa bits zero, so its bits shifted right by 13 are the half's (0 stays 0; no value is
// subnormal, so flushing denormals changes nothing).
template <typename I>
inline uint16_t ByteIntToHalfBits(I v) {
  const uint32_t u = FloatBits(static_cast<float>(v) * 0x1p-112f);
  return static_cast<uint16_t>(((u >> 16) & 0x8000u) | ((u >> 13) & 0x7fffu));
}

// binary16 -> int8/uint8, round to nearest even, saturating, NaN -> 0. The magnitude is capped
// at 256 (the same result after saturation), its bits rebiased into a float with the half's
// sign (a subnormal half becomes a float below 2^-14, which rounds to 0 either way), and rounded
// by adding 1.5 * 2^23: in [2^23, 2^24) a float's ulp is 1, so the sum is the nearest even
// integer, and its low 16 bits are that integer (|v| <= 256) in two's complement. The cap, the
// clamp and the NaN test are 16-bit operations, so the compiler runs them on 16-bit lanes.
template <typename I>
inline I HalfBitsToByteIntRint(uint16_t h) {
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23, bits 0x4b400000
  constexpr int16_t kLo = static_cast<I>(-1) < 0 ? -128 : 0;
  constexpr int16_t kHi = static_cast<I>(-1) < 0 ? 127 : 255;
  const uint16_t mag = h & 0x7fffu;
  const uint16_t capped = mag < 0x5c00u ? mag : uint16_t{0x5c00u};  // 0x5c00 is 256.0
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const float f = BitsFloat(((static_cast<uint32_t>(capped) << 13) + 0x38000000u) | sign);
  int16_t v = static_cast<int16_t>(FloatBits(f + kMagic));
  v = v < kLo ? kLo : v;
  v = v > kHi ? kHi : v;
  return mag > 0x7c00u ? I{0} : static_cast<I>(v);
}

#if CPU_ASCENDC_X86_LOOPS
#if !defined(__clang__)
#pragma GCC diagnostic push  // g++ 12's AVX-512 headers warn on their own _mm512_undefined operands
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// int8/uint8 -> half, 16 a step: widen to int32, convert to float and to half (exact: no
// rounding happens, so the rounding-mode operand does not matter).
template <typename I>
CPU_ASCENDC_AVX512 inline uint64_t Avx512ByteIntToHalf(uint16_t* d, const I* s, uint64_t n) {
  uint64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m512i wide =
        std::is_signed_v<I> ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes);
    const __m256i h =
        _mm512_cvtps_ph(_mm512_cvtepi32_ps(wide), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), h);
  }
  return i;
}
// half -> int8/uint8 (round to nearest even, saturating, NaN -> 0), 16 a step: widen to float
// (exact), clamp to the type's range, convert with round-to-nearest-even (the instruction's own
// rounding, whatever MXCSR says), narrow, and zero the NaN lanes.
template <typename I>
CPU_ASCENDC_AVX512 inline uint64_t Avx512HalfToByteIntRint(I* d, const uint16_t* s, uint64_t n) {
  const __m512 lo = _mm512_set1_ps(std::is_signed_v<I> ? -128.0f : 0.0f);
  const __m512 hi = _mm512_set1_ps(std::is_signed_v<I> ? 127.0f : 255.0f);
  uint64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 f = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i)));
    const __mmask16 number = _mm512_cmp_ps_mask(f, f, _CMP_ORD_Q);
    const __m512 clamped = _mm512_min_ps(_mm512_max_ps(f, lo), hi);
    const __m512i v =
        _mm512_cvt_roundps_epi32(clamped, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm512_maskz_cvtepi32_epi8(number, v));
  }
  return i;
}
#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

// The Cast loops: dst[i] = ByteIntToHalfBits(src[i]) / HalfBitsToByteIntRint(src[i]), i < n.
template <typename I>
inline void ByteIntToHalf(uint16_t* d, const I* s, uint64_t n, Isa isa = BestIsa()) {
#if CPU_ASCENDC_X86_LOOPS
  if (isa == Isa::kAvx512) {
    const uint64_t done = Avx512ByteIntToHalf(d, s, n);
    d += done, s += done, n -= done;
  }
#endif
  Map(d, s, n, [](I v) { return ByteIntToHalfBits(v); }, isa);
}
template <typename I>
inline void HalfToByteIntRint(I* d, const uint16_t* s, uint64_t n, Isa isa = BestIsa()) {
#if CPU_ASCENDC_X86_LOOPS
  if (isa == Isa::kAvx512) {
    const uint64_t done = Avx512HalfToByteIntRint(d, s, n);
    d += done, s += done, n -= done;
  }
#endif
  Map(d, s, n, [](uint16_t h) { return HalfBitsToByteIntRint<I>(h); }, isa);
}

// CompareScalar of binary16 against a binary16 scalar, in the integer domain. For a non-NaN half
// h, key(h) = h as int16, its magnitude bits flipped when negative, is non-decreasing in the
// value (-0 and +0 are the adjacent keys -1 and 0) and lies in [key(-inf), key(inf)] =
// [-0x7c01, 0x7c00]; a NaN's key lies outside. So "x <mode> t" is "key(x) in [lo, hi]" (or, for
// NE, not in it) for bounds found once per call from t's key: four integer ops an element.
inline int16_t HalfKey(uint16_t h) {
  const int16_t s = static_cast<int16_t>(h);
  return static_cast<int16_t>(s ^ ((s >> 15) & 0x7fff));
}
constexpr int32_t kHalfKeyMin = -0x7c01;  // key(-inf)
constexpr int32_t kHalfKeyMax = 0x7c00;   // key(+inf)
#if CPU_ASCENDC_X86_LOOPS
// The key range test of CompareHalf, 32 halves a step: the compare's mask register is the 32
// mask bits. Returns the elements done (a multiple of 32); the caller runs the rest.
CPU_ASCENDC_AVX512 inline uint64_t Avx512CompareHalfRange(uint8_t* d, const uint16_t* src,
                                                          uint64_t n, uint16_t base, uint16_t span,
                                                          bool outside) {
  const __m512i b = _mm512_set1_epi16(static_cast<short>(base));
  const __m512i sp = _mm512_set1_epi16(static_cast<short>(span));
  const __m512i magnitude = _mm512_set1_epi16(0x7fff);
  const uint32_t flip = outside ? 0xffffffffu : 0u;
  uint64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512i x = _mm512_loadu_si512(src + i);
    // x ^ ((x >> 15) & 0x7fff): HalfKey on 32 lanes.
    const __m512i key = _mm512_ternarylogic_epi32(x, _mm512_srai_epi16(x, 15), magnitude, 0x78);
    const uint32_t bits =
        static_cast<uint32_t>(_mm512_cmple_epu16_mask(_mm512_sub_epi16(key, b), sp)) ^ flip;
    std::memcpy(d + i / 8, &bits, sizeof bits);
  }
  return i;
}
#endif
inline void CompareHalf(uint8_t* d, const uint16_t* src, uint64_t n, AscendC::CMPMODE mode,
                        uint16_t t, Isa isa = BestIsa()) {
  using AscendC::CMPMODE;
  if ((t & 0x7fff) > 0x7c00) {  // nothing is ordered with NaN
    std::memset(d, mode == CMPMODE::NE ? 0xff : 0x00, n / 8);
    return;
  }
  // The keys of the halves equal to t: [key(-0), key(+0)] for a zero, else key(t) alone.
  const bool zero = (t & 0x7fff) == 0;
  const int32_t eq_lo = zero ? -1 : HalfKey(t), eq_hi = zero ? 0 : HalfKey(t);
  int32_t lo = kHalfKeyMin, hi = kHalfKeyMax;
  bool outside = false;  // NE: the complement of EQ's range (NaNs included)
  switch (mode) {
    case CMPMODE::LT:
      hi = eq_lo - 1;
      break;
    case CMPMODE::GT:
      lo = eq_hi + 1;
      break;
    case CMPMODE::EQ:
      lo = eq_lo, hi = eq_hi;
      break;
    case CMPMODE::LE:
      hi = eq_hi;
      break;
    case CMPMODE::GE:
      lo = eq_lo;
      break;
    case CMPMODE::NE:
      lo = eq_lo, hi = eq_hi, outside = true;
      break;
  }
  if (lo > hi) {  // an empty range: x < -inf or x > inf
    std::memset(d, 0x00, n / 8);
    return;
  }
  // lo <= key <= hi as one unsigned compare of key - lo against hi - lo.
  const uint16_t base = static_cast<uint16_t>(lo), span = static_cast<uint16_t>(hi - lo);
#if CPU_ASCENDC_X86_LOOPS
  if (isa == Isa::kAvx512) {
    const uint64_t done = Avx512CompareHalfRange(d, src, n, base, span, outside);
    if (done == n) return;
    d += done / 8, src += done, n -= done;
  }
#endif
  Mask(
      d, n,
      [=](uint64_t i) {
        return (static_cast<uint16_t>(HalfKey(src[i]) - base) <= span) != outside;
      },
      isa);
}

}  // namespace loops
}  // namespace cpu_ascendc
