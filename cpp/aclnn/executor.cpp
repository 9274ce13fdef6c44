// The executor at run time: phase two on the host (aclnnThresholdBackward, synchronous or on a
// HostStream), the launch plan it shares with the NPU's phase two, and CANN's reuse API
// (aclSetAclOpExecutorRepeatable, aclSetInputTensorAddr / aclSetOutputTensorAddr,
// aclDestroyAclOpExecutor) over a registry of live executors, so that a destroyed executor is an
// error code rather than a use after free.
//
// Lifetimes: every call reaches a plan through LivePlan (a shared reference taken under the
// registry's lock), never through an executor a concurrent destroy may be deleting; the plan's
// flags (started, repeatable, destroyed) change under its bindings_mu, so "made repeatable before
// its first run", "no run after destroy" and "destroy waits for the runs in flight" hold in every
// interleaving of threads.
#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <utility>

#include "aclnn/executor.h"
#include "aclnn/host_stream.h"
#include "aclnn/tensor.h"
#include "ascend_kernels/host_launch.h"

namespace jax_threshold::aclnn {
namespace {

thread_local std::string recent_error;

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
              std::string(api) + "not a live executor (destroyed, or never created)");
}

// Under plan.bindings_mu: an input may overlap out only as it did at planning (at the same
// relative position), since phase one's copies and in-place runs assume that.
aclnnStatus CheckRebinding(const ExecutorPlan& plan) {
  const ExecutorBindings& b = plan.bindings;
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

// Under plan.bindings_mu: the aligned base of the workspace's planned buffers inside the caller's
// workspace (null when none is planned), or why the workspace cannot hold them.
aclnnStatus PlaceWorkspace(const ExecutorPlan& plan, void* workspace, uint64_t workspace_size,
                           char** base) {
  *base = nullptr;
  if (workspace_size < plan.workspace.size) {
    return Fail(ACLNN_ERR_PARAM_INVALID, "workspace_size " + std::to_string(workspace_size) +
                                             " is smaller than the planned " +
                                             std::to_string(plan.workspace.size));
  }
  if (plan.workspace.planned == 0) return ACLNN_SUCCESS;  // nothing is read or written there
  if (workspace == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, "workspace is null");
  const uintptr_t begin = reinterpret_cast<uintptr_t>(workspace);
  uintptr_t end;
  if (__builtin_add_overflow(begin, workspace_size, &end)) {
    return Fail(ACLNN_ERR_PARAM_INVALID,
                "the workspace's address range wraps around the address space");
  }
  for (int i :
       {ascend_kernels::kOperandGrad, ascend_kernels::kOperandX, ascend_kernels::kOperandOut}) {
    if (Overlaps({begin, begin, end}, plan.bindings.tensors[i].bounds)) {
      return Fail(ACLNN_ERR_PARAM_INVALID,
                  std::string("the workspace overlaps ") + kOperandNames[i] +
                      " (the workspace must not share a byte with any tensor of the call)");
    }
  }
  // size >= planned + alignment - 1: the aligned base and its planned bytes fit in the workspace.
  *base = reinterpret_cast<char*>((begin + (kWorkspaceAlignment - 1)) &
                                  ~uintptr_t{kWorkspaceAlignment - 1});
  return ACLNN_SUCCESS;
}

// A run of a plan on the host, as steps of independent blocks, in order: the input copies, the
// kernel launches (one per slice of plan.slices), the copy into out.
class HostRun {
 public:
  HostRun(const ExecutorPlan& p, char* workspace) : p_(p) {
    grad_ = p.grad_copy ? workspace + p.grad_offset : p.grad;
    x_ = p.x_copy ? workspace + p.x_offset : p.x;
    kernel_out_ = p.out_copy ? workspace + p.out_offset : p.out;
    copies_in_ = (p.grad_copy ? 1 : 0) + (p.x_copy ? 1 : 0);
  }
  int64_t Steps() const { return copies_in_ + p_.slices.count + (p_.out_copy ? 1 : 0); }
  uint32_t Blocks(int64_t step) const {
    const StridedCopyPlan* copy = Copy(step);
    return copy != nullptr ? copy->block_dim : static_cast<uint32_t>(p_.tiling().block_dim);
  }
  void RunBlock(int64_t step, uint32_t block) const {
    if (step < copies_in_) {
      const bool grad = p_.grad_copy && step == 0;
      RunStridedCopyBlock(grad ? *p_.grad_copy : *p_.x_copy, grad ? p_.grad : p_.x,
                          const_cast<char*>(grad ? grad_ : x_), block);
    } else if (step - copies_in_ < p_.slices.count) {
      const LaunchArgs a = LaunchAt(p_, step - copies_in_, grad_, x_, kernel_out_);
      const ascend_kernels::HostLaunch launch =
          *p_.kernel == KernelOp::kReluGrad
              ? ascend_kernels::MakeReluGradLaunch(a.grad, a.x, a.out, nullptr,
                                                   &p_.relu_grad_tiling, p_.ub_size, p_.soc)
              : ascend_kernels::MakeThresholdGradV2DLaunch(a.grad, a.x, a.threshold, a.out, nullptr,
                                                           &p_.threshold_grad_tiling, p_.ub_size,
                                                           p_.soc);
      if (launch.block_dim == 0) throw std::runtime_error("no kernel runs this dtype here");
      launch.RunBlock(block);
    } else {
      RunStridedCopyBlock(*p_.out_copy, kernel_out_, p_.out, block);
    }
  }

 private:
  const StridedCopyPlan* Copy(int64_t step) const {
    if (step < copies_in_) return p_.grad_copy && step == 0 ? &*p_.grad_copy : &*p_.x_copy;
    return step - copies_in_ < p_.slices.count ? nullptr : &*p_.out_copy;
  }

  const ExecutorPlan& p_;
  const char* grad_;
  const char* x_;
  char* kernel_out_;
  int copies_in_;
};

// Runs step `step` to the end: its one block on this thread, more with the block workers.
std::string RunStep(const HostRun& run, int64_t step) {
  const uint32_t blocks = run.Blocks(step);
  if (blocks != 1) {
    return RunBlocksSynchronously(blocks, [&run, step](uint32_t b) { run.RunBlock(step, b); });
  }
  try {
    run.RunBlock(step, 0);
  } catch (const std::exception& e) {
    return e.what()[0] ? e.what() : "kernel block failed";
  } catch (...) {
    return "kernel block failed";
  }
  return {};
}

// A run on a HostStream: each step is launched from the previous one's done().
struct AsyncRun {
  AsyncRun(std::shared_ptr<ExecutorPlan> p, char* workspace, HostStream* s,
           std::function<void()> done)
      : plan(std::move(p)), run(*plan, workspace), stream(s), on_done(std::move(done)) {}
  std::shared_ptr<ExecutorPlan> plan;  // keeps the tilings and copy plans alive
  HostRun run;
  HostStream* stream;
  std::function<void()> on_done;
  std::atomic<bool> failed{false};
};

void LaunchFrom(const std::shared_ptr<AsyncRun>& r, int64_t step) {
  if (step == r->run.Steps() || r->failed.load()) {
    if (r->failed.load()) r->plan->run_status.store(ACLNN_ERR_RUNTIME_ERROR);
    EndRun(r->plan.get());
    if (r->on_done) r->on_done();
    return;
  }
  r->stream->Launch(
      r->run.Blocks(step),
      [r, step](uint32_t b) {
        if (r->failed.load()) return;
        try {
          r->run.RunBlock(step, b);
        } catch (...) {
          r->failed.store(true);
        }
      },
      [r, step] { LaunchFrom(r, step + 1); });
}

// Moves the plan's pointer into tensor `slot` by `delta` bytes (unsigned: wraps as addresses do).
void ShiftPlanPointer(ExecutorPlan* plan, int slot, uintptr_t delta) {
  auto shift = [delta](auto*& p) {
    using P = std::remove_reference_t<decltype(p)>;
    if (p != nullptr) p = reinterpret_cast<P>(reinterpret_cast<uintptr_t>(p) + delta);
  };
  if (slot == ascend_kernels::kOperandGrad) return shift(plan->grad);
  if (slot == ascend_kernels::kOperandX) return shift(plan->x);
  if (slot == ascend_kernels::kOperandThreshold) return shift(plan->threshold);
  shift(plan->out);
}

aclnnStatus SetTensorAddr(aclOpExecutor* executor, int slot, const char* api_name,
                          aclTensor* tensor, void* addr) {
  const auto api = [api_name] { return std::string(api_name) + ": "; };  // messages only
  if (executor == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, api() + "executor is null");
  if (tensor == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, api() + "tensor is null");
  const std::shared_ptr<ExecutorPlan> shared = LivePlan(executor);
  if (shared == nullptr) return FailNotLive(api().c_str());
  ExecutorPlan* plan = shared.get();
  std::lock_guard<std::mutex> lock(plan->bindings_mu);
  if (plan->destroyed) return FailNotLive(api().c_str());
  ExecutorBindings& b = plan->bindings;
  if (slot == ascend_kernels::kOperandThreshold && b.inputs < 3) {
    return Fail(
        ACLNN_ERR_PARAM_INVALID,
        api() + "index 2 is out of range (this plan has 2 inputs: its threshold is a scalar)");
  }
  if (b.runs_in_flight > 0) {
    return Fail(ACLNN_ERR_PARAM_INVALID, api() + "a run of this executor is still in flight");
  }
  TensorBinding& t = b.tensors[slot];
  if (!t.present) return ACLNN_SUCCESS;  // an empty plan reads and writes nothing
  if (tensor->dtype != t.view.dtype || tensor->shape != t.view.shape ||
      tensor->strides != t.view.strides || tensor->offset != t.view.offset) {
    return Fail(ACLNN_ERR_PARAM_INVALID,
                api() + kOperandNames[slot] + " of dtype " + DtypeName(tensor->dtype) +
                    " and shape " + ShapeString(tensor->shape) +
                    " is not the planned view (dtype " + DtypeName(t.view.dtype) + ", shape " +
                    ShapeString(t.view.shape) + ", the planned strides and offset)");
  }
  if (addr == nullptr) {
    return Fail(ACLNN_ERR_PARAM_NULLPTR, api() + kOperandNames[slot] + "'s address is null");
  }
  const uintptr_t planned = reinterpret_cast<uintptr_t>(t.view.data);
  const uintptr_t now = reinterpret_cast<uintptr_t>(addr);
  const uint64_t elem = DtypeSize(t.view.dtype);
  if (elem > 1 && now % elem != planned % elem) {
    return Fail(ACLNN_ERR_PARAM_INVALID,
                api() + kOperandNames[slot] + "'s address is not aligned like the planned one");
  }
  // The view's extent moves with its address; it must not wrap the address space.
  const auto begin_off = static_cast<intptr_t>(t.planned.begin - planned);
  const auto end_off = static_cast<intptr_t>(t.planned.end - planned);
  if ((begin_off < 0 && now < static_cast<uintptr_t>(-begin_off)) ||
      (end_off > 0 && now > UINTPTR_MAX - static_cast<uintptr_t>(end_off))) {
    return Fail(ACLNN_ERR_PARAM_INVALID,
                api() + kOperandNames[slot] + "'s extent at this address wraps around");
  }
  ShiftPlanPointer(plan, slot, now - t.data);
  const uintptr_t delta = now - planned;
  t.data = now;
  t.bounds = {t.planned.first + delta, t.planned.begin + delta, t.planned.end + delta};
  return ACLNN_SUCCESS;
}

}  // namespace

aclnnStatus Fail(aclnnStatus status, std::string message) {
  recent_error = std::move(message);
  return status;
}

const char* aclGetRecentErrMsg() { return recent_error.c_str(); }

aclOpExecutor* NewExecutor(std::shared_ptr<ExecutorPlan>* plan) {
  *plan = std::shared_ptr<ExecutorPlan>(new (std::nothrow) ExecutorPlan);
  auto* exec = *plan == nullptr ? nullptr : new (std::nothrow) aclOpExecutor;
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

std::shared_ptr<ExecutorPlan> LivePlan(const aclOpExecutor* executor) {
  std::lock_guard<std::mutex> lock(Live().mu);
  if (Live().set.count(executor) == 0) return nullptr;
  return executor->plan;
}

void ReleaseExecutor(aclOpExecutor* executor) {
  {
    std::lock_guard<std::mutex> lock(Live().mu);
    Live().set.erase(executor);
  }
  delete executor;
}

bool ExecutorMayRunAgain(ExecutorPlan& plan) {
  std::lock_guard<std::mutex> lock(plan.bindings_mu);
  return !plan.destroyed && (plan.repeatable || !plan.started);
}

void RecordBindings(aclOpExecutor* executor, const aclTensor* grad_output, const aclTensor* x,
                    const aclTensor* threshold, const aclTensor* out) {
  ExecutorPlan* plan = executor->plan.get();
  std::lock_guard<std::mutex> lock(plan->bindings_mu);
  ExecutorBindings& b = plan->bindings;
  b = ExecutorBindings{};
  b.inputs = threshold == nullptr ? 2 : 3;
  if (!plan->kernel) return;  // nothing is read or written
  const aclTensor* const tensors[kNumOperands] = {grad_output, x, threshold, out};
  std::string error;
  for (int i = 0; i < kNumOperands; ++i) {
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

aclnnStatus StartRun(void* workspace, uint64_t workspace_size, aclOpExecutor* executor,
                     std::shared_ptr<ExecutorPlan>* plan, char** base) {
  *base = nullptr;
  plan->reset();
  if (executor == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, "executor is null");
  std::shared_ptr<ExecutorPlan> shared = LivePlan(executor);
  if (shared == nullptr) return FailNotLive("");
  ExecutorPlan& p = *shared;
  std::lock_guard<std::mutex> lock(p.bindings_mu);
  if (p.destroyed) return FailNotLive("");  // a destroy between LivePlan and the lock
  if (aclnnStatus status = CheckRebinding(p); status != ACLNN_SUCCESS) return status;
  if (aclnnStatus status = PlaceWorkspace(p, workspace, workspace_size, base);
      status != ACLNN_SUCCESS) {
    return status;
  }
  if (p.started && !p.repeatable) {
    return Fail(ACLNN_ERR_PARAM_INVALID,
                "the executor has already run (an executor runs once unless made repeatable)");
  }
  p.started = true;
  ++p.bindings.runs_in_flight;
  *plan = std::move(shared);
  return ACLNN_SUCCESS;
}

void EndRun(ExecutorPlan* plan) {
  std::lock_guard<std::mutex> lock(plan->bindings_mu);
  if (--plan->bindings.runs_in_flight == 0 && plan->destroyed) plan->runs_ended.notify_all();
}

LaunchArgs LaunchAt(const ExecutorPlan& p, int64_t k, const char* grad, const char* x, char* out) {
  if (p.slices.count == 1) return {grad, x, p.threshold, out};
  int64_t off[kNumOperands];
  ascend_kernels::SliceOffsets(static_cast<uint64_t>(k), p.slices.sizes.size(), p.slices.sizes,
                               p.slices.strides, off);
  const int64_t elem = DtypeSize(p.dtype);
  return {
      grad + off[ascend_kernels::kOperandGrad] * elem, x + off[ascend_kernels::kOperandX] * elem,
      p.threshold + off[ascend_kernels::kOperandThreshold] *
                        static_cast<int64_t>(DtypeSize(p.threshold_grad_tiling.threshold.gm_dtype)),
      out + off[ascend_kernels::kOperandOut] * elem};
}

aclnnStatus aclnnThresholdBackward(void* workspace, uint64_t workspace_size,
                                   aclOpExecutor* executor, void* stream,
                                   std::function<void()> on_done) {
  char* base = nullptr;
  std::shared_ptr<ExecutorPlan> plan;
  if (aclnnStatus status = StartRun(workspace, workspace_size, executor, &plan, &base);
      status != ACLNN_SUCCESS) {
    return status;
  }
  if (stream != nullptr) {
    if (!plan->kernel) {
      EndRun(plan.get());
      if (on_done) on_done();
      return ACLNN_SUCCESS;
    }
    LaunchFrom(std::make_shared<AsyncRun>(plan, base, static_cast<HostStream*>(stream),
                                          std::move(on_done)),
               0);
    return ACLNN_SUCCESS;
  }
  struct EndOnReturn {
    ExecutorPlan* plan;
    ~EndOnReturn() { EndRun(plan); }
  } end_on_return{plan.get()};
  if (!plan->kernel) return ACLNN_SUCCESS;
  std::lock_guard<std::mutex> one_at_a_time(plan->sync_run_mu);
  const HostRun run(*plan, base);
  for (int64_t step = 0; step < run.Steps(); ++step) {
    if (std::string error = RunStep(run, step); !error.empty()) {
      plan->run_status.store(ACLNN_ERR_RUNTIME_ERROR);
      return Fail(ACLNN_ERR_RUNTIME_ERROR, "a kernel or copy block failed: " + error);
    }
  }
  return ACLNN_SUCCESS;
}

const char* aclnnThresholdBackwardKernelName(const aclOpExecutor* executor) {
  const std::shared_ptr<ExecutorPlan> plan = LivePlan(executor);
  return plan == nullptr || !plan->kernel ? "" : ascend_kernels::KernelOpName(*plan->kernel);
}

aclnnStatus aclnnThresholdBackwardRunStatus(const aclOpExecutor* executor) {
  if (executor == nullptr) return ACLNN_ERR_PARAM_NULLPTR;
  const std::shared_ptr<ExecutorPlan> plan = LivePlan(executor);
  return plan == nullptr ? ACLNN_ERR_PARAM_INVALID : plan->run_status.load();
}

// Reuse is enabled right after phase one, as CANN documents it: an executor that has run (or
// whose run is in flight) is refused, since its caller may already have released its memory.
aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor* executor) {
  constexpr const char* api = "aclSetAclOpExecutorRepeatable: ";
  if (executor == nullptr) {
    return Fail(ACLNN_ERR_PARAM_NULLPTR, std::string(api) + "executor is null");
  }
  const std::shared_ptr<ExecutorPlan> plan = LivePlan(executor);
  if (plan == nullptr) return FailNotLive(api);
  std::lock_guard<std::mutex> lock(plan->bindings_mu);
  if (plan->destroyed) return FailNotLive(api);
  if (plan->started && !plan->repeatable) {
    return Fail(ACLNN_ERR_PARAM_INVALID,
                std::string(api) +
                    "the executor has run; an executor is made repeatable before its first run "
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
// executor right after a failing call whose reason is still to be read). Runs admitted before the
// destroy keep reading the plan and the caller's tensors until they end, so it waits for them.
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
