// The kernels under the AscendC rules of each SoC's arch (cpu_ascendc/arch_rules.h): every kernel
// x dtype x tail shape, bit for bit against the contract, under every SoC whose dtype list has the
// dtype; and each rule aborting with its name when broken (every death test has a passing twin).
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include "kernel_fixture.h"
#include "kernel_operator.h"
#include "kernel_types.h"

namespace {

using namespace kt;
using namespace AscendC;

const cpu_ascendc::ArchRules& RulesOf(Soc soc) {
  return *cpu_ascendc::FindRules(ascend_kernels::SocRowOf(soc).arch);
}

// A threshold inside every dtype's range: 1 for integers, 0.5 for floats.
template <typename T>
ThresholdParams MidParams() {
  if constexpr (kIsInt<T>) {
    return IntParams(ThresholdMode::kCompare, 1);
  } else {
    return FloatParams(0.5f, 0.5);
  }
}

template <typename T>
bool SameBits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// Sizes whose per-core tails end at every kind of boundary: below one 32-byte block, one element
// past a block / repeat, a block and a bit per core, and (the last) several tiles on every core of
// every SoC with a ragged last tile.
template <typename T>
std::vector<uint64_t> TailSizes() {
  const uint64_t per_block = 32 / sizeof(T);
  uint64_t tile = 0, cores = 0;  // the largest of the SoCs' tiles and core counts
  for (Soc soc : RunnableSocs()) {
    const Platform platform = PlatformOf(soc);
    tile =
        std::max(tile, SpecTiling(1 << 24, sizeof(T), Traits<T>::kUbdn, platform.ub, platform.cores)
                           .tile_data_num);
    cores = std::max(cores, platform.cores);
  }
  return {1,
          per_block - 1 + (per_block == 1),
          per_block + 1,
          255,
          257,
          cores * 256 + 3,
          2 * cores * tile + 5};
}

// Both kernels of T under every SoC row that runs them, each tiled for the row's own UB and
// cores, bit for bit against the contract; the launch log shows every row ran.
template <typename T>
void SweepSocs() {
  std::mt19937_64 rng(0x50c + Traits<T>::kCode);
  const ThresholdParams p = MidParams<T>();
  const std::vector<uint64_t> sizes = TailSizes<T>();
  LaunchLog().clear();
  for (uint64_t n : sizes) {
    const std::vector<T> g = RandomValues<T>(n, rng, Specials<T>());
    const std::vector<T> x = RandomValues<T>(n, rng, Specials<T>());
    for (bool relu : {false, true}) {
      const ThresholdParams ref = relu ? ZeroParams() : p;
      for (Soc soc : SocsRunning<T>(relu ? ascend_kernels::KernelOp::kReluGrad
                                         : ascend_kernels::KernelOp::kThresholdGradV2D)) {
        const Platform platform = PlatformOf(soc);
        const ElementwiseTiling tiling =
            SpecTiling(n, sizeof(T), Traits<T>::kUbdn, platform.ub, platform.cores);
        if (n == sizes.back()) EXPECT_TRUE(tiling.final_small_tile_num >= 2) << SocName(soc);
        const auto r = kt::Run<T>(relu, g, x, p, tiling, platform.ub, 2, true, soc);
        uint64_t bad = 0;
        for (uint64_t i = 0; i < n; ++i) {
          if (!SameBits(r.out[i], Passes(x[i], ref) ? g[i] : T{})) ++bad;
        }
        const std::string what = std::string(Traits<T>::kName) +
                                 (relu ? " ReluGrad" : " ThresholdGradV2D") +
                                 " n=" + std::to_string(n) + " on " + SocName(soc);
        EXPECT_TRUE(bad == 0 && r.guards_intact)
            << (what + ": " + std::to_string(bad) + " wrong elements");
      }
    }
  }
  for (auto op :
       {ascend_kernels::KernelOp::kThresholdGradV2D, ascend_kernels::KernelOp::kReluGrad}) {
    EXPECT_EQ(EveryRowRan(LaunchLog(), op, Traits<T>::kCode, true), "");
  }
}

// Every kernel dtype of the table, under every SoC whose list has it.
template <typename T>
class SocRulesSweep : public ::testing::Test {};
TYPED_TEST_SUITE(SocRulesSweep, KernelTypes, DTypeName);
TYPED_TEST(SocRulesSweep, KernelsMatchUnderEverySocThatListsIt) { SweepSocs<TypeParam>(); }

// The byte kernels' two paths: the half detour where the SoC has no 8-bit CompareScalar/Select
// (Ascend910B), compare and select on the bytes where it has them (Ascend950, the host). Every
// (grad, x) byte pair, thresholds at and around both ends of the range and inside it, one tile
// per core and several with a 256-byte-ragged tail, against the contract.
template <typename T>
void ExpectEveryBytePairMatchesUnderEverySoc() {
  std::vector<T> g(65536 + 128 + 5), x(g.size());
  for (uint64_t i = 0; i < g.size(); ++i) {  // the first 65536: each pair once, both varying
    x[i] = static_cast<T>(i % 256);
    g[i] = static_cast<T>(i / 256 + 3 * i);
  }
  std::vector<ThresholdParams> params = {IntParams(ThresholdMode::kAllPass, 0),
                                         IntParams(ThresholdMode::kNonePass, 0)};
  for (int64_t t : {-129, -128, -1, 0, 1, 37, 126, 127, 128, 254, 255, 256}) {
    params.push_back(IntParams(ThresholdMode::kCompare, t));
  }
  LaunchLog().clear();
  for (Soc soc : RunnableSocs()) {
    const Platform platform = PlatformOf(soc);
    for (uint64_t ub : {platform.ub, uint64_t{16384}}) {
      const ElementwiseTiling tiling =
          SpecTiling(g.size(), 1, Traits<T>::kUbdn, ub, platform.cores);
      for (const ThresholdParams& p : params) {
        const auto r = kt::Run<T>(false, g, x, p, tiling, ub, 1, true, soc);
        uint64_t bad = 0;
        for (uint64_t i = 0; i < g.size(); ++i) bad += r.out[i] != (Passes(x[i], p) ? g[i] : T{});
        EXPECT_TRUE(bad == 0 && r.guards_intact)
            << Traits<T>::kName << " on " << SocName(soc) << " ub " << ub << " mode " << p.mode
            << " t " << p.threshold_int << ": " << bad << " wrong elements";
      }
    }
  }
  EXPECT_EQ(
      EveryRowRan(LaunchLog(), ascend_kernels::KernelOp::kThresholdGradV2D, Traits<T>::kCode, true),
      "");
}

TEST(SocRules, Int8KernelsMatchOnEveryBytePairOnBothBytePaths) {
  ExpectEveryBytePairMatchesUnderEverySoc<int8_t>();
}
TEST(SocRules, UInt8KernelsMatchOnEveryBytePairOnBothBytePaths) {
  ExpectEveryBytePairMatchesUnderEverySoc<uint8_t>();
}

// Tiles of 128 bytes are no whole 256-byte compare repeat: the host runs the half detour there.
TEST(SocRules, ByteKernelsOnTilesOfHalfARepeatMatchOnTheHost) {
  const ElementwiseTiling t = HandTiling1001();
  std::mt19937_64 rng(23);
  const auto g = RandomValues<int8_t>(1001, rng, {});
  const auto x = RandomValues<int8_t>(1001, rng, {});
  for (int64_t thr : {-5, 0, 3}) {
    const ThresholdParams p = IntParams(ThresholdMode::kCompare, thr);
    const auto r = kt::Run<int8_t>(false, g, x, p, t, 16384, 1, true, Soc::kHost);
    uint64_t bad = 0;
    for (uint64_t i = 0; i < g.size(); ++i) bad += r.out[i] != (Passes(x[i], p) ? g[i] : 0);
    EXPECT_TRUE(bad == 0 && r.guards_intact) << "threshold " << thr << ": " << bad << " wrong";
  }
}

TEST(SocRules, ByteCompareAndSelectAreTheAscend950sAndTheHostsOnly) {
  using cpu_ascendc::VType;
  for (const ascend_kernels::SocRow& row : ascend_kernels::kSocs) {
    const bool bytes = row.soc == Soc::kAscend950 || row.soc == Soc::kHost;
    for (VType t : {VType::kInt8, VType::kUInt8}) {
      EXPECT_EQ(cpu_ascendc::HasCompareAndSelect(RulesOf(row.soc), t), bytes) << row.name;
    }
  }
}

TEST(SocRules, UsableUbIsTheArchsLimitOrTheLaunchsUb) {
  EXPECT_TRUE(cpu_ascendc::UsableUb(RulesOf(Soc::kAscend910B), 196608) ==
              184 * 1024);  // TMP_UB_OFFSET, dav_c220
  EXPECT_TRUE(cpu_ascendc::UsableUb(RulesOf(Soc::kAscend910B), 65536) == 65536);
  EXPECT_TRUE(cpu_ascendc::UsableUb(RulesOf(Soc::kAscend950), 196608) ==
              196608);  // 248 KiB, nothing reserved
  EXPECT_TRUE(cpu_ascendc::UsableUb(RulesOf(Soc::kAscend910), 262144) == 248 * 1024);
  EXPECT_TRUE(cpu_ascendc::UsableUb(RulesOf(Soc::kHost), 32768) == 32768);
  EXPECT_TRUE(cpu_ascendc::UsableUb(RulesOf(Soc::kHost), 1 << 20) == (1u << 20));
}

// Phase one accepts a platform ub_size from 16 KiB up to the SoC's whole UB (cpp/aclnn/soc.h),
// and a plan depends on ub_size only through tile_block_num (docs/behaviour.md §3). So every plan
// it can make for a SoC is run here: under each SoC row that runs the dtype (the host up to its
// test UB), both kernels, every tile_block_num in that range, at the smallest accepted ub_size
// giving it (the strictest budget), with the widest launch (one core, a whole tile and a
// 1-element tail), under the SoC's rules, which allow the usable UB only (TMP_UB_OFFSET).
template <typename T>
void PlansFitUsableUb() {
  LaunchLog().clear();
  for (bool relu : {false, true}) {
    for (Soc soc : SocsRunning<T>(relu ? ascend_kernels::KernelOp::kReluGrad
                                       : ascend_kernels::KernelOp::kThresholdGradV2D)) {
      const uint64_t whole = PlatformOf(soc).ub;
      const uint64_t per_block = 256 * Traits<T>::kUbdn;
      constexpr uint64_t kMinUb = 16 * 1024;  // soc.h kMinUbSize
      for (uint64_t blocks = whole / per_block; blocks >= kMinUb / per_block; --blocks) {
        const uint64_t ub = std::max(blocks * per_block, kMinUb);
        const uint64_t n =
            SpecTiling(1 << 22, sizeof(T), Traits<T>::kUbdn, ub, 1).tile_data_num + 1;
        std::mt19937_64 rng(ub);
        const auto g = RandomValues<T>(n, rng, {}), x = RandomValues<T>(n, rng, {});
        const auto t = SpecTiling(n, sizeof(T), Traits<T>::kUbdn, ub, 1);
        const ThresholdParams p = relu ? ZeroParams() : MidParams<T>();
        const auto r = kt::Run<T>(relu, g, x, p, t, ub, 1, false, soc);
        uint64_t bad = 0;
        for (uint64_t i = 0; i < n; ++i) {
          if (!SameBits(r.out[i], Passes(x[i], p) ? g[i] : T{})) ++bad;
        }
        EXPECT_TRUE(bad == 0) << (std::string(Traits<T>::kName) + " on " + SocName(soc) + " ub " +
                                  std::to_string(ub));
      }
    }
  }
  for (auto op :
       {ascend_kernels::KernelOp::kThresholdGradV2D, ascend_kernels::KernelOp::kReluGrad}) {
    EXPECT_EQ(EveryRowRan(LaunchLog(), op, Traits<T>::kCode, false), "");
  }
}
TYPED_TEST(SocRulesSweep, TilingPlansFitEverySocsUsableUb) { PlansFitUsableUb<TypeParam>(); }

// A plan that needs the 910B's reserved scratch (between 184 and 192 KiB) aborts there, and runs
// on the host, whose UB has no reserved part.
TEST(SocRulesDeathTest, PlanIntoAscend910BReservedScratchAbortsAndRunsOnHost) {
  ElementwiseTiling t{};
  t.total_num = 7872;  // float32: 6 queue buffers of 31488 bytes = 188928 > 188416
  t.block_dim = 1;
  t.tile_data_num = 7872;
  t.small_core_data_num = t.big_core_data_num = 7872;
  t.final_small_tile_num = t.final_big_tile_num = 1;
  t.small_tail_data_num = t.big_tail_data_num = 7872;
  std::mt19937_64 rng(5);
  const auto g = RandomValues<float>(7872, rng, {}), x = RandomValues<float>(7872, rng, {});
  EXPECT_DEATH(
      kt::Run<float>(false, g, x, FloatParams(0.f, 0.), t, kUb910B, 1, false, Soc::kAscend910B),
      "usable on dav_c220");
  const auto r =
      kt::Run<float>(false, g, x, FloatParams(0.f, 0.), t, kUb910B, 1, false, Soc::kHost);
  EXPECT_TRUE(r.out.size() == 7872);
}

// The Ascend910 (dav_c100): each kernel path stops at the first operation the SoC lacks.
TEST(SocRulesDeathTest, Ascend910RulesStopTheKernelsThatRunOnAscend910B) {
  std::mt19937_64 rng(9);
  const auto g7 = RandomValues<float>(7, rng, {}), x7 = RandomValues<float>(7, rng, {});
  const auto t7 = SpecTiling(7, 4, 7, kUb910B, kCores910B);
  EXPECT_DEATH(
      kt::Run<float>(false, g7, x7, FloatParams(0.f, 0.), t7, kUb910B, 1, false, Soc::kAscend910),
      "dav_c100 rule: no DataCopyPad");
  const auto g = RandomValues<float>(256, rng, {}), x = RandomValues<float>(256, rng, {});
  const auto t = SpecTiling(256, 4, 7, kUb910B, kCores910B);
  EXPECT_DEATH(
      kt::Run<float>(false, g, x, FloatParams(0.f, 0.), t, kUb910B, 1, false, Soc::kAscend910),
      "dav_c100 rule: no CompareScalar on float");
  const auto gb = RandomValues<bfloat16_t>(256, rng, {}),
             xb = RandomValues<bfloat16_t>(256, rng, {});
  const auto tb = SpecTiling(256, 2, 10, kUb910B, kCores910B);
  EXPECT_DEATH(
      kt::Run<bfloat16_t>(true, gb, xb, ZeroParams(), tb, kUb910B, 1, false, Soc::kAscend910),
      "dav_c100 rule: no Cast bfloat16_t -> float");
  // Twins: the same launches run under the 910B's rules.
  EXPECT_TRUE(
      kt::Run<float>(false, g7, x7, FloatParams(0.f, 0.), t7, kUb910B, 1, false, Soc::kAscend910B)
          .out.size() == 7);
  EXPECT_TRUE(
      kt::Run<bfloat16_t>(true, gb, xb, ZeroParams(), tb, kUb910B, 1, false, Soc::kAscend910B)
          .out.size() == 256);
}

// float64 exists on the host only: a real SoC's CompareScalar has no double.
TEST(SocRulesDeathTest, Float64KernelsRunOnlyOnTheHostSoc) {
  std::mt19937_64 rng(10);
  const auto g = RandomValues<double>(64, rng, {}), x = RandomValues<double>(64, rng, {});
  const auto t = SpecTiling(64, 8, 7, kUb910B, kCores910B);
  EXPECT_DEATH(
      kt::Run<double>(false, g, x, FloatParams(0.f, 0.), t, kUb910B, 1, false, Soc::kAscend910B),
      "dav_c220 rule: no CompareScalar on double");
  EXPECT_TRUE(kt::Run<double>(false, g, x, FloatParams(0.f, 0.), t, kUb910B, 1, false, Soc::kHost)
                  .out.size() == 64);
}

// Round modes: the widening Casts emit an instruction only for CAST_NONE on dav_c220.
template <typename D, typename S>
void CastOnce(Soc soc, RoundMode mode) {
  cpu_ascendc::CoreScope core(0, 1, 8192, {}, ascend_kernels::SocRowOf(soc).arch);
  TPipe pipe;
  TBuf<TPosition::VECCALC> a, b;
  pipe.InitBuffer(a, 256 * sizeof(D));
  pipe.InitBuffer(b, 256 * sizeof(S));
  LocalTensor<S> src = b.Get<S>();
  Duplicate(src.template ReinterpretCast<uint16_t>(), static_cast<uint16_t>(0),
            static_cast<int32_t>(256 * sizeof(S) / 2));
  Cast(a.Get<D>(), src, mode, 256);
}
TEST(SocRulesDeathTest, CastRoundModesFollowEachSocsTable) {
  EXPECT_DEATH((CastOnce<float, half>(Soc::kAscend910B, RoundMode::CAST_RINT)),
               "dav_c220 rule: no Cast half -> float with CAST_RINT");
  CastOnce<float, half>(Soc::kAscend910B, RoundMode::CAST_NONE);
  EXPECT_DEATH((CastOnce<float, bfloat16_t>(Soc::kAscend910B, RoundMode::CAST_RINT)),
               "no Cast bfloat16_t -> float with CAST_RINT");
  CastOnce<float, bfloat16_t>(Soc::kAscend910B, RoundMode::CAST_NONE);
  EXPECT_DEATH((CastOnce<half, int8_t>(Soc::kAscend950, RoundMode::CAST_FLOOR)),
               "dav_3510 rule: no Cast int8_t -> half with CAST_FLOOR");
  CastOnce<half, int8_t>(Soc::kAscend950, RoundMode::CAST_NONE);
  EXPECT_DEATH((CastOnce<bfloat16_t, float>(Soc::kAscend910B, RoundMode::CAST_NONE)),
               "no Cast float -> bfloat16_t with CAST_NONE");
  CastOnce<bfloat16_t, float>(Soc::kAscend910B, RoundMode::CAST_RINT);
  EXPECT_DEATH((CastOnce<int8_t, half>(Soc::kAscend910, RoundMode::CAST_RINT)),
               "dav_c100 rule: no Cast half -> int8_t with CAST_RINT");
  CastOnce<int8_t, half>(Soc::kAscend910, RoundMode::CAST_TRUNC);
}

}  // namespace
