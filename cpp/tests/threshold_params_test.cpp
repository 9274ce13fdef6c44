// docs/behaviour.md §1, the threshold -> the kernel's ThresholdParams, one conversion on every
// path: ThresholdParamsFromBits (ascend_kernels/kernel_args.h), which the kernel runs on a
// device threshold's element and the host's MakeThresholdParams runs after converting a scalar
// exactly into a threshold dtype the kernel reads. Both against an independent reference (x > t
// as real numbers, in long double) for every (x dtype, threshold dtype) pair the executor plans,
// over edge values and random sweeps; then the scalar conversion's own cases.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "aclnn/executor.h"
#include "ascend_kernels/float64_bits.h"
#include "ascend_kernels/kernel_args.h"
#include "executor_test_util.h"

namespace {

using ascend_kernels::ThresholdMode;
using ascend_kernels::ThresholdParams;
using namespace executor_test;

bool IsInteger(aclDataType d) {
  ascend_kernels::IntegerRange range{0, 0};
  return ascend_kernels::DtypeIntegerRange(d, &range);
}
// The table's integer x dtypes, and its floating-point ones that take a float32 threshold.
std::vector<aclDataType> IntegerX() {
  std::vector<aclDataType> out;
  for (aclDataType d : KernelDtypes()) {
    if (IsInteger(d)) out.push_back(d);
  }
  return out;
}
std::vector<aclDataType> Float32ThresholdX() {
  std::vector<aclDataType> out;
  for (aclDataType d : KernelDtypes()) {
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

// The fields the kernel reads for x's dtype (kernel_args.h) equal the reference's: for float x
// the threshold element itself (any NaN is the same threshold: every comparison with it is
// false), for integer x floor(t) classified against x's range.
void ExpectReference(const ThresholdParams& p, aclDataType x, aclDataType t, uint64_t bits) {
  SCOPED_TRACE(Describe(x, t, bits));
  const long double value = LoadExact(t, reinterpret_cast<const unsigned char*>(&bits));
  if (x == ACL_DOUBLE) {
    EXPECT_EQ(p.threshold_f64_bits, bits);
  } else if (!IsInteger(x)) {
    float f;
    std::memcpy(&f, &bits, 4);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(p.threshold_f32));
    } else {
      EXPECT_EQ(BitsOf(p.threshold_f32), BitsOf(f));
    }
  } else {
    ascend_kernels::IntegerRange range{0, 0};
    ascend_kernels::DtypeIntegerRange(x, &range);
    const long double k = std::floor(value);
    ThresholdMode mode = ThresholdMode::kCompare;
    if (std::isnan(value) || k > range.max) mode = ThresholdMode::kNonePass;
    if (k < range.min) mode = ThresholdMode::kAllPass;
    EXPECT_EQ(p.mode, static_cast<int32_t>(mode));
    if (mode == ThresholdMode::kCompare) EXPECT_EQ(p.threshold_int, static_cast<int64_t>(k));
  }
}

// A threshold element (its low bytes `bits`) through both paths: the kernel's conversion of the
// element, and the host's of a scalar holding the same value.
void ExpectSameParams(aclDataType x, aclDataType t, uint64_t bits) {
  ExpectReference(ascend_kernels::ThresholdParamsFromBits(x, t, bits), x, t, bits);
  ScalarPtr scalar(aclCreateScalar(&bits, t));  // little-endian: the element is the low bytes
  ExpectReference(MakeThresholdParams(*scalar, x), x, t, bits);
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

TEST(ThresholdParams, Float64ThresholdForIntegerXMatchesTheReferenceAtEdgeValues) {
  for (aclDataType x : kIntegerX) {
    for (double d : EdgeDoubles()) ExpectSameParams(x, ACL_DOUBLE, BitsOf(d));
    for (uint64_t nan : {0x7FF0000000000001ull, 0xFFF8000000000123ull, 0x7FF7FFFFFFFFFFFFull}) {
      ExpectSameParams(x, ACL_DOUBLE, nan);  // signalling and negative NaNs
    }
  }
}

TEST(ThresholdParams, Float32ThresholdForIntegerXMatchesTheReferenceAtEdgeValues) {
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

TEST(ThresholdParams, IntegerThresholdOfXsDtypeMatchesTheReference) {
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

TEST(ThresholdParams, Float32ThresholdForFloatXIsTheElementItself) {
  for (aclDataType x : kFloatX) {
    for (double d : EdgeDoubles()) ExpectSameParams(x, ACL_FLOAT, BitsOf(static_cast<float>(d)));
    for (float f : {std::numeric_limits<float>::denorm_min(), -FLT_MIN, FLT_MAX, -0.0f}) {
      ExpectSameParams(x, ACL_FLOAT, BitsOf(f));
    }
  }
}

TEST(ThresholdParams, Float64ThresholdForFloat64XIsTheElementsBits) {
  for (double d : EdgeDoubles()) ExpectSameParams(ACL_DOUBLE, ACL_DOUBLE, BitsOf(d));
}

// Random sweeps: uniform bit patterns (every exponent, NaNs, subnormals) and values near
// integers of every magnitude up to 2^66.
TEST(ThresholdParams, RandomThresholdsMatchTheReferenceForEveryPair) {
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

template <class T>
ThresholdParams Params(T value, aclDataType scalar_dtype, aclDataType x_dtype) {
  aclScalar* s = aclCreateScalar(&value, scalar_dtype);
  ThresholdParams p = MakeThresholdParams(*s, x_dtype);
  aclDestroyScalar(s);
  return p;
}

void CheckMode(const ThresholdParams& p, ThresholdMode mode, int64_t k, int line) {
  if (p.mode != static_cast<int32_t>(mode) ||
      (mode == ThresholdMode::kCompare && p.threshold_int != k)) {
    ADD_FAILURE_AT(__FILE__, line) << "mode " << p.mode << " k " << p.threshold_int;
  }
}
#define CHECK_MODE(p, mode, k) CheckMode((p), ThresholdMode::mode, (k), __LINE__)

}  // namespace

TEST(ThresholdParams, IntegerXFromDoubleThresholdFloorsExactly) {
  CHECK_MODE(Params(2.5, ACL_DOUBLE, ACL_INT32), kCompare, 2);
  CHECK_MODE(Params(-2.5, ACL_DOUBLE, ACL_INT32), kCompare, -3);
  CHECK_MODE(Params(-0.0, ACL_DOUBLE, ACL_INT8), kCompare, 0);
  CHECK_MODE(Params(std::nan(""), ACL_DOUBLE, ACL_INT8), kNonePass, 0);
  CHECK_MODE(Params(HUGE_VAL, ACL_DOUBLE, ACL_INT64), kNonePass, 0);
  CHECK_MODE(Params(-HUGE_VAL, ACL_DOUBLE, ACL_INT64), kAllPass, 0);
  CHECK_MODE(Params(127.9, ACL_DOUBLE, ACL_INT8), kCompare, 127);
  CHECK_MODE(Params(128.0, ACL_DOUBLE, ACL_INT8), kNonePass, 0);
  CHECK_MODE(Params(-128.0, ACL_DOUBLE, ACL_INT8), kCompare, -128);
  CHECK_MODE(Params(-128.5, ACL_DOUBLE, ACL_INT8), kAllPass, 0);
  CHECK_MODE(Params(-0.5, ACL_DOUBLE, ACL_UINT8), kAllPass, 0);
  CHECK_MODE(Params(255.5, ACL_DOUBLE, ACL_UINT8), kCompare, 255);
  CHECK_MODE(Params(256.0, ACL_DOUBLE, ACL_UINT8), kNonePass, 0);
  CHECK_MODE(Params(2147483647.5, ACL_DOUBLE, ACL_INT32), kCompare, 2147483647);
  CHECK_MODE(Params(9223372036854775808.0, ACL_DOUBLE, ACL_INT64), kNonePass, 0);
  CHECK_MODE(Params(-9223372036854775808.0, ACL_DOUBLE, ACL_INT64), kCompare, INT64_MIN);
  CHECK_MODE(Params(9.2233720368547748e18, ACL_DOUBLE, ACL_INT64), kCompare,
             int64_t{9223372036854774784});
}

TEST(ThresholdParams, IntegerXFromIntegerThresholdsClampsToTheRange) {
  CHECK_MODE(Params(int64_t{INT64_MAX}, ACL_INT64, ACL_INT64), kCompare, INT64_MAX);
  CHECK_MODE(Params(int64_t{INT64_MIN}, ACL_INT64, ACL_INT32), kAllPass, 0);
  CHECK_MODE(Params(int64_t{300}, ACL_INT64, ACL_UINT8), kNonePass, 0);
  CHECK_MODE(Params(uint64_t{UINT64_MAX}, ACL_UINT64, ACL_INT64), kNonePass, 0);
  CHECK_MODE(Params(uint64_t{5}, ACL_UINT64, ACL_INT8), kCompare, 5);
  CHECK_MODE(Params(int8_t{-7}, ACL_INT8, ACL_INT32), kCompare, -7);
  CHECK_MODE(Params(uint8_t{1}, ACL_BOOL, ACL_INT32), kCompare, 1);
  uint16_t half_2_5 = 0x4100;  // 2.5 in float16
  CHECK_MODE(Params(half_2_5, ACL_FLOAT16, ACL_INT8), kCompare, 2);
  uint16_t bf16_neg_2_5 = 0xC020;  // -2.5 in bfloat16
  CHECK_MODE(Params(bf16_neg_2_5, ACL_BF16, ACL_INT8), kCompare, -3);
}

TEST(ThresholdParams, FloatXRoundsTheThresholdOnceToFloat32) {
  // 1 + 2^-24 + 2^-40: float32 rounds it once, up to 1 + 2^-23 (not a tie, as a second rounding
  // through 1 + 2^-24 would make it).
  const double t = 1.0 + std::ldexp(1.0, -24) + std::ldexp(1.0, -40);
  for (aclDataType d : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
    ThresholdParams p = Params(t, ACL_DOUBLE, d);
    EXPECT_EQ(p.threshold_f32, 1.0f + std::ldexp(1.0f, -23));
    EXPECT_EQ(p.mode, 0);
  }
  EXPECT_EQ(ascend_kernels::Float64FromBits(Params(t, ACL_DOUBLE, ACL_DOUBLE).threshold_f64_bits),
            t);
  // int64 2^53 + 1 rounds once to double (2^53) and once to float32.
  const int64_t big = (int64_t{1} << 53) + 1;
  EXPECT_EQ(ascend_kernels::Float64FromBits(Params(big, ACL_INT64, ACL_DOUBLE).threshold_f64_bits),
            9007199254740992.0);
  EXPECT_EQ(Params(int64_t{16777217}, ACL_INT64, ACL_FLOAT).threshold_f32, 16777216.0f);
  EXPECT_EQ(Params(int64_t{16777219}, ACL_INT64, ACL_FLOAT).threshold_f32, 16777220.0f);
  EXPECT_TRUE(std::isnan(Params(std::nan(""), ACL_DOUBLE, ACL_FLOAT).threshold_f32));
}
