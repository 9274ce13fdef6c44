// The fast loops of the CPU AscendC implementation (cpu_ascendc/vector_loops.h) against their
// reference forms, bit for bit: SSE2 mask loops vs the scalar ones, the half compare in the
// integer key domain vs widening to float, the byte-integer conversions vs the general ones, and
// every loop in its baseline (SSE2) form and its AVX2 form (when the host has AVX2).
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "aligned_buffer.h"
#include "kernel_operator.h"
#include "test_harness.h"
#include "vector_loops.h"

namespace {

using AscendC::CMPMODE;
using cpu_ascendc::BitsFloat;
using cpu_ascendc::FloatBits;
namespace loops = cpu_ascendc::loops;

using test::Aligned;

std::vector<loops::Isa> Isas() {
  std::vector<loops::Isa> isas = {loops::Isa::kBaseline};
  if (loops::HostHasAvx2()) isas.push_back(loops::Isa::kAvx2);
  if (loops::HostHasAvx512()) isas.push_back(loops::Isa::kAvx512);
  return isas;
}

template <typename F>
void ForEachMode(F f) {
  f(std::integral_constant<CMPMODE, CMPMODE::LT>{});
  f(std::integral_constant<CMPMODE, CMPMODE::GT>{});
  f(std::integral_constant<CMPMODE, CMPMODE::EQ>{});
  f(std::integral_constant<CMPMODE, CMPMODE::LE>{});
  f(std::integral_constant<CMPMODE, CMPMODE::GE>{});
  f(std::integral_constant<CMPMODE, CMPMODE::NE>{});
}

template <typename C>
std::vector<C> FloatSpecials() {
  const C inf = std::numeric_limits<C>::infinity();
  return {C(0), -C(0), C(1), C(-1), C(0.5), inf, -inf, std::numeric_limits<C>::quiet_NaN(),
          -std::numeric_limits<C>::quiet_NaN(), std::numeric_limits<C>::denorm_min(),
          std::numeric_limits<C>::max(), std::numeric_limits<C>::lowest(), C(2.5)};
}

template <typename C>
void CheckFloatCompare() {
  std::mt19937_64 rng(17);
  const std::vector<C> specials = FloatSpecials<C>();
  const uint64_t n = 4096;
  Aligned<C> src(n);
  for (uint64_t i = 0; i < n; ++i) {
    src.data()[i] = rng() % 3 == 0 ? specials[rng() % specials.size()]
                                   : static_cast<C>(std::uniform_real_distribution<double>(-3, 3)(rng));
  }
  Aligned<uint8_t> simd(n / 8), scalar(n / 8);
  for (loops::Isa isa : Isas()) {
    for (C t : specials) {
      ForEachMode([&](auto tag) {
        constexpr CMPMODE kMode = decltype(tag)::value;
        loops::CompareBits<kMode>(simd.data(), src.data(), t, n, isa);
        loops::ScalarCompare<kMode>(scalar.data(), src.data(), t, n);
        CHECK_MSG(std::memcmp(simd.data(), scalar.data(), n / 8) == 0,
                  "mode " + std::to_string(static_cast<int>(kMode)) + " t=" + std::to_string(static_cast<double>(t)) +
                      " isa " + std::to_string(static_cast<int>(isa)));
        // An odd number of mask bytes (the AVX-512 loop's AVX2 tail).
        loops::CompareBits<kMode>(simd.data(), src.data(), t, n - 8, isa);
        CHECK_MSG(std::memcmp(simd.data(), scalar.data(), n / 8 - 1) == 0, "odd tail");
      });
    }
  }
}

TEST(CompareFloatSimdMatchesScalar) { CheckFloatCompare<float>(); }
TEST(CompareDoubleSimdMatchesScalar) { CheckFloatCompare<double>(); }

// Every half against thresholds at, between and beyond halves (and NaN, +-0, +-inf), all modes.
TEST(CompareHalfKeysMatchWidening) {
  const uint64_t n = 0x10000;
  Aligned<uint16_t> src(n);
  for (uint64_t i = 0; i < n; ++i) src.data()[i] = static_cast<uint16_t>(i);
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> ts = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, inf, -inf, std::nanf(""), 65504.0f, -65504.0f,
                           65519.0f, 65520.0f, -65520.0f, 1e10f, -1e10f, 1e-8f, -1e-8f, 1.0f + 1.0f / 4096,
                           1.0f + 1.0f / 2048, cpu_ascendc::HalfBitsToFloat(0x0001),
                           -cpu_ascendc::HalfBitsToFloat(0x0001), cpu_ascendc::HalfBitsToFloat(0x03ff),
                           cpu_ascendc::HalfBitsToFloat(0x0400), std::numeric_limits<float>::denorm_min(),
                           std::numeric_limits<float>::max(), 127.0f, 127.5f, -128.5f, 255.0f};
  std::mt19937 rng(5);
  for (int i = 0; i < 24; ++i) ts.push_back(std::uniform_real_distribution<float>(-70000.0f, 70000.0f)(rng));
  Aligned<uint8_t> fast(n / 8), ref(n / 8);
  for (float t : ts) {
    ForEachMode([&](auto tag) {
      constexpr CMPMODE kMode = decltype(tag)::value;
      loops::ScalarCompareHalf<kMode>(ref.data(), src.data(), t, n);
      for (loops::Isa isa : Isas()) {
        loops::CompareHalfBits<kMode>(fast.data(), src.data(), t, n, isa);
        CHECK_MSG(std::memcmp(fast.data(), ref.data(), n / 8) == 0,
                  "mode " + std::to_string(static_cast<int>(kMode)) + " t=" + std::to_string(t) + " isa " +
                      std::to_string(static_cast<int>(isa)));
        // An odd number of mask bytes (the AVX2 loop's SSE2 tail).
        loops::CompareHalfBits<kMode>(fast.data(), src.data(), t, n - 8, isa);
        CHECK_MSG(std::memcmp(fast.data(), ref.data(), n / 8 - 1) == 0, "odd tail");
      }
    });
  }
}

// Compares straight from narrow bits (the deferred casts' consumer) against widening first, as
// Cast + CompareScalar do: every bfloat16 and byte value, all modes, every form, odd tails.
TEST(CompareFromNarrowBitsMatchesWidening) {
  const uint64_t n = 0x10000;
  Aligned<uint16_t> bf(n);
  Aligned<float> bf_wide(n);
  for (uint64_t i = 0; i < n; ++i) {
    bf.data()[i] = static_cast<uint16_t>(i);
    bf_wide.data()[i] = cpu_ascendc::Bf16BitsToFloat(static_cast<uint16_t>(i));
  }
  Aligned<int8_t> s8(256);
  Aligned<uint8_t> u8(256);
  Aligned<float> s8_wide(256), u8_wide(256);
  for (int i = 0; i < 256; ++i) {
    s8.data()[i] = static_cast<int8_t>(i * 37 + 11);  // every value once, scrambled
    u8.data()[i] = static_cast<uint8_t>(i * 37 + 11);
    s8_wide.data()[i] = static_cast<float>(s8.data()[i]);
    u8_wide.data()[i] = static_cast<float>(u8.data()[i]);
  }
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> ts = {0.0f, -0.0f, 1.0f, -1.5f, 0.5f, inf, -inf, std::nanf(""), 3.0f, 127.0f, -128.0f,
                                 126.5f, 255.0f, 1e38f, -1e-40f, std::numeric_limits<float>::denorm_min()};
  Aligned<uint8_t> fast(n / 8), ref(n / 8);
  for (float t : ts) {
    ForEachMode([&](auto tag) {
      constexpr CMPMODE kMode = decltype(tag)::value;
      const std::string what = "mode " + std::to_string(static_cast<int>(kMode)) + " t=" + std::to_string(t);
      loops::ScalarCompare<kMode>(ref.data(), bf_wide.data(), t, n);
      for (loops::Isa isa : Isas()) {
        loops::CompareBf16Bits<kMode>(fast.data(), bf.data(), t, n, isa);
        CHECK_MSG(std::memcmp(fast.data(), ref.data(), n / 8) == 0, "bfloat16 " + what);
        loops::CompareBf16Bits<kMode>(fast.data(), bf.data() + 8, t, n - 24, isa);  // odd mask bytes
        CHECK_MSG(std::memcmp(fast.data(), ref.data() + 1, n / 8 - 3) == 0, "bfloat16 odd tail " + what);
      }
      auto check_bytes = [&](const auto* src, const float* wide, const char* name) {
        loops::ScalarCompare<kMode>(ref.data(), wide, t, 256);
        for (loops::Isa isa : Isas()) {
          loops::CompareByteIntBits<kMode>(fast.data(), src, t, 256, isa);
          CHECK_MSG(std::memcmp(fast.data(), ref.data(), 32) == 0, name + (" " + what));
          loops::CompareByteIntBits<kMode>(fast.data(), src + 8, t, 232, isa);
          CHECK_MSG(std::memcmp(fast.data(), ref.data() + 1, 29) == 0, name + (" odd tail " + what));
        }
      };
      check_bytes(s8.data(), s8_wide.data(), "int8");
      check_bytes(u8.data(), u8_wide.data(), "uint8");
    });
  }
}

template <typename B>
void CheckSelect() {
  std::mt19937_64 rng(23);
  for (uint64_t n : {8u, 16u, 24u, 40u, 56u, 64u, 1000u, 1003u, 4096u}) {
    Aligned<B> src(n), fast(n), ref(n), inplace(n);
    Aligned<uint8_t> mask((n + 7) / 8);
    for (uint64_t i = 0; i < n; ++i) src.data()[i] = static_cast<B>(rng());
    for (uint64_t i = 0; i < (n + 7) / 8; ++i) mask.data()[i] = static_cast<uint8_t>(rng());
    const B fill = static_cast<B>(rng());
    loops::ScalarSelect(ref.data(), mask.data(), src.data(), fill, n);
    for (loops::Isa isa : Isas()) {
      const std::string what = "n=" + std::to_string(n) + " isa " + std::to_string(static_cast<int>(isa));
      loops::SelectBits(fast.data(), mask.data(), src.data(), fill, n, isa);
      std::memcpy(inplace.data(), src.data(), n * sizeof(B));
      loops::SelectBits(inplace.data(), mask.data(), inplace.data(), fill, n, isa);
      CHECK_MSG(std::memcmp(fast.data(), ref.data(), n * sizeof(B)) == 0, what);
      CHECK_MSG(std::memcmp(inplace.data(), ref.data(), n * sizeof(B)) == 0, "in place " + what);
      // Streaming stores into a 64-byte aligned dst; 8 elements past it (16 or 32 bytes: not
      // 64-byte aligned), the plain stores.
      loops::StreamSelectBits(fast.data(), mask.data(), src.data(), fill, n, isa);
      loops::StoreFence();
      CHECK_MSG(std::memcmp(fast.data(), ref.data(), n * sizeof(B)) == 0, "streamed " + what);
      const uint64_t skip = 8;
      std::memset(fast.data(), 0, n * sizeof(B));
      loops::StreamSelectBits(fast.data() + skip, mask.data() + skip / 8, src.data() + skip, fill, n - skip, isa);
      CHECK_MSG(std::memcmp(fast.data() + skip, ref.data() + skip, (n - skip) * sizeof(B)) == 0 &&
                    fast.data()[skip - 1] == 0,
                "streamed, 8 elements in " + what);
    }
  }
}

// DataCopy's block copy: every length class of the vector loop and its memcpy tail.
TEST(CopyBytesAllIsas) {
  std::mt19937_64 rng(29);
  for (uint64_t bytes : {0u, 32u, 224u, 256u, 288u, 1024u, 4608u, 27936u}) {
    Aligned<uint8_t> src(bytes + 64), dst(bytes + 64);
    for (uint64_t i = 0; i < bytes + 64; ++i) src.data()[i] = static_cast<uint8_t>(rng());
    for (loops::Isa isa : Isas()) {
      std::memset(dst.data(), 0xA5, bytes + 64);
      loops::CopyBytes(dst.data(), src.data(), bytes, isa);
      CHECK_MSG(std::memcmp(dst.data(), src.data(), bytes) == 0, "bytes=" + std::to_string(bytes));
      bool untouched = true;  // nothing past the end
      for (uint64_t i = bytes; i < bytes + 64; ++i) untouched = untouched && dst.data()[i] == 0xA5;
      CHECK_MSG(untouched, "wrote past " + std::to_string(bytes) + " bytes");
    }
  }
}

TEST(Select16SimdMatchesScalar) { CheckSelect<uint16_t>(); }
TEST(Select32SimdMatchesScalar) { CheckSelect<uint32_t>(); }
TEST(Select64SimdMatchesScalar) { CheckSelect<uint64_t>(); }

TEST(HalfAndBf16ToFloatAllIsas) {
  const uint64_t n = 0x10000;
  Aligned<uint16_t> src(n);
  Aligned<float> out(n);
  for (uint64_t i = 0; i < n; ++i) src.data()[i] = static_cast<uint16_t>(i);
  for (loops::Isa isa : Isas()) {
    loops::HalfToFloat(out.data(), src.data(), n, isa);
    uint64_t bad = 0;
    for (uint64_t i = 0; i < n; ++i) bad += FloatBits(out.data()[i]) != FloatBits(cpu_ascendc::HalfBitsToFloat(src.data()[i]));
    CHECK_MSG(bad == 0, "half isa " + std::to_string(static_cast<int>(isa)));
    loops::Bf16ToFloat(out.data(), src.data(), n, isa);
    bad = 0;
    for (uint64_t i = 0; i < n; ++i) bad += FloatBits(out.data()[i]) != (static_cast<uint32_t>(i) << 16);
    CHECK_MSG(bad == 0, "bf16 isa " + std::to_string(static_cast<int>(isa)));
    // An odd start and a count that is no multiple of any loop step: the tail loop too.
    std::fill(out.data(), out.data() + n, 0.0f);
    loops::Bf16ToFloat(out.data() + 3, src.data() + 3, 1000 + 13, isa);
    bad = 0;
    for (uint64_t i = 0; i < n; ++i) {
      const uint32_t want = i >= 3 && i < 3 + 1000 + 13 ? static_cast<uint32_t>(i) << 16 : 0u;
      bad += FloatBits(out.data()[i]) != want;
    }
    CHECK_MSG(bad == 0, "bf16 tail isa " + std::to_string(static_cast<int>(isa)));
  }
}

template <typename I>
void CheckByteConversions() {
  // Every byte value to half, exactly as the general float -> half conversion does.
  Aligned<I> bytes(256);
  Aligned<uint16_t> halves(256);
  for (int i = 0; i < 256; ++i) bytes.data()[i] = static_cast<I>(i);
  // Each form the host can run (the AVX-512 converts and the VBMI table lookup are both checked
  // where the host has them, whichever ByteIntToHalf picks).
  std::vector<std::pair<std::string, void (*)(uint16_t*, const I*, uint64_t)>> forms;
  for (loops::Isa isa : Isas()) {
    forms.emplace_back("isa " + std::to_string(static_cast<int>(isa)), nullptr);
  }
#if CPU_ASCENDC_HAVE_AVX2_CLONE
  if (loops::HostHasAvx512()) forms.emplace_back("avx512 converts", &loops::Avx512ByteIntToHalf<I>);
  if (loops::HostHasAvx512Vbmi()) forms.emplace_back("avx512 vbmi", &loops::Avx512VbmiByteIntToHalf<I>);
#endif
  auto convert = [&](size_t form, uint16_t* dst, const I* src, uint64_t count) {
    if (forms[form].second != nullptr) {
      forms[form].second(dst, src, count);
    } else {
      loops::ByteIntToHalf(dst, src, count, Isas()[form]);
    }
  };
  // Scrambled bytes at an odd start, a count that is no multiple of any step (16, 64 lanes).
  const uint64_t m = 1000 + 13, at = 3;
  Aligned<I> mixed(m + at);
  Aligned<uint16_t> mixed_halves(m + at);
  for (uint64_t i = 0; i < m + at; ++i) mixed.data()[i] = static_cast<I>((i * 2654435761u) >> 13);
  for (size_t f = 0; f < forms.size(); ++f) {
    convert(f, halves.data(), bytes.data(), 256);
    for (int i = 0; i < 256; ++i) {
      CHECK_MSG(halves.data()[i] == cpu_ascendc::FloatToHalfBits(static_cast<float>(bytes.data()[i])),
                forms[f].first + ": " + std::to_string(i));
    }
    std::fill(mixed_halves.data(), mixed_halves.data() + m + at, uint16_t{0x5555});
    convert(f, mixed_halves.data() + at, mixed.data() + at, m);
    uint64_t bad = 0;
    for (uint64_t i = 0; i < m + at; ++i) {
      const uint16_t want = i < at ? uint16_t{0x5555} : cpu_ascendc::FloatToHalfBits(static_cast<float>(mixed.data()[i]));
      bad += mixed_halves.data()[i] != want;
    }
    CHECK_MSG(bad == 0, forms[f].first + ": " + std::to_string(bad) + " wrong in the scrambled tail run");
  }
  // Every half back to the byte type, as CAST_RINT's general rounding + saturation does.
  const uint64_t n = 0x10000;
  Aligned<uint16_t> src(n);
  Aligned<I> out(n);
  for (uint64_t i = 0; i < n; ++i) src.data()[i] = static_cast<uint16_t>(i);
  for (loops::Isa isa : Isas()) {
    loops::HalfToByteIntRint(out.data(), src.data(), n, isa);
    uint64_t bad = 0;
    for (uint64_t i = 0; i < n; ++i) {
      const float f = cpu_ascendc::HalfBitsToFloat(src.data()[i]);
      bad += out.data()[i] != AscendC::internal::SaturateToInt<I>(
                                  AscendC::internal::RoundFloat(f, AscendC::RoundMode::CAST_RINT));
    }
    CHECK_MSG(bad == 0, std::to_string(bad) + " wrong, isa " + std::to_string(static_cast<int>(isa)));
    // A count that is no multiple of any step (64, 16 lanes), at an odd start: every tail form.
    const uint64_t m = 1000, at = 12345;
    loops::HalfToByteIntRint(out.data(), src.data() + at, m, isa);
    for (uint64_t i = 0; i < m; ++i) {
      const float f = cpu_ascendc::HalfBitsToFloat(src.data()[at + i]);
      CHECK_MSG(out.data()[i] == AscendC::internal::SaturateToInt<I>(
                                     AscendC::internal::RoundFloat(f, AscendC::RoundMode::CAST_RINT)),
                std::to_string(i));
    }
  }
}

TEST(Int8ConversionsExhaustive) { CheckByteConversions<int8_t>(); }
TEST(UInt8ConversionsExhaustive) { CheckByteConversions<uint8_t>(); }

// The element-wise map and zip loops with every aliasing pattern, per ISA.
TEST(MapAndZipAllIsasAndAliasing) {
  const uint64_t n = 1003;
  std::mt19937 rng(9);
  std::vector<int32_t> a0(n), b0(n);
  for (uint64_t i = 0; i < n; ++i) a0[i] = static_cast<int32_t>(rng()), b0[i] = static_cast<int32_t>(rng());
  auto mx = [](int32_t v) { return v > 7 ? v : int32_t{7}; };
  auto sub = [](int32_t x, int32_t y) { return static_cast<int32_t>(static_cast<uint32_t>(x) - static_cast<uint32_t>(y)); };
  for (loops::Isa isa : Isas()) {
    const std::string tag = " isa " + std::to_string(static_cast<int>(isa));
    std::vector<int32_t> d(n), p = a0;
    loops::MapDistinct(d.data(), a0.data(), n, mx, isa);
    loops::MapInPlace(p.data(), n, mx, isa);
    bool ok = true;
    for (uint64_t i = 0; i < n; ++i) ok &= d[i] == mx(a0[i]) && p[i] == mx(a0[i]);
    CHECK_MSG(ok, "map" + tag);
    std::vector<int32_t> z(n), zx = a0, zy = b0, zz = a0;
    loops::Zip(z.data(), a0.data(), b0.data(), n, loops::ZipAlias::kNone, sub, isa);
    loops::Zip(zx.data(), zx.data(), b0.data(), n, loops::ZipAlias::kDstX, sub, isa);
    loops::Zip(zy.data(), a0.data(), zy.data(), n, loops::ZipAlias::kDstY, sub, isa);
    loops::Zip(zz.data(), zz.data(), zz.data(), n, loops::ZipAlias::kAll, sub, isa);
    ok = true;
    for (uint64_t i = 0; i < n; ++i) {
      ok &= z[i] == sub(a0[i], b0[i]) && zx[i] == sub(a0[i], b0[i]) && zy[i] == sub(a0[i], b0[i]) && zz[i] == 0;
    }
    CHECK_MSG(ok, "zip" + tag);
  }
}

}  // namespace
