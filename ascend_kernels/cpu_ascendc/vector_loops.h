// The element loops behind the vector primitives (vector_ops.h), on raw pointers the primitive
// has already checked (alignment, extent, overlap): no checks in here. Each operation is one
// plain loop, which the compiler vectorises for the build's baseline instruction set: the same
// bits on every host (integer ops and IEEE compares only).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ascendc_types.h"

namespace cpu_ascendc {
namespace loops {

// dst[i] = f(src[i]). dst and src are disjoint, or the same array of one type.
template <typename D, typename S, typename F>
inline void Map(D* dst, const S* src, uint64_t n, F f) {
  if constexpr (std::is_same_v<D, S>) {
    if (dst == src) {
      for (uint64_t i = 0; i < n; ++i) dst[i] = f(dst[i]);
      return;
    }
  }
  D* __restrict d = dst;
  const S* __restrict s = src;
  for (uint64_t i = 0; i < n; ++i) d[i] = f(s[i]);
}

// dst[i] = f(a[i], b[i]). Each source is dst itself or disjoint from it.
template <typename T, typename F>
inline void Zip(T* dst, const T* a, const T* b, uint64_t n, F f) {
  if (a == dst && b == dst) return Map(dst, dst, n, [f](T v) { return f(v, v); });
  T* __restrict d = dst;
  if (a == dst || b == dst) {
    const T* __restrict other = a == dst ? b : a;
    if (a == dst) {
      for (uint64_t i = 0; i < n; ++i) d[i] = f(d[i], other[i]);
    } else {
      for (uint64_t i = 0; i < n; ++i) d[i] = f(other[i], d[i]);
    }
    return;
  }
  const T* __restrict x = a;
  const T* __restrict y = b;
  for (uint64_t i = 0; i < n; ++i) d[i] = f(x[i], y[i]);
}

// Mask bits: dst bit i (LSB first in each byte) = pred(i), for n a multiple of 8. Each chunk
// is a vectorised loop into one byte per element, then eight bytes packed into one by a multiply.
constexpr uint64_t kMaskChunk = 256;
template <typename Pred>
inline void Mask(uint8_t* dst, uint64_t n, Pred pred) {
  uint8_t* __restrict d = dst;
  alignas(64) uint8_t bytes[kMaskChunk];
  for (uint64_t c = 0; c < n; c += kMaskChunk) {
    const uint64_t len = n - c < kMaskChunk ? n - c : kMaskChunk;
    for (uint64_t i = 0; i < len; ++i) bytes[i] = pred(c + i) ? 1 : 0;
    for (uint64_t k = 0; k < len / 8; ++k) {
      uint64_t w;
      std::memcpy(&w, bytes + 8 * k, sizeof w);  // byte j (0 or 1) at bit 8j
      d[c / 8 + k] = static_cast<uint8_t>((w * 0x0102040810204080ull) >> 56);  // bit 8j -> 56 + j
    }
  }
}

// Mask bits of load(i) <mode> t, i < n (C++ semantics: false on NaN except NE).
template <typename C, typename Load>
inline void CompareMask(uint8_t* d, uint64_t n, AscendC::CMPMODE mode, C t, Load load) {
  using AscendC::CMPMODE;
  switch (mode) {
    case CMPMODE::LT:
      return Mask(d, n, [=](uint64_t i) { return load(i) < t; });
    case CMPMODE::GT:
      return Mask(d, n, [=](uint64_t i) { return load(i) > t; });
    case CMPMODE::EQ:
      return Mask(d, n, [=](uint64_t i) { return load(i) == t; });
    case CMPMODE::LE:
      return Mask(d, n, [=](uint64_t i) { return load(i) <= t; });
    case CMPMODE::GE:
      return Mask(d, n, [=](uint64_t i) { return load(i) >= t; });
    case CMPMODE::NE:
      return Mask(d, n, [=](uint64_t i) { return load(i) != t; });
  }
}

// Select on element bits: dst[i] = mask bit i ? src[i] : fill. dst is src or disjoint from it.
// Each chunk's mask bits are spread to one byte per element (bit j of a byte kept in byte j by
// a multiply), then a vectorised blend.
template <typename B>
inline void SelectBits(B* dst, const uint8_t* mask, const B* src, B fill, uint64_t n) {
  alignas(64) uint8_t bytes[kMaskChunk];
  for (uint64_t c = 0; c < n; c += kMaskChunk) {
    const uint64_t len = n - c < kMaskChunk ? n - c : kMaskChunk;
    for (uint64_t k = 0; k < (len + 7) / 8; ++k) {
      const uint64_t w = (mask[c / 8 + k] * 0x0101010101010101ull) & 0x8040201008040201ull;
      std::memcpy(bytes + 8 * k, &w, sizeof w);
    }
    B* const d = dst + c;
    const B* const s = src + c;
    for (uint64_t i = 0; i < len; ++i) {
      const B keep = static_cast<B>(B{0} - static_cast<B>(bytes[i] != 0));
      d[i] = static_cast<B>((s[i] & keep) | (fill & static_cast<B>(~keep)));
    }
  }
}

// CompareScalar on int8/uint8: mask bits of src[i] <mode> t, i < n.
template <typename I>
inline void CompareBytes(uint8_t* d, const I* src, uint64_t n, AscendC::CMPMODE mode, I t) {
  CompareMask(d, n, mode, t, [src](uint64_t i) { return src[i]; });
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

// The Cast loops: dst[i] = ByteIntToHalfBits(src[i]) / HalfBitsToByteIntRint(src[i]), i < n.
template <typename I>
inline void ByteIntToHalf(uint16_t* d, const I* s, uint64_t n) {
  Map(d, s, n, [](I v) { return ByteIntToHalfBits(v); });
}
template <typename I>
inline void HalfToByteIntRint(I* d, const uint16_t* s, uint64_t n) {
  Map(d, s, n, [](uint16_t h) { return HalfBitsToByteIntRint<I>(h); });
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
inline void CompareHalf(uint8_t* d, const uint16_t* src, uint64_t n, AscendC::CMPMODE mode,
                        uint16_t t) {
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
  Mask(d, n, [=](uint64_t i) {
    return (static_cast<uint16_t>(HalfKey(src[i]) - base) <= span) != outside;
  });
}

}  // namespace loops
}  // namespace cpu_ascendc
