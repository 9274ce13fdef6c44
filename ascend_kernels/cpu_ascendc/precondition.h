// Hardware preconditions of the AscendC primitives, checked on the CPU.
//
// On the NPU a kernel that breaks one (a misaligned copy, a UB overflow, a DeQue from an empty
// queue) corrupts memory or hangs; here it prints what was violated and aborts, so tests catch it.
#pragma once

#include <cstdint>

namespace cpu_ascendc {

[[noreturn]] void PreconditionFailed(const char* api, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));

inline bool IsAligned(const void* p, uint64_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

}  // namespace cpu_ascendc

// Aborts with "cpu_ascendc: <api>: <message>" when `cond` is false.
#define CPU_ASCENDC_CHECK(cond, api, ...)                  \
  do {                                                     \
    if (__builtin_expect(!(cond), 0)) {                    \
      ::cpu_ascendc::PreconditionFailed(api, __VA_ARGS__); \
    }                                                      \
  } while (0)
