// The host as a platform: where kernel blocks run (the calling thread and persistent workers),
// the platform it tiles for, and the FPU mode under which its scalar code reads thresholds.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#if defined(__SSE__) || defined(__x86_64__) || defined(_M_X64)
#include <xmmintrin.h>
#define JAX_THRESHOLD_MXCSR 1
#endif

#include "jax_threshold/aclnn_threshold_backward.h"

namespace jax_threshold::aclnn {

// The UB size host launches tile for (docs/behaviour.md §3's formula with this ub_size): 64 KiB
// gives tiles of 9 KiB (float32: 2304 elements), so what a block touches of its UB (input and
// output buffers, mask, the widening scratch) stays in the host core's L1 and L2, where the 910B's
// 192 KiB spills (benchmarks/README.md, "Why the host tiles for a 64 KiB UB").
inline constexpr uint64_t kHostUbSize = 64 * 1024;

// Blocks ("cores") the host platform tiles for per hardware thread: the synchronous runner's
// threads claim blocks dynamically, so a thread that starts late (a busy machine) takes fewer of
// them instead of holding up the call.
inline constexpr uint32_t kHostBlocksPerThread = 4;

// The host platform: kHost dtype list, kHostUbSize, kHostBlocksPerThread "cores" per hardware
// thread.
PlatformInfo HostPlatformInfo();

// Runs block(i) for every i in [0, n) on the calling thread plus up to max_threads - 1 of the
// process's persistent block workers (0: hardware_concurrency; the workers, hardware threads - 1
// of them, are started on first use, poll briefly for the next job and then park), and returns
// when all have finished. Safe to call from many threads at once. An exception from a block is
// caught; the first one's message is returned (empty string: all blocks succeeded).
std::string RunBlocksSynchronously(uint32_t n, const std::function<void(uint32_t)>& block,
                                   uint32_t max_threads = 0);

// Subnormal floats as numbers for its lifetime (docs/behaviour.md §1): clears flush-to-zero and
// denormals-are-zero (x86 MXCSR bits 15 and 6, AArch64 FPCR.FZ), which XLA's CPU threads set,
// so that a subnormal threshold is read, compared with 0 and narrowed exactly; puts the thread's
// mode back after. (Kernel blocks run under the CPU model's own guard.)
class ScopedDenormalsAsNumbers {
 public:
  ScopedDenormalsAsNumbers() {
#if defined(JAX_THRESHOLD_MXCSR)
    saved_ = _mm_getcsr();
    constexpr unsigned kFlush = (1u << 15) | (1u << 6);
    if (saved_ & kFlush) {
      _mm_setcsr(static_cast<unsigned>(saved_) & ~kFlush);
      restore_ = true;
    }
#elif defined(__aarch64__)
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(saved_));
    constexpr uint64_t kFlush = uint64_t{1} << 24;
    if (saved_ & kFlush) {
      __asm__ __volatile__("msr fpcr, %0" : : "r"(saved_ & ~kFlush));
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
