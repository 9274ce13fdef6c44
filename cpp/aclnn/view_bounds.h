// Overflow-checked facts about a strided view (docs/behaviour.md §2): its element count, the
// bytes it spans, whether its first element is aligned, and whether two views overlap. Phase one
// computes these before it plans anything, so every later size and address is known to fit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "aclnn/tensor.h"

namespace jax_threshold::aclnn {

// The product of `shape`, or false when it does not fit in int64 (zero dims make it 0, but the
// other dims must still multiply without overflow, as NumPy requires).
bool CheckedNumElements(const std::vector<int64_t>& shape, int64_t* n);

// The bytes a non-empty view reaches: [begin, end) as addresses. `first` is the address of
// element (0, ..., 0).
struct ViewBounds {
  uintptr_t first = 0;
  uintptr_t begin = 0;
  uintptr_t end = 0;
};

// False (with a message naming `name`) when the view's offset, strides or extent cannot be
// represented: |stride| * dim or their sum beyond int64 elements or bytes, or an address range
// that wraps. Dims of size 1 contribute nothing (their stride is never used).
bool ComputeViewBounds(const aclTensor& t, const char* name, ViewBounds* bounds,
                       std::string* error);

inline bool Overlaps(const ViewBounds& a, const ViewBounds& b) {
  return a.begin < b.end && b.begin < a.end;
}

// True if `a` and `b` are the same view: the same first element, shape and strides (strides of
// size-1 dims ignored), and the same dtype.
bool SameView(const aclTensor& a, const aclTensor& b);

}  // namespace jax_threshold::aclnn
