#include "aclnn/threshold_params.h"

#include "ascend_kernels/dtype_soc_table.h"
#include "ascend_kernels/float64_bits.h"

#include <cmath>
#include <limits>

namespace jax_threshold::aclnn {
namespace {

using ascend_kernels::ThresholdMode;
using ascend_kernels::ThresholdParams;

// The scalar's value rounded once to float / double.
float ToFloat(const aclScalar& s) {
  switch (s.kind) {
    case aclScalar::Kind::kSigned:
      return static_cast<float>(s.i);
    case aclScalar::Kind::kUnsigned:
      return static_cast<float>(s.u);
    default:
      return static_cast<float>(s.f);  // s.f holds the original value exactly
  }
}

double ToDouble(const aclScalar& s) {
  switch (s.kind) {
    case aclScalar::Kind::kSigned:
      return static_cast<double>(s.i);
    case aclScalar::Kind::kUnsigned:
      return static_cast<double>(s.u);
    default:
      return s.f;
  }
}

void SetIntegerMode(const aclScalar& s, int64_t lo, int64_t hi, ThresholdParams* p) {
  auto set = [p](ThresholdMode mode, int64_t k) {
    p->mode = static_cast<int32_t>(mode);
    p->threshold_int = k;
  };
  switch (s.kind) {
    case aclScalar::Kind::kSigned:
      if (s.i < lo) return set(ThresholdMode::kAllPass, 0);
      if (s.i > hi) return set(ThresholdMode::kNonePass, 0);
      return set(ThresholdMode::kCompare, s.i);
    case aclScalar::Kind::kUnsigned:  // hi >= 0, so the comparison is exact in uint64
      if (s.u > static_cast<uint64_t>(hi)) return set(ThresholdMode::kNonePass, 0);
      return set(ThresholdMode::kCompare, static_cast<int64_t>(s.u));
    default: {
      if (std::isnan(s.f)) return set(ThresholdMode::kNonePass, 0);
      const double k = std::floor(s.f);
      // lo is a power of two or 0, so exact in double; hi + 1 too (2^63 for int64).
      const double lo_d = static_cast<double>(lo);
      const double hi_plus_one_d = std::ldexp(static_cast<double>(hi / 2 + 1), 1);
      if (k < lo_d) return set(ThresholdMode::kAllPass, 0);
      if (k >= hi_plus_one_d) return set(ThresholdMode::kNonePass, 0);
      return set(ThresholdMode::kCompare, static_cast<int64_t>(k));  // k in [lo, hi]: exact
    }
  }
}

}  // namespace

ThresholdParams MakeThresholdParams(const aclScalar& threshold, aclDataType dtype) {
  ThresholdParams p{};
  p.mode = static_cast<int32_t>(ThresholdMode::kCompare);
  p.threshold_f32 = ToFloat(threshold);
  p.threshold_f64_bits = ascend_kernels::Float64ToBits(ToDouble(threshold));
  if (ascend_kernels::IntegerRange range{0, 0}; ascend_kernels::DtypeIntegerRange(dtype, &range)) {
    SetIntegerMode(threshold, range.min, range.max, &p);
  }
  return p;
}

}  // namespace jax_threshold::aclnn
