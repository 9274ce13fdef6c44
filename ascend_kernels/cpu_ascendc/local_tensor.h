// LocalTensor: a typed view of a buffer in the core's unified buffer (UB).
//
// Carries its buffer's byte range so every vector op / copy can check that it stays inside, and
// the queue slot it came from so TQue can check EnQue/DeQue/FreeTensor order.
#pragma once

#include <cstdint>

#include "ascendc_types.h"
#include "precondition.h"

namespace AscendC {

template <typename T>
class LocalTensor {
 public:
  using PrimType = T;

  LocalTensor() = default;

  // Elements from this view's start to its buffer's end.
  __aicore__ uint32_t GetSize() const { return static_cast<uint32_t>(bytes_left() / sizeof(T)); }
  __aicore__ uint64_t GetPhyAddr() const { return reinterpret_cast<uint64_t>(addr_); }
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

}  // namespace AscendC
