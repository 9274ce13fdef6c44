#include "core_state.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <utility>

#include "precondition.h"

#if defined(__x86_64__) || defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace cpu_ascendc {

void PreconditionFailed(const char* api, const char* fmt, ...) {
  std::fprintf(stderr, "cpu_ascendc: precondition violated in %s: ", api);
  va_list args;
  va_start(args, fmt);
  std::vfprintf(stderr, fmt, args);
  va_end(args);
  std::fputc('\n', stderr);
  std::fflush(stderr);
  std::abort();
}

namespace {

struct AlignedFree {
  void operator()(uint8_t* p) const { std::free(p); }
};

// One UB arena per host thread, reused by every block that thread runs.
struct ThreadCore {
  CoreState state;
  std::unique_ptr<uint8_t, AlignedFree> arena;
  uint64_t arena_size = 0;
  bool active = false;
};

thread_local ThreadCore t_core;

// Subnormals as numbers: x86 MXCSR FTZ (bit 15) and DAZ (bit 6) off, or AArch64 FPCR.FZ (bit
// 24) off. Returns the mode to restore (FPCR is a 64-bit register).
uint64_t EnterSubnormalsAsNumbers() {
#if defined(__x86_64__) || defined(__SSE__)
  const uint32_t saved = _mm_getcsr();
  constexpr uint32_t kFlush = (1u << 15) | (1u << 6);
  if (saved & kFlush) _mm_setcsr(saved & ~kFlush);
  return saved;
#elif defined(__aarch64__)
  uint64_t fpcr;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  constexpr uint64_t kFlush = uint64_t{1} << 24;
  if (fpcr & kFlush) __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr & ~kFlush));
  return fpcr;
#else
  return 0;
#endif
}

void RestoreFpMode(uint64_t saved) {
#if defined(__x86_64__) || defined(__SSE__)
  if (_mm_getcsr() != saved) _mm_setcsr(static_cast<uint32_t>(saved));
#elif defined(__aarch64__)
  uint64_t fpcr;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  if (fpcr != saved) __asm__ __volatile__("msr fpcr, %0" : : "r"(saved));
#else
  (void)saved;
#endif
}

}  // namespace

CoreState& CurrentCore() {
  CPU_ASCENDC_CHECK(t_core.active, "GetBlockIdx/UB",
                    "this thread is not running a kernel block (no CoreScope)");
  return t_core.state;
}

CoreScope::CoreScope(uint32_t block_idx, uint32_t block_num, uint64_t platform_ub_size,
                     std::initializer_list<GmRegion> gm_regions, uint32_t npu_arch) {
  const ArchRules& rules = RulesOf(npu_arch);
  // A platform claiming more UB than the arch has is a host bug (phase one refuses it).
  CPU_ASCENDC_CHECK(rules.total_ub_size == 0 || platform_ub_size <= rules.total_ub_size,
                    "CoreScope", "ub_size %llu exceeds the %llu bytes of UB of %s",
                    static_cast<unsigned long long>(platform_ub_size),
                    static_cast<unsigned long long>(rules.total_ub_size), rules.name);
  const uint64_t ub_size = UsableUb(rules, platform_ub_size);
  CPU_ASCENDC_CHECK(!t_core.active, "CoreScope", "a block is already running on this thread");
  CPU_ASCENDC_CHECK(block_idx < block_num, "CoreScope", "block index %u out of block_dim %u",
                    block_idx, block_num);
  CPU_ASCENDC_CHECK(ub_size > 0 && ub_size % 32 == 0, "CoreScope",
                    "ub_size %llu must be a positive multiple of 32 bytes",
                    static_cast<unsigned long long>(ub_size));
  if (t_core.arena_size != ub_size) {
    // aligned_alloc wants a size that is a multiple of the alignment (ub_size may be 32 * odd).
    void* p = std::aligned_alloc(64, (ub_size + 63) / 64 * 64);
    CPU_ASCENDC_CHECK(p != nullptr, "CoreScope", "cannot allocate a UB of %llu bytes",
                      static_cast<unsigned long long>(ub_size));
    t_core.arena.reset(static_cast<uint8_t*>(p));
    t_core.arena_size = ub_size;
  }
  CoreState& s = t_core.state;
  s.block_idx = block_idx;
  s.block_num = block_num;
  s.ub = t_core.arena.get();
  s.ub_size = ub_size;
  s.ub_used = 0;
  s.pipe_live = false;
  s.gm_regions = gm_regions;  // into the thread's vector: no allocation once it has grown
  s.rules = &rules;
  saved_fp_mode_ = EnterSubnormalsAsNumbers();
  t_core.active = true;
}

CoreScope::~CoreScope() {
  RestoreFpMode(saved_fp_mode_);
  t_core.active = false;
  t_core.state.gm_regions.clear();
}

}  // namespace cpu_ascendc
