// GlobalTensor: a typed view of global memory (GM), bounds-checked on the CPU.
//
// SetGlobalBuffer(ptr, size) fixes the range the tensor (and every sub-tensor made with
// operator[]) may touch; data copies outside it abort. When the launcher registered the real
// GM tensors, the range itself must lie inside one of them, which catches a kernel that sizes its
// GM view past the end of a tensor.
#pragma once

#include <cstdint>

#include "ascendc_types.h"
#include "core_state.h"
#include "precondition.h"

namespace AscendC {

template <typename T>
class GlobalTensor {
 public:
  using PrimType = T;

  __aicore__ void SetGlobalBuffer(__gm__ T* buffer, uint64_t buffer_size) {
    CPU_ASCENDC_CHECK(cpu_ascendc::IsAligned(buffer, alignof(T)), "GlobalTensor::SetGlobalBuffer",
                      "address %p is not aligned to its %zu-byte element",
                      static_cast<void*>(buffer), alignof(T));
    const auto& regions = cpu_ascendc::CurrentCore().gm_regions;
    if (!regions.empty() && buffer_size > 0) {
      const uint8_t* b = reinterpret_cast<const uint8_t*>(buffer);
      const uint64_t bytes = buffer_size * sizeof(T);
      bool inside = false;
      for (const auto& r : regions) {
        if (b >= r.begin && b <= r.begin + r.bytes &&
            bytes <= static_cast<uint64_t>(r.begin + r.bytes - b)) {
          inside = true;
          break;
        }
      }
      CPU_ASCENDC_CHECK(inside, "GlobalTensor::SetGlobalBuffer",
                        "[%p, +%llu bytes) is not inside any GM tensor of this launch",
                        static_cast<void*>(buffer), static_cast<unsigned long long>(bytes));
    }
    begin_ = buffer;
    end_ = buffer + buffer_size;
    ptr_ = buffer;
  }

  __aicore__ GlobalTensor operator[](uint64_t offset) const {
    CPU_ASCENDC_CHECK(offset <= static_cast<uint64_t>(end_ - ptr_), "GlobalTensor::operator[]",
                      "offset %llu past the end of the buffer (%lld elements left)",
                      static_cast<unsigned long long>(offset), static_cast<long long>(end_ - ptr_));
    GlobalTensor sub = *this;
    sub.ptr_ = ptr_ + offset;
    return sub;
  }

  __aicore__ __gm__ T* GetPhyAddr() const { return ptr_; }

  // A scalar read of element `offset` (the scalar unit's GM load).
  __aicore__ T GetValue(uint64_t offset) const {
    CPU_ASCENDC_CHECK(ptr_ != nullptr, "GlobalTensor::GetValue", "GlobalTensor has no buffer");
    CPU_ASCENDC_CHECK(offset < static_cast<uint64_t>(end_ - ptr_), "GlobalTensor::GetValue",
                      "offset %llu past the end of the buffer (%lld elements left)",
                      static_cast<unsigned long long>(offset), static_cast<long long>(end_ - ptr_));
    return ptr_[offset];
  }
  __aicore__ uint64_t GetSize() const { return static_cast<uint64_t>(end_ - ptr_); }

  // Aborts unless [ptr, ptr + count) lies inside the buffer given to SetGlobalBuffer.
  T* CheckedRange(uint64_t count, const char* api) const {
    CPU_ASCENDC_CHECK(ptr_ != nullptr || count == 0, api, "GlobalTensor has no buffer");
    CPU_ASCENDC_CHECK(
        count <= static_cast<uint64_t>(end_ - ptr_), api,
        "GM access of %llu elements at offset %lld overruns the buffer of %lld elements",
        static_cast<unsigned long long>(count), static_cast<long long>(ptr_ - begin_),
        static_cast<long long>(end_ - begin_));
    return ptr_;
  }

 private:
  T* begin_ = nullptr;
  T* end_ = nullptr;
  T* ptr_ = nullptr;
};

// The scalar unit's data cache (CacheLine / DcciDst as in AscendC): on the NPU, scalar GM reads
// go through a per-core data cache that DMA writes (another kernel's output) do not update, so a
// kernel reading a value written outside it cleans and invalidates that line first. The host's
// caches are coherent: nothing to do but check that the tensor has a buffer.
enum class CacheLine : uint64_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE = 1 };
enum class DcciDst : uint64_t {
  CACHELINE_ALL = 0,
  CACHELINE_UB = 1,
  CACHELINE_OUT = 2,
  CACHELINE_ATOMIC = 3
};

template <typename T, CacheLine kLine, DcciDst kDst>
__aicore__ void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst) {
  CPU_ASCENDC_CHECK(kLine == CacheLine::ENTIRE_DATA_CACHE || dst.GetPhyAddr() != nullptr,
                    "DataCacheCleanAndInvalid", "GlobalTensor has no buffer");
}

}  // namespace AscendC
