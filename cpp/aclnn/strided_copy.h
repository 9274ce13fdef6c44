// The executor's copy steps (docs/behaviour.md §2: inputs made contiguous, the result copied into
// out's view) as launches of independent blocks over the element range, so they run where kernels
// run.
#pragma once

#include <cstdint>
#include <vector>

namespace jax_threshold::aclnn {

// Copies every element of `shape` from src (element strides, 0 for broadcast dims) to dst.
struct StridedCopyPlan {
  std::vector<int64_t> shape;
  std::vector<int64_t> src_strides;
  std::vector<int64_t> dst_strides;
  uint64_t elem_size = 0;
  uint64_t num_elements = 0;
  uint64_t chunk = 0;  // elements per block
  uint32_t block_dim = 0;
};

// Coalesces dims and splits the range into blocks. `serial` forces one block (a destination whose
// elements overlap, where parallel writes would race).
StridedCopyPlan PlanStridedCopy(const std::vector<int64_t>& shape,
                                const std::vector<int64_t>& src_strides,
                                const std::vector<int64_t>& dst_strides, uint64_t elem_size,
                                bool serial);

// Copies block `block`'s part of the range. `src`/`dst` point at element (0, ..., 0).
void RunStridedCopyBlock(const StridedCopyPlan& plan, const char* src, char* dst, uint32_t block);

// Row-major contiguous element strides of `shape`.
std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& shape);

// True if no two index tuples of (shape, strides) address the same element.
bool IsNonOverlapping(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides);

}  // namespace jax_threshold::aclnn
