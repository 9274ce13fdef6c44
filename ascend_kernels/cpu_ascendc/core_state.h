// One emulated AI core: its block index and count, its unified buffer (UB), the arch whose rules
// it runs under, and the preconditions the primitives check.
//
// A launch runs each block on some host thread; CoreScope makes that thread core i for the
// duration of the kernel call (thread-local, so blocks may run concurrently on many threads). The
// UB is a 32-byte aligned arena that TPipe carves buffers from; the GM regions the launcher
// registers bound what GlobalTensor::SetGlobalBuffer may cover. On the NPU a kernel that breaks a
// precondition (a misaligned copy, a UB overflow, a DeQue from an empty queue) corrupts memory or
// hangs; here it prints what was violated and aborts, so tests catch it.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <vector>

#include "arch_rules.h"
#include "ascendc_types.h"

namespace cpu_ascendc {

// Reports on fd 2, unbuffered, then aborts.
[[noreturn]] inline __attribute__((format(printf, 2, 3))) void PreconditionFailed(const char* api,
                                                                                  const char* fmt,
                                                                                  ...) {
  dprintf(2, "cpu_ascendc: precondition violated in %s: ", api);
  va_list args;
  va_start(args, fmt);
  vdprintf(2, fmt, args);
  va_end(args);
  dprintf(2, "\n");
  std::abort();
}

inline bool IsAligned(const void* p, uint64_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

}  // namespace cpu_ascendc

// Aborts with "cpu_ascendc: precondition violated in <api>: <message>" when `cond` is false.
#define CPU_ASCENDC_CHECK(cond, api, ...)                  \
  do {                                                     \
    if (__builtin_expect(!(cond), 0)) {                    \
      ::cpu_ascendc::PreconditionFailed(api, __VA_ARGS__); \
    }                                                      \
  } while (0)

namespace cpu_ascendc {

struct GmRegion {
  const uint8_t* begin;
  uint64_t bytes;
};

struct CoreState {
  int64_t block_idx = 0;
  int64_t block_num = 0;
  uint8_t* ub = nullptr;  // ub_size bytes, 32-byte aligned
  uint64_t ub_size = 0;   // the usable UB: the launch's, capped by the arch's (UsableUb)
  uint64_t ub_used = 0;   // bytes handed out by the live TPipe
  bool pipe_live = false;
  std::vector<GmRegion> gm_regions;  // empty: SetGlobalBuffer is not range-checked
  const ArchRules* rules = nullptr;  // the arch the launch runs for
};

namespace core {

// One UB arena per host thread, reused by every block that thread runs.
struct ThreadCore {
  CoreState state;
  std::vector<uint8_t> arena;  // ub_size bytes from its first 64-byte boundary
  bool active = false;
};
inline ThreadCore& ThisThread() {
  static thread_local ThreadCore core;
  return core;
}

// Subnormals as numbers: x86 MXCSR FTZ (bit 15) and DAZ (bit 6) off, or AArch64 FPCR.FZ (bit
// 24) off. Returns the mode to restore (FPCR is a 64-bit register).
inline uint64_t FpMode() {
#if defined(__x86_64__) || defined(__SSE__)
  uint32_t mxcsr;
  __asm__ __volatile__("stmxcsr %0" : "=m"(mxcsr));
  return mxcsr;
#elif defined(__aarch64__)
  uint64_t fpcr;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  return fpcr;
#else
  return 0;
#endif
}
inline void SetFpMode(uint64_t mode) {
#if defined(__x86_64__) || defined(__SSE__)
  const uint32_t mxcsr = static_cast<uint32_t>(mode);
  __asm__ __volatile__("ldmxcsr %0" : : "m"(mxcsr));
#elif defined(__aarch64__)
  __asm__ __volatile__("msr fpcr, %0" : : "r"(mode));
#else
  (void)mode;
#endif
}
#if defined(__x86_64__) || defined(__SSE__)
constexpr uint64_t kFlushSubnormals = (1u << 15) | (1u << 6);
#elif defined(__aarch64__)
constexpr uint64_t kFlushSubnormals = uint64_t{1} << 24;
#else
constexpr uint64_t kFlushSubnormals = 0;
#endif

}  // namespace core

// The calling thread's core; aborts when the thread is not running a block.
inline CoreState& CurrentCore() {
  core::ThreadCore& t = core::ThisThread();
  CPU_ASCENDC_CHECK(t.active, "GetBlockIdx/UB",
                    "this thread is not running a kernel block (no CoreScope)");
  return t.state;
}

// The rules of the arch the calling thread's block runs for.
inline const ArchRules& CurrentRules() { return *CurrentCore().rules; }

// Makes the calling thread core `block_idx` of `block_num` of a launch for __NPU_ARCH__
// `npu_arch` (0: the host CPU) until destruction. Not nestable. `ub_size` is the platform's UB
// (the tiling input); the block gets UsableUb(arch, ub_size) bytes, so a plan that needs the
// arch's reserved scratch aborts. While it lives the thread treats subnormal floats as numbers
// (flush-to-zero and denormals-are-zero off, whatever the caller's mode; XLA's CPU threads set
// both), so the primitives' float arithmetic gives the same bits on every thread.
class CoreScope {
 public:
  CoreScope(uint32_t block_idx, uint32_t block_num, uint64_t platform_ub_size,
            std::initializer_list<GmRegion> gm_regions = {}, uint32_t npu_arch = 0) {
    const ArchRules* rules = FindRules(npu_arch);
    CPU_ASCENDC_CHECK(rules != nullptr, "CoreScope", "unknown __NPU_ARCH__ %u", npu_arch);
    // A platform claiming more UB than the arch has is a host bug (phase one refuses it).
    CPU_ASCENDC_CHECK(rules->total_ub_size == 0 || platform_ub_size <= rules->total_ub_size,
                      "CoreScope", "ub_size %llu exceeds the %llu bytes of UB of %s",
                      static_cast<unsigned long long>(platform_ub_size),
                      static_cast<unsigned long long>(rules->total_ub_size), rules->name);
    const uint64_t ub_size = UsableUb(*rules, platform_ub_size);
    core::ThreadCore& t = core::ThisThread();
    CPU_ASCENDC_CHECK(!t.active, "CoreScope", "a block is already running on this thread");
    CPU_ASCENDC_CHECK(block_idx < block_num, "CoreScope", "block index %u out of block_dim %u",
                      block_idx, block_num);
    CPU_ASCENDC_CHECK(ub_size > 0 && ub_size % 32 == 0, "CoreScope",
                      "ub_size %llu must be a positive multiple of 32 bytes",
                      static_cast<unsigned long long>(ub_size));
    if (t.arena.size() != ub_size + 64) t.arena.resize(ub_size + 64);
    const uintptr_t arena = reinterpret_cast<uintptr_t>(t.arena.data());
    CoreState& s = t.state;
    s.block_idx = block_idx;
    s.block_num = block_num;
    s.ub = t.arena.data() + ((arena + 63) / 64 * 64 - arena);
    s.ub_size = ub_size;
    s.ub_used = 0;
    s.pipe_live = false;
    s.gm_regions = gm_regions;  // into the thread's vector: no allocation once it has grown
    s.rules = rules;
    saved_fp_mode_ = core::FpMode();
    if (saved_fp_mode_ & core::kFlushSubnormals) {
      core::SetFpMode(saved_fp_mode_ & ~core::kFlushSubnormals);
    }
    t.active = true;
  }
  ~CoreScope() {
    if (core::FpMode() != saved_fp_mode_) core::SetFpMode(saved_fp_mode_);
    core::ThreadCore& t = core::ThisThread();
    t.active = false;
    t.state.gm_regions.clear();
  }
  CoreScope(const CoreScope&) = delete;
  CoreScope& operator=(const CoreScope&) = delete;

 private:
  uint64_t saved_fp_mode_ = 0;
};

}  // namespace cpu_ascendc

namespace AscendC {
__aicore__ inline int64_t GetBlockIdx() { return cpu_ascendc::CurrentCore().block_idx; }
__aicore__ inline int64_t GetBlockNum() { return cpu_ascendc::CurrentCore().block_num; }
}  // namespace AscendC
