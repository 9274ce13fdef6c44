// DataCopy / DataCopyPad between GM and UB (the MTE2/MTE3 units), with their preconditions:
// DataCopy moves whole 32-byte blocks (count * sizeof(T) % 32 == 0) between 32-byte aligned UB
// and GM; DataCopyPad moves any byte length, and pads the last UB block on the way in.
#pragma once

#include <cstdint>
#include <cstring>

#include "core_state.h"
#include "kernel_tensor.h"

namespace AscendC {

struct DataCopyExtParams {
  DataCopyExtParams() = default;
  __aicore__ DataCopyExtParams(uint16_t count, uint32_t len, uint32_t src_stride,
                               uint32_t dst_stride, uint32_t rsv_in)
      : blockCount(count),
        blockLen(len),
        srcStride(src_stride),
        dstStride(dst_stride),
        rsv(rsv_in) {}
  uint16_t blockCount = 1;
  uint32_t blockLen = 0;   // bytes per block
  uint32_t srcStride = 0;  // GM side: bytes; UB side: 32-byte blocks
  uint32_t dstStride = 0;  // likewise
  uint32_t rsv = 0;
};

template <typename T>
struct DataCopyPadExtParams {
  DataCopyPadExtParams() = default;
  __aicore__ DataCopyPadExtParams(bool is_pad, uint8_t left, uint8_t right, T value)
      : isPad(is_pad), leftPadding(left), rightPadding(right), paddingValue(value) {}
  bool isPad = false;
  uint8_t leftPadding = 0;   // elements
  uint8_t rightPadding = 0;  // elements
  T paddingValue = T();
};

namespace internal {
// The launch's arch must have DataCopyPad (arch_rules.h).
inline void CheckDataCopyPad(const char* api) {
  const cpu_ascendc::ArchRules& r = cpu_ascendc::CurrentRules();
  CPU_ASCENDC_CHECK(r.has_data_copy_pad, api,
                    "%s rule: no DataCopyPad (an unsupported-API stub there)", r.name);
}

template <typename T>
inline void CheckWholeBlocks(uint64_t count, const char* api) {
  CPU_ASCENDC_CHECK(
      count * sizeof(T) % ONE_BLK_SIZE == 0, api,
      "length %llu elements = %llu bytes is not a multiple of 32 bytes (use DataCopyPad)",
      static_cast<unsigned long long>(count), static_cast<unsigned long long>(count * sizeof(T)));
}
}  // namespace internal

// GM -> UB.
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                                const uint32_t count) {
  constexpr const char* kApi = "DataCopy(GM->UB)";
  internal::CheckWholeBlocks<T>(count, kApi);
  T* ub = dst.Write(count, kApi);
  const T* gm = src.CheckedRange(count, kApi);
  if (count != 0) std::memcpy(ub, gm, count * sizeof(T));
}

// UB -> GM.
template <typename T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                                const uint32_t count) {
  constexpr const char* kApi = "DataCopy(UB->GM)";
  internal::CheckWholeBlocks<T>(count, kApi);
  T* gm = dst.CheckedRange(count, kApi);
  const T* ub = src.Read(count, kApi);
  if (count != 0) std::memcpy(gm, ub, count * sizeof(T));
}

// GM -> UB, any length. Each block lands on a 32-byte boundary in UB (dstStride blocks apart);
// with isPad the rest of its last 32-byte block gets paddingValue.
template <typename T>
__aicore__ inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                                   const DataCopyExtParams& params,
                                   const DataCopyPadExtParams<T>& pad) {
  constexpr const char* kApi = "DataCopyPad(GM->UB)";
  internal::CheckDataCopyPad(kApi);
  CPU_ASCENDC_CHECK(params.blockLen % sizeof(T) == 0, kApi,
                    "blockLen %u is not a whole number of elements", params.blockLen);
  CPU_ASCENDC_CHECK(params.srcStride % sizeof(T) == 0, kApi,
                    "srcStride %u bytes is not element aligned", params.srcStride);
  const uint64_t elems = params.blockLen / sizeof(T);
  const uint64_t ub_block = (static_cast<uint64_t>(pad.leftPadding) * sizeof(T) + params.blockLen +
                             pad.rightPadding * sizeof(T) + ONE_BLK_SIZE - 1) /
                            ONE_BLK_SIZE * ONE_BLK_SIZE;
  CPU_ASCENDC_CHECK(
      pad.leftPadding * sizeof(T) <= ONE_BLK_SIZE && pad.rightPadding * sizeof(T) <= ONE_BLK_SIZE,
      kApi, "padding wider than one 32-byte block");
  const uint64_t ub_pitch = ub_block + static_cast<uint64_t>(params.dstStride) * ONE_BLK_SIZE;
  const uint64_t gm_pitch = elems + params.srcStride / sizeof(T);
  const uint64_t n = params.blockCount;
  if (n == 0) return;
  const T* g = src.CheckedRange((n - 1) * gm_pitch + elems, kApi);
  // Read-write: without isPad the rest of each UB block keeps what it held.
  uint8_t* u =
      reinterpret_cast<uint8_t*>(dst.ReadWrite(((n - 1) * ub_pitch + ub_block) / sizeof(T), kApi));
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
__aicore__ inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                                   const DataCopyExtParams& params) {
  constexpr const char* kApi = "DataCopyPad(UB->GM)";
  internal::CheckDataCopyPad(kApi);
  CPU_ASCENDC_CHECK(params.blockLen % sizeof(T) == 0, kApi,
                    "blockLen %u is not a whole number of elements", params.blockLen);
  CPU_ASCENDC_CHECK(params.dstStride % sizeof(T) == 0, kApi,
                    "dstStride %u bytes is not element aligned", params.dstStride);
  const uint64_t elems = params.blockLen / sizeof(T);
  const uint64_t ub_block =
      (static_cast<uint64_t>(params.blockLen) + ONE_BLK_SIZE - 1) / ONE_BLK_SIZE * ONE_BLK_SIZE;
  const uint64_t ub_pitch = ub_block + static_cast<uint64_t>(params.srcStride) * ONE_BLK_SIZE;
  const uint64_t gm_pitch = elems + params.dstStride / sizeof(T);
  const uint64_t n = params.blockCount;
  if (n == 0) return;
  T* g = dst.CheckedRange((n - 1) * gm_pitch + elems, kApi);
  const uint64_t ub_elems = ((n - 1) * ub_pitch + params.blockLen) / sizeof(T);
  const uint8_t* u = reinterpret_cast<const uint8_t*>(src.Read(ub_elems, kApi));
  for (uint64_t b = 0; b < n; ++b) std::memcpy(g + b * gm_pitch, u + b * ub_pitch, params.blockLen);
}

}  // namespace AscendC
