// DataCopy / DataCopyPad between GM and UB (the MTE2/MTE3 units), with their preconditions:
// DataCopy moves whole 32-byte blocks (count * sizeof(T) % 32 == 0) between 32-byte aligned UB
// and GM; DataCopyPad moves any byte length, and pads the last UB block on the way in.
#pragma once

#include <cstdint>
#include <cstring>

#include "ascendc_types.h"
#include "core_state.h"
#include "global_tensor.h"
#include "local_tensor.h"
#include "precondition.h"
#include "soc_rules.h"
#include "vector_loops.h"

namespace AscendC {

struct DataCopyExtParams {
  DataCopyExtParams() = default;
  DataCopyExtParams(uint16_t count, uint32_t len, uint32_t src_stride, uint32_t dst_stride, uint32_t rsv_in)
      : blockCount(count), blockLen(len), srcStride(src_stride), dstStride(dst_stride), rsv(rsv_in) {}
  uint16_t blockCount = 1;
  uint32_t blockLen = 0;   // bytes per block
  uint32_t srcStride = 0;  // GM side: bytes; UB side: 32-byte blocks
  uint32_t dstStride = 0;  // likewise
  uint32_t rsv = 0;
};

template <typename T>
struct DataCopyPadExtParams {
  DataCopyPadExtParams() = default;
  DataCopyPadExtParams(bool is_pad, uint8_t left, uint8_t right, T value)
      : isPad(is_pad), leftPadding(left), rightPadding(right), paddingValue(value) {}
  bool isPad = false;
  uint8_t leftPadding = 0;   // elements
  uint8_t rightPadding = 0;  // elements
  T paddingValue = T();
};

namespace internal {
template <typename T>
inline void CheckWholeBlocks(uint64_t count, const char* api) {
  CPU_ASCENDC_CHECK(count * sizeof(T) % ONE_BLK_SIZE == 0, api,
                    "length %llu elements = %llu bytes is not a multiple of 32 bytes (use DataCopyPad)",
                    static_cast<unsigned long long>(count), static_cast<unsigned long long>(count * sizeof(T)));
}
// GM [gm, gm + bytes) is about to be written: the deferred GM -> UB copies and vector ops that
// read it are made first (UB keeps the old values).
inline void SettleGmWrite(void* gm, uint64_t bytes) {
  cpu_ascendc::PendingUbWork& work = cpu_ascendc::ThreadPendingUbWork();
  work.copies.SettleGm(gm, bytes);
  work.ops.SettleGm(gm, bytes);
}
// The UB bytes to GM, settled already: streaming (non-temporal) stores when `stream`.
inline void WriteGm(void* gm, const void* ub, uint64_t bytes, bool stream) {
  if (stream) {
    cpu_ascendc::loops::StreamCopyBytes(gm, ub, bytes);
  } else {
    cpu_ascendc::loops::CopyBytes(gm, ub, bytes);
  }
}
// UB -> GM bytes: streaming stores when the launcher asked for them.
inline void CopyToGm(void* gm, const void* ub, uint64_t bytes) {
  SettleGmWrite(gm, bytes);
  WriteGm(gm, ub, bytes, cpu_ascendc::CurrentCore().stream_gm_stores);
}
// `bytes` of the UB view src (`count` elements of it checked) to GM: a deferred select that
// produced them runs straight into GM (deferred_vector_op.h); otherwise the UB bytes are copied.
template <typename T>
inline void CopyUbToGm(void* gm, const LocalTensor<T>& src, uint64_t count, uint64_t bytes, const char* api) {
  SettleGmWrite(gm, bytes);
  const bool stream = cpu_ascendc::CurrentCore().stream_gm_stores;
  cpu_ascendc::DeferredVectorOps& ops = cpu_ascendc::ThreadDeferredVectorOps();
  if (ops.Pending() != 0 && ops.CopyOut(gm, src.CheckedAlignedData(count, api), bytes, stream)) return;
  WriteGm(gm, src.AlignedData(count, api), bytes, stream);
}
}  // namespace internal

// GM -> UB. Deferred (deferred_copy.h): made when UB is next touched, or read from GM by the
// vector primitive that only reads it. A float32 tile then streams once through the compare and
// the select (20% faster at 2^20 elements); from DRAM every dtype gains (bfloat16, int8 ~20% at
// 2^24), at L3 sizes bfloat16's chunked widening reads GM ~7% slower (benchmarks/README.md).
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count) {
  constexpr const char* kApi = "DataCopy(GM->UB)";
  internal::CheckWholeBlocks<T>(count, kApi);
  uint8_t* ub = reinterpret_cast<uint8_t*>(dst.CheckedAlignedData(count, kApi));
  cpu_ascendc::ThreadDeferredVectorOps().Overwrite(ub, count * sizeof(T));
  cpu_ascendc::ThreadDeferredCopies().Defer(ub, reinterpret_cast<const uint8_t*>(src.CheckedRange(count, kApi)),
                                            count * sizeof(T));
}

// UB -> GM.
template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
  constexpr const char* kApi = "DataCopy(UB->GM)";
  internal::CheckWholeBlocks<T>(count, kApi);
  internal::CopyUbToGm(dst.CheckedRange(count, kApi), src, count, count * sizeof(T), kApi);
}

// UB -> UB.
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
  constexpr const char* kApi = "DataCopy(UB->UB)";
  internal::CheckWholeBlocks<T>(count, kApi);
  std::memmove(dst.AlignedData(count, kApi), src.AlignedData(count, kApi), count * sizeof(T));
}

// GM -> UB, any length. Each block lands on a 32-byte boundary in UB (dstStride blocks apart);
// with isPad the rest of its last 32-byte block gets paddingValue.
template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& params,
                        const DataCopyPadExtParams<T>& pad) {
  constexpr const char* kApi = "DataCopyPad(GM->UB)";
  cpu_ascendc::CheckDataCopyPadRule(kApi);
  CPU_ASCENDC_CHECK(params.blockLen % sizeof(T) == 0, kApi, "blockLen %u is not a whole number of elements",
                    params.blockLen);
  CPU_ASCENDC_CHECK(params.srcStride % sizeof(T) == 0, kApi, "srcStride %u bytes is not element aligned",
                    params.srcStride);
  const uint64_t elems = params.blockLen / sizeof(T);
  const uint64_t ub_block = (static_cast<uint64_t>(pad.leftPadding) * sizeof(T) + params.blockLen +
                             pad.rightPadding * sizeof(T) + ONE_BLK_SIZE - 1) / ONE_BLK_SIZE * ONE_BLK_SIZE;
  CPU_ASCENDC_CHECK(pad.leftPadding * sizeof(T) <= ONE_BLK_SIZE && pad.rightPadding * sizeof(T) <= ONE_BLK_SIZE,
                    kApi, "padding wider than one 32-byte block");
  const uint64_t ub_pitch = ub_block + static_cast<uint64_t>(params.dstStride) * ONE_BLK_SIZE;
  const uint64_t gm_pitch = elems + params.srcStride / sizeof(T);
  const uint64_t n = params.blockCount;
  if (n == 0) return;
  const T* g = src.CheckedRange((n - 1) * gm_pitch + elems, kApi);
  uint8_t* u = reinterpret_cast<uint8_t*>(dst.AlignedData(((n - 1) * ub_pitch + ub_block) / sizeof(T), kApi));
  for (uint64_t b = 0; b < n; ++b) {
    T* row = reinterpret_cast<T*>(u + b * ub_pitch);
    std::memcpy(row + pad.leftPadding, g + b * gm_pitch, params.blockLen);
    if (pad.isPad) {
      for (uint64_t i = 0; i < pad.leftPadding; ++i) row[i] = pad.paddingValue;
      const uint64_t total = ub_block / sizeof(T);
      for (uint64_t i = pad.leftPadding + elems; i < total; ++i) row[i] = pad.paddingValue;
    }
  }
}

// UB -> GM, any length: writes exactly blockLen bytes per block, nothing past them.
template <typename T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& params) {
  constexpr const char* kApi = "DataCopyPad(UB->GM)";
  cpu_ascendc::CheckDataCopyPadRule(kApi);
  CPU_ASCENDC_CHECK(params.blockLen % sizeof(T) == 0, kApi, "blockLen %u is not a whole number of elements",
                    params.blockLen);
  CPU_ASCENDC_CHECK(params.dstStride % sizeof(T) == 0, kApi, "dstStride %u bytes is not element aligned",
                    params.dstStride);
  const uint64_t elems = params.blockLen / sizeof(T);
  const uint64_t ub_block = (static_cast<uint64_t>(params.blockLen) + ONE_BLK_SIZE - 1) / ONE_BLK_SIZE * ONE_BLK_SIZE;
  const uint64_t ub_pitch = ub_block + static_cast<uint64_t>(params.srcStride) * ONE_BLK_SIZE;
  const uint64_t gm_pitch = elems + params.dstStride / sizeof(T);
  const uint64_t n = params.blockCount;
  if (n == 0) return;
  T* g = dst.CheckedRange((n - 1) * gm_pitch + elems, kApi);
  const uint64_t ub_elems = ((n - 1) * ub_pitch + params.blockLen) / sizeof(T);
  if (n == 1) {
    internal::CopyUbToGm(g, src, ub_elems, params.blockLen, kApi);
    return;
  }
  const uint8_t* u = reinterpret_cast<const uint8_t*>(src.AlignedData(ub_elems, kApi));
  for (uint64_t b = 0; b < n; ++b) internal::CopyToGm(g + b * gm_pitch, u + b * ub_pitch, params.blockLen);
}

}  // namespace AscendC
