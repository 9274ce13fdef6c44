#include "aclnn/broadcast.h"

#include <algorithm>

#include "aclnn/view_bounds.h"

namespace jax_threshold::aclnn {

BroadcastResult BroadcastShapes(std::initializer_list<const std::vector<int64_t>*> shapes,
                                std::vector<int64_t>* out) {
  size_t rank = 0;
  for (const auto* s : shapes) rank = std::max(rank, s->size());
  out->assign(rank, 1);
  for (const auto* s : shapes) {
    for (size_t i = 0; i < s->size(); ++i) {
      int64_t& o = (*out)[rank - s->size() + i];
      const int64_t d = (*s)[i];
      if (d == o || d == 1) continue;
      if (o != 1) return BroadcastResult::kIncompatible;
      o = d;
    }
  }
  int64_t n;
  return CheckedNumElements(*out, &n) ? BroadcastResult::kOk : BroadcastResult::kOverflow;
}

std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& shape,
                                      const std::vector<int64_t>& strides,
                                      const std::vector<int64_t>& result) {
  std::vector<int64_t> out(result.size(), 0);
  const size_t lead = result.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    out[lead + i] = shape[i] == 1 ? 0 : strides[i];
  }
  return out;
}

bool CheckedRowMajorStrides(const std::vector<int64_t>& shape, std::vector<int64_t>* strides) {
  strides->assign(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) {
    if (__builtin_mul_overflow((*strides)[i], shape[i], &(*strides)[i - 1])) return false;
  }
  return true;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace jax_threshold::aclnn
