// Subnormal floats as numbers while kernel blocks run (docs/behaviour.md §1: "subnormals are
// numbers"; no path may depend on the thread's flush mode).
//
// XLA's CPU threads (its intra-op pool and the thread that runs the executable) set
// flush-to-zero and denormals-are-zero, so a float comparison there sees 1e-40f as 0. The kernel
// blocks compare with the host FPU, so the executor clears those bits in phase one (which narrows
// thresholds to float32) and around every block of phase two, on whichever thread runs it, and
// puts the thread's mode back afterwards.
#pragma once

#include <cstdint>

#if defined(__SSE__) || defined(__x86_64__) || defined(_M_X64)
#include <xmmintrin.h>
#define JAX_THRESHOLD_MXCSR 1
#endif

namespace jax_threshold::aclnn {

// Clears FTZ/DAZ (x86 MXCSR bits 15 and 6; AArch64 FPCR.FZ, bit 24) for its lifetime.
class ScopedDenormalsAsNumbers {
 public:
  ScopedDenormalsAsNumbers() {
#if defined(JAX_THRESHOLD_MXCSR)
    saved_ = _mm_getcsr();
    constexpr unsigned kFlushToZero = 1u << 15, kDenormalsAreZero = 1u << 6;
    if (saved_ & (kFlushToZero | kDenormalsAreZero)) {
      _mm_setcsr(saved_ & ~(kFlushToZero | kDenormalsAreZero));
      restore_ = true;
    }
#elif defined(__aarch64__)
    uint64_t fpcr;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
    saved_ = fpcr;
    constexpr uint64_t kFlushToZero = uint64_t{1} << 24;
    if (fpcr & kFlushToZero) {
      __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr & ~kFlushToZero));
      restore_ = true;
    }
#endif
  }
  ~ScopedDenormalsAsNumbers() {
    if (!restore_) return;
#if defined(JAX_THRESHOLD_MXCSR)
    _mm_setcsr(static_cast<unsigned>(saved_));
#elif defined(__aarch64__)
    __asm__ __volatile__("msr fpcr, %0" : : "r"(saved_));
#endif
  }
  ScopedDenormalsAsNumbers(const ScopedDenormalsAsNumbers&) = delete;
  ScopedDenormalsAsNumbers& operator=(const ScopedDenormalsAsNumbers&) = delete;

 private:
  uint64_t saved_ = 0;
  bool restore_ = false;
};

}  // namespace jax_threshold::aclnn
