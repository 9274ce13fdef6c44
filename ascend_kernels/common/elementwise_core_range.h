// Which elements one AI core owns under an ElementwiseTiling (docs/behaviour.md §3), shared by both
// kernels.
//
// Big cores (index < tail_block_num) come first. The core's range is clipped to total_num: the
// tiling rounds every core's count up to whole 256-byte blocks, and the last core must not read
// or write past the real end of the tensors (the upstream defect we do not copy).
#pragma once

#include "ascend_kernels/kernel_args.h"
#include "kernel_operator.h"

namespace ascend_kernels {
namespace kernel_common {

struct CoreRange {
  uint64_t offset;    // first element
  uint64_t count;     // elements owned, after clipping
  uint64_t tile_num;  // tiles, the last one holding tail_num elements
  uint64_t tail_num;
};

__aicore__ inline CoreRange SplitForCore(const ElementwiseTiling& t, uint64_t block_idx) {
  CoreRange r{0, 0, 0, 0};
  const bool big = block_idx < t.tail_block_num;
  r.offset = big ? block_idx * t.big_core_data_num
                 : t.tail_block_num * t.big_core_data_num +
                       (block_idx - t.tail_block_num) * t.small_core_data_num;
  if (t.tile_data_num == 0 || block_idx >= t.block_dim || r.offset >= t.total_num) {
    return r;
  }
  r.count = big ? t.big_core_data_num : t.small_core_data_num;
  r.tile_num = big ? t.final_big_tile_num : t.final_small_tile_num;
  r.tail_num = big ? t.big_tail_data_num : t.small_tail_data_num;
  if (t.total_num - r.offset < r.count) {
    r.count = t.total_num - r.offset;
    r.tile_num = (r.count + t.tile_data_num - 1) / t.tile_data_num;
    r.tail_num = r.count - (r.tile_num - 1) * t.tile_data_num;
  }
#if defined(ASCEND_KERNELS_CPU_ASCENDC)
  // A tiling whose per-core tile counts disagree with its per-core element counts is a host bug.
  CPU_ASCENDC_CHECK(
      r.tile_num >= 1 && r.tail_num >= 1 && r.tail_num <= t.tile_data_num &&
          (r.tile_num - 1) * t.tile_data_num + r.tail_num == r.count,
      "ElementwiseTiling",
      "core %llu: %llu tiles of %llu with tail %llu do not cover its %llu elements",
      static_cast<unsigned long long>(block_idx), static_cast<unsigned long long>(r.tile_num),
      static_cast<unsigned long long>(t.tile_data_num), static_cast<unsigned long long>(r.tail_num),
      static_cast<unsigned long long>(r.count));
#endif
  return r;
}

}  // namespace kernel_common
}  // namespace ascend_kernels
