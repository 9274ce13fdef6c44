// XLA FFI handlers of threshold_backward: the custom call that `threshold_backward_p` lowers to
// with implementation="ffi". Each call runs the aclnn two-phase executor (phase one: validate,
// plan, size the workspace; phase two: run) on the AscendC kernels.
//
// Targets (versioned: a changed ABI gets a new name, so old exported modules keep theirs):
//   jax_threshold_threshold_backward_v1
//       operands (grad_output, x, threshold), result out. The threshold is a CPU buffer read on
//       the host: 0-d, or batched by vmap (a shape that broadcasts to out's): one custom call
//       for the whole batch, the handler running the executor once per threshold element on
//       the strided views of grad_output / x / out that element covers (on the CPU, slices of at
//       most kInlineMaxBytes share one phase-one plan per kernel: ffi_shared_plan.h).
//   jax_threshold_threshold_backward_static_v1
//       operands (grad_output, x), result out; the threshold is a compile-time constant carried
//       in attributes: threshold_dtype (string: "float32", "float64", "int8", "uint8", "int32",
//       "int64"), threshold_float (f64, exact for float32 / float64 values), threshold_int (i64,
//       exact for every integer dtype). The scalar handed to the executor has threshold_dtype,
//       so both targets compare exactly as docs/behaviour.md §1 says.
//
// Both accept any dtype the executor does (SocVersion::kHost), any rank (0-d too), empty and
// broadcasting operands. Before phase one the handler drops out's size-1 dims and merges dims
// along which every operand is contiguous (or broadcast), so the executor sees few dims; rank > 8
// left after that (alternating broadcasts) is looped over like batched thresholds. Anything phase
// one rejects comes back as an ffi::Error whose message carries the aclnn status code, its name
// and aclGetRecentErrMsg()'s reason; a failed run likewise (status from
// aclnnThresholdBackwardRunStatus).
//
// out's shape must be the broadcast shape of the operands (a direct custom call may declare any
// result): kInvalidArgument naming both otherwise.
// Subnormals (CPU): XLA's threads run with flush-to-zero / denormals-are-zero; the handler clears
// them on the calling thread and around every kernel block on the pool (denormal_mode.h).
// CPU tiling: phase one tiles for kHostUbSize bytes of UB per block (see below), not the 910B's.
// CPU threading (see xla_thread_pool_stream.h): outputs of at most kInlineMaxBytes run inline on
// the calling thread with core_num 1 (one kernel block is cheaper than handing work to the pool).
// Larger ones run on min(intra-op pool threads + 1, hardware threads) workers (the calling thread
// works too), tiled for core_num = kBlocksPerWorker blocks per worker (each >= kMinBlockBytes,
// clamped to [1, kMaxCores]) that the workers claim dynamically; the handler returns an
// ffi::Future that the executors' on_done callbacks complete. No pool thread ever waits on
// another task: once every block is claimed the handler polls at most kFinishPoll for the blocks
// still running on helpers, so a call that finishes meanwhile returns a ready future instead of
// waking the waiting thread later. Outputs of kHugePageMinBytes or more are advised to use transparent huge pages
// (Linux) before the kernel first writes them.
// Workspace: ffi::ScratchAllocator gives nothing on CPU, so the handler allocates what phase one
// asks for (kWorkspaceAlignment-aligned, one block for all slices) and frees it with the call's
// state once the last block has finished.
//
// NPU (built with JAX_THRESHOLD_ASCEND; not buildable here): the same two targets are also
// provided for the "ASCEND" custom-call platform of the JAX Ascend PJRT plugin (JAX platform
// "ascend"). They plan for the device's SoC (aclrtGetSocName, which must be the build's
// SOC_VERSION), take the aclrtStream from ffi::PlatformStream, copy each slice's tiling to the
// device, launch the kernels on the stream (ascend_kernels/npu) and synchronise it before freeing
// the tiling and executors. Operands needing the executor's broadcast copies are refused there.
// The operand target copies the threshold to the host after a stream synchronisation; constant
// thresholds take the static target and avoid that.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "aclnn/host_stream.h"
#include "xla/ffi/api/c_api.h"

namespace jax_threshold::ffi_handler {

inline constexpr char kThresholdBackwardTarget[] = "jax_threshold_threshold_backward_v1";
inline constexpr char kThresholdBackwardStaticTarget[] =
    "jax_threshold_threshold_backward_static_v1";

// Outputs up to this size run inline: below it one kernel block does the work in less time than
// handing blocks to the pool costs.
inline constexpr uint64_t kInlineMaxBytes = 64 * 1024;
// The UB size the CPU handlers tile for: the host platform's (aclnn/host_stream.h); the NPU keeps
// its SoC's.
inline constexpr uint64_t kHostUbSize = aclnn::kHostUbSize;
// Blocks (core_num) of a pooled call: kBlocksPerWorker per worker, each writing at least
// kMinBlockBytes, at most kMaxCores.
inline constexpr int64_t kBlocksPerWorker = 4;
inline constexpr int64_t kMinBlockBytes = 64 * 1024;
inline constexpr uint32_t kMaxCores = 256;
// Outputs from this size on get madvise(MADV_HUGEPAGE) before the kernel first touches them.
inline constexpr uint64_t kHugePageMinBytes = 8 * 1024 * 1024;
// How long a pooled call's handler polls for the helpers' last blocks before it returns an
// unfinished future (XlaThreadPoolStream::WaitFinished).
inline constexpr std::chrono::microseconds kFinishPoll{100};
inline constexpr uint64_t kWorkspaceAlignment = 512;

// How a CPU call with `out_bytes` of output runs on an intra-op pool of `pool_threads` threads:
// inline on the calling thread, or on `workers` threads (pool helpers plus the caller) over
// `blocks` kernel blocks claimed dynamically (see "CPU threading" above).
struct HostSplit {
  bool run_inline = true;
  int64_t workers = 1;
  int64_t blocks = 1;
};
HostSplit SplitHostCall(int64_t pool_threads, uint64_t out_bytes);

struct FfiTarget {
  const char* name;
  const char* platform;  // XLA custom-call platform: "cpu" or "ASCEND"
  XLA_FFI_Handler* handler;
};

// Every target this build provides.
std::vector<FfiTarget> FfiTargets();

}  // namespace jax_threshold::ffi_handler
