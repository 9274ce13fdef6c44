// The plan phase one makes (aclOpExecutor) and what tests / Python may read back from it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "ascend_kernels/kernel_args.h"
#include "jax_threshold/aclnn_threshold_backward.h"
#include "aclnn/strided_copy.h"
#include "aclnn/workspace.h"

namespace jax_threshold::aclnn {

enum class KernelKind { kNone, kThresholdGradV2D, kReluGrad };

const char* KernelKindName(KernelKind kind);

// Everything phase two needs, fixed by phase one. Shared (reference-counted) between the
// executor and an asynchronous run in flight.
struct ExecutorPlan {
  KernelKind kernel = KernelKind::kNone;  // kNone: empty tensors, nothing runs
  ascend_kernels::KernelDType dtype = ascend_kernels::KernelDType::kFloat32;
  SocVersion soc = SocVersion::kAscend910B;  // whose AscendC rules the kernel runs under
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

  std::atomic<bool> started{false};
  std::atomic<int32_t> run_status{ACLNN_SUCCESS};

  const ascend_kernels::ElementwiseTiling& tiling() const {
    return kernel == KernelKind::kReluGrad ? relu_grad_tiling.tiling
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

// Workspace buffers are aligned like aclnn's (512 bytes), so kernels see aligned GM pointers.
inline constexpr uint64_t kWorkspaceAlignment = 512;
// Library workspace the kernels ask for on the host: none (on the NPU it is the platform's
// system workspace, added by the CANN build).
inline constexpr uint64_t kHostLibraryWorkspace = 0;

}  // namespace jax_threshold::aclnn
