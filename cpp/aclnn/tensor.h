// The host's aclTensor / aclScalar: plain descriptions of caller-owned memory (tensor) or a copied
// value (scalar). Internal to the executor; the public API sees only the opaque types.
#pragma once

#include <cstdint>
#include <vector>

#include "ascend_kernels/dtype_soc_table.h"
#include "jax_threshold/aclnn_threshold_backward.h"

namespace jax_threshold::aclnn {

// Bytes per element of a dtype (0 for one no row has) and its NumPy name ("undefined"), from the
// dtype table; aclDataType values are its codes (tensor.cpp checks them).
using ascend_kernels::DtypeName;
using ascend_kernels::DtypeSize;

struct aclTensor {
  std::vector<int64_t> shape;    // view shape
  std::vector<int64_t> strides;  // in elements, may be 0 or negative
  int64_t offset = 0;            // storage offset in elements
  aclDataType dtype = ACL_DT_UNDEFINED;
  void* data = nullptr;

  // Address of the first element of the view.
  char* First() const;
  // Row-major contiguous with the view shape (size-1 dims may have any stride).
  bool IsContiguous() const;
};

// The threshold scalar, kept in the widest exact form of its dtype so every later conversion
// (docs/behaviour.md §1) rounds at most once.
struct aclScalar {
  enum class Kind { kSigned, kUnsigned, kFloat, kInvalid };
  aclDataType dtype = ACL_DT_UNDEFINED;
  Kind kind = Kind::kInvalid;
  int64_t i = 0;   // kSigned (also bool)
  uint64_t u = 0;  // kUnsigned
  double f = 0;    // kFloat (float16 / bfloat16 / float32 / float64 widen exactly)

  bool IsExactlyZero() const;
};

// *s = the scalar of `dtype` stored at `value` (kind kInvalid for a dtype that is not real).
void LoadScalar(const void* value, aclDataType dtype, aclScalar* s);

// IEEE binary16 / bfloat16 bits -> float (exact).
float HalfBitsToFloat(uint16_t bits);
float BFloat16BitsToFloat(uint16_t bits);

}  // namespace jax_threshold::aclnn
