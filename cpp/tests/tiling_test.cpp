// docs/behaviour.md §3 tiling: the worked values, then invariants over many sizes, dtypes and
// platforms.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>
#include "ascend_kernels/dtype_soc_table.h"
#include "ascend_kernels/kernel_args.h"
#include "common/op_host/elementwise_tiling.h"

using ascend_kernels::Dtype;
using ascend_kernels::ElementwiseTiling;
using ascend_kernels::ElementwiseTilingFor;

namespace {

// The 910B's UB size and core count, which docs/behaviour.md §3's worked values assume.
constexpr uint64_t kUb910B = 196608;
constexpr uint64_t kCores910B = 48;

ElementwiseTiling Tile(uint64_t n, Dtype dtype, uint64_t ub = kUb910B,
                       uint64_t cores = kCores910B) {
  ElementwiseTiling t{};
  std::string error;
  if (!ElementwiseTilingFor(n, static_cast<int32_t>(dtype), ub, cores, &t, &error)) {
    ADD_FAILURE() << "tiling failed: " << error;
  }
  return t;
}

}  // namespace

TEST(ThresholdGradV2DTiling, TileDataNumMatchesTheWorkedValues) {
  EXPECT_EQ(Tile(1 << 20, Dtype::kFloat32).tile_data_num, 6976u);
  EXPECT_EQ(Tile(1 << 20, Dtype::kFloat16).tile_data_num, 13952u);
  EXPECT_EQ(Tile(1 << 20, Dtype::kInt32).tile_data_num, 6144u);
  EXPECT_EQ(Tile(1 << 20, Dtype::kBFloat16).tile_data_num, 9728u);
  EXPECT_EQ(Tile(1 << 20, Dtype::kInt8).tile_data_num, 13824u);
  EXPECT_EQ(Tile(1 << 20, Dtype::kUInt8).tile_data_num, 13824u);
  // Our choice for the dtypes the contract leaves open: divisor 8 -> 96 blocks of 32 elements.
  EXPECT_EQ(Tile(1 << 20, Dtype::kInt64).tile_data_num, 3072u);
  EXPECT_EQ(Tile(1 << 20, Dtype::kFloat64).tile_data_num, 3072u);
}

TEST(ThresholdGradV2DTiling, HundredThousandFloat32MatchesTheWorkedSplit) {
  const ElementwiseTiling t = Tile(100000, Dtype::kFloat32);
  EXPECT_EQ(t.total_num, 100000u);
  EXPECT_EQ(t.block_dim, 48u);
  EXPECT_EQ(t.tail_block_num, 27u);
  EXPECT_EQ(t.small_core_data_num, 2048u);
  EXPECT_EQ(t.big_core_data_num, 2112u);
  EXPECT_EQ(t.final_small_tile_num, 1u);
  EXPECT_EQ(t.final_big_tile_num, 1u);
  EXPECT_EQ(t.small_tail_data_num, 2048u);
  EXPECT_EQ(t.big_tail_data_num, 2112u);
  EXPECT_EQ(t.tiling_key, 0u);
}

TEST(ThresholdGradV2DTiling, SmallFourDimFloat32RunsOnOneCore) {  // {1, 2, 8, 16}
  const ElementwiseTiling t = Tile(1 * 2 * 8 * 16, Dtype::kFloat32);
  EXPECT_EQ(t.block_dim, 1u);
  EXPECT_EQ(t.small_core_data_num, 256u);
  EXPECT_EQ(t.big_core_data_num, 320u);
  EXPECT_EQ(t.small_tail_data_num, 256u);
  EXPECT_EQ(t.big_tail_data_num, 320u);
  EXPECT_EQ(t.tail_block_num, 0u);
}

TEST(ThresholdGradV2DTiling, CoresWithSeveralTilesHaveTheRightTails) {
  // 10M float32 on 48 cores: 156250 blocks -> 3255 per core (+10 big), 30 tiles of 109 blocks.
  const ElementwiseTiling t = Tile(10000000, Dtype::kFloat32);
  EXPECT_EQ(t.block_dim, 48u);
  EXPECT_EQ(t.tail_block_num, 156250u % 48u);
  EXPECT_EQ(t.small_core_data_num, 3255u * 64u);
  EXPECT_EQ(t.final_small_tile_num, (3255u + 108u) / 109u);
  EXPECT_EQ(t.small_tail_data_num, 3255u * 64u - 6976u * (3255u / 109u));
  EXPECT_EQ(t.big_core_data_num, 3256u * 64u);
}

TEST(ThresholdGradV2DTiling, ZeroElementsOrTooSmallUbFail) {
  ElementwiseTiling t{};
  std::string error;
  EXPECT_TRUE(!ElementwiseTilingFor(0, static_cast<int32_t>(Dtype::kFloat32), kUb910B, kCores910B,
                                    &t, &error));
  EXPECT_TRUE(!error.empty());
  // ub too small
  EXPECT_TRUE(!ElementwiseTilingFor(10, static_cast<int32_t>(Dtype::kFloat32), 1024, kCores910B, &t,
                                    &error));
  EXPECT_TRUE(
      !ElementwiseTilingFor(10, static_cast<int32_t>(Dtype::kFloat32), kUb910B, 0, &t, &error));
  // every dtype no kernel runs
  for (const ascend_kernels::DtypeRow& row : ascend_kernels::kDtypes) {
    if (row.ub_divisor != 0) continue;
    EXPECT_TRUE(!ElementwiseTilingFor(10, static_cast<int32_t>(row.dtype), kUb910B, kCores910B, &t,
                                      &error));
    EXPECT_NE(error.find(row.name), std::string::npos) << error;
  }
}

// Every core gets at least one element, the cores cover [0, n) exactly (the last clipped by
// total_num), each core's tiles cover its count, and block_dim <= core_num.
TEST(ThresholdGradV2DTiling, EverySplitCoversTheRangeExactlyOnce) {
  const uint64_t sizes[] = {1,    2,    3,    31,   63,    64,     65,     255,     256,    257,
                            1000, 4095, 6976, 6977, 13952, 100000, 123457, 1 << 20, 3000017};
  const uint64_t cores_list[] = {1, 2, 7, 16, 48, 64};
  const uint64_t ubs[] = {kUb910B, 65536, 262144};
  for (const ascend_kernels::DtypeRow& row : ascend_kernels::kDtypes) {
    if (row.ub_divisor == 0) continue;
    const auto dtype = static_cast<int32_t>(row.dtype);
    const uint64_t bytes = ascend_kernels::DtypeSize(dtype);
    for (uint64_t n : sizes) {
      for (uint64_t cores : cores_list) {
        for (uint64_t ub : ubs) {
          {
            ElementwiseTiling t{};
            std::string error;
            EXPECT_TRUE(ElementwiseTilingFor(n, dtype, ub, cores, &t, &error));
            EXPECT_TRUE(t.block_dim >= 1 && t.block_dim <= cores);
            EXPECT_TRUE(t.tail_block_num < t.block_dim);
            EXPECT_EQ(t.big_core_data_num, t.small_core_data_num + 256 / bytes);
            EXPECT_EQ(t.small_core_data_num * bytes % 256, 0u);
            uint64_t covered = 0;
            for (uint64_t b = 0; b < t.block_dim; ++b) {
              const uint64_t count =
                  b < t.tail_block_num ? t.big_core_data_num : t.small_core_data_num;
              EXPECT_TRUE(covered < n);  // every core starts inside the tensor
              covered += count;
            }
            EXPECT_TRUE(covered >= n);
            EXPECT_TRUE(covered - n < 256 / bytes);  // only the last block is rounded up
            for (int big = 0; big < 2; ++big) {
              const uint64_t count = big ? t.big_core_data_num : t.small_core_data_num;
              const uint64_t tiles = big ? t.final_big_tile_num : t.final_small_tile_num;
              const uint64_t tail = big ? t.big_tail_data_num : t.small_tail_data_num;
              EXPECT_TRUE(tail >= 1 && tail <= t.tile_data_num);
              EXPECT_EQ((tiles - 1) * t.tile_data_num + tail, count);
            }
            const uint64_t divisor = row.ub_divisor;
            EXPECT_TRUE(t.tile_data_num * bytes * divisor <= ub);
            EXPECT_EQ(t.tile_data_num * bytes % 256, 0u);
          }
        }
      }
    }
  }
}
