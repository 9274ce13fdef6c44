// LocalTensor: a typed view of a buffer in the core's unified buffer (UB).
//
// Carries its buffer's byte range so every vector op / copy can check that it stays inside, and
// the queue slot it came from so TQue can check EnQue/DeQue/FreeTensor order.
#pragma once

#include <cstdint>

#include "ascendc_types.h"
#include "pending_ub_work.h"
#include "precondition.h"

namespace AscendC {

template <typename T>
class LocalTensor {
 public:
  using PrimType = T;

  LocalTensor() = default;

  // Elements from this view's start to its buffer's end.
  uint32_t GetSize() const { return static_cast<uint32_t>(bytes_left() / sizeof(T)); }
  uint64_t GetPhyAddr() const { return reinterpret_cast<uint64_t>(addr_); }
  T GetValue(uint32_t i) const { return Data(i + 1, "LocalTensor::GetValue")[i]; }
  void SetValue(uint32_t i, T v) { Data(i + 1, "LocalTensor::SetValue")[i] = v; }

  LocalTensor operator[](uint32_t offset) const {
    CPU_ASCENDC_CHECK(static_cast<uint64_t>(offset) * sizeof(T) <= bytes_left(), "LocalTensor::operator[]",
                      "offset %u elements past the end of the UB buffer", offset);
    LocalTensor sub = *this;
    sub.addr_ = addr_ + static_cast<uint64_t>(offset) * sizeof(T);
    return sub;
  }

  template <typename U>
  LocalTensor<U> ReinterpretCast() const {
    LocalTensor<U> t;
    t.addr_ = addr_;
    t.buf_end_ = buf_end_;
    t.que_ = que_;
    t.slot_ = slot_;
    return t;
  }

  // For the CPU primitives: pointer to `count` elements, checked to lie inside the buffer and
  // to start 32-byte aligned (every UB operand of the vector and copy units must). The UB bytes
  // hold their current values: deferred GM -> UB copies and vector ops into them are made
  // first (deferred_copy.h, deferred_vector_op.h).
  T* Data(uint64_t count, const char* api) const { return Settled(CheckedData(count, api), count); }
  T* AlignedData(uint64_t count, const char* api) const { return Settled(CheckedAlignedData(count, api), count); }
  // The same checks, for an operand that is only read: where its `count` elements can be read
  // now (its UB bytes, or the GM source of a deferred copy still pending for all of them).
  const T* ReadableData(uint64_t count, const char* api) const {
    const T* p = CheckedAlignedData(count, api);
    cpu_ascendc::PendingUbWork& work = cpu_ascendc::ThreadPendingUbWork();
    work.ops.SettleUb(p, count * sizeof(T));
    return static_cast<const T*>(work.copies.Readable(p, count * sizeof(T)));
  }
  // The same checks, for a destination written whole and not read: deferred vector ops it covers
  // are dropped instead of made.
  T* OverwrittenData(uint64_t count, const char* api) const {
    T* p = CheckedAlignedData(count, api);
    cpu_ascendc::PendingUbWork& work = cpu_ascendc::ThreadPendingUbWork();
    work.copies.SettleUb(p, count * sizeof(T));
    work.ops.Overwrite(p, count * sizeof(T));
    return p;
  }
  // The checks alone: the UB address, whose bytes may still await a deferred copy (for overlap
  // checks and for DataCopy's own destination).
  T* CheckedAlignedData(uint64_t count, const char* api) const {
    CPU_ASCENDC_CHECK(cpu_ascendc::IsAligned(addr_, ONE_BLK_SIZE), api,
                      "UB address %p is not 32-byte aligned", static_cast<void*>(addr_));
    return CheckedData(count, api);
  }

  T* CheckedData(uint64_t count, const char* api) const {
    CPU_ASCENDC_CHECK(addr_ != nullptr, api, "LocalTensor has no UB buffer");
    CPU_ASCENDC_CHECK(count * sizeof(T) <= bytes_left(), api,
                      "%llu elements (%llu bytes) overrun the UB buffer (%llu bytes left)",
                      static_cast<unsigned long long>(count),
                      static_cast<unsigned long long>(count * sizeof(T)),
                      static_cast<unsigned long long>(bytes_left()));
    return reinterpret_cast<T*>(addr_);
  }

  // Queue bookkeeping (TQue only).
  void* que_ = nullptr;
  int32_t slot_ = -1;
  uint8_t* addr_ = nullptr;
  uint8_t* buf_end_ = nullptr;

 private:
  uint64_t bytes_left() const { return static_cast<uint64_t>(buf_end_ - addr_); }
  static T* Settled(T* p, uint64_t count) {
    cpu_ascendc::PendingUbWork& work = cpu_ascendc::ThreadPendingUbWork();
    work.copies.SettleUb(p, count * sizeof(T));
    work.ops.SettleUb(p, count * sizeof(T));
    return p;
  }
};

}  // namespace AscendC
