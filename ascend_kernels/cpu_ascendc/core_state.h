// The state of one emulated AI core: block index, block count, and its unified buffer (UB).
//
// A launch runs each block on some host thread; `CoreScope` makes that thread "be" core i for
// the duration of the kernel call (thread-local, so blocks may run concurrently on many threads).
// The UB is a 32-byte aligned arena of ub_size bytes that TPipe carves buffers from; GM regions
// registered by the launcher bound what GlobalTensor::SetGlobalBuffer may cover.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "arch_rules.h"

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

// The calling thread's core; aborts when the thread is not running a block.
CoreState& CurrentCore();

// The rules of the arch the calling thread's block runs for.
inline const ArchRules& CurrentRules() { return *CurrentCore().rules; }

// Makes the calling thread core `block_idx` of `block_num` of a launch for __NPU_ARCH__
// `npu_arch` (0: the host CPU) until destruction. Not nestable. `ub_size` is the platform's UB
// (the tiling input); the block gets UsableUb(arch, ub_size) bytes, so a plan that needs the
// arch's reserved scratch aborts.
// While it lives the thread treats subnormal floats as numbers (flush-to-zero and
// denormals-are-zero off, whatever the caller's mode; XLA's CPU threads set both), so the
// primitives' float arithmetic gives the same bits on every thread.
class CoreScope {
 public:
  CoreScope(uint32_t block_idx, uint32_t block_num, uint64_t ub_size,
            std::initializer_list<GmRegion> gm_regions = {}, uint32_t npu_arch = 0);
  ~CoreScope();
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
