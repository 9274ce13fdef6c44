// The vector-unit primitives the kernels use, in their "first count elements" (level-2) form:
// CompareScalar, Select, Cast, Duplicate, Maxs, Mins, Adds, Muls, Not, And.
//
// Each checks, once per call, the launch's arch rules (arch_rules.h) and the hardware's: operand
// types, 32-byte aligned UB operands that hold `count` elements, CompareScalar's whole 256-byte
// repeats, no partial overlap between dst and a source. Then it runs its loop (vector_loops.h)
// on the operands it names, and returns with the result in dst. int64_t / double operands are a
// host-only extension (float64 and int64 kernels run on the host only).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "arch_rules.h"
#include "ascendc_types.h"
#include "core_state.h"
#include "local_tensor.h"
#include "precondition.h"
#include "vector_loops.h"

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

// Wrapping integer arithmetic, as the vector unit does (and no UB in C++).
template <typename T>
inline T WrapAdd(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <typename T>
inline T WrapMul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  using W = std::conditional_t<sizeof(T) < sizeof(unsigned), unsigned, U>;
  return static_cast<T>(
      static_cast<U>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b))));
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
  cpu_ascendc::CheckCompareScalarRule(cpu_ascendc::CurrentRules(), cpu_ascendc::VTypeOf<T>());
  // The count form works in whole 256-byte repeats of src.
  CPU_ASCENDC_CHECK(static_cast<uint64_t>(count) * sizeof(T) % ONE_REPEAT_BYTE_SIZE == 0, kApi,
                    "count %u * %zu bytes is not a multiple of 256 bytes", count, sizeof(T));
  uint8_t* d = dst.Write(count / 8, kApi);
  const T* s = src.Read(count, kApi);
  internal::CheckOverlap(d, count / 8, s, static_cast<uint64_t>(count) * sizeof(T), kApi);
  if constexpr (std::is_same_v<T, half>) {
    cpu_ascendc::loops::CompareHalf(d, reinterpret_cast<const uint16_t*>(s), count, mode,
                                    scalar.bits);
  } else if constexpr (sizeof(T) == 1) {
    cpu_ascendc::loops::CompareBytes(d, s, count, mode, scalar);
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
  cpu_ascendc::CheckSelectScalarRule(cpu_ascendc::CurrentRules(), cpu_ascendc::VTypeOf<T>());
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
// with which RoundMode on the launch's arch is arch_rules.cpp's table.
template <typename T, typename U>
__aicore__ inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src,
                            const RoundMode& round_mode, uint32_t count) {
  constexpr const char* kApi = "Cast";
  cpu_ascendc::CheckCastRule(cpu_ascendc::CurrentRules(), cpu_ascendc::VTypeOf<T>(),
                             cpu_ascendc::VTypeOf<U>(), round_mode);
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
CPU_ASCENDC_SCALAR_OP(Muls, internal::WrapMul(v, s))
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
