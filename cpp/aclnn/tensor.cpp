// aclTensor / aclScalar creation and the facts the executor asks of them.
#include "aclnn/tensor.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <new>

#include "ascend_kernels/dtype_soc_table.h"

namespace jax_threshold::aclnn {

namespace {

constexpr bool Named(aclDataType dtype, const char* name) {
  const char* own = DtypeName(dtype);
  while (*own != '\0' && *own == *name) ++own, ++name;
  return *own == *name;
}

}  // namespace

// The public header (CANN's aclDataType, standing alone) and the dtype table agree.
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

float HalfBitsToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exp = (bits >> 10) & 0x1fu;
  const uint32_t mant = bits & 0x3ffu;
  float magnitude;
  if (exp == 0) {
    magnitude = std::ldexp(static_cast<float>(mant), -24);  // subnormal (or zero)
  } else if (exp == 31) {
    magnitude = mant ? std::numeric_limits<float>::quiet_NaN() : INFINITY;
  } else {
    magnitude = std::ldexp(static_cast<float>(mant | 0x400u), static_cast<int>(exp) - 25);
  }
  uint32_t out;
  std::memcpy(&out, &magnitude, 4);
  out |= sign;
  float f;
  std::memcpy(&f, &out, 4);
  return f;
}

float BFloat16BitsToFloat(uint16_t bits) {
  const uint32_t widened = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &widened, 4);
  return f;
}

bool aclScalar::IsExactlyZero() const {
  switch (kind) {
    case Kind::kSigned:
      return i == 0;
    case Kind::kUnsigned:
      return u == 0;
    case Kind::kFloat:
      return f == 0.0;  // +0 and -0; NaN is not 0
    default:
      return false;
  }
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
  } else {  // row-major contiguous
    t->strides.assign(view_dims_num, 1);
    // Wraps instead of overflowing: phase one refuses a view whose extent does not fit, and an
    // empty view's strides are never used.
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

void LoadScalar(const void* value, aclDataType dtype, aclScalar* s) {
  s->dtype = dtype;
  using K = aclScalar::Kind;
  auto load = [value](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, value, sizeof(v));
    return v;
  };
  switch (dtype) {
    case ACL_BOOL:
      s->kind = K::kSigned;
      s->i = load(uint8_t{}) != 0;
      break;
    case ACL_INT8:
      s->kind = K::kSigned;
      s->i = load(int8_t{});
      break;
    case ACL_INT16:
      s->kind = K::kSigned;
      s->i = load(int16_t{});
      break;
    case ACL_INT32:
      s->kind = K::kSigned;
      s->i = load(int32_t{});
      break;
    case ACL_INT64:
      s->kind = K::kSigned;
      s->i = load(int64_t{});
      break;
    case ACL_UINT8:
      s->kind = K::kUnsigned;
      s->u = load(uint8_t{});
      break;
    case ACL_UINT16:
      s->kind = K::kUnsigned;
      s->u = load(uint16_t{});
      break;
    case ACL_UINT32:
      s->kind = K::kUnsigned;
      s->u = load(uint32_t{});
      break;
    case ACL_UINT64:
      s->kind = K::kUnsigned;
      s->u = load(uint64_t{});
      break;
    case ACL_FLOAT16:
      s->kind = K::kFloat;
      s->f = HalfBitsToFloat(load(uint16_t{}));
      break;
    case ACL_BF16:
      s->kind = K::kFloat;
      s->f = BFloat16BitsToFloat(load(uint16_t{}));
      break;
    case ACL_FLOAT:
      s->kind = K::kFloat;
      s->f = load(float{});
      break;
    case ACL_DOUBLE:
      s->kind = K::kFloat;
      s->f = load(double{});
      break;
    default:
      s->kind = K::kInvalid;
      break;  // complex, undefined: phase one rejects it
  }
}

aclScalar* aclCreateScalar(const void* value, aclDataType dtype) {
  if (value == nullptr) return nullptr;
  auto* s = new (std::nothrow) aclScalar;
  if (s == nullptr) return nullptr;
  LoadScalar(value, dtype, s);
  return s;
}

aclnnStatus aclDestroyScalar(const aclScalar* scalar) {
  delete scalar;
  return ACLNN_SUCCESS;
}

}  // namespace jax_threshold::aclnn
