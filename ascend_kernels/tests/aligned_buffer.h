// 64-byte aligned scratch for the kernel tests and the microbenchmark: every SIMD load/store
// precondition of the loops holds, and a GM buffer is aligned as XLA's are (so deferred copies
// read it in place, cpu_ascendc/deferred_copy.h).
#pragma once

#include <cstdint>
#include <vector>

namespace test {

template <typename T>
struct Aligned {
  explicit Aligned(uint64_t n) : v((n * sizeof(T) + 63) / 64 * 64 / sizeof(T) + 64 / sizeof(T)) {}
  T* data() {
    auto p = reinterpret_cast<uintptr_t>(v.data());
    return reinterpret_cast<T*>((p + 63) / 64 * 64);
  }
  std::vector<T> v;
};

}  // namespace test
