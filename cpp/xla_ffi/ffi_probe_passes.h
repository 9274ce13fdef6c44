// A benchmark probe, not part of the operator: the fastest this kernel's shape can be as a
// custom call. One XLA FFI target computes out = x > threshold ? grad : 0 over float32, bfloat16
// or int8 with the pass model (ascend_kernels/bench/pass_model.h: per tile, the loops the CPU
// AscendC primitives run, in ThresholdGradV2D's order, tiled for the host UB, with none of the
// emulation's bookkeeping), split over XLA's intra-op pool as the threshold_backward handler
// splits its kernel blocks. benchmarks/bench_threshold_backward.py times it beside the FFI path
// ("probe_passes"): a goal that even this misses is out of reach of the kernel's shape on this
// machine, whatever the emulation costs.
#pragma once

#include "xla/ffi/api/c_api.h"

namespace jax_threshold::ffi_handler {

inline constexpr char kProbePassesTarget[] = "jax_threshold_probe_passes_v1";

// The CPU handler of kProbePassesTarget: Ctx ThreadPool; Arg grad, Arg x (grad's dtype and
// element count); Ret out (the same); Attr threshold (F64, narrowed to float32; int8 x compares
// as float, exactly). float32, bfloat16 and int8; any other dtype is an InvalidArgument error.
XLA_FFI_Handler* ProbePassesCpuHandler();

}  // namespace jax_threshold::ffi_handler
