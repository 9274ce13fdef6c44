#include "aclnn/strided_copy.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <type_traits>

namespace jax_threshold::aclnn {
namespace {

constexpr uint64_t kCopyChunk = 1 << 16;  // elements per copy block: big enough to amortise

template <size_t kBytes>
inline void CopyElement(const char* src, char* dst) {
  std::memcpy(dst, src, kBytes);
}

// `count` contiguous copies of the element at `src`, as a loop over a fixed-width integer that
// the compiler vectorises (the bytes are moved, never interpreted).
template <size_t kBytes>
void FillElements(const char* src, char* dst, uint64_t count) {
  using Word =
      std::conditional_t<kBytes == 1, uint8_t,
                         std::conditional_t<kBytes == 2, uint16_t,
                                            std::conditional_t<kBytes == 4, uint32_t, uint64_t>>>;
  Word value;
  std::memcpy(&value, src, kBytes);
  for (uint64_t i = 0; i < count; ++i) std::memcpy(dst + i * kBytes, &value, kBytes);
}

template <size_t kBytes>
void CopyRange(const StridedCopyPlan& p, const char* src, char* dst, uint64_t begin, uint64_t end) {
  const size_t rank = p.shape.size();
  const int64_t inner = p.shape[rank - 1];
  const int64_t s_in = p.src_strides[rank - 1] * static_cast<int64_t>(kBytes);
  const int64_t d_in = p.dst_strides[rank - 1] * static_cast<int64_t>(kBytes);
  // Multi-index of `begin`.
  std::vector<int64_t> index(rank, 0);
  uint64_t rest = begin;
  for (size_t d = rank; d-- > 0;) {
    index[d] = static_cast<int64_t>(rest % static_cast<uint64_t>(p.shape[d]));
    rest /= static_cast<uint64_t>(p.shape[d]);
  }
  uint64_t pos = begin;
  while (pos < end) {
    int64_t s_off = 0, d_off = 0;
    for (size_t d = 0; d < rank; ++d) {
      s_off += index[d] * p.src_strides[d];
      d_off += index[d] * p.dst_strides[d];
    }
    const char* s = src + s_off * static_cast<int64_t>(kBytes);
    char* t = dst + d_off * static_cast<int64_t>(kBytes);
    const uint64_t run =
        std::min<uint64_t>(static_cast<uint64_t>(inner - index[rank - 1]), end - pos);
    if (d_in == static_cast<int64_t>(kBytes) && s_in == d_in) {
      std::memcpy(t, s, run * kBytes);  // contiguous on both sides
    } else if (d_in == static_cast<int64_t>(kBytes) && s_in == 0) {
      FillElements<kBytes>(s, t, run);  // a broadcast source: one value, repeated
    } else {
      for (uint64_t i = 0; i < run; ++i, s += s_in, t += d_in) CopyElement<kBytes>(s, t);
    }
    pos += run;
    index[rank - 1] += static_cast<int64_t>(run);
    for (size_t d = rank - 1; d > 0 && index[d] == p.shape[d]; --d) {
      index[d] = 0;
      ++index[d - 1];
    }
  }
}

}  // namespace

std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

bool IsNonOverlapping(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  std::vector<size_t> dims;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] > 1) dims.push_back(d);
  }
  std::sort(dims.begin(), dims.end(),
            [&](size_t a, size_t b) { return std::llabs(strides[a]) < std::llabs(strides[b]); });
  int64_t extent = 1;  // elements spanned by the dims seen so far
  for (size_t d : dims) {
    const int64_t s = std::llabs(strides[d]);
    if (s < extent) return false;
    extent = s * (shape[d] - 1) + extent;
  }
  return true;
}

StridedCopyPlan PlanStridedCopy(const std::vector<int64_t>& shape,
                                const std::vector<int64_t>& src_strides,
                                const std::vector<int64_t>& dst_strides, uint64_t elem_size,
                                bool serial) {
  StridedCopyPlan p;
  p.elem_size = elem_size;
  // Drop size-1 dims, then merge a dim into the next inner one when both strides chain.
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!p.shape.empty() && p.src_strides.back() == src_strides[d] * shape[d] &&
        p.dst_strides.back() == dst_strides[d] * shape[d]) {
      p.shape.back() *= shape[d];
      p.src_strides.back() = src_strides[d];
      p.dst_strides.back() = dst_strides[d];
      continue;
    }
    p.shape.push_back(shape[d]);
    p.src_strides.push_back(src_strides[d]);
    p.dst_strides.push_back(dst_strides[d]);
  }
  if (p.shape.empty()) {  // a single element
    p.shape = {1};
    p.src_strides = {1};
    p.dst_strides = {1};
  }
  p.num_elements = 1;
  for (int64_t d : p.shape) p.num_elements *= static_cast<uint64_t>(d);
  p.chunk = serial ? std::max<uint64_t>(p.num_elements, 1) : kCopyChunk;
  p.block_dim = static_cast<uint32_t>((p.num_elements + p.chunk - 1) / p.chunk);
  return p;
}

void RunStridedCopyBlock(const StridedCopyPlan& p, const char* src, char* dst, uint32_t block) {
  const uint64_t begin = static_cast<uint64_t>(block) * p.chunk;
  const uint64_t end = std::min(p.num_elements, begin + p.chunk);
  if (begin >= end) return;
  switch (p.elem_size) {
    case 1:
      return CopyRange<1>(p, src, dst, begin, end);
    case 2:
      return CopyRange<2>(p, src, dst, begin, end);
    case 4:
      return CopyRange<4>(p, src, dst, begin, end);
    case 8:
      return CopyRange<8>(p, src, dst, begin, end);
    default:
      return;  // phase one only plans 1/2/4/8-byte dtypes
  }
}

}  // namespace jax_threshold::aclnn
