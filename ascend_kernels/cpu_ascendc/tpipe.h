// TPipe, TQue and TBuf: UB allocation and the queues between pipeline stages.
//
// TPipe hands out UB from the core's arena in 32-byte granules and aborts when the kernel asks
// for more than ub_size in total. TQue<pos, depth> owns `num` equal buffers (InitBuffer); the
// checks mirror the hardware's rules: AllocTensor needs a free buffer, EnQue a freshly allocated
// tensor and room under the depth, DeQue a non-empty queue, FreeTensor a dequeued tensor.
// Everything runs on one thread per core, so the queues' synchronisation is trivial here.
#pragma once

#include <cstdint>

#include "ascendc_types.h"
#include "core_state.h"
#include "local_tensor.h"
#include "precondition.h"

namespace AscendC {

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
        LocalTensor<T> t;
        t.addr_ = base_ + static_cast<uint64_t>(i) * len_;
        t.buf_end_ = t.addr_ + len_;
        t.que_ = this;
        t.slot_ = i;
        return t;
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
    LocalTensor<T> t;
    t.addr_ = base_ + static_cast<uint64_t>(slot) * len_;
    t.buf_end_ = t.addr_ + len_;
    t.que_ = this;
    t.slot_ = slot;
    return t;
  }

  template <typename T>
  __aicore__ void FreeTensor(LocalTensor<T>& t) {
    CheckOwned(t, "TQue::FreeTensor");
    CPU_ASCENDC_CHECK(state_[t.slot_] == kDequeued || state_[t.slot_] == kAllocated,
                      "TQue::FreeTensor", "tensor is free or still queued");
    state_[t.slot_] = kFree;
  }

  __aicore__ bool VacantInQue() const { return count_ < depth; }
  __aicore__ bool HasTensorInQue() const { return count_ > 0; }

 private:
  friend class TPipe;
  enum State : uint8_t { kFree, kAllocated, kQueued, kDequeued };

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
  template <typename T>
  __aicore__ LocalTensor<T> Get(uint32_t count) const {
    CPU_ASCENDC_CHECK(static_cast<uint64_t>(count) * sizeof(T) <= len_, "TBuf::Get",
                      "%u elements exceed the %llu-byte buffer", count,
                      static_cast<unsigned long long>(len_));
    LocalTensor<T> t = Get<T>();
    t.buf_end_ = base_ + static_cast<uint64_t>(count) * sizeof(T);
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

  __aicore__ void Destroy() {}
  __aicore__ void Reset() {}

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

// Pipeline synchronisation is implicit on one host thread.
enum class HardEvent : uint8_t { MTE2_V, V_MTE3, MTE3_V, V_MTE2, MTE2_MTE3, MTE3_MTE2, S_V, V_S };
enum pipe_t : uint8_t { PIPE_S, PIPE_V, PIPE_MTE2, PIPE_MTE3, PIPE_ALL };
template <pipe_t pipe>
__aicore__ inline void PipeBarrier() {}
template <HardEvent event>
__aicore__ inline void SetFlag(int32_t) {}
template <HardEvent event>
__aicore__ inline void WaitFlag(int32_t) {}

}  // namespace AscendC
