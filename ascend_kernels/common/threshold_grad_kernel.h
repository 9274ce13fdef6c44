// ThresholdGradKernel, which both operators instantiate (they differ only in where the threshold
// comes from: ThresholdOf), and RunKernelBlock, what each operator's entry runs. One block per AI
// core: the core's slice streams through UB in tiles (CopyIn, Compute, CopyOut); tiles that are
// not whole 32-byte blocks go through DataCopyPad, so no byte outside the tensors is touched.
//
// Synchronisation: the kernel has no explicit PipeBarrier/SetFlag. Between stages it relies on
// its TQue EnQue/DeQue (which carry the MTE2 -> V -> MTE3 events); inside Compute, on the
// compiler's auto-sync (asc-devkit cmake/asc/legacy_modules/bisheng_intf.cmake passes
// --cce-auto-sync for every arch) for the V -> V dependencies between consecutive vector ops
// on the same buffers (Cast -> CompareScalar -> Select, Maxs -> Mins -> Adds -> Not -> And).
// The count-form (level 2) APIs it calls set and reset the vector mask themselves
// (SetMaskCount ... ResetMask in dav_c220/kernel_operator_vec_cmpsel_impl.h), so no mask state
// crosses calls and the CPU implementation models none. The GM threshold is a scalar read at
// Init, before any vector or copy instruction.
#pragma once

#include "kernel_operator.h"

#include "ascend_kernels/dtype_soc_table.h"
#include "ascend_kernels/kernel_args.h"
#if defined(ASCEND_KERNELS_CPU_ASCENDC)
#include "ascend_kernels/float64_bits.h"
#endif

// The arch a device compile builds for: __NPU_ARCH__, or where the compiler defines only
// __CCE_AICORE__ (CANN 8.1.RC1), its arch (ArchOfCceAicore). asc-devkit
// tests/api/basic_api/CMakeLists.txt: 1001 dav_c100 = Ascend910, 2002 dav_m200 = Ascend310P,
// 2201 dav_c220 = Ascend910B, 3510 dav_3510 = Ascend950.
#if !defined(ASCEND_KERNELS_CPU_ASCENDC)
#if !defined(JAX_THRESHOLD_SOC_VERSION)
#error "an NPU build of the kernels names its SoC: JAX_THRESHOLD_SOC_VERSION (ascend_kernels/npu)"
#endif
namespace ascend_kernels {
#if defined(__NPU_ARCH__)
inline constexpr uint32_t kBuildArch = __NPU_ARCH__;
#elif defined(__CCE_AICORE__)
inline constexpr uint32_t kBuildArch = ArchOfCceAicore(__CCE_AICORE__);
static_assert(kBuildArch != 0, "__CCE_AICORE__ names no arch the kernels know (dtype_soc_table.h)");
#else
#error \
    "a device compile of the kernels needs the compiler's arch: neither __NPU_ARCH__ nor __CCE_AICORE__ is defined"
#endif
// dav_c100 / dav_m200: DataCopyPad and (dav_c100) CompareScalar are "not supported" stubs that
// emit nothing in a release build (asc-devkit impl/basic_api/kernel_log.h,
// ASCENDC_REPORT_NOT_SUPPORT), so the kernels would build and silently leave tails uncopied.
static_assert(kBuildArch != 1001 && kBuildArch != 2002,
              "ThresholdGradV2D/ReluGrad need DataCopyPad, CompareScalar and tensor-scalar "
              "Select: not on dav_c100/dav_m200");
static_assert(SocRowOf(kBuildSoc).arch == kBuildArch,
              "SOC_VERSION's arch is not the compiler's (its row, dtype_soc_table.h)");
}  // namespace ascend_kernels
#endif

namespace ascend_kernels {

using namespace AscendC;

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
constexpr int32_t BUFFER_NUM = 2;

// CompareScalar and tensor-scalar Select on int8/uint8 themselves: dav_3510 has both
// (asc-devkit impl/basic_api/dav_3510/kernel_operator_vec_cmp_impl.h,
// kernel_operator_vec_sel_impl.h), so its byte kernels compare and select in two ops; dav_c220
// has neither, hence the half detour there, and its build does not instantiate the two-op path.
// On the CPU both paths are built and the launch's arch rules decide.
#if defined(ASCEND_KERNELS_CPU_ASCENDC)
inline constexpr bool kBuildsByteCompareSelect = true;
template <typename T>
__aicore__ inline bool HasByteCompareSelect() {
  return cpu_ascendc::HasCompareAndSelect(cpu_ascendc::CurrentRules(), cpu_ascendc::VTypeOf<T>());
}
#else
inline constexpr bool kBuildsByteCompareSelect = kBuildArch == 3510;
template <typename T>
__aicore__ inline bool HasByteCompareSelect() {
  return kBuildsByteCompareSelect;
}
#endif

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
                                         : ONE_REPEAT_BYTE_SIZE / sizeof(T);
  static constexpr uint32_t kWideChunk = 2048;  // most float32 elements widened per CompareScalar
  // kWide16 types whose tiling (UB divisor 10, not 7: bfloat16) leaves UB to widen a whole tile
  // at once; float16's, a quarter of one (Init).
  static constexpr bool kWholeTileWidens = DtypeRowOf(static_cast<int32_t>(D)).ub_divisor >= 10;
  static constexpr uint32_t kChunkAlign = 256;

  // Elements each queue buffer must hold for tiles of `tile` elements.
  __aicore__ static inline uint32_t Capacity(uint32_t tile) {
    return (tile + kAlign - 1) / kAlign * kAlign;
  }

  __aicore__ inline void Init(TPipe& pipe, uint32_t capacity, const ThresholdParams& p) {
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
      // float16: a quarter of a tile, so the plan fits the tiling's 7 tile-sizes of UB. bfloat16's
      // tiling leaves 10: six 16-bit queue buffers, the mask and a whole tile widened take 8.1.
      // At most kWideChunk; a multiple of 256 so each chunk's mask starts 32-byte aligned. Tiny
      // UBs (below ~8 KiB) may not fit.
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

  __aicore__ inline void Compute(const LocalTensor<T>& out, const LocalTensor<T>& grad,
                                 const LocalTensor<T>& feature, uint32_t count) {
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
      if constexpr (kBuildsByteCompareSelect) {
        if (byteOps_) {
          ComputeByteOps(out, grad, feature, count);
          return;
        }
      }
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
  // int8/uint8 where the SoC compares and selects bytes (HasByteCompareSelect): per chunk, the
  // compare's bit mask, then Select(mask, grad, 0) straight into the output.
  __aicore__ inline void ComputeByteOps(const LocalTensor<T>& out, const LocalTensor<T>& grad,
                                        const LocalTensor<T>& feature, uint32_t count) {
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

  TBuf<TPosition::VECCALC> maskBuf_;
  TBuf<TPosition::VECCALC> scratchBuf_;
  bool byteOps_ = false;         // kByte: compare and select bytes (ComputeByteOps)
  uint32_t minusOneFilled_ = 0;  // leading elements of the -1.0h constant already written
  uint32_t chunk_ = kWideChunk;
  T thrFloat_{};
  float thrF32_ = 0.0f;
  T thrInt_{};
  ThresholdMode mode_ = ThresholdMode::kCompare;
};

// Which elements one AI core owns under an ElementwiseTiling (docs/behaviour.md §3). Big cores
// (index < tail_block_num) come first. The range is clipped to total_num: the tiling rounds every
// core's count up to whole 256-byte blocks, and the last core must not read or write past the
// real end of the tensors (the upstream defect we do not copy).
struct CoreRange {
  uint64_t offset;    // first element
  uint64_t count;     // elements owned, after clipping
  uint64_t tile_num;  // tiles, the last one holding tail_num elements
  uint64_t tail_num;
};

__aicore__ inline CoreRange SplitForCore(const ElementwiseTiling& t, uint64_t block_idx) {
  CoreRange r{0, 0, 0, 0};
  const bool big = block_idx < t.tail_block_num;
  r.offset = big ? block_idx * t.big_core_data_num
                 : t.tail_block_num * t.big_core_data_num +
                       (block_idx - t.tail_block_num) * t.small_core_data_num;
  if (t.tile_data_num == 0 || block_idx >= t.block_dim || r.offset >= t.total_num) {
    return r;
  }
  r.count = big ? t.big_core_data_num : t.small_core_data_num;
  r.tile_num = big ? t.final_big_tile_num : t.final_small_tile_num;
  r.tail_num = big ? t.big_tail_data_num : t.small_tail_data_num;
  if (t.total_num - r.offset < r.count) {
    r.count = t.total_num - r.offset;
    r.tile_num = (r.count + t.tile_data_num - 1) / t.tile_data_num;
    r.tail_num = r.count - (r.tile_num - 1) * t.tile_data_num;
  }
#if defined(ASCEND_KERNELS_CPU_ASCENDC)
  // A tiling whose per-core tile counts disagree with its per-core element counts is a host bug.
  CPU_ASCENDC_CHECK(
      r.tile_num >= 1 && r.tail_num >= 1 && r.tail_num <= t.tile_data_num &&
          (r.tile_num - 1) * t.tile_data_num + r.tail_num == r.count,
      "ElementwiseTiling",
      "core %llu: %llu tiles of %llu with tail %llu do not cover its %llu elements",
      static_cast<unsigned long long>(block_idx), static_cast<unsigned long long>(r.tile_num),
      static_cast<unsigned long long>(t.tile_data_num), static_cast<unsigned long long>(r.tail_num),
      static_cast<unsigned long long>(r.count));
#endif
  return r;
}

// One element of U at a GM address, read by the scalar unit. The value was written outside this
// kernel (by the threshold's producer, possibly from another core), so its line in this core's
// data cache is cleaned and invalidated first: the read then comes from GM.
template <typename U>
__aicore__ inline U LoadGmElement(GM_ADDR address) {
  GlobalTensor<U> value;
  value.SetGlobalBuffer(reinterpret_cast<__gm__ U*>(address), 1);
  DataCacheCleanAndInvalid<U, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(value);
  return value.GetValue(0);
}
// The bytes (zero-extended) of the threshold element of a kernel dtype at `address`.
struct LoadThresholdBits {
  GM_ADDR address;
  uint64_t bits = 0;
  template <Dtype D>
  __aicore__ void operator()(CTypeOf<D>) {
    constexpr uint32_t kBytes = sizeof(CType<D>);
    if constexpr (kBytes == 1) bits = LoadGmElement<uint8_t>(address);
    if constexpr (kBytes == 2) bits = LoadGmElement<uint16_t>(address);
    if constexpr (kBytes == 4) bits = LoadGmElement<uint32_t>(address);
    if constexpr (kBytes == 8) bits = LoadGmElement<uint64_t>(address);
  }
};
__aicore__ inline uint64_t LoadThreshold(GM_ADDR address, int32_t dtype) {
  LoadThresholdBits load{address};
  VisitKernelDtype(dtype, load);
  return load.bits;
}

// ThresholdGradV2D's tiling data (its threshold, its batch), null for ReluGrad's.
__aicore__ inline const ThresholdGradV2DTilingData* V2DOf(const ThresholdGradV2DTilingData& data) {
  return &data;
}
__aicore__ inline const ThresholdGradV2DTilingData* V2DOf(const ReluGradTilingData&) {
  return nullptr;
}
__aicore__ inline bool IsDeviceThreshold(const ThresholdGradV2DTilingData& data) {
  return data.threshold.source == static_cast<int32_t>(ThresholdSource::kDevice);
}

// ThresholdGradV2D's threshold: precomputed by the host in the tiling data, or read from GM
// (`threshold`, one element) and converted here, exactly as the host would have. ReluGrad's
// (`v2d` null) is x > 0 exactly, for every dtype.
__aicore__ inline ThresholdParams ThresholdOf(const ThresholdGradV2DTilingData* v2d,
                                              GM_ADDR threshold) {
  ThresholdParams p{};  // every field 0: mode kCompare, source kTiling
  if (v2d == nullptr) return p;
  if (!IsDeviceThreshold(*v2d)) return v2d->threshold;
  return ThresholdParamsFromBits(v2d->dtype, v2d->threshold.gm_dtype,
                                 LoadThreshold(threshold, v2d->threshold.gm_dtype));
}

template <Dtype D, typename TilingData>
class ThresholdGradKernel {
 public:
  using T = CType<D>;
  __aicore__ inline ThresholdGradKernel() {}

  __aicore__ inline void Init(GM_ADDR grad, GM_ADDR feature, GM_ADDR threshold, GM_ADDR out,
                              const TilingData& data) {
    range_ = SplitForCore(data.tiling, GetBlockIdx());
    tileDataNum_ = static_cast<uint32_t>(data.tiling.tile_data_num);
    if (range_.count == 0) {
      return;
    }
    const ThresholdGradV2DTilingData* v2d = V2DOf(data);
    batched_ = v2d != nullptr && v2d->batch.slice_num > 0 && IsDeviceThreshold(*v2d);
    broadcast_ = data.broadcast.rank > 0;
    if (broadcast_) bcast_ = data.broadcast;
    if (batched_ || broadcast_) {  // pointers (and threshold) per slice piece or row group
      if (v2d != nullptr) {
        batch_ = v2d->batch;
        gmDtype_ = v2d->threshold.gm_dtype;
      }
      gradBase_ = grad;
      featureBase_ = feature;
      thresholdBase_ = threshold;
      outBase_ = out;
    } else {
      gradGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(grad) + range_.offset, range_.count);
      featureGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(feature) + range_.offset,
                                 range_.count);
      outGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(out) + range_.offset, range_.count);
    }

    const uint32_t capacity = ThresholdSelect<D>::Capacity(tileDataNum_);
    pipe_.InitBuffer(gradQue_, BUFFER_NUM, capacity * sizeof(T));
    pipe_.InitBuffer(featureQue_, BUFFER_NUM, capacity * sizeof(T));
    pipe_.InitBuffer(outQue_, BUFFER_NUM, capacity * sizeof(T));
    if (batched_) {
      ThresholdParams first{};  // each slice piece sets its own (ProcessBatch)
      select_.Init(pipe_, capacity, first);
    } else {
      select_.Init(pipe_, capacity, ThresholdOf(v2d, threshold));
    }
  }

  __aicore__ inline void Process() {
    if (batched_) {
      ProcessBatch();
      return;
    }
    if (broadcast_) {
      ProcessBroadcast(gradBase_, featureBase_, outBase_, range_.offset,
                       range_.offset + range_.count);
      return;
    }
    ProcessTiles(range_.count);
  }

 private:
  // The core's range of the batch's elements (slice after slice), one slice piece at a time:
  // each piece with its slice's tensors and threshold element, in tiles of tileDataNum_.
  __aicore__ inline void ProcessBatch() {
    const uint64_t len = batch_.slice_len;
    const uint64_t end = range_.offset + range_.count;
    for (uint64_t pos = range_.offset; pos < end;) {
      const uint64_t slice = pos / len;
      const uint64_t first = pos - slice * len;
      const uint64_t n = end - pos < len - first ? end - pos : len - first;
      int64_t off[kNumOperands];
      SliceOffsets(slice, batch_.rank, batch_.sizes, batch_.strides, off);
      GM_ADDR element =
          thresholdBase_ + off[kOperandThreshold] * static_cast<int64_t>(DtypeSize(gmDtype_));
      select_.SetThreshold(ThresholdParamsFromBits(static_cast<int32_t>(D), gmDtype_,
                                                   LoadThreshold(element, gmDtype_)));
      if (broadcast_) {  // the slice's inputs through the broadcast copy-in
        const int64_t bytes = static_cast<int64_t>(sizeof(T));
        ProcessBroadcast(gradBase_ + off[kOperandGrad] * bytes,
                         featureBase_ + off[kOperandX] * bytes, outBase_ + off[kOperandOut] * bytes,
                         first, first + n);
        pos += n;
        continue;
      }
      gradGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(gradBase_) + off[kOperandGrad] + first,
                              n);
      featureGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(featureBase_) + off[kOperandX] + first,
                                 n);
      outGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(outBase_) + off[kOperandOut] + first, n);
      ProcessTiles(n);
      pos += n;
    }
  }

  // n elements of gradGm_ / featureGm_ to outGm_, in tiles of tileDataNum_.
  __aicore__ inline void ProcessTiles(uint64_t n) {
    for (uint64_t pos = 0; pos < n; pos += tileDataNum_) {
      const uint32_t count = static_cast<uint32_t>(n - pos < tileDataNum_ ? n - pos : tileDataNum_);
      CopyIn(pos, count);
      Compute(count);
      CopyOutRows(pos, 1, count);
    }
  }

  // Out positions [begin, end) of a view whose inputs start at `grad` / `feature` (read through
  // bcast_) and whose out is contiguous from `out`. Rows are out's innermost merged dim: a row
  // longer than a tile, or the part of one at either end of the range, runs in pieces of at most
  // a tile, each input a contiguous range or one repeated element; whole rows run several at a
  // time, each row at a 32-byte aligned pitch in UB (DataCopyPad's block layout), so every UB
  // address stays aligned whatever the row length. No input is ever copied to out's size.
  __aicore__ inline void ProcessBroadcast(GM_ADDR grad, GM_ADDR feature, GM_ADDR out,
                                          uint64_t begin, uint64_t end) {
    gradView_ = grad;
    featureView_ = feature;
    gradGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(grad), BroadcastSpan(bcast_, kOperandGrad));
    featureGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(feature),
                               BroadcastSpan(bcast_, kOperandX));
    outGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(out) + begin, end - begin);
    const uint64_t rank = bcast_.rank;
    const uint64_t len = bcast_.sizes[rank - 1];
    const uint64_t segment = rank >= 2 ? bcast_.sizes[rank - 2] : 1;  // rows with one row stride
    const uint64_t pitch =
        (len * sizeof(T) + ONE_BLK_SIZE - 1) / ONE_BLK_SIZE * ONE_BLK_SIZE / sizeof(T);
    const uint64_t row_cap = pitch <= tileDataNum_ ? tileDataNum_ / pitch : 0;
    for (uint64_t pos = begin; pos < end;) {
      const uint64_t col = pos % len;
      const uint64_t left = end - pos;
      if (col != 0 || row_cap == 0 || left < len) {
        uint64_t n = len - col;
        if (n > left) n = left;
        if (n > tileDataNum_) n = tileDataNum_;
        CopyInPiece(pos, static_cast<uint32_t>(n));
        Compute(static_cast<uint32_t>(n));
        CopyOutRows(pos - begin, 1, static_cast<uint32_t>(n));
        pos += n;
        continue;
      }
      const uint64_t in_segment = segment - (pos / len) % segment;
      uint64_t rows = left / len;
      if (rows > in_segment) rows = in_segment;
      if (rows > row_cap) rows = row_cap;
      CopyInRows(pos, static_cast<uint32_t>(rows), static_cast<uint32_t>(len),
                 static_cast<uint32_t>(pitch));
      Compute(static_cast<uint32_t>(rows * pitch));
      CopyOutRows(pos - begin, static_cast<uint32_t>(rows), static_cast<uint32_t>(len));
      pos += rows * len;
    }
  }

  // Input j's element offset at out position pos (bcast_'s mixed radix).
  __aicore__ inline uint64_t InputOffset(int j, uint64_t pos) const {
    uint64_t offset = 0;
    for (uint64_t d = bcast_.rank; d-- > 0;) {
      offset += (pos % bcast_.sizes[d]) * bcast_.strides[j][d];
      pos /= bcast_.sizes[d];
    }
    return offset;
  }

  // count elements of input j from out position pos, all in one row.
  __aicore__ inline void LoadPiece(const LocalTensor<T>& dst, int j, uint64_t pos, uint32_t count) {
    const GlobalTensor<T>& gm = j == kOperandGrad ? gradGm_ : featureGm_;
    const uint64_t offset = InputOffset(j, pos);
    if (bcast_.strides[j][bcast_.rank - 1] != 0) {
      CopyGmToUb(dst, gm[offset], count);
    } else {
      Fill(dst, InputElement(j, offset), count);
    }
  }

  __aicore__ inline void CopyInPiece(uint64_t pos, uint32_t count) {
    LocalTensor<T> gradLocal = gradQue_.template AllocTensor<T>();
    LocalTensor<T> featureLocal = featureQue_.template AllocTensor<T>();
    LoadPiece(gradLocal, kOperandGrad, pos, count);
    LoadPiece(featureLocal, kOperandX, pos, count);
    gradQue_.EnQue(gradLocal);
    featureQue_.EnQue(featureLocal);
  }

  // `rows` whole rows of input j from out position pos (a row start), row r at dst[r * pitch].
  __aicore__ inline void LoadRows(const LocalTensor<T>& dst, int j, uint64_t pos, uint32_t rows,
                                  uint32_t len, uint32_t pitch) {
    const GlobalTensor<T>& gm = j == kOperandGrad ? gradGm_ : featureGm_;
    const uint64_t offset = InputOffset(j, pos);
    const uint64_t row_stride = bcast_.rank >= 2 ? bcast_.strides[j][bcast_.rank - 2] : 0;
    const uint32_t row_bytes = len * static_cast<uint32_t>(sizeof(T));
    if (bcast_.strides[j][bcast_.rank - 1] == 0) {  // each row one element, repeated
      for (uint32_t r = 0; r < rows; ++r) {
        Fill(dst[r * pitch], InputElement(j, offset + r * row_stride), pitch);
      }
      return;
    }
    const DataCopyPadExtParams<T> pad(true, 0, 0, T());
    if (row_stride >= len && (row_stride - len) * sizeof(T) <= 0xffffffffull) {
      // Rows at a constant distance in GM: one copy, each row padded to the pitch in UB.
      DataCopyPad(dst, gm[offset],
                  DataCopyExtParams(static_cast<uint16_t>(rows), row_bytes,
                                    static_cast<uint32_t>((row_stride - len) * sizeof(T)), 0, 0),
                  pad);
      return;
    }
    for (uint32_t r = 0; r < rows; ++r) {  // the same row again (broadcast rows), or far apart
      DataCopyPad(dst[r * pitch], gm[offset + r * row_stride],
                  DataCopyExtParams(1, row_bytes, 0, 0, 0), pad);
    }
  }

  __aicore__ inline void CopyInRows(uint64_t pos, uint32_t rows, uint32_t len, uint32_t pitch) {
    LocalTensor<T> gradLocal = gradQue_.template AllocTensor<T>();
    LocalTensor<T> featureLocal = featureQue_.template AllocTensor<T>();
    LoadRows(gradLocal, kOperandGrad, pos, rows, len, pitch);
    LoadRows(featureLocal, kOperandX, pos, rows, len, pitch);
    gradQue_.EnQue(gradLocal);
    featureQue_.EnQue(featureLocal);
  }

  // `rows` rows of `len` elements (at the UB pitch) to out position pos, contiguous in GM.
  __aicore__ inline void CopyOutRows(uint64_t pos, uint32_t rows, uint32_t len) {
    LocalTensor<T> outLocal = outQue_.template DeQue<T>();
    const GlobalTensor<T> dst = outGm_[pos];
    if (rows == 1 && len * sizeof(T) % ONE_BLK_SIZE == 0) {
      DataCopy(dst, outLocal, len);
    } else {
      DataCopyPad(dst, outLocal,
                  DataCopyExtParams(static_cast<uint16_t>(rows),
                                    static_cast<uint32_t>(len * sizeof(T)), 0, 0, 0));
    }
    outQue_.FreeTensor(outLocal);
  }

  // Input j's element at `offset`, read by the scalar unit.
  __aicore__ inline T InputElement(int j, uint64_t offset) const {
    GM_ADDR base = j == kOperandGrad ? gradView_ : featureView_;
    return LoadGmElement<T>(base + offset * sizeof(T));
  }

  // count copies of value from dst (Duplicate; 8-bit values as 16-bit pairs, which Duplicate
  // takes, the buffer's 32-byte blocks holding the odd one out).
  __aicore__ inline void Fill(const LocalTensor<T>& dst, T value, uint32_t count) {
    if constexpr (sizeof(T) == 1) {
      const uint16_t byte = static_cast<uint8_t>(value);
      Duplicate(dst.template ReinterpretCast<int16_t>(),
                static_cast<int16_t>(static_cast<uint16_t>(byte | (byte << 8))),
                static_cast<int32_t>((count + 1) / 2));
    } else {
      Duplicate(dst, value, static_cast<int32_t>(count));
    }
  }

  __aicore__ inline void CopyIn(uint64_t pos, uint32_t count) {
    LocalTensor<T> gradLocal = gradQue_.template AllocTensor<T>();
    LocalTensor<T> featureLocal = featureQue_.template AllocTensor<T>();
    CopyGmToUb(gradLocal, gradGm_[pos], count);
    CopyGmToUb(featureLocal, featureGm_[pos], count);
    gradQue_.EnQue(gradLocal);
    featureQue_.EnQue(featureLocal);
  }

  __aicore__ inline void Compute(uint32_t count) {
    LocalTensor<T> gradLocal = gradQue_.template DeQue<T>();
    LocalTensor<T> featureLocal = featureQue_.template DeQue<T>();
    LocalTensor<T> outLocal = outQue_.template AllocTensor<T>();
    select_.Compute(outLocal, gradLocal, featureLocal, count);
    outQue_.EnQue(outLocal);
    gradQue_.FreeTensor(gradLocal);
    featureQue_.FreeTensor(featureLocal);
  }

  __aicore__ inline void CopyGmToUb(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                                    uint32_t count) {
    if (count * sizeof(T) % ONE_BLK_SIZE == 0) {
      DataCopy(dst, src, count);
    } else {
      DataCopyPad(dst, src, DataCopyExtParams(1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0),
                  DataCopyPadExtParams<T>(false, 0, 0, T()));
    }
  }

  TPipe pipe_;
  // Depth 1: a stage hands on one tile at a time; InitBuffer's BUFFER_NUM buffers per queue let
  // the next tile's copy-in fill one while the current one is computed (double buffering).
  TQue<TPosition::VECIN, 1> gradQue_;
  TQue<TPosition::VECIN, 1> featureQue_;
  TQue<TPosition::VECOUT, 1> outQue_;
  ThresholdSelect<D> select_;
  GlobalTensor<T> gradGm_;
  GlobalTensor<T> featureGm_;
  GlobalTensor<T> outGm_;
  CoreRange range_{0, 0, 0, 0};
  uint32_t tileDataNum_ = 0;
  bool batched_ = false;
  bool broadcast_ = false;
  ThresholdBatchTiling batch_{};
  InputBroadcastTiling bcast_{};
  GM_ADDR gradBase_ = nullptr;
  GM_ADDR featureBase_ = nullptr;
  GM_ADDR thresholdBase_ = nullptr;
  GM_ADDR outBase_ = nullptr;
  GM_ADDR gradView_ = nullptr;  // the inputs ProcessBroadcast reads (a slice's, in a batch)
  GM_ADDR featureView_ = nullptr;
  int32_t gmDtype_ = 0;
};

// Whether this build has operator kOp's kernel of dtype D: the CPU build has every one (the
// launch's arch rules decide at run time); an NPU build, those its SOC_VERSION's SoC runs.
template <KernelOp kOp, Dtype D>
__aicore__ constexpr bool BuildHasKernel() {
#if defined(ASCEND_KERNELS_CPU_ASCENDC)
  return true;
#else
  return SocRunsKernel(kBuildSoc, kOp, static_cast<int32_t>(D));
#endif
}

// One block of operator kOp's kernel on the element type of the tiling's dtype (`threshold`:
// ThresholdGradV2D's GM threshold, null for ReluGrad). A dtype the build has no kernel for runs
// nothing: neither phase one nor the NPU launcher launches one.
template <KernelOp kOp, typename TilingData>
struct KernelBlock {
  GM_ADDR grad;
  GM_ADDR feature;
  GM_ADDR threshold;
  GM_ADDR out;
  const TilingData& tiling;
  template <Dtype D>
  __aicore__ void operator()(CTypeOf<D>) {
    if constexpr (BuildHasKernel<kOp, D>()) {
      ThresholdGradKernel<D, TilingData> op;
      op.Init(grad, feature, threshold, out, tiling);
      op.Process();
    }
  }
};
template <KernelOp kOp, typename TilingData>
__aicore__ inline void RunKernelBlock(GM_ADDR grad, GM_ADDR feature, GM_ADDR threshold, GM_ADDR out,
                                      const TilingData& tiling) {
  KernelBlock<kOp, TilingData> block{grad, feature, threshold, out, tiling};
  VisitKernelDtype(tiling.dtype, block);
}

}  // namespace ascend_kernels
