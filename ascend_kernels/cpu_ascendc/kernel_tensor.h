// AscendC's tensors and the pipe that hands out UB, checked on the CPU.
//
// GlobalTensor: a typed view of global memory (GM). SetGlobalBuffer(ptr, size) fixes the range
// the tensor and its sub-tensors may touch; when the launcher registered the real GM tensors, the
// range itself must lie inside one of them.
// LocalTensor: a typed view of a buffer in the core's UB. It carries its buffer's byte range, so
// every vector op and copy can check that it stays inside, and the queue slot it came from.
// TPipe hands out UB from the core's arena in 32-byte granules and aborts when a kernel asks for
// more than the usable UB. TQue<pos, depth> owns `num` equal buffers (InitBuffer), with the
// hardware's order: AllocTensor needs a free buffer, EnQue a freshly allocated tensor and room
// under the depth, DeQue a non-empty queue, FreeTensor a dequeued tensor. One thread runs a core,
// so the queues need no synchronisation.
#pragma once

#include <cstdint>

#include "ascendc_types.h"
#include "core_state.h"

namespace AscendC {

template <typename T>
class GlobalTensor {
 public:
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
enum class DcciDst : uint64_t { CACHELINE_ALL = 0, CACHELINE_UB = 1, CACHELINE_OUT = 2 };

template <typename T, CacheLine kLine, DcciDst kDst>
__aicore__ void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst) {
  CPU_ASCENDC_CHECK(kLine == CacheLine::ENTIRE_DATA_CACHE || dst.GetPhyAddr() != nullptr,
                    "DataCacheCleanAndInvalid", "GlobalTensor has no buffer");
}

template <typename T>
class LocalTensor {
 public:
  LocalTensor() = default;

  // Scalar access: element i must lie inside the buffer (no alignment rule).
  __aicore__ T GetValue(uint32_t i) const { return Elements(i + 1, "LocalTensor::GetValue")[i]; }
  __aicore__ void SetValue(uint32_t i, T v) { Elements(i + 1, "LocalTensor::SetValue")[i] = v; }

  __aicore__ LocalTensor operator[](uint32_t offset) const {
    CPU_ASCENDC_CHECK(static_cast<uint64_t>(offset) * sizeof(T) <= bytes_left(),
                      "LocalTensor::operator[]", "offset %u elements past the end of the UB buffer",
                      offset);
    LocalTensor sub = *this;
    sub.addr_ = addr_ + static_cast<uint64_t>(offset) * sizeof(T);
    return sub;
  }

  template <typename U>
  __aicore__ LocalTensor<U> ReinterpretCast() const {
    LocalTensor<U> t;
    t.addr_ = addr_;
    t.buf_end_ = buf_end_;
    t.que_ = que_;
    t.slot_ = slot_;
    return t;
  }

  // A primitive's access to `count` elements of this UB operand, one per role: read, written,
  // or both. Each checks that the operand starts 32-byte aligned (every UB operand of the vector
  // and copy units must) and lies inside its buffer.
  const T* Read(uint64_t count, const char* api) const { return Operand(count, api); }
  T* Write(uint64_t count, const char* api) const { return Operand(count, api); }
  T* ReadWrite(uint64_t count, const char* api) const { return Operand(count, api); }

  // Queue bookkeeping (TQue only).
  void* que_ = nullptr;
  int32_t slot_ = -1;
  uint8_t* addr_ = nullptr;
  uint8_t* buf_end_ = nullptr;

 private:
  uint64_t bytes_left() const { return static_cast<uint64_t>(buf_end_ - addr_); }
  T* Operand(uint64_t count, const char* api) const {
    CPU_ASCENDC_CHECK(cpu_ascendc::IsAligned(addr_, ONE_BLK_SIZE), api,
                      "UB address %p is not 32-byte aligned", static_cast<void*>(addr_));
    return Elements(count, api);
  }
  T* Elements(uint64_t count, const char* api) const {
    CPU_ASCENDC_CHECK(addr_ != nullptr, api, "LocalTensor has no UB buffer");
    CPU_ASCENDC_CHECK(count * sizeof(T) <= bytes_left(), api,
                      "%llu elements (%llu bytes) overrun the UB buffer (%llu bytes left)",
                      static_cast<unsigned long long>(count),
                      static_cast<unsigned long long>(count * sizeof(T)),
                      static_cast<unsigned long long>(bytes_left()));
    return reinterpret_cast<T*>(addr_);
  }
};

class TPipe;

namespace internal {
constexpr int32_t kMaxQueBuffers = 8;
inline uint64_t RoundUp32(uint64_t n) {
  return (n + ONE_BLK_SIZE - 1) / ONE_BLK_SIZE * ONE_BLK_SIZE;
}
}  // namespace internal

template <TPosition pos, int32_t depth>
class TQue {
 public:
  static_assert(depth >= 1 && depth <= internal::kMaxQueBuffers, "TQue depth out of range");

  template <typename T>
  __aicore__ LocalTensor<T> AllocTensor() {
    CPU_ASCENDC_CHECK(num_ > 0, "TQue::AllocTensor",
                      "queue has no buffers (TPipe::InitBuffer not called)");
    for (int32_t i = 0; i < num_; ++i) {
      if (state_[i] == kFree) {
        state_[i] = kAllocated;
        return Buffer<T>(i);
      }
    }
    cpu_ascendc::PreconditionFailed("TQue::AllocTensor",
                                    "all %d buffers are in use (missing FreeTensor?)", num_);
  }

  template <typename T>
  __aicore__ bool EnQue(const LocalTensor<T>& t) {
    CheckOwned(t, "TQue::EnQue");
    CPU_ASCENDC_CHECK(state_[t.slot_] == kAllocated, "TQue::EnQue",
                      "tensor was not freshly allocated");
    CPU_ASCENDC_CHECK(count_ < depth, "TQue::EnQue", "queue already holds depth=%d tensors", depth);
    fifo_[(head_ + count_) % internal::kMaxQueBuffers] = t.slot_;
    ++count_;
    state_[t.slot_] = kQueued;
    return true;
  }

  template <typename T>
  __aicore__ LocalTensor<T> DeQue() {
    CPU_ASCENDC_CHECK(count_ > 0, "TQue::DeQue", "queue is empty");
    const int32_t slot = fifo_[head_];
    head_ = (head_ + 1) % internal::kMaxQueBuffers;
    --count_;
    state_[slot] = kDequeued;
    return Buffer<T>(slot);
  }

  template <typename T>
  __aicore__ void FreeTensor(LocalTensor<T>& t) {
    CheckOwned(t, "TQue::FreeTensor");
    CPU_ASCENDC_CHECK(state_[t.slot_] == kDequeued || state_[t.slot_] == kAllocated,
                      "TQue::FreeTensor", "tensor is free or still queued");
    state_[t.slot_] = kFree;
  }

 private:
  friend class TPipe;
  enum State : uint8_t { kFree, kAllocated, kQueued, kDequeued };

  template <typename T>
  LocalTensor<T> Buffer(int32_t slot) {
    LocalTensor<T> t;
    t.addr_ = base_ + static_cast<uint64_t>(slot) * len_;
    t.buf_end_ = t.addr_ + len_;
    t.que_ = this;
    t.slot_ = slot;
    return t;
  }

  template <typename T>
  void CheckOwned(const LocalTensor<T>& t, const char* api) const {
    CPU_ASCENDC_CHECK(t.que_ == this && t.slot_ >= 0 && t.slot_ < num_, api,
                      "tensor does not belong to this queue");
  }

  uint8_t* base_ = nullptr;
  uint64_t len_ = 0;
  int32_t num_ = 0;
  State state_[internal::kMaxQueBuffers] = {};
  int32_t fifo_[internal::kMaxQueBuffers] = {};
  int32_t head_ = 0;
  int32_t count_ = 0;
};

template <TPosition pos>
class TBuf {
 public:
  template <typename T>
  __aicore__ LocalTensor<T> Get() const {
    CPU_ASCENDC_CHECK(base_ != nullptr, "TBuf::Get", "TPipe::InitBuffer not called");
    LocalTensor<T> t;
    t.addr_ = base_;
    t.buf_end_ = base_ + len_;
    return t;
  }

 private:
  friend class TPipe;
  uint8_t* base_ = nullptr;
  uint64_t len_ = 0;
};

// One per kernel invocation, as on the NPU; owns the core's UB while it lives.
class TPipe {
 public:
  __aicore__ TPipe() {
    auto& core = cpu_ascendc::CurrentCore();
    CPU_ASCENDC_CHECK(!core.pipe_live, "TPipe", "a TPipe already exists on this core");
    core.pipe_live = true;
    core.ub_used = 0;
  }
  __aicore__ ~TPipe() {
    auto& core = cpu_ascendc::CurrentCore();
    core.pipe_live = false;
    core.ub_used = 0;
  }
  TPipe(const TPipe&) = delete;
  TPipe& operator=(const TPipe&) = delete;

  template <TPosition pos, int32_t depth>
  __aicore__ bool InitBuffer(TQue<pos, depth>& que, uint8_t num, uint32_t len) {
    CPU_ASCENDC_CHECK(num >= 1 && num <= internal::kMaxQueBuffers, "TPipe::InitBuffer",
                      "queue buffer count %u out of [1, %d]", num, internal::kMaxQueBuffers);
    CPU_ASCENDC_CHECK(que.base_ == nullptr, "TPipe::InitBuffer", "queue initialised twice");
    const uint64_t granule = internal::RoundUp32(len);
    que.base_ = Carve(granule * num);
    que.len_ = granule;
    que.num_ = num;
    return true;
  }

  template <TPosition pos>
  __aicore__ bool InitBuffer(TBuf<pos>& buf, uint32_t len) {
    CPU_ASCENDC_CHECK(buf.base_ == nullptr, "TPipe::InitBuffer", "TBuf initialised twice");
    const uint64_t granule = internal::RoundUp32(len);
    buf.base_ = Carve(granule);
    buf.len_ = granule;
    return true;
  }

 private:
  static uint8_t* Carve(uint64_t bytes) {
    auto& core = cpu_ascendc::CurrentCore();
    CPU_ASCENDC_CHECK(
        bytes <= core.ub_size - core.ub_used, "TPipe::InitBuffer",
        "UB overflow: %llu more bytes requested, %llu of the %llu usable on %s already used",
        static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(core.ub_used),
        static_cast<unsigned long long>(core.ub_size), core.rules->name);
    uint8_t* p = core.ub + core.ub_used;
    core.ub_used += bytes;
    return p;
  }
};

}  // namespace AscendC
