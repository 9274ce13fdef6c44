// Helpers for the executor tests: owning host tensors with any strides, typed random data, and an
// independent scalar reference of docs/behaviour.md §1 (long double comparison, exact for every
// dtype here).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "aclnn/executor.h"
#include "aclnn/host_stream.h"
#include "aclnn/tensor.h"
#include "ascend_kernels/dtype_soc_table.h"
#include "jax_threshold/aclnn_threshold_backward.h"

namespace executor_test {

using namespace jax_threshold::aclnn;

struct TensorDeleter {
  void operator()(aclTensor* t) const { aclDestroyTensor(t); }
};
struct ScalarDeleter {
  void operator()(aclScalar* s) const { aclDestroyScalar(s); }
};
struct ExecutorDeleter {
  void operator()(aclOpExecutor* e) const { aclDestroyAclOpExecutor(e); }
};
using TensorPtr = std::unique_ptr<aclTensor, TensorDeleter>;
using ScalarPtr = std::unique_ptr<aclScalar, ScalarDeleter>;
using ExecutorPtr = std::unique_ptr<aclOpExecutor, ExecutorDeleter>;

// The dtype and SoC table's lists, so that a new row needs no test edit.
// Every aclDataType the table names, kernel dtypes first (in the table's order); `integer` picks
// the integer or the floating-point kernel dtypes.
inline std::vector<aclDataType> TableDtypes() {
  std::vector<aclDataType> out;
  for (const auto& row : ascend_kernels::kDtypes)
    out.push_back(static_cast<aclDataType>(row.dtype));
  return out;
}
inline std::vector<aclDataType> KernelDtypes() {
  std::vector<aclDataType> out;
  for (aclDataType d : TableDtypes()) {
    if (ascend_kernels::HasKernel(d)) out.push_back(d);
  }
  return out;
}
inline std::vector<aclDataType> KernelDtypes(bool integer) {
  std::vector<aclDataType> out;
  for (aclDataType d : KernelDtypes()) {
    ascend_kernels::IntegerRange range{0, 0};
    if (ascend_kernels::DtypeIntegerRange(d, &range) == integer) out.push_back(d);
  }
  return out;
}
// A dtype the executor names but no kernel runs.
inline aclDataType UnsupportedDtype() {
  for (aclDataType d : TableDtypes()) {
    if (!ascend_kernels::HasKernel(d)) return d;
  }
  return ACL_DT_UNDEFINED;
}
// Every SoC row, and those the kernels run on (not refused).
inline std::vector<SocVersion> Socs() {
  std::vector<SocVersion> out;
  for (const auto& row : ascend_kernels::kSocs) out.push_back(static_cast<SocVersion>(row.soc));
  return out;
}
inline std::vector<SocVersion> RunnableSocs() {
  std::vector<SocVersion> out;
  for (const auto& row : ascend_kernels::kSocs) {
    if (row.refusal == nullptr) out.push_back(static_cast<SocVersion>(row.soc));
  }
  return out;
}
// Whether `soc` runs the kernel of `dtype` at a zero (ReluGrad) or a nonzero threshold.
inline bool SocRuns(SocVersion soc, aclDataType dtype, bool zero) {
  return ascend_kernels::SocRunsKernel(
      static_cast<ascend_kernels::Soc>(soc),
      zero ? ascend_kernels::KernelOp::kReluGrad : ascend_kernels::KernelOp::kThresholdGradV2D,
      dtype);
}
// The platform a test plans for on `soc`: its row's UB and cores (the host's: this machine's).
inline PlatformInfo PlatformOf(SocVersion soc) {
  PlatformInfo info;
  info.soc = soc;
  return WithDefaults(info);
}

inline int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Memory of `storage_elems` elements plus a view of it.
struct HostTensor {
  aclDataType dtype;
  std::vector<int64_t> shape, strides;
  int64_t offset = 0;
  std::vector<unsigned char> storage;
  TensorPtr tensor;

  size_t Elem() const { return DtypeSize(dtype); }
  // Byte offset of the view element with this linear (row-major) index.
  int64_t ByteOffsetOf(int64_t linear) const {
    int64_t off = offset;
    for (size_t d = shape.size(); d-- > 0;) {
      off += (linear % shape[d]) * strides[d];
      linear /= shape[d];
    }
    return off * static_cast<int64_t>(Elem());
  }
  unsigned char* At(int64_t linear) { return storage.data() + ByteOffsetOf(linear); }
  const unsigned char* At(int64_t linear) const { return storage.data() + ByteOffsetOf(linear); }
};

inline std::vector<int64_t> Contiguous(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

// A view with `strides` (elements; contiguous when empty) into fresh storage filled with `fill`.
inline HostTensor MakeTensor(aclDataType dtype, std::vector<int64_t> shape,
                             std::vector<int64_t> strides = {}, int64_t offset = 0,
                             unsigned char fill = 0xAB) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = shape;
  t.strides = strides.empty() ? Contiguous(shape) : strides;
  t.offset = offset;
  int64_t max_index = offset, min_index = offset;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) continue;
    const int64_t span = (shape[d] - 1) * t.strides[d];
    (span > 0 ? max_index : min_index) += span;
  }
  // Negative strides: offset must keep min_index >= 0 (callers ensure it).
  const size_t elem = std::max<size_t>(DtypeSize(dtype), 1);
  t.storage.assign(static_cast<size_t>(max_index + 1) * elem + 64, fill);
  t.tensor.reset(aclCreateTensor(shape.data(), shape.size(), dtype, t.strides.data(), offset,
                                 t.storage.data()));
  return t;
}

inline uint16_t FloatToHalfBits(float f);  // round to nearest even

// IEEE binary16 / bfloat16 bits -> float, exactly.
inline float HalfBitsToFloat(uint16_t bits) {
  const int exp = (bits >> 10) & 0x1f;
  const int mant = bits & 0x3ff;
  const float magnitude = exp == 0    ? std::ldexp(static_cast<float>(mant), -24)
                          : exp == 31 ? (mant ? NAN : INFINITY)
                                      : std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
  return (bits & 0x8000) ? -magnitude : magnitude;
}
inline float BFloat16BitsToFloat(uint16_t bits) {
  const uint32_t widened = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &widened, 4);
  return f;
}

inline void StoreDouble(aclDataType dtype, double v, unsigned char* p) {
  switch (dtype) {
    case ACL_FLOAT: {
      float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      break;
    }
    case ACL_DOUBLE:
      std::memcpy(p, &v, 8);
      break;
    case ACL_FLOAT16: {
      uint16_t h = FloatToHalfBits(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      break;
    }
    case ACL_BF16: {
      float f = static_cast<float>(v);
      uint32_t u;
      std::memcpy(&u, &f, 4);
      uint16_t b =
          std::isnan(f) ? 0x7fc0 : static_cast<uint16_t>((u + 0x7fff + ((u >> 16) & 1)) >> 16);
      std::memcpy(p, &b, 2);
      break;
    }
    default:
      break;
  }
}

inline uint16_t FloatToHalfBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  if (std::isnan(f)) return sign | 0x7e00;
  const float a = std::fabs(f);
  if (a >= 65520.0f) return sign | 0x7c00;
  if (a < std::ldexp(1.0f, -14)) {  // subnormal: units of 2^-24, round to nearest even
    return sign | static_cast<uint16_t>(std::nearbyint(a * std::ldexp(1.0f, 24)));
  }
  int e;
  std::frexp(a, &e);                                           // a in [2^(e-1), 2^e)
  const float scaled = std::nearbyint(std::ldexp(a, 11 - e));  // 11 significant bits
  uint32_t m = static_cast<uint32_t>(scaled);
  int exp = e - 1 + 15;
  if (m == 2048) {
    m = 1024;
    ++exp;
  }
  if (exp >= 31) return sign | 0x7c00;
  return sign | static_cast<uint16_t>((exp << 10) | (m - 1024));
}

// Value of the element at `p` as long double (exact for every supported dtype).
inline long double LoadExact(aclDataType dtype, const unsigned char* p) {
  switch (dtype) {
    case ACL_FLOAT: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case ACL_DOUBLE: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    case ACL_FLOAT16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return HalfBitsToFloat(h);
    }
    case ACL_BF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return BFloat16BitsToFloat(h);
    }
    default: {  // an integer dtype: its row's width, sign-extended where its range is signed
      ascend_kernels::IntegerRange range{0, 0};
      if (!ascend_kernels::DtypeIntegerRange(dtype, &range)) return 0;
      uint64_t bits = 0;
      const uint32_t width = DtypeSize(dtype) * 8;
      std::memcpy(&bits, p, DtypeSize(dtype));  // little-endian: the low bytes
      if (width < 64 && range.min < 0 && ((bits >> (width - 1)) & 1) != 0) {
        bits |= ~((uint64_t{1} << width) - 1);
      }
      return range.min < 0 ? static_cast<long double>(static_cast<int64_t>(bits))
                           : static_cast<long double>(bits);
    }
  }
}

// The threshold as the contract (docs/behaviour.md) compares it for x of `dtype`: rounded once to
// float32 for the 16/32-bit floats, to double for float64, exact (long double holds int64 and
// double) for ints.
inline long double ReferenceThreshold(aclDataType dtype, long double exact, bool is_int_scalar,
                                      int64_t int_value) {
  switch (dtype) {
    case ACL_FLOAT:
    case ACL_FLOAT16:
    case ACL_BF16:
      return is_int_scalar ? static_cast<float>(int_value)
                           : static_cast<float>(static_cast<double>(exact));
    case ACL_DOUBLE:
      return is_int_scalar ? static_cast<double>(int_value) : static_cast<double>(exact);
    default:
      return exact;
  }
}

// Fills the view with random values of `dtype`, including the awkward ones.
inline void FillRandom(HostTensor& t, std::mt19937_64& rng) {
  const int64_t n = Numel(t.shape);
  std::uniform_int_distribution<int> pick(0, 9);
  std::uniform_real_distribution<double> real(-4.0, 4.0);
  for (int64_t i = 0; i < n; ++i) {
    unsigned char* p = t.At(i);
    const int k = pick(rng);
    switch (t.dtype) {
      case ACL_FLOAT:
      case ACL_DOUBLE:
      case ACL_FLOAT16:
      case ACL_BF16: {
        double v = real(rng);
        if (k == 0) v = NAN;
        if (k == 1) v = (rng() & 1) ? INFINITY : -INFINITY;
        if (k == 2) v = (rng() & 1) ? 0.0 : -0.0;
        if (k == 3) v = 1.0;  // equal to a common threshold
        if (k == 4) v = 2.5;
        if (k == 5) v = 1e-9;
        StoreDouble(t.dtype, v, p);
        break;
      }
      default: {
        uint64_t bits = rng();
        if (k < 4) bits = static_cast<uint64_t>(static_cast<int64_t>(k) - 2);  // -2..1
        std::memcpy(p, &bits, t.Elem());  // little-endian: low bytes
        break;
      }
    }
  }
}

}  // namespace executor_test
