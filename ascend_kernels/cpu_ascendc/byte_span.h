// Byte ranges for the deferred-operation lists (deferred_copy.h, deferred_vector_op.h).
#pragma once

#include <cstdint>

namespace cpu_ascendc {

inline bool RangesOverlap(const void* a, uint64_t a_bytes, const void* b, uint64_t b_bytes) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return a_bytes != 0 && b_bytes != 0 && x < y + b_bytes && y < x + a_bytes;
}

// The smallest byte range holding every range added: a superset, so a range outside it overlaps
// none of them, which most accesses learn without looking at each.
struct ByteSpan {
  uintptr_t begin = UINTPTR_MAX;
  uintptr_t end = 0;
  void Add(const void* p, uint64_t bytes) {
    const auto b = reinterpret_cast<uintptr_t>(p);
    begin = b < begin ? b : begin;
    end = b + bytes > end ? b + bytes : end;
  }
  bool Overlaps(const void* p, uint64_t bytes) const {
    const auto b = reinterpret_cast<uintptr_t>(p);
    return bytes != 0 && b < end && begin < b + bytes;
  }
};

}  // namespace cpu_ascendc
