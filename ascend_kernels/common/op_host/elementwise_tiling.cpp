// docs/behaviour.md §3, step by step. The rounding of every core's share up to whole 256-byte
// blocks is kept (the worked values depend on it); `total_num` lets the kernel clip the last core
// to the tensor.
#include "common/op_host/elementwise_tiling.h"

#include <algorithm>
#include <limits>

#include "ascend_kernels/dtype_soc_table.h"

namespace ascend_kernels {
namespace {

uint64_t CeilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

}  // namespace

bool ElementwiseTilingFor(uint64_t num_elements, int32_t dtype, uint64_t ub_size, uint64_t core_num,
                          ElementwiseTiling* tiling, std::string* error) {
  if (num_elements == 0) {
    *error = "tiling: element count is 0";
    return false;
  }
  if (!HasKernel(dtype)) {
    *error = std::string("tiling: no kernel runs dtype ") + DtypeName(dtype);
    return false;
  }
  const uint64_t dtype_bytes = DtypeSize(dtype);
  const uint64_t ub_data_number = DtypeRowOf(dtype).ub_divisor;
  if (core_num == 0) {
    *error = "tiling: core_num is 0";
    return false;
  }
  if (num_elements > (std::numeric_limits<uint64_t>::max() - kTilingBlockSize) / dtype_bytes) {
    *error = "tiling: element count overflows a byte count";
    return false;
  }
  const uint64_t tile_block_num = (ub_size / kTilingBlockSize) / ub_data_number;
  if (tile_block_num == 0) {
    *error = "tiling: ub_size " + std::to_string(ub_size) +
             " holds no 256-byte block per buffer (" + std::to_string(ub_data_number) + " buffers)";
    return false;
  }
  const uint64_t tile_data_num = tile_block_num * kTilingBlockSize / dtype_bytes;
  const uint64_t total_blocks = CeilDiv(num_elements * dtype_bytes, kTilingBlockSize);
  const uint64_t cores = tile_data_num >= num_elements ? 1 : std::min(core_num, total_blocks);

  const uint64_t every_core_blocks = total_blocks / cores;
  const uint64_t tail_block_num = total_blocks % cores;

  // One core class (small: every_core_blocks, big: every_core_blocks + 1).
  auto split = [&](uint64_t core_blocks, uint64_t* data_num, uint64_t* tile_num, uint64_t* tail) {
    *data_num = core_blocks * kTilingBlockSize / dtype_bytes;
    *tile_num = CeilDiv(core_blocks, tile_block_num);
    *tail = *data_num - tile_data_num * (core_blocks / tile_block_num);
    if (*tail == 0) *tail = tile_data_num;
  };

  ElementwiseTiling t{};
  t.total_num = num_elements;
  t.block_dim = cores;
  t.tiling_key = 0;
  t.tile_data_num = tile_data_num;
  t.tail_block_num = tail_block_num;
  split(every_core_blocks, &t.small_core_data_num, &t.final_small_tile_num, &t.small_tail_data_num);
  split(every_core_blocks + 1, &t.big_core_data_num, &t.final_big_tile_num, &t.big_tail_data_num);
  *tiling = t;
  return true;
}

}  // namespace ascend_kernels
