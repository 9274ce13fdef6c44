// Phase one of a threshold_backward custom call: its buffers planned as executor runs.
//
// The call is seen in out's index space with out's size-1 dims dropped and adjacent dims merged
// where every operand (grad_output, x, threshold) is contiguous across both or broadcast along
// both. Dims along which the threshold varies (vmap batched it) are looped over, one slice per
// index, so each executor run sees a single scalar threshold; so are leading dims beyond the
// executor's rank limit of 8. Each slice's phase one runs here and the workspace is sized for
// all of them (or, for many small slices on the host, one plan per kernel is shared by all:
// ffi_shared_plan.h); phase two (running the slices) is the handler's, on its platform.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "xla_ffi/ffi_shared_plan.h"
#include "xla_ffi/ffi_threshold.h"
#include "jax_threshold/aclnn_threshold_backward.h"
#include "xla/ffi/api/ffi.h"
#include "xla_ffi/xla_thread_pool_stream.h"  // header-only

namespace jax_threshold::ffi_handler {

// One executor run: the part of the call one threshold element covers.
struct Slice {
  aclnn::aclTensor* grad = nullptr;
  aclnn::aclTensor* x = nullptr;
  aclnn::aclTensor* out = nullptr;
  aclnn::aclScalar* threshold = nullptr;
  aclnn::aclOpExecutor* executor = nullptr;
  uint64_t workspace_size = 0;
  uint64_t workspace_offset = 0;  // into the call's one workspace block
};

// Everything one call owns until its last kernel block has finished.
struct CallState {
  std::vector<Slice> slices;
  uint64_t workspace_bytes = 0;
  void* host_workspace = nullptr;  // CPU: freed here
  std::unique_ptr<XlaThreadPoolStream> stream;
  // What the executors launch on: `stream` with subnormals as numbers (denormal_mode.h).
  std::unique_ptr<aclnn::HostStream> kernel_stream;
  // Set instead of `slices` for a batched threshold over small slices (ffi_shared_plan.h).
  std::unique_ptr<SharedPlanSlices> shared;
  std::optional<xla::ffi::CountDownPromise> done;  // asynchronous CPU runs

  CallState() = default;
  CallState(const CallState&) = delete;
  CallState& operator=(const CallState&) = delete;
  ~CallState();  // destroys every slice's executor, tensors and scalar; frees host_workspace

  // The outcome of slice k's run once it has finished (on_done, or return of an inline run).
  xla::ffi::Error RunOutcome(size_t k) const;
};

// Phase one for every slice; fills `state.slices` and sizes the workspace (slice offsets
// kWorkspaceAlignment-aligned), or, on the host (platform->soc kHost) for a batched threshold
// over slices of at most kInlineMaxBytes, `state.shared`. No slice when there is nothing to run
// (a batch of no thresholds). out's shape must be the broadcast shape of grad_output, x and the
// threshold (kInvalidArgument otherwise: XLA hands the handler whatever result a direct custom
// call declares).
xla::ffi::Error PlanCall(CallState& state, const xla::ffi::AnyBuffer& grad,
                         const xla::ffi::AnyBuffer& x, const ThresholdValues& threshold,
                         const xla::ffi::AnyBuffer& out, const aclnn::PlatformInfo* platform);

}  // namespace jax_threshold::ffi_handler
