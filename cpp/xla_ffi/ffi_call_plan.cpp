// Phase one of a threshold_backward custom call (see ffi_call_plan.h).
#include "xla_ffi/ffi_call_plan.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string>
#include <utility>

#include "aclnn/tensor.h"  // DataTypeSize
#include "xla_ffi/ffi_buffer.h"
#include "xla_ffi/ffi_error.h"
#include "xla_ffi/ffi_handler.h"  // kWorkspaceAlignment

namespace jax_threshold::ffi_handler {

namespace ffi = ::xla::ffi;
using aclnn::aclDataType;
using aclnn::aclnnStatus;

namespace {

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

// A strided view of one buffer (shape, strides and offset in elements).
struct View {
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  int64_t offset = 0;
};

aclnn::aclTensor* CreateTensor(const View& view, aclDataType dtype, void* data) {
  return aclnn::aclCreateTensor(view.shape.data(), view.shape.size(), dtype, view.strides.data(),
                                view.offset, data);
}

// The call in out's index space, simplified for the executor: size-1 out dims dropped, and
// adjacent dims merged where every operand (grad_output, x, threshold) is either contiguous
// across both or broadcast along both. Operand k's stride along a dim is 0 where it broadcasts.
struct Layout {
  static constexpr int kGrad = 0, kX = 1, kThreshold = 2, kOut = 3, kNumOperands = 4;
  std::vector<int64_t> sizes;
  std::vector<std::array<int64_t, kNumOperands>> strides;
};

// Null if some operand has a higher rank than out or does not broadcast to it.
std::optional<Layout> MakeLayout(const std::vector<int64_t>& out,
                                 const std::array<const std::vector<int64_t>*, 3>& operands) {
  const size_t rank = out.size();
  std::array<std::vector<int64_t>, Layout::kNumOperands> padded;  // aligned to out's rank
  for (int k = 0; k < 3; ++k) {
    const std::vector<int64_t>& dims = *operands[k];
    if (dims.size() > rank) return std::nullopt;
    padded[k].assign(rank - dims.size(), 1);
    padded[k].insert(padded[k].end(), dims.begin(), dims.end());
    for (size_t d = 0; d < rank; ++d) {
      if (padded[k][d] != 1 && padded[k][d] != out[d]) return std::nullopt;
    }
  }
  padded[Layout::kOut] = out;
  std::array<std::vector<int64_t>, Layout::kNumOperands> row_major;
  for (int k = 0; k < Layout::kNumOperands; ++k) row_major[k] = RowMajorStrides(padded[k]);

  Layout layout;
  for (size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    std::array<int64_t, Layout::kNumOperands> strides;
    for (int k = 0; k < Layout::kNumOperands; ++k) {
      strides[k] = padded[k][d] == out[d] ? row_major[k][d] : 0;
    }
    if (!layout.sizes.empty()) {
      auto& prev = layout.strides.back();
      bool mergeable = true;
      for (int k = 0; k < Layout::kNumOperands; ++k) {
        mergeable &= (prev[k] == 0) == (strides[k] == 0) && prev[k] == strides[k] * out[d];
      }
      if (mergeable) {
        layout.sizes.back() *= out[d];
        prev = strides;
        continue;
      }
    }
    layout.sizes.push_back(out[d]);
    layout.strides.push_back(strides);
  }
  return layout;
}

bool SameDims(const ffi::AnyBuffer& a, const ffi::AnyBuffer& b) {
  const auto da = a.dimensions(), db = b.dimensions();
  return da.size() == db.size() && std::equal(da.begin(), da.end(), db.begin());
}

// NumPy broadcasting of `shapes`; false if they do not broadcast.
bool BroadcastDims(const std::array<const std::vector<int64_t>*, 3>& shapes,
                   std::vector<int64_t>& out) {
  size_t rank = 0;
  for (const auto* s : shapes) rank = std::max(rank, s->size());
  out.assign(rank, 1);
  for (const auto* s : shapes) {
    for (size_t i = 0; i < s->size(); ++i) {
      int64_t& o = out[rank - s->size() + i];
      const int64_t d = (*s)[i];
      if (d == o || d == 1) continue;
      if (o != 1) return false;
      o = d;
    }
  }
  return true;
}

}  // namespace

CallState::~CallState() {
  for (Slice& s : slices) {
    if (s.executor != nullptr) aclnn::aclDestroyAclOpExecutor(s.executor);
    if (s.grad != nullptr) aclnn::aclDestroyTensor(s.grad);
    if (s.x != nullptr) aclnn::aclDestroyTensor(s.x);
    if (s.out != nullptr) aclnn::aclDestroyTensor(s.out);
    if (s.threshold != nullptr) aclnn::aclDestroyScalar(s.threshold);
  }
  std::free(host_workspace);
}

ffi::Error CallState::RunOutcome(size_t k) const {
  const aclnnStatus status = aclnn::aclnnThresholdBackwardRunStatus(slices[k].executor);
  std::string error = stream ? stream->FirstError() : std::string();
  if (status == aclnn::ACLNN_SUCCESS && error.empty()) return ffi::Error::Success();
  return ffi::Error(ffi::ErrorCode::kInternal,
                    "jax_threshold: aclnnThresholdBackward's run failed with aclnn status " +
                        std::to_string(status) + " (" + StatusName(status) + ")" +
                        (error.empty() ? std::string() : ": " + error));
}

// Slices as ffi_call_plan.h says (after merging, only alternating broadcast patterns of rank > 8
// need the rank loop); views of the dims not looped over go to the executor, which broadcasts
// them.
ffi::Error PlanCall(CallState& state, const ffi::AnyBuffer& grad, const ffi::AnyBuffer& x,
                    const ThresholdValues& threshold, const ffi::AnyBuffer& out,
                    const aclnn::PlatformInfo* platform) {
  const aclDataType grad_dtype = ToAclDataType(grad.element_type());
  const aclDataType x_dtype = ToAclDataType(x.element_type());
  const aclDataType out_dtype = ToAclDataType(out.element_type());
  int64_t threshold_count = 1;
  for (int64_t d : threshold.dims) threshold_count *= d;
  const std::vector<int64_t> scalar_dims;
  const std::vector<int64_t>& thr_dims = threshold_count == 1 ? scalar_dims : threshold.dims;

  // Buffers of no elements may come with a null pointer; the executor returns before touching
  // them (docs/behaviour.md §2 step 7) but checks pointers first.
  static char empty_storage[16];
  auto data_of = [](const ffi::AnyBuffer& b) -> void* {
    return b.untyped_data() != nullptr ? b.untyped_data() : empty_storage;
  };
  auto add_slice = [&](const View& g, const View& xv, const View& o, int64_t threshold_index,
                       const aclnn::PlatformInfo* slice_platform = nullptr) -> ffi::Error {
    Slice& s = state.slices.emplace_back();
    s.grad = CreateTensor(g, grad_dtype, data_of(grad));
    s.x = CreateTensor(xv, x_dtype, data_of(x));
    s.out = CreateTensor(o, out_dtype, data_of(out));
    s.threshold = aclnn::aclCreateScalar(
        threshold.data + threshold_index * static_cast<int64_t>(threshold.element_bytes),
        threshold.dtype);
    const aclnnStatus status = aclnn::aclnnThresholdBackwardGetWorkspaceSize(
        s.grad, s.x, s.threshold, s.out, &s.workspace_size, &s.executor,
        slice_platform != nullptr ? slice_platform : platform);
    if (status != aclnn::ACLNN_SUCCESS) {
      return AclnnError("aclnnThresholdBackwardGetWorkspaceSize", status);
    }
    if (s.executor == nullptr) {
      return ffi::Error(ffi::ErrorCode::kInternal,
                        "jax_threshold: aclnnThresholdBackwardGetWorkspaceSize returned "
                        "ACLNN_SUCCESS without an executor");
    }
    s.workspace_offset = state.workspace_bytes;
    state.workspace_bytes +=
        (s.workspace_size + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
    return ffi::Error::Success();
  };

  // The common call: grad_output, x and out of one shape, one threshold. The layout below would
  // merge every dim into one contiguous view ([] for a single element); make it directly, with
  // none of the per-call vectors the general case needs.
  if (threshold_count == 1 && SameDims(grad, out) && SameDims(x, out) && out.element_count() > 0) {
    const int64_t n = static_cast<int64_t>(out.element_count());
    const View flat = n == 1 ? View{} : View{{n}, {1}, 0};
    return add_slice(flat, flat, flat, 0);
  }

  const std::vector<int64_t> grad_dims = Dims(grad), x_dims = Dims(x), out_dims = Dims(out);
  // A direct custom call may declare any result; XLA hands it over as declared.
  if (std::vector<int64_t> expected; BroadcastDims({&grad_dims, &x_dims, &thr_dims}, expected) &&
                                     expected != out_dims) {
    return InvalidArgument("the result's shape " + ShapeString(out_dims) +
                           " is not the broadcast shape " + ShapeString(expected) +
                           " of grad_output " + ShapeString(grad_dims) + ", x " +
                           ShapeString(x_dims) + " and threshold " +
                           ShapeString(threshold.dims));
  }

  std::optional<Layout> layout = MakeLayout(out_dims, {&grad_dims, &x_dims, &thr_dims});
  if (!layout) {
    if (threshold_count != 1) {
      return InvalidArgument("grad_output " + ShapeString(grad_dims) + ", x " +
                             ShapeString(x_dims) + " and threshold " +
                             ShapeString(threshold.dims) + " do not broadcast to out " +
                             ShapeString(out_dims));
    }
    // Malformed shapes: hand the buffers over as they are, for phase one to report.
    auto whole = [](const std::vector<int64_t>& d) { return View{d, RowMajorStrides(d), 0}; };
    return add_slice(whole(grad_dims), whole(x_dims), whole(out_dims), 0);
  }

  if (threshold_count == 0) return ffi::Error::Success();  // a batch of none: out is empty
  if (std::find(out_dims.begin(), out_dims.end(), 0) != out_dims.end()) {
    // Nothing to compute; phase one still checks the dtypes. (Strides cannot tell broadcast
    // dims here: every stride of an empty array may be 0.)
    const View empty{{0}, {1}, 0};
    return add_slice(empty, empty, empty, 0);
  }

  // Which layout dims are looped over (`looped`), and which the executor sees.
  constexpr size_t kMaxExecutorRank = 8;
  const size_t rank = layout->sizes.size();
  std::vector<bool> looped(rank, false);
  size_t executor_rank = 0;
  for (size_t d = 0; d < rank; ++d) {
    looped[d] = layout->strides[d][Layout::kThreshold] != 0;
    executor_rank += !looped[d];
  }
  for (size_t d = 0; d < rank && executor_rank > kMaxExecutorRank; ++d) {
    if (!looped[d]) {
      looped[d] = true;
      --executor_rank;
    }
  }
  std::array<View, 3> views;  // grad_output, x, out: the executor's dims, offsets set per slice
  const int operand_of_view[3] = {Layout::kGrad, Layout::kX, Layout::kOut};
  int64_t slice_count = 1;
  for (size_t d = 0; d < rank; ++d) {
    if (looped[d]) {
      slice_count *= layout->sizes[d];
      continue;
    }
    for (int v = 0; v < 3; ++v) {
      const int64_t stride = layout->strides[d][operand_of_view[v]];
      views[v].shape.push_back(stride == 0 ? 1 : layout->sizes[d]);
      views[v].strides.push_back(stride);
    }
  }

  // A batched threshold over small slices: one phase-one plan per kernel, shared by every slice.
  const uint64_t out_bytes_per_slice =
      out.size_bytes() / static_cast<uint64_t>(std::max<int64_t>(slice_count, 1));
  if (platform != nullptr && platform->soc == aclnn::SocVersion::kHost && threshold_count > 1 &&
      slice_count > 1 && out_bytes_per_slice <= kInlineMaxBytes &&
      SharedPlanSlices::SupportsThresholdDtype(threshold.dtype)) {
    auto shared = std::make_unique<SharedPlanSlices>();
    for (size_t d = 0; d < rank; ++d) {
      if (!looped[d]) continue;
      shared->sizes.push_back(layout->sizes[d]);
      shared->strides.push_back(layout->strides[d]);
    }
    shared->count = slice_count;
    shared->element_bytes = aclnn::DataTypeSize(out_dtype);
    shared->threshold_dtype = threshold.dtype;
    shared->threshold_data = threshold.data;
    shared->threshold_bytes = threshold.element_bytes;
    aclnn::PlatformInfo one_block = *platform;
    one_block.core_num = 1;
    bool shareable = true;
    for (int which = 0; which < 2 && shareable; ++which) {
      int64_t k = 0;  // the first slice that needs this plan
      while (k < slice_count && shared->ThresholdIsZero(k) != (which == 1)) ++k;
      if (k == slice_count) continue;
      const std::array<int64_t, 4> offset = shared->Offsets(k);
      for (int v = 0; v < 3; ++v) views[v].offset = offset[operand_of_view[v]];
      if (ffi::Error e = add_slice(views[0], views[1], views[2], offset[Layout::kThreshold],
                                   &one_block);
          e.failure()) {
        return e;
      }
      Slice& s = state.slices.back();
      shareable = SharedPlanSlices::IsShareable(s.executor);
      if (shareable) {
        shared->executors[which] = std::exchange(s.executor, nullptr);
        shared->base[which] = offset;
      }
    }
    state.slices.clear();  // destroys the representatives' descriptors (executors moved out)
    state.workspace_bytes = 0;
    if (shareable) {
      state.shared = std::move(shared);
      return ffi::Error::Success();
    }
  }

  state.slices.reserve(static_cast<size_t>(slice_count));
  std::vector<int64_t> index(rank, 0);  // odometer over the looped dims
  for (int64_t k = 0; k < slice_count; ++k) {
    std::array<int64_t, Layout::kNumOperands> offset{};
    for (size_t d = 0; d < rank; ++d) {
      for (int op = 0; op < Layout::kNumOperands; ++op) {
        offset[op] += index[d] * layout->strides[d][op];
      }
    }
    for (int v = 0; v < 3; ++v) views[v].offset = offset[operand_of_view[v]];
    if (ffi::Error e = add_slice(views[0], views[1], views[2], offset[Layout::kThreshold]);
        e.failure()) {
      return e;
    }
    for (size_t d = rank; d-- > 0;) {
      if (!looped[d]) continue;
      if (++index[d] < layout->sizes[d]) break;
      index[d] = 0;
    }
  }
  return ffi::Error::Success();
}

}  // namespace jax_threshold::ffi_handler
