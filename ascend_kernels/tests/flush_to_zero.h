// Flush-to-zero on the calling thread, set the way XLA's CPU threads set it: on x86-64 MXCSR's
// FTZ (bit 15) and DAZ (bit 6); on AArch64 FPCR.FZ (bit 24), which flushes subnormal inputs and
// results of single and double precision. For the tests that check that kernel blocks and the
// executor see subnormals as numbers on such a thread.
#pragma once

#include <cstdint>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace flush_to_zero {

#if defined(__x86_64__)
constexpr bool kAvailable = true;
constexpr uint64_t kFlushBits = (1u << 15) | (1u << 6);
constexpr uint64_t kStatusBits = 0x3f;  // MXCSR's sticky exception flags
inline uint64_t Mode() { return _mm_getcsr(); }
inline void SetMode(uint64_t mode) { _mm_setcsr(static_cast<unsigned>(mode)); }
#elif defined(__aarch64__)
constexpr bool kAvailable = true;
constexpr uint64_t kFlushBits = uint64_t{1} << 24;
constexpr uint64_t kStatusBits = 0;  // FPCR holds controls only (the flags are in FPSR)
inline uint64_t Mode() {
  uint64_t fpcr;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  return fpcr;
}
inline void SetMode(uint64_t mode) { __asm__ __volatile__("msr fpcr, %0" : : "r"(mode)); }
#else
constexpr bool kAvailable = false;
constexpr uint64_t kFlushBits = 0;
constexpr uint64_t kStatusBits = 0;
inline uint64_t Mode() { return 0; }
inline void SetMode(uint64_t) {}
#endif

// The mode's control bits: what a guard must put back (a subnormal compare may raise a flag).
inline uint64_t Controls() { return Mode() & ~kStatusBits; }

// The thread flushes for this object's lifetime, then gets its mode back.
class ScopedFlushing {
 public:
  ScopedFlushing() : saved_(Mode()) { SetMode(saved_ | kFlushBits); }
  ~ScopedFlushing() { SetMode(saved_); }
  ScopedFlushing(const ScopedFlushing&) = delete;
  ScopedFlushing& operator=(const ScopedFlushing&) = delete;
  uint64_t flushing_controls() const { return (saved_ | kFlushBits) & ~kStatusBits; }

 private:
  uint64_t saved_;
};

// Whether the FPU compares a subnormal float as zero right now (through volatiles, so the
// compiler cannot fold the compare): what makes a flushing-thread test able to fail.
inline bool SubnormalComparesAsZero() {
  volatile float tiny = 1e-40f, zero = 0.0f;
  return !(tiny > zero);
}

}  // namespace flush_to_zero
