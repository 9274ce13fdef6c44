#include "aclnn/view_bounds.h"

namespace jax_threshold::aclnn {

bool CheckedNumElements(const std::vector<int64_t>& shape, int64_t* n) {
  int64_t product = 1;
  bool zero = false;
  for (int64_t d : shape) {
    if (d < 0) return false;
    if (d == 0) {
      zero = true;
      continue;
    }
    if (__builtin_mul_overflow(product, d, &product)) return false;
  }
  *n = zero ? 0 : product;
  return true;
}

bool ComputeViewBounds(const aclTensor& t, const char* name, ViewBounds* bounds,
                       std::string* error) {
  const int64_t elem = static_cast<int64_t>(DtypeSize(t.dtype));
  auto fail = [&](const char* what) {
    *error = std::string(name) + ": " + what + " (shape, strides and offset of a view must " +
             "address at most 2^63 - 1 bytes)";
    return false;
  };
  // Element offsets of the lowest and highest element relative to element (0, ..., 0).
  int64_t lo = 0, hi = 0;
  for (size_t i = 0; i < t.shape.size(); ++i) {
    const int64_t d = t.shape[i];
    if (d <= 1) continue;
    int64_t span;
    if (__builtin_mul_overflow(t.strides[i], d, &span) ||
        __builtin_mul_overflow(t.strides[i], d - 1, &span)) {
      return fail("a stride times its dimension overflows int64");
    }
    if (__builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi)) {
      return fail("the view's extent overflows int64");
    }
  }
  int64_t lo_bytes, hi_bytes, offset_bytes;
  if (__builtin_mul_overflow(lo, elem, &lo_bytes) || __builtin_mul_overflow(hi, elem, &hi_bytes) ||
      __builtin_add_overflow(hi_bytes, elem, &hi_bytes) ||
      __builtin_mul_overflow(t.offset, elem, &offset_bytes)) {
    return fail("the view's extent in bytes overflows int64");
  }
  int64_t extent;
  if (__builtin_sub_overflow(hi_bytes, lo_bytes, &extent)) {
    return fail("the view's extent in bytes overflows int64");
  }
  const uintptr_t data = reinterpret_cast<uintptr_t>(t.data);
  uintptr_t first, begin, end;
  if (__builtin_add_overflow(data, offset_bytes, &first) ||
      __builtin_add_overflow(first, lo_bytes, &begin) ||
      __builtin_add_overflow(first, hi_bytes, &end)) {
    return fail("the view's addresses wrap around the address space");
  }
  *bounds = ViewBounds{first, begin, end};
  return true;
}

bool SameView(const aclTensor& a, const aclTensor& b) {
  if (a.dtype != b.dtype || a.shape != b.shape || a.First() != b.First()) return false;
  for (size_t i = 0; i < a.shape.size(); ++i) {
    if (a.shape[i] > 1 && a.strides[i] != b.strides[i]) return false;
  }
  return true;
}

}  // namespace jax_threshold::aclnn
