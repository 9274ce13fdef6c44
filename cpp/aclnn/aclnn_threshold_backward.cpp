// Phase one of threshold_backward (docs/behaviour.md §2), with a threshold scalar or a device
// threshold tensor: validates in the contract's order, checks the SoC and platform, chooses the
// kernel, converts the threshold, tiles, plans the copies and sizes the workspace.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "aclnn/executor.h"
#include "aclnn/host_stream.h"
#include "aclnn/tensor.h"
#include "ascend_kernels/dtype_soc_table.h"
#include "ascend_kernels/kernel_args.h"
#include "common/op_host/elementwise_tiling.h"

namespace jax_threshold::aclnn {
namespace {

using ascend_kernels::Dtype;
using ascend_kernels::Soc;
using ascend_kernels::SocRow;

constexpr size_t kMaxRank = 8;  // step 4
static_assert(kMaxRank == ascend_kernels::kMaxBroadcastRank,
              "the kernel's broadcast read holds every rank phase one takes");
constexpr uint64_t kMaxPlannedBytes = static_cast<uint64_t>(INT64_MAX);  // one allocation at most

// Platform bounds: ub_size a multiple of 32 bytes (UB allocations are 32-byte aligned) in
// [kMinUbSize, kMaxUbSize] and at most the SoC's UB; kMinUbSize holds the largest per-kernel plan
// (every dtype, both kernels, double buffering and scratch), kMaxUbSize is 4x the largest Ascend
// core's UB. core_num in [1, kMaxCoreNum], far above any SoC's AI vector cores (each core is a
// kernel block: an absurd count would only multiply per-block overhead).
constexpr uint64_t kUbAlignment = 32;
constexpr uint64_t kMinUbSize = 16 * 1024;
constexpr uint64_t kMaxUbSize = 1024 * 1024;
constexpr uint32_t kMaxCoreNum = 4096;

// The public header's SocVersion (standing alone) names the SoC table's rows.
constexpr bool Names(SocVersion soc, const char* name) {
  const char* own = ascend_kernels::SocRowOf(static_cast<Soc>(soc)).name;
  while (*own != '\0' && *own == *name) ++own, ++name;
  return *own == *name;
}
static_assert(Names(SocVersion::kAscend910, "Ascend910") &&
                  Names(SocVersion::kAscend910B, "Ascend910B") &&
                  Names(SocVersion::kAscend950, "Ascend950") && Names(SocVersion::kHost, "host") &&
                  sizeof(ascend_kernels::kSocs) / sizeof(ascend_kernels::kSocs[0]) == 4,
              "SocVersion's enumerators are the SoC table's rows");

const SocRow& RowOf(SocVersion soc) { return ascend_kernels::SocRowOf(static_cast<Soc>(soc)); }

// Whether `soc` runs x of `dtype`: ReluGrad's list at a zero threshold, else ThresholdGradV2D's.
bool Runs(SocVersion soc, int32_t dtype, bool zero) {
  return ascend_kernels::SocRunsKernel(
      static_cast<Soc>(soc), zero ? KernelOp::kReluGrad : KernelOp::kThresholdGradV2D, dtype);
}

// "float32, int32, ...": the table's dtypes for which `taken(code)` holds.
template <typename Taken>
std::string DtypeList(Taken taken) {
  std::string out;
  for (const ascend_kernels::DtypeRow& row : ascend_kernels::kDtypes) {
    if (taken(static_cast<int32_t>(row.dtype)))
      out += (out.empty() ? "" : ", ") + std::string(row.name);
  }
  return out;
}

// Step 3's refusal of an input dtype, saying what `soc` takes (or why it takes nothing).
aclnnStatus FailDtype(const char* name, aclDataType dtype, SocVersion soc, bool zero) {
  std::string why;
  if (!ascend_kernels::HasSocRow(static_cast<Soc>(soc))) {
    std::string names, last;  // "Ascend910B, Ascend950 or host": the SoCs the kernels run on
    for (const SocRow& row : ascend_kernels::kSocs) {
      if (row.refusal != nullptr) continue;
      if (!last.empty()) names += (names.empty() ? "" : ", ") + last;
      last = row.name;
    }
    why = ": unknown soc (expected " + (names.empty() ? last : names + " or " + last) + ")";
  } else if (RowOf(soc).refusal != nullptr) {
    why = std::string(": soc ") + RowOf(soc).name + " is not supported: " + RowOf(soc).refusal;
  } else {
    const auto any = [soc, zero](int32_t d) { return Runs(soc, d, zero); };
    if (!zero && DtypeList(any) != DtypeList([soc](int32_t d) { return Runs(soc, d, true); })) {
      why = " with a nonzero threshold";
    }
    why += " (supported: " + DtypeList(any) + ")";
  }
  return Fail(ACLNN_ERR_PARAM_INVALID, std::string(name) + " has dtype " + DtypeName(dtype) +
                                           ", not supported on " + RowOf(soc).name + why);
}

bool ValidatePlatform(const PlatformInfo& info, std::string* error) {
  const uint64_t ub_size = info.ub_size.value_or(0);
  const uint32_t core_num = info.core_num.value_or(0);
  const SocRow& row = RowOf(info.soc);
  if (ub_size % kUbAlignment != 0 || ub_size < kMinUbSize || ub_size > kMaxUbSize) {
    *error = "platform ub_size " + std::to_string(ub_size) + " is not a multiple of " +
             std::to_string(kUbAlignment) + " bytes in [" + std::to_string(kMinUbSize) + ", " +
             std::to_string(kMaxUbSize) + "]";
  } else if (row.ub_bytes != 0 && ub_size > row.ub_bytes) {  // a real SoC's UB is fixed
    *error = "platform ub_size " + std::to_string(ub_size) + " exceeds the " +
             std::to_string(row.ub_bytes) + "-byte unified buffer of " + row.name;
  } else if (core_num < 1 || core_num > kMaxCoreNum) {
    *error = "platform core_num " + std::to_string(core_num) + " is not in [1, " +
             std::to_string(kMaxCoreNum) + "]";
  } else if (!ascend_kernels::HasSocRow(static_cast<Soc>(info.soc))) {
    *error = "platform soc " + std::to_string(static_cast<int32_t>(info.soc)) + " is unknown";
  } else {
    return true;
  }
  return false;
}

// Steps 1 and 2: threshold, out, workspace_size and the executor out-parameter, then the inputs.
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

aclnnStatus FailNotBroadcasting(const std::vector<int64_t>& grad_output,
                                const std::vector<int64_t>& x) {
  return Fail(ACLNN_ERR_PARAM_INVALID, "grad_output shape " + ShapeString(grad_output) +
                                           " and x shape " + ShapeString(x) + " do not broadcast");
}

// v rounded up to kWorkspaceAlignment; false past kMaxPlannedBytes.
bool AlignUp(uint64_t v, uint64_t* out) {
  if (v > kMaxPlannedBytes - (kWorkspaceAlignment - 1)) return false;
  *out = (v + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
  return true;
}

// The kernel's broadcast read (kernel_args.h) of inputs of `grad_shape` and `x_shape`, each
// contiguous in its own shape, over out's `shape`; false when out has one element.
bool PlanInputBroadcast(const std::vector<int64_t>& shape, const std::vector<int64_t>& grad_shape,
                        const std::vector<int64_t>& x_shape,
                        ascend_kernels::InputBroadcastTiling* tiling) {
  const Layout<2> layout =
      MergeDims<2>(shape, {BroadcastStrides(grad_shape, ContiguousStrides(grad_shape), shape),
                           BroadcastStrides(x_shape, ContiguousStrides(x_shape), shape)});
  *tiling = {};
  tiling->rank = layout.sizes.size();  // at most the rank of out: kMaxRank
  for (size_t d = 0; d < layout.sizes.size(); ++d) {
    tiling->sizes[d] = static_cast<uint64_t>(layout.sizes[d]);
    for (int j = 0; j < 2; ++j) tiling->strides[j][d] = static_cast<uint64_t>(layout.strides[d][j]);
  }
  return tiling->rank > 0;
}

// Phase one from step 3 on, for tensors whose pointers steps 1 and 2 checked: the plan of one run
// over the whole tensors, with `scalar` (read here) or, when it is null, a device threshold of
// `device`'s dtype and first element, which ThresholdGradV2D reads.
aclnnStatus PlanWholeTensors(const aclTensor* grad_output, const aclTensor* x, const aclTensor* out,
                             const aclScalar* scalar, const aclTensor* device,
                             uint64_t* workspace_size, aclOpExecutor** executor,
                             const PlatformInfo* platform) {
  const PlatformInfo info = WithDefaults(platform != nullptr ? *platform : PlatformInfo{});
  // 3. dtypes.
  if (scalar != nullptr && scalar->kind == aclScalar::Kind::kInvalid) {
    return Fail(ACLNN_ERR_PARAM_INVALID, std::string("threshold has dtype ") +
                                             DtypeName(scalar->dtype) +
                                             ", expected an integer or floating-point scalar");
  }
  const bool zero = scalar != nullptr && scalar->IsExactlyZero();
  if (!Runs(info.soc, grad_output->dtype, zero)) {
    return FailDtype("grad_output", grad_output->dtype, info.soc, zero);
  }
  if (!Runs(info.soc, x->dtype, zero)) return FailDtype("x", x->dtype, info.soc, zero);
  if (grad_output->dtype != x->dtype) {
    return Fail(ACLNN_ERR_PARAM_INVALID, std::string("grad_output dtype ") +
                                             DtypeName(grad_output->dtype) +
                                             " differs from x dtype " + DtypeName(x->dtype));
  }
  if (out->dtype != x->dtype) {
    return Fail(ACLNN_ERR_PARAM_INVALID, std::string("out dtype ") + DtypeName(out->dtype) +
                                             " differs from x dtype " + DtypeName(x->dtype));
  }
  if (device != nullptr && !ascend_kernels::TakesThresholdDtype(x->dtype, device->dtype)) {
    const int32_t x_dtype = x->dtype;
    return Fail(ACLNN_ERR_PARAM_INVALID,
                std::string("threshold has dtype ") + DtypeName(device->dtype) +
                    ", which the kernel does not read for x of dtype " + DtypeName(x_dtype) +
                    " (it reads " + DtypeList([x_dtype](int32_t t) {
                      return ascend_kernels::TakesThresholdDtype(x_dtype, t);
                    }) +
                    ")");
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
  // 6. out's shape.
  if (out->shape != shape) {
    return Fail(ACLNN_ERR_PARAM_INVALID, "out shape " + ShapeString(out->shape) +
                                             " is not the broadcast shape " + ShapeString(shape));
  }
  std::string error;
  if (!ValidatePlatform(info, &error)) return Fail(ACLNN_ERR_PARAM_INVALID, error);

  // 7. empty: nothing runs. (Every count fits: step 5 checked the broadcast shape's.)
  int64_t n_grad = 0, n_x = 0, n_out = 0;
  CheckedNumElements(grad_output->shape, &n_grad);
  CheckedNumElements(x->shape, &n_x);
  CheckedNumElements(shape, &n_out);
  std::shared_ptr<ExecutorPlan> plan;
  if (n_x == 0 || n_grad == 0) {
    *executor = NewExecutor(&plan);
    if (*executor == nullptr) {
      return Fail(ACLNN_ERR_INNER_CREATE_EXECUTOR, "cannot create the executor");
    }
    *workspace_size = 0;
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
  const uint64_t n = static_cast<uint64_t>(n_out);
  const uint64_t elem = DtypeSize(x->dtype);
  uint64_t buffer_bytes;  // one workspace buffer of out's size
  if (__builtin_mul_overflow(n, elem, &buffer_bytes) || !AlignUp(buffer_bytes, &buffer_bytes)) {
    return Fail(ACLNN_ERR_PARAM_INVALID, "out shape " + ShapeString(shape) + " of " +
                                             DtypeName(x->dtype) +
                                             " holds more bytes than can be addressed");
  }
  aclOpExecutor* exec = NewExecutor(&plan);
  if (exec == nullptr) return Fail(ACLNN_ERR_INNER_CREATE_EXECUTOR, "cannot create the executor");
  auto cleanup = [exec](aclnnStatus status, std::string message) {
    ReleaseExecutor(exec);
    return Fail(status, std::move(message));
  };

  // 8. kernel and tiling. Broadcast inputs (fewer elements than out) are read through the
  // kernel's broadcast copy-in, never copied to out's size.
  plan->kernel = zero ? KernelOp::kReluGrad : KernelOp::kThresholdGradV2D;
  plan->dtype = x->dtype;
  plan->soc = static_cast<Soc>(info.soc);
  plan->ub_size = *info.ub_size;
  ascend_kernels::InputBroadcastTiling broadcast{};
  const bool kernel_broadcast =
      (static_cast<uint64_t>(n_grad) < n || static_cast<uint64_t>(n_x) < n) &&
      PlanInputBroadcast(shape, grad_output->shape, x->shape, &broadcast);
  ascend_kernels::ElementwiseTiling* tiling;
  if (zero) {
    plan->relu_grad_tiling.dtype = x->dtype;
    plan->relu_grad_tiling.broadcast = broadcast;
    tiling = &plan->relu_grad_tiling.tiling;
  } else {
    ascend_kernels::ThresholdGradV2DTilingData& t = plan->threshold_grad_tiling;
    t.dtype = x->dtype;
    t.broadcast = broadcast;
    if (scalar != nullptr) {
      t.threshold = MakeThresholdParams(*scalar, x->dtype);
    } else {  // the tiling says where the threshold is, not what it is
      t.threshold.source = static_cast<int32_t>(ascend_kernels::ThresholdSource::kDevice);
      t.threshold.gm_dtype = device->dtype;
      plan->threshold = device->First();
    }
    tiling = &t.tiling;
  }
  if (!ascend_kernels::ElementwiseTilingFor(n, x->dtype, plan->ub_size, *info.core_num, tiling,
                                            &error)) {
    return cleanup(ACLNN_ERR_INNER_TILING_ERROR, error);
  }

  // Copies. An input is read where it is when it is contiguous in the shape the kernel reads it
  // at (out's, or its own when broadcast) and aligned to its element; out is written where it is
  // when contiguous and aligned. Otherwise a contiguous buffer in the workspace stands in (copies
  // move bytes, so any alignment works). Overlap: copies in run before the kernel and the copy
  // out after it, so with an out copy every input is read before out is written; when the kernel
  // writes out directly, an input overlapping out is copied first unless it is exactly out's view
  // (in place: each element is read before it is written).
  plan->grad = grad_output->First();
  plan->x = x->First();
  plan->out = out->First();
  const auto aligned = [elem](const ViewBounds& b) { return b.first % elem == 0; };
  const bool out_direct = out->IsContiguous() && aligned(bounds[2]);
  uint64_t workspace_bytes = 0;
  bool sized = true;
  const auto take = [&](uint64_t* offset, uint64_t bytes) {
    *offset = workspace_bytes;
    sized = sized && AlignUp(bytes, &bytes) &&
            !__builtin_add_overflow(workspace_bytes, bytes, &workspace_bytes) &&
            workspace_bytes <= kMaxPlannedBytes;
  };
  const std::vector<int64_t> contiguous = ContiguousStrides(shape);
  const auto plan_input = [&](const aclTensor& t, int64_t count, const ViewBounds& b,
                              std::optional<StridedCopyPlan>* copy, uint64_t* offset) {
    const bool own_shape = kernel_broadcast && static_cast<uint64_t>(count) < n;
    if ((own_shape || static_cast<uint64_t>(count) == n) && t.IsContiguous() && aligned(b) &&
        !(out_direct && Overlaps(b, bounds[2]) && !SameView(t, *out))) {
      return;
    }
    if (own_shape) {
      *copy = PlanStridedCopy(t.shape, t.strides, ContiguousStrides(t.shape), elem, false);
      take(offset, static_cast<uint64_t>(count) * elem);  // fewer bytes than out's
    } else {
      *copy = PlanStridedCopy(shape, BroadcastStrides(t.shape, t.strides, shape), contiguous, elem,
                              false);
      take(offset, buffer_bytes);
    }
  };
  plan_input(*grad_output, n_grad, bounds[0], &plan->grad_copy, &plan->grad_offset);
  plan_input(*x, n_x, bounds[1], &plan->x_copy, &plan->x_offset);
  if (!out_direct) {
    // An out whose elements overlap is written by one block, so the writes do not race.
    plan->out_copy = PlanStridedCopy(shape, contiguous, out->strides, elem,
                                     !IsNonOverlapping(out->shape, out->strides));
    take(&plan->out_offset, buffer_bytes);
  }
  WorkspacePlan& ws = plan->workspace;
  if (!sized || (workspace_bytes > 0 &&
                 (__builtin_add_overflow(workspace_bytes, kWorkspaceAlignment - 1, &ws.size) ||
                  ws.size > kMaxPlannedBytes))) {
    return cleanup(ACLNN_ERR_PARAM_INVALID,
                   "the workspace for out shape " + ShapeString(shape) + " of " +
                       DtypeName(x->dtype) +
                       " (contiguous copies of strided, broadcast, unaligned or overlapping "
                       "tensors) overflows a 64-bit byte count");
  }
  ws.planned = workspace_bytes;
  *workspace_size = ws.size;
  *executor = exec;
  return ACLNN_SUCCESS;
}

// The device-threshold phase one without the bindings (see the public header).
aclnnStatus PlanDeviceThreshold(const aclTensor* grad_output, const aclTensor* x,
                                const aclTensor* threshold, aclTensor* out,
                                uint64_t* workspace_size, aclOpExecutor** executor,
                                const PlatformInfo* platform) {
  if (aclnnStatus status = CheckPointers(threshold, grad_output, x, out, workspace_size, executor);
      status != ACLNN_SUCCESS) {
    return status;
  }
  aclScalar probe;
  const uint64_t zero_bits = 0;
  LoadScalar(&zero_bits, threshold->dtype, &probe);
  if (probe.kind == aclScalar::Kind::kInvalid) {
    return Fail(ACLNN_ERR_PARAM_INVALID, std::string("threshold has dtype ") +
                                             DtypeName(threshold->dtype) +
                                             ", expected an integer or floating-point array");
  }
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
  if (broadcast == BroadcastResult::kIncompatible) {
    return Fail(ACLNN_ERR_PARAM_INVALID, operands + " do not broadcast to out " + ShapeString(os));
  }
  if (broadcast == BroadcastResult::kOverflow && !empty) {
    return Fail(ACLNN_ERR_PARAM_INVALID, operands + " broadcast to " + ShapeString(shape) +
                                             ", whose element count overflows int64");
  }
  if (shape != os) {
    return Fail(ACLNN_ERR_PARAM_INVALID, "the result's shape " + ShapeString(os) +
                                             " is not the broadcast shape " + ShapeString(shape) +
                                             " of " + operands);
  }
  if (empty) {  // dtypes and platform checked, nothing planned, no stride of these shapes used
    aclTensor g = *grad_output, xv = *x, o = *out;
    for (aclTensor* t : {&g, &xv, &o}) {
      t->shape = {0};
      t->strides = {1};
    }
    return PlanWholeTensors(&g, &xv, &o, nullptr, threshold, workspace_size, executor, platform);
  }

  const aclTensor* const tensors[kNumOperands] = {grad_output, x, threshold, out};
  ViewBounds bounds[kNumOperands];
  std::string error;
  std::array<std::vector<int64_t>, kNumOperands> strides;
  for (int k = 0; k < kNumOperands; ++k) {
    const aclTensor& t = *tensors[k];
    if (t.data == nullptr) {
      return Fail(ACLNN_ERR_PARAM_NULLPTR, std::string(kOperandNames[k]) + " data is null");
    }
    if (t.strides.size() != t.shape.size()) {
      return Fail(ACLNN_ERR_PARAM_INVALID,
                  std::string(kOperandNames[k]) + " has " + std::to_string(t.strides.size()) +
                      " strides for rank " + std::to_string(t.shape.size()));
    }
    if (!ComputeViewBounds(t, kOperandNames[k], &bounds[k], &error)) {
      return Fail(ACLNN_ERR_PARAM_INVALID, error);
    }
    strides[k] = BroadcastStrides(t.shape, t.strides, os);
  }
  // The kernel reads the threshold where it is, so it must be aligned to its element.
  const uint64_t t_elem = DtypeSize(threshold->dtype);
  if (bounds[ascend_kernels::kOperandThreshold].first % t_elem != 0) {
    return Fail(ACLNN_ERR_PARAM_INVALID, "threshold's data is not aligned to its " +
                                             std::to_string(t_elem) +
                                             "-byte element (the kernel reads it in place)");
  }

  // Slices: out's dims after the last one along which the threshold varies, fewer when more than
  // the kernel's rank remain; the dims before them are looped over, slice after slice. Each slice
  // is then a suffix of out: contiguous when out is.
  const Layout<kNumOperands> layout = MergeDims<kNumOperands>(os, strides);
  const size_t rank = layout.sizes.size();
  size_t looped = 0;
  for (size_t d = 0; d < rank; ++d) {
    if (layout.strides[d][ascend_kernels::kOperandThreshold] != 0) looped = d + 1;
  }
  looped = std::max(looped, rank > kMaxRank ? rank - kMaxRank : 0);
  SliceLoop slices;
  aclTensor views[3] = {*grad_output, *x, *out};  // slice 0
  const int view_operands[3] = {ascend_kernels::kOperandGrad, ascend_kernels::kOperandX,
                                ascend_kernels::kOperandOut};
  for (aclTensor& v : views) v.shape.clear(), v.strides.clear();
  for (size_t d = 0; d < rank; ++d) {
    if (d < looped) {
      slices.sizes.push_back(layout.sizes[d]);
      slices.strides.push_back(layout.strides[d]);
      slices.count *= layout.sizes[d];  // a divisor of out's element count
      continue;
    }
    for (int v = 0; v < 3; ++v) {
      const int64_t stride = layout.strides[d][view_operands[v]];
      views[v].shape.push_back(stride == 0 ? 1 : layout.sizes[d]);
      views[v].strides.push_back(stride);
    }
  }
  const aclnnStatus status = PlanWholeTensors(&views[0], &views[1], &views[2], nullptr, threshold,
                                              workspace_size, executor, platform);
  if (status != ACLNN_SUCCESS) return status;
  const auto refuse = [executor](aclnnStatus code, std::string message) {
    ReleaseExecutor(*executor);
    *executor = nullptr;
    return Fail(code, std::move(message));
  };
  if (Overlaps(bounds[ascend_kernels::kOperandThreshold], bounds[ascend_kernels::kOperandOut])) {
    return refuse(ACLNN_ERR_PARAM_INVALID,
                  "threshold overlaps out (the kernel reads the threshold while out is written)");
  }
  if (slices.count == 1) return ACLNN_SUCCESS;

  // A batch runs its tensors in place: no copies, and an input overlapping out only as out's view.
  ExecutorPlan* plan = (*executor)->plan.get();
  std::string refused;
  for (int k : {ascend_kernels::kOperandGrad, ascend_kernels::kOperandX}) {
    const bool copied =
        k == ascend_kernels::kOperandGrad ? plan->grad_copy.has_value() : plan->x_copy.has_value();
    if (copied || (Overlaps(bounds[k], bounds[ascend_kernels::kOperandOut]) &&
                   !SameView(*tensors[k], *out))) {
      refused = kOperandNames[k];
    }
  }
  if (plan->out_copy) refused = "out";
  if (!refused.empty()) {
    return refuse(ACLNN_ERR_PARAM_INVALID,
                  "a threshold of " + std::to_string(slices.count) + " slices of out " +
                      ShapeString(os) + " runs its tensors in place, but " + refused +
                      " is strided, unaligned or overlaps out (copies are planned for a whole "
                      "tensor only: make it contiguous first)");
  }
  // One launch over every slice when its tiling can describe them (kernel_args.h), else one
  // launch per slice.
  ascend_kernels::ThresholdGradV2DTilingData& t = plan->threshold_grad_tiling;
  bool one_launch = slices.sizes.size() <= ascend_kernels::kMaxBatchRank;
  for (const auto& s : slices.strides) {
    for (int64_t stride : s) one_launch = one_launch && stride >= 0;
  }
  ascend_kernels::ThresholdBatchTiling& batch = t.batch;
  if (one_launch) {
    batch.slice_num = static_cast<uint64_t>(slices.count);
    batch.slice_len = t.tiling.total_num;
    batch.rank = slices.sizes.size();
    for (size_t d = 0; d < slices.sizes.size(); ++d) {
      batch.sizes[d] = static_cast<uint64_t>(slices.sizes[d]);
      for (int j = 0; j < kNumOperands; ++j) batch.strides[d][j] = slices.strides[d][j];
    }
    const PlatformInfo info = WithDefaults(platform != nullptr ? *platform : PlatformInfo{});
    if (!ascend_kernels::ElementwiseTilingFor(batch.slice_num * batch.slice_len, plan->dtype,
                                              plan->ub_size, *info.core_num, &t.tiling, &error)) {
      return refuse(ACLNN_ERR_INNER_TILING_ERROR, error);
    }
  } else {
    plan->slices = std::move(slices);
  }
  return ACLNN_SUCCESS;
}

}  // namespace

PlatformInfo WithDefaults(const PlatformInfo& info) {
  PlatformInfo out = info;
  const SocRow& row = RowOf(info.soc);
  const PlatformInfo host = info.soc == SocVersion::kHost ? HostPlatformInfo() : PlatformInfo{};
  if (!out.ub_size) out.ub_size = host.ub_size.value_or(row.ub_bytes);
  if (!out.core_num) out.core_num = host.core_num.value_or(row.default_cores);
  return out;
}

ascend_kernels::ThresholdParams MakeThresholdParams(const aclScalar& threshold, aclDataType x) {
  ScopedDenormalsAsNumbers guard;  // a subnormal float32 threshold is a number
  using Kind = aclScalar::Kind;
  const aclScalar& t = threshold;
  uint64_t bits = 0;
  Dtype dtype = Dtype::kFloat64;
  if (ascend_kernels::IntegerRange range{0, 0}; ascend_kernels::DtypeIntegerRange(x, &range)) {
    // Exact: an int64, or the float's own value as a float64; a uint64 beyond int64 passes no x.
    if (t.kind == Kind::kFloat || (t.kind == Kind::kUnsigned && t.u > INT64_MAX)) {
      const double value = t.kind == Kind::kFloat ? t.f : std::numeric_limits<double>::infinity();
      std::memcpy(&bits, &value, 8);
    } else {
      const int64_t value = t.kind == Kind::kSigned ? t.i : static_cast<int64_t>(t.u);
      std::memcpy(&bits, &value, 8);
      dtype = Dtype::kInt64;
    }
  } else if (x == ACL_DOUBLE) {  // rounded once, from the scalar's exact value
    const double value = t.kind == Kind::kSigned     ? static_cast<double>(t.i)
                         : t.kind == Kind::kUnsigned ? static_cast<double>(t.u)
                                                     : t.f;
    std::memcpy(&bits, &value, 8);
  } else {
    const float value = t.kind == Kind::kSigned     ? static_cast<float>(t.i)
                        : t.kind == Kind::kUnsigned ? static_cast<float>(t.u)
                                                    : static_cast<float>(t.f);
    uint32_t value_bits;
    std::memcpy(&value_bits, &value, 4);
    bits = value_bits;
    dtype = Dtype::kFloat32;
  }
  return ascend_kernels::ThresholdParamsFromBits(x, static_cast<int32_t>(dtype), bits);
}

aclnnStatus aclnnThresholdBackwardGetWorkspaceSize(const aclTensor* grad_output, const aclTensor* x,
                                                   const aclScalar* threshold, aclTensor* out,
                                                   uint64_t* workspace_size,
                                                   aclOpExecutor** executor,
                                                   const PlatformInfo* platform) {
  ScopedDenormalsAsNumbers guard;  // a subnormal threshold is neither 0 nor flushed
  aclnnStatus status = CheckPointers(threshold, grad_output, x, out, workspace_size, executor);
  if (status == ACLNN_SUCCESS) {
    status = PlanWholeTensors(grad_output, x, out, threshold, nullptr, workspace_size, executor,
                              platform);
  }
  if (status == ACLNN_SUCCESS) RecordBindings(*executor, grad_output, x, nullptr, out);
  return status;
}

aclnnStatus aclnnThresholdBackwardDeviceThresholdGetWorkspaceSize(
    const aclTensor* grad_output, const aclTensor* x, const aclTensor* threshold, aclTensor* out,
    uint64_t* workspace_size, aclOpExecutor** executor, const PlatformInfo* platform) {
  const aclnnStatus status =
      PlanDeviceThreshold(grad_output, x, threshold, out, workspace_size, executor, platform);
  if (status == ACLNN_SUCCESS) RecordBindings(*executor, grad_output, x, threshold, out);
  return status;
}

}  // namespace jax_threshold::aclnn
