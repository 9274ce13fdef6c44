// CANN's executor reuse (aclSetAclOpExecutorRepeatable, aclSetInputTensorAddr /
// aclSetOutputTensorAddr, aclDestroyAclOpExecutor) and the registry of live executors that makes
// a destroyed executor an error code rather than a use after free.
//
// Lifetimes: every call reaches the plan through LivePlan (a shared reference taken under the
// registry's lock), never through an executor a concurrent destroy may be deleting; the plan's
// flags (started, repeatable, destroyed) change under its bindings_mu, so "made repeatable before
// its first run", "no run after destroy" and "destroy waits for the runs in flight" hold in every
// interleaving of threads.
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_set>

#include "aclnn/broadcast.h"  // ShapeString
#include "aclnn/executor.h"
#include "aclnn/tensor.h"
#include "aclnn/view_bounds.h"

namespace jax_threshold::aclnn {
namespace {

struct LiveExecutors {
  std::mutex mu;
  std::unordered_set<const aclOpExecutor*> set;
};

LiveExecutors& Live() {
  static LiveExecutors* live = new LiveExecutors;  // never destroyed: usable at exit
  return *live;
}

aclnnStatus FailNotLive(const char* api) {
  return Fail(ACLNN_ERR_PARAM_INVALID,
              std::string(api) + ": not a live executor (destroyed, or never created)");
}

ViewBounds Shifted(const ViewBounds& b, uintptr_t delta) {
  return {b.first + delta, b.begin + delta, b.end + delta};
}

bool SameLayout(const aclTensor& a, const aclTensor& b) {
  return a.dtype == b.dtype && a.shape == b.shape && a.strides == b.strides && a.offset == b.offset;
}

// Moves the plan's pointers into tensor `slot` by `delta` bytes (unsigned: wraps like the
// addresses themselves).
void ShiftPlanPointers(ExecutorPlan* plan, int slot, uintptr_t delta) {
  auto shift = [delta](auto* p) {
    using P = decltype(p);
    return p == nullptr ? p : reinterpret_cast<P>(reinterpret_cast<uintptr_t>(p) + delta);
  };
  switch (slot) {
    case ascend_kernels::kOperandGrad:
      plan->grad = shift(plan->grad);
      break;
    case ascend_kernels::kOperandX:
      plan->x = shift(plan->x);
      break;
    case ascend_kernels::kOperandThreshold:
      plan->device_threshold = shift(plan->device_threshold);
      if (plan->batch) plan->batch->threshold = shift(plan->batch->threshold);
      break;
    default:
      plan->out = shift(plan->out);
      break;
  }
}

aclnnStatus SetTensorAddr(aclOpExecutor* executor, int slot, const char* api, aclTensor* tensor,
                          void* addr) {
  if (executor == nullptr)
    return Fail(ACLNN_ERR_PARAM_NULLPTR, std::string(api) + ": executor is null");
  if (tensor == nullptr)
    return Fail(ACLNN_ERR_PARAM_NULLPTR, std::string(api) + ": tensor is null");
  const std::shared_ptr<ExecutorPlan> shared = LivePlan(executor);
  ExecutorPlan* plan = shared.get();
  if (plan == nullptr) return FailNotLive(api);
  std::lock_guard<std::mutex> lock(plan->bindings_mu);
  if (plan->destroyed) return FailNotLive(api);
  ExecutorBindings& b = plan->bindings;
  if (slot == ascend_kernels::kOperandThreshold && b.inputs < 3) {
    return Fail(ACLNN_ERR_PARAM_INVALID,
                std::string(api) + ": index 2 is out of range (this plan has 2 inputs)");
  }
  if (b.runs_in_flight > 0) {
    return Fail(ACLNN_ERR_PARAM_INVALID,
                std::string(api) + ": a run of this executor is still in flight");
  }
  TensorBinding& t = b.tensors[slot];
  if (!t.present) return ACLNN_SUCCESS;  // an empty plan reads and writes nothing
  if (!SameLayout(*tensor, t.view)) {
    return Fail(ACLNN_ERR_PARAM_INVALID,
                std::string(api) + ": " + kOperandNames[slot] + " of dtype " +
                    DtypeName(tensor->dtype) + " and shape " + ShapeString(tensor->shape) +
                    " is not the planned view (dtype " + DtypeName(t.view.dtype) + ", shape " +
                    ShapeString(t.view.shape) + ", the planned strides and offset)");
  }
  if (addr == nullptr) {
    return Fail(ACLNN_ERR_PARAM_NULLPTR,
                std::string(api) + ": " + kOperandNames[slot] + "'s address is null");
  }
  const uintptr_t planned = reinterpret_cast<uintptr_t>(t.view.data);
  const uintptr_t now = reinterpret_cast<uintptr_t>(addr);
  const uint64_t elem = DtypeSize(t.view.dtype);
  if (elem > 1 && now % elem != planned % elem) {
    return Fail(ACLNN_ERR_PARAM_INVALID, std::string(api) + ": " + kOperandNames[slot] +
                                             "'s address is not aligned like the planned one");
  }
  if (slot == ascend_kernels::kOperandThreshold && !plan->HasDeviceThreshold()) {
    return Fail(ACLNN_ERR_PARAM_INVALID,
                std::string(api) +
                    ": phase one read this plan's threshold value; only a threshold the "
                    "kernel reads (a device-threshold plan) can be rebound");
  }
  // The view's extent moves with its address; it must not wrap the address space.
  const uintptr_t delta = now - planned;
  const ViewBounds moved = Shifted(t.planned, delta);
  const auto begin_off = static_cast<intptr_t>(t.planned.begin - planned);
  const auto end_off = static_cast<intptr_t>(t.planned.end - planned);
  if ((begin_off < 0 && now < static_cast<uintptr_t>(-begin_off)) ||
      (end_off > 0 && now > UINTPTR_MAX - static_cast<uintptr_t>(end_off))) {
    return Fail(ACLNN_ERR_PARAM_INVALID, std::string(api) + ": " + kOperandNames[slot] +
                                             "'s extent at this address wraps around");
  }
  ShiftPlanPointers(plan, slot, now - t.data);
  t.data = now;
  t.bounds = moved;
  const int ws_slot = slot == ascend_kernels::kOperandOut ? 2 : slot;
  if (slot != ascend_kernels::kOperandThreshold) plan->workspace.tensors[ws_slot] = t.bounds;
  b.rebound = false;
  for (const TensorBinding& other : b.tensors) {
    if (other.present && other.data != reinterpret_cast<uintptr_t>(other.view.data)) {
      b.rebound = true;
    }
  }
  return ACLNN_SUCCESS;
}

}  // namespace

aclOpExecutor* NewExecutor(std::shared_ptr<ExecutorPlan>* plan) {
  *plan = std::shared_ptr<ExecutorPlan>(new (std::nothrow) ExecutorPlan);
  if (*plan == nullptr) return nullptr;
  auto* exec = new (std::nothrow) aclOpExecutor;
  if (exec == nullptr) return nullptr;
  exec->plan = *plan;
  try {
    std::lock_guard<std::mutex> lock(Live().mu);
    Live().set.insert(exec);
  } catch (const std::bad_alloc&) {
    delete exec;
    return nullptr;
  }
  return exec;
}

bool IsLiveExecutor(const aclOpExecutor* executor) {
  std::lock_guard<std::mutex> lock(Live().mu);
  return Live().set.count(executor) != 0;
}

std::shared_ptr<ExecutorPlan> LivePlan(const aclOpExecutor* executor) {
  std::lock_guard<std::mutex> lock(Live().mu);
  if (Live().set.count(executor) == 0) return nullptr;
  return executor->plan;
}

bool ExecutorMayRunAgain(ExecutorPlan& plan) {
  std::lock_guard<std::mutex> lock(plan.bindings_mu);
  return !plan.destroyed && (plan.repeatable || !plan.started);
}

bool ReleaseExecutor(aclOpExecutor* executor) {
  {
    std::lock_guard<std::mutex> lock(Live().mu);
    if (Live().set.erase(executor) == 0) return false;
  }
  delete executor;
  return true;
}

void RecordBindings(aclOpExecutor* executor, const aclTensor* grad_output, const aclTensor* x,
                    const aclTensor* threshold, const aclTensor* out) {
  ExecutorPlan* plan = executor->plan.get();
  std::lock_guard<std::mutex> lock(plan->bindings_mu);
  ExecutorBindings& b = plan->bindings;
  b = ExecutorBindings{};
  b.inputs = threshold == nullptr ? 2 : 3;
  if (!plan->kernel) return;  // nothing is read or written
  const aclTensor* const tensors[ascend_kernels::kNumOperands] = {grad_output, x, threshold, out};
  std::string error;
  for (int i = 0; i < ascend_kernels::kNumOperands; ++i) {
    TensorBinding& t = b.tensors[i];
    if (tensors[i] == nullptr ||
        !ComputeViewBounds(*tensors[i], kOperandNames[i], &t.planned, &error)) {
      continue;
    }
    t.present = true;
    t.view = *tensors[i];
    t.bounds = t.planned;
    t.data = reinterpret_cast<uintptr_t>(t.view.data);
  }
}

void EndRun(ExecutorPlan* plan) {
  std::lock_guard<std::mutex> lock(plan->bindings_mu);
  if (--plan->bindings.runs_in_flight == 0) plan->runs_ended.notify_all();
}

// Under plan->bindings_mu: after a rebinding, an input may overlap out only as it did at planning
// (the same relative position), since phase one's copies and in-place runs assume that.
aclnnStatus CheckRebinding(const ExecutorPlan& plan) {
  const ExecutorBindings& b = plan.bindings;
  if (!b.rebound) return ACLNN_SUCCESS;
  const TensorBinding& out = b.tensors[ascend_kernels::kOperandOut];
  if (!out.present) return ACLNN_SUCCESS;
  for (int i = 0; i < b.inputs; ++i) {
    const TensorBinding& in = b.tensors[i];
    if (!in.present || !Overlaps(in.bounds, out.bounds)) continue;
    if (!Overlaps(in.planned, out.planned) ||
        in.bounds.first - out.bounds.first != in.planned.first - out.planned.first) {
      return Fail(ACLNN_ERR_PARAM_INVALID,
                  std::string("the rebound ") + kOperandNames[i] +
                      " overlaps out, which it did not do this way when the executor was planned");
    }
  }
  return ACLNN_SUCCESS;
}

aclnnStatus aclnnThresholdBackwardCheckBindings(const aclOpExecutor* executor) {
  if (executor == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, "executor is null");
  const std::shared_ptr<ExecutorPlan> plan = LivePlan(executor);
  if (plan == nullptr) {
    return Fail(ACLNN_ERR_PARAM_INVALID, "not a live executor (destroyed, or never created)");
  }
  std::lock_guard<std::mutex> lock(plan->bindings_mu);
  if (plan->destroyed) {
    return Fail(ACLNN_ERR_PARAM_INVALID, "not a live executor (destroyed, or never created)");
  }
  return CheckRebinding(*plan);
}

// As CANN documents it, reuse is enabled right after phase one: an executor that has run (or
// whose run is in flight) is refused, since its caller may already have released the memory the
// plan is bound to.
aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor* executor) {
  constexpr const char* kApi = "aclSetAclOpExecutorRepeatable";
  if (executor == nullptr)
    return Fail(ACLNN_ERR_PARAM_NULLPTR, std::string(kApi) + ": executor is null");
  const std::shared_ptr<ExecutorPlan> plan = LivePlan(executor);
  if (plan == nullptr) return FailNotLive(kApi);
  std::lock_guard<std::mutex> lock(plan->bindings_mu);
  if (plan->destroyed) return FailNotLive(kApi);
  if (plan->started && !plan->repeatable) {
    return Fail(ACLNN_ERR_PARAM_INVALID,
                std::string(kApi) +
                    ": the executor has run; an executor is made repeatable before its first run "
                    "(right after phase one)");
  }
  plan->repeatable = true;
  return ACLNN_SUCCESS;
}

aclnnStatus aclSetInputTensorAddr(aclOpExecutor* executor, size_t index, aclTensor* tensor,
                                  void* addr) {
  if (index > 2) {
    return Fail(ACLNN_ERR_PARAM_INVALID, "aclSetInputTensorAddr: index " + std::to_string(index) +
                                             " is out of range (inputs: 0 grad_output, 1 x, "
                                             "2 threshold)");
  }
  return SetTensorAddr(executor, static_cast<int>(index), "aclSetInputTensorAddr", tensor, addr);
}

aclnnStatus aclSetOutputTensorAddr(aclOpExecutor* executor, size_t index, aclTensor* tensor,
                                   void* addr) {
  if (index != 0) {
    return Fail(ACLNN_ERR_PARAM_INVALID, "aclSetOutputTensorAddr: index " + std::to_string(index) +
                                             " is out of range (output: 0 out)");
  }
  return SetTensorAddr(executor, ascend_kernels::kOperandOut, "aclSetOutputTensorAddr", tensor,
                       addr);
}

// Codes only: aclGetRecentErrMsg keeps the reason of the call before (cleanup paths destroy an
// executor right after a failing call whose reason is still to be read).
// Runs admitted before the destroy keep reading the plan and the caller's tensors until they end,
// so the destroy waits for them (a synchronous run until it returns, a run on a HostStream until
// its last launch has finished, an NPU run until submitted); nothing is admitted after it.
aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor* executor) {
  if (executor == nullptr) return ACLNN_ERR_PARAM_NULLPTR;
  std::shared_ptr<ExecutorPlan> plan;
  {
    std::lock_guard<std::mutex> lock(Live().mu);
    if (Live().set.erase(executor) == 0) return ACLNN_ERR_PARAM_INVALID;  // not a live executor
    plan = std::move(executor->plan);
  }
  delete executor;
  std::unique_lock<std::mutex> lock(plan->bindings_mu);
  plan->destroyed = true;
  plan->runs_ended.wait(lock, [&plan] { return plan->bindings.runs_in_flight == 0; });
  return plan->repeatable ? ACLNN_SUCCESS : ACLNN_ERR_PARAM_INVALID;  // released all the same
}

}  // namespace jax_threshold::aclnn
