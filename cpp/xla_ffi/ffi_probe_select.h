// A benchmark probe, not part of the operator: the fastest CPU custom call this handler design
// can be. One XLA FFI target computes out = x > threshold ? grad : 0 over float32 as one plain
// loop per block (no executor, no AscendC emulation), split into blocks over XLA's intra-op pool
// exactly as the threshold_backward handler splits its kernel blocks (XlaThreadPoolStream, the
// same block count). benchmarks/bench_threshold_backward.py times it beside the FFI path
// ("probe_ffi"): the gap between the two is the emulated kernel's, the gap between the probe
// and the reference fusion is what a custom call costs on this machine.
#pragma once

#include <cstdint>
#include <functional>

#include "xla/ffi/api/c_api.h"
#include "xla/ffi/api/ffi.h"

namespace jax_threshold::ffi_handler {

inline constexpr char kProbeSelectTarget[] = "jax_threshold_probe_select_v1";

// The CPU handler of kProbeSelectTarget: Ctx ThreadPool; Arg grad (F32), Arg x (F32, grad's
// shape); Ret out (F32, grad's shape); Attr threshold (F64, narrowed to float32).
XLA_FFI_Handler* ProbeSelectCpuHandler();

// Runs block(b, blocks) for every b in [0, blocks) split as the threshold_backward handler splits
// a call with `out_bytes` of output (SplitHostCall): inline as block(0, 1), or over XLA's pool
// with the handler's bounded wait for its helpers. For the benchmark probes.
xla::ffi::Future RunProbeBlocks(xla::ffi::ThreadPool& pool, uint64_t out_bytes,
                                std::function<void(int64_t block, int64_t blocks)> block);

}  // namespace jax_threshold::ffi_handler
