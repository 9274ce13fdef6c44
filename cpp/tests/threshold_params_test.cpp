// docs/behaviour.md §1: the threshold scalar -> ThresholdParams for every x dtype and scalar dtype.
#include <cmath>
#include <cstdint>
#include <cstring>

#include <gtest/gtest.h>
#include "aclnn/threshold_params.h"
#include "ascend_kernels/float64_bits.h"

using ascend_kernels::ThresholdMode;
using ascend_kernels::ThresholdParams;
using namespace jax_threshold::aclnn;

namespace {

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
