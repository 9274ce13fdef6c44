// XLA FFI handlers of threshold_backward (see ffi_handler.h for the targets and the threading).
#include "ffi_handler.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jax_threshold/aclnn_threshold_backward.h"
#include "xla/ffi/api/ffi.h"
#include "xla_thread_pool_stream.h"  // header-only

#ifdef JAX_THRESHOLD_ASCEND
#include "acl/acl.h"
#endif

namespace jax_threshold::ffi_handler {
namespace {

namespace ffi = ::xla::ffi;
using aclnn::aclDataType;
using aclnn::aclnnStatus;

aclDataType ToAclDataType(ffi::DataType dtype) {
  switch (dtype) {
    case ffi::DataType::F32: return aclnn::ACL_FLOAT;
    case ffi::DataType::F16: return aclnn::ACL_FLOAT16;
    case ffi::DataType::BF16: return aclnn::ACL_BF16;
    case ffi::DataType::F64: return aclnn::ACL_DOUBLE;
    case ffi::DataType::S8: return aclnn::ACL_INT8;
    case ffi::DataType::S16: return aclnn::ACL_INT16;
    case ffi::DataType::S32: return aclnn::ACL_INT32;
    case ffi::DataType::S64: return aclnn::ACL_INT64;
    case ffi::DataType::U8: return aclnn::ACL_UINT8;
    case ffi::DataType::U16: return aclnn::ACL_UINT16;
    case ffi::DataType::U32: return aclnn::ACL_UINT32;
    case ffi::DataType::U64: return aclnn::ACL_UINT64;
    case ffi::DataType::PRED: return aclnn::ACL_BOOL;
    case ffi::DataType::C64: return aclnn::ACL_COMPLEX64;
    case ffi::DataType::C128: return aclnn::ACL_COMPLEX128;
    default: return aclnn::ACL_DT_UNDEFINED;  // phase one rejects it with its name
  }
}

const char* StatusName(aclnnStatus status) {
  switch (status) {
    case aclnn::ACLNN_SUCCESS: return "ACLNN_SUCCESS";
    case aclnn::ACLNN_ERR_PARAM_NULLPTR: return "ACLNN_ERR_PARAM_NULLPTR";
    case aclnn::ACLNN_ERR_PARAM_INVALID: return "ACLNN_ERR_PARAM_INVALID";
    case aclnn::ACLNN_ERR_INNER_CREATE_EXECUTOR: return "ACLNN_ERR_INNER_CREATE_EXECUTOR";
    case aclnn::ACLNN_ERR_INNER_NULLPTR: return "ACLNN_ERR_INNER_NULLPTR";
    case aclnn::ACLNN_ERR_INNER_TILING_ERROR: return "ACLNN_ERR_INNER_TILING_ERROR";
    case aclnn::ACLNN_ERR_RUNTIME_ERROR: return "ACLNN_ERR_RUNTIME_ERROR";
    default: return "unknown aclnn status";
  }
}

// Must be called on the thread that got `status`: the reason is thread-local.
ffi::Error AclnnError(const char* function, aclnnStatus status) {
  const char* reason = aclnn::aclGetRecentErrMsg();
  const bool bad_param =
      status == aclnn::ACLNN_ERR_PARAM_NULLPTR || status == aclnn::ACLNN_ERR_PARAM_INVALID;
  return ffi::Error(bad_param ? ffi::ErrorCode::kInvalidArgument : ffi::ErrorCode::kInternal,
                    std::string("jax_threshold: ") + function + " failed with aclnn status " +
                        std::to_string(status) + " (" + StatusName(status) +
                        "): " + (reason != nullptr && *reason ? reason : "no reason given"));
}

ffi::Error InvalidArgument(std::string message) {
  return ffi::Error(ffi::ErrorCode::kInvalidArgument, "jax_threshold: " + std::move(message));
}

std::string ShapeString(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

std::vector<int64_t> Dims(const ffi::AnyBuffer& buffer) {
  auto dims = buffer.dimensions();
  return std::vector<int64_t>(dims.begin(), dims.end());
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

// The threshold as the handler sees it: host bytes of `count` elements of `dtype` (row-major,
// shape `dims`; empty dims and one element for a scalar).
struct ThresholdValues {
  aclDataType dtype = aclnn::ACL_DT_UNDEFINED;
  const char* data = nullptr;
  size_t element_bytes = 0;
  std::vector<int64_t> dims;
};

// A strided view of one buffer (shape, strides and offset in elements).
struct View {
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  int64_t offset = 0;
};

// One executor run: the part of the call one threshold element covers.
struct Slice {
  aclnn::aclTensor* grad = nullptr;
  aclnn::aclTensor* x = nullptr;
  aclnn::aclTensor* out = nullptr;
  aclnn::aclScalar* threshold = nullptr;
  aclnn::aclOpExecutor* executor = nullptr;
  uint64_t workspace_size = 0;
  uint64_t workspace_offset = 0;
};

// Everything one call owns until its last kernel block has finished.
struct CallState {
  std::vector<Slice> slices;
  uint64_t workspace_bytes = 0;
  void* host_workspace = nullptr;  // CPU: freed here
  std::unique_ptr<XlaThreadPoolStream> stream;
  std::optional<ffi::CountDownPromise> done;  // asynchronous CPU runs

  CallState() = default;
  CallState(const CallState&) = delete;
  CallState& operator=(const CallState&) = delete;
  ~CallState() {
    for (Slice& s : slices) {
      if (s.executor != nullptr) aclnn::aclDestroyAclOpExecutor(s.executor);
      if (s.grad != nullptr) aclnn::aclDestroyTensor(s.grad);
      if (s.x != nullptr) aclnn::aclDestroyTensor(s.x);
      if (s.out != nullptr) aclnn::aclDestroyTensor(s.out);
      if (s.threshold != nullptr) aclnn::aclDestroyScalar(s.threshold);
    }
    std::free(host_workspace);
  }

  // The outcome of slice k's run once it has finished (on_done, or return of an inline run).
  ffi::Error RunOutcome(size_t k) const {
    const aclnnStatus status = aclnn::aclnnThresholdBackwardRunStatus(slices[k].executor);
    std::string error = stream ? stream->FirstError() : std::string();
    if (status == aclnn::ACLNN_SUCCESS && error.empty()) return ffi::Error::Success();
    return ffi::Error(ffi::ErrorCode::kInternal,
                      "jax_threshold: aclnnThresholdBackward's run failed with aclnn status " +
                          std::to_string(status) + " (" + StatusName(status) + ")" +
                          (error.empty() ? std::string() : ": " + error));
  }
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

// Phase one for every slice; fills `state.slices` and sizes the workspace.
//
// A slice is one executor run. Dims along which the threshold varies (vmap batched it) are looped
// over, one slice per index, so each run sees a single scalar threshold; so are leading dims
// beyond the executor's rank limit of 8 (after merging, only alternating broadcast patterns of
// rank > 8 need that). Views of the other dims go to the executor, which broadcasts them.
ffi::Error PlanCall(CallState& state, const ffi::AnyBuffer& grad, const ffi::AnyBuffer& x,
                    const ThresholdValues& threshold, const ffi::AnyBuffer& out,
                    const aclnn::PlatformInfo* platform) {
  const aclDataType grad_dtype = ToAclDataType(grad.element_type());
  const aclDataType x_dtype = ToAclDataType(x.element_type());
  const aclDataType out_dtype = ToAclDataType(out.element_type());
  const std::vector<int64_t> grad_dims = Dims(grad), x_dims = Dims(x), out_dims = Dims(out);
  int64_t threshold_count = 1;
  for (int64_t d : threshold.dims) threshold_count *= d;
  const std::vector<int64_t> scalar_dims;
  const std::vector<int64_t>& thr_dims = threshold_count == 1 ? scalar_dims : threshold.dims;

  // Buffers of no elements may come with a null pointer; the executor returns before touching
  // them (SPEC §2 step 7) but checks pointers first.
  static char empty_storage[16];
  auto data_of = [](const ffi::AnyBuffer& b) -> void* {
    return b.untyped_data() != nullptr ? b.untyped_data() : empty_storage;
  };
  auto add_slice = [&](const View& g, const View& xv, const View& o,
                       int64_t threshold_index) -> ffi::Error {
    Slice& s = state.slices.emplace_back();
    s.grad = CreateTensor(g, grad_dtype, data_of(grad));
    s.x = CreateTensor(xv, x_dtype, data_of(x));
    s.out = CreateTensor(o, out_dtype, data_of(out));
    s.threshold = aclnn::aclCreateScalar(
        threshold.data + threshold_index * static_cast<int64_t>(threshold.element_bytes),
        threshold.dtype);
    const aclnnStatus status = aclnn::aclnnThresholdBackwardGetWorkspaceSize(
        s.grad, s.x, s.threshold, s.out, &s.workspace_size, &s.executor, platform);
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

// The static target's threshold, stored in its own dtype so the executor sees the same scalar as
// through the operand target.
ffi::Error EncodeStaticThreshold(std::string_view dtype_name, double value_float,
                                 int64_t value_int, ThresholdValues& threshold,
                                 unsigned char (&storage)[8]) {
  auto store = [&](auto value, aclDataType dtype) {
    static_assert(sizeof(value) <= sizeof(storage));
    std::memcpy(storage, &value, sizeof(value));
    threshold.dtype = dtype;
    threshold.data = reinterpret_cast<const char*>(storage);
    threshold.element_bytes = sizeof(value);
    return ffi::Error::Success();
  };
  auto store_int = [&](auto tag, aclDataType dtype) {
    using T = decltype(tag);
    if (value_int < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
        value_int > static_cast<int64_t>(std::numeric_limits<T>::max())) {
      return InvalidArgument("threshold_int " + std::to_string(value_int) + " is out of range of " +
                             std::string(dtype_name));
    }
    return store(static_cast<T>(value_int), dtype);
  };
  if (dtype_name == "float32") {
    const float f = static_cast<float>(value_float);
    if (!std::isnan(value_float) && static_cast<double>(f) != value_float) {
      return InvalidArgument("threshold_float is not a float32 value");
    }
    return store(f, aclnn::ACL_FLOAT);
  }
  if (dtype_name == "float64") return store(value_float, aclnn::ACL_DOUBLE);
  if (dtype_name == "int8") return store_int(int8_t{}, aclnn::ACL_INT8);
  if (dtype_name == "uint8") return store_int(uint8_t{}, aclnn::ACL_UINT8);
  if (dtype_name == "int32") return store_int(int32_t{}, aclnn::ACL_INT32);
  if (dtype_name == "int64") return store_int(int64_t{}, aclnn::ACL_INT64);
  return InvalidArgument("unsupported threshold_dtype '" + std::string(dtype_name) +
                         "' (float32, float64, int8, uint8, int32, int64)");
}

ThresholdValues OperandThreshold(const ffi::AnyBuffer& threshold) {
  ThresholdValues t;
  t.dtype = ToAclDataType(threshold.element_type());
  t.data = static_cast<const char*>(threshold.untyped_data());
  t.element_bytes = ffi::ByteWidth(threshold.element_type());
  t.dims = Dims(threshold);
  return t;
}

//===-- CPU --------------------------------------------------------------------------------===//

ffi::Future ReadyFuture(ffi::Error error) {
  ffi::Promise promise;
  ffi::Future future(promise);
  if (error.success()) {
    promise.SetAvailable();
  } else {
    promise.SetError(std::move(error));
  }
  return future;
}

ffi::Future RunOnHost(ffi::ThreadPool& pool, const ffi::AnyBuffer& grad, const ffi::AnyBuffer& x,
                      const ThresholdValues& threshold, const ffi::AnyBuffer& out) {
  const int64_t pool_threads = pool.num_threads();
  const bool run_inline = pool_threads <= 0 || out.size_bytes() <= kInlineMaxBytes;
  aclnn::PlatformInfo platform;
  platform.soc = aclnn::SocVersion::kHost;
  platform.core_num =
      run_inline ? 1
                 : static_cast<uint32_t>(std::clamp<int64_t>(pool_threads + 1, 1, kMaxCores));

  auto state = std::make_shared<CallState>();
  if (ffi::Error e = PlanCall(*state, grad, x, threshold, out, &platform); e.failure()) {
    return ReadyFuture(std::move(e));
  }
  if (state->slices.empty()) return ReadyFuture(ffi::Error::Success());
  if (state->workspace_bytes > 0) {
    state->host_workspace = std::aligned_alloc(kWorkspaceAlignment, state->workspace_bytes);
    if (state->host_workspace == nullptr) {
      return ReadyFuture(ffi::Error(ffi::ErrorCode::kResourceExhausted,
                                    "jax_threshold: cannot allocate a workspace of " +
                                        std::to_string(state->workspace_bytes) + " bytes"));
    }
  }
  auto workspace_of = [&](const Slice& s) -> void* {
    return s.workspace_size == 0
               ? nullptr
               : static_cast<char*>(state->host_workspace) + s.workspace_offset;
  };

  if (run_inline) {  // the stream runs every block before Launch returns
    state->stream = std::make_unique<XlaThreadPoolStream>(nullptr, 1);
    for (Slice& s : state->slices) {
      const aclnnStatus status = aclnn::aclnnThresholdBackward(
          workspace_of(s), s.workspace_size, s.executor, state->stream.get());
      if (status != aclnn::ACLNN_SUCCESS) {
        return ReadyFuture(AclnnError("aclnnThresholdBackward", status));
      }
    }
    for (size_t k = 0; k < state->slices.size(); ++k) {
      if (ffi::Error e = state->RunOutcome(k); e.failure()) return ReadyFuture(std::move(e));
    }
    return ReadyFuture(ffi::Error::Success());
  }

  state->stream = std::make_unique<XlaThreadPoolStream>(&pool, platform.core_num);
  state->stream->SetOwner(state);
  const int64_t count = static_cast<int64_t>(state->slices.size());
  state->done.emplace(count);
  ffi::Future future(*state->done);
  CallState* raw = state.get();  // launches keep the state alive until on_done has returned
  for (int64_t k = 0; k < count; ++k) {
    Slice& s = state->slices[k];
    const aclnnStatus status = aclnn::aclnnThresholdBackward(
        workspace_of(s), s.workspace_size, s.executor, state->stream.get(),
        [raw, k] { raw->done->CountDown(raw->RunOutcome(static_cast<size_t>(k))); });
    if (status != aclnn::ACLNN_SUCCESS) {  // slices before k still run and count down
      state->done->CountDown(static_cast<size_t>(count - k),
                             AclnnError("aclnnThresholdBackward", status));
      break;
    }
  }
  state->stream->Close();  // runs the queued blocks: pool helpers plus this thread
  return future;
}

ffi::Future ThresholdBackwardCpu(ffi::ThreadPool pool, ffi::AnyBuffer grad, ffi::AnyBuffer x,
                                 ffi::AnyBuffer threshold, ffi::Result<ffi::AnyBuffer> out) {
  return RunOnHost(pool, grad, x, OperandThreshold(threshold), *out);
}

ffi::Future ThresholdBackwardStaticCpu(ffi::ThreadPool pool, ffi::AnyBuffer grad,
                                       ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> out,
                                       std::string_view threshold_dtype, double threshold_float,
                                       int64_t threshold_int) {
  ThresholdValues threshold;
  unsigned char storage[8];
  if (ffi::Error e = EncodeStaticThreshold(threshold_dtype, threshold_float, threshold_int,
                                           threshold, storage);
      e.failure()) {
    return ReadyFuture(std::move(e));
  }
  return RunOnHost(pool, grad, x, threshold, *out);
}

//===-- NPU (JAX Ascend PJRT plugin) -------------------------------------------------------===//
#ifdef JAX_THRESHOLD_ASCEND

ffi::Error AclError(const char* function, aclError code) {
  return ffi::Error(ffi::ErrorCode::kInternal, std::string("jax_threshold: ") + function +
                                                   " failed with ACL error " +
                                                   std::to_string(code));
}

// Synchronous on the host side: after enqueuing every slice it synchronises the stream, because
// the executors (and an aclrtMalloc'd workspace) must outlive the kernels they launched.
ffi::Error RunOnNpu(aclrtStream stream, const ffi::AnyBuffer& grad, const ffi::AnyBuffer& x,
                    const ThresholdValues& threshold, const ffi::AnyBuffer& out) {
  CallState state;
  if (ffi::Error e = PlanCall(state, grad, x, threshold, out, /*platform=*/nullptr); e.failure()) {
    return e;
  }
  void* workspace = nullptr;
  if (state.workspace_bytes > 0) {
    if (aclError rc = aclrtMalloc(&workspace, state.workspace_bytes, ACL_MEM_MALLOC_HUGE_FIRST);
        rc != ACL_SUCCESS || workspace == nullptr) {
      return AclError("aclrtMalloc", rc);
    }
  }
  ffi::Error result = ffi::Error::Success();
  for (Slice& s : state.slices) {
    void* ws = s.workspace_size == 0 ? nullptr : static_cast<char*>(workspace) + s.workspace_offset;
    if (aclnnStatus st = aclnn::aclnnThresholdBackward(ws, s.workspace_size, s.executor, stream);
        st != aclnn::ACLNN_SUCCESS) {
      result = AclnnError("aclnnThresholdBackward", st);
      break;
    }
  }
  if (aclError rc = aclrtSynchronizeStream(stream); rc != ACL_SUCCESS && result.success()) {
    result = AclError("aclrtSynchronizeStream", rc);
  }
  if (workspace != nullptr) aclrtFree(workspace);
  return result;
}

ffi::Error ThresholdBackwardNpu(aclrtStream stream, ffi::AnyBuffer grad, ffi::AnyBuffer x,
                                ffi::AnyBuffer threshold, ffi::Result<ffi::AnyBuffer> out) {
  // The threshold lives on the device: copy it to the host once the producer has run.
  ThresholdValues t = OperandThreshold(threshold);
  std::vector<char> host(threshold.size_bytes());
  if (!host.empty()) {
    if (aclError rc = aclrtSynchronizeStream(stream); rc != ACL_SUCCESS) {
      return AclError("aclrtSynchronizeStream", rc);
    }
    if (aclError rc = aclrtMemcpy(host.data(), host.size(), threshold.untyped_data(), host.size(),
                                  ACL_MEMCPY_DEVICE_TO_HOST);
        rc != ACL_SUCCESS) {
      return AclError("aclrtMemcpy", rc);
    }
  }
  t.data = host.data();
  return RunOnNpu(stream, grad, x, t, *out);
}

ffi::Error ThresholdBackwardStaticNpu(aclrtStream stream, ffi::AnyBuffer grad, ffi::AnyBuffer x,
                                      ffi::Result<ffi::AnyBuffer> out,
                                      std::string_view threshold_dtype, double threshold_float,
                                      int64_t threshold_int) {
  ThresholdValues threshold;
  unsigned char storage[8];
  if (ffi::Error e = EncodeStaticThreshold(threshold_dtype, threshold_float, threshold_int,
                                           threshold, storage);
      e.failure()) {
    return e;
  }
  return RunOnNpu(stream, grad, x, threshold, *out);
}

#endif  // JAX_THRESHOLD_ASCEND

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxThresholdThresholdBackwardCpu, ThresholdBackwardCpu,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<xla::ffi::ThreadPool>()
                                  .Arg<xla::ffi::AnyBuffer>()  // grad_output
                                  .Arg<xla::ffi::AnyBuffer>()  // x
                                  .Arg<xla::ffi::AnyBuffer>()  // threshold
                                  .Ret<xla::ffi::AnyBuffer>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxThresholdThresholdBackwardStaticCpu, ThresholdBackwardStaticCpu,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<xla::ffi::ThreadPool>()
                                  .Arg<xla::ffi::AnyBuffer>()  // grad_output
                                  .Arg<xla::ffi::AnyBuffer>()  // x
                                  .Ret<xla::ffi::AnyBuffer>()
                                  .Attr<std::string_view>("threshold_dtype")
                                  .Attr<double>("threshold_float")
                                  .Attr<int64_t>("threshold_int"));

#ifdef JAX_THRESHOLD_ASCEND
XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxThresholdThresholdBackwardNpu, ThresholdBackwardNpu,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<xla::ffi::PlatformStream<aclrtStream>>()
                                  .Arg<xla::ffi::AnyBuffer>()  // grad_output
                                  .Arg<xla::ffi::AnyBuffer>()  // x
                                  .Arg<xla::ffi::AnyBuffer>()  // threshold
                                  .Ret<xla::ffi::AnyBuffer>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxThresholdThresholdBackwardStaticNpu, ThresholdBackwardStaticNpu,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<xla::ffi::PlatformStream<aclrtStream>>()
                                  .Arg<xla::ffi::AnyBuffer>()  // grad_output
                                  .Arg<xla::ffi::AnyBuffer>()  // x
                                  .Ret<xla::ffi::AnyBuffer>()
                                  .Attr<std::string_view>("threshold_dtype")
                                  .Attr<double>("threshold_float")
                                  .Attr<int64_t>("threshold_int"));
#endif

std::vector<FfiTarget> FfiTargets() {
  std::vector<FfiTarget> targets = {
      {kThresholdBackwardTarget, "cpu", JaxThresholdThresholdBackwardCpu},
      {kThresholdBackwardStaticTarget, "cpu", JaxThresholdThresholdBackwardStaticCpu},
  };
#ifdef JAX_THRESHOLD_ASCEND
  targets.push_back({kThresholdBackwardTarget, "ASCEND", JaxThresholdThresholdBackwardNpu});
  targets.push_back(
      {kThresholdBackwardStaticTarget, "ASCEND", JaxThresholdThresholdBackwardStaticNpu});
#endif
  return targets;
}

}  // namespace jax_threshold::ffi_handler
