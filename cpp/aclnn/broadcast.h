// NumPy broadcasting, the one rule every C++ layer uses (phase one of the executor, and through it
// the XLA FFI handler): shapes are aligned at their last dim, and each dim is 1 or the result's.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace jax_threshold::aclnn {

enum class BroadcastResult { kOk, kIncompatible, kOverflow };

// The broadcast shape of `shapes` in *out. kOverflow: the shapes broadcast, but the result has
// more elements than int64 holds (a zero dim does not excuse the others).
BroadcastResult BroadcastShapes(std::initializer_list<const std::vector<int64_t>*> shapes,
                                std::vector<int64_t>* out);

// Element strides of an operand of `shape` and `strides` seen in the index space of `result`
// (which `shape` broadcasts to): 0 along the dims it is broadcast over, leading dims included.
std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& shape,
                                      const std::vector<int64_t>& strides,
                                      const std::vector<int64_t>& result);

// Row-major element strides of `shape`, or false when a partial product overflows int64. The
// caller checks emptiness first: the strides of an empty shape mean nothing.
bool CheckedRowMajorStrides(const std::vector<int64_t>& shape, std::vector<int64_t>* strides);

// "[2,3]" for {2, 3}.
std::string ShapeString(const std::vector<int64_t>& shape);

}  // namespace jax_threshold::aclnn
