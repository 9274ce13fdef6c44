// The AscendC kernel class both operators instantiate: ThresholdGradV2D and ReluGrad differ only
// in where the threshold comes from (ThresholdOf), so they share Init / Process / CopyIn /
// Compute / CopyOut.
//
// One block per AI core. Init picks the core's slice (big cores first, clipped to the real
// element count), Process streams it through UB in tiles of tile_data_num: CopyIn (GM -> VECIN,
// double-buffered), Compute (ThresholdSelect, the per-dtype compare + select), CopyOut
// (VECOUT -> GM). Tiles whose byte length is not a whole 32-byte block go through DataCopyPad,
// so no byte outside the tensors is read or written.
#pragma once

#include "kernel_operator.h"

#include "ascend_kernels/kernel_args.h"
#include "ascend_kernels/threshold_from_bits.h"
#include "elementwise_core_range.h"
#include "soc_features.h"
#include "threshold_select.h"

namespace ascend_kernels {
namespace kernel_common {

using namespace AscendC;

template <typename T>
struct KernelDTypeOf;
template <>
struct KernelDTypeOf<float> {
  static constexpr KernelDType kValue = KernelDType::kFloat32;
};
template <>
struct KernelDTypeOf<half> {
  static constexpr KernelDType kValue = KernelDType::kFloat16;
};
template <>
struct KernelDTypeOf<bfloat16_t> {
  static constexpr KernelDType kValue = KernelDType::kBFloat16;
};
template <>
struct KernelDTypeOf<int32_t> {
  static constexpr KernelDType kValue = KernelDType::kInt32;
};
template <>
struct KernelDTypeOf<int8_t> {
  static constexpr KernelDType kValue = KernelDType::kInt8;
};
template <>
struct KernelDTypeOf<uint8_t> {
  static constexpr KernelDType kValue = KernelDType::kUInt8;
};
template <>
struct KernelDTypeOf<int64_t> {
  static constexpr KernelDType kValue = KernelDType::kInt64;
};
#if defined(ASCEND_KERNELS_CPU_ASCENDC)
template <>
struct KernelDTypeOf<double> {
  static constexpr KernelDType kValue = KernelDType::kFloat64;
};
#endif

// One element of U at a GM address, read by the scalar unit. The value was written outside this
// kernel (by the threshold's producer, possibly from another core), so its line in this core's
// data cache is cleaned and invalidated first: the read then comes from GM.
template <typename U>
__aicore__ inline uint64_t LoadGmScalar(GM_ADDR address) {
  GlobalTensor<U> value;
  value.SetGlobalBuffer(reinterpret_cast<__gm__ U*>(address), 1);
  DataCacheCleanAndInvalid<U, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(value);
  return static_cast<uint64_t>(value.GetValue(0));
}

// The bytes (zero-extended) of the threshold element of `dtype` at `threshold`.
__aicore__ inline uint64_t LoadThresholdBits(GM_ADDR threshold, int32_t dtype) {
  switch (static_cast<KernelDType>(dtype)) {
    case KernelDType::kInt8:
    case KernelDType::kUInt8:
      return LoadGmScalar<uint8_t>(threshold);
    case KernelDType::kInt32:
    case KernelDType::kFloat32:
      return LoadGmScalar<uint32_t>(threshold);
    default:  // int64, float64: read as bits (no float64 on the device)
      return LoadGmScalar<uint64_t>(threshold);
  }
}

// Bytes of a GM threshold element of `dtype` (as LoadThresholdBits reads it).
__aicore__ inline uint64_t ThresholdElementBytes(int32_t dtype) {
  switch (static_cast<KernelDType>(dtype)) {
    case KernelDType::kInt8:
    case KernelDType::kUInt8:
      return 1;
    case KernelDType::kInt32:
    case KernelDType::kFloat32:
      return 4;
    default:
      return 8;
  }
}

// The launch's batch of slices (kernel_args.h), if it is one: ThresholdGradV2D's only.
__aicore__ inline bool IsBatch(const ThresholdGradV2DTilingData& data) {
  return data.batch.slice_num > 0 &&
         data.threshold.source == static_cast<int32_t>(ThresholdSource::kGm);
}
__aicore__ inline bool IsBatch(const ReluGradTilingData&) { return false; }
__aicore__ inline ThresholdBatchTiling BatchOf(const ThresholdGradV2DTilingData& data) {
  return data.batch;
}
__aicore__ inline int32_t GmDtypeOf(const ThresholdGradV2DTilingData& data) {
  return data.threshold.gm_dtype;
}
__aicore__ inline int32_t GmDtypeOf(const ReluGradTilingData&) { return 0; }
__aicore__ inline ThresholdBatchTiling BatchOf(const ReluGradTilingData&) {
  ThresholdBatchTiling none{};
  return none;
}

// ThresholdGradV2D's threshold: precomputed by the host in the tiling data, or read from GM
// (`threshold`, one element) and converted here, exactly as the host would have.
template <typename T>
__aicore__ inline ThresholdParams ThresholdOf(const ThresholdGradV2DTilingData& data,
                                              GM_ADDR threshold) {
  if (data.threshold.source != static_cast<int32_t>(ThresholdSource::kGm)) {
    return data.threshold;
  }
  return ThresholdParamsFromBits(static_cast<int32_t>(KernelDTypeOf<T>::kValue),
                                 data.threshold.gm_dtype,
                                 LoadThresholdBits(threshold, data.threshold.gm_dtype));
}

// ReluGrad is x > 0 exactly, for every dtype (integers compare exactly too); it has no
// threshold argument.
template <typename T>
__aicore__ inline ThresholdParams ThresholdOf(const ReluGradTilingData&, GM_ADDR) {
  ThresholdParams p{};  // every field 0: mode kCompare, source kTiling
  return p;
}

template <typename T, typename TilingData>
class SelectKernel {
 public:
  __aicore__ inline SelectKernel() {}

  __aicore__ inline void Init(GM_ADDR grad, GM_ADDR feature, GM_ADDR threshold, GM_ADDR out,
                              const TilingData& data) {
    range_ = kernel_common::SplitForCore(data.tiling, GetBlockIdx());
    tileDataNum_ = static_cast<uint32_t>(data.tiling.tile_data_num);
    if (range_.count == 0) {
      return;
    }
    batched_ = IsBatch(data);
    if (batched_) {  // pointers and threshold per slice piece, in ProcessBatch
      batch_ = BatchOf(data);
      gradBase_ = grad;
      featureBase_ = feature;
      thresholdBase_ = threshold;
      outBase_ = out;
      gmDtype_ = GmDtypeOf(data);
    } else {
      gradGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(grad) + range_.offset, range_.count);
      featureGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(feature) + range_.offset,
                                 range_.count);
      outGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(out) + range_.offset, range_.count);
    }

    const uint32_t capacity = ThresholdSelect<T>::Capacity(tileDataNum_);
    pipe_.InitBuffer(gradQue_, BUFFER_NUM, capacity * sizeof(T));
    pipe_.InitBuffer(featureQue_, BUFFER_NUM, capacity * sizeof(T));
    pipe_.InitBuffer(outQue_, BUFFER_NUM, capacity * sizeof(T));
    if (batched_) {
      ThresholdParams first{};  // each slice piece sets its own (ProcessBatch)
      select_.Init(pipe_, capacity, first);
    } else {
      select_.Init(pipe_, capacity, ThresholdOf<T>(data, threshold));
    }
  }

  __aicore__ inline void Process() {
    if (batched_) {
      ProcessBatch();
      return;
    }
    for (uint64_t i = 0; i < range_.tile_num; ++i) {
      const uint32_t count =
          i + 1 == range_.tile_num ? static_cast<uint32_t>(range_.tail_num) : tileDataNum_;
      CopyIn(i, count);
      Compute(count);
      CopyOut(i, count);
    }
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
      int64_t off[4] = {0, 0, 0, 0};
      uint64_t rest = slice;
      for (uint64_t d = batch_.rank; d-- > 0;) {  // inner dims first
        const int64_t idx = static_cast<int64_t>(rest % batch_.sizes[d]);
        rest /= batch_.sizes[d];
        for (int j = 0; j < 4; ++j) off[j] += idx * batch_.strides[d][j];
      }
      gradGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(gradBase_) + off[kBatchGrad] + first, n);
      featureGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(featureBase_) + off[kBatchX] + first,
                                 n);
      outGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(outBase_) + off[kBatchOut] + first, n);
      const GM_ADDR element =
          thresholdBase_ +
          off[kBatchThreshold] * static_cast<int64_t>(ThresholdElementBytes(gmDtype_));
      select_.SetThreshold(ThresholdParamsFromBits(static_cast<int32_t>(KernelDTypeOf<T>::kValue),
                                                   gmDtype_, LoadThresholdBits(element, gmDtype_)));
      for (uint64_t tile = 0; tile * tileDataNum_ < n; ++tile) {
        const uint64_t left = n - tile * tileDataNum_;
        const uint32_t count = static_cast<uint32_t>(left < tileDataNum_ ? left : tileDataNum_);
        CopyIn(tile, count);
        Compute(count);
        CopyOut(tile, count);
      }
      pos += n;
    }
  }

  __aicore__ inline void CopyIn(uint64_t tile, uint32_t count) {
    LocalTensor<T> gradLocal = gradQue_.template AllocTensor<T>();
    LocalTensor<T> featureLocal = featureQue_.template AllocTensor<T>();
    CopyGmToUb(gradLocal, gradGm_[tile * tileDataNum_], count);
    CopyGmToUb(featureLocal, featureGm_[tile * tileDataNum_], count);
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

  __aicore__ inline void CopyOut(uint64_t tile, uint32_t count) {
    LocalTensor<T> outLocal = outQue_.template DeQue<T>();
    const GlobalTensor<T> dst = outGm_[tile * tileDataNum_];
    if (count * sizeof(T) % ONE_BLK_SIZE == 0) {
      DataCopy(dst, outLocal, count);
    } else {
      DataCopyPad(dst, outLocal,
                  DataCopyExtParams(1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0));
    }
    outQue_.FreeTensor(outLocal);
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
  ThresholdSelect<T> select_;
  GlobalTensor<T> gradGm_;
  GlobalTensor<T> featureGm_;
  GlobalTensor<T> outGm_;
  CoreRange range_{0, 0, 0, 0};
  uint32_t tileDataNum_ = 0;
  bool batched_ = false;
  ThresholdBatchTiling batch_{};
  GM_ADDR gradBase_ = nullptr;
  GM_ADDR featureBase_ = nullptr;
  GM_ADDR thresholdBase_ = nullptr;
  GM_ADDR outBase_ = nullptr;
  int32_t gmDtype_ = 0;
};

// Runs one block of the kernel whose tiling data is `TilingData` (`threshold`: ThresholdGradV2D's
// GM threshold, null for ReluGrad).
template <typename T, typename TilingData>
__aicore__ inline void RunSelectKernel(GM_ADDR grad, GM_ADDR feature, GM_ADDR threshold,
                                       GM_ADDR out, const TilingData& tiling) {
  SelectKernel<T, TilingData> op;
  op.Init(grad, feature, threshold, out, tiling);
  op.Process();
}

}  // namespace kernel_common
}  // namespace ascend_kernels

// Kernel entry points, as the host launcher and the NPU build call them: one block of
// SelectKernel<TYPE, ...> (the workspace is unused), on vector cores only. ReluGrad's is
// (grad, feature, out, workspace, tiling); ThresholdGradV2D's has the threshold's GM address
// after feature (read when the tiling says ThresholdSource::kGm, else unused and may be null).
// The tiling struct is passed by value: the launch copies it into the kernel's arguments in
// stream order, so the host keeps no device copy (kernel_args.h).
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
#define ASCEND_KERNELS_RELU_GRAD_ENTRY(NAME, TYPE)                                            \
  extern "C" __global__ __aicore__ void NAME(GM_ADDR grad, GM_ADDR feature, GM_ADDR out,      \
                                             GM_ADDR workspace, ReluGradTilingData tiling) {  \
    (void)workspace;                                                                          \
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);                                           \
    ascend_kernels::kernel_common::RunSelectKernel<TYPE, ascend_kernels::ReluGradTilingData>( \
        grad, feature, nullptr, out, tiling);                                                 \
  }

#define ASCEND_KERNELS_THRESHOLD_GRAD_ENTRY(NAME, TYPE)                                         \
  extern "C" __global__ __aicore__ void NAME(GM_ADDR grad, GM_ADDR feature, GM_ADDR threshold,  \
                                             GM_ADDR out, GM_ADDR workspace,                    \
                                             ThresholdGradV2DTilingData tiling) {               \
    (void)workspace;                                                                            \
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);                                             \
    ascend_kernels::kernel_common::RunSelectKernel<TYPE,                                        \
                                                   ascend_kernels::ThresholdGradV2DTilingData>( \
        grad, feature, threshold, out, tiling);                                                 \
  }

// An entry the target SoC cannot run (soc_features.h): same signature, empty body.
#define ASCEND_KERNELS_ABSENT_RELU_GRAD_ENTRY(NAME)                                          \
  extern "C" __global__ __aicore__ void NAME(GM_ADDR grad, GM_ADDR feature, GM_ADDR out,     \
                                             GM_ADDR workspace, ReluGradTilingData tiling) { \
    (void)grad;                                                                              \
    (void)feature;                                                                           \
    (void)out;                                                                               \
    (void)workspace;                                                                         \
    (void)tiling;                                                                            \
  }

#define ASCEND_KERNELS_ABSENT_THRESHOLD_GRAD_ENTRY(NAME)                                       \
  extern "C" __global__ __aicore__ void NAME(GM_ADDR grad, GM_ADDR feature, GM_ADDR threshold, \
                                             GM_ADDR out, GM_ADDR workspace,                   \
                                             ThresholdGradV2DTilingData tiling) {              \
    (void)grad;                                                                                \
    (void)feature;                                                                             \
    (void)threshold;                                                                           \
    (void)out;                                                                                 \
    (void)workspace;                                                                           \
    (void)tiling;                                                                              \
  }
