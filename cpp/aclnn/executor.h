// The plan phase one makes (aclOpExecutor's), and what phase one, phase two on the host
// (executor.cpp), phase two on the NPU (npu_phase_two.cpp) and the Python face share.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "aclnn/tensor.h"
#include "ascend_kernels/dtype_soc_table.h"
#include "ascend_kernels/kernel_args.h"
#include "jax_threshold/aclnn_threshold_backward.h"

namespace jax_threshold::aclnn {

using ascend_kernels::KernelOp;
using ascend_kernels::kNumOperands;

// The operands' names in messages, in the operand order (ascend_kernels::kOperandGrad, ...).
inline constexpr const char* kOperandNames[kNumOperands] = {"grad_output", "x", "threshold", "out"};

// A tensor of the plan as CANN's reuse API rebinds it: the descriptor phase one was given and
// where its data is now.
struct TensorBinding {
  bool present = false;  // false: an empty plan's tensor, or an index the plan does not have
  aclTensor view;        // as planned; view.data is the planned address
  ViewBounds planned;    // extent at planning
  ViewBounds bounds;     // extent at the current address
  uintptr_t data = 0;    // current data address
};

struct ExecutorBindings {
  int inputs = 2;                       // 3 with a device threshold
  TensorBinding tensors[kNumOperands];  // in the operand order
  int runs_in_flight = 0;
};

// What phase one fixes about the workspace: the bytes its buffers use from the aligned base
// (`planned`), and the size it asks for (`size`: planned plus kWorkspaceAlignment - 1 of slack,
// so phase two finds an aligned base inside any allocation; 0 when nothing is planned).
struct WorkspacePlan {
  uint64_t planned = 0;
  uint64_t size = 0;
};

// Dims of out looped over one launch per slice (a device threshold's batch that the tiling's
// ThresholdBatchTiling cannot describe): slice k's first elements are SliceOffsets' of k.
struct SliceLoop {
  std::vector<int64_t> sizes;                              // outer to inner
  std::vector<std::array<int64_t, kNumOperands>> strides;  // element strides [dim][operand]
  int64_t count = 1;                                       // launches: 1 without a loop
};

// Everything phase two needs, fixed by phase one; shared (reference-counted) between the executor
// and the runs in flight.
struct ExecutorPlan {
  std::optional<KernelOp> kernel;  // none: an empty call, nothing runs
  aclDataType dtype = ACL_FLOAT;
  ascend_kernels::Soc soc = ascend_kernels::Soc::kAscend910B;  // whose AscendC rules apply
  uint64_t ub_size = 0;
  ascend_kernels::ThresholdGradV2DTilingData threshold_grad_tiling{};
  ascend_kernels::ReluGradTilingData relu_grad_tiling{};

  // First elements: of grad_output, x and out, and of a device threshold (else null).
  const char* grad = nullptr;
  const char* x = nullptr;
  const char* threshold = nullptr;
  char* out = nullptr;
  // Whole-tensor plans only: inputs made contiguous in the workspace, and the kernel's result
  // written there and copied into out's view, each buffer at its offset from the aligned base.
  std::optional<StridedCopyPlan> grad_copy, x_copy, out_copy;
  uint64_t grad_offset = 0, x_offset = 0, out_offset = 0;
  WorkspacePlan workspace;
  SliceLoop slices;

  std::atomic<int32_t> run_status{ACLNN_SUCCESS};

  // CANN's reuse API. bindings_mu guards `bindings`, the tensor addresses above and the flags
  // below: a run is admitted, an executor made repeatable, rebound or destroyed under it.
  std::mutex bindings_mu;
  ExecutorBindings bindings;
  bool started = false;                // a run was admitted
  bool repeatable = false;             // made repeatable before its first run
  bool destroyed = false;              // aclDestroyAclOpExecutor began: nothing more is admitted
  std::condition_variable runs_ended;  // notified when bindings.runs_in_flight drops to 0
  // Synchronous runs of one executor from several threads take turns: they write the same out.
  std::mutex sync_run_mu;

  const ascend_kernels::ElementwiseTiling& tiling() const {
    return kernel == KernelOp::kReluGrad ? relu_grad_tiling.tiling : threshold_grad_tiling.tiling;
  }
};

}  // namespace jax_threshold::aclnn

struct jax_threshold::aclnn::aclOpExecutor {
  std::shared_ptr<ExecutorPlan> plan;
};

namespace jax_threshold::aclnn {

inline const ExecutorPlan* GetExecutorPlan(const aclOpExecutor* executor) {
  return executor == nullptr ? nullptr : executor->plan.get();
}

// Records `message` as aclGetRecentErrMsg()'s and returns `status`.
aclnnStatus Fail(aclnnStatus status, std::string message);

// Phase one's. `info` with its SoC's ub_size and core_num where it has none.
PlatformInfo WithDefaults(const PlatformInfo& info);
// The kernel's comparison for x of dtype `x`: the scalar converted exactly into a threshold dtype
// the kernel reads (float32 rounded once for 16- and 32-bit float x, float64 for float64 x, int64
// or float64 for integer x), then the kernel's own conversion, ThresholdParamsFromBits.
ascend_kernels::ThresholdParams MakeThresholdParams(const aclScalar& threshold, aclDataType x);

// Executors alive between phase one and aclDestroyAclOpExecutor, so that a destroyed one is an
// error code wherever it is passed. NewExecutor: null when out of memory. LivePlan: the plan of a
// live executor, shared so that a concurrent destroy cannot free it; null for any other pointer.
// ReleaseExecutor: deletes a live executor that never ran (phase one's cleanup).
aclOpExecutor* NewExecutor(std::shared_ptr<ExecutorPlan>* plan);
std::shared_ptr<ExecutorPlan> LivePlan(const aclOpExecutor* executor);
void ReleaseExecutor(aclOpExecutor* executor);
// Records the caller's tensors of a successful phase one (threshold: null for a scalar).
void RecordBindings(aclOpExecutor* executor, const aclTensor* grad_output, const aclTensor* x,
                    const aclTensor* threshold, const aclTensor* out);
// Whether a run can still be admitted: not destroyed, and repeatable or not yet run. Once false
// it stays false, so the memory the plan is bound to is no longer the executor's concern.
bool ExecutorMayRunAgain(ExecutorPlan& plan);

// Phase two's checks of what phase one could not see, for every kind of stream: a null or
// destroyed executor, bindings that overlap out other than at planning, the workspace (too small,
// null, wrapping or overlapping a tensor), a second run. On success the run is admitted: `*plan`
// holds the plan (a run reads it from there, never through the executor, which a concurrent
// destroy may release) and `*base` the aligned base of the workspace's buffers (null when none
// is planned). Every admitted run ends with EndRun, after which rebinding and destroying go on.
aclnnStatus StartRun(void* workspace, uint64_t workspace_size, aclOpExecutor* executor,
                     std::shared_ptr<ExecutorPlan>* plan, char** base);
void EndRun(ExecutorPlan* plan);

// The launch plan, the same on the host and the NPU: launch k < slices.count runs the plan's
// kernel and tiling on slice k, whose first elements these are, given the tensors' first elements
// as the kernel reads them (the workspace's copies, where the plan makes them).
struct LaunchArgs {
  const char* grad;
  const char* x;
  const char* threshold;
  char* out;
};
LaunchArgs LaunchAt(const ExecutorPlan& plan, int64_t k, const char* grad, const char* x,
                    char* out);

}  // namespace jax_threshold::aclnn
