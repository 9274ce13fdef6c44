// The vector-unit primitives the kernels use, in their "first count elements" (level-2) form:
// CompareScalar, Select, Cast, Duplicate, Maxs, Mins, Adds, Muls, Not, And.
//
// Each checks the hardware's rules (operand types the Atlas A2 vector unit accepts, 32-byte
// aligned UB operands that hold `count` elements, CompareScalar's whole 256-byte repeats, no
// partial overlap between dst and a source) once per call, then runs the loop in vector_loops.h
// (SSE2/AVX2, or vectorised by g++ -O3; no per-element checks). int64_t / double operands are a
// host-only extension (float64 and int64 run on the CPU SoC only); the kernels guard those paths
// at compile time.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ascendc_types.h"
#include "local_tensor.h"
#include "precondition.h"
#include "soc_rules.h"
#include "vector_loops.h"

namespace AscendC {
namespace internal {

template <typename T, typename... Ts>
constexpr bool kOneOf = (std::is_same_v<T, Ts> || ...);

template <typename T>
using BitsOf = std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;

// dst and src must be the same buffer region or disjoint (the vector unit streams repeats).
inline void CheckOverlap(const void* dst, uint64_t dst_bytes, const void* src, uint64_t src_bytes, const char* api) {
  const auto d = reinterpret_cast<uintptr_t>(dst);
  const auto s = reinterpret_cast<uintptr_t>(src);
  const bool disjoint = d + dst_bytes <= s || s + src_bytes <= d;
  CPU_ASCENDC_CHECK(disjoint || d == s, api, "dst and src partially overlap");
}

// dst[i] = f(src[i]) over distinct arrays.
template <typename D, typename S, typename F>
inline void MapDistinct(D* dst, const S* src, uint64_t n, F f) {
  cpu_ascendc::loops::MapDistinct(dst, src, n, f);
}
// dst[i] = f(src[i]); in place when dst == src.
template <typename T, typename F>
inline void Map(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t n, const char* api, F f) {
  T* d = dst.AlignedData(n, api);
  const T* s = src.CheckedAlignedData(n, api);
  CheckOverlap(d, n * sizeof(T), s, n * sizeof(T), api);
  if (d == s) {
    cpu_ascendc::loops::MapInPlace(d, n, f);
  } else {
    cpu_ascendc::loops::MapDistinct(d, src.ReadableData(n, api), n, f);
  }
}

template <typename T, typename F>
inline void Zip(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b, uint64_t n,
                const char* api, F f) {
  using cpu_ascendc::loops::ZipAlias;
  T* d = dst.AlignedData(n, api);
  const T* x = a.CheckedAlignedData(n, api);
  const T* y = b.CheckedAlignedData(n, api);
  CheckOverlap(d, n * sizeof(T), x, n * sizeof(T), api);
  CheckOverlap(d, n * sizeof(T), y, n * sizeof(T), api);
  const ZipAlias alias = d == x && d == y ? ZipAlias::kAll
                         : d == x         ? ZipAlias::kDstX
                         : d == y         ? ZipAlias::kDstY
                                          : ZipAlias::kNone;
  // Operands that are not dst are only read (from GM while a deferred copy stands for them).
  cpu_ascendc::loops::Zip(d, d == x ? x : a.ReadableData(n, api), d == y ? y : b.ReadableData(n, api), n, alias, f);
}

inline uint64_t CheckCount(int64_t count, const char* api) {
  CPU_ASCENDC_CHECK(count >= 0, api, "negative count %lld", static_cast<long long>(count));
  return static_cast<uint64_t>(count);
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
  return static_cast<T>(static_cast<U>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b))));
}

// Saturating float -> integer conversion after rounding (the Cast unit saturates).
template <typename I>
inline I SaturateToInt(float v) {
  if (v != v) return 0;
  const float lo = static_cast<float>(std::numeric_limits<I>::min());
  const float hi = static_cast<float>(std::numeric_limits<I>::max());
  return v <= lo ? std::numeric_limits<I>::min() : (v >= hi ? std::numeric_limits<I>::max() : static_cast<I>(v));
}

inline float RoundFloat(float v, RoundMode mode) {
  switch (mode) {
    case RoundMode::CAST_FLOOR: return std::floor(v);
    case RoundMode::CAST_CEIL: return std::ceil(v);
    case RoundMode::CAST_ROUND: return std::round(v);
    case RoundMode::CAST_TRUNC: return std::trunc(v);
    default: return std::nearbyint(v);  // CAST_NONE / CAST_RINT: nearest even
  }
}

// Whether a deferred Cast of `kind` produces T elements (float from 16-bit floats, half from
// byte integers).
template <typename T>
inline bool CastResultIs(cpu_ascendc::DeferredKind kind) {
  using cpu_ascendc::DeferredKind;
  if constexpr (std::is_same_v<T, float>) return kind == DeferredKind::kBf16ToFloat || kind == DeferredKind::kHalfToFloat;
  return kind == DeferredKind::kInt8ToHalf || kind == DeferredKind::kUint8ToHalf;
}

// CompareScalar of a deferred Cast's results, from its narrow GM source (out of line: the
// common compare stays small).
template <CMPMODE kMode>
void CompareNarrowSourceAs(uint8_t* d, const cpu_ascendc::DeferredVectorOps::CastSource& cast, float t,
                           uint32_t count) {
  namespace loops = cpu_ascendc::loops;
  switch (cast.kind) {
    case cpu_ascendc::DeferredKind::kBf16ToFloat:
      loops::CompareBf16Bits<kMode>(d, static_cast<const uint16_t*>(cast.src), t, count);
      break;
    case cpu_ascendc::DeferredKind::kHalfToFloat:
      loops::CompareHalfBits<kMode>(d, static_cast<const uint16_t*>(cast.src), t, count);
      break;
    case cpu_ascendc::DeferredKind::kInt8ToHalf:
      loops::CompareByteIntBits<kMode>(d, static_cast<const int8_t*>(cast.src), t, count);
      break;
    default:
      loops::CompareByteIntBits<kMode>(d, static_cast<const uint8_t*>(cast.src), t, count);
      break;
  }
}
__attribute__((noinline)) inline void CompareNarrowSource(uint8_t* d,
                                                          const cpu_ascendc::DeferredVectorOps::CastSource& cast,
                                                          float t, CMPMODE mode, uint32_t count) {
  switch (mode) {
    case CMPMODE::LT: CompareNarrowSourceAs<CMPMODE::LT>(d, cast, t, count); break;
    case CMPMODE::GT: CompareNarrowSourceAs<CMPMODE::GT>(d, cast, t, count); break;
    case CMPMODE::EQ: CompareNarrowSourceAs<CMPMODE::EQ>(d, cast, t, count); break;
    case CMPMODE::LE: CompareNarrowSourceAs<CMPMODE::LE>(d, cast, t, count); break;
    case CMPMODE::GE: CompareNarrowSourceAs<CMPMODE::GE>(d, cast, t, count); break;
    case CMPMODE::NE: CompareNarrowSourceAs<CMPMODE::NE>(d, cast, t, count); break;
  }
}

}  // namespace internal

// dst bit i (LSB first in each byte) = src[i] <cmp> scalar, for i < count.
template <typename T, typename U>
inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src, const T scalar, CMPMODE mode,
                          uint32_t count) {
  constexpr const char* kApi = "CompareScalar";
  static_assert(internal::kOneOf<T, half, float, double>, "CompareScalar: src must be half or float (double: host only)");
  static_assert(std::is_same_v<U, uint8_t>, "CompareScalar: dst must be uint8_t");
  cpu_ascendc::CheckCompareScalarRule(cpu_ascendc::VTypeOf<T>());
  // The count form works in whole 256-byte repeats of src.
  CPU_ASCENDC_CHECK(static_cast<uint64_t>(count) * sizeof(T) % ONE_REPEAT_BYTE_SIZE == 0, kApi,
                    "count %u * %zu bytes is not a multiple of 256 bytes", count, sizeof(T));
  uint8_t* d = dst.AlignedData(count / 8, kApi);
  const T* s_ub = src.CheckedAlignedData(count, kApi);
  internal::CheckOverlap(d, count / 8, s_ub, static_cast<uint64_t>(count) * sizeof(T), kApi);
  // src the result of a deferred widening Cast: compared straight from the Cast's narrow GM
  // source (deferred_vector_op.h), the same bits.
  if constexpr (internal::kOneOf<T, float, half>) {
    cpu_ascendc::DeferredVectorOps& ops = cpu_ascendc::ThreadDeferredVectorOps();
    cpu_ascendc::DeferredVectorOps::CastSource cast;
    if (ops.Pending() != 0 && ops.PendingCast(s_ub, count, &cast) && internal::CastResultIs<T>(cast.kind)) {
      internal::CompareNarrowSource(d, cast, static_cast<float>(scalar), mode, count);
      return;
    }
  }
  const T* s = src.ReadableData(count, kApi);
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const C t = static_cast<C>(scalar);
  auto run = [&](auto mode_tag) {
    constexpr CMPMODE kMode = decltype(mode_tag)::value;
    if constexpr (std::is_same_v<T, half>) {
      cpu_ascendc::loops::CompareHalfBits<kMode>(d, reinterpret_cast<const uint16_t*>(s), t, count);
    } else {
      cpu_ascendc::loops::CompareBits<kMode>(d, s, t, count);
    }
  };
  switch (mode) {
    case CMPMODE::LT: run(std::integral_constant<CMPMODE, CMPMODE::LT>{}); break;
    case CMPMODE::GT: run(std::integral_constant<CMPMODE, CMPMODE::GT>{}); break;
    case CMPMODE::EQ: run(std::integral_constant<CMPMODE, CMPMODE::EQ>{}); break;
    case CMPMODE::LE: run(std::integral_constant<CMPMODE, CMPMODE::LE>{}); break;
    case CMPMODE::GE: run(std::integral_constant<CMPMODE, CMPMODE::GE>{}); break;
    case CMPMODE::NE: run(std::integral_constant<CMPMODE, CMPMODE::NE>{}); break;
  }
}

// VSEL_TENSOR_SCALAR_MODE: dst[i] = mask bit i ? src0[i] : scalar, bit for bit.
template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& mask, const LocalTensor<T>& src0, T scalar,
                   SELMODE mode, uint32_t count) {
  constexpr const char* kApi = "Select";
  static_assert(internal::kOneOf<T, half, float, double>, "Select: operands must be half or float (double: host only)");
  static_assert(internal::kOneOf<U, uint8_t, uint16_t, uint32_t, uint64_t>, "Select: mask must be unsigned");
  CPU_ASCENDC_CHECK(mode == SELMODE::VSEL_TENSOR_SCALAR_MODE, kApi,
                    "only VSEL_TENSOR_SCALAR_MODE takes a scalar src1");
  cpu_ascendc::CheckSelectScalarRule(cpu_ascendc::VTypeOf<T>());
  using B = internal::BitsOf<T>;
  B* d = reinterpret_cast<B*>(dst.CheckedAlignedData(count, kApi));
  const B* const s_ub = reinterpret_cast<const B*>(src0.CheckedAlignedData(count, kApi));
  const uint64_t mask_bytes = (static_cast<uint64_t>(count) + 7) / 8;
  const uint8_t* m = reinterpret_cast<const uint8_t*>(
      mask.AlignedData((mask_bytes + sizeof(U) - 1) / sizeof(U), kApi));
  internal::CheckOverlap(d, count * sizeof(T), s_ub, count * sizeof(T), kApi);
  internal::CheckOverlap(d, count * sizeof(T), m, mask_bytes, kApi);
  B fill;
  std::memcpy(&fill, &scalar, sizeof fill);
  if (reinterpret_cast<const void*>(d) == reinterpret_cast<const void*>(s_ub)) {  // in place: dst is read
    cpu_ascendc::loops::SelectBits(reinterpret_cast<B*>(dst.AlignedData(count, kApi)), m, d, fill, count);
    return;
  }
  const B* s = reinterpret_cast<const B*>(src0.ReadableData(count, kApi));  // GM while a copy is deferred
  dst.OverwrittenData(count, kApi);
  // src0 read from GM and an output streamed to memory: recorded, to run straight into GM if dst
  // is copied out (deferred_vector_op.h).
  if (s != s_ub && cpu_ascendc::CurrentCore().stream_gm_stores &&
      cpu_ascendc::ThreadDeferredVectorOps().DeferSelect(d, m, s, fill, count)) {
    return;
  }
  cpu_ascendc::loops::SelectBits(d, m, s, fill, count);
}

// Element-type conversion. Supported pairs are the Atlas A2 ones the kernels need; which exist
// with which RoundMode on the launch's SoC is soc_rules.cpp's table.
template <typename T, typename U>
inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& round_mode, uint32_t count) {
  constexpr const char* kApi = "Cast";
  cpu_ascendc::CheckCastRule(cpu_ascendc::VTypeOf<T>(), cpu_ascendc::VTypeOf<U>(), round_mode);
  T* d = dst.CheckedAlignedData(count, kApi);
  const U* const s_ub = src.CheckedAlignedData(count, kApi);
  const U* s = s_ub;
  internal::CheckOverlap(d, static_cast<uint64_t>(count) * sizeof(T), s, static_cast<uint64_t>(count) * sizeof(U), kApi);
  CPU_ASCENDC_CHECK(static_cast<const void*>(d) != static_cast<const void*>(s) || sizeof(T) == sizeof(U), kApi,
                    "in-place Cast between types of different width");
  if (static_cast<const void*>(d) != static_cast<const void*>(s)) {
    s = src.ReadableData(count, kApi);  // GM while a copy into src is deferred
    // A widening Cast of GM-read src, where the compares that read its result can read the
    // narrow source instead (AVX-512 loops): recorded, not run (deferred_vector_op.h). kSelect
    // stands for "no deferrable cast" here.
    constexpr cpu_ascendc::DeferredKind kKind =
        std::is_same_v<T, float> && std::is_same_v<U, bfloat16_t> ? cpu_ascendc::DeferredKind::kBf16ToFloat
        : std::is_same_v<T, float> && std::is_same_v<U, half>     ? cpu_ascendc::DeferredKind::kHalfToFloat
        : std::is_same_v<T, half> && std::is_same_v<U, int8_t>    ? cpu_ascendc::DeferredKind::kInt8ToHalf
        : std::is_same_v<T, half> && std::is_same_v<U, uint8_t>   ? cpu_ascendc::DeferredKind::kUint8ToHalf
                                                                  : cpu_ascendc::DeferredKind::kSelect;
    if constexpr (kKind != cpu_ascendc::DeferredKind::kSelect) {
      if (s != s_ub && cpu_ascendc::loops::BestIsa() == cpu_ascendc::loops::Isa::kAvx512) {
        dst.OverwrittenData(count, kApi);
        cpu_ascendc::ThreadDeferredVectorOps().DeferCast(kKind, d, s, count);
        return;
      }
    }
  }
  d = dst.AlignedData(count, kApi);
  const RoundMode rm = round_mode;
  if constexpr (std::is_same_v<T, float> && std::is_same_v<U, half>) {
    cpu_ascendc::loops::HalfToFloat(d, reinterpret_cast<const uint16_t*>(s), count);
  } else if constexpr (std::is_same_v<T, float> && std::is_same_v<U, bfloat16_t>) {
    cpu_ascendc::loops::Bf16ToFloat(d, reinterpret_cast<const uint16_t*>(s), count);
  } else if constexpr (std::is_same_v<T, half> && std::is_same_v<U, float>) {
    CPU_ASCENDC_CHECK(rm == RoundMode::CAST_NONE || rm == RoundMode::CAST_RINT, kApi,
                      "float->half: only CAST_NONE/CAST_RINT are emulated");
    internal::MapDistinct(d, s, count, [](float f) { return half::FromBits(cpu_ascendc::FloatToHalfBits(f)); });
  } else if constexpr (std::is_same_v<T, bfloat16_t> && std::is_same_v<U, float>) {
    CPU_ASCENDC_CHECK(rm == RoundMode::CAST_RINT, kApi, "float->bfloat16_t: only CAST_RINT is emulated");
    internal::MapDistinct(d, s, count, [](float f) { return bfloat16_t::FromBits(cpu_ascendc::FloatToBf16Bits(f)); });
  } else if constexpr (std::is_same_v<T, half> && internal::kOneOf<U, int8_t, uint8_t>) {
    cpu_ascendc::loops::ByteIntToHalf(reinterpret_cast<uint16_t*>(d), s, count);  // exact
  } else if constexpr (internal::kOneOf<T, int8_t, uint8_t> && std::is_same_v<U, half>) {
    if (rm == RoundMode::CAST_NONE || rm == RoundMode::CAST_RINT) {
      cpu_ascendc::loops::HalfToByteIntRint(d, reinterpret_cast<const uint16_t*>(s), count);
    } else {
      internal::MapDistinct(d, s, count, [rm](half h) {
        return internal::SaturateToInt<T>(internal::RoundFloat(cpu_ascendc::HalfBitsToFloat(h.bits), rm));
      });
    }
  } else {
    static_assert(sizeof(T) == 0, "Cast: conversion pair not supported");
  }
}

template <typename T>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalar, const int32_t& count) {
  constexpr const char* kApi = "Duplicate";
  static_assert(internal::kOneOf<T, half, bfloat16_t, int16_t, uint16_t, float, int32_t, uint32_t, int64_t, double>,
                "Duplicate: unsupported type");
  const uint64_t n = internal::CheckCount(count, kApi);
  T* __restrict d = dst.AlignedData(n, kApi);
  const T v = scalar;
  for (uint64_t i = 0; i < n; ++i) d[i] = v;
}

#define CPU_ASCENDC_SCALAR_OP(NAME, EXPR)                                                                   \
  template <typename T>                                                                                     \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalar,                   \
                   const int32_t& count) {                                                                  \
    static_assert(internal::kOneOf<T, int16_t, int32_t, int64_t, float>, #NAME ": unsupported type");       \
    const T s = scalar;                                                                                     \
    internal::Map(dst, src, internal::CheckCount(count, #NAME), #NAME, [s](T v) { return EXPR; });          \
  }
CPU_ASCENDC_SCALAR_OP(Maxs, (v > s ? v : s))
CPU_ASCENDC_SCALAR_OP(Mins, (v < s ? v : s))
CPU_ASCENDC_SCALAR_OP(Adds, internal::WrapAdd(v, s))
CPU_ASCENDC_SCALAR_OP(Muls, internal::WrapMul(v, s))
#undef CPU_ASCENDC_SCALAR_OP

template <typename T>
inline void Not(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
  static_assert(internal::kOneOf<T, int16_t, uint16_t>, "Not: int16_t/uint16_t only");
  internal::Map(dst, src, internal::CheckCount(count, "Not"), "Not", [](T v) { return static_cast<T>(~v); });
}

template <typename T>
inline void And(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                const int32_t& count) {
  static_assert(internal::kOneOf<T, int16_t, uint16_t>, "And: int16_t/uint16_t only");
  internal::Zip(dst, src0, src1, internal::CheckCount(count, "And"), "And",
                [](T a, T b) { return static_cast<T>(a & b); });
}

}  // namespace AscendC
