// The element loops behind the vector-unit primitives, on raw pointers that vector_ops.h has
// already checked (alignment, extent, overlap): no checks and no per-element calls in here.
//
// Mask loops (CompareScalar, Select) come in four forms: `Scalar*` (portable, the reference),
// `Simd*` (SSE2, the x86-64 baseline: no -march needed), `Avx2*` (x86-64, used when the host
// CPU has AVX2) and, for float compares and selects, `Avx512*` (AVX-512 F+BW: the compare writes
// its mask register straight to the mask bytes and the select is one masked move, a quarter of
// the AVX2 instructions); the public entry points pick the best the build and the host allow.
// Element-wise loops (conversions, Maxs/Adds/...) are written branch-free so g++ -O3 vectorises
// them, and on x86-64 are compiled twice, for the baseline and for AVX2, picked at run time
// (`Isa`). Every form gives identical bits; tests/vector_loops_test.cpp runs them side by side.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ascendc_types.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#define CPU_ASCENDC_HAVE_SSE2 1
#else
#define CPU_ASCENDC_HAVE_SSE2 0
#endif

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define CPU_ASCENDC_HAVE_AVX2_CLONE 1
#else
#define CPU_ASCENDC_HAVE_AVX2_CLONE 0
#endif

namespace cpu_ascendc {
namespace loops {

// ---- Run-time choice of the instruction set for the element-wise loops. ----

// Ordered: kAvx512 implies AVX2 (the element-wise loops run their AVX2 build there).
enum class Isa { kBaseline, kAvx2, kAvx512 };

inline bool HostHasAvx2() {
#if CPU_ASCENDC_HAVE_AVX2_CLONE
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return has;
#else
  return false;
#endif
}
// AVX-512 F and BW (libgcc's check includes the OS saving the zmm / mask state).
inline bool HostHasAvx512() {
#if CPU_ASCENDC_HAVE_AVX2_CLONE
  static const bool has = [] {
    __builtin_cpu_init();
    return HostHasAvx2() && __builtin_cpu_supports("avx512f") != 0 && __builtin_cpu_supports("avx512bw") != 0;
  }();
  return has;
#else
  return false;
#endif
}
inline Isa BestIsa() { return HostHasAvx512() ? Isa::kAvx512 : HostHasAvx2() ? Isa::kAvx2 : Isa::kBaseline; }

// Runs `loop` (a lambda holding one element loop) compiled for `isa`: the lambda is inlined into
// a function built for that target, where g++ vectorises it with that target's vectors. Loop
// bodies copy what they capture into locals first: a byte store could otherwise alias the
// captured count and stop the vectoriser.
#if defined(__clang__)
#define CPU_ASCENDC_LOOP [&]()  // clang inlines a lambda called once; no GNU attribute syntax here
#else
#define CPU_ASCENDC_LOOP [&]() __attribute__((always_inline))
#endif
template <typename Loop>
inline void RunBaseline(const Loop& loop) {
  loop();
}
#if CPU_ASCENDC_HAVE_AVX2_CLONE
template <typename Loop>
__attribute__((target("avx2"))) __attribute__((noinline)) void RunAvx2(const Loop& loop) {
  loop();
}
#endif
template <typename Loop>
inline void RunFor(Isa isa, const Loop& loop) {
#if CPU_ASCENDC_HAVE_AVX2_CLONE
  if (isa >= Isa::kAvx2) {
    RunAvx2(loop);
    return;
  }
#endif
  (void)isa;
  RunBaseline(loop);
}

// dst[i] = f(src[i]) over distinct arrays, and in place (one pointer, so no restrict conflict).
template <typename D, typename S, typename F>
inline void MapDistinct(D* dst, const S* src, uint64_t n, F f, Isa isa = BestIsa()) {
  RunFor(isa, CPU_ASCENDC_LOOP {
    D* __restrict d = dst;
    const S* __restrict s = src;
    const uint64_t count = n;
    const F fn = f;
    for (uint64_t i = 0; i < count; ++i) d[i] = fn(s[i]);
  });
}
template <typename T, typename F>
inline void MapInPlace(T* p, uint64_t n, F f, Isa isa = BestIsa()) {
  RunFor(isa, CPU_ASCENDC_LOOP {
    T* const q = p;
    const uint64_t count = n;
    const F fn = f;
    for (uint64_t i = 0; i < count; ++i) q[i] = fn(q[i]);
  });
}
// dst[i] = f(x[i], y[i]); `alias` says which operands are one array (then read through dst).
enum class ZipAlias { kNone, kDstX, kDstY, kAll };
template <typename T, typename F>
inline void Zip(T* dst, const T* x, const T* y, uint64_t n, ZipAlias alias, F f, Isa isa = BestIsa()) {
  RunFor(isa, CPU_ASCENDC_LOOP {
    const uint64_t count = n;
    const F fn = f;
    switch (alias) {
      case ZipAlias::kAll: {
        T* const d = dst;
        for (uint64_t i = 0; i < count; ++i) d[i] = fn(d[i], d[i]);
        break;
      }
      case ZipAlias::kDstX: {
        T* __restrict d = dst;
        const T* __restrict b = y;
        for (uint64_t i = 0; i < count; ++i) d[i] = fn(d[i], b[i]);
        break;
      }
      case ZipAlias::kDstY: {
        T* __restrict d = dst;
        const T* __restrict a = x;
        for (uint64_t i = 0; i < count; ++i) d[i] = fn(a[i], d[i]);
        break;
      }
      case ZipAlias::kNone: {
        T* __restrict d = dst;
        const T* __restrict a = x;
        const T* __restrict b = y;
        for (uint64_t i = 0; i < count; ++i) d[i] = fn(a[i], b[i]);
        break;
      }
    }
  });
}

// ---- CompareScalar: dst bit i (LSB first) = src[i] <mode> t, for whole bytes (n % 8 == 0). ----

template <AscendC::CMPMODE kMode, typename C>
inline bool ComparePred(C v, C t) {
  using AscendC::CMPMODE;
  if constexpr (kMode == CMPMODE::LT) return v < t;
  if constexpr (kMode == CMPMODE::GT) return v > t;
  if constexpr (kMode == CMPMODE::EQ) return v == t;
  if constexpr (kMode == CMPMODE::LE) return v <= t;
  if constexpr (kMode == CMPMODE::GE) return v >= t;
  if constexpr (kMode == CMPMODE::NE) return v != t;
  return false;
}

template <AscendC::CMPMODE kMode, typename C>
inline void ScalarCompare(uint8_t* __restrict dst, const C* __restrict src, C t, uint64_t n) {
  for (uint64_t k = 0; k < n / 8; ++k) {
    uint8_t byte = 0;
    for (uint32_t j = 0; j < 8; ++j) byte |= static_cast<uint8_t>(ComparePred<kMode>(src[8 * k + j], t) << j);
    dst[k] = byte;
  }
}

#if CPU_ASCENDC_HAVE_SSE2
// The SSE2 compares have C++'s NaN semantics: ordered (false on NaN) except NE (true on NaN).
template <AscendC::CMPMODE kMode>
inline __m128 CmpPs(__m128 v, __m128 t) {
  using AscendC::CMPMODE;
  if constexpr (kMode == CMPMODE::LT) return _mm_cmplt_ps(v, t);
  if constexpr (kMode == CMPMODE::GT) return _mm_cmpgt_ps(v, t);
  if constexpr (kMode == CMPMODE::EQ) return _mm_cmpeq_ps(v, t);
  if constexpr (kMode == CMPMODE::LE) return _mm_cmple_ps(v, t);
  if constexpr (kMode == CMPMODE::GE) return _mm_cmpge_ps(v, t);
  return _mm_cmpneq_ps(v, t);
}
template <AscendC::CMPMODE kMode>
inline __m128d CmpPd(__m128d v, __m128d t) {
  using AscendC::CMPMODE;
  if constexpr (kMode == CMPMODE::LT) return _mm_cmplt_pd(v, t);
  if constexpr (kMode == CMPMODE::GT) return _mm_cmpgt_pd(v, t);
  if constexpr (kMode == CMPMODE::EQ) return _mm_cmpeq_pd(v, t);
  if constexpr (kMode == CMPMODE::LE) return _mm_cmple_pd(v, t);
  if constexpr (kMode == CMPMODE::GE) return _mm_cmpge_pd(v, t);
  return _mm_cmpneq_pd(v, t);
}

// src must be 16-byte aligned (UB operands are 32-byte aligned).
template <AscendC::CMPMODE kMode>
inline void SimdCompare(uint8_t* __restrict dst, const float* __restrict src, float t, uint64_t n) {
  const __m128 tv = _mm_set1_ps(t);
  for (uint64_t k = 0; k < n / 8; ++k) {
    const int lo = _mm_movemask_ps(CmpPs<kMode>(_mm_load_ps(src + 8 * k), tv));
    const int hi = _mm_movemask_ps(CmpPs<kMode>(_mm_load_ps(src + 8 * k + 4), tv));
    dst[k] = static_cast<uint8_t>(lo | (hi << 4));
  }
}
template <AscendC::CMPMODE kMode>
inline void SimdCompare(uint8_t* __restrict dst, const double* __restrict src, double t, uint64_t n) {
  const __m128d tv = _mm_set1_pd(t);
  for (uint64_t k = 0; k < n / 8; ++k) {
    int byte = 0;
    for (int j = 0; j < 4; ++j) byte |= _mm_movemask_pd(CmpPd<kMode>(_mm_load_pd(src + 8 * k + 2 * j), tv)) << (2 * j);
    dst[k] = static_cast<uint8_t>(byte);
  }
}
#endif

#if CPU_ASCENDC_HAVE_AVX2_CLONE
template <AscendC::CMPMODE kMode>
__attribute__((target("avx2"))) inline __m256 CmpPs256(__m256 v, __m256 t) {
  using AscendC::CMPMODE;
  if constexpr (kMode == CMPMODE::LT) return _mm256_cmp_ps(v, t, _CMP_LT_OQ);
  if constexpr (kMode == CMPMODE::GT) return _mm256_cmp_ps(v, t, _CMP_GT_OQ);
  if constexpr (kMode == CMPMODE::EQ) return _mm256_cmp_ps(v, t, _CMP_EQ_OQ);
  if constexpr (kMode == CMPMODE::LE) return _mm256_cmp_ps(v, t, _CMP_LE_OQ);
  if constexpr (kMode == CMPMODE::GE) return _mm256_cmp_ps(v, t, _CMP_GE_OQ);
  return _mm256_cmp_ps(v, t, _CMP_NEQ_UQ);  // true on NaN, like C++ !=
}
// One mask byte per 8 floats: compare, take the sign bits.
template <AscendC::CMPMODE kMode>
__attribute__((target("avx2"))) void Avx2Compare(uint8_t* __restrict dst, const float* __restrict src, float t,
                                                 uint64_t n) {
  const __m256 tv = _mm256_set1_ps(t);
  for (uint64_t k = 0; k < n / 8; ++k) {
    dst[k] = static_cast<uint8_t>(_mm256_movemask_ps(CmpPs256<kMode>(_mm256_loadu_ps(src + 8 * k), tv)));
  }
}

// The same predicates as CmpPs256 (ordered, NE unordered), straight into a mask register.
template <AscendC::CMPMODE kMode>
__attribute__((target("avx512f,avx512bw"))) inline __mmask16 CmpPsMask512(__m512 v, __m512 t) {
  using AscendC::CMPMODE;
  if constexpr (kMode == CMPMODE::LT) return _mm512_cmp_ps_mask(v, t, _CMP_LT_OQ);
  if constexpr (kMode == CMPMODE::GT) return _mm512_cmp_ps_mask(v, t, _CMP_GT_OQ);
  if constexpr (kMode == CMPMODE::EQ) return _mm512_cmp_ps_mask(v, t, _CMP_EQ_OQ);
  if constexpr (kMode == CMPMODE::LE) return _mm512_cmp_ps_mask(v, t, _CMP_LE_OQ);
  if constexpr (kMode == CMPMODE::GE) return _mm512_cmp_ps_mask(v, t, _CMP_GE_OQ);
  return _mm512_cmp_ps_mask(v, t, _CMP_NEQ_UQ);
}
// Two mask bytes per 16 floats (bit i = lane i, LSB first: the mask register's own order); an
// odd last byte goes through the AVX2 loop.
template <AscendC::CMPMODE kMode>
__attribute__((target("avx512f,avx512bw"))) void Avx512Compare(uint8_t* __restrict dst, const float* __restrict src,
                                                               float t, uint64_t n) {
  const __m512 tv = _mm512_set1_ps(t);
  uint64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const uint16_t bits = static_cast<uint16_t>(CmpPsMask512<kMode>(_mm512_loadu_ps(src + i), tv));
    std::memcpy(dst + i / 8, &bits, sizeof bits);
  }
  if (i < n) Avx2Compare<kMode>(dst + i / 8, src + i, t, n - i);
}
#endif

// float / double operands. half goes through CompareHalfBits.
template <AscendC::CMPMODE kMode, typename C>
inline void CompareBits(uint8_t* __restrict dst, const C* __restrict src, C t, uint64_t n, Isa isa = BestIsa()) {
#if CPU_ASCENDC_HAVE_AVX2_CLONE
  if constexpr (std::is_same_v<C, float>) {
    if (isa == Isa::kAvx512) {
      Avx512Compare<kMode>(dst, src, t, n);
      return;
    }
    if (isa == Isa::kAvx2) {
      Avx2Compare<kMode>(dst, src, t, n);
      return;
    }
  }
#endif
  (void)isa;
#if CPU_ASCENDC_HAVE_SSE2
  SimdCompare<kMode>(dst, src, t, n);
#else
  ScalarCompare<kMode>(dst, src, t, n);
#endif
}

// ---- Block copies (DataCopy's MTE2 / MTE3 moves between GM and UB). ----
// A tile is a few KiB. With AVX-512, plain 64-byte loads and stores, four lines a step (glibc's
// memcpy takes `rep movsb` at these sizes, measured ~20% slower for the host's L1-sized tiles).
// No software prefetch: with two input tiles copied back to back, the hardware's stream
// prefetchers keep up, and an extra prefetch a KiB ahead measured 10-30% slower from L3/DRAM
// (benchmarks/README.md). Distinct, non-overlapping ranges.
//
// StreamCopyBytes is the same copy with non-temporal stores, for UB -> GM moves of an output
// that nothing in the launch reads again: the lines go to memory without first being read for
// ownership (a third less memory traffic for a store-bound stream) and without evicting the
// inputs from the caches. Non-temporal stores are weakly ordered: the core calls StoreFence()
// once when its block ends (a fence per tile stalls on the write-combining buffers), before
// anything tells another thread the block has finished.

#if CPU_ASCENDC_HAVE_AVX2_CLONE
template <bool kStream>
__attribute__((target("avx512f"))) inline void Avx512CopyBytes(void* __restrict dst, const void* __restrict src,
                                                               uint64_t bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  uint64_t i = 0;
  if constexpr (kStream) {  // streaming stores need 64-byte aligned destinations
    const uint64_t head = (64 - (reinterpret_cast<uintptr_t>(d) & 63)) & 63;
    i = head < bytes ? head : bytes;
    std::memcpy(d, s, i);
  }
  for (; i + 256 <= bytes; i += 256) {
    const __m512i a = _mm512_loadu_si512(s + i), b = _mm512_loadu_si512(s + i + 64);
    const __m512i c = _mm512_loadu_si512(s + i + 128), e = _mm512_loadu_si512(s + i + 192);
    if constexpr (kStream) {
      _mm512_stream_si512(reinterpret_cast<__m512i*>(d + i), a);
      _mm512_stream_si512(reinterpret_cast<__m512i*>(d + i + 64), b);
      _mm512_stream_si512(reinterpret_cast<__m512i*>(d + i + 128), c);
      _mm512_stream_si512(reinterpret_cast<__m512i*>(d + i + 192), e);
    } else {
      _mm512_storeu_si512(d + i, a);
      _mm512_storeu_si512(d + i + 64, b);
      _mm512_storeu_si512(d + i + 128, c);
      _mm512_storeu_si512(d + i + 192, e);
    }
  }
  if constexpr (kStream) {
    for (; i + 64 <= bytes; i += 64) _mm512_stream_si512(reinterpret_cast<__m512i*>(d + i), _mm512_loadu_si512(s + i));
  }
  if (i < bytes) std::memcpy(d + i, s + i, bytes - i);
}
#endif

#if CPU_ASCENDC_HAVE_SSE2
// The baseline streaming copy: 16-byte non-temporal stores.
inline void SimdStreamCopyBytes(void* __restrict dst, const void* __restrict src, uint64_t bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  const uint64_t head = (16 - (reinterpret_cast<uintptr_t>(d) & 15)) & 15;
  uint64_t i = head < bytes ? head : bytes;
  std::memcpy(d, s, i);
  for (; i + 16 <= bytes; i += 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
  }
  if (i < bytes) std::memcpy(d + i, s + i, bytes - i);
}
#endif

inline void StoreFence() {
#if CPU_ASCENDC_HAVE_SSE2
  _mm_sfence();
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

inline void CopyBytes(void* __restrict dst, const void* __restrict src, uint64_t bytes, Isa isa = BestIsa()) {
#if CPU_ASCENDC_HAVE_AVX2_CLONE
  if (isa == Isa::kAvx512) {
    Avx512CopyBytes<false>(dst, src, bytes);
    return;
  }
#endif
  (void)isa;
  std::memcpy(dst, src, bytes);
}

inline void StreamCopyBytes(void* __restrict dst, const void* __restrict src, uint64_t bytes, Isa isa = BestIsa()) {
#if CPU_ASCENDC_HAVE_AVX2_CLONE
  if (isa == Isa::kAvx512) {
    Avx512CopyBytes<true>(dst, src, bytes);
    return;
  }
#endif
  (void)isa;
#if CPU_ASCENDC_HAVE_SSE2
  SimdStreamCopyBytes(dst, src, bytes);
#else
  std::memcpy(dst, src, bytes);
#endif
}

// ---- Conversions (branch-free, vectorised by g++). ----

inline void HalfToFloat(float* dst, const uint16_t* src, uint64_t n, Isa isa = BestIsa()) {
  MapDistinct(dst, src, n, [](uint16_t h) { return HalfBitsToFloat(h); }, isa);
}

inline void Bf16ToFloat(float* dst, const uint16_t* src, uint64_t n, Isa isa = BestIsa()) {
  MapDistinct(dst, src, n, [](uint16_t b) { return Bf16BitsToFloat(b); }, isa);
}

// A byte integer to binary16 bits, exactly (|v| <= 255 needs 8 significant bits of the 11):
// through float, whose exponent rebiases and whose low 13 mantissa bits are zero.
template <typename I>
inline uint16_t ByteIntToHalfBits(I v) {
  const uint32_t u = FloatBits(static_cast<float>(v));
  const uint32_t mag = u & 0x7fffffffu;
  const uint32_t bits = mag == 0 ? 0u : (mag >> 13) - ((127u - 15u) << 10);
  return static_cast<uint16_t>(bits | ((u >> 16) & 0x8000u));
}

#if CPU_ASCENDC_HAVE_AVX2_CLONE
inline bool HostHasF16c() {
  static const bool has = [] {
    __builtin_cpu_init();
#if defined(__clang__) && __clang_major__ < 15
    return __builtin_cpu_supports("avx2") != 0;  // clang 14 knows no "f16c"; AVX2 CPUs have it
#else
    return __builtin_cpu_supports("f16c") != 0;
#endif
  }();
  return has;
}
// Through the F16C converter: int -> float -> half is exact for |v| <= 255.
template <typename I>
__attribute__((target("avx2,f16c"))) void F16cByteIntToHalf(uint16_t* dst, const I* src, uint64_t n) {
  uint64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m128i b_hi = _mm_srli_si128(b, 8);
    const __m256i lo = std::is_signed_v<I> ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
    const __m256i hi = std::is_signed_v<I> ? _mm256_cvtepi8_epi32(b_hi) : _mm256_cvtepu8_epi32(b_hi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(_mm256_cvtepi32_ps(lo), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i + 8),
                     _mm256_cvtps_ph(_mm256_cvtepi32_ps(hi), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  for (; i < n; ++i) dst[i] = ByteIntToHalfBits(src[i]);
}
#endif

#if CPU_ASCENDC_HAVE_AVX2_CLONE
// The same conversion, 16 lanes a step in one 512-bit register (AVX-512F has the half converts).
template <typename I>
__attribute__((target("avx512f"))) void Avx512ByteIntToHalf(uint16_t* dst, const I* src, uint64_t n) {
  uint64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m512i w = std::is_signed_v<I> ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                        _mm512_cvtps_ph(_mm512_cvtepi32_ps(w), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  for (; i < n; ++i) dst[i] = ByteIntToHalfBits(src[i]);
}
#endif

#if CPU_ASCENDC_HAVE_AVX2_CLONE
// AVX-512 VBMI (Ice Lake, Zen 4 and later): byte permutes with a 7-bit index.
inline bool HostHasAvx512Vbmi() {
  static const bool has = [] {
    __builtin_cpu_init();
    return HostHasAvx512() && __builtin_cpu_supports("avx512vbmi") != 0;
  }();
  return has;
}

// The 256 results of a byte -> half conversion as two byte tables (low and high byte of the
// half), and the input order that makes the final byte interleave come out in element order.
template <typename I>
struct ByteToHalfTables {
  alignas(64) uint8_t lo[256];
  alignas(64) uint8_t hi[256];
  alignas(64) uint8_t order[64];
  ByteToHalfTables() {
    for (int b = 0; b < 256; ++b) {
      const uint16_t h = ByteIntToHalfBits(static_cast<I>(static_cast<uint8_t>(b)));
      lo[b] = static_cast<uint8_t>(h & 0xff);
      hi[b] = static_cast<uint8_t>(h >> 8);
    }
    // unpacklo/unpackhi interleave bytes 0-7 / 8-15 of each 128-bit lane: lane j must hold
    // elements 8j..8j+7, then 32+8j..32+8j+7.
    for (int j = 0; j < 4; ++j) {
      for (int k = 0; k < 8; ++k) {
        order[16 * j + k] = static_cast<uint8_t>(8 * j + k);
        order[16 * j + 8 + k] = static_cast<uint8_t>(32 + 8 * j + k);
      }
    }
  }
};

// The same conversion as a table lookup, 64 lanes a step: each byte indexes the 256-entry tables
// (two 128-entry permutes, picked by the index's top bit) for the half's low and high bytes. No
// floating-point op: 1.7x the converts' speed (104 -> 61 ns per 2048 elements on Zen 4), where
// int8's widening is ~18% of its kernel.
template <typename I>
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void Avx512VbmiByteIntToHalf(uint16_t* dst, const I* src,
                                                                                   uint64_t n) {
  static const ByteToHalfTables<I> t;
  const __m512i lo0 = _mm512_load_si512(t.lo), lo1 = _mm512_load_si512(t.lo + 64);
  const __m512i lo2 = _mm512_load_si512(t.lo + 128), lo3 = _mm512_load_si512(t.lo + 192);
  const __m512i hi0 = _mm512_load_si512(t.hi), hi1 = _mm512_load_si512(t.hi + 64);
  const __m512i hi2 = _mm512_load_si512(t.hi + 128), hi3 = _mm512_load_si512(t.hi + 192);
  const __m512i order = _mm512_load_si512(t.order);
  uint64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i idx = _mm512_permutexvar_epi8(order, _mm512_loadu_si512(src + i));
    const __mmask64 upper = _mm512_movepi8_mask(idx);  // index >= 128
    const __m512i lo = _mm512_mask_blend_epi8(upper, _mm512_permutex2var_epi8(lo0, idx, lo1),
                                              _mm512_permutex2var_epi8(lo2, idx, lo3));
    const __m512i hi = _mm512_mask_blend_epi8(upper, _mm512_permutex2var_epi8(hi0, idx, hi1),
                                              _mm512_permutex2var_epi8(hi2, idx, hi3));
    _mm512_storeu_si512(dst + i, _mm512_unpacklo_epi8(lo, hi));
    _mm512_storeu_si512(dst + i + 32, _mm512_unpackhi_epi8(lo, hi));
  }
  for (; i < n; ++i) dst[i] = ByteIntToHalfBits(src[i]);
}
#endif

template <typename I>
inline void ByteIntToHalf(uint16_t* dst, const I* src, uint64_t n, Isa isa = BestIsa()) {
#if CPU_ASCENDC_HAVE_AVX2_CLONE
  if (isa == Isa::kAvx512) {
    if (HostHasAvx512Vbmi()) {
      Avx512VbmiByteIntToHalf(dst, src, n);
    } else {
      Avx512ByteIntToHalf(dst, src, n);
    }
    return;
  }
  if (isa >= Isa::kAvx2 && HostHasF16c()) {
    F16cByteIntToHalf(dst, src, n);
    return;
  }
#endif
  MapDistinct(dst, src, n, [](I v) { return ByteIntToHalfBits(v); }, isa);
}

// binary16 -> int8/uint8, round to nearest even, saturating, NaN -> 0. The value is clamped to
// the integer range first (same result: the bounds are integers), then rounded by adding
// 1.5 * 2^23: in [2^23, 2^24) a float's ulp is 1, so the sum rounds to the nearest even integer
// and its low mantissa bits are that integer in two's complement.
template <typename I>
inline I HalfBitsToByteIntRint(uint16_t h) {
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23, bits 0x4b400000
  constexpr float kLo = static_cast<float>(std::is_signed_v<I> ? -128 : 0);
  constexpr float kHi = static_cast<float>(std::is_signed_v<I> ? 127 : 255);
  float f = HalfBitsToFloat(h);
  f = f == f ? f : 0.0f;
  f = f < kLo ? kLo : f;
  f = f > kHi ? kHi : f;
  return static_cast<I>(FloatBits(f + kMagic) - 0x4b400000u);
}

#if CPU_ASCENDC_HAVE_AVX2_CLONE
// Same steps on 16 lanes: widen exactly (F16C), NaN -> 0, clamp, round to nearest even, pack
// (the clamped values fit, so the saturating packs never saturate).
template <typename I>
__attribute__((target("avx2,f16c"))) void F16cHalfToByteIntRint(I* dst, const uint16_t* src, uint64_t n) {
  const __m256 lo = _mm256_set1_ps(static_cast<float>(std::is_signed_v<I> ? -128 : 0));
  const __m256 hi = _mm256_set1_ps(static_cast<float>(std::is_signed_v<I> ? 127 : 255));
  uint64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 fa = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
    __m256 fb = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 8)));
    fa = _mm256_and_ps(fa, _mm256_cmp_ps(fa, fa, _CMP_ORD_Q));
    fb = _mm256_and_ps(fb, _mm256_cmp_ps(fb, fb, _CMP_ORD_Q));
    fa = _mm256_min_ps(_mm256_max_ps(fa, lo), hi);
    fb = _mm256_min_ps(_mm256_max_ps(fb, lo), hi);
    // Nearest even under the default MXCSR rounding (as the scalar form's float add assumes).
    const __m256i a = _mm256_cvtps_epi32(fa);
    const __m256i b = _mm256_cvtps_epi32(fb);
    const __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(a, b), 0xd8);  // 16 x int16, in order
    const __m128i w0 = _mm256_castsi256_si128(w), w1 = _mm256_extracti128_si256(w, 1);
    const __m128i bytes = std::is_signed_v<I> ? _mm_packs_epi16(w0, w1) : _mm_packus_epi16(w0, w1);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), bytes);
  }
  for (; i < n; ++i) dst[i] = HalfBitsToByteIntRint<I>(src[i]);
}
#endif

#if CPU_ASCENDC_HAVE_AVX2_CLONE
// The same steps on 16 lanes of one 512-bit register; the clamped values fit, so the saturating
// narrowing never saturates.
template <typename I>
__attribute__((target("avx512f"))) void Avx512HalfToByteIntRint(I* dst, const uint16_t* src, uint64_t n) {
  const __m512 lo = _mm512_set1_ps(static_cast<float>(std::is_signed_v<I> ? -128 : 0));
  const __m512 hi = _mm512_set1_ps(static_cast<float>(std::is_signed_v<I> ? 127 : 255));
  uint64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 f = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
    f = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(f, f, _CMP_ORD_Q), f);  // NaN -> 0
    f = _mm512_min_ps(_mm512_max_ps(f, lo), hi);
    const __m512i v = _mm512_cvtps_epi32(f);  // nearest even under the default MXCSR rounding
    const __m128i bytes = std::is_signed_v<I> ? _mm512_cvtsepi32_epi8(v) : _mm512_cvtusepi32_epi8(v);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), bytes);
  }
  for (; i < n; ++i) dst[i] = HalfBitsToByteIntRint<I>(src[i]);
}
#endif

template <typename I>
inline void HalfToByteIntRint(I* dst, const uint16_t* src, uint64_t n, Isa isa = BestIsa()) {
#if CPU_ASCENDC_HAVE_AVX2_CLONE
  if (isa == Isa::kAvx512) {
    Avx512HalfToByteIntRint(dst, src, n);
    return;
  }
  if (isa >= Isa::kAvx2 && HostHasF16c()) {
    F16cHalfToByteIntRint(dst, src, n);
    return;
  }
#endif
  MapDistinct(dst, src, n, [](uint16_t h) { return HalfBitsToByteIntRint<I>(h); }, isa);
}

// ---- CompareScalar on binary16 against a float threshold, without widening. ----
// For a non-NaN half, key = +-magnitude bits (both zeros -> 0) is strictly monotone in its value,
// so `x <mode> t` becomes an int16 compare against the keys of the halves next to t: le = the
// largest key whose value is <= t, ge = the smallest whose value is >= t (found once per call).
// NaN x compares false except for NE; a NaN t makes every compare false except NE.

inline int32_t HalfKey(uint16_t h) {
  const int32_t mag = h & 0x7fff;
  return h & 0x8000 ? -mag : mag;
}
inline uint16_t KeyHalf(int32_t key) {
  return static_cast<uint16_t>(key < 0 ? 0x8000 | -key : key);
}

struct HalfKeyBounds {
  int32_t le;  // -0x7c01 when no half is <= t
  int32_t ge;  // 0x7c01 when no half is >= t
};

inline HalfKeyBounds HalfThresholdKeys(float t) {
  constexpr int32_t kInf = 0x7c00;
  HalfKeyBounds b{-kInf - 1, kInf + 1};
  if (t != t) return b;  // no half is ordered with NaN (callers special-case it)
  // Binary search for the last key in [-inf, inf] whose value is <= t.
  int32_t lo = -kInf - 1, hi = kInf;  // invariant: value(lo) <= t (lo = -kInf-1 is "none"), value(hi+1) > t
  if (HalfBitsToFloat(KeyHalf(kInf)) <= t) {
    lo = kInf;
  } else {
    while (lo < hi) {
      const int32_t mid = lo + (hi - lo + 1) / 2;
      if (HalfBitsToFloat(KeyHalf(mid)) <= t) lo = mid; else hi = mid - 1;
    }
  }
  b.le = lo;
  b.ge = lo >= -kInf && HalfBitsToFloat(KeyHalf(lo)) == t ? lo : lo + 1;
  return b;
}

// HalfThresholdKeys for the threshold this thread used last: a kernel compares every chunk of
// every tile against the same threshold, and the search costs about as much as a 2048-element
// compare.
inline HalfKeyBounds CachedHalfThresholdKeys(float t) {
  struct Memo {
    uint32_t bits;
    bool valid;
    HalfKeyBounds bounds;
  };
  thread_local Memo memo{0, false, {0, 0}};
  const uint32_t bits = FloatBits(t);
  if (!memo.valid || memo.bits != bits) memo = Memo{bits, true, HalfThresholdKeys(t)};
  return memo.bounds;
}

// Reference form: widen each half to float and compare, as the hardware defines it.
template <AscendC::CMPMODE kMode>
inline void ScalarCompareHalf(uint8_t* __restrict dst, const uint16_t* __restrict src, float t, uint64_t n) {
  for (uint64_t k = 0; k < n / 8; ++k) {
    uint8_t byte = 0;
    for (uint32_t j = 0; j < 8; ++j) {
      byte |= static_cast<uint8_t>(ComparePred<kMode>(HalfBitsToFloat(src[8 * k + j]), t) << j);
    }
    dst[k] = byte;
  }
}

#if CPU_ASCENDC_HAVE_SSE2
template <AscendC::CMPMODE kMode>
inline void SimdCompareHalf(uint8_t* __restrict dst, const uint16_t* __restrict src, float t, uint64_t n) {
  using AscendC::CMPMODE;
  if (t != t) {
    std::memset(dst, kMode == CMPMODE::NE ? 0xff : 0x00, n / 8);
    return;
  }
  const HalfKeyBounds b = CachedHalfThresholdKeys(t);
  // Bounds clamp into int16: keys span [-0x7fff, 0x7fff] but NaN keys are masked out anyway.
  const __m128i le = _mm_set1_epi16(static_cast<short>(b.le));
  const __m128i ge_minus1 = _mm_set1_epi16(static_cast<short>(b.ge - 1));
  const __m128i inf = _mm_set1_epi16(0x7c00);
  const __m128i mag_mask = _mm_set1_epi16(0x7fff);
  for (uint64_t k = 0; k < n / 8; ++k) {
    const __m128i h = _mm_load_si128(reinterpret_cast<const __m128i*>(src + 8 * k));
    const __m128i mag = _mm_and_si128(h, mag_mask);
    const __m128i neg = _mm_srai_epi16(h, 15);
    const __m128i key = _mm_sub_epi16(_mm_xor_si128(mag, neg), neg);
    const __m128i nan = _mm_cmpgt_epi16(mag, inf);
    const __m128i above_le = _mm_cmpgt_epi16(key, le);          // k > le
    const __m128i at_least_ge = _mm_cmpgt_epi16(key, ge_minus1);  // k >= ge
    __m128i r;
    if constexpr (kMode == CMPMODE::GT) r = _mm_andnot_si128(nan, above_le);
    if constexpr (kMode == CMPMODE::LE) r = _mm_andnot_si128(_mm_or_si128(nan, above_le), _mm_set1_epi16(-1));
    if constexpr (kMode == CMPMODE::LT) r = _mm_andnot_si128(_mm_or_si128(nan, at_least_ge), _mm_set1_epi16(-1));
    if constexpr (kMode == CMPMODE::GE) r = _mm_andnot_si128(nan, at_least_ge);
    if constexpr (kMode == CMPMODE::EQ) r = _mm_andnot_si128(_mm_or_si128(nan, above_le), at_least_ge);
    if constexpr (kMode == CMPMODE::NE) r = _mm_or_si128(nan, _mm_andnot_si128(at_least_ge, _mm_set1_epi16(-1)));
    if constexpr (kMode == CMPMODE::NE) r = _mm_or_si128(r, above_le);
    dst[k] = static_cast<uint8_t>(_mm_movemask_epi8(_mm_packs_epi16(r, r)));
  }
}
#endif

#if CPU_ASCENDC_HAVE_AVX2_CLONE
// SimdCompareHalf on 16 halves (two mask bytes) per step; the last odd byte goes through SSE2.
template <AscendC::CMPMODE kMode>
__attribute__((target("avx2"))) void Avx2CompareHalf(uint8_t* __restrict dst, const uint16_t* __restrict src,
                                                     float t, uint64_t n) {
  using AscendC::CMPMODE;
  if (t != t) {
    std::memset(dst, kMode == CMPMODE::NE ? 0xff : 0x00, n / 8);
    return;
  }
  const HalfKeyBounds b = CachedHalfThresholdKeys(t);
  const __m256i le = _mm256_set1_epi16(static_cast<short>(b.le));
  const __m256i ge_minus1 = _mm256_set1_epi16(static_cast<short>(b.ge - 1));
  const __m256i inf = _mm256_set1_epi16(0x7c00);
  const __m256i mag_mask = _mm256_set1_epi16(0x7fff);
  const __m256i ones = _mm256_set1_epi16(-1);
  uint64_t k = 0;
  for (; k + 2 <= n / 8; k += 2) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 8 * k));
    const __m256i mag = _mm256_and_si256(h, mag_mask);
    const __m256i neg = _mm256_srai_epi16(h, 15);
    const __m256i key = _mm256_sub_epi16(_mm256_xor_si256(mag, neg), neg);
    const __m256i nan = _mm256_cmpgt_epi16(mag, inf);
    const __m256i above_le = _mm256_cmpgt_epi16(key, le);
    const __m256i at_least_ge = _mm256_cmpgt_epi16(key, ge_minus1);
    __m256i r;
    if constexpr (kMode == CMPMODE::GT) r = _mm256_andnot_si256(nan, above_le);
    if constexpr (kMode == CMPMODE::LE) r = _mm256_andnot_si256(_mm256_or_si256(nan, above_le), ones);
    if constexpr (kMode == CMPMODE::LT) r = _mm256_andnot_si256(_mm256_or_si256(nan, at_least_ge), ones);
    if constexpr (kMode == CMPMODE::GE) r = _mm256_andnot_si256(nan, at_least_ge);
    if constexpr (kMode == CMPMODE::EQ) r = _mm256_andnot_si256(_mm256_or_si256(nan, above_le), at_least_ge);
    if constexpr (kMode == CMPMODE::NE) {
      r = _mm256_or_si256(_mm256_or_si256(nan, _mm256_andnot_si256(at_least_ge, ones)), above_le);
    }
    const __m128i packed = _mm_packs_epi16(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    const uint16_t bits = static_cast<uint16_t>(_mm_movemask_epi8(packed));
    dst[k] = static_cast<uint8_t>(bits);
    dst[k + 1] = static_cast<uint8_t>(bits >> 8);
  }
  if (k < n / 8) SimdCompareHalf<kMode>(dst + k, src + 8 * k, t, n - 8 * k);
}
#endif

#if CPU_ASCENDC_HAVE_AVX2_CLONE
// The same key compares on 32 halves (four mask bytes) per step, straight into mask registers;
// the last bytes that do not fill a step go through the AVX2 loop.
template <AscendC::CMPMODE kMode>
__attribute__((target("avx512f,avx512bw"))) void Avx512CompareHalf(uint8_t* __restrict dst,
                                                                   const uint16_t* __restrict src, float t,
                                                                   uint64_t n) {
  using AscendC::CMPMODE;
  if (t != t) {
    std::memset(dst, kMode == CMPMODE::NE ? 0xff : 0x00, n / 8);
    return;
  }
  const HalfKeyBounds b = CachedHalfThresholdKeys(t);
  const __m512i le = _mm512_set1_epi16(static_cast<short>(b.le));
  const __m512i ge_minus1 = _mm512_set1_epi16(static_cast<short>(b.ge - 1));
  const __m512i inf = _mm512_set1_epi16(0x7c00);
  const __m512i mag_mask = _mm512_set1_epi16(0x7fff);
  uint64_t k = 0;
  for (; k + 4 <= n / 8; k += 4) {
    const __m512i h = _mm512_loadu_si512(src + 8 * k);
    const __m512i mag = _mm512_and_si512(h, mag_mask);
    const __m512i neg = _mm512_srai_epi16(h, 15);
    const __m512i key = _mm512_sub_epi16(_mm512_xor_si512(mag, neg), neg);
    const uint32_t nan = _mm512_cmpgt_epi16_mask(mag, inf);
    const uint32_t above_le = _mm512_cmpgt_epi16_mask(key, le);
    const uint32_t at_least_ge = _mm512_cmpgt_epi16_mask(key, ge_minus1);
    uint32_t r = 0;
    if constexpr (kMode == CMPMODE::GT) r = ~nan & above_le;
    if constexpr (kMode == CMPMODE::LE) r = ~(nan | above_le);
    if constexpr (kMode == CMPMODE::LT) r = ~(nan | at_least_ge);
    if constexpr (kMode == CMPMODE::GE) r = ~nan & at_least_ge;
    if constexpr (kMode == CMPMODE::EQ) r = ~(nan | above_le) & at_least_ge;
    if constexpr (kMode == CMPMODE::NE) r = nan | ~at_least_ge | above_le;
    std::memcpy(dst + k, &r, sizeof r);
  }
  if (k < n / 8) Avx2CompareHalf<kMode>(dst + k, src + 8 * k, t, n - 8 * k);
}
#endif

template <AscendC::CMPMODE kMode>
inline void CompareHalfBits(uint8_t* __restrict dst, const uint16_t* __restrict src, float t, uint64_t n,
                            Isa isa = BestIsa()) {
#if CPU_ASCENDC_HAVE_AVX2_CLONE
  if (isa == Isa::kAvx512) {
    Avx512CompareHalf<kMode>(dst, src, t, n);
    return;
  }
  if (isa >= Isa::kAvx2) {
    Avx2CompareHalf<kMode>(dst, src, t, n);
    return;
  }
#endif
  (void)isa;
#if CPU_ASCENDC_HAVE_SSE2
  SimdCompareHalf<kMode>(dst, src, t, n);
#else
  ScalarCompareHalf<kMode>(dst, src, t, n);
#endif
}

// ---- Compares of a widened operand straight from its narrow bits: bit i = widen(src[i]) <cmp>
// t, the bits a Cast to float (bfloat16) or half (int8 / uint8, exact) and a CompareScalar
// against t give, with no widened copy in between (cpu_ascendc/deferred_vector_op.h). n is a
// multiple of 8. The AVX-512 forms are the ones used; the scalar forms are the reference and
// the fallback. ----

// The reference form: bit i = widen(src[i]) <cmp> t.
template <AscendC::CMPMODE kMode, typename S, typename Widen>
inline void ScalarCompareWidened(uint8_t* __restrict dst, const S* __restrict src, float t, uint64_t n, Widen widen) {
  for (uint64_t k = 0; k < n / 8; ++k) {
    uint8_t byte = 0;
    for (uint32_t j = 0; j < 8; ++j) byte |= static_cast<uint8_t>(ComparePred<kMode>(widen(src[8 * k + j]), t) << j);
    dst[k] = byte;
  }
}
template <AscendC::CMPMODE kMode>
inline void ScalarCompareBf16(uint8_t* __restrict dst, const uint16_t* __restrict src, float t, uint64_t n) {
  ScalarCompareWidened<kMode>(dst, src, t, n, [](uint16_t b) { return Bf16BitsToFloat(b); });
}
template <AscendC::CMPMODE kMode, typename I>
inline void ScalarCompareByteInt(uint8_t* __restrict dst, const I* __restrict src, float t, uint64_t n) {
  ScalarCompareWidened<kMode>(dst, src, t, n, [](I v) { return static_cast<float>(v); });
}

#if CPU_ASCENDC_HAVE_AVX2_CLONE
// 16 elements a step, widened in a register (bfloat16: its bits are a float's high half); an odd
// last mask byte goes through the scalar form.
template <AscendC::CMPMODE kMode>
__attribute__((target("avx512f,avx512bw"))) void Avx512CompareBf16(uint8_t* __restrict dst,
                                                                   const uint16_t* __restrict src, float t,
                                                                   uint64_t n) {
  const __m512 tv = _mm512_set1_ps(t);
  uint64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i wide =
        _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i))), 16);
    const uint16_t bits = static_cast<uint16_t>(CmpPsMask512<kMode>(_mm512_castsi512_ps(wide), tv));
    std::memcpy(dst + i / 8, &bits, sizeof bits);
  }
  if (i < n) ScalarCompareBf16<kMode>(dst + i / 8, src + i, t, n - i);
}
template <AscendC::CMPMODE kMode, typename I>
__attribute__((target("avx512f,avx512bw"))) void Avx512CompareByteInt(uint8_t* __restrict dst,
                                                                      const I* __restrict src, float t, uint64_t n) {
  const __m512 tv = _mm512_set1_ps(t);
  uint64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m512i wide = std::is_signed_v<I> ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes);
    const uint16_t bits = static_cast<uint16_t>(CmpPsMask512<kMode>(_mm512_cvtepi32_ps(wide), tv));
    std::memcpy(dst + i / 8, &bits, sizeof bits);
  }
  if (i < n) ScalarCompareByteInt<kMode>(dst + i / 8, src + i, t, n - i);
}
#endif

template <AscendC::CMPMODE kMode>
inline void CompareBf16Bits(uint8_t* __restrict dst, const uint16_t* __restrict src, float t, uint64_t n,
                            Isa isa = BestIsa()) {
#if CPU_ASCENDC_HAVE_AVX2_CLONE
  if (isa == Isa::kAvx512) {
    Avx512CompareBf16<kMode>(dst, src, t, n);
    return;
  }
#endif
  (void)isa;
  ScalarCompareBf16<kMode>(dst, src, t, n);
}
template <AscendC::CMPMODE kMode, typename I>
inline void CompareByteIntBits(uint8_t* __restrict dst, const I* __restrict src, float t, uint64_t n,
                               Isa isa = BestIsa()) {
  static_assert(std::is_same_v<I, int8_t> || std::is_same_v<I, uint8_t>, "byte integers");
#if CPU_ASCENDC_HAVE_AVX2_CLONE
  if (isa == Isa::kAvx512) {
    Avx512CompareByteInt<kMode>(dst, src, t, n);
    return;
  }
#endif
  (void)isa;
  ScalarCompareByteInt<kMode>(dst, src, t, n);
}

// ---- Select (VSEL_TENSOR_SCALAR_MODE) on element bits: dst[i] = bit i ? src[i] : fill. ----
// dst may equal src (in place); then both name the same memory, so no restrict here.

template <typename B>
inline void ScalarSelect(B* dst, const uint8_t* __restrict mask, const B* src, B fill, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    const B keep = (mask[i / 8] >> (i % 8)) & 1u ? static_cast<B>(~B{0}) : B{0};
    dst[i] = static_cast<B>((src[i] & keep) | (fill & static_cast<B>(~keep)));
  }
}

#if CPU_ASCENDC_HAVE_SSE2
// Whole mask bytes; dst and src 16-byte aligned. Each byte is broadcast to the lanes it covers and
// each lane tests its own bit, giving all-ones / all-zeros lane masks for an and/andnot blend.
template <typename B>
inline void SimdSelect(B* dst, const uint8_t* __restrict mask, const B* src, B fill, uint64_t bytes) {
  static_assert(sizeof(B) == 2 || sizeof(B) == 4 || sizeof(B) == 8, "16/32/64-bit lanes");
  constexpr int kVecs = static_cast<int>(sizeof(B)) / 2;  // 16-byte vectors per 8 elements
  __m128i bit[kVecs];  // lane bit patterns: 64-bit lanes test their bit in both 32-bit halves
  __m128i fillv;
  if constexpr (sizeof(B) == 2) {
    bit[0] = _mm_setr_epi16(1, 2, 4, 8, 16, 32, 64, 128);
    fillv = _mm_set1_epi16(static_cast<short>(fill));
  } else if constexpr (sizeof(B) == 4) {
    bit[0] = _mm_setr_epi32(1, 2, 4, 8);
    bit[1] = _mm_setr_epi32(16, 32, 64, 128);
    fillv = _mm_set1_epi32(static_cast<int>(fill));
  } else {
    for (int v = 0; v < 4; ++v) bit[v] = _mm_setr_epi32(1 << (2 * v), 1 << (2 * v), 2 << (2 * v), 2 << (2 * v));
    fillv = _mm_set1_epi64x(static_cast<long long>(fill));
  }
  for (uint64_t k = 0; k < bytes; ++k) {
    __m128i b;
    if constexpr (sizeof(B) == 2) {
      b = _mm_set1_epi16(static_cast<short>(mask[k]));
    } else {
      b = _mm_set1_epi32(mask[k]);
    }
    for (int v = 0; v < kVecs; ++v) {
      __m128i* p = reinterpret_cast<__m128i*>(dst + 8 * k) + v;
      const __m128i keep = sizeof(B) == 2 ? _mm_cmpeq_epi16(_mm_and_si128(b, bit[v]), bit[v])
                                          : _mm_cmpeq_epi32(_mm_and_si128(b, bit[v]), bit[v]);
      const __m128i s = _mm_load_si128(reinterpret_cast<const __m128i*>(src + 8 * k) + v);
      _mm_store_si128(p, _mm_or_si128(_mm_and_si128(keep, s), _mm_andnot_si128(keep, fillv)));
    }
  }
}
#endif

#if CPU_ASCENDC_HAVE_AVX2_CLONE
// Whole mask bytes. One 32-byte vector takes 8 x 32-bit, 4 x 64-bit or 16 x 16-bit lanes; each
// lane tests its own bit of the broadcast mask, and a byte blend picks src or fill.
template <typename B>
__attribute__((target("avx2"))) void Avx2Select(B* dst, const uint8_t* __restrict mask, const B* src, B fill,
                                                uint64_t bytes) {
  static_assert(sizeof(B) == 2 || sizeof(B) == 4 || sizeof(B) == 8, "16/32/64-bit lanes");
  if constexpr (sizeof(B) == 2) {
    const __m256i bit = _mm256_setr_epi16(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384,
                                          static_cast<short>(0x8000));
    const __m256i fillv = _mm256_set1_epi16(static_cast<short>(fill));
    uint64_t k = 0;
    for (; k + 2 <= bytes; k += 2) {
      const short m = static_cast<short>(mask[k] | (mask[k + 1] << 8));
      const __m256i keep = _mm256_cmpeq_epi16(_mm256_and_si256(_mm256_set1_epi16(m), bit), bit);
      const __m256i s = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 8 * k));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 8 * k), _mm256_blendv_epi8(fillv, s, keep));
    }
    if (k < bytes) SimdSelect(dst + 8 * k, mask + k, src + 8 * k, fill, bytes - k);
  } else if constexpr (sizeof(B) == 4) {
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    const __m256i fillv = _mm256_set1_epi32(static_cast<int>(fill));
    for (uint64_t k = 0; k < bytes; ++k) {
      const __m256i keep = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(mask[k]), bit), bit);
      const __m256i s = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 8 * k));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 8 * k), _mm256_blendv_epi8(fillv, s, keep));
    }
  } else {
    const __m256i bit_lo = _mm256_setr_epi64x(1, 2, 4, 8);
    const __m256i bit_hi = _mm256_setr_epi64x(16, 32, 64, 128);
    const __m256i fillv = _mm256_set1_epi64x(static_cast<long long>(fill));
    for (uint64_t k = 0; k < bytes; ++k) {
      const __m256i b = _mm256_set1_epi64x(mask[k]);
      const __m256i keep_lo = _mm256_cmpeq_epi64(_mm256_and_si256(b, bit_lo), bit_lo);
      const __m256i keep_hi = _mm256_cmpeq_epi64(_mm256_and_si256(b, bit_hi), bit_hi);
      const __m256i* s = reinterpret_cast<const __m256i*>(src + 8 * k);
      __m256i* d = reinterpret_cast<__m256i*>(dst + 8 * k);
      const __m256i s_lo = _mm256_loadu_si256(s), s_hi = _mm256_loadu_si256(s + 1);
      _mm256_storeu_si256(d, _mm256_blendv_epi8(fillv, s_lo, keep_lo));
      _mm256_storeu_si256(d + 1, _mm256_blendv_epi8(fillv, s_hi, keep_hi));
    }
  }
}
#endif

#if CPU_ASCENDC_HAVE_AVX2_CLONE
// Whole mask bytes: the mask bytes a vector covers (2 for 16 x 32-bit lanes, 4 for 32 x 16-bit,
// 1 for 8 x 64-bit) are its lane mask as they stand, and a masked move over a vector of `fill`
// picks src lane by lane. The last bytes that do not fill a vector go through the AVX2 loop.
// kStream: the whole vectors with streaming stores (dst 64-byte aligned).
template <typename B, bool kStream = false>
__attribute__((target("avx512f,avx512bw"))) void Avx512Select(B* dst, const uint8_t* __restrict mask, const B* src,
                                                              B fill, uint64_t bytes) {
  static_assert(sizeof(B) == 2 || sizeof(B) == 4 || sizeof(B) == 8, "16/32/64-bit lanes");
  constexpr uint64_t kBytesPerVec = 64 / sizeof(B) / 8;  // mask bytes one 64-byte vector takes
  uint64_t k = 0;
  for (; k + kBytesPerVec <= bytes; k += kBytesPerVec) {
    const __m512i s = _mm512_loadu_si512(src + 8 * k);
    __m512i r;
    if constexpr (sizeof(B) == 2) {
      uint32_t m;
      std::memcpy(&m, mask + k, sizeof m);
      r = _mm512_mask_mov_epi16(_mm512_set1_epi16(static_cast<short>(fill)), static_cast<__mmask32>(m), s);
    } else if constexpr (sizeof(B) == 4) {
      uint16_t m;
      std::memcpy(&m, mask + k, sizeof m);
      r = _mm512_mask_mov_epi32(_mm512_set1_epi32(static_cast<int>(fill)), static_cast<__mmask16>(m), s);
    } else {
      r = _mm512_mask_mov_epi64(_mm512_set1_epi64(static_cast<long long>(fill)), static_cast<__mmask8>(mask[k]), s);
    }
    if constexpr (kStream) {
      _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + 8 * k), r);
    } else {
      _mm512_storeu_si512(dst + 8 * k, r);
    }
  }
  if (k < bytes) Avx2Select(dst + 8 * k, mask + k, src + 8 * k, fill, bytes - k);
}
#endif

template <typename B>
inline void SelectBits(B* dst, const uint8_t* __restrict mask, const B* src, B fill, uint64_t n,
                       Isa isa = BestIsa()) {
  (void)isa;
#if CPU_ASCENDC_HAVE_SSE2
#if CPU_ASCENDC_HAVE_AVX2_CLONE
  if (isa == Isa::kAvx512) {
    Avx512Select(dst, mask, src, fill, n / 8);
  } else if (isa == Isa::kAvx2) {
    Avx2Select(dst, mask, src, fill, n / 8);
  } else {
    SimdSelect(dst, mask, src, fill, n / 8);
  }
#else
  SimdSelect(dst, mask, src, fill, n / 8);
#endif
  const uint64_t done = n / 8 * 8;
  if (done < n) ScalarSelect(dst + done, mask + done / 8, src + done, fill, n - done);
#else
  ScalarSelect(dst, mask, src, fill, n);
#endif
}

// SelectBits with non-temporal stores where the build and host have AVX-512 and dst is 64-byte
// aligned (otherwise plain SelectBits): a select whose result goes straight to an output in GM
// that the launch does not read again (deferred_vector_op.h). Weakly ordered, like StreamCopyBytes.
template <typename B>
inline void StreamSelectBits(B* dst, const uint8_t* __restrict mask, const B* src, B fill, uint64_t n,
                             Isa isa = BestIsa()) {
#if CPU_ASCENDC_HAVE_AVX2_CLONE
  if (isa == Isa::kAvx512 && (reinterpret_cast<uintptr_t>(dst) & 63) == 0) {
    Avx512Select<B, /*kStream=*/true>(dst, mask, src, fill, n / 8);
    const uint64_t done = n / 8 * 8;
    if (done < n) ScalarSelect(dst + done, mask + done / 8, src + done, fill, n - done);
    return;
  }
#endif
  SelectBits(dst, mask, src, fill, n, isa);
}

}  // namespace loops
}  // namespace cpu_ascendc
