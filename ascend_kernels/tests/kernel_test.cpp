// ThresholdGradV2D and ReluGrad on the CPU AscendC implementation against the scalar reference,
// bit for bit, for every dtype, awkward sizes, single- and multi-core tilings, multi-tile cores,
// threads, NaN/inf, and integer exactness.
#include <cmath>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>
#include "aligned_buffer.h"
#include "kernel_fixture.h"
#include "kernel_types.h"

namespace {

using namespace kt;

template <typename T>
bool SameBits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// Runs one configuration and compares every element with the reference.
template <typename T>
void CheckCase(bool relu, const std::vector<T>& g, const std::vector<T>& x,
               const ThresholdParams& p, const ElementwiseTiling& tiling, uint64_t ub,
               unsigned threads, bool guarded, const std::string& what) {
  const ThresholdParams ref_p = relu ? ZeroParams() : p;
  const auto r = kt::Run<T>(relu, g, x, p, tiling, ub, threads, guarded);
  EXPECT_TRUE(r.guards_intact) << (what + ": wrote outside out");
  uint64_t bad = 0, first = 0;
  for (uint64_t i = 0; i < g.size(); ++i) {
    const T want = Passes(x[i], ref_p) ? g[i] : T{};
    if (!SameBits(r.out[i], want)) {
      if (bad++ == 0) first = i;
    }
  }
  EXPECT_TRUE(bad == 0) << (what + ": " + std::to_string(bad) + " wrong elements, first at " +
                            std::to_string(first) + " (x=" + std::to_string(ToDouble(x[first])) +
                            " g=" + std::to_string(ToDouble(g[first])) +
                            " got=" + std::to_string(ToDouble(r.out[first])) + ")");
}

template <typename T>
std::vector<ThresholdParams> ParamsFor() {
  if constexpr (kIsInt<T>) {
    const int64_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    std::vector<ThresholdParams> ps = {
        IntParams(ThresholdMode::kCompare, 0),      IntParams(ThresholdMode::kCompare, 2),
        IntParams(ThresholdMode::kCompare, lo),     IntParams(ThresholdMode::kCompare, hi),
        IntParams(ThresholdMode::kCompare, hi - 1), IntParams(ThresholdMode::kAllPass, 0),
        IntParams(ThresholdMode::kNonePass, 0)};
    if constexpr (std::is_signed_v<T>) ps.push_back(IntParams(ThresholdMode::kCompare, -1));
    if constexpr (sizeof(T) >= 4) {
      ps.push_back(IntParams(ThresholdMode::kCompare, int64_t(1) << 24));  // 2^24+1 > 2^24 exactly
      ps.push_back(IntParams(ThresholdMode::kCompare, (int64_t(1) << 24) + 1));
      ps.push_back(IntParams(ThresholdMode::kCompare, -(int64_t(1) << 24) - 1));
    }
    return ps;
  } else {
    const float inf = std::numeric_limits<float>::infinity();
    return {
        FloatParams(0.5f, 0.5),
        FloatParams(0.0f, 0.0),
        FloatParams(-0.0f, -0.0),
        FloatParams(1.0f, 1.0),
        FloatParams(inf, HUGE_VAL),
        FloatParams(-inf, -HUGE_VAL),
        FloatParams(std::nanf(""), std::nan("")),
        FloatParams(1e-9f, 1e-9),
        FloatParams(1.0f + 1.0f / 4096, 1.0 + 1.0 / 4096)};  // between two float16 neighbours of 1
  }
}

template <typename T>
void SweepDtype() {
  std::mt19937_64 rng(0x5eed + Traits<T>::kCode);
  const std::vector<T> specials = Specials<T>();
  const std::vector<ThresholdParams> params = ParamsFor<T>();
  const uint64_t sizes[] = {1, 7, 31, 255, 256, 6977, 100003};
  int config = 0;
  for (uint64_t n : sizes) {
    const std::vector<T> g = RandomValues<T>(n, rng, specials);
    const std::vector<T> x = RandomValues<T>(n, rng, specials);
    const std::string base = std::string(Traits<T>::kName) + " n=" + std::to_string(n);
    // 910B tiling (48 cores, 192 KiB UB).
    const ElementwiseTiling spec = SpecTiling(n, sizeof(T), Traits<T>::kUbdn, kUb910B, kCores910B);
    // Small UB and few cores: many tiles per core, uneven big/small split.
    const ElementwiseTiling small = SpecTiling(n, sizeof(T), Traits<T>::kUbdn, 8192, 5);
    for (size_t k = 0; k < params.size(); ++k) {
      const bool guarded = (config++ % 2) == 0;
      const std::string what = base + " param#" + std::to_string(k);
      CheckCase<T>(false, g, x, params[k], spec, kUb910B, 1, guarded, what + " spec");
      if (n >= 255 && k < 3)
        CheckCase<T>(false, g, x, params[k], small, 8192, 3, !guarded, what + " small-ub threads");
    }
    CheckCase<T>(true, g, x, ZeroParams(), spec, kUb910B, 2, true, base + " relu spec");
    if (n >= 255)
      CheckCase<T>(true, g, x, ZeroParams(), small, 8192, 1, false, base + " relu small-ub");
  }
}

// Every kernel dtype of the table.
template <typename T>
class KernelsAgainstReference : public ::testing::Test {};
TYPED_TEST_SUITE(KernelsAgainstReference, KernelTypes, DTypeName);

TYPED_TEST(KernelsAgainstReference, MatchesBitForBitOverSizesThresholdsAndTilings) {
  SweepDtype<TypeParam>();
}

TEST(KernelsAgainstReference, CannDocumentedExampleGivesTheContractsOutput) {
  const std::vector<float> x = {0.2f, 1.2f, 2.2f, 3.2f}, g = {4.5f, 4.4f, 4.3f, 4.2f};
  const auto tiling = SpecTiling(4, 4, 7, kUb910B, kCores910B);
  auto r = kt::Run<float>(false, g, x, FloatParams(1.0f, 1.0), tiling, kUb910B, 1, true);
  EXPECT_TRUE(r.out[0] == 0.0f && r.out[1] == 4.4f && r.out[2] == 4.3f && r.out[3] == 4.2f);
  // Threshold 0: 0.2 > 0, so every gradient passes (the article's claim is wrong).
  r = kt::Run<float>(true, g, x, ZeroParams(), tiling, kUb910B, 1, true);
  EXPECT_TRUE(r.out == g);
}

// Select, not multiply: inf/NaN gradients where x <= 0 give +0 on both kernels.
TEST(KernelsAgainstReference, ReluGradSelectsAndNeverMultipliesInfOrNan) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> g = {inf, -inf, std::nanf(""), inf, -2.0f, -0.0f};
  const std::vector<float> x = {-1.0f, 0.0f, -0.0f, 1.0f, std::nanf(""), 3.0f};
  const auto tiling = SpecTiling(g.size(), 4, 7, kUb910B, kCores910B);
  for (bool relu : {true, false}) {
    const auto r = kt::Run<float>(relu, g, x, FloatParams(0.0f, 0.0), tiling, kUb910B, 1, true);
    EXPECT_TRUE(std::signbit(r.out[0]) == false && r.out[0] == 0.0f);
    EXPECT_TRUE(std::signbit(r.out[1]) == false && r.out[1] == 0.0f);
    EXPECT_TRUE(std::signbit(r.out[2]) == false && r.out[2] == 0.0f);
    EXPECT_TRUE(r.out[3] == inf);
    EXPECT_TRUE(r.out[4] == 0.0f);                            // NaN x -> 0
    EXPECT_TRUE(r.out[5] == 0.0f && std::signbit(r.out[5]));  // passed -0.0 keeps its sign
  }
}

// int32 compare is exact where float32 is not: 2^24 + 1 vs 2^24.
TEST(KernelsAgainstReference, Int32ComparesExactlyAround2To24) {
  const int32_t b = 1 << 24;
  const std::vector<int32_t> x = {b - 1, b, b + 1, b + 2, -b, -b - 1, INT32_MIN, INT32_MAX};
  const std::vector<int32_t> g = {10, 11, 12, 13, 14, 15, 16, 17};
  const auto tiling = SpecTiling(x.size(), 4, 8, kUb910B, kCores910B);
  auto r = kt::Run<int32_t>(false, g, x, IntParams(ThresholdMode::kCompare, b), tiling, kUb910B, 1,
                            true);
  EXPECT_TRUE((r.out == std::vector<int32_t>{0, 0, 12, 13, 0, 0, 0, 17}));
  r = kt::Run<int32_t>(false, g, x, IntParams(ThresholdMode::kCompare, -b - 1), tiling, kUb910B, 1,
                       true);
  EXPECT_TRUE((r.out == std::vector<int32_t>{10, 11, 12, 13, 14, 0, 0, 17}));
  r = kt::Run<int32_t>(false, g, x, IntParams(ThresholdMode::kCompare, INT32_MIN), tiling, kUb910B,
                       1, true);
  EXPECT_TRUE((r.out == std::vector<int32_t>{10, 11, 12, 13, 14, 15, 0, 17}));
}

// The docs/behaviour.md §3 worked values, so the test tiling is the executor's tiling.
TEST(KernelTiling, SpecTilingGivesTheContractsWorkedValues) {
  EXPECT_TRUE(SpecTiling(1 << 20, 4, 7, kUb910B, 48).tile_data_num == 6976);
  EXPECT_TRUE(SpecTiling(1 << 20, 2, 7, kUb910B, 48).tile_data_num == 13952);
  EXPECT_TRUE(SpecTiling(1 << 20, 4, 8, kUb910B, 48).tile_data_num == 6144);
  EXPECT_TRUE(SpecTiling(1 << 20, 2, 10, kUb910B, 48).tile_data_num == 9728);
  EXPECT_TRUE(SpecTiling(1 << 20, 1, 14, kUb910B, 48).tile_data_num == 13824);
  const auto t = SpecTiling(100000, 4, 7, kUb910B, 48);
  EXPECT_TRUE(t.block_dim == 48 && t.tail_block_num == 27 && t.small_core_data_num == 2048 &&
              t.big_core_data_num == 2112);
  const auto s = SpecTiling(256, 4, 7, kUb910B, 48);
  EXPECT_TRUE(s.block_dim == 1 && s.small_core_data_num == 256 && s.big_core_data_num == 320 &&
              s.small_tail_data_num == 256 && s.big_tail_data_num == 320);
}

// A hand-written tiling whose cores cover more than total_num, with a tail not a multiple of
// 32 bytes on the last core: the clipped core must stay inside the tensors.
TEST(KernelTiling, HandWrittenTilingClipsTheLastCoreInsideTheTensors) {
  const ElementwiseTiling t = HandTiling1001();
  std::mt19937_64 rng(7);
  const auto g = RandomValues<float>(1001, rng, Specials<float>());
  const auto x = RandomValues<float>(1001, rng, Specials<float>());
  CheckCase<float>(false, g, x, FloatParams(0.25f, 0.25), t, 16384, 3, true, "hand tiling guarded");
  CheckCase<float>(false, g, x, FloatParams(0.25f, 0.25), t, 16384, 1, false, "hand tiling exact");
  CheckCase<int8_t>(true, RandomValues<int8_t>(1001, rng, {}), RandomValues<int8_t>(1001, rng, {}),
                    ZeroParams(), t, 16384, 2, true, "hand tiling int8 relu");
}

// Largest sizes the 910B tiling gives one tile per core and several tiles per core.
TEST(KernelTiling, SeveralTilesPerCoreWithARaggedEndMatchReference) {
  std::mt19937_64 rng(11);
  const uint64_t n = 48 * 6976 * 3 + 5;  // 3+ tiles on every core, ragged end
  const auto g = RandomValues<float>(n, rng, Specials<float>());
  const auto x = RandomValues<float>(n, rng, Specials<float>());
  const auto t = SpecTiling(n, 4, 7, kUb910B, kCores910B);
  EXPECT_TRUE(t.final_big_tile_num >= 3);
  CheckCase<float>(false, g, x, FloatParams(-0.5f, -0.5), t, kUb910B, 2, true, "many tiles");
}

// ThresholdGradV2D with its threshold in GM (ThresholdSource::kDevice): each block reads the
// element at Init, under the 910B's rules.
void RunWithGmThreshold(const float* threshold) {
  constexpr uint64_t kN = 1 << 16;
  test::Aligned<float> g(kN), x(kN), out(kN);
  for (uint64_t i = 0; i < kN; ++i) {
    g.data()[i] = 1.0f + static_cast<float>(i);
    x.data()[i] = static_cast<float>(i % 64) - 31.5f;
  }
  ascend_kernels::ThresholdGradV2DTilingData td{};
  td.dtype = static_cast<int32_t>(Dtype::kFloat32);
  td.tiling = SpecTiling(kN, 4, 7, kUb910B, 8);
  td.threshold.source = static_cast<int32_t>(ascend_kernels::ThresholdSource::kDevice);
  td.threshold.gm_dtype = static_cast<int32_t>(Dtype::kFloat32);
  const auto launch = ascend_kernels::MakeThresholdGradV2DLaunch(
      g.data(), x.data(), threshold, out.data(), nullptr, &td, kUb910B, Soc::kAscend910B);
  ASSERT_GT(launch.block_dim, 1u);
  for (uint32_t b = 0; b < launch.block_dim; ++b) launch.RunBlock(b);
  for (uint64_t i = 0; i < kN; ++i) {
    ASSERT_EQ(out.data()[i], x.data()[i] > *threshold ? g.data()[i] : 0.0f) << "element " << i;
  }
}

TEST(KernelLaunch, GmThresholdIsReadByEveryBlockAtInit) {
  for (float t : {-100.0f, -3.0f, 0.0f, 2.5f, 1e30f}) RunWithGmThreshold(&t);
}

TEST(KernelLaunchDeathTest, MisalignedGmThresholdAborts) {
  alignas(8) unsigned char bytes[8] = {};
  EXPECT_DEATH(RunWithGmThreshold(reinterpret_cast<const float*>(bytes + 1)),
               "not aligned to its 4-byte element");
}

// Every dtype of the table that no kernel runs, and a code no row has.
TEST(KernelLaunch, ADtypeNoKernelRunsGivesAnEmptyLaunch) {
  std::vector<int32_t> codes = {-1, 5, 1000};
  for (const ascend_kernels::DtypeRow& row : ascend_kernels::kDtypes) {
    if (row.ub_divisor == 0) codes.push_back(static_cast<int32_t>(row.dtype));
  }
  for (int32_t code : codes) {
    ascend_kernels::ThresholdGradV2DTilingData td{};
    ascend_kernels::ReluGradTilingData rd{};
    td.dtype = rd.dtype = code;
    td.tiling = rd.tiling = SpecTiling(16, 4, 7, kUb910B, kCores910B);
    float buf[16] = {};
    const auto launch = ascend_kernels::MakeThresholdGradV2DLaunch(buf, buf, /*threshold=*/nullptr,
                                                                   buf, nullptr, &td, kUb910B);
    EXPECT_EQ(launch.block_dim, 0u) << code;
    const auto relu = ascend_kernels::MakeReluGradLaunch(buf, buf, buf, nullptr, &rd, kUb910B);
    EXPECT_EQ(relu.block_dim, 0u) << code;
  }
}

}  // namespace
