// The compute stage shared by ThresholdGradV2D and ReluGrad: out = x > threshold ? grad : 0, a
// select (never a multiply), per dtype (docs/behaviour.md §1, §4):
//
//  float32 (float64 host-only): CompareScalar(GT) into a bit mask, then Select(mask, grad, 0).
//  float16 / bfloat16: x widened to float32 with Cast, chunk by chunk, compared in float32; the
//      Select then runs on the original 16-bit grad (bfloat16 viewed as half: Select moves bits),
//      so results are grad's exact bits: the value a select on float32 grad narrowed back to 16
//      bits gives, without the two extra Casts and a float32 grad buffer.
//  int8 / uint8: only x is widened to half (exact) and compared; grad is never converted. The
//      compare's bit mask becomes a byte mask: Select(mask, -1.0h, 0) in half, Cast half -> int8
//      (-1 -> 0xFF, 0 -> 0x00) into the output buffer, then out = And(mask bytes, grad) on the
//      int16 view. On Atlas A2, Select and CompareScalar take only half/float and And only
//      int16/uint16 (no 8-bit Select/Compare), hence the detour; grad's bytes pass through And
//      untouched, so results are the original values. Where the SoC compares and selects bytes
//      (dav_3510, and the host: HasByteCompareSelect), CompareScalar(GT) on x itself, then
//      Select(mask, grad, 0), chunk by chunk, counts rounded up to whole 256-byte repeats.
//  int32 (int64 host-only): exact, since the A2 vector unit compares int32 only for EQ and a
//      float32 compare is wrong above 2^24:
//        m = Adds(Mins(Maxs(x, t), t + 1), ~t)   is -1 where x <= t, 0 where x > t
//        out = And(Not(m), grad)                 on the int16 view (And/Not are 16-bit ops)
//      For x <= t, Maxs gives t, Mins t, and t + ~t = -1; for x > t, Maxs gives x >= t + 1, Mins
//      t + 1, and t + 1 + ~t = 0. No step overflows while t < max (t == max means "none pass").
//
// Buffers (beside the kernel's 2x2 input and 2 output queue buffers of `capacity` elements):
// a mask of capacity/8 bytes, and a float32 chunk of min(2048, capacity/4) elements for half,
// min(2048, capacity) for bfloat16 (rounded down to 256); for int8/uint8 (chunked too) a mask for
// one chunk and two half buffers of one chunk of min(2048, capacity) elements (widened x, then
// the constant -1.0h that Select takes as its tensor operand, written once per core as far as
// the tiles need it; not allocated on the two-op path). Counts are rounded up to whole vector
// repeats (`kAlign` elements); the lanes past the tile's real count compute on stale UB and are
// never copied out.
#pragma once

#include "kernel_operator.h"

#include "ascend_kernels/dtype_soc_table.h"
#include "ascend_kernels/kernel_args.h"
#if defined(ASCEND_KERNELS_CPU_ASCENDC)
#include "ascend_kernels/float64_bits.h"
#endif

// CompareScalar and tensor-scalar Select on int8/uint8 themselves: dav_3510 has both
// (asc-devkit impl/basic_api/dav_3510/kernel_operator_vec_cmp_impl.h,
// kernel_operator_vec_sel_impl.h), so its byte kernels compare and select in two ops; dav_c220
// has neither, hence the half detour there, and its build does not compile the two-op path. On
// the CPU both paths are compiled and the launch's arch rules decide.
#if defined(ASCEND_KERNELS_CPU_ASCENDC) || (defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510)
#define ASCEND_KERNELS_HAS_BYTE_COMPARE_SELECT 1
#else
#define ASCEND_KERNELS_HAS_BYTE_COMPARE_SELECT 0
#endif

namespace ascend_kernels {

constexpr int32_t BUFFER_NUM = 2;

template <typename T>
__aicore__ inline bool HasByteCompareSelect() {
#if defined(ASCEND_KERNELS_CPU_ASCENDC)
  return cpu_ascendc::HasCompareAndSelect(cpu_ascendc::CurrentRules(), cpu_ascendc::VTypeOf<T>());
#else
  return ASCEND_KERNELS_HAS_BYTE_COMPARE_SELECT != 0;
#endif
}

// How the compute stage compares and selects, by the element type.
enum class SelectPath { kFloat, kWide16, kByte, kExactInt };
template <Dtype D>
inline constexpr SelectPath kSelectPath =
    CTypeOf<D>::kInteger ? (sizeof(CType<D>) == 1 ? SelectPath::kByte : SelectPath::kExactInt)
                         : (sizeof(CType<D>) == 2 ? SelectPath::kWide16 : SelectPath::kFloat);

template <Dtype D>
class ThresholdSelect {
 public:
  using T = CType<D>;
  static constexpr SelectPath kPath = kSelectPath<D>;
  // Elements per whole vector repeat of the widest compare operand.
  static constexpr uint32_t kAlign = kPath == SelectPath::kWide16 ? 64u
                                     : kPath == SelectPath::kByte
                                         ? 128u
                                         : AscendC::ONE_REPEAT_BYTE_SIZE / sizeof(T);
  static constexpr uint32_t kWideChunk = 2048;  // most float32 elements widened per CompareScalar
  // kWide16 types whose tiling (UB divisor 10, not 7: bfloat16) leaves UB to widen a whole tile
  // at once; float16's, a quarter of one (Init).
  static constexpr bool kWholeTileWidens = DtypeRowOf(static_cast<int32_t>(D)).ub_divisor >= 10;
  static constexpr uint32_t kChunkAlign = 256;

  // Elements each queue buffer must hold for tiles of `tile` elements.
  __aicore__ static inline uint32_t Capacity(uint32_t tile) {
    return (tile + kAlign - 1) / kAlign * kAlign;
  }

  __aicore__ inline void Init(AscendC::TPipe& pipe, uint32_t capacity, const ThresholdParams& p) {
    capacity_ = capacity;
    if constexpr (kPath == SelectPath::kByte) {
      // The two-op path needs CompareScalar's whole 256-byte repeats: the tiling's tiles are
      // whole 256-byte blocks, so a tile's count rounds up to 256 inside the buffers.
      byteOps_ = HasByteCompareSelect<T>() && capacity % kChunkAlign == 0;
      pipe.InitBuffer(maskBuf_,
                      (capacity < kWideChunk ? capacity : kWideChunk) / 8);  // one chunk's
    } else if constexpr (kPath != SelectPath::kExactInt) {
      pipe.InitBuffer(maskBuf_, capacity / 8);
    }
    if constexpr (kPath == SelectPath::kWide16) {
      // float16: about a quarter of a tile (half the bytes of one 16-bit tile buffer), so the plan
      // fits the tiling's 7 tile-sizes of UB (ub_data_number 7). bfloat16's tiling leaves 10
      // (ub_data_number 10), room for a whole tile widened: six 16-bit queue buffers, the mask
      // and a float32 chunk of up to a tile (two 16-bit buffers' bytes) take 8.1 of them. Fewer,
      // longer chunks: at most kWideChunk either way, so a 910B-sized tile chunks the same. A
      // multiple of 256 elements so each chunk's mask (chunk / 8 bytes) starts 32-byte aligned.
      // Tiny UBs (below ~8 KiB) may not fit.
      chunk_ = (kWholeTileWidens ? capacity : capacity / 4) / kChunkAlign * kChunkAlign;
      chunk_ = chunk_ > kWideChunk ? kWideChunk : (chunk_ < kChunkAlign ? kChunkAlign : chunk_);
      pipe.InitBuffer(scratchBuf_, chunk_ * sizeof(float));
    } else if constexpr (kPath == SelectPath::kByte) {
      // Chunks of kWideChunk elements (a multiple of 256, so each chunk's offsets stay 32-byte
      // aligned), or one chunk for a smaller capacity: the chunk's intermediates stay small (on
      // the CPU, in L1).
      chunk_ = capacity < kWideChunk ? capacity : kWideChunk;
      if (!byteOps_) pipe.InitBuffer(scratchBuf_, 2 * chunk_ * sizeof(half));
    }
    SetThreshold(p);
  }

  // The threshold the next Computes compare with (a batch's slices each have their own).
  __aicore__ inline void SetThreshold(const ThresholdParams& p) {
    if constexpr (kPath == SelectPath::kFloat) {
      if constexpr (sizeof(T) == sizeof(double)) {
#if defined(ASCEND_KERNELS_CPU_ASCENDC)
        thrFloat_ = ascend_kernels::Float64FromBits(p.threshold_f64_bits);  // host SoC only
#endif
      } else {
        thrFloat_ = static_cast<T>(p.threshold_f32);
      }
    } else if constexpr (kPath == SelectPath::kWide16) {
      thrF32_ = p.threshold_f32;
    } else {
      mode_ = static_cast<ThresholdMode>(p.mode);
      const int64_t lo = IntegerRangeOf<T>().min;
      const int64_t hi = IntegerRangeOf<T>().max;
      if (mode_ == ThresholdMode::kCompare && p.threshold_int >= hi) {
        mode_ = ThresholdMode::kNonePass;  // nothing exceeds the type's maximum
      } else if (mode_ == ThresholdMode::kCompare && p.threshold_int < lo) {
        mode_ = ThresholdMode::kAllPass;
      }
      thrInt_ = mode_ == ThresholdMode::kCompare ? static_cast<T>(p.threshold_int) : T(0);
    }
  }

  __aicore__ inline void Compute(const AscendC::LocalTensor<T>& out,
                                 const AscendC::LocalTensor<T>& grad,
                                 const AscendC::LocalTensor<T>& feature, uint32_t count) {
    using namespace AscendC;
    const uint32_t n = Capacity(count);
    if constexpr (kPath == SelectPath::kFloat) {
      LocalTensor<uint8_t> mask = maskBuf_.template Get<uint8_t>();
      CompareScalar(mask, feature, thrFloat_, CMPMODE::GT, n);
      Select(out, mask, grad, static_cast<T>(0), SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
    } else if constexpr (kPath == SelectPath::kWide16) {
      LocalTensor<uint8_t> mask = maskBuf_.template Get<uint8_t>();
      LocalTensor<float> wide = scratchBuf_.template Get<float>();
      for (uint32_t c = 0; c < n; c += chunk_) {
        const uint32_t m = n - c < chunk_ ? n - c : chunk_;
        Cast(wide, feature[c], RoundMode::CAST_NONE, m);
        CompareScalar(mask[c / 8], wide, thrF32_, CMPMODE::GT, m);
      }
      Select(out.template ReinterpretCast<half>(), mask, grad.template ReinterpretCast<half>(),
             static_cast<half>(0.0f), SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
    } else if constexpr (kPath == SelectPath::kByte) {
#if ASCEND_KERNELS_HAS_BYTE_COMPARE_SELECT
      if (byteOps_) {
        ComputeByteOps(out, grad, feature, count);
        return;
      }
#endif
      LocalTensor<uint8_t> mask = maskBuf_.template Get<uint8_t>();
      LocalTensor<half> xHalf = scratchBuf_.template Get<half>();
      LocalTensor<half> minusOne = xHalf[chunk_];
      const uint32_t firstChunk = n < chunk_ ? n : chunk_;
      if (firstChunk > minusOneFilled_) {  // filled on first need: a core's slice may be small
        Duplicate(minusOne, static_cast<half>(-1.0f), static_cast<int32_t>(firstChunk));
        minusOneFilled_ = firstChunk;
      }
      LocalTensor<int8_t> keep = out.template ReinterpretCast<int8_t>();
      LocalTensor<int16_t> out16 = out.template ReinterpretCast<int16_t>();
      const LocalTensor<int16_t> grad16 = grad.template ReinterpretCast<int16_t>();
      for (uint32_t c = 0; c < n; c += chunk_) {
        const uint32_t m = n - c < chunk_ ? n - c : chunk_;
        if (mode_ == ThresholdMode::kCompare) {
          Cast(xHalf, feature[c], RoundMode::CAST_NONE, m);
          CompareScalar(mask, xHalf, static_cast<half>(static_cast<float>(thrInt_)), CMPMODE::GT,
                        m);
        } else {
          const uint16_t bits = mode_ == ThresholdMode::kAllPass ? 0xFFFFu : 0u;
          Duplicate(mask.template ReinterpretCast<uint16_t>(), bits, static_cast<int32_t>(m / 16));
        }
        Select(xHalf, mask, minusOne, static_cast<half>(0.0f), SELMODE::VSEL_TENSOR_SCALAR_MODE, m);
        Cast(keep[c], xHalf, RoundMode::CAST_NONE, m);
        And(out16[c / 2], out16[c / 2], grad16[c / 2], static_cast<int32_t>(m / 2));
      }
    } else {
      const int32_t n16 = static_cast<int32_t>(n * (sizeof(T) / sizeof(int16_t)));
      LocalTensor<int16_t> out16 = out.template ReinterpretCast<int16_t>();
      if (mode_ == ThresholdMode::kCompare) {
        Maxs(out, feature, thrInt_, static_cast<int32_t>(n));
        Mins(out, out, static_cast<T>(thrInt_ + 1), static_cast<int32_t>(n));
        Adds(out, out, static_cast<T>(~thrInt_), static_cast<int32_t>(n));
        Not(out16, out16, n16);
      } else {
        Duplicate(out, static_cast<T>(mode_ == ThresholdMode::kAllPass ? -1 : 0),
                  static_cast<int32_t>(n));
      }
      And(out16, out16, grad.template ReinterpretCast<int16_t>(), n16);
    }
  }

 private:
#if ASCEND_KERNELS_HAS_BYTE_COMPARE_SELECT
  // int8/uint8 where the SoC compares and selects bytes (HasByteCompareSelect): per chunk, the
  // compare's bit mask, then Select(mask, grad, 0) straight into the output.
  __aicore__ inline void ComputeByteOps(const AscendC::LocalTensor<T>& out,
                                        const AscendC::LocalTensor<T>& grad,
                                        const AscendC::LocalTensor<T>& feature, uint32_t count) {
    using namespace AscendC;
    const uint32_t n = (count + kChunkAlign - 1) / kChunkAlign * kChunkAlign;
    LocalTensor<uint8_t> mask = maskBuf_.template Get<uint8_t>();
    for (uint32_t c = 0; c < n; c += chunk_) {
      const uint32_t m = n - c < chunk_ ? n - c : chunk_;
      if (mode_ == ThresholdMode::kCompare) {
        CompareScalar(mask, feature[c], thrInt_, CMPMODE::GT, m);
      } else {
        const uint16_t bits = mode_ == ThresholdMode::kAllPass ? 0xFFFFu : 0u;
        Duplicate(mask.template ReinterpretCast<uint16_t>(), bits, static_cast<int32_t>(m / 16));
      }
      Select(out[c], mask, grad[c], T(0), SELMODE::VSEL_TENSOR_SCALAR_MODE, m);
    }
  }
#endif

  AscendC::TBuf<AscendC::TPosition::VECCALC> maskBuf_;
  AscendC::TBuf<AscendC::TPosition::VECCALC> scratchBuf_;
  uint32_t capacity_ = 0;
  bool byteOps_ = false;         // kByte: compare and select bytes (ComputeByteOps)
  uint32_t minusOneFilled_ = 0;  // leading elements of the -1.0h constant already written
  uint32_t chunk_ = kWideChunk;
  T thrFloat_{};
  float thrF32_ = 0.0f;
  T thrInt_{};
  ThresholdMode mode_ = ThresholdMode::kCompare;
};

}  // namespace ascend_kernels
