// ThresholdGradV2D (AscendC): out = feature > threshold ? grad : 0 over contiguous tensors.
//
// One block per AI core. Init picks the core's slice (big cores first, clipped to the real
// element count), Process streams it through UB in tiles of tile_data_num: CopyIn (GM -> VECIN,
// double-buffered), Compute (ThresholdSelect, the per-dtype compare + select), CopyOut
// (VECOUT -> GM). Tiles whose byte length is not a whole 32-byte block go through DataCopyPad,
// so no byte outside the tensors is read or written.
#include "kernel_operator.h"

#include "../common/elementwise_core_range.h"
#include "../common/threshold_select.h"
#include "ascend_kernels/kernel_args.h"

namespace ascend_kernels {
namespace {

using namespace AscendC;
using kernel_common::BUFFER_NUM;
using kernel_common::CoreRange;
using kernel_common::ThresholdSelect;

template <typename T>
class KernelThresholdGradV2D {
 public:
  __aicore__ inline KernelThresholdGradV2D() {}

  __aicore__ inline void Init(GM_ADDR grad, GM_ADDR feature, GM_ADDR out, GM_ADDR tiling) {
    ThresholdGradV2DTilingData data;
    kernel_common::LoadTiling(tiling, &data);
    range_ = kernel_common::SplitForCore(data.tiling, GetBlockIdx());
    tileDataNum_ = static_cast<uint32_t>(data.tiling.tile_data_num);
    if (range_.count == 0) {
      return;
    }
    gradGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(grad) + range_.offset, range_.count);
    featureGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(feature) + range_.offset, range_.count);
    outGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(out) + range_.offset, range_.count);

    const uint32_t capacity = ThresholdSelect<T>::Capacity(tileDataNum_);
    pipe_.InitBuffer(gradQue_, BUFFER_NUM, capacity * sizeof(T));
    pipe_.InitBuffer(featureQue_, BUFFER_NUM, capacity * sizeof(T));
    pipe_.InitBuffer(outQue_, BUFFER_NUM, capacity * sizeof(T));
    select_.Init(pipe_, capacity, data.threshold);
  }

  __aicore__ inline void Process() {
    for (uint64_t i = 0; i < range_.tile_num; ++i) {
      const uint32_t count = i + 1 == range_.tile_num ? static_cast<uint32_t>(range_.tail_num) : tileDataNum_;
      CopyIn(i, count);
      Compute(count);
      CopyOut(i, count);
    }
  }

 private:
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
      DataCopyPad(dst, outLocal, DataCopyExtParams(1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0));
    }
    outQue_.FreeTensor(outLocal);
  }

  __aicore__ inline void CopyGmToUb(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t count) {
    if (count * sizeof(T) % ONE_BLK_SIZE == 0) {
      DataCopy(dst, src, count);
    } else {
      DataCopyPad(dst, src, DataCopyExtParams(1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0),
                  DataCopyPadExtParams<T>(false, 0, 0, T()));
    }
  }

  TPipe pipe_;
  TQue<TPosition::VECIN, BUFFER_NUM> gradQue_;
  TQue<TPosition::VECIN, BUFFER_NUM> featureQue_;
  TQue<TPosition::VECOUT, BUFFER_NUM> outQue_;
  ThresholdSelect<T> select_;
  GlobalTensor<T> gradGm_;
  GlobalTensor<T> featureGm_;
  GlobalTensor<T> outGm_;
  CoreRange range_{0, 0, 0, 0};
  uint32_t tileDataNum_ = 0;
};

template <typename T>
__aicore__ inline void RunThresholdGradV2D(GM_ADDR grad, GM_ADDR feature, GM_ADDR out, GM_ADDR tiling) {
  KernelThresholdGradV2D<T> op;
  op.Init(grad, feature, out, tiling);
  op.Process();
}

}  // namespace
}  // namespace ascend_kernels

#define THRESHOLD_GRAD_V2_D_ENTRY(SUFFIX, TYPE)                                                         \
  extern "C" __global__ __aicore__ void threshold_grad_v2_d_##SUFFIX(GM_ADDR grad, GM_ADDR feature,    \
                                                                      GM_ADDR out, GM_ADDR workspace, \
                                                                      GM_ADDR tiling) {               \
    (void)workspace;                                                                                   \
    ascend_kernels::RunThresholdGradV2D<TYPE>(grad, feature, out, tiling);                             \
  }

THRESHOLD_GRAD_V2_D_ENTRY(float32, float)
THRESHOLD_GRAD_V2_D_ENTRY(float16, half)
THRESHOLD_GRAD_V2_D_ENTRY(bfloat16, bfloat16_t)
THRESHOLD_GRAD_V2_D_ENTRY(int32, int32_t)
THRESHOLD_GRAD_V2_D_ENTRY(int8, int8_t)
THRESHOLD_GRAD_V2_D_ENTRY(uint8, uint8_t)
#if defined(ASCEND_KERNELS_CPU_ASCENDC)
THRESHOLD_GRAD_V2_D_ENTRY(int64, int64_t)  // host SoC only
THRESHOLD_GRAD_V2_D_ENTRY(float64, double)  // host SoC only
#endif
