// The kernel's conversion of a device-side threshold element (ThresholdParamsFromBits,
// ascend_kernels/kernel_args.h) against the host's MakeThresholdParams, for every (x dtype,
// threshold dtype) pair the executor plans that way: the fields the kernel reads for x's dtype
// agree, over edge values and random sweeps.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "aclnn/tensor.h"
#include "aclnn/threshold_params.h"
#include "ascend_kernels/kernel_args.h"

namespace {

using ascend_kernels::ThresholdMode;
using ascend_kernels::ThresholdParams;
using namespace jax_threshold::aclnn;

// The table's integer x dtypes, and its floating-point ones that take a float32 threshold.
bool IsInteger(aclDataType d) {
  ascend_kernels::IntegerRange range{0, 0};
  return ascend_kernels::DtypeIntegerRange(d, &range);
}
std::vector<aclDataType> IntegerX() {
  std::vector<aclDataType> out;
  for (const auto& row : ascend_kernels::kDtypes) {
    const auto d = static_cast<aclDataType>(row.dtype);
    if (IsInteger(d)) out.push_back(d);
  }
  return out;
}
std::vector<aclDataType> Float32ThresholdX() {
  std::vector<aclDataType> out;
  for (const auto& row : ascend_kernels::kDtypes) {
    const auto d = static_cast<aclDataType>(row.dtype);
    if (!IsInteger(d) && ascend_kernels::TakesThresholdDtype(d, ACL_FLOAT)) out.push_back(d);
  }
  return out;
}
const std::vector<aclDataType> kIntegerX = IntegerX();
const std::vector<aclDataType> kFloatX = Float32ThresholdX();

uint64_t BitsOf(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}

uint64_t BitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

std::string Describe(aclDataType x, aclDataType t, uint64_t bits) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "x %s, threshold %s with bits 0x%016llx", DtypeName(x),
                DtypeName(t), static_cast<unsigned long long>(bits));
  return buf;
}

// Compares the device conversion of a threshold element (its low bytes `bits`) with the host's.
// NaN thresholds: every NaN compares false, so any NaN is the same threshold (a signalling NaN
// float32 comes back quieted from the host's round trip through double).
void ExpectSameParams(aclDataType x, aclDataType t, uint64_t bits) {
  aclScalar s;
  LoadScalar(&bits, t, &s);  // little-endian: the element is the low bytes
  ASSERT_NE(s.kind, aclScalar::Kind::kInvalid);
  const ThresholdParams host = MakeThresholdParams(s, x);
  const ThresholdParams device = ascend_kernels::ThresholdParamsFromBits(x, t, bits);
  SCOPED_TRACE(Describe(x, t, bits));
  switch (x) {
    case ACL_FLOAT:
    case ACL_FLOAT16:
    case ACL_BF16:
      if (std::isnan(host.threshold_f32)) {
        EXPECT_TRUE(std::isnan(device.threshold_f32));
      } else {
        EXPECT_EQ(BitsOf(device.threshold_f32), BitsOf(host.threshold_f32));
      }
      break;
    case ACL_DOUBLE:
      EXPECT_EQ(device.threshold_f64_bits, host.threshold_f64_bits);
      break;
    default:
      EXPECT_EQ(device.mode, host.mode);
      EXPECT_EQ(device.threshold_int, host.threshold_int);
  }
}

// Doubles around every integer range end, halves, float32 / float64 integer limits, tiny and
// huge magnitudes, infinities and NaNs.
std::vector<double> EdgeDoubles() {
  std::vector<double> v = {0.0,
                           -0.0,
                           std::numeric_limits<double>::quiet_NaN(),
                           -std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::denorm_min(),
                           -std::numeric_limits<double>::denorm_min(),
                           DBL_MIN,
                           -DBL_MIN,
                           std::nextafter(DBL_MIN, 0.0),
                           DBL_MAX,
                           -DBL_MAX,
                           1e300,
                           -1e300,
                           1e-300,
                           -1e-300,
                           0.5,
                           -0.5,
                           1.5,
                           -1.5,
                           2.5,
                           -2.5,
                           0.999999,
                           -0.999999,
                           std::nextafter(1.0, 0.0),
                           std::nextafter(-1.0, 0.0),
                           std::nextafter(1.0, 2.0),
                           std::nextafter(-1.0, -2.0)};
  const double ends[] = {-128,
                         127,
                         0,
                         255,
                         -2147483648.0,
                         2147483647.0,
                         16777216.0,
                         9007199254740992.0,  // 2^53
                         9223372036854775808.0,
                         -9223372036854775808.0,
                         18446744073709551616.0};
  for (double e : ends) {
    for (double d : {-1.0, -0.5, 0.0, 0.5, 1.0}) {
      v.push_back(e + d);
      v.push_back(-(e + d));
    }
    v.push_back(std::nextafter(e, INFINITY));
    v.push_back(std::nextafter(e, -INFINITY));
  }
  for (int e = 0; e <= 70; ++e) {  // every binade an integer range can end in, and beyond
    const double p = std::ldexp(1.0, e);
    for (double d : {p, -p, p + 0.5, -p - 0.5, std::nextafter(p, 0.0), std::nextafter(-p, 0.0)}) {
      v.push_back(d);
    }
  }
  return v;
}

TEST(ThresholdFromBits, Float64ThresholdForIntegerXMatchesTheHostAtEdgeValues) {
  for (aclDataType x : kIntegerX) {
    for (double d : EdgeDoubles()) ExpectSameParams(x, ACL_DOUBLE, BitsOf(d));
    for (uint64_t nan : {0x7FF0000000000001ull, 0xFFF8000000000123ull, 0x7FF7FFFFFFFFFFFFull}) {
      ExpectSameParams(x, ACL_DOUBLE, nan);  // signalling and negative NaNs
    }
  }
}

TEST(ThresholdFromBits, Float32ThresholdForIntegerXMatchesTheHostAtEdgeValues) {
  for (aclDataType x : kIntegerX) {
    for (double d : EdgeDoubles()) ExpectSameParams(x, ACL_FLOAT, BitsOf(static_cast<float>(d)));
    for (float f : {std::numeric_limits<float>::denorm_min(), -FLT_MIN, FLT_MAX, -FLT_MAX,
                    16777215.0f, 16777217.0f, 2147483520.0f, -2147483904.0f}) {
      ExpectSameParams(x, ACL_FLOAT, BitsOf(f));
    }
    ExpectSameParams(x, ACL_FLOAT, 0x7F800001u);  // signalling NaN
    ExpectSameParams(x, ACL_FLOAT, 0xFFC00000u);  // negative NaN
  }
}

TEST(ThresholdFromBits, IntegerThresholdOfXsDtypeMatchesTheHost) {
  for (aclDataType x : kIntegerX) {
    const uint64_t size = DtypeSize(x);
    const uint64_t mask = size == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * size)) - 1;
    for (int64_t v : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{127}, int64_t{-128},
                      int64_t{255}, int64_t{INT32_MAX}, int64_t{INT32_MIN}, INT64_MAX, INT64_MIN,
                      INT64_MAX - 1, INT64_MIN + 1}) {
      ExpectSameParams(x, x, static_cast<uint64_t>(v) & mask);
    }
  }
}

TEST(ThresholdFromBits, Float32ThresholdForFloatXIsTheElementItself) {
  for (aclDataType x : kFloatX) {
    for (double d : EdgeDoubles()) ExpectSameParams(x, ACL_FLOAT, BitsOf(static_cast<float>(d)));
    for (float f : {std::numeric_limits<float>::denorm_min(), -FLT_MIN, FLT_MAX, -0.0f}) {
      ExpectSameParams(x, ACL_FLOAT, BitsOf(f));
    }
  }
}

TEST(ThresholdFromBits, Float64ThresholdForFloat64XIsTheElementsBits) {
  for (double d : EdgeDoubles()) ExpectSameParams(ACL_DOUBLE, ACL_DOUBLE, BitsOf(d));
}

// Random sweeps: uniform bit patterns (every exponent, NaNs, subnormals) and values near
// integers of every magnitude up to 2^66.
TEST(ThresholdFromBits, RandomThresholdsMatchTheHostForEveryPair) {
  std::mt19937_64 rng(20261202);
  std::uniform_int_distribution<int> exponent(0, 66);
  std::uniform_int_distribution<int> nudge(-2, 2);
  for (int i = 0; i < 20000; ++i) {
    const uint64_t random_bits = rng();
    const double near_integer =
        std::ldexp(static_cast<double>(rng() >> 11), exponent(rng) - 53) + 0.5 * nudge(rng);
    const double signed_near = (rng() & 1) ? near_integer : -near_integer;
    for (aclDataType x : kIntegerX) {
      ExpectSameParams(x, ACL_DOUBLE, random_bits);
      ExpectSameParams(x, ACL_DOUBLE, BitsOf(signed_near));
      ExpectSameParams(x, ACL_FLOAT, random_bits & 0xFFFFFFFFu);
      ExpectSameParams(x, ACL_FLOAT, BitsOf(static_cast<float>(signed_near)));
      const uint64_t size = DtypeSize(x);
      ExpectSameParams(x, x, size == 8 ? random_bits : random_bits & ((1ull << (8 * size)) - 1));
    }
    for (aclDataType x : kFloatX) ExpectSameParams(x, ACL_FLOAT, random_bits & 0xFFFFFFFFu);
    ExpectSameParams(ACL_DOUBLE, ACL_DOUBLE, random_bits);
    if (HasFailure()) return;
  }
}

}  // namespace
