// The plan phase one makes (aclOpExecutor) and what tests / Python may read back from it.
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

#include "aclnn/strided_copy.h"
#include "aclnn/tensor.h"
#include "aclnn/view_bounds.h"
#include "aclnn/workspace.h"
#include "ascend_kernels/dtype_soc_table.h"
#include "ascend_kernels/kernel_args.h"
#include "jax_threshold/aclnn_threshold_backward.h"

namespace jax_threshold::aclnn {

// A threshold tensor's batch (aclnnThresholdBackwardBatchedGetWorkspaceSize): the dims of out along
// which the threshold varies (or that exceed the kernel's rank), looped over one slice per index.
// Every slice has the plan's views, shifted by its offsets, and runs with its own threshold.
struct ThresholdBatch {
  std::vector<int64_t> sizes;  // looped dims, outer to inner
  std::vector<std::array<int64_t, ascend_kernels::kNumOperands>> strides;  // element strides
  int64_t count = 1;           // slices: the product of sizes
  uint64_t element_bytes = 0;  // of grad_output / x / out
  aclDataType threshold_dtype = ACL_DT_UNDEFINED;
  const char* threshold = nullptr;  // the threshold's first element (host memory, or device
                                    // memory in a device-threshold plan)
  uint64_t threshold_bytes = 0;
  // > 0: slices are small and run whole, `ranges` blocks of consecutive slices, each range with
  // its own `range_workspace_bytes` bytes of workspace; 0: each step runs for every slice in one
  // launch, each slice with its own `range_workspace_bytes` bytes.
  uint32_t ranges = 0;
  uint64_t range_workspace_bytes = 0;
  uint32_t core_num = 0;  // the platform's cores: the NPU runs a whole batch in one launch on them

  // Slice k's first elements: grad_output, x and out from the plan's, and its threshold element.
  struct Slice {
    const char* grad;
    const char* x;
    const char* threshold;
    char* out;
  };
  Slice At(int64_t k, const char* grad, const char* x, char* out) const;
};

// The tensors a plan reads and writes, as CANN's reuse API rebinds them (aclnn/executor_reuse.cpp):
// the descriptors phase one was given and where their data is now.
struct TensorBinding {
  bool present = false;  // false: an empty plan's tensor, or an index the plan does not have
  aclTensor view;        // as planned; view.data is the planned address
  ViewBounds planned;    // extent at planning
  ViewBounds bounds;     // extent at the current address
  uintptr_t data = 0;    // current data address
};

// The operands' names in messages, in the operand order (ascend_kernels::kOperandGrad, ...).
inline constexpr const char* kOperandNames[ascend_kernels::kNumOperands] = {"grad_output", "x",
                                                                            "threshold", "out"};

// Indexed in the operand order.
struct ExecutorBindings {
  int inputs = 2;  // 3 for the threshold-tensor phase ones
  TensorBinding tensors[ascend_kernels::kNumOperands];
  bool rebound = false;  // an address differs from the planned one
  int runs_in_flight = 0;
};

// Everything phase two needs, fixed by phase one. Shared (reference-counted) between the
// executor and an asynchronous run in flight.
struct ExecutorPlan {
  std::optional<ascend_kernels::KernelOp> kernel;  // none: empty tensors, nothing runs
  aclDataType dtype = ACL_FLOAT;
  // Whose AscendC rules the kernel runs under: the caller's SocVersion, whose enumerators are the
  // table's rows (aclnn/soc.cpp).
  ascend_kernels::Soc soc = ascend_kernels::Soc::kAscend910B;
  uint64_t ub_size = 0;
  uint64_t num_elements = 0;
  ascend_kernels::ThresholdGradV2DTilingData threshold_grad_tiling{};
  ascend_kernels::ReluGradTilingData relu_grad_tiling{};

  // Tensors: first element of each view. An input with a copy plan is first materialised
  // contiguously in the workspace at its offset; so is the kernel's result when out needs one.
  const char* grad = nullptr;
  const char* x = nullptr;
  char* out = nullptr;
  std::optional<StridedCopyPlan> grad_copy, x_copy, out_copy;
  uint64_t grad_ws_offset = 0, x_ws_offset = 0, out_ws_offset = 0, library_ws_offset = 0;
  uint64_t workspace_size = 0;  // reported by phase one: workspace.size
  WorkspacePlan workspace;

  std::optional<ThresholdBatch> batch;  // a threshold tensor of more than one slice

  // A device-threshold plan (aclnnThresholdBackwardDeviceThresholdGetWorkspaceSize):
  // ThresholdGradV2D reads each launch's threshold element (threshold_grad_tiling.threshold.source
  // is ThresholdSource::kDevice); this is the threshold's first element, batch->threshold too when
  // there is a batch.
  const char* device_threshold = nullptr;

  std::atomic<int32_t> run_status{ACLNN_SUCCESS};

  // CANN's reuse API: a repeatable plan runs until destroyed; its tensors may be rebound between
  // runs. bindings_mu guards `bindings`, the tensor addresses above and the lifecycle flags below:
  // a run is admitted, an executor made repeatable, rebound or destroyed under it, so each sees
  // the others' outcome.
  std::mutex bindings_mu;
  ExecutorBindings bindings;
  bool started = false;                // a run was admitted
  bool repeatable = false;             // made repeatable before its first run
  bool destroyed = false;              // aclDestroyAclOpExecutor began: nothing more is admitted
  std::condition_variable runs_ended;  // notified when bindings.runs_in_flight drops to 0
  // Synchronous runs of one executor, from several threads at once, take turns: they write the
  // same out (with the same bindings, since no rebinding is admitted while they are in flight).
  std::mutex sync_run_mu;

  bool HasDeviceThreshold() const {
    return threshold_grad_tiling.threshold.source ==
           static_cast<int32_t>(ascend_kernels::ThresholdSource::kDevice);
  }

  const ascend_kernels::ElementwiseTiling& tiling() const {
    return kernel == ascend_kernels::KernelOp::kReluGrad ? relu_grad_tiling.tiling
                                                         : threshold_grad_tiling.tiling;
  }
};

}  // namespace jax_threshold::aclnn

struct jax_threshold::aclnn::aclOpExecutor {
  std::shared_ptr<ExecutorPlan> plan;
};

namespace jax_threshold::aclnn {

// The plan behind an executor (null for a null executor).
inline const ExecutorPlan* GetExecutorPlan(const aclOpExecutor* executor) {
  return executor == nullptr ? nullptr : executor->plan.get();
}

// Threshold slices of at most this many bytes of output run whole, in up to core_num blocks of
// consecutive slices (aclnnThresholdBackwardBatchedGetWorkspaceSize).
inline constexpr uint64_t kSmallSliceBytes = 64 * 1024;

// Phase two's checks of what phase one could not see, for every kind of stream (the one place
// they live): a null or destroyed executor, the workspace (aclnn/workspace.h: too small, null,
// wrapping or overlapping a tensor), a second run. On success the executor is marked as started,
// `*plan` holds its plan (the run reads it from there, never through the executor, which a
// concurrent aclDestroyAclOpExecutor may release) and `*base` is the aligned base of the planned
// buffers inside the workspace (null when none is planned). Every admitted run ends with EndRun.
aclnnStatus StartRun(void* workspace, uint64_t workspace_size, aclOpExecutor* executor,
                     std::shared_ptr<ExecutorPlan>* plan, char** base);

// The end of a run StartRun admitted (synchronous runs on return, asynchronous ones before
// on_done, NPU runs once submitted): the plan's tensors may be rebound again, and a destroy
// waiting for the run returns.
void EndRun(ExecutorPlan* plan);

// Executors alive between phase one and aclDestroyAclOpExecutor (aclnn/executor_reuse.cpp), so a
// destroyed one is an error code wherever it is passed. NewExecutor: null when out of memory.
aclOpExecutor* NewExecutor(std::shared_ptr<ExecutorPlan>* plan);
bool IsLiveExecutor(const aclOpExecutor* executor);
// The plan of a live executor, shared with the caller so that a concurrent destroy cannot free
// it; null for any other pointer.
std::shared_ptr<ExecutorPlan> LivePlan(const aclOpExecutor* executor);
// Unregisters and deletes a live executor that never ran (phase one's cleanup); false (nothing
// done) for any other pointer.
bool ReleaseExecutor(aclOpExecutor* executor);
// Whether a run can still be admitted: not destroyed, and repeatable or not yet run. Once false
// it stays false, so the memory the plan is bound to is no longer the executor's concern.
bool ExecutorMayRunAgain(ExecutorPlan& plan);

// Under plan.bindings_mu, before a run: PARAM_INVALID when a rebinding made an input overlap out
// other than the way it did at planning.
aclnnStatus CheckRebinding(const ExecutorPlan& plan);

// Records the caller's tensors of a successful phase one (threshold null for a scalar
// threshold) as the executor's bindings.
void RecordBindings(aclOpExecutor* executor, const aclTensor* grad_output, const aclTensor* x,
                    const aclTensor* threshold, const aclTensor* out);

// Records `message` as aclGetRecentErrMsg()'s and returns `status`.
aclnnStatus Fail(aclnnStatus status, std::string message);
// Library workspace the kernels ask for on the host: none (on the NPU it is the platform's
// system workspace, added by the CANN build).
inline constexpr uint64_t kHostLibraryWorkspace = 0;

}  // namespace jax_threshold::aclnn
