#include "aclnn/batched_threshold.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "aclnn/broadcast.h"
#include "aclnn/denormal_mode.h"
#include "aclnn/executor.h"
#include "aclnn/tensor.h"
#include "aclnn/view_bounds.h"

namespace jax_threshold::aclnn {
namespace {

constexpr size_t kMaxKernelRank = 8;
constexpr int kNumOperands = 4;  // grad_output, x, threshold, out (ThresholdBatch's order)

// The call in out's index space: size-1 dims dropped, adjacent dims merged where every operand
// is either contiguous across both or broadcast along both. Stride 0: broadcast.
struct Layout {
  std::vector<int64_t> sizes;
  std::vector<std::array<int64_t, kNumOperands>> strides;
};

Layout MakeLayout(const std::vector<int64_t>& out,
                  const std::array<std::vector<int64_t>, kNumOperands>& strides) {
  Layout layout;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    std::array<int64_t, kNumOperands> s;
    for (int k = 0; k < kNumOperands; ++k) s[k] = strides[k][d];
    if (!layout.sizes.empty()) {
      auto& prev = layout.strides.back();
      bool mergeable = true;
      for (int k = 0; k < kNumOperands; ++k) {
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

bool IsZeroAt(const char* data, aclDataType dtype, int64_t offset, uint64_t bytes) {
  aclScalar s;
  LoadScalar(data + offset * static_cast<int64_t>(bytes), dtype, &s);
  return s.IsExactlyZero();
}

// The threshold dtypes the kernel converts at Init for x's dtype (ascend_kernels/
// threshold_from_bits.h): the ones the custom call's lowering emits. Other x dtypes are left to
// phase one's dtype checks.
bool KernelReadsThresholdDtype(aclDataType x, aclDataType t) {
  switch (x) {
    case ACL_FLOAT:
    case ACL_FLOAT16:
    case ACL_BF16:
      return t == ACL_FLOAT;
    case ACL_DOUBLE:
      return t == ACL_DOUBLE;
    case ACL_INT8:
    case ACL_UINT8:
    case ACL_INT32:
    case ACL_INT64:
      return t == x || t == ACL_FLOAT || t == ACL_DOUBLE;
    default:
      return true;
  }
}

// Which side reads the threshold's data: the executor on the host (ReluGrad where it is 0), or
// ThresholdGradV2D on the device at Init (never read here).
enum class ThresholdReader { kHost, kKernel };

aclnnStatus PlanThresholdTensor(const aclTensor* grad_output, const aclTensor* x,
                                const aclTensor* threshold, aclTensor* out,
                                uint64_t* workspace_size, aclOpExecutor** executor,
                                const PlatformInfo* platform, ThresholdReader reader) {
  ScopedDenormalsAsNumbers guard;
  if (threshold == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, "threshold is null");
  if (out == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, "out is null");
  if (workspace_size == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, "workspace_size is null");
  if (executor == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, "executor is null");
  *executor = nullptr;
  if (grad_output == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, "grad_output is null");
  if (x == nullptr) return Fail(ACLNN_ERR_PARAM_NULLPTR, "x is null");
  const uint64_t threshold_bytes = DataTypeSize(threshold->dtype);
  aclScalar probe;
  unsigned char zero_bytes[8] = {};
  LoadScalar(zero_bytes, threshold->dtype, &probe);
  if (probe.kind == aclScalar::Kind::kInvalid || threshold_bytes == 0) {
    return Fail(ACLNN_ERR_PARAM_INVALID, std::string("threshold has dtype ") +
                                             DataTypeName(threshold->dtype) +
                                             ", expected an integer or floating-point array");
  }
  if (reader == ThresholdReader::kKernel &&
      !KernelReadsThresholdDtype(x->dtype, threshold->dtype)) {
    return Fail(ACLNN_ERR_PARAM_INVALID,
                std::string("threshold has dtype ") + DataTypeName(threshold->dtype) +
                    ", which the kernel does not read for x of dtype " + DataTypeName(x->dtype) +
                    " (float16/bfloat16/float32 x: float32; float64 x: float64; integer x: "
                    "x's dtype, float32 or float64)");
  }

  // grad_output and x first, with the scalar phase one's words; then the threshold and out.
  const std::vector<int64_t>& gs = grad_output->shape;
  const std::vector<int64_t>& xs = x->shape;
  const std::vector<int64_t>& ts = threshold->shape;
  const std::vector<int64_t>& os = out->shape;
  std::vector<int64_t> shape;
  if (BroadcastShapes({&gs, &xs}, &shape) == BroadcastResult::kIncompatible) {
    return Fail(ACLNN_ERR_PARAM_INVALID, "grad_output shape " + ShapeString(gs) + " and x shape " +
                                             ShapeString(xs) + " do not broadcast");
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
    aclScalar t0;
    LoadScalar(zero_bytes, threshold->dtype, &t0);
    t0.kind = aclScalar::Kind::kFloat;  // a nonzero threshold: the strictest dtype list
    t0.f = 1;
    return aclnnThresholdBackwardGetWorkspaceSize(&g, &xv, &t0, &o, workspace_size, executor,
                                                  platform);
  }

  // Every operand's extent in elements and bytes must be representable (view_bounds.h).
  const aclTensor* const tensors[kNumOperands] = {grad_output, x, threshold, out};
  const char* const names[kNumOperands] = {"grad_output", "x", "threshold", "out"};
  std::string error;
  ViewBounds bounds[kNumOperands];
  for (int k = 0; k < kNumOperands; ++k) {
    if (tensors[k]->data == nullptr) {
      return Fail(ACLNN_ERR_PARAM_NULLPTR, std::string(names[k]) + " data is null");
    }
    if (tensors[k]->strides.size() != tensors[k]->shape.size()) {
      return Fail(ACLNN_ERR_PARAM_INVALID,
                  std::string(names[k]) + " has " + std::to_string(tensors[k]->strides.size()) +
                      " strides for rank " + std::to_string(tensors[k]->shape.size()));
    }
    if (!ComputeViewBounds(*tensors[k], names[k], &bounds[k], &error)) {
      return Fail(ACLNN_ERR_PARAM_INVALID, error);
    }
  }
  std::array<std::vector<int64_t>, kNumOperands> strides;
  for (int k = 0; k < kNumOperands; ++k) {
    strides[k] = BroadcastStrides(tensors[k]->shape, tensors[k]->strides, os);
  }
  const Layout layout = MakeLayout(os, strides);

  // Looped dims: where the threshold varies, then leading ones beyond the kernel's rank.
  const size_t rank = layout.sizes.size();
  std::vector<bool> looped(rank, false);
  size_t kernel_rank = 0;
  for (size_t d = 0; d < rank; ++d) {
    looped[d] = layout.strides[d][ThresholdBatch::kThreshold] != 0;
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
  const int operand_of_view[3] = {ThresholdBatch::kGrad, ThresholdBatch::kX, ThresholdBatch::kOut};
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

  // Which kernels the slices need, and a representative threshold for the checks: the first
  // nonzero one (whose dtype list is the strictest), else 0. The kernel-read threshold is
  // always ThresholdGradV2D's, checked as a nonzero one.
  const char* tdata = threshold->First();
  const bool on_device = reader == ThresholdReader::kKernel;
  bool any_zero = false, any_nonzero = on_device;
  int64_t representative = 0;
  for (int64_t k = 0; k < batch.count && !on_device && !(any_zero && any_nonzero); ++k) {
    const int64_t t_off = batch.Offsets(k)[ThresholdBatch::kThreshold];
    if (IsZeroAt(tdata, threshold->dtype, t_off, threshold_bytes)) {
      any_zero = true;
    } else if (!any_nonzero) {
      any_nonzero = true;
      representative = t_off;
    }
  }
  aclScalar t0;
  if (on_device) {
    LoadScalar(zero_bytes, threshold->dtype, &t0);
    t0.kind = aclScalar::Kind::kFloat;
    t0.f = 1;
  } else {
    LoadScalar(tdata + representative * static_cast<int64_t>(threshold_bytes), threshold->dtype,
               &t0);
  }

  PlatformInfo info = platform != nullptr ? *platform : PlatformInfo{};
  uint64_t slice_bytes = DataTypeSize(out->dtype);
  for (int64_t d : views[2].shape) slice_bytes *= static_cast<uint64_t>(d);  // <= out's bytes
  const bool small = batch.count > 1 && slice_bytes <= kSmallSliceBytes;
  const uint32_t core_num = info.core_num;
  if (small) info.core_num = 1;
  uint64_t slice_ws = 0;
  aclnnStatus status = aclnnThresholdBackwardGetWorkspaceSize(&views[0], &views[1], &t0, &views[2],
                                                              &slice_ws, executor, &info);
  if (status == ACLNN_SUCCESS && on_device) {
    // The tiling says where the threshold is, not what it is: every slice shares it.
    ExecutorPlan* p = (*executor)->plan.get();
    ascend_kernels::ThresholdParams params{};
    params.source = static_cast<int32_t>(ascend_kernels::ThresholdSource::kGm);
    params.gm_dtype = static_cast<int32_t>(threshold->dtype);  // KernelDType values
    p->threshold_grad_tiling.threshold = params;
    p->threshold_gm = tdata;
  }
  if (status != ACLNN_SUCCESS || batch.count == 1) {
    *workspace_size = slice_ws;
    return status;
  }
  auto fail = [executor](aclnnStatus s, std::string message) {
    aclDestroyAclOpExecutor(*executor);
    *executor = nullptr;
    return Fail(s, std::move(message));
  };
  ExecutorPlan* plan = (*executor)->plan.get();
  // The other kernel's tiling, when some slices need it.
  const KernelKind other =
      plan->kernel == KernelKind::kReluGrad ? KernelKind::kThresholdGradV2D : KernelKind::kReluGrad;
  if ((other == KernelKind::kReluGrad ? any_zero : any_nonzero) &&
      !TileKernel(other, info.core_num, plan, &error)) {
    return fail(ACLNN_ERR_INNER_TILING_ERROR, error);
  }
  batch.element_bytes = DataTypeSize(out->dtype);
  batch.threshold_dtype = threshold->dtype;
  batch.threshold = tdata;
  batch.threshold_bytes = threshold_bytes;
  // Workspace: one slice's for every range (small slices) or for every slice (large ones), each
  // at an aligned offset from the aligned base; the alignment slack is added once, for the whole.
  batch.range_workspace = (plan->workspace.planned + kWorkspaceAlignment - 1) /
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
  uint64_t planned = 0;
  const ViewBounds whole[WorkspacePlan::kTensors] = {bounds[0], bounds[1], bounds[3]};
  if (__builtin_mul_overflow(batch.range_workspace, parts, &planned) ||
      !PlanWorkspace(planned, static_cast<uint64_t>(INT64_MAX), whole, &plan->workspace)) {
    return fail(ACLNN_ERR_PARAM_INVALID, "the workspace of " + std::to_string(parts) +
                                             " slices overflows a 64-bit byte count");
  }
  plan->workspace_size = plan->workspace.size;
  plan->batch = std::move(batch);
  *workspace_size = plan->workspace.size;
  return ACLNN_SUCCESS;
}

}  // namespace

aclnnStatus aclnnThresholdBackwardBatchedGetWorkspaceSize(
    const aclTensor* grad_output, const aclTensor* x, const aclTensor* threshold, aclTensor* out,
    uint64_t* workspace_size, aclOpExecutor** executor, const PlatformInfo* platform) {
  const aclnnStatus status = PlanThresholdTensor(grad_output, x, threshold, out, workspace_size,
                                                 executor, platform, ThresholdReader::kHost);
  if (status == ACLNN_SUCCESS) RecordBindings(*executor, grad_output, x, threshold, out);
  return status;
}

aclnnStatus aclnnThresholdBackwardDeviceThresholdGetWorkspaceSize(
    const aclTensor* grad_output, const aclTensor* x, const aclTensor* threshold, aclTensor* out,
    uint64_t* workspace_size, aclOpExecutor** executor, const PlatformInfo* platform) {
  const aclnnStatus status = PlanThresholdTensor(grad_output, x, threshold, out, workspace_size,
                                                 executor, platform, ThresholdReader::kKernel);
  if (status == ACLNN_SUCCESS) RecordBindings(*executor, grad_output, x, threshold, out);
  return status;
}

}  // namespace jax_threshold::aclnn
