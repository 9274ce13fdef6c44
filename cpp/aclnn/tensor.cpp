#include "aclnn/tensor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

#include "aclnn/host_stream.h"  // ScopedDenormalsAsNumbers

namespace jax_threshold::aclnn {
namespace {

constexpr bool Named(aclDataType dtype, const char* name) {
  const char* own = DtypeName(dtype);
  while (*own != '\0' && *own == *name) ++own, ++name;
  return *own == *name;
}

}  // namespace

// The public header's aclDataType (standing alone) names the dtype table's rows.
static_assert(Named(ACL_FLOAT, "float32") && Named(ACL_FLOAT16, "float16") &&
                  Named(ACL_INT8, "int8") && Named(ACL_INT32, "int32") &&
                  Named(ACL_UINT8, "uint8") && Named(ACL_INT16, "int16") &&
                  Named(ACL_UINT16, "uint16") && Named(ACL_UINT32, "uint32") &&
                  Named(ACL_INT64, "int64") && Named(ACL_UINT64, "uint64") &&
                  Named(ACL_DOUBLE, "float64") && Named(ACL_BOOL, "bool") &&
                  Named(ACL_COMPLEX64, "complex64") && Named(ACL_COMPLEX128, "complex128") &&
                  Named(ACL_BF16, "bfloat16") && Named(ACL_DT_UNDEFINED, "undefined") &&
                  ascend_kernels::kDtypeCount == 15,
              "aclDataType values are the dtype table's");

char* aclTensor::First() const {
  return static_cast<char*>(data) + offset * static_cast<int64_t>(DtypeSize(dtype));
}

bool aclTensor::IsContiguous() const {
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

aclTensor* aclCreateTensor(const int64_t* view_dims, uint64_t view_dims_num, aclDataType dtype,
                           const int64_t* strides, int64_t offset, void* data) {
  if (view_dims_num > 0 && view_dims == nullptr) return nullptr;
  for (uint64_t i = 0; i < view_dims_num; ++i) {
    if (view_dims[i] < 0) return nullptr;
  }
  auto* t = new (std::nothrow) aclTensor;
  if (t == nullptr) return nullptr;
  t->shape.assign(view_dims, view_dims + view_dims_num);
  if (strides != nullptr) {
    t->strides.assign(strides, strides + view_dims_num);
  } else {
    // Row-major; wraps instead of overflowing: phase one refuses a view whose extent does not
    // fit, and an empty view's strides are never used.
    t->strides.assign(view_dims_num, 1);
    for (uint64_t i = view_dims_num; i-- > 1;) {
      __builtin_mul_overflow(t->strides[i], view_dims[i], &t->strides[i - 1]);
    }
  }
  t->offset = offset;
  t->dtype = dtype;
  t->data = data;
  return t;
}

aclnnStatus aclDestroyTensor(const aclTensor* tensor) {
  delete tensor;
  return ACLNN_SUCCESS;
}

bool aclScalar::IsExactlyZero() const {
  return (kind == Kind::kSigned && i == 0) || (kind == Kind::kUnsigned && u == 0) ||
         (kind == Kind::kFloat && f == 0.0);
}

namespace {

struct LoadValue {
  const void* value;
  aclScalar* s;
  template <ascend_kernels::Dtype D>
  void operator()(ascend_kernels::CTypeOf<D>) {
    using T = ascend_kernels::CType<D>;
    if constexpr (std::is_same_v<T, bool>) {
      uint8_t byte;
      std::memcpy(&byte, value, 1);
      s->kind = aclScalar::Kind::kSigned;
      s->i = byte != 0;
    } else if constexpr (ascend_kernels::CTypeOf<D>::kInteger) {
      T v;
      std::memcpy(&v, value, sizeof v);
      if constexpr (std::is_signed_v<T>) {
        s->kind = aclScalar::Kind::kSigned;
        s->i = v;
      } else {
        s->kind = aclScalar::Kind::kUnsigned;
        s->u = v;
      }
    } else if constexpr (std::is_convertible_v<T, double>) {  // not complex
      T v;
      std::memcpy(static_cast<void*>(&v), value, sizeof v);
      s->kind = aclScalar::Kind::kFloat;
      s->f = static_cast<double>(v);
    }
  }
};

}  // namespace

void LoadScalar(const void* value, aclDataType dtype, aclScalar* s) {
  ScopedDenormalsAsNumbers guard;  // a subnormal float widens to itself
  *s = aclScalar{};
  s->dtype = dtype;
  LoadValue load{value, s};
  ascend_kernels::VisitDtype(dtype, load);
}

aclScalar* aclCreateScalar(const void* value, aclDataType dtype) {
  if (value == nullptr) return nullptr;
  auto* s = new (std::nothrow) aclScalar;
  if (s != nullptr) LoadScalar(value, dtype, s);
  return s;
}

aclnnStatus aclDestroyScalar(const aclScalar* scalar) {
  delete scalar;
  return ACLNN_SUCCESS;
}

bool CheckedNumElements(const std::vector<int64_t>& shape, int64_t* n) {
  int64_t product = 1;
  bool zero = false;
  for (int64_t d : shape) {
    if (d < 0) return false;
    zero |= d == 0;
    if (d != 0 && __builtin_mul_overflow(product, d, &product)) return false;
  }
  *n = zero ? 0 : product;
  return true;
}

bool ComputeViewBounds(const aclTensor& t, const char* name, ViewBounds* bounds,
                       std::string* error) {
  const int64_t elem = static_cast<int64_t>(DtypeSize(t.dtype));
  auto fail = [&](const char* what) {
    *error = std::string(name) + ": " + what +
             " (shape, strides and offset of a view must address at most 2^63 - 1 bytes)";
    return false;
  };
  int64_t lo = 0, hi = 0;  // element offsets of the lowest and highest element from the first
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
  int64_t lo_bytes, hi_bytes, offset_bytes, extent;
  if (__builtin_mul_overflow(lo, elem, &lo_bytes) || __builtin_mul_overflow(hi, elem, &hi_bytes) ||
      __builtin_add_overflow(hi_bytes, elem, &hi_bytes) ||
      __builtin_mul_overflow(t.offset, elem, &offset_bytes) ||
      __builtin_sub_overflow(hi_bytes, lo_bytes, &extent)) {
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
    extent += s * (shape[d] - 1);
  }
  return true;
}

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
  for (size_t i = 0; i < shape.size(); ++i) out[lead + i] = shape[i] == 1 ? 0 : strides[i];
  return out;
}

std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

namespace {

constexpr uint64_t kCopyChunk = 1 << 16;  // elements per copy block: enough to amortise one

template <size_t kBytes>
void CopyRange(const StridedCopyPlan& p, const char* src, char* dst, uint64_t begin, uint64_t end) {
  const std::vector<int64_t>& shape = p.layout.sizes;
  const size_t rank = shape.size();
  const int64_t src_step = p.layout.strides[rank - 1][0] * static_cast<int64_t>(kBytes);
  const int64_t dst_step = p.layout.strides[rank - 1][1] * static_cast<int64_t>(kBytes);
  std::vector<int64_t> index(rank, 0);  // of `begin`
  for (uint64_t rest = begin, d = rank; d-- > 0;) {
    index[d] = static_cast<int64_t>(rest % static_cast<uint64_t>(shape[d]));
    rest /= static_cast<uint64_t>(shape[d]);
  }
  for (uint64_t pos = begin; pos < end;) {
    int64_t src_off = 0, dst_off = 0;
    for (size_t d = 0; d < rank; ++d) {
      src_off += index[d] * p.layout.strides[d][0];
      dst_off += index[d] * p.layout.strides[d][1];
    }
    const char* s = src + src_off * static_cast<int64_t>(kBytes);
    char* t = dst + dst_off * static_cast<int64_t>(kBytes);
    const uint64_t run = std::min<uint64_t>(shape[rank - 1] - index[rank - 1], end - pos);
    if (dst_step == static_cast<int64_t>(kBytes) && src_step == dst_step) {
      std::memcpy(t, s, run * kBytes);
    } else if (dst_step == static_cast<int64_t>(kBytes) && src_step == 0) {
      // One value repeated, as a fixed-width integer the compiler vectorises.
      using Word = std::conditional_t<
          kBytes == 1, uint8_t,
          std::conditional_t<kBytes == 2, uint16_t,
                             std::conditional_t<kBytes == 4, uint32_t, uint64_t>>>;
      Word value;
      std::memcpy(&value, s, kBytes);
      for (uint64_t i = 0; i < run; ++i) std::memcpy(t + i * kBytes, &value, kBytes);
    } else {
      for (uint64_t i = 0; i < run; ++i, s += src_step, t += dst_step) std::memcpy(t, s, kBytes);
    }
    pos += run;
    index[rank - 1] += static_cast<int64_t>(run);
    for (size_t d = rank - 1; d > 0 && index[d] == shape[d]; --d) {
      index[d] = 0;
      ++index[d - 1];
    }
  }
}

}  // namespace

StridedCopyPlan PlanStridedCopy(const std::vector<int64_t>& shape,
                                const std::vector<int64_t>& src_strides,
                                const std::vector<int64_t>& dst_strides, uint64_t element_bytes,
                                bool serial) {
  StridedCopyPlan p;
  p.element_bytes = element_bytes;
  p.layout = MergeDims<2>(shape, {src_strides, dst_strides});
  if (p.layout.sizes.empty()) {  // a single element
    p.layout.sizes = {1};
    p.layout.strides = {{1, 1}};
  }
  p.num_elements = 1;
  for (int64_t d : p.layout.sizes) p.num_elements *= static_cast<uint64_t>(d);
  p.chunk = serial ? p.num_elements : kCopyChunk;
  p.block_dim = static_cast<uint32_t>((p.num_elements + p.chunk - 1) / p.chunk);
  return p;
}

void RunStridedCopyBlock(const StridedCopyPlan& p, const char* src, char* dst, uint32_t block) {
  const uint64_t begin = static_cast<uint64_t>(block) * p.chunk;
  const uint64_t end = std::min(p.num_elements, begin + p.chunk);
  if (begin >= end) return;
  switch (p.element_bytes) {  // phase one plans 1-, 2-, 4- and 8-byte dtypes only
    case 1:
      return CopyRange<1>(p, src, dst, begin, end);
    case 2:
      return CopyRange<2>(p, src, dst, begin, end);
    case 4:
      return CopyRange<4>(p, src, dst, begin, end);
    default:
      return CopyRange<8>(p, src, dst, begin, end);
  }
}

}  // namespace jax_threshold::aclnn
