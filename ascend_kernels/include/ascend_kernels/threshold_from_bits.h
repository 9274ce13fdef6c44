// The kernel's ThresholdParams from one threshold element's bits, as ThresholdGradV2D computes
// them at Init from a device-side threshold (ThresholdSource::kDevice). The reference is the host's
// MakeThresholdParams (cpp/aclnn/threshold_params.h): for every (x dtype, threshold dtype) pair
// the executor plans this way, the fields the kernel reads for x's dtype (kernel_args.h) are
// equal bit for bit; the fields it does not read are 0. The pairs:
//  - float16 / bfloat16 / float32 x, float32 threshold: threshold_f32 is the element itself.
//  - float64 x (host SoC only), float64 threshold: threshold_f64_bits is the element's bits.
//  - integer x, a threshold of an integer dtype, float32 or float64: mode and threshold_int, with
//    floor, clamping to x's range (kAllPass / kNonePass) and NaN -> kNonePass, in integer
//    arithmetic only (the device compiler has no float64, and no float rounding is involved).
// Plain scalar code, so the same header compiles for the AI core and on the host.
#pragma once

#include <cstdint>

#include "ascend_kernels/aicore.h"
#include "ascend_kernels/dtype_soc_table.h"
#include "ascend_kernels/kernel_args.h"

namespace ascend_kernels {
namespace threshold_bits {

__aicore__ inline void SetMode(ThresholdParams* p, ThresholdMode mode, int64_t k) {
  p->mode = static_cast<int32_t>(mode);
  p->threshold_int = k;
}

// The integer k is compared as x > k: below the range every x passes, above it none does.
__aicore__ inline void Classify(int64_t k, int64_t lo, int64_t hi, ThresholdParams* p) {
  if (k < lo) return SetMode(p, ThresholdMode::kAllPass, 0);
  if (k > hi) return SetMode(p, ThresholdMode::kNonePass, 0);
  SetMode(p, ThresholdMode::kCompare, k);
}

// floor of the IEEE binary value with `exp_bits` exponent and `mant_bits` mantissa bits
// (float32: 8, 23; float64: 11, 52), classified against [lo, hi]. For integer x,
// x > t <=> x > floor(t).
__aicore__ inline void ClassifyFloatBits(uint64_t bits, uint32_t exp_bits, uint32_t mant_bits,
                                         int64_t lo, int64_t hi, ThresholdParams* p) {
  const uint64_t mant_mask = (uint64_t{1} << mant_bits) - 1;
  const int32_t exp_all_ones = (1 << exp_bits) - 1;
  const int32_t bias = (1 << (exp_bits - 1)) - 1;
  const bool negative = ((bits >> (exp_bits + mant_bits)) & 1) != 0;
  const int32_t e = static_cast<int32_t>((bits >> mant_bits) & static_cast<uint64_t>(exp_all_ones));
  const uint64_t m = bits & mant_mask;
  if (e == exp_all_ones) {  // NaN: no x exceeds it; +-inf: none / every x does
    if (m != 0 || !negative) return SetMode(p, ThresholdMode::kNonePass, 0);
    return SetMode(p, ThresholdMode::kAllPass, 0);
  }
  if (e != 0 && e - bias >= 63) {  // |t| >= 2^63: outside int64 except t = -2^63 exactly
    if (!negative) return SetMode(p, ThresholdMode::kNonePass, 0);
    if (e - bias == 63 && m == 0) return Classify(-9223372036854775807LL - 1, lo, hi, p);
    return SetMode(p, ThresholdMode::kAllPass, 0);
  }
  // |t| = sig * 2^shift < 2^63.
  const uint64_t sig = e == 0 ? m : (m | (uint64_t{1} << mant_bits));
  const int32_t shift = (e == 0 ? 1 : e) - bias - static_cast<int32_t>(mant_bits);
  uint64_t whole = 0;
  bool fraction = false;
  if (shift >= 0) {
    whole = sig << shift;
  } else if (shift > -64) {
    whole = sig >> -shift;
    fraction = (sig & ((uint64_t{1} << -shift) - 1)) != 0;
  } else {
    fraction = sig != 0;
  }
  const int64_t k =
      negative ? -static_cast<int64_t>(whole) - (fraction ? 1 : 0) : static_cast<int64_t>(whole);
  Classify(k, lo, hi, p);
}

// The value of an integer threshold element from its low bytes: its C type's, sign-extended
// where the type is signed. False for a dtype that is not an integer kernel dtype.
struct IntegerValueOf {
  uint64_t bits;
  int64_t value = 0;
  bool integer = false;
  template <Dtype D>
  __aicore__ void operator()(CTypeOf<D>) {
    if constexpr (CTypeOf<D>::kInteger) {
      value = static_cast<int64_t>(static_cast<CType<D>>(bits));
      integer = true;
    }
  }
};

__aicore__ inline float Float32FromBits(uint32_t bits) {
  union {
    uint32_t u;
    float f;
  } v;
  v.u = bits;
  return v.f;
}

}  // namespace threshold_bits

// ThresholdParams for x of `x_dtype` from a threshold element of `threshold_dtype` whose bytes
// (zero-extended) are `bits`. Which pairs are planned is phase one's check alone (the dtype
// table's TakesThresholdDtype); of the others, an integer threshold of another integer dtype
// still compares exactly, and the rest give kNonePass.
__aicore__ inline ThresholdParams ThresholdParamsFromBits(int32_t x_dtype, int32_t threshold_dtype,
                                                          uint64_t bits) {
  ThresholdParams p{};  // every field 0: mode kCompare, source kTiling
  const auto t = static_cast<Dtype>(threshold_dtype);
  if (IntegerRange x_range{0, 0}; DtypeIntegerRange(x_dtype, &x_range)) {
    const int64_t lo = x_range.min, hi = x_range.max;
    threshold_bits::IntegerValueOf integer{bits};
    if (t == Dtype::kFloat32) {
      threshold_bits::ClassifyFloatBits(bits & 0xFFFFFFFFu, 8, 23, lo, hi, &p);
    } else if (t == Dtype::kFloat64) {
      threshold_bits::ClassifyFloatBits(bits, 11, 52, lo, hi, &p);
    } else if (VisitKernelDtype(threshold_dtype, integer) && integer.integer) {
      threshold_bits::Classify(integer.value, lo, hi, &p);
    } else {
      threshold_bits::SetMode(&p, ThresholdMode::kNonePass, 0);
    }
    return p;
  }
  const auto x = static_cast<Dtype>(x_dtype);
  if (x == Dtype::kFloat64 && t == Dtype::kFloat64) {
    p.threshold_f64_bits = bits;
  } else if (x != Dtype::kFloat64 && t == Dtype::kFloat32) {
    p.threshold_f32 = threshold_bits::Float32FromBits(static_cast<uint32_t>(bits));
  } else {
    p.mode = static_cast<int32_t>(ThresholdMode::kNonePass);
  }
  return p;
}

}  // namespace ascend_kernels
