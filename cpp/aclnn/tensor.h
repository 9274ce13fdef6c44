// Tensor views as the executor sees them (docs/behaviour.md §2): the host's aclTensor and
// aclScalar, NumPy broadcasting, overflow-checked extents and overlap, dims merged where every
// operand allows, and the copies between a strided view and a contiguous buffer.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "ascend_kernels/dtype_soc_table.h"
#include "jax_threshold/aclnn_threshold_backward.h"

namespace jax_threshold::aclnn {

// Bytes per element (0 for a code no row has) and NumPy name ("undefined"), from the dtype table;
// aclDataType values are its codes (tensor.cpp checks them).
using ascend_kernels::DtypeName;
using ascend_kernels::DtypeSize;

struct aclTensor {
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // in elements, may be 0 or negative
  int64_t offset = 0;            // storage offset in elements
  aclDataType dtype = ACL_DT_UNDEFINED;
  void* data = nullptr;

  char* First() const;        // the address of element (0, ..., 0)
  bool IsContiguous() const;  // row-major in the view shape (size-1 dims may have any stride)
};

// The threshold scalar in the widest exact form of its dtype, so every later conversion rounds at
// most once (docs/behaviour.md §1).
struct aclScalar {
  enum class Kind { kSigned, kUnsigned, kFloat, kInvalid };
  aclDataType dtype = ACL_DT_UNDEFINED;
  Kind kind = Kind::kInvalid;  // kInvalid: not a real dtype
  int64_t i = 0;               // kSigned (bool too)
  uint64_t u = 0;              // kUnsigned
  double f = 0;                // kFloat: every float dtype widens exactly

  bool IsExactlyZero() const;  // +0 or -0; NaN is not
};
void LoadScalar(const void* value, aclDataType dtype, aclScalar* s);

// The product of `shape`, or false when it does not fit in int64 (a zero dim makes it 0, but the
// other dims must still multiply without overflow, as NumPy requires).
bool CheckedNumElements(const std::vector<int64_t>& shape, int64_t* n);

// The addresses a non-empty view spans, [begin, end), and its element (0, ..., 0), `first`.
struct ViewBounds {
  uintptr_t first = 0;
  uintptr_t begin = 0;
  uintptr_t end = 0;
};
// False, with a message naming `name`, when the view's extent in elements or bytes does not fit
// in int64 or its addresses wrap. Strides of size-1 dims are never used.
bool ComputeViewBounds(const aclTensor& t, const char* name, ViewBounds* bounds,
                       std::string* error);
inline bool Overlaps(const ViewBounds& a, const ViewBounds& b) {
  return a.begin < b.end && b.begin < a.end;
}
// The same first element, dtype, shape and strides (those of size-1 dims aside).
bool SameView(const aclTensor& a, const aclTensor& b);
// No two indices of (shape, strides) address the same element.
bool IsNonOverlapping(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides);

// NumPy broadcasting: shapes align at their last dim; each dim is 1 or the result's. kOverflow:
// they broadcast, but the result has more elements than int64 holds.
enum class BroadcastResult { kOk, kIncompatible, kOverflow };
BroadcastResult BroadcastShapes(std::initializer_list<const std::vector<int64_t>*> shapes,
                                std::vector<int64_t>* out);
// Strides of a view of `shape` in the index space of `result`: 0 along broadcast dims.
std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& shape,
                                      const std::vector<int64_t>& strides,
                                      const std::vector<int64_t>& result);
std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& shape);  // row-major
std::string ShapeString(const std::vector<int64_t>& shape);                 // "[2,3]"

// K operands in the index space of `shape` (element strides, 0: broadcast), its size-1 dims
// dropped and neighbours merged where every operand is contiguous across both or broadcast along
// both: the same elements in fewer dims.
template <size_t K>
struct Layout {
  std::vector<int64_t> sizes;
  std::vector<std::array<int64_t, K>> strides;  // [dim][operand]
};
template <size_t K>
Layout<K> MergeDims(const std::vector<int64_t>& shape,
                    const std::array<std::vector<int64_t>, K>& strides) {
  Layout<K> layout;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    std::array<int64_t, K> s;
    for (size_t k = 0; k < K; ++k) s[k] = strides[k][d];
    bool merge = !layout.sizes.empty();
    for (size_t k = 0; k < K && merge; ++k) {
      int64_t outer;
      const int64_t prev = layout.strides.back()[k];
      merge = (prev == 0) == (s[k] == 0) && !__builtin_mul_overflow(s[k], shape[d], &outer) &&
              prev == outer;
    }
    if (merge) {
      layout.sizes.back() *= shape[d];
      layout.strides.back() = s;
    } else {
      layout.sizes.push_back(shape[d]);
      layout.strides.push_back(s);
    }
  }
  return layout;
}

// A copy of every element of a view into another of the same shape, in independent blocks of
// consecutive elements, so it runs where kernel blocks run. Bytes are moved, never interpreted.
struct StridedCopyPlan {
  Layout<2> layout;  // source and destination strides
  uint64_t element_bytes = 0;
  uint64_t num_elements = 0;
  uint64_t chunk = 0;  // elements per block
  uint32_t block_dim = 0;
};
// `serial`: one block (a destination whose elements overlap, where parallel writes would race).
StridedCopyPlan PlanStridedCopy(const std::vector<int64_t>& shape,
                                const std::vector<int64_t>& src_strides,
                                const std::vector<int64_t>& dst_strides, uint64_t element_bytes,
                                bool serial);
// `src` and `dst` point at element (0, ..., 0).
void RunStridedCopyBlock(const StridedCopyPlan& plan, const char* src, char* dst, uint32_t block);

}  // namespace jax_threshold::aclnn
