// The vector-unit primitives the kernels use, in their "first count elements" (level-2) form:
// CompareScalar, Select, Cast, Duplicate, Maxs, Mins, Adds, Not, And.
//
// Each checks, once per call, the launch's arch rules (arch_rules.h) and the hardware's: operand
// types, 32-byte aligned UB operands that hold `count` elements, CompareScalar's whole 256-byte
// repeats, no partial overlap between dst and a source. Then it runs its element loop (below) on
// the operands it names. int64_t / double operands are a host-only extension (float64 and int64
// kernels run on the host only).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "arch_rules.h"
#include "ascendc_types.h"
#include "core_state.h"
#include "kernel_tensor.h"

namespace cpu_ascendc {
namespace loops {

// The element loops behind the primitives, on raw pointers the primitive has already checked
// (alignment, extent, overlap). Each is one plain loop, which the compiler vectorises for the
// build's baseline instruction set: the same bits on every host (integer ops and IEEE compares
// only).

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

namespace AscendC {
namespace internal {

template <typename T, typename... Ts>
constexpr bool kOneOf = (std::is_same_v<T, Ts> || ...);

template <typename T>
using BitsOf =
    std::conditional_t<sizeof(T) == 1, uint8_t,
                       std::conditional_t<sizeof(T) == 2, uint16_t,
                                          std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;

// dst and a source must be the same region or disjoint (the vector unit streams repeats).
inline void CheckOverlap(const void* dst, uint64_t dst_bytes, const void* src, uint64_t src_bytes,
                         const char* api) {
  const auto d = reinterpret_cast<uintptr_t>(dst);
  const auto s = reinterpret_cast<uintptr_t>(src);
  const bool disjoint = d + dst_bytes <= s || s + src_bytes <= d;
  CPU_ASCENDC_CHECK(disjoint || d == s, api, "dst and src partially overlap");
}

inline uint64_t CheckCount(int64_t count, const char* api) {
  CPU_ASCENDC_CHECK(count >= 0, api, "negative count %lld", static_cast<long long>(count));
  return static_cast<uint64_t>(count);
}

// The loops see half and bfloat16_t as their uint16_t bits (plain integers vectorise).
template <typename T>
using LoopType = std::conditional_t<kOneOf<T, half, bfloat16_t>, uint16_t, T>;

// loop(d, s, n) on the checked operands, as LoopType pointers.
template <typename D, typename S, typename Loop>
inline void RunUnary(const LocalTensor<D>& dst, const LocalTensor<S>& src, uint64_t n,
                     const char* api, Loop loop) {
  D* d = dst.Write(n, api);
  const S* s = src.Read(n, api);
  CheckOverlap(d, n * sizeof(D), s, n * sizeof(S), api);
  loop(reinterpret_cast<LoopType<D>*>(d), reinterpret_cast<const LoopType<S>*>(s), n);
}

// dst[i] = f(src[i]) for i < n, f on LoopType elements.
template <typename D, typename S, typename F>
inline void Map(const LocalTensor<D>& dst, const LocalTensor<S>& src, uint64_t n, const char* api,
                F f) {
  RunUnary(dst, src, n, api, [f](LoopType<D>* d, const LoopType<S>* s, uint64_t m) {
    cpu_ascendc::loops::Map(d, s, m, f);
  });
}

// dst[i] = f(a[i], b[i]) for i < n.
template <typename T, typename F>
inline void Zip(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b,
                uint64_t n, const char* api, F f) {
  T* d = dst.Write(n, api);
  const T* x = a.Read(n, api);
  const T* y = b.Read(n, api);
  CheckOverlap(d, n * sizeof(T), x, n * sizeof(T), api);
  CheckOverlap(d, n * sizeof(T), y, n * sizeof(T), api);
  cpu_ascendc::loops::Zip(d, x, y, n, f);
}

// Wrapping integer addition, as the vector unit does (and no UB in C++).
template <typename T>
inline T WrapAdd(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
// Saturating float -> integer conversion after rounding (the Cast unit saturates).
template <typename I>
inline I SaturateToInt(float v) {
  if (v != v) return 0;
  const float lo = static_cast<float>(std::numeric_limits<I>::min());
  const float hi = static_cast<float>(std::numeric_limits<I>::max());
  return v <= lo ? std::numeric_limits<I>::min()
                 : (v >= hi ? std::numeric_limits<I>::max() : static_cast<I>(v));
}

inline float RoundFloat(float v, RoundMode mode) {
  switch (mode) {
    case RoundMode::CAST_FLOOR:
      return std::floor(v);
    case RoundMode::CAST_CEIL:
      return std::ceil(v);
    case RoundMode::CAST_ROUND:
      return std::round(v);
    case RoundMode::CAST_TRUNC:
      return std::trunc(v);
    default:
      return std::nearbyint(v);  // CAST_NONE / CAST_RINT: nearest even
  }
}

}  // namespace internal

// dst bit i (LSB first in each byte) = src[i] <mode> scalar, for i < count.
template <typename T, typename U>
__aicore__ inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src,
                                     const T scalar, CMPMODE mode, uint32_t count) {
  constexpr const char* kApi = "CompareScalar";
  static_assert(internal::kOneOf<T, half, float, double, int8_t, uint8_t>,
                "CompareScalar: src must be half or float (int8_t/uint8_t: dav_3510; double: host "
                "only)");
  static_assert(std::is_same_v<U, uint8_t>, "CompareScalar: dst must be uint8_t");
  const cpu_ascendc::ArchRules& rules = cpu_ascendc::CurrentRules();
  CPU_ASCENDC_CHECK((rules.compare_scalar_types & cpu_ascendc::Bit(cpu_ascendc::VTypeOf<T>())) != 0,
                    kApi, "%s rule: no CompareScalar on %s", rules.name,
                    cpu_ascendc::VTypeName(cpu_ascendc::VTypeOf<T>()));
  // The count form works in whole 256-byte repeats of src.
  CPU_ASCENDC_CHECK(static_cast<uint64_t>(count) * sizeof(T) % ONE_REPEAT_BYTE_SIZE == 0, kApi,
                    "count %u * %zu bytes is not a multiple of 256 bytes", count, sizeof(T));
  uint8_t* d = dst.Write(count / 8, kApi);
  const T* s = src.Read(count, kApi);
  internal::CheckOverlap(d, count / 8, s, static_cast<uint64_t>(count) * sizeof(T), kApi);
  if constexpr (std::is_same_v<T, half>) {
    cpu_ascendc::loops::CompareHalf(d, reinterpret_cast<const uint16_t*>(s), count, mode,
                                    scalar.bits);
  } else {
    cpu_ascendc::loops::CompareMask(d, count, mode, scalar, [s](uint64_t i) { return s[i]; });
  }
}

// VSEL_TENSOR_SCALAR_MODE: dst[i] = mask bit i ? src0[i] : scalar, bit for bit.
template <typename T, typename U>
__aicore__ inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& mask,
                              const LocalTensor<T>& src0, T scalar, SELMODE mode, uint32_t count) {
  constexpr const char* kApi = "Select";
  static_assert(internal::kOneOf<T, half, float, double, int8_t, uint8_t>,
                "Select: operands must be half or float (int8_t/uint8_t: dav_3510; double: host "
                "only)");
  static_assert(internal::kOneOf<U, uint8_t, uint16_t, uint32_t, uint64_t>,
                "Select: mask must be unsigned");
  CPU_ASCENDC_CHECK(mode == SELMODE::VSEL_TENSOR_SCALAR_MODE, kApi,
                    "only VSEL_TENSOR_SCALAR_MODE takes a scalar src1");
  const cpu_ascendc::ArchRules& rules = cpu_ascendc::CurrentRules();
  CPU_ASCENDC_CHECK((rules.select_scalar_types & cpu_ascendc::Bit(cpu_ascendc::VTypeOf<T>())) != 0,
                    kApi, "%s rule: no VSEL_TENSOR_SCALAR_MODE Select on %s", rules.name,
                    cpu_ascendc::VTypeName(cpu_ascendc::VTypeOf<T>()));
  using B = internal::BitsOf<T>;
  const uint64_t mask_bytes = (static_cast<uint64_t>(count) + 7) / 8;
  B* d = reinterpret_cast<B*>(dst.Write(count, kApi));
  const B* s = reinterpret_cast<const B*>(src0.Read(count, kApi));
  const uint8_t* m =
      reinterpret_cast<const uint8_t*>(mask.Read((mask_bytes + sizeof(U) - 1) / sizeof(U), kApi));
  internal::CheckOverlap(d, count * sizeof(T), s, count * sizeof(T), kApi);
  internal::CheckOverlap(d, count * sizeof(T), m, mask_bytes, kApi);
  B fill;
  std::memcpy(&fill, &scalar, sizeof fill);
  cpu_ascendc::loops::SelectBits(d, m, s, fill, count);
}

// Element-type conversion. Supported pairs are the Atlas A2 ones the kernels need; which exist
// with which RoundMode on the launch's arch is arch_rules.h's table.
template <typename T, typename U>
__aicore__ inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src,
                            const RoundMode& round_mode, uint32_t count) {
  constexpr const char* kApi = "Cast";
  const cpu_ascendc::ArchRules& rules = cpu_ascendc::CurrentRules();
  const uint32_t modes =
      cpu_ascendc::CastRoundModes(rules, cpu_ascendc::VTypeOf<T>(), cpu_ascendc::VTypeOf<U>());
  const char* dst_name = cpu_ascendc::VTypeName(cpu_ascendc::VTypeOf<T>());
  const char* src_name = cpu_ascendc::VTypeName(cpu_ascendc::VTypeOf<U>());
  CPU_ASCENDC_CHECK(modes != 0, kApi, "%s rule: no Cast %s -> %s", rules.name, src_name, dst_name);
  CPU_ASCENDC_CHECK((modes & cpu_ascendc::Bit(round_mode)) != 0, kApi,
                    "%s rule: no Cast %s -> %s with %s", rules.name, src_name, dst_name,
                    cpu_ascendc::RoundModeName(round_mode));
  const RoundMode rm = round_mode;
  const void* d = dst.Write(count, kApi);
  const void* s = src.Read(count, kApi);
  CPU_ASCENDC_CHECK(d != s || sizeof(T) == sizeof(U), kApi,
                    "in-place Cast between types of different width");
  if constexpr (std::is_same_v<T, float> && std::is_same_v<U, half>) {
    internal::Map(dst, src, count, kApi,
                  [](uint16_t h) { return cpu_ascendc::HalfBitsToFloat(h); });
  } else if constexpr (std::is_same_v<T, float> && std::is_same_v<U, bfloat16_t>) {
    internal::Map(dst, src, count, kApi,
                  [](uint16_t b) { return cpu_ascendc::Bf16BitsToFloat(b); });
  } else if constexpr (std::is_same_v<T, half> && std::is_same_v<U, float>) {
    CPU_ASCENDC_CHECK(rm == RoundMode::CAST_NONE || rm == RoundMode::CAST_RINT, kApi,
                      "float->half: only CAST_NONE/CAST_RINT are emulated");
    internal::Map(dst, src, count, kApi, [](float f) { return cpu_ascendc::FloatToHalfBits(f); });
  } else if constexpr (std::is_same_v<T, bfloat16_t> && std::is_same_v<U, float>) {
    CPU_ASCENDC_CHECK(rm == RoundMode::CAST_RINT, kApi,
                      "float->bfloat16_t: only CAST_RINT is emulated");
    internal::Map(dst, src, count, kApi, [](float f) { return cpu_ascendc::FloatToBf16Bits(f); });
  } else if constexpr (std::is_same_v<T, half> && internal::kOneOf<U, int8_t, uint8_t>) {
    internal::RunUnary(dst, src, count, kApi, [](uint16_t* d, const U* s, uint64_t n) {
      cpu_ascendc::loops::ByteIntToHalf(d, s, n);  // exact
    });
  } else if constexpr (internal::kOneOf<T, int8_t, uint8_t> && std::is_same_v<U, half>) {
    if (rm == RoundMode::CAST_NONE || rm == RoundMode::CAST_RINT) {
      internal::RunUnary(dst, src, count, kApi, [](T* d, const uint16_t* s, uint64_t n) {
        cpu_ascendc::loops::HalfToByteIntRint(d, s, n);
      });
    } else {
      internal::Map(dst, src, count, kApi, [rm](uint16_t h) {
        return internal::SaturateToInt<T>(
            internal::RoundFloat(cpu_ascendc::HalfBitsToFloat(h), rm));
      });
    }
  } else {
    static_assert(sizeof(T) == 0, "Cast: conversion pair not supported");
  }
}

template <typename T>
__aicore__ inline void Duplicate(const LocalTensor<T>& dst, const T& scalar, const int32_t& count) {
  constexpr const char* kApi = "Duplicate";
  static_assert(internal::kOneOf<T, half, bfloat16_t, int16_t, uint16_t, float, int32_t, uint32_t,
                                 int64_t, double>,
                "Duplicate: unsupported type");
  const uint64_t n = internal::CheckCount(count, kApi);
  T* __restrict d = dst.Write(n, kApi);
  const T v = scalar;
  for (uint64_t i = 0; i < n; ++i) d[i] = v;
}

#define CPU_ASCENDC_SCALAR_OP(NAME, EXPR)                                                          \
  template <typename T>                                                                            \
  __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                \
                              const T& scalar, const int32_t& count) {                             \
    static_assert(internal::kOneOf<T, int16_t, int32_t, int64_t, float>,                           \
                  #NAME ": unsupported type");                                                     \
    const T s = scalar;                                                                            \
    internal::Map(dst, src, internal::CheckCount(count, #NAME), #NAME, [s](T v) { return EXPR; }); \
  }
CPU_ASCENDC_SCALAR_OP(Maxs, (v > s ? v : s))
CPU_ASCENDC_SCALAR_OP(Mins, (v < s ? v : s))
CPU_ASCENDC_SCALAR_OP(Adds, internal::WrapAdd(v, s))
#undef CPU_ASCENDC_SCALAR_OP

template <typename T>
__aicore__ inline void Not(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                           const int32_t& count) {
  static_assert(internal::kOneOf<T, int16_t, uint16_t>, "Not: int16_t/uint16_t only");
  internal::Map(dst, src, internal::CheckCount(count, "Not"), "Not",
                [](T v) { return static_cast<T>(~v); });
}

template <typename T>
__aicore__ inline void And(const LocalTensor<T>& dst, const LocalTensor<T>& src0,
                           const LocalTensor<T>& src1, const int32_t& count) {
  static_assert(internal::kOneOf<T, int16_t, uint16_t>, "And: int16_t/uint16_t only");
  internal::Zip(dst, src0, src1, internal::CheckCount(count, "And"), "And",
                [](T a, T b) { return static_cast<T>(a & b); });
}

}  // namespace AscendC
