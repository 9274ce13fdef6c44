// The contract between the host side (executor, tiling) and the AscendC kernels.
//
// The tiling structs are what the host writes and the kernel receives as its by-value `tiling`
// parameter (copied into the launch's arguments, in stream order). Plain, fixed-layout structs so
// the same bytes mean the same thing to g++ on the host and to the AscendC compiler on the NPU.
#pragma once

#include <cstdint>

#include "ascend_kernels/dtype_soc_table.h"

// The tiling structs are at global scope, named in ascend_kernels by using-declarations: a kernel
// entry takes its tiling struct by value, and CANN's launch generator (asc-devkit
// cmake/asc/legacy_modules/util/extract_host_stub.py) recognises such a parameter by its bare
// type name among the structs the kernel source defines and copies their definitions into the
// host stub. The aclrtlaunch_<entry>.h it generates names the type without declaring it, so host
// code includes this header before any generated one.

// Per-core split of a contiguous element range, docs/behaviour.md §3. Counts are in elements.
// Cores with index < tail_block_num are "big" (big_core_data_num elements), the rest "small".
// `total_num` is the real element count: the last core clips its range to it, so no kernel ever
// touches memory past the end of a tensor (the upstream defect we do not copy).
struct ElementwiseTiling {
  uint64_t total_num;
  uint64_t block_dim;
  uint64_t tiling_key;
  uint64_t tile_data_num;
  uint64_t small_core_data_num;
  uint64_t big_core_data_num;
  uint64_t final_small_tile_num;
  uint64_t final_big_tile_num;
  uint64_t small_tail_data_num;
  uint64_t big_tail_data_num;
  uint64_t tail_block_num;
};

namespace ascend_kernels {

// How an element of x is classified against the threshold, so the kernel does exactly one kind
// of comparison per dtype (docs/behaviour.md §1):
//  - float16 / bfloat16 / float32: x (widened to float32) > threshold_f32.
//  - float64 (host SoC only): x > the double whose IEEE bits are threshold_f64_bits. Carried as
//    bits because the device compiler has no float64 (the NPU kernels never read the field;
//    float64_bits.h converts on the host).
//  - integers: mode kCompare: x > threshold_int (threshold_int lies in the dtype's range);
//              kAllPass / kNonePass when the real threshold lies below / at or above the range.
// These are the fields the kernel reads for x's dtype. Where they come from is `source`:
//  - kTiling: precomputed by the host (aclnn/threshold_params.h) and carried in the tiling.
//  - kDevice: a device threshold: the kernel reads one threshold element of dtype `gm_dtype` (a
//    dtype code, dtype_soc_table.h) from its `threshold` GM argument at Init and computes them
//    there (ThresholdParamsFromBits, below), so the tiling bytes do not depend on the threshold's
//    value; the other fields are then 0.
enum class ThresholdMode : int32_t { kCompare = 0, kAllPass = 1, kNonePass = 2 };
enum class ThresholdSource : int32_t { kTiling = 0, kDevice = 1 };

// The operands, in the order every per-operand list keeps: ThresholdBatchTiling's strides,
// InputBroadcastTiling's (the two inputs), the executor's bindings and batches, the custom call's
// buffers. aclSetInputTensorAddr's input indices are these (out is output 0).
inline constexpr int kOperandGrad = 0, kOperandX = 1, kOperandThreshold = 2, kOperandOut = 3;
inline constexpr int kNumOperands = 4;

}  // namespace ascend_kernels

struct ThresholdParams {
  int32_t mode;    // ThresholdMode
  int32_t source;  // ThresholdSource
  float threshold_f32;
  int32_t gm_dtype;  // dtype code of the device threshold (source kDevice)
  uint64_t threshold_f64_bits;
  int64_t threshold_int;
};

// A batch of slices in one ThresholdGradV2D launch, each slice with its own device threshold
// element (threshold source kDevice): `slice_num` slices of `slice_len` contiguous elements.
// Slice k's first element of operand j is SliceOffsets' (mixed radix over `sizes`, outer to inner,
// `rank` <= 4 dims) from the operand's base. The launch's `tiling` splits all slice_num *
// slice_len elements over the cores, slice after slice; a core walks its range slice piece by
// slice piece. slice_num 0: not a batch, the launch covers its tensors whole.
struct ThresholdBatchTiling {
  uint64_t slice_num;
  uint64_t slice_len;
  uint64_t rank;
  uint64_t sizes[4];
  int64_t strides[4][4];  // [dim][operand], in the operand order
};

// Inputs read through a broadcast copy-in (docs/behaviour.md §4), never materialised at out's
// size: out's dims with the 1s dropped and neighbours merged where both inputs allow, outer to
// inner, and each input's element strides along them from its first element (0 along a dim it
// is broadcast over). Each input is contiguous in its own shape, so its innermost stride is 1 or
// 0. rank 0: both inputs have out's shape and are read as contiguous ranges.
struct InputBroadcastTiling {
  uint64_t rank;
  uint64_t sizes[8];
  uint64_t strides[2][8];  // grad_output, x
};

// `dtype`: the dtype code (aclDataType, dtype_soc_table.h) of grad, x and out, from which the
// kernel picks its element type.
struct ThresholdGradV2DTilingData {
  int32_t dtype;
  ElementwiseTiling tiling;
  ThresholdParams threshold;
  ThresholdBatchTiling batch;
  InputBroadcastTiling broadcast;
};

// ReluGrad is ThresholdGradV2D at threshold exactly 0: no threshold to carry.
struct ReluGradTilingData {
  int32_t dtype;
  ElementwiseTiling tiling;
  InputBroadcastTiling broadcast;
};

namespace ascend_kernels {

using ::ElementwiseTiling;
using ::InputBroadcastTiling;
using ::ReluGradTilingData;
using ::ThresholdBatchTiling;
using ::ThresholdGradV2DTilingData;
using ::ThresholdParams;

inline constexpr uint64_t kMaxBatchRank = 4;      // ThresholdBatchTiling::sizes
inline constexpr uint64_t kMaxBroadcastRank = 8;  // InputBroadcastTiling::sizes
// The structs spell their sizes out (CANN's launch generator copies their text alone).
static_assert(sizeof(ThresholdBatchTiling::sizes) / sizeof(uint64_t) == kMaxBatchRank &&
                  sizeof(ThresholdBatchTiling::strides[0]) / sizeof(int64_t) == kNumOperands &&
                  sizeof(InputBroadcastTiling::sizes) / sizeof(uint64_t) == kMaxBroadcastRank,
              "the tiling structs hold kMaxBatchRank dims of kNumOperands operands");

// Element offsets of slice k's first element of each operand, from the operands' bases: k's
// mixed-radix digits over `sizes` (`rank` dims, outer to inner) times each dim's operand strides
// (`strides[d][j]`). The one definition of a batch's slice addressing: the executor's
// ThresholdBatch and the kernel's ThresholdBatchTiling both go through it.
template <typename Sizes, typename Strides>
__aicore__ inline void SliceOffsets(uint64_t k, uint64_t rank, const Sizes& sizes,
                                    const Strides& strides, int64_t off[kNumOperands]) {
  for (int j = 0; j < kNumOperands; ++j) off[j] = 0;
  for (uint64_t d = rank; d-- > 0;) {
    const uint64_t size = static_cast<uint64_t>(sizes[d]);
    const int64_t digit = static_cast<int64_t>(k % size);
    k /= size;
    for (int j = 0; j < kNumOperands; ++j) off[j] += digit * strides[d][j];
  }
}

// Elements of input j (kOperandGrad, kOperandX) a broadcast read spans from its first element.
__aicore__ inline uint64_t BroadcastSpan(const InputBroadcastTiling& b, int j) {
  uint64_t last = 0;
  for (uint64_t d = 0; d < b.rank; ++d) last += (b.sizes[d] - 1) * b.strides[j][d];
  return last + 1;
}

// Elements of operand j one slice of `elements` output elements spans from the operand's first
// element in that slice.
__aicore__ inline uint64_t SliceSpan(const InputBroadcastTiling& b, uint64_t elements, int j) {
  if (j == kOperandThreshold) return 1;
  if (b.rank == 0 || j == kOperandOut) return elements;
  return BroadcastSpan(b, j);
}

// Elements of operand j a launch with this tiling may touch from the operand's base (strides
// are non-negative): the furthest slice's start plus that slice's span; 0 for a threshold the
// launch does not read from GM.
__aicore__ inline uint64_t LaunchSpan(const ThresholdGradV2DTilingData& t, int j) {
  if (j == kOperandThreshold &&
      t.threshold.source != static_cast<int32_t>(ThresholdSource::kDevice)) {
    return 0;
  }
  const ThresholdBatchTiling& b = t.batch;
  if (b.slice_num == 0) return SliceSpan(t.broadcast, t.tiling.total_num, j);
  uint64_t last = 0;
  for (uint64_t d = 0; d < b.rank; ++d) {
    last += (b.sizes[d] - 1) * static_cast<uint64_t>(b.strides[d][j]);
  }
  return last + SliceSpan(t.broadcast, b.slice_len, j);
}
__aicore__ inline uint64_t LaunchSpan(const ReluGradTilingData& t, int j) {
  return j == kOperandThreshold ? 0 : SliceSpan(t.broadcast, t.tiling.total_num, j);
}

// ThresholdParams from one threshold element's bits: what ThresholdGradV2D computes at Init from a
// device threshold (ThresholdSource::kDevice), and what a tiling threshold holds. Plain scalar
// code, in integer arithmetic only (the device compiler has no float64, and no float rounding is
// involved):
//  - float16 / bfloat16 / float32 x, float32 threshold: threshold_f32 is the element itself.
//  - float64 x (host SoC only), float64 threshold: threshold_f64_bits is the element's bits.
//  - integer x, a threshold of an integer dtype, float32 or float64: mode and threshold_int, with
//    floor, clamping to x's range (kAllPass / kNonePass) and NaN -> kNonePass.
// The fields the kernel does not read for x's dtype are 0.
namespace threshold_bits {

__aicore__ inline void SetMode(ThresholdParams* p, ThresholdMode mode, int64_t k) {
  p->mode = static_cast<int32_t>(mode);
  p->threshold_int = k;
}

// The integer k is compared as x > k: below the range every x passes, above it none does.
__aicore__ inline void Classify(int64_t k, int64_t lo, int64_t hi, ThresholdParams* p) {
  if (k < lo) return SetMode(p, ThresholdMode::kAllPass, 0);
  if (k > hi) return SetMode(p, ThresholdMode::kNonePass, 0);
  SetMode(p, ThresholdMode::kCompare, k);
}

// floor of the IEEE binary value with `exp_bits` exponent and `mant_bits` mantissa bits
// (float32: 8, 23; float64: 11, 52), classified against [lo, hi]. For integer x,
// x > t <=> x > floor(t).
__aicore__ inline void ClassifyFloatBits(uint64_t bits, uint32_t exp_bits, uint32_t mant_bits,
                                         int64_t lo, int64_t hi, ThresholdParams* p) {
  const uint64_t mant_mask = (uint64_t{1} << mant_bits) - 1;
  const int32_t exp_all_ones = (1 << exp_bits) - 1;
  const int32_t bias = (1 << (exp_bits - 1)) - 1;
  const bool negative = ((bits >> (exp_bits + mant_bits)) & 1) != 0;
  const int32_t e = static_cast<int32_t>((bits >> mant_bits) & static_cast<uint64_t>(exp_all_ones));
  const uint64_t m = bits & mant_mask;
  if (e == exp_all_ones) {  // NaN: no x exceeds it; +-inf: none / every x does
    if (m != 0 || !negative) return SetMode(p, ThresholdMode::kNonePass, 0);
    return SetMode(p, ThresholdMode::kAllPass, 0);
  }
  if (e != 0 && e - bias >= 63) {  // |t| >= 2^63: outside int64 except t = -2^63 exactly
    if (!negative) return SetMode(p, ThresholdMode::kNonePass, 0);
    if (e - bias == 63 && m == 0) return Classify(-9223372036854775807LL - 1, lo, hi, p);
    return SetMode(p, ThresholdMode::kAllPass, 0);
  }
  // |t| = sig * 2^shift < 2^63.
  const uint64_t sig = e == 0 ? m : (m | (uint64_t{1} << mant_bits));
  const int32_t shift = (e == 0 ? 1 : e) - bias - static_cast<int32_t>(mant_bits);
  uint64_t whole = 0;
  bool fraction = false;
  if (shift >= 0) {
    whole = sig << shift;
  } else if (shift > -64) {
    whole = sig >> -shift;
    fraction = (sig & ((uint64_t{1} << -shift) - 1)) != 0;
  } else {
    fraction = sig != 0;
  }
  const int64_t k =
      negative ? -static_cast<int64_t>(whole) - (fraction ? 1 : 0) : static_cast<int64_t>(whole);
  Classify(k, lo, hi, p);
}

// The value of an integer threshold element from its low bytes: its C type's, sign-extended
// where the type is signed. False for a dtype that is not an integer kernel dtype.
struct IntegerValueOf {
  uint64_t bits;
  int64_t value = 0;
  bool integer = false;
  template <Dtype D>
  __aicore__ void operator()(CTypeOf<D>) {
    if constexpr (CTypeOf<D>::kInteger) {
      value = static_cast<int64_t>(static_cast<CType<D>>(bits));
      integer = true;
    }
  }
};

__aicore__ inline float Float32FromBits(uint32_t bits) {
  union {
    uint32_t u;
    float f;
  } v;
  v.u = bits;
  return v.f;
}

}  // namespace threshold_bits

// ThresholdParams for x of `x_dtype` from a threshold element of `threshold_dtype` whose bytes
// (zero-extended) are `bits`. Which pairs are planned is phase one's check alone (the dtype
// table's TakesThresholdDtype); of the others, an integer threshold of another integer dtype
// still compares exactly, and the rest give kNonePass.
__aicore__ inline ThresholdParams ThresholdParamsFromBits(int32_t x_dtype, int32_t threshold_dtype,
                                                          uint64_t bits) {
  ThresholdParams p{};  // every field 0: mode kCompare, source kTiling
  const auto t = static_cast<Dtype>(threshold_dtype);
  if (IntegerRange x_range{0, 0}; DtypeIntegerRange(x_dtype, &x_range)) {
    const int64_t lo = x_range.min, hi = x_range.max;
    threshold_bits::IntegerValueOf integer{bits};
    if (t == Dtype::kFloat32) {
      threshold_bits::ClassifyFloatBits(bits & 0xFFFFFFFFu, 8, 23, lo, hi, &p);
    } else if (t == Dtype::kFloat64) {
      threshold_bits::ClassifyFloatBits(bits, 11, 52, lo, hi, &p);
    } else if (VisitKernelDtype(threshold_dtype, integer) && integer.integer) {
      threshold_bits::Classify(integer.value, lo, hi, &p);
    } else {
      threshold_bits::SetMode(&p, ThresholdMode::kNonePass, 0);
    }
    return p;
  }
  const auto x = static_cast<Dtype>(x_dtype);
  if (x == Dtype::kFloat64 && t == Dtype::kFloat64) {
    p.threshold_f64_bits = bits;
  } else if (x != Dtype::kFloat64 && t == Dtype::kFloat32) {
    p.threshold_f32 = threshold_bits::Float32FromBits(static_cast<uint32_t>(bits));
  } else {
    p.mode = static_cast<int32_t>(ThresholdMode::kNonePass);
  }
  return p;
}

}  // namespace ascend_kernels
