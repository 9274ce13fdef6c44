// XLA FFI handlers of threshold_backward: the custom call `threshold_backward_p` lowers to with
// implementation="ffi". A call decodes its buffers, runs the aclnn two-phase executor through its
// public C API (jax_threshold/aclnn_threshold_backward.h) and returns; whatever phase one refuses
// comes back as an ffi::Error with the aclnn status, its name and aclGetRecentErrMsg()'s reason.
//
// The call: operands (grad_output, x, threshold), one result, attribute `relu_grad` (bool).
//   relu_grad=false: the threshold broadcasts with grad_output and x to the result (0-d, or
//     batched by vmap: one call, one plan); the kernel reads it (the device-threshold phase one),
//     so a plan serves every threshold value.
//   relu_grad=true: the threshold is exactly 0; phase one plans CANN's ReluGrad with an aclScalar
//     0, and the threshold operand is never read.
// Calls with two operands (grad_output, x) and no attribute are ReluGrad: the version-1 targets'.
//
// Plans are made once per compiled call: XLA FFI's instantiate stage gives each executable an
// ExecutablePlans state; its first run plans a repeatable executor, and every later run of the
// same buffer signature only rebinds the buffers' addresses and runs phase two.
//
// CPU: synchronous. Small outputs run as one block on the calling thread; larger ones on the
// calling thread plus the executor's persistent block workers (phase two with a null stream).
// ffi::ScratchAllocator gives nothing on CPU, so the plan owns the workspace phase one asks for.
//
// NPU (built with JAX_THRESHOLD_ASCEND): the "ASCEND" custom-call platform of the JAX Ascend PJRT
// plugin, planning for the device's SoC and submitting phase two on the call's aclrtStream
// (aclnn/npu_phase_two.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "xla/ffi/api/c_api.h"

namespace jax_threshold::ffi_handler {

struct FfiTarget {
  const char* name;
  const char* platform;  // XLA custom-call platform: "cpu" or "ASCEND"
  XLA_FFI_Handler* handler;
  XLA_FFI_Handler* instantiate;  // null: no instantiate stage
};

// The target the lowering emits, on every platform.
inline constexpr char kLoweringTarget[] = "jax_threshold_threshold_backward_v2";

// Every target this build registers: kLoweringTarget, and the names exported modules carry.
std::vector<FfiTarget> FfiTargets();

// The CPU targets' per-executable state (their idle plans): jax_threshold.ffi registers its type
// with XLA (jax.ffi.register_ffi_type) under kExecutablePlansTypeName before any target.
inline constexpr char kExecutablePlansTypeName[] = "jax_threshold.ExecutablePlans";
XLA_FFI_TypeId* ExecutablePlansTypeId();
const XLA_FFI_TypeInfo* ExecutablePlansTypeInfo();

#ifdef JAX_THRESHOLD_ASCEND
// Idle plans the ASCEND handler keeps on NPU `device` between calls, at most kMaxNpuIdlePlans
// (the least recently used go first): one per call signature in use.
inline constexpr size_t kMaxNpuIdlePlans = 64;
size_t NpuIdlePlanCount(int32_t device);
#endif

}  // namespace jax_threshold::ffi_handler
