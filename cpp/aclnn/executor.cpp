// aclnnThresholdBackwardGetWorkspaceSize (phase one: validate in docs/behaviour.md §2 order, choose the
// kernel, plan copies, tile, size the workspace) and aclnnThresholdBackward (phase two: run the
// planned launches, synchronously or in order on a HostStream).
#include "aclnn/executor.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "ascend_kernels/host_launch.h"
#include "aclnn/host_stream.h"
#include "tiling/relu_grad_tiling.h"
#include "aclnn/soc_dtypes.h"
#include "aclnn/tensor.h"
#include "tiling/threshold_grad_v2_d_tiling.h"
#include "aclnn/threshold_params.h"
#include "aclnn/platform_check.h"
#include "aclnn/view_bounds.h"
#include "aclnn/workspace.h"

namespace jax_threshold::aclnn {
namespace {

using ascend_kernels::KernelDType;

constexpr size_t kMaxRank = 8;

thread_local std::string recent_error;

aclnnStatus Fail(aclnnStatus status, std::string message) {
  recent_error = std::move(message);
  return status;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

enum class BroadcastResult { kOk, kIncompatible, kOverflow };

// NumPy broadcasting. kOverflow: the shapes broadcast, but the result has more elements than
// int64 holds.
BroadcastResult BroadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                std::vector<int64_t>* out) {
  const size_t rank = std::max(a.size(), b.size());
  out->assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return BroadcastResult::kIncompatible;
    (*out)[i] = da == 1 ? db : da;
  }
  int64_t n;
  return CheckedNumElements(*out, &n) ? BroadcastResult::kOk : BroadcastResult::kOverflow;
}

// Strides of `t` seen with the broadcast shape (rank `rank`): 0 along broadcast dims.
std::vector<int64_t> BroadcastStrides(const aclTensor& t, const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 0);
  const size_t lead = shape.size() - t.shape.size();
  for (size_t i = 0; i < t.shape.size(); ++i) {
    strides[lead + i] = t.shape[i] == 1 ? 0 : t.strides[i];
  }
  return strides;
}

// Largest byte count phase one plans: anything larger cannot be one allocation (ptrdiff_t).
constexpr uint64_t kMaxPlannedBytes = static_cast<uint64_t>(INT64_MAX);

// v rounded up to kWorkspaceAlignment; false if that passes kMaxPlannedBytes.
bool AlignUp(uint64_t v, uint64_t* out) {
  if (v > kMaxPlannedBytes - (kWorkspaceAlignment - 1)) return false;
  *out = (v + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
  return true;
}

// One step of phase two: block_dim independent blocks.
struct Step {
  const char* name;
  uint32_t block_dim;
  std::function<void(uint32_t)> run_block;
};

// The kernels run under the AscendC rules of the executor's SoC (cpu_ascendc/soc_rules.h).
ascend_kernels::KernelSoc KernelSocOf(SocVersion soc) {
  static_assert(static_cast<int>(ascend_kernels::KernelSoc::kAscend910) == static_cast<int>(SocVersion::kAscend910) &&
                    static_cast<int>(ascend_kernels::KernelSoc::kAscend910B) == static_cast<int>(SocVersion::kAscend910B) &&
                    static_cast<int>(ascend_kernels::KernelSoc::kAscend950) == static_cast<int>(SocVersion::kAscend950) &&
                    static_cast<int>(ascend_kernels::KernelSoc::kHost) == static_cast<int>(SocVersion::kHost),
                "KernelSoc values are SocVersion's");
  return static_cast<ascend_kernels::KernelSoc>(soc);
}

std::vector<Step> BuildSteps(const std::shared_ptr<ExecutorPlan>& plan, char* workspace) {
  ExecutorPlan* p = plan.get();
  std::vector<Step> steps;
  const char* grad = p->grad;
  const char* x = p->x;
  char* out = p->out;
  if (p->grad_copy) {
    char* dst = workspace + p->grad_ws_offset;
    steps.push_back({"MaterializeGradOutput", p->grad_copy->block_dim,
                     [p, src = p->grad, dst](uint32_t b) {
                       RunStridedCopyBlock(*p->grad_copy, src, dst, b);
                     }});
    grad = dst;
  }
  if (p->x_copy) {
    char* dst = workspace + p->x_ws_offset;
    steps.push_back({"MaterializeX", p->x_copy->block_dim, [p, src = p->x, dst](uint32_t b) {
                       RunStridedCopyBlock(*p->x_copy, src, dst, b);
                     }});
    x = dst;
  }
  char* kernel_out = p->out_copy ? workspace + p->out_ws_offset : out;
  void* library_ws = workspace == nullptr ? nullptr : workspace + p->library_ws_offset;
  ascend_kernels::HostLaunch launch =
      p->kernel == KernelKind::kReluGrad
          ? ascend_kernels::MakeReluGradLaunch(p->dtype, grad, x, kernel_out, library_ws,
                                               &p->relu_grad_tiling, p->ub_size, KernelSocOf(p->soc))
          : ascend_kernels::MakeThresholdGradV2DLaunch(p->dtype, grad, x, kernel_out, library_ws,
                                                       &p->threshold_grad_tiling, p->ub_size,
                                                       KernelSocOf(p->soc));
  steps.push_back({KernelKindName(p->kernel), launch.block_dim, std::move(launch.run_block)});
  if (p->out_copy) {
    steps.push_back({"CopyToOut", p->out_copy->block_dim,
                     [p, src = kernel_out, dst = out](uint32_t b) {
                       RunStridedCopyBlock(*p->out_copy, src, dst, b);
                     }});
  }
  return steps;
}

// State of an asynchronous run: the steps are launched one after another, each from the
// previous one's done().
struct AsyncRun {
  std::shared_ptr<ExecutorPlan> plan;  // keeps tilings and copy plans alive
  std::vector<Step> steps;
  HostStream* stream;
  std::function<void()> on_done;
  std::atomic<bool> failed{false};
  std::mutex error_mu;
  std::string error;
};

void LaunchFrom(const std::shared_ptr<AsyncRun>& run, size_t i) {
  if (i == run->steps.size() || run->failed.load()) {
    if (run->failed.load()) run->plan->run_status.store(ACLNN_ERR_RUNTIME_ERROR);
    if (run->on_done) run->on_done();
    return;
  }
  Step* step = &run->steps[i];
  run->stream->Launch(
      step->block_dim,
      [run, step](uint32_t b) {
        if (run->failed.load()) return;
        try {
          step->run_block(b);
        } catch (const std::exception& e) {
          std::lock_guard<std::mutex> lock(run->error_mu);
          if (!run->failed.exchange(true)) run->error = e.what();
        } catch (...) {
          run->failed.store(true);
        }
      },
      [run, i] { LaunchFrom(run, i + 1); });
}

}  // namespace

const char* KernelKindName(KernelKind kind) {
  switch (kind) {
    case KernelKind::kThresholdGradV2D: return "ThresholdGradV2D";
    case KernelKind::kReluGrad: return "ReluGrad";
    default: return "";
  }
}

const char* aclGetRecentErrMsg() { return recent_error.c_str(); }

aclnnStatus aclnnThresholdBackwardGetWorkspaceSize(const aclTensor* grad_output, const aclTensor* x,
                                                   const aclScalar* threshold, aclTensor* out,
                                                   uint64_t* workspace_size,
                                                   aclOpExecutor** executor,
                                                   const PlatformInfo* platform) {
  // 1. threshold, out, workspace_size (and the executor out-parameter).
  if (threshold == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, "threshold is null");
  if (out == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, "out is null");
  if (workspace_size == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, "workspace_size is null");
  if (executor == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, "executor is null");
  *executor = nullptr;
  // 2. grad_output, x.
  if (grad_output == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, "grad_output is null");
  if (x == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, "x is null");

  const PlatformInfo info = platform != nullptr ? *platform : PlatformInfo{};
  // 3. dtypes.
  if (threshold->kind == aclScalar::Kind::kInvalid) {
    return Fail(ACLNN_ERR_PARAM_INVALID, std::string("threshold has dtype ") +
                                             DataTypeName(threshold->dtype) +
                                             ", expected an integer or floating-point scalar");
  }
  const bool zero = threshold->IsExactlyZero();
  for (const auto& [name, t] : {std::pair{"grad_output", grad_output}, std::pair{"x", x}}) {
    if (!SocSupportsDtype(info.soc, t->dtype, zero)) {
      return Fail(ACLNN_ERR_PARAM_INVALID,
                  std::string(name) + " has dtype " + DataTypeName(t->dtype) +
                      ", not supported on " + SocName(info.soc) +
                      (info.soc == SocVersion::kAscend950 && !zero
                           ? " with a nonzero threshold"
                           : "") +
                      (SocRefusalReason(info.soc) != nullptr
                           ? std::string(": ") + SocRefusalReason(info.soc)
                           : " (supported: " + SocDtypeList(info.soc, zero) + ")"));
    }
  }
  if (grad_output->dtype != x->dtype) {
    return Fail(ACLNN_ERR_PARAM_INVALID, std::string("grad_output dtype ") +
                                             DataTypeName(grad_output->dtype) +
                                             " differs from x dtype " + DataTypeName(x->dtype));
  }
  if (out->dtype != x->dtype) {
    return Fail(ACLNN_ERR_PARAM_INVALID, std::string("out dtype ") + DataTypeName(out->dtype) +
                                             " differs from x dtype " + DataTypeName(x->dtype));
  }
  // 4. ranks.
  for (const auto& [name, t] : {std::pair{"grad_output", grad_output}, std::pair{"x", x}}) {
    if (t->shape.size() > kMaxRank) {
      return Fail(ACLNN_ERR_PARAM_INVALID, std::string(name) + " has rank " +
                                               std::to_string(t->shape.size()) +
                                               ", more than 8");
    }
  }
  // 5. broadcast.
  std::vector<int64_t> shape;
  switch (BroadcastShapes(grad_output->shape, x->shape, &shape)) {
    case BroadcastResult::kIncompatible:
      return Fail(ACLNN_ERR_PARAM_INVALID, "grad_output shape " +
                                               ShapeString(grad_output->shape) + " and x shape " +
                                               ShapeString(x->shape) + " do not broadcast");
    case BroadcastResult::kOverflow:
      return Fail(ACLNN_ERR_PARAM_INVALID,
                  "grad_output shape " + ShapeString(grad_output->shape) + " and x shape " +
                      ShapeString(x->shape) + " broadcast to " + ShapeString(shape) +
                      ", whose element count overflows int64");
    case BroadcastResult::kOk:
      break;
  }
  // 6. out shape.
  if (out->shape != shape) {
    return Fail(ACLNN_ERR_PARAM_INVALID, "out shape " + ShapeString(out->shape) +
                                             " is not the broadcast shape " + ShapeString(shape));
  }
  // Platform parameters: checked before anything is planned, empty tensors included.
  std::string error;
  if (!ValidatePlatform(info, &error)) return Fail(ACLNN_ERR_PARAM_INVALID, error);

  // 7. empty: nothing runs. (The element counts fit: each shape's dims are those of the
  // broadcast shape or 1, and step 5 checked its product.)
  int64_t n_grad = 0, n_x = 0, n_signed = 0;
  CheckedNumElements(grad_output->shape, &n_grad);
  CheckedNumElements(x->shape, &n_x);
  CheckedNumElements(shape, &n_signed);
  auto make_executor = [](std::shared_ptr<ExecutorPlan>* plan) -> aclOpExecutor* {
    *plan = std::shared_ptr<ExecutorPlan>(new (std::nothrow) ExecutorPlan);
    if (*plan == nullptr) return nullptr;
    auto* exec = new (std::nothrow) aclOpExecutor;
    if (exec != nullptr) exec->plan = *plan;
    return exec;
  };
  std::shared_ptr<ExecutorPlan> plan;
  if (n_x == 0 || n_grad == 0) {
    aclOpExecutor* exec = make_executor(&plan);
    if (exec == nullptr) return Fail(ACLNN_ERR_INNER_CREATE_EXECUTOR, "cannot create the executor");
    plan->kernel = KernelKind::kNone;
    *workspace_size = 0;
    *executor = exec;
    return ACLNN_SUCCESS;
  }
  const aclTensor* const tensors[3] = {grad_output, x, out};
  const char* const names[3] = {"grad_output", "x", "out"};
  ViewBounds bounds[3];
  for (int i = 0; i < 3; ++i) {
    if (tensors[i]->data == nullptr) {
      return Fail(ACLNN_ERR_PARAM_NULLPTR, std::string(names[i]) + " data is null");
    }
    if (!ComputeViewBounds(*tensors[i], names[i], &bounds[i], &error)) {
      return Fail(ACLNN_ERR_PARAM_INVALID, error);
    }
  }
  // Every byte count below: n elements of `elem` bytes, three workspace buffers at most.
  const uint64_t n = static_cast<uint64_t>(n_signed);
  const uint64_t elem = DataTypeSize(x->dtype);
  uint64_t buffer_bytes;
  if (__builtin_mul_overflow(n, elem, &buffer_bytes) || !AlignUp(buffer_bytes, &buffer_bytes)) {
    return Fail(ACLNN_ERR_PARAM_INVALID, "out shape " + ShapeString(shape) + " of " +
                                             DataTypeName(x->dtype) +
                                             " holds more bytes than can be addressed");
  }

  aclOpExecutor* exec = make_executor(&plan);
  if (exec == nullptr) return Fail(ACLNN_ERR_INNER_CREATE_EXECUTOR, "cannot create the executor");
  auto cleanup = [exec](aclnnStatus status, std::string message) {
    delete exec;
    return Fail(status, std::move(message));
  };

  // 8. kernel.
  plan->kernel = zero ? KernelKind::kReluGrad : KernelKind::kThresholdGradV2D;
  plan->dtype = static_cast<KernelDType>(x->dtype);  // KernelDType values are aclDataType's
  plan->soc = info.soc;
  plan->ub_size = info.ub_size;
  plan->num_elements = n;
  bool tiled;
  if (plan->kernel == KernelKind::kReluGrad) {
    tiled = ReluGradTiling(n, plan->dtype, info.ub_size, info.core_num,
                           &plan->relu_grad_tiling.tiling, &error);
  } else {
    tiled = ThresholdGradV2DTiling(n, plan->dtype, info.ub_size, info.core_num,
                                   &plan->threshold_grad_tiling.tiling, &error);
    plan->threshold_grad_tiling.threshold = MakeThresholdParams(*threshold, plan->dtype);
  }
  if (!tiled) return cleanup(ACLNN_ERR_INNER_TILING_ERROR, error);

  // Copies and workspace layout. An input gets a contiguous copy in the workspace unless it is
  // already contiguous in the broadcast shape and aligned to its element. out gets a workspace
  // buffer and a copy into its view unless it is contiguous and aligned. The copies move bytes
  // (memcpy), so they accept any alignment. Overlap: the steps run one after another, so with
  // a copy into out every input has been read before out is written; when the kernel writes
  // out directly, an input overlapping out is copied first unless it is exactly out's view (in
  // place: each element is read before it is written), which gives copy semantics.
  const std::vector<int64_t> contiguous = ContiguousStrides(shape);
  auto aligned = [elem](const ViewBounds& b) { return b.first % elem == 0; };
  uint64_t ws = 0;
  auto take = [&ws, buffer_bytes](uint64_t* at) {
    *at = ws;
    return !__builtin_add_overflow(ws, buffer_bytes, &ws) && ws <= kMaxPlannedBytes;
  };
  plan->grad = grad_output->First();
  plan->x = x->First();
  plan->out = out->First();
  const bool out_direct = out->IsContiguous() && aligned(bounds[2]);
  auto needs_copy = [&](const aclTensor& t, int64_t count, const ViewBounds& b) {
    const bool direct = static_cast<uint64_t>(count) == n && t.IsContiguous() && aligned(b);
    return !direct || (out_direct && Overlaps(b, bounds[2]) && !SameView(t, *out));
  };
  bool sized = true;
  if (needs_copy(*grad_output, n_grad, bounds[0])) {
    plan->grad_copy = PlanStridedCopy(shape, BroadcastStrides(*grad_output, shape), contiguous,
                                      elem, /*serial=*/false);
    sized = sized && take(&plan->grad_ws_offset);
  }
  if (needs_copy(*x, n_x, bounds[1])) {
    plan->x_copy =
        PlanStridedCopy(shape, BroadcastStrides(*x, shape), contiguous, elem, /*serial=*/false);
    sized = sized && take(&plan->x_ws_offset);
  }
  if (!out_direct) {
    // An out view whose elements overlap is written by one block, so the writes do not race.
    plan->out_copy = PlanStridedCopy(shape, contiguous, out->strides, elem,
                                     /*serial=*/!IsNonOverlapping(out->shape, out->strides));
    sized = sized && take(&plan->out_ws_offset);
  }
  plan->library_ws_offset = ws;
  sized = sized && !__builtin_add_overflow(ws, kHostLibraryWorkspace, &ws) &&
          ws <= kMaxPlannedBytes;
  if (!sized || !PlanWorkspace(ws, kMaxPlannedBytes, bounds, &plan->workspace)) {
    return cleanup(ACLNN_ERR_PARAM_INVALID,
                   "the workspace for out shape " + ShapeString(shape) + " of " +
                       DataTypeName(x->dtype) + " (contiguous copies of strided, broadcast, " +
                       "unaligned or overlapping tensors) overflows a 64-bit byte count");
  }
  plan->workspace_size = plan->workspace.size;

  *workspace_size = plan->workspace.size;
  *executor = exec;
  return ACLNN_SUCCESS;
}

aclnnStatus aclnnThresholdBackward(void* workspace, uint64_t workspace_size,
                                   aclOpExecutor* executor, void* stream,
                                   std::function<void()> on_done) {
  if (executor == nullptr || executor->plan == nullptr) {
    return Fail(ACLNN_ERR_PARAM_NULLPTR, "executor is null");
  }
  std::shared_ptr<ExecutorPlan> plan = executor->plan;
  char* base = nullptr;
  std::string error;
  if (aclnnStatus status = PlaceWorkspace(plan->workspace, workspace, workspace_size, &base, &error);
      status != ACLNN_SUCCESS) {
    return Fail(status, error);
  }
  if (plan->started.exchange(true)) {
    return Fail(ACLNN_ERR_PARAM_INVALID, "the executor has already run (an executor runs once)");
  }
  if (plan->kernel == KernelKind::kNone) {
    if (stream != nullptr && on_done) on_done();
    return ACLNN_SUCCESS;
  }
  std::vector<Step> steps;
  try {
    steps = BuildSteps(plan, base);
  } catch (const std::exception& e) {
    plan->run_status.store(ACLNN_ERR_RUNTIME_ERROR);
    return Fail(ACLNN_ERR_RUNTIME_ERROR, std::string("kernel launch failed: ") + e.what());
  }

  if (stream == nullptr) {
    for (const Step& step : steps) {
      std::string error = RunBlocksSynchronously(step.block_dim, step.run_block);
      if (!error.empty()) {
        plan->run_status.store(ACLNN_ERR_RUNTIME_ERROR);
        return Fail(ACLNN_ERR_RUNTIME_ERROR, std::string(step.name) + " failed: " + error);
      }
    }
    return ACLNN_SUCCESS;
  }
  auto run = std::make_shared<AsyncRun>();
  run->plan = plan;
  run->steps = std::move(steps);
  run->stream = static_cast<HostStream*>(stream);
  run->on_done = std::move(on_done);
  LaunchFrom(run, 0);
  return ACLNN_SUCCESS;
}

aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor* executor) {
  delete executor;  // an asynchronous run in flight holds its own reference to the plan
  return ACLNN_SUCCESS;
}

const char* aclnnThresholdBackwardKernelName(const aclOpExecutor* executor) {
  const ExecutorPlan* plan = GetExecutorPlan(executor);
  return plan == nullptr ? "" : KernelKindName(plan->kernel);
}

aclnnStatus aclnnThresholdBackwardRunStatus(const aclOpExecutor* executor) {
  const ExecutorPlan* plan = GetExecutorPlan(executor);
  return plan == nullptr ? ACLNN_ERR_PARAM_NULLPTR : plan->run_status.load();
}

}  // namespace jax_threshold::aclnn
