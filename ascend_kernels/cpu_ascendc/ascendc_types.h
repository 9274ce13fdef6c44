// AscendC's keywords, scalar types, enums and constants, for g++. On the NPU the CANN compiler
// has `__aicore__`, `__gm__` and `half` built in and kernel_operator.h defines the rest. Host code
// includes this header too (through the dtype table), for half and bfloat16_t.
#pragma once

#include <cstdint>
#include <cstring>

#ifndef __aicore__
#define __aicore__
#endif
#ifndef __gm__
#define __gm__
#endif
// As asc-devkit impl/basic_api/utils/kernel_utils_macros.h spells it: a macro, so `const GM_ADDR
// p` is a pointer to const here too and cannot be passed on as a GM_ADDR.
#ifndef GM_ADDR
#define GM_ADDR __gm__ uint8_t*
#endif

namespace cpu_ascendc {

inline uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// IEEE binary16 -> binary32, exact. Branch-free (selects of computed values) so loops vectorise.
inline float HalfBitsToFloat(uint16_t h) {
  const uint32_t shifted = static_cast<uint32_t>(h & 0x7fffu) << 13;  // exponent + mantissa
  const uint32_t exp = shifted & 0x0f800000u;
  const uint32_t normal = shifted + 0x38000000u;   // rebias 15 -> 127
  const uint32_t inf_nan = shifted + 0x70000000u;  // all-ones exponent, payload kept
  // Subnormal: let the FPU normalise (exact): (2^-14 + man * 2^-24) - 2^-14.
  const uint32_t subnormal = FloatBits(BitsFloat(shifted + 0x38800000u) - BitsFloat(0x38800000u));
  const uint32_t mag = exp == 0x0f800000u ? inf_nan : (exp == 0 ? subnormal : normal);
  return BitsFloat(mag | (static_cast<uint32_t>(h & 0x8000u) << 16));
}

// IEEE binary32 -> binary16, round to nearest even (the hardware's Cast CAST_RINT); NaN stays NaN
// (quieted, top payload kept).
inline uint16_t FloatToHalfBits(float f) {
  uint32_t u = FloatBits(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  u &= 0x7fffffffu;
  uint32_t out;
  if (u >= 0x47800000u) {  // >= 65536, inf or NaN
    out = u > 0x7f800000u ? (0x7e00u | ((u >> 13) & 0x3ffu)) : 0x7c00u;
  } else if (u < 0x38800000u) {  // below the smallest normal half: let the FPU round
    const float denorm_magic = BitsFloat(((127u - 15u) + (23u - 10u) + 1u) << 23);
    out = FloatBits(BitsFloat(u) + denorm_magic) - FloatBits(denorm_magic);
  } else {
    const uint32_t mant_odd = (u >> 13) & 1u;
    u += 0xc8000fffu;  // rebias exponent (15-127)<<23, plus rounding bias 0xfff
    u += mant_odd;
    out = u >> 13;  // a carry into the exponent rounds up to the next binade or to inf
  }
  return static_cast<uint16_t>(out | sign);
}

inline float Bf16BitsToFloat(uint16_t b) { return BitsFloat(static_cast<uint32_t>(b) << 16); }

inline uint16_t FloatToBf16Bits(float f) {
  const uint32_t u = FloatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((u >> 16) | 0x40u);  // quiet NaN
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

}  // namespace cpu_ascendc

// 16-bit storage types. Arithmetic goes through float, as scalar code on the AI core does.
struct half {
  uint16_t bits = 0;
  half() = default;
  half(float f) : bits(cpu_ascendc::FloatToHalfBits(f)) {}  // NOLINT: implicit like the builtin
  explicit half(double d) : half(static_cast<float>(d)) {}
  explicit half(int v) : half(static_cast<float>(v)) {}
  operator float() const { return cpu_ascendc::HalfBitsToFloat(bits); }  // NOLINT
  static half FromBits(uint16_t b) {
    half h;
    h.bits = b;
    return h;
  }
};

struct bfloat16_t {
  uint16_t bits = 0;
  bfloat16_t() = default;
  bfloat16_t(float f) : bits(cpu_ascendc::FloatToBf16Bits(f)) {}  // NOLINT
  explicit bfloat16_t(double d) : bfloat16_t(static_cast<float>(d)) {}
  explicit bfloat16_t(int v) : bfloat16_t(static_cast<float>(v)) {}
  operator float() const { return cpu_ascendc::Bf16BitsToFloat(bits); }  // NOLINT
  static bfloat16_t FromBits(uint16_t b) {
    bfloat16_t h;
    h.bits = b;
    return h;
  }
};

static_assert(sizeof(half) == 2 && sizeof(bfloat16_t) == 2, "16-bit storage types");

namespace AscendC {

// The UB positions the kernels use.
enum class TPosition : uint8_t { VECIN, VECOUT, VECCALC };

enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };

enum class SELMODE : uint8_t {
  VSEL_CMPMASK_SPR = 0,
  VSEL_TENSOR_SCALAR_MODE = 1,
  VSEL_TENSOR_TENSOR_MODE = 2,
};

enum class RoundMode : uint8_t {
  CAST_NONE = 0,
  CAST_RINT,
  CAST_FLOOR,
  CAST_CEIL,
  CAST_ROUND,
  CAST_TRUNC,
  CAST_ODD,
};

// Hardware granules (bytes): a UB block and one vector repeat.
constexpr uint32_t ONE_BLK_SIZE = 32;
constexpr uint32_t ONE_REPEAT_BYTE_SIZE = 256;

}  // namespace AscendC
