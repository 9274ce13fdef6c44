// XLA FFI handlers of threshold_backward: the custom call that `threshold_backward_p` lowers to
// with implementation="ffi". Each call decodes its buffers, runs the aclnn two-phase executor
// through its public C API (jax_threshold/aclnn_threshold_backward.h: phase one with a threshold
// tensor, phase two on the platform's stream) and returns. The handlers launch no kernel
// themselves, and check nothing phase one checks: whatever it refuses comes back as an ffi::Error
// carrying the aclnn status code, its name and aclGetRecentErrMsg()'s reason; a failed run
// likewise. They add only the boundary's rules phase one cannot see: the threshold's rank (0-d or
// the result's, as the lowering emits it), a negative dim, the NPU's stream and SoC. (Layouts,
// operand counts and kinds are the lowering's and XLA FFI's binding's.)
//
// Targets (versioned: a changed ABI gets a new name, so old exported modules keep theirs):
//   jax_threshold_threshold_backward_v1
//       operands (grad_output, x, threshold), result out. The threshold broadcasts with
//       grad_output and x to out's shape (0-d, or batched by vmap): one custom call for the whole
//       batch, one executor plan. It is a device threshold (ThresholdSource::kDevice): the
//       kernel reads each slice's element, so the plan does not depend on its values.
//   jax_threshold_threshold_backward_relu_grad_v1
//       operands (grad_output, x), result out; the threshold is exactly 0 (the primitive's
//       relu_grad flag), so phase one plans CANN's ReluGrad kernel.
//
// All accept any dtype the executor does (SocVersion::kHost on the CPU), any rank, empty and
// broadcasting operands.
//
// Plans are made once per compiled call: XLA FFI's instantiate stage (API 0.3 has it) gives each
// executable an ExecutablePlans state; the first run plans a repeatable executor and keeps it,
// and every later run of the same buffer signature only rebinds the buffers' addresses
// (aclSetInputTensorAddr / aclSetOutputTensorAddr) and runs phase two. Runs in flight at once
// each take their own plan (at most kMaxIdlePlans are kept).
//
// CPU: the asynchronous targets run on XLA's intra-op pool through aclnn::PoolStream
// (aclnn::SplitHostCall picks workers and blocks) and return an ffi::Future that phase two's
// on_done completes, after polling at most kFinishPoll for blocks still running on helpers.
// Outputs of kHugePageMinBytes or more are advised to use transparent huge pages (Linux) before
// the kernel first writes them. ffi::ScratchAllocator gives nothing on CPU, so the handler
// allocates the workspace phase one asks for and frees it with the call's state.
//
// NPU (built with JAX_THRESHOLD_ASCEND; not buildable here): the same two targets for the
// "ASCEND" custom-call platform of the JAX Ascend PJRT plugin, planning for the device's SoC and
// running phase two on the ffi::PlatformStream's aclrtStream (aclnn/npu_phase_two.h).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "xla/ffi/api/c_api.h"

namespace jax_threshold::ffi_handler {

inline constexpr char kThresholdBackwardTarget[] = "jax_threshold_threshold_backward_v1";
inline constexpr char kThresholdBackwardReluGradTarget[] =
    "jax_threshold_threshold_backward_relu_grad_v1";
// The same two calls on CPU, synchronous: every block on the calling thread, no future. The
// lowering picks them for outputs of at most aclnn::kInlineMaxBytes; they take any size.
inline constexpr char kThresholdBackwardInlineTarget[] =
    "jax_threshold_threshold_backward_inline_v1";
inline constexpr char kThresholdBackwardReluGradInlineTarget[] =
    "jax_threshold_threshold_backward_relu_grad_inline_v1";

// Outputs from this size on get madvise(MADV_HUGEPAGE) before the kernel first touches them.
inline constexpr uint64_t kHugePageMinBytes = 8 * 1024 * 1024;
// How long a pooled call's handler polls for the helpers' last blocks before it returns an
// unfinished future (aclnn::PoolStream::WaitFinished).
inline constexpr std::chrono::microseconds kFinishPoll{100};

struct FfiTarget {
  const char* name;
  const char* platform;  // XLA custom-call platform: "cpu" or "ASCEND"
  XLA_FFI_Handler* handler;
  // The instantiate stage (null: none): makes the per-executable state the execute stage reuses
  // its plans from.
  XLA_FFI_Handler* instantiate = nullptr;
};

// The per-executable state of the CPU targets (their executor plans, kept between runs): its
// type, which jax_threshold.ffi registers with XLA (jax.ffi.register_ffi_type) under
// kExecutablePlansTypeName before any target.
inline constexpr char kExecutablePlansTypeName[] = "jax_threshold.ExecutablePlans";
XLA_FFI_TypeId* ExecutablePlansTypeId();
const XLA_FFI_TypeInfo* ExecutablePlansTypeInfo();

// Every target this build provides.
std::vector<FfiTarget> FfiTargets();

#ifdef JAX_THRESHOLD_ASCEND
// Idle plans the ASCEND handlers keep between calls on NPU `device`, at most kMaxNpuIdlePlans
// (the least recently used go first): one per call signature in use.
inline constexpr size_t kMaxNpuIdlePlans = 64;
size_t NpuIdlePlanCount(int32_t device);
#endif

}  // namespace jax_threshold::ffi_handler
