// The element loops of the CPU AscendC model (cpu_ascendc/vector_ops.h) against a
// one-element-at-a-time reference, bit for bit:
// the compares the primitives make (float, double, half, int8, uint8), the select on
// 8/16/32/64-bit elements, each conversion, and the element-wise maps in place and between
// arrays.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "aligned_buffer.h"
#include "kernel_operator.h"

namespace {

using AscendC::CMPMODE;
using cpu_ascendc::BitsFloat;
using cpu_ascendc::FloatBits;
namespace loops = cpu_ascendc::loops;
using test::Aligned;

constexpr CMPMODE kModes[] = {CMPMODE::LT, CMPMODE::GT, CMPMODE::EQ,
                              CMPMODE::LE, CMPMODE::GE, CMPMODE::NE};

template <typename C>
bool Holds(C v, CMPMODE mode, C t) {
  switch (mode) {
    case CMPMODE::LT:
      return v < t;
    case CMPMODE::GT:
      return v > t;
    case CMPMODE::EQ:
      return v == t;
    case CMPMODE::LE:
      return v <= t;
    case CMPMODE::GE:
      return v >= t;
    case CMPMODE::NE:
      return v != t;
  }
  return false;
}

template <typename C>
std::vector<C> FloatSpecials() {
  const C inf = std::numeric_limits<C>::infinity();
  return {C(0),
          -C(0),
          C(1),
          C(-1),
          C(0.5),
          inf,
          -inf,
          std::numeric_limits<C>::quiet_NaN(),
          -std::numeric_limits<C>::quiet_NaN(),
          std::numeric_limits<C>::denorm_min(),
          -std::numeric_limits<C>::denorm_min(),
          std::numeric_limits<C>::max(),
          std::numeric_limits<C>::lowest(),
          C(2.5)};
}

// Checks loops::CompareMask of widen(src[i]) against the reference, every mode and threshold.
template <typename S, typename C, typename Widen>
void ExpectCompareMatches(const Aligned<S>& src, uint64_t n, const std::vector<C>& thresholds,
                          Widen widen) {
  Aligned<uint8_t> got(n / 8);
  for (C t : thresholds) {
    for (CMPMODE mode : kModes) {
      const S* s = src.data();
      loops::CompareMask(got.data(), n, mode, t, [s, widen](uint64_t i) { return widen(s[i]); });
      uint64_t bad = 0;
      for (uint64_t i = 0; i < n; ++i) {
        const bool bit = (got.data()[i / 8] >> (i % 8)) & 1;
        bad += bit != Holds(widen(s[i]), mode, t);
      }
      EXPECT_EQ(bad, 0u) << "mode " << static_cast<int>(mode) << " t " << static_cast<double>(t);
    }
  }
}

template <typename C>
void ExpectFloatCompareMatches() {
  std::mt19937_64 rng(17);
  const std::vector<C> specials = FloatSpecials<C>();
  const uint64_t n = 4096 + 64;  // more than one mask chunk, and a partial last one
  Aligned<C> src(n);
  for (uint64_t i = 0; i < n; ++i) {
    src.data()[i] = rng() % 3 == 0
                        ? specials[rng() % specials.size()]
                        : static_cast<C>(std::uniform_real_distribution<double>(-3, 3)(rng));
  }
  ExpectCompareMatches(src, n, specials, [](C v) { return v; });
}

TEST(VectorLoops, FloatCompareMatchesReference) { ExpectFloatCompareMatches<float>(); }
TEST(VectorLoops, DoubleCompareMatchesReference) { ExpectFloatCompareMatches<double>(); }

// Every half bit pattern against half thresholds: both zeros, both infinities, NaNs, the extreme
// normals and subnormals, and a spread of patterns of either sign.
TEST(VectorLoops, HalfCompareMatchesReferenceOnEveryBitPattern) {
  const uint64_t n = 65536;
  Aligned<uint16_t> src(n);
  for (uint64_t i = 0; i < n; ++i) src.data()[i] = static_cast<uint16_t>(i);
  std::vector<uint16_t> thresholds;
  for (uint16_t mag : {0x0000, 0x0001, 0x0002, 0x03ff, 0x0400, 0x3800, 0x3c00, 0x3c01, 0x4100,
                       0x4200, 0x57f0, 0x5800, 0x7bff, 0x7c00, 0x7c01, 0x7e00, 0x7fff}) {
    thresholds.push_back(mag);
    thresholds.push_back(static_cast<uint16_t>(mag | 0x8000));
  }
  for (uint32_t h = 0x0123; h < 0x10000; h += 0x0f3b)
    thresholds.push_back(static_cast<uint16_t>(h));
  // CompareScalar's half loop compares integer keys (loops::CompareHalf); the reference widens.
  Aligned<uint8_t> got(n / 8);
  for (uint16_t t : thresholds) {
    const float tf = cpu_ascendc::HalfBitsToFloat(t);
    for (CMPMODE mode : kModes) {
      loops::CompareHalf(got.data(), src.data(), n, mode, t);
      uint64_t bad = 0;
      for (uint64_t i = 0; i < n; ++i) {
        const bool bit = (got.data()[i / 8] >> (i % 8)) & 1;
        bad += bit != Holds(cpu_ascendc::HalfBitsToFloat(src.data()[i]), mode, tf);
      }
      EXPECT_EQ(bad, 0u) << "mode " << static_cast<int>(mode) << " t bits " << t;
      // A run that starts one mask byte in and is no multiple of a vector step.
      const uint64_t len = n - 8 - 48;
      std::memset(got.data(), 0x5a, n / 8);
      loops::CompareHalf(got.data() + 1, src.data() + 8, len, mode, t);
      bad = 0;
      for (uint64_t i = 0; i < n; ++i) {
        const bool bit = (got.data()[i / 8] >> (i % 8)) & 1;
        const bool inside = i >= 8 && i < 8 + len;
        bad += bit != (inside ? Holds(cpu_ascendc::HalfBitsToFloat(src.data()[i]), mode, tf)
                              : ((0x5a >> (i % 8)) & 1) != 0);
      }
      EXPECT_EQ(bad, 0u) << "offset run, mode " << static_cast<int>(mode) << " t bits " << t;
    }
  }
}

// Every byte value against every byte threshold (the Ascend950's 8-bit CompareScalar), from
// the start of the array and from one mask byte in with a length no vector step divides.
template <typename T>
void ExpectByteCompareMatches() {
  const uint64_t n = 256 * 4;
  Aligned<T> src(n);
  for (uint64_t i = 0; i < n; ++i) src.data()[i] = static_cast<T>(i * 37 + i / 256);
  Aligned<uint8_t> got(n / 8);
  for (int v = 0; v < 256; ++v) {
    const T t = static_cast<T>(v);
    for (CMPMODE mode : kModes) {
      for (uint64_t start : {uint64_t{0}, uint64_t{8}}) {
        const uint64_t len = start == 0 ? n : n - start - 40;
        std::memset(got.data(), 0x5a, n / 8);
        const T* s = src.data() + start;
        loops::CompareMask(got.data() + start / 8, len, mode, t, [s](uint64_t i) { return s[i]; });
        uint64_t bad = 0;
        for (uint64_t i = 0; i < n; ++i) {
          const bool bit = (got.data()[i / 8] >> (i % 8)) & 1;
          const bool inside = i >= start && i < start + len;
          bad += bit != (inside ? Holds(src.data()[i], mode, t) : ((0x5a >> (i % 8)) & 1) != 0);
        }
        EXPECT_EQ(bad, 0u) << "mode " << static_cast<int>(mode) << " t " << v << " start " << start;
      }
    }
  }
}

TEST(VectorLoops, Int8CompareMatchesReferenceOnEveryValueAndThreshold) {
  ExpectByteCompareMatches<int8_t>();
}
TEST(VectorLoops, UInt8CompareMatchesReferenceOnEveryValueAndThreshold) {
  ExpectByteCompareMatches<uint8_t>();
}

template <typename B>
void ExpectSelectMatches() {
  std::mt19937_64 rng(sizeof(B));
  for (uint64_t n : {uint64_t{8}, uint64_t{61}, uint64_t{256}, uint64_t{256 * 3 + 13}}) {
    Aligned<B> src(n), got(n), in_place(n);
    Aligned<uint8_t> mask((n + 7) / 8);
    for (uint64_t i = 0; i < n; ++i) src.data()[i] = static_cast<B>(rng());
    for (uint64_t i = 0; i < (n + 7) / 8; ++i) mask.data()[i] = static_cast<uint8_t>(rng());
    const B fill = static_cast<B>(rng());
    loops::SelectBits(got.data(), mask.data(), src.data(), fill, n);
    std::memcpy(in_place.data(), src.data(), n * sizeof(B));
    loops::SelectBits(in_place.data(), mask.data(), in_place.data(), fill, n);
    uint64_t bad = 0;
    for (uint64_t i = 0; i < n; ++i) {
      const B expect = (mask.data()[i / 8] >> (i % 8)) & 1 ? src.data()[i] : fill;
      bad += got.data()[i] != expect;
      bad += in_place.data()[i] != expect;
    }
    EXPECT_EQ(bad, 0u) << "n " << n << " bits " << 8 * sizeof(B);
  }
}

TEST(VectorLoops, Select8BitMatchesReference) { ExpectSelectMatches<uint8_t>(); }
TEST(VectorLoops, Select16BitMatchesReference) { ExpectSelectMatches<uint16_t>(); }
TEST(VectorLoops, Select32BitMatchesReference) { ExpectSelectMatches<uint32_t>(); }
TEST(VectorLoops, Select64BitMatchesReference) { ExpectSelectMatches<uint64_t>(); }

// loops::Map of `f` over src against f element by element.
template <typename D, typename S, typename F>
void ExpectMapMatches(const std::vector<S>& values, F f, const char* what) {
  const uint64_t n = values.size();
  Aligned<S> src(n);
  Aligned<D> got(n);
  std::memcpy(src.data(), values.data(), n * sizeof(S));
  loops::Map(got.data(), src.data(), n, f);
  uint64_t bad = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const D expect = f(values[i]);
    bad += std::memcmp(&got.data()[i], &expect, sizeof(D)) != 0;
  }
  EXPECT_EQ(bad, 0u) << what;
}

// A Cast loop (loop(dst, src, n)) against the scalar conversion `f`, on
// every value, over the whole array and over a run with an odd start and an odd length (the
// vector steps and the loop's rest).
template <typename D, typename S, typename Loop, typename F>
void ExpectCastLoopMatches(const std::vector<S>& values, Loop loop, F f, const char* what) {
  const uint64_t n = values.size();
  Aligned<S> src(n);
  Aligned<D> got(n);
  std::memcpy(src.data(), values.data(), n * sizeof(S));
  for (uint64_t start : {uint64_t{0}, uint64_t{3}}) {
    const uint64_t len = start == 0 ? n : n - start - 10;
    std::memset(got.data(), 0x5a, n * sizeof(D));
    loop(got.data() + start, src.data() + start, len);
    uint64_t bad = 0;
    for (uint64_t i = 0; i < n; ++i) {
      const bool inside = i >= start && i < start + len;
      const D expect = inside ? f(values[i]) : static_cast<D>(0x5a5a);
      bad += std::memcmp(&got.data()[i], &expect, sizeof(D)) != 0;
    }
    EXPECT_EQ(bad, 0u) << what << " start " << start;
  }
}

std::vector<uint16_t> AllU16() {
  std::vector<uint16_t> v(65536);
  for (uint32_t i = 0; i < 65536; ++i) v[i] = static_cast<uint16_t>(i);
  return v;
}

std::vector<float> FloatsNearHalfAndBf16Roundings() {
  std::mt19937 rng(5);
  std::vector<float> v = FloatSpecials<float>();
  for (int i = 0; i < 200000; ++i) {
    uint32_t u = rng();
    if (i % 2)
      u = (u & 0x8000ffffu) | ((0x30u + (u >> 16) % 0x20u) << 23);  // dense near half's range
    v.push_back(BitsFloat(u));
  }
  return v;
}

TEST(VectorLoops, WideningConversionsMatchReferenceOnEveryBitPattern) {
  const std::vector<uint16_t> all = AllU16();
  ExpectMapMatches<float>(
      all, [](uint16_t h) { return cpu_ascendc::HalfBitsToFloat(h); }, "half->float");
  ExpectMapMatches<float>(
      all, [](uint16_t b) { return cpu_ascendc::Bf16BitsToFloat(b); }, "bfloat16->float");
  std::vector<int8_t> s8(256);
  std::vector<uint8_t> u8(256);
  for (int i = 0; i < 256; ++i) {
    s8[i] = static_cast<int8_t>(i);
    u8[i] = static_cast<uint8_t>(i);
  }
  ExpectMapMatches<uint16_t>(
      s8, [](int8_t v) { return loops::ByteIntToHalfBits(v); }, "int8->half");
  ExpectMapMatches<uint16_t>(
      u8, [](uint8_t v) { return loops::ByteIntToHalfBits(v); }, "uint8->half");
  ExpectCastLoopMatches<uint16_t>(
      s8, [](uint16_t* d, const int8_t* s, uint64_t n) { loops::ByteIntToHalf(d, s, n); },
      [](int8_t v) { return loops::ByteIntToHalfBits(v); }, "int8->half Cast");
  ExpectCastLoopMatches<uint16_t>(
      u8, [](uint16_t* d, const uint8_t* s, uint64_t n) { loops::ByteIntToHalf(d, s, n); },
      [](uint8_t v) { return loops::ByteIntToHalfBits(v); }, "uint8->half Cast");
  for (int i = 0; i < 256; ++i) {
    EXPECT_EQ(cpu_ascendc::HalfBitsToFloat(loops::ByteIntToHalfBits(s8[i])),
              static_cast<float>(s8[i]));
    EXPECT_EQ(cpu_ascendc::HalfBitsToFloat(loops::ByteIntToHalfBits(u8[i])),
              static_cast<float>(u8[i]));
  }
}

TEST(VectorLoops, NarrowingConversionsMatchReference) {
  const std::vector<float> floats = FloatsNearHalfAndBf16Roundings();
  ExpectMapMatches<uint16_t>(
      floats, [](float f) { return cpu_ascendc::FloatToHalfBits(f); }, "float->half");
  ExpectMapMatches<uint16_t>(
      floats, [](float f) { return cpu_ascendc::FloatToBf16Bits(f); }, "float->bfloat16");
  const std::vector<uint16_t> all = AllU16();
  ExpectMapMatches<int8_t>(
      all, [](uint16_t h) { return loops::HalfBitsToByteIntRint<int8_t>(h); }, "half->int8");
  ExpectMapMatches<uint8_t>(
      all, [](uint16_t h) { return loops::HalfBitsToByteIntRint<uint8_t>(h); }, "half->uint8");
  ExpectCastLoopMatches<int8_t>(
      all, [](int8_t* d, const uint16_t* s, uint64_t n) { loops::HalfToByteIntRint(d, s, n); },
      [](uint16_t h) { return loops::HalfBitsToByteIntRint<int8_t>(h); }, "half->int8 Cast");
  ExpectCastLoopMatches<uint8_t>(
      all, [](uint8_t* d, const uint16_t* s, uint64_t n) { loops::HalfToByteIntRint(d, s, n); },
      [](uint16_t h) { return loops::HalfBitsToByteIntRint<uint8_t>(h); }, "half->uint8 Cast");
  // Against the general rounding path (widen, round to nearest even, saturate), every pattern.
  for (uint16_t h : all) {
    const float f = cpu_ascendc::HalfBitsToFloat(h);
    const float r = std::nearbyint(f);
    const int8_t s8 = f != f ? 0 : r <= -128.0f ? -128 : r >= 127.0f ? 127 : static_cast<int8_t>(r);
    const uint8_t u8 = f != f ? 0 : r <= 0.0f ? 0 : r >= 255.0f ? 255 : static_cast<uint8_t>(r);
    EXPECT_EQ(loops::HalfBitsToByteIntRint<int8_t>(h), s8) << h;
    EXPECT_EQ(loops::HalfBitsToByteIntRint<uint8_t>(h), u8) << h;
  }
  // Round to nearest even, saturating, NaN -> 0.
  auto to_s8 = [](float f) {
    return loops::HalfBitsToByteIntRint<int8_t>(cpu_ascendc::FloatToHalfBits(f));
  };
  EXPECT_EQ(to_s8(2.5f), 2);
  EXPECT_EQ(to_s8(3.5f), 4);
  EXPECT_EQ(to_s8(-2.5f), -2);
  EXPECT_EQ(to_s8(300.0f), 127);
  EXPECT_EQ(to_s8(-300.0f), -128);
  EXPECT_EQ(to_s8(std::nanf("")), 0);
  EXPECT_EQ(loops::HalfBitsToByteIntRint<uint8_t>(cpu_ascendc::FloatToHalfBits(-3.0f)), 0);
  EXPECT_EQ(loops::HalfBitsToByteIntRint<uint8_t>(cpu_ascendc::FloatToHalfBits(255.4f)), 255);
}

// Map and Zip in place and between arrays (the primitives' dst may be a source).
TEST(VectorLoops, MapAndZipInPlaceAndDistinctMatchReference) {
  std::mt19937_64 rng(3);
  const uint64_t n = 1000;
  std::vector<int16_t> a(n), b(n);
  for (uint64_t i = 0; i < n; ++i) {
    a[i] = static_cast<int16_t>(rng());
    b[i] = static_cast<int16_t>(rng());
  }
  auto op = [](int16_t x, int16_t y) { return static_cast<int16_t>((x & y) ^ 0x5a5a); };
  Aligned<int16_t> x(n), y(n), d(n);
  auto reset = [&] {
    std::memcpy(x.data(), a.data(), n * 2);
    std::memcpy(y.data(), b.data(), n * 2);
  };
  auto expect = [&](const Aligned<int16_t>& got, int form) {
    uint64_t bad = 0;
    for (uint64_t i = 0; i < n; ++i) {
      const int16_t e = form == 0   ? op(a[i], b[i])
                        : form == 1 ? op(a[i], a[i])
                                    : static_cast<int16_t>(~a[i]);
      bad += got.data()[i] != e;
    }
    EXPECT_EQ(bad, 0u) << "form " << form;
  };
  reset();
  loops::Zip(d.data(), x.data(), y.data(), n, op);
  expect(d, 0);
  loops::Zip(x.data(), x.data(), y.data(), n, op);  // dst is the first source
  expect(x, 0);
  reset();
  loops::Zip(y.data(), x.data(), y.data(), n, op);  // dst is the second source
  expect(y, 0);
  reset();
  loops::Zip(x.data(), x.data(), x.data(), n, op);  // all three one array
  expect(x, 1);
  reset();
  loops::Map(x.data(), x.data(), n, [](int16_t v) { return static_cast<int16_t>(~v); });
  expect(x, 2);
}

}  // namespace
