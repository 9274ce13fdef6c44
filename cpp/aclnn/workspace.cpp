// The executor's workspace rules (see workspace.h).
#include "aclnn/workspace.h"

#include "aclnn/executor.h"  // kWorkspaceAlignment

namespace jax_threshold::aclnn {

bool PlanWorkspace(uint64_t planned, uint64_t max_bytes, const ViewBounds (&tensors)[3],
                   WorkspacePlan* plan) {
  constexpr uint64_t kSlack = kWorkspaceAlignment - 1;
  uint64_t size = 0;
  if (planned > 0 && (__builtin_add_overflow(planned, kSlack, &size) || size > max_bytes)) {
    return false;
  }
  plan->planned = planned;
  plan->size = size;
  for (int i = 0; i < WorkspacePlan::kTensors; ++i) plan->tensors[i] = tensors[i];
  return true;
}

aclnnStatus PlaceWorkspace(const WorkspacePlan& plan, void* workspace, uint64_t workspace_size,
                           char** base, std::string* error) {
  *base = nullptr;
  if (workspace_size < plan.size) {
    *error = "workspace_size " + std::to_string(workspace_size) + " is smaller than the planned " +
             std::to_string(plan.size);
    return ACLNN_ERR_PARAM_INVALID;
  }
  if (plan.planned == 0) return ACLNN_SUCCESS;  // nothing is read or written there
  if (workspace == nullptr) {
    *error = "workspace is null";
    return ACLNN_ERR_PARAM_NULLPTR;
  }
  const uintptr_t begin = reinterpret_cast<uintptr_t>(workspace);
  uintptr_t end;
  if (__builtin_add_overflow(begin, workspace_size, &end)) {
    *error = "the workspace's address range wraps around the address space";
    return ACLNN_ERR_PARAM_INVALID;
  }
  static const char* const kNames[WorkspacePlan::kTensors] = {"grad_output", "x", "out"};
  const ViewBounds whole{begin, begin, end};
  for (int i = 0; i < WorkspacePlan::kTensors; ++i) {
    if (Overlaps(whole, plan.tensors[i])) {
      *error = std::string("the workspace overlaps ") + kNames[i] +
               " (the workspace must not share a byte with any tensor of the call)";
      return ACLNN_ERR_PARAM_INVALID;
    }
  }
  // size >= planned + slack, so the aligned base and its planned bytes fit in [begin, end).
  const uintptr_t aligned =
      (begin + (kWorkspaceAlignment - 1)) & ~uintptr_t{kWorkspaceAlignment - 1};
  *base = reinterpret_cast<char*>(aligned);
  return ACLNN_SUCCESS;
}

}  // namespace jax_threshold::aclnn
