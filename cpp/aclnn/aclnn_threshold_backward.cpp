// The op_api of threshold_backward: aclnnThresholdBackwardGetWorkspaceSize (phase one: validate in
// docs/behaviour.md §2 order, choose the kernel, plan copies, tile, size the workspace), its
// threshold-tensor forms (the same plan for one slice, run once per threshold element), and
// aclnnThresholdBackward (phase two: run the planned launches, synchronously or in order on a
// HostStream).
#include "aclnn/executor.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "aclnn/broadcast.h"
#include "aclnn/denormal_mode.h"
#include "aclnn/host_stream.h"
#include "aclnn/soc.h"
#include "aclnn/tensor.h"
#include "aclnn/threshold_params.h"
#include "aclnn/view_bounds.h"
#include "aclnn/workspace.h"
#include "ascend_kernels/dtype_soc_table.h"
#include "ascend_kernels/host_launch.h"
#include "common/op_host/elementwise_tiling.h"

namespace jax_threshold::aclnn {
namespace {

thread_local std::string recent_error;

}  // namespace

aclnnStatus Fail(aclnnStatus status, std::string message) {
  recent_error = std::move(message);
  return status;
}

namespace {

using ascend_kernels::KernelOp;

// Steps 1 and 2 of phase one (docs/behaviour.md §2), for a threshold scalar or tensor alike:
// threshold, out, workspace_size and the executor out-parameter, then grad_output and x.
aclnnStatus CheckPointers(const void* threshold, const aclTensor* grad_output, const aclTensor* x,
                          const aclTensor* out, const uint64_t* workspace_size,
                          aclOpExecutor** executor) {
  if (threshold == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, "threshold is null");
  if (out == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, "out is null");
  if (workspace_size == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, "workspace_size is null");
  if (executor == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, "executor is null");
  *executor = nullptr;
  if (grad_output == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, "grad_output is null");
  if (x == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, "x is null");
  return ACLNN_SUCCESS;
}

// Step 5's refusal, in the same words whatever the threshold.
aclnnStatus FailNotBroadcasting(const std::vector<int64_t>& grad_output,
                                const std::vector<int64_t>& x) {
  return Fail(ACLNN_ERR_PARAM_INVALID, "grad_output shape " + ShapeString(grad_output) +
                                           " and x shape " + ShapeString(x) + " do not broadcast");
}

constexpr size_t kMaxRank = 8;
static_assert(kMaxRank <= ascend_kernels::kMaxBroadcastRank,
              "the kernel's broadcast tiling holds every tensor rank phase one takes");

std::vector<int64_t> BroadcastStrides(const aclTensor& t, const std::vector<int64_t>& shape) {
  return aclnn::BroadcastStrides(t.shape, t.strides, shape);
}

// A call in out's index space: size-1 dims dropped, adjacent dims merged where every one of its K
// operands is either contiguous across both or broadcast along both. Stride 0: broadcast.
template <size_t K>
struct Layout {
  std::vector<int64_t> sizes;
  std::vector<std::array<int64_t, K>> strides;
};

template <size_t K>
Layout<K> MakeLayout(const std::vector<int64_t>& out,
                     const std::array<std::vector<int64_t>, K>& strides) {
  Layout<K> layout;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    std::array<int64_t, K> s;
    for (size_t k = 0; k < K; ++k) s[k] = strides[k][d];
    if (!layout.sizes.empty()) {
      auto& prev = layout.strides.back();
      bool mergeable = true;
      for (size_t k = 0; k < K; ++k) {
        int64_t outer;
        mergeable &= (prev[k] == 0) == (s[k] == 0) &&
                     !__builtin_mul_overflow(s[k], out[d], &outer) && prev[k] == outer;
      }
      if (mergeable) {
        layout.sizes.back() *= out[d];
        prev = s;
        continue;
      }
    }
    layout.sizes.push_back(out[d]);
    layout.strides.push_back(s);
  }
  return layout;
}

// The kernel's broadcast read of two inputs of `grad_shape` and `x_shape`, each contiguous in its
// own shape, over out's `shape` (kernel_args.h): their layout in out's index space. False when it
// has no dims (out has one element) or more than kMaxBroadcastRank.
bool PlanInputBroadcast(const std::vector<int64_t>& shape, const std::vector<int64_t>& grad_shape,
                        const std::vector<int64_t>& x_shape,
                        ascend_kernels::InputBroadcastTiling* tiling) {
  const Layout<2> layout = MakeLayout<2>(
      shape, {aclnn::BroadcastStrides(grad_shape, ContiguousStrides(grad_shape), shape),
              aclnn::BroadcastStrides(x_shape, ContiguousStrides(x_shape), shape)});
  const size_t rank = layout.sizes.size();
  if (rank == 0 || rank > ascend_kernels::kMaxBroadcastRank) return false;
  *tiling = {};
  tiling->rank = rank;
  for (size_t d = 0; d < rank; ++d) {
    tiling->sizes[d] = static_cast<uint64_t>(layout.sizes[d]);
    for (int j = 0; j < 2; ++j) tiling->strides[j][d] = static_cast<uint64_t>(layout.strides[d][j]);
  }
  return true;
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
  const char* name;  // for messages
  bool kernel;       // the kernel's launch (else a copy, or a batch's ranges)
  uint32_t block_dim;
  std::function<void(uint32_t)> run_block;
};

// One run of the plan's kernel: the whole tensors, or one slice of a threshold batch.
struct SliceArgs {
  const char* grad;
  const char* x;
  char* out;
  KernelOp kernel;
  const ascend_kernels::ThresholdGradV2DTilingData* threshold_grad_tiling;
  const char* device_threshold;  // the device threshold's element (device-threshold plans)
};

SliceArgs WholeTensors(const ExecutorPlan& p) {
  return {p.grad, p.x, p.out, *p.kernel, &p.threshold_grad_tiling, p.device_threshold};
}

// Slice k of p's batch, with its threshold's kernel; ThresholdGradV2D's tiling (the plan's with
// the slice's threshold) goes to *tiling, which must live as long as the slice runs. In a
// device-threshold plan the slice is ThresholdGradV2D with the plan's tiling and the address of
// its threshold element, which is not read here.
SliceArgs BatchSlice(const ExecutorPlan& p, int64_t k,
                     ascend_kernels::ThresholdGradV2DTilingData* tiling) {
  ScopedDenormalsAsNumbers guard;  // a subnormal threshold is read and narrowed here
  const ThresholdBatch& b = *p.batch;
  const ThresholdBatch::Slice slice = b.At(k, p.grad, p.x, p.out);
  SliceArgs s{slice.grad, slice.x, slice.out, KernelOp::kReluGrad, tiling, nullptr};
  if (p.HasDeviceThreshold()) {
    s.kernel = KernelOp::kThresholdGradV2D;
    s.threshold_grad_tiling = &p.threshold_grad_tiling;
    s.device_threshold = slice.threshold;
    return s;
  }
  aclScalar threshold;
  LoadScalar(slice.threshold, b.threshold_dtype, &threshold);
  if (!threshold.IsExactlyZero()) {
    s.kernel = KernelOp::kThresholdGradV2D;
    *tiling = p.threshold_grad_tiling;
    tiling->threshold = MakeThresholdParams(threshold, p.dtype);
  }
  return s;
}

std::vector<Step> BuildSteps(const ExecutorPlan* p, char* workspace, const SliceArgs& s) {
  std::vector<Step> steps;
  const char* grad = s.grad;
  const char* x = s.x;
  char* out = s.out;
  if (p->grad_copy) {
    char* dst = workspace + p->grad_ws_offset;
    steps.push_back(
        {"MaterializeGradOutput", false, p->grad_copy->block_dim,
         [p, src = s.grad, dst](uint32_t b) { RunStridedCopyBlock(*p->grad_copy, src, dst, b); }});
    grad = dst;
  }
  if (p->x_copy) {
    char* dst = workspace + p->x_ws_offset;
    steps.push_back({"MaterializeX", false, p->x_copy->block_dim, [p, src = s.x, dst](uint32_t b) {
                       RunStridedCopyBlock(*p->x_copy, src, dst, b);
                     }});
    x = dst;
  }
  char* kernel_out = p->out_copy ? workspace + p->out_ws_offset : out;
  void* library_workspace = workspace == nullptr ? nullptr : workspace + p->library_ws_offset;
  ascend_kernels::HostLaunch launch =
      s.kernel == KernelOp::kReluGrad
          ? ascend_kernels::MakeReluGradLaunch(grad, x, kernel_out, library_workspace,
                                               &p->relu_grad_tiling, p->ub_size, p->soc)
          : ascend_kernels::MakeThresholdGradV2DLaunch(grad, x, s.device_threshold, kernel_out,
                                                       library_workspace, s.threshold_grad_tiling,
                                                       p->ub_size, p->soc);
  steps.push_back({ascend_kernels::KernelOpName(s.kernel), true, launch.block_dim,
                   std::move(launch.run_block)});
  if (p->out_copy) {
    steps.push_back(
        {"CopyToOut", false, p->out_copy->block_dim, [p, src = kernel_out, dst = out](uint32_t b) {
           RunStridedCopyBlock(*p->out_copy, src, dst, b);
         }});
  }
  return steps;
}

// Runs every block of `steps` on the calling thread, in order (a small slice of a batch).
void RunStepsInline(const std::vector<Step>& steps) {
  for (const Step& step : steps) {
    for (uint32_t b = 0; b < step.block_dim; ++b) step.run_block(b);
  }
}

// Block r of a batch of small slices: its range of whole slices, one after another, in its own
// part of the workspace.
void RunSliceRange(const ExecutorPlan* p, char* workspace, uint32_t r) {
  const ThresholdBatch& b = *p->batch;
  char* range_workspace = workspace == nullptr ? nullptr : workspace + r * b.range_workspace_bytes;
  const int64_t begin = b.count * r / b.ranges, end = b.count * (r + 1) / b.ranges;
  const bool copies = p->grad_copy || p->x_copy || p->out_copy;
  for (int64_t k = begin; k < end; ++k) {
    ascend_kernels::ThresholdGradV2DTilingData tiling;
    const SliceArgs s = BatchSlice(*p, k, &tiling);
    if (copies) {
      RunStepsInline(BuildSteps(p, range_workspace, s));
      continue;
    }
    // The common small slice: just the kernel, without building its steps.
    void* library_workspace =
        range_workspace == nullptr ? nullptr : range_workspace + p->library_ws_offset;
    const ascend_kernels::HostLaunch launch =
        s.kernel == KernelOp::kReluGrad
            ? ascend_kernels::MakeReluGradLaunch(s.grad, s.x, s.out, library_workspace,
                                                 &p->relu_grad_tiling, p->ub_size, p->soc)
            : ascend_kernels::MakeThresholdGradV2DLaunch(s.grad, s.x, s.device_threshold, s.out,
                                                         library_workspace, s.threshold_grad_tiling,
                                                         p->ub_size, p->soc);
    for (uint32_t b = 0; b < launch.block_dim; ++b) launch.run_block(b);
  }
}

// The steps of the plan's run: the whole tensors; for a batch of small slices, every range of
// whole slices as one step; for a batch of large slices, each step of a slice launched for all
// slices at once (block i: slice i / d, that slice's block i % d of the step's d blocks), each
// slice in its own part of the workspace. So a run is at most four launches, whatever the batch.
std::vector<Step> PlanSteps(const ExecutorPlan* p, char* workspace) {
  if (!p->batch) return BuildSteps(p, workspace, WholeTensors(*p));
  const ThresholdBatch& b = *p->batch;
  if (b.ranges > 0) {
    return {Step{"ThresholdBatch", false, b.ranges,
                 [p, workspace](uint32_t r) { RunSliceRange(p, workspace, r); }}};
  }
  ascend_kernels::ThresholdGradV2DTilingData tiling;
  std::vector<Step> steps = BuildSteps(p, workspace, BatchSlice(*p, 0, &tiling));
  for (size_t j = 0; j < steps.size(); ++j) {
    // The kernel step: as many blocks as the larger of the two kernels' tilings (slices pick
    // their kernel by their threshold).
    const uint32_t d =
        steps[j].kernel ? static_cast<uint32_t>(std::max(p->relu_grad_tiling.tiling.block_dim,
                                                         p->threshold_grad_tiling.tiling.block_dim))
                        : steps[j].block_dim;
    steps[j].block_dim = static_cast<uint32_t>(b.count) * d;  // phase one checked the product
    steps[j].run_block = [p, workspace, j, d](uint32_t i) {
      const int64_t k = i / d;
      char* slice_workspace =
          workspace == nullptr ? nullptr : workspace + k * p->batch->range_workspace_bytes;
      ascend_kernels::ThresholdGradV2DTilingData slice_tiling;
      const std::vector<Step> slice =
          BuildSteps(p, slice_workspace, BatchSlice(*p, k, &slice_tiling));
      if (i % d < slice[j].block_dim) slice[j].run_block(i % d);
    };
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
    EndRun(run->plan.get());
    if (run->on_done) run->on_done();
    return;
  }
  Step* step = &run->steps[i];
  run->stream->Launch(
      step->block_dim,
      [run, step](uint32_t b) {
        if (run->failed.load()) return;
        try {
          ScopedDenormalsAsNumbers guard;
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

ThresholdBatch::Slice ThresholdBatch::At(int64_t k, const char* grad, const char* x,
                                         char* out) const {
  int64_t off[ascend_kernels::kNumOperands];
  ascend_kernels::SliceOffsets(static_cast<uint64_t>(k), sizes.size(), sizes, strides, off);
  const auto bytes = [this](int64_t elements) {
    return elements * static_cast<int64_t>(element_bytes);
  };
  return {
      grad + bytes(off[ascend_kernels::kOperandGrad]), x + bytes(off[ascend_kernels::kOperandX]),
      threshold + off[ascend_kernels::kOperandThreshold] * static_cast<int64_t>(threshold_bytes),
      out + bytes(off[ascend_kernels::kOperandOut])};
}

// The kernel's tiling for `op` over the plan's element count and platform, into `plan`; false
// with a message when it cannot be made.
static bool TileKernel(KernelOp op, uint32_t core_num, ExecutorPlan* plan, std::string* error) {
  return ascend_kernels::ElementwiseTilingFor(
      plan->num_elements, plan->dtype, plan->ub_size, core_num,
      op == KernelOp::kReluGrad ? &plan->relu_grad_tiling.tiling
                                : &plan->threshold_grad_tiling.tiling,
      error);
}

const char* aclGetRecentErrMsg() { return recent_error.c_str(); }

namespace {

// The threshold of a plan of whole tensors: a value phase one reads (it picks the kernel and goes
// into the tiling), or a device threshold that ThresholdGradV2D reads at Init (its dtype and first
// element). Neither (an empty call's host threshold tensor): x is checked with the nonzero
// threshold's dtype list, as for a device threshold.
struct PlannedThreshold {
  const aclScalar* value = nullptr;
  const aclTensor* device = nullptr;
};

// The threshold dtypes the kernel reads for x's dtype (the dtype table's), named.
std::string DeviceThresholdDtypes(aclDataType x) {
  std::string names;
  for (const ascend_kernels::DtypeRow& row : ascend_kernels::kDtypes) {
    if (ascend_kernels::TakesThresholdDtype(x, static_cast<int32_t>(row.dtype))) {
      names += (names.empty() ? "" : ", ") + std::string(row.name);
    }
  }
  return names;
}

// Phase one from step 3 on (docs/behaviour.md §2), for tensors whose pointers step 1 and 2
// checked: the plan of one run over the whole tensors.
aclnnStatus PlanWholeTensors(const aclTensor* grad_output, const aclTensor* x, aclTensor* out,
                             const PlannedThreshold& threshold, uint64_t* workspace_size,
                             aclOpExecutor** executor, const PlatformInfo* platform) {
  const PlatformInfo info = WithDefaults(platform != nullptr ? *platform : PlatformInfo{});
  // 3. dtypes.
  if (threshold.value != nullptr && threshold.value->kind == aclScalar::Kind::kInvalid) {
    return Fail(ACLNN_ERR_PARAM_INVALID, std::string("threshold has dtype ") +
                                             DtypeName(threshold.value->dtype) +
                                             ", expected an integer or floating-point scalar");
  }
  const bool zero = threshold.value != nullptr && threshold.value->IsExactlyZero();
  for (const auto& [name, t] : {std::pair{"grad_output", grad_output}, std::pair{"x", x}}) {
    if (!SocSupportsDtype(info.soc, t->dtype, zero)) {
      return Fail(
          ACLNN_ERR_PARAM_INVALID,
          std::string(name) + " has dtype " + DtypeName(t->dtype) + ", not supported on " +
              RowOf(info.soc).name +
              (!zero && SocDtypesDependOnThreshold(info.soc) ? " with a nonzero threshold" : "") +
              (!SocRefusal(info.soc).empty()
                   ? ": " + SocRefusal(info.soc)
                   : " (supported: " + SocDtypeList(info.soc, zero) + ")"));
    }
  }
  if (grad_output->dtype != x->dtype) {
    return Fail(ACLNN_ERR_PARAM_INVALID, std::string("grad_output dtype ") +
                                             DtypeName(grad_output->dtype) +
                                             " differs from x dtype " + DtypeName(x->dtype));
  }
  if (out->dtype != x->dtype) {
    return Fail(ACLNN_ERR_PARAM_INVALID, std::string("out dtype ") + DtypeName(out->dtype) +
                                             " differs from x dtype " + DtypeName(x->dtype));
  }
  if (threshold.device != nullptr &&
      !ascend_kernels::TakesThresholdDtype(x->dtype, threshold.device->dtype)) {
    return Fail(ACLNN_ERR_PARAM_INVALID,
                std::string("threshold has dtype ") + DtypeName(threshold.device->dtype) +
                    ", which the kernel does not read for x of dtype " + DtypeName(x->dtype) +
                    " (it reads " + DeviceThresholdDtypes(x->dtype) + ")");
  }
  // 4. ranks.
  for (const auto& [name, t] : {std::pair{"grad_output", grad_output}, std::pair{"x", x}}) {
    if (t->shape.size() > kMaxRank) {
      return Fail(ACLNN_ERR_PARAM_INVALID, std::string(name) + " has rank " +
                                               std::to_string(t->shape.size()) + ", more than 8");
    }
  }
  // 5. broadcast.
  std::vector<int64_t> shape;
  switch (BroadcastShapes({&grad_output->shape, &x->shape}, &shape)) {
    case BroadcastResult::kIncompatible:
      return FailNotBroadcasting(grad_output->shape, x->shape);
    case BroadcastResult::kOverflow:
      return Fail(ACLNN_ERR_PARAM_INVALID, "grad_output shape " + ShapeString(grad_output->shape) +
                                               " and x shape " + ShapeString(x->shape) +
                                               " broadcast to " + ShapeString(shape) +
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
  auto make_executor = NewExecutor;
  std::shared_ptr<ExecutorPlan> plan;
  if (n_x == 0 || n_grad == 0) {
    aclOpExecutor* exec = make_executor(&plan);
    if (exec == nullptr) return Fail(ACLNN_ERR_INNER_CREATE_EXECUTOR, "cannot create the executor");
    plan->kernel.reset();
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
  const uint64_t elem = DtypeSize(x->dtype);
  uint64_t buffer_bytes;
  if (__builtin_mul_overflow(n, elem, &buffer_bytes) || !AlignUp(buffer_bytes, &buffer_bytes)) {
    return Fail(ACLNN_ERR_PARAM_INVALID, "out shape " + ShapeString(shape) + " of " +
                                             DtypeName(x->dtype) +
                                             " holds more bytes than can be addressed");
  }

  aclOpExecutor* exec = make_executor(&plan);
  if (exec == nullptr) return Fail(ACLNN_ERR_INNER_CREATE_EXECUTOR, "cannot create the executor");
  auto cleanup = [exec](aclnnStatus status, std::string message) {
    ReleaseExecutor(exec);
    return Fail(status, std::move(message));
  };

  // 8. kernel.
  plan->kernel = zero ? KernelOp::kReluGrad : KernelOp::kThresholdGradV2D;
  plan->dtype = x->dtype;
  plan->threshold_grad_tiling.dtype = plan->relu_grad_tiling.dtype = x->dtype;
  plan->soc = static_cast<ascend_kernels::Soc>(info.soc);
  plan->ub_size = *info.ub_size;
  plan->num_elements = n;
  if (!TileKernel(*plan->kernel, *info.core_num, plan.get(), &error)) {
    return cleanup(ACLNN_ERR_INNER_TILING_ERROR, error);
  }
  if (plan->kernel == KernelOp::kThresholdGradV2D && threshold.value != nullptr) {
    plan->threshold_grad_tiling.threshold = MakeThresholdParams(*threshold.value, plan->dtype);
  } else if (plan->kernel == KernelOp::kThresholdGradV2D) {
    // The tiling says where the threshold is, not what it is: every slice shares it.
    ascend_kernels::ThresholdParams& params = plan->threshold_grad_tiling.threshold;
    params = {};
    params.source = static_cast<int32_t>(ascend_kernels::ThresholdSource::kDevice);
    params.gm_dtype = threshold.device->dtype;
    plan->device_threshold = threshold.device->First();
  }

  // Broadcast inputs (fewer elements than out) are read through the kernel's broadcast copy-in,
  // never copied to out's size: each at its own shape, contiguous. (Ranks are at most kMaxRank,
  // kMaxBroadcastRank too, so the merged dims always fit.)
  ascend_kernels::InputBroadcastTiling broadcast{};
  const bool kernel_broadcast =
      (static_cast<uint64_t>(n_grad) < n || static_cast<uint64_t>(n_x) < n) &&
      PlanInputBroadcast(shape, grad_output->shape, x->shape, &broadcast);
  plan->threshold_grad_tiling.broadcast = broadcast;
  plan->relu_grad_tiling.broadcast = broadcast;

  // Copies and workspace layout. An input gets a contiguous copy in the workspace unless it is
  // already contiguous in the shape the kernel reads it at (out's, or its own when the kernel
  // broadcasts it) and aligned to its element. out gets a workspace buffer and a copy into its
  // view unless it is contiguous and aligned. The copies move bytes (memcpy), so they accept any
  // alignment. Overlap: the steps run one after another, so with a copy into out every input has
  // been read before out is written; when the kernel writes out directly, an input overlapping
  // out is copied first unless it is exactly out's view (in place: each element is read before
  // it is written), which gives copy semantics.
  const std::vector<int64_t> contiguous = ContiguousStrides(shape);
  auto aligned = [elem](const ViewBounds& b) { return b.first % elem == 0; };
  uint64_t workspace_bytes = 0;
  auto take = [&workspace_bytes](uint64_t* at, uint64_t bytes) {
    *at = workspace_bytes;
    return AlignUp(bytes, &bytes) &&
           !__builtin_add_overflow(workspace_bytes, bytes, &workspace_bytes) &&
           workspace_bytes <= kMaxPlannedBytes;
  };
  plan->grad = grad_output->First();
  plan->x = x->First();
  plan->out = out->First();
  const bool out_direct = out->IsContiguous() && aligned(bounds[2]);
  bool sized = true;
  // t's copy, if it needs one, into the workspace at *offset.
  auto plan_input = [&](const aclTensor& t, int64_t count, const ViewBounds& b,
                        std::optional<StridedCopyPlan>* copy, uint64_t* offset) {
    const bool own_shape = kernel_broadcast && static_cast<uint64_t>(count) < n;
    const bool direct = (own_shape || static_cast<uint64_t>(count) == n) && t.IsContiguous() &&
                        aligned(b) && !(out_direct && Overlaps(b, bounds[2]) && !SameView(t, *out));
    if (direct) return;
    if (own_shape) {
      *copy = PlanStridedCopy(t.shape, t.strides, ContiguousStrides(t.shape), elem,
                              /*serial=*/false);
      sized = sized && take(offset, static_cast<uint64_t>(count) * elem);  // < out's bytes
    } else {
      *copy = PlanStridedCopy(shape, BroadcastStrides(t, shape), contiguous, elem,
                              /*serial=*/false);
      sized = sized && take(offset, buffer_bytes);
    }
  };
  plan_input(*grad_output, n_grad, bounds[0], &plan->grad_copy, &plan->grad_ws_offset);
  plan_input(*x, n_x, bounds[1], &plan->x_copy, &plan->x_ws_offset);
  if (!out_direct) {
    // An out view whose elements overlap is written by one block, so the writes do not race.
    plan->out_copy = PlanStridedCopy(shape, contiguous, out->strides, elem,
                                     /*serial=*/!IsNonOverlapping(out->shape, out->strides));
    sized = sized && take(&plan->out_ws_offset, buffer_bytes);
  }
  plan->library_ws_offset = workspace_bytes;
  sized = sized &&
          !__builtin_add_overflow(workspace_bytes, kHostLibraryWorkspace, &workspace_bytes) &&
          workspace_bytes <= kMaxPlannedBytes;
  if (!sized || !PlanWorkspace(workspace_bytes, kMaxPlannedBytes, bounds, &plan->workspace)) {
    return cleanup(ACLNN_ERR_PARAM_INVALID,
                   "the workspace for out shape " + ShapeString(shape) + " of " +
                       DtypeName(x->dtype) + " (contiguous copies of strided, broadcast, " +
                       "unaligned or overlapping tensors) overflows a 64-bit byte count");
  }
  plan->workspace_size = plan->workspace.size;
  *workspace_size = plan->workspace.size;
  *executor = exec;
  return ACLNN_SUCCESS;
}

}  // namespace

aclnnStatus aclnnThresholdBackwardGetWorkspaceSize(const aclTensor* grad_output, const aclTensor* x,
                                                   const aclScalar* threshold, aclTensor* out,
                                                   uint64_t* workspace_size,
                                                   aclOpExecutor** executor,
                                                   const PlatformInfo* platform) {
  ScopedDenormalsAsNumbers guard;  // the threshold narrows to float32 here
  if (aclnnStatus status = CheckPointers(threshold, grad_output, x, out, workspace_size, executor);
      status != ACLNN_SUCCESS) {
    return status;
  }
  PlannedThreshold planned;
  planned.value = threshold;
  const aclnnStatus status =
      PlanWholeTensors(grad_output, x, out, planned, workspace_size, executor, platform);
  if (status == ACLNN_SUCCESS) RecordBindings(*executor, grad_output, x, nullptr, out);
  return status;
}

aclnnStatus StartRun(void* workspace, uint64_t workspace_size, aclOpExecutor* executor,
                     std::shared_ptr<ExecutorPlan>* plan, char** base) {
  *base = nullptr;
  plan->reset();
  if (executor == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, "executor is null");
  // Never through `executor` itself: a destroyed executor's memory is gone.
  std::shared_ptr<ExecutorPlan> shared = LivePlan(executor);
  if (shared == nullptr) {
    return Fail(ACLNN_ERR_PARAM_INVALID, "not a live executor (destroyed, or never created)");
  }
  ExecutorPlan& p = *shared;
  std::lock_guard<std::mutex> lock(p.bindings_mu);
  if (p.destroyed) {  // a destroy between LivePlan and the lock
    return Fail(ACLNN_ERR_PARAM_INVALID, "not a live executor (destroyed, or never created)");
  }
  if (aclnnStatus status = CheckRebinding(p); status != ACLNN_SUCCESS) return status;
  std::string error;
  if (aclnnStatus status = PlaceWorkspace(p.workspace, workspace, workspace_size, base, &error);
      status != ACLNN_SUCCESS) {
    return Fail(status, error);
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

aclnnStatus aclnnThresholdBackward(void* workspace, uint64_t workspace_size,
                                   aclOpExecutor* executor, void* stream,
                                   std::function<void()> on_done) {
  char* base = nullptr;
  std::shared_ptr<ExecutorPlan> plan;
  if (aclnnStatus status = StartRun(workspace, workspace_size, executor, &plan, &base);
      status != ACLNN_SUCCESS) {
    return status;
  }
  if (!plan->kernel) {
    EndRun(plan.get());
    if (stream != nullptr && on_done) on_done();
    return ACLNN_SUCCESS;
  }
  if (stream == nullptr) {
    struct EndOnReturn {
      ExecutorPlan* plan;
      ~EndOnReturn() { EndRun(plan); }
    } end_on_return{plan.get()};
    std::lock_guard<std::mutex> one_at_a_time(plan->sync_run_mu);
    std::vector<Step> steps;
    try {
      steps = PlanSteps(plan.get(), base);
    } catch (const std::exception& e) {
      plan->run_status.store(ACLNN_ERR_RUNTIME_ERROR);
      return Fail(ACLNN_ERR_RUNTIME_ERROR, std::string("kernel launch failed: ") + e.what());
    }
    for (const Step& step : steps) {
      std::string error = RunBlocksSynchronously(step.block_dim, [&step](uint32_t b) {
        ScopedDenormalsAsNumbers guard;
        step.run_block(b);
      });
      if (!error.empty()) {
        plan->run_status.store(ACLNN_ERR_RUNTIME_ERROR);
        return Fail(ACLNN_ERR_RUNTIME_ERROR, std::string(step.name) + " failed: " + error);
      }
    }
    return ACLNN_SUCCESS;
  }
  auto run = std::make_shared<AsyncRun>();
  run->plan = plan;
  try {
    run->steps = PlanSteps(plan.get(), base);
  } catch (const std::exception& e) {
    plan->run_status.store(ACLNN_ERR_RUNTIME_ERROR);
    EndRun(plan.get());
    return Fail(ACLNN_ERR_RUNTIME_ERROR, std::string("kernel launch failed: ") + e.what());
  }
  run->stream = static_cast<HostStream*>(stream);
  run->on_done = std::move(on_done);
  LaunchFrom(run, 0);
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

// ---- Phase one with a threshold tensor ------------------------------------------------------

namespace {

constexpr size_t kMaxKernelRank = 8;
using ascend_kernels::kNumOperands;

bool IsZero(const char* element, aclDataType dtype) {
  aclScalar s;
  LoadScalar(element, dtype, &s);
  return s.IsExactlyZero();
}

aclnnStatus PlanThresholdTensor(const aclTensor* grad_output, const aclTensor* x,
                                const aclTensor* threshold, aclTensor* out,
                                uint64_t* workspace_size, aclOpExecutor** executor,
                                const PlatformInfo* platform,
                                ascend_kernels::ThresholdSource source) {
  ScopedDenormalsAsNumbers guard;
  if (aclnnStatus status = CheckPointers(threshold, grad_output, x, out, workspace_size, executor);
      status != ACLNN_SUCCESS) {
    return status;
  }
  const uint64_t threshold_bytes = DtypeSize(threshold->dtype);
  aclScalar probe;
  unsigned char zero_bytes[8] = {};
  LoadScalar(zero_bytes, threshold->dtype, &probe);
  if (probe.kind == aclScalar::Kind::kInvalid || threshold_bytes == 0) {
    return Fail(ACLNN_ERR_PARAM_INVALID, std::string("threshold has dtype ") +
                                             DtypeName(threshold->dtype) +
                                             ", expected an integer or floating-point array");
  }
  // grad_output and x first, with the scalar phase one's words; then the threshold and out.
  const std::vector<int64_t>& gs = grad_output->shape;
  const std::vector<int64_t>& xs = x->shape;
  const std::vector<int64_t>& ts = threshold->shape;
  const std::vector<int64_t>& os = out->shape;
  std::vector<int64_t> shape;
  if (BroadcastShapes({&gs, &xs}, &shape) == BroadcastResult::kIncompatible) {
    return FailNotBroadcasting(gs, xs);
  }
  const std::string operands = "grad_output " + ShapeString(gs) + ", x " + ShapeString(xs) +
                               " and threshold " + ShapeString(ts);
  const BroadcastResult broadcast = BroadcastShapes({&gs, &xs, &ts}, &shape);
  const bool empty = std::find(shape.begin(), shape.end(), 0) != shape.end();
  switch (broadcast) {
    case BroadcastResult::kIncompatible:
      return Fail(ACLNN_ERR_PARAM_INVALID,
                  operands + " do not broadcast to out " + ShapeString(os));
    case BroadcastResult::kOverflow:
      if (empty) break;  // no element: the other dims' product never counts anything
      return Fail(ACLNN_ERR_PARAM_INVALID, operands + " broadcast to " + ShapeString(shape) +
                                               ", whose element count overflows int64");
    case BroadcastResult::kOk:
      break;
  }
  if (shape != os) {
    return Fail(ACLNN_ERR_PARAM_INVALID, "the result's shape " + ShapeString(os) +
                                             " is not the broadcast shape " + ShapeString(shape) +
                                             " of " + operands);
  }
  // Empty: the scalar phase one checks dtypes and platform and plans nothing, before any stride
  // of these (possibly huge) shapes is used.
  if (empty) {
    const int64_t zero_shape[1] = {0};
    aclTensor g = *grad_output, xv = *x, o = *out;
    for (aclTensor* t : {&g, &xv, &o}) {
      t->shape.assign(zero_shape, zero_shape + 1);
      t->strides.assign(1, 1);
    }
    PlannedThreshold empty_threshold;
    if (source == ascend_kernels::ThresholdSource::kDevice) empty_threshold.device = threshold;
    return PlanWholeTensors(&g, &xv, &o, empty_threshold, workspace_size, executor, platform);
  }

  // Every operand's extent in elements and bytes must be representable (view_bounds.h).
  const aclTensor* const tensors[kNumOperands] = {grad_output, x, threshold, out};
  std::string error;
  ViewBounds bounds[kNumOperands];
  for (int k = 0; k < kNumOperands; ++k) {
    if (tensors[k]->data == nullptr) {
      return Fail(ACLNN_ERR_PARAM_NULLPTR, std::string(kOperandNames[k]) + " data is null");
    }
    if (tensors[k]->strides.size() != tensors[k]->shape.size()) {
      return Fail(ACLNN_ERR_PARAM_INVALID, std::string(kOperandNames[k]) + " has " +
                                               std::to_string(tensors[k]->strides.size()) +
                                               " strides for rank " +
                                               std::to_string(tensors[k]->shape.size()));
    }
    if (!ComputeViewBounds(*tensors[k], kOperandNames[k], &bounds[k], &error)) {
      return Fail(ACLNN_ERR_PARAM_INVALID, error);
    }
  }
  std::array<std::vector<int64_t>, kNumOperands> strides;
  for (int k = 0; k < kNumOperands; ++k) {
    strides[k] = aclnn::BroadcastStrides(tensors[k]->shape, tensors[k]->strides, os);
  }
  const Layout<kNumOperands> layout = MakeLayout(os, strides);

  // Looped dims: where the threshold varies, then leading ones beyond the kernel's rank.
  const size_t rank = layout.sizes.size();
  std::vector<bool> looped(rank, false);
  size_t kernel_rank = 0;
  for (size_t d = 0; d < rank; ++d) {
    looped[d] = layout.strides[d][ascend_kernels::kOperandThreshold] != 0;
    kernel_rank += !looped[d];
  }
  for (size_t d = 0; d < rank && kernel_rank > kMaxKernelRank; ++d) {
    if (!looped[d]) {
      looped[d] = true;
      --kernel_rank;
    }
  }
  ThresholdBatch batch;
  aclTensor views[3] = {*grad_output, *x, *out};  // slice 0: the kernel's dims, offsets kept
  const int operand_of_view[3] = {ascend_kernels::kOperandGrad, ascend_kernels::kOperandX,
                                  ascend_kernels::kOperandOut};
  for (aclTensor& v : views) {
    v.shape.clear();
    v.strides.clear();
  }
  for (size_t d = 0; d < rank; ++d) {
    if (looped[d]) {
      batch.sizes.push_back(layout.sizes[d]);
      batch.strides.push_back(layout.strides[d]);
      batch.count *= layout.sizes[d];  // fits: a divisor of out's element count
      continue;
    }
    for (int v = 0; v < 3; ++v) {
      const int64_t stride = layout.strides[d][operand_of_view[v]];
      views[v].shape.push_back(stride == 0 ? 1 : layout.sizes[d]);
      views[v].strides.push_back(stride);
    }
  }

  batch.element_bytes = DtypeSize(out->dtype);
  batch.threshold_dtype = threshold->dtype;
  batch.threshold = threshold->First();
  batch.threshold_bytes = threshold_bytes;

  // Which kernels the slices need, and the threshold the plan is made with: a device threshold,
  // or the first nonzero value (whose dtype list is the strictest), else 0.
  const bool on_device = source == ascend_kernels::ThresholdSource::kDevice;
  bool any_zero = false, any_nonzero = on_device;
  const char* representative = batch.threshold;
  for (int64_t k = 0; k < batch.count && !on_device && !(any_zero && any_nonzero); ++k) {
    const char* element = batch.At(k, grad_output->First(), x->First(), out->First()).threshold;
    if (IsZero(element, threshold->dtype)) {
      any_zero = true;
    } else if (!any_nonzero) {
      any_nonzero = true;
      representative = element;
    }
  }
  aclScalar value;
  PlannedThreshold planned;
  if (on_device) {
    planned.device = threshold;
  } else {
    LoadScalar(representative, threshold->dtype, &value);
    planned.value = &value;
  }

  PlatformInfo info = WithDefaults(platform != nullptr ? *platform : PlatformInfo{});
  uint64_t slice_bytes = DtypeSize(out->dtype);
  for (int64_t d : views[2].shape) slice_bytes *= static_cast<uint64_t>(d);  // <= out's bytes
  const bool small = batch.count > 1 && slice_bytes <= kSmallSliceBytes;
  const uint32_t core_num = *info.core_num;
  if (small) info.core_num = 1;
  uint64_t slice_workspace_bytes = 0;
  const aclnnStatus status = PlanWholeTensors(&views[0], &views[1], &views[2], planned,
                                              &slice_workspace_bytes, executor, &info);
  if (status != ACLNN_SUCCESS || batch.count == 1) {
    *workspace_size = slice_workspace_bytes;
    return status;
  }
  auto fail = [executor](aclnnStatus s, std::string message) {
    aclDestroyAclOpExecutor(*executor);
    *executor = nullptr;
    return Fail(s, std::move(message));
  };
  ExecutorPlan* plan = (*executor)->plan.get();
  // The other kernel's tiling, when some slices need it.
  const KernelOp other =
      plan->kernel == KernelOp::kReluGrad ? KernelOp::kThresholdGradV2D : KernelOp::kReluGrad;
  if ((other == KernelOp::kReluGrad ? any_zero : any_nonzero) &&
      !TileKernel(other, *info.core_num, plan, &error)) {
    return fail(ACLNN_ERR_INNER_TILING_ERROR, error);
  }
  batch.core_num = core_num;
  // Workspace: one slice's for every range (small slices) or for every slice (large ones), each
  // at an aligned offset from the aligned base; the alignment slack is added once, for the whole.
  batch.range_workspace_bytes = (plan->workspace.planned + kWorkspaceAlignment - 1) /
                                kWorkspaceAlignment *
                                kWorkspaceAlignment;  // planned < 2^63 - 512: phase one checked it
  uint64_t parts = static_cast<uint64_t>(batch.count);
  if (small) {
    batch.ranges =
        static_cast<uint32_t>(std::min<int64_t>(batch.count, std::max<uint32_t>(core_num, 1)));
    parts = batch.ranges;
  } else {
    // Each step launches count times its blocks (copies and kernel alike, at most kMaxCores).
    uint64_t max_blocks = std::max(plan->relu_grad_tiling.tiling.block_dim,
                                   plan->threshold_grad_tiling.tiling.block_dim);
    for (const auto* copy : {&plan->grad_copy, &plan->x_copy, &plan->out_copy}) {
      if (*copy) max_blocks = std::max<uint64_t>(max_blocks, (*copy)->block_dim);
    }
    if (static_cast<uint64_t>(batch.count) * max_blocks > UINT32_MAX) {
      return fail(ACLNN_ERR_PARAM_INVALID, std::to_string(batch.count) + " threshold slices of " +
                                               std::to_string(max_blocks) +
                                               " blocks exceed a launch's block count");
    }
  }
  uint64_t workspace_bytes = 0;
  const ViewBounds whole[WorkspacePlan::kTensors] = {bounds[0], bounds[1], bounds[3]};
  if (__builtin_mul_overflow(batch.range_workspace_bytes, parts, &workspace_bytes) ||
      !PlanWorkspace(workspace_bytes, static_cast<uint64_t>(INT64_MAX), whole, &plan->workspace)) {
    return fail(ACLNN_ERR_PARAM_INVALID, "the workspace of " + std::to_string(parts) +
                                             " slices overflows a 64-bit byte count");
  }
  plan->workspace_size = plan->workspace.size;
  plan->batch = std::move(batch);
  *workspace_size = plan->workspace.size;
  return ACLNN_SUCCESS;
}

// PlanThresholdTensor, then the caller's tensors as a successful plan's bindings.
aclnnStatus PlanAndBindThresholdTensor(const aclTensor* grad_output, const aclTensor* x,
                                       const aclTensor* threshold, aclTensor* out,
                                       uint64_t* workspace_size, aclOpExecutor** executor,
                                       const PlatformInfo* platform,
                                       ascend_kernels::ThresholdSource source) {
  const aclnnStatus status = PlanThresholdTensor(grad_output, x, threshold, out, workspace_size,
                                                 executor, platform, source);
  if (status == ACLNN_SUCCESS) RecordBindings(*executor, grad_output, x, threshold, out);
  return status;
}

}  // namespace

aclnnStatus aclnnThresholdBackwardBatchedGetWorkspaceSize(
    const aclTensor* grad_output, const aclTensor* x, const aclTensor* threshold, aclTensor* out,
    uint64_t* workspace_size, aclOpExecutor** executor, const PlatformInfo* platform) {
  return PlanAndBindThresholdTensor(grad_output, x, threshold, out, workspace_size, executor,
                                    platform, ascend_kernels::ThresholdSource::kTiling);
}

aclnnStatus aclnnThresholdBackwardDeviceThresholdGetWorkspaceSize(
    const aclTensor* grad_output, const aclTensor* x, const aclTensor* threshold, aclTensor* out,
    uint64_t* workspace_size, aclOpExecutor** executor, const PlatformInfo* platform) {
  return PlanAndBindThresholdTensor(grad_output, x, threshold, out, workspace_size, executor,
                                    platform, ascend_kernels::ThresholdSource::kDevice);
}

}  // namespace jax_threshold::aclnn
