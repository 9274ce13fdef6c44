// 64-byte aligned buffers for the kernel tests and the kernel microbenchmark: a GM buffer is
// aligned as XLA's are.
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
  const T* data() const { return const_cast<Aligned*>(this)->data(); }
  std::vector<T> v;
};

}  // namespace test
