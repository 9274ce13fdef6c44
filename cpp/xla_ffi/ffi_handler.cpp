// XLA FFI handlers of threshold_backward (see ffi_handler.h): decode, plan or rebind, run.
#include "xla_ffi/ffi_handler.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#ifdef __linux__
#include <sys/mman.h>
#endif

#include "aclnn/host_stream.h"           // HostPlatformInfo
#include "ascend_kernels/kernel_args.h"  // the operand order
#include "jax_threshold/aclnn_threshold_backward.h"
#include "xla/ffi/api/ffi.h"

#ifdef JAX_THRESHOLD_ASCEND
#include <unordered_map>

#include "acl/acl.h"
#include "aclnn/npu_phase_two.h"
#include "ascend_kernels/dtype_soc_table.h"  // the device's SoC row
#endif

namespace jax_threshold::ffi_handler {
namespace {

namespace ffi = ::xla::ffi;
using aclnn::aclnnStatus;
using ascend_kernels::kNumOperands;
using ascend_kernels::kOperandOut;
using ascend_kernels::kOperandThreshold;

//===-- Decoding and errors ----------------------------------------------------------------===//

// ACL_DT_UNDEFINED for a type the executor has no name for: phase one refuses it.
aclnn::aclDataType ToAclDataType(ffi::DataType dtype) {
  using D = ffi::DataType;
  static constexpr std::pair<D, aclnn::aclDataType> kTypes[] = {
      {D::F32, aclnn::ACL_FLOAT},  {D::F16, aclnn::ACL_FLOAT16},   {D::BF16, aclnn::ACL_BF16},
      {D::F64, aclnn::ACL_DOUBLE}, {D::S8, aclnn::ACL_INT8},       {D::S16, aclnn::ACL_INT16},
      {D::S32, aclnn::ACL_INT32},  {D::S64, aclnn::ACL_INT64},     {D::U8, aclnn::ACL_UINT8},
      {D::U16, aclnn::ACL_UINT16}, {D::U32, aclnn::ACL_UINT32},    {D::U64, aclnn::ACL_UINT64},
      {D::PRED, aclnn::ACL_BOOL},  {D::C64, aclnn::ACL_COMPLEX64}, {D::C128, aclnn::ACL_COMPLEX128},
  };
  for (const auto& [ffi_type, acl_type] : kTypes) {
    if (ffi_type == dtype) return acl_type;
  }
  return aclnn::ACL_DT_UNDEFINED;
}

struct Operand {
  aclnn::aclDataType dtype = aclnn::ACL_DT_UNDEFINED;
  ffi::Span<const int64_t> dims;  // row-major
  void* data = nullptr;
};

// A call's buffers in the operand order (ascend_kernels::kOperandGrad, ...). A ReluGrad call's
// threshold is left empty: nothing of it is read.
using Operands = std::array<Operand, kNumOperands>;

Operand Decode(const ffi::AnyBuffer& buffer) {
  return {ToAclDataType(buffer.element_type()), buffer.dimensions(), buffer.untyped_data()};
}

const char* StatusName(aclnnStatus status) {
  static constexpr std::pair<aclnnStatus, const char*> kNames[] = {
      {aclnn::ACLNN_SUCCESS, "ACLNN_SUCCESS"},
      {aclnn::ACLNN_ERR_PARAM_NULLPTR, "ACLNN_ERR_PARAM_NULLPTR"},
      {aclnn::ACLNN_ERR_PARAM_INVALID, "ACLNN_ERR_PARAM_INVALID"},
      {aclnn::ACLNN_ERR_INNER_CREATE_EXECUTOR, "ACLNN_ERR_INNER_CREATE_EXECUTOR"},
      {aclnn::ACLNN_ERR_INNER_NULLPTR, "ACLNN_ERR_INNER_NULLPTR"},
      {aclnn::ACLNN_ERR_INNER_TILING_ERROR, "ACLNN_ERR_INNER_TILING_ERROR"},
      {aclnn::ACLNN_ERR_RUNTIME_ERROR, "ACLNN_ERR_RUNTIME_ERROR"},
  };
  for (const auto& [code, name] : kNames) {
    if (code == status) return name;
  }
  return "unknown aclnn status";
}

ffi::Error InvalidArgument(std::string message) {
  return ffi::Error(ffi::ErrorCode::kInvalidArgument, "jax_threshold: " + std::move(message));
}

// The status, its name and aclGetRecentErrMsg()'s reason (thread-local: call it on the thread
// that got `status`); kInvalidArgument for the ACLNN_ERR_PARAM_* statuses, else kInternal.
ffi::Error AclnnError(const char* function, aclnnStatus status) {
  const char* reason = aclnn::aclGetRecentErrMsg();
  const bool bad_param =
      status == aclnn::ACLNN_ERR_PARAM_NULLPTR || status == aclnn::ACLNN_ERR_PARAM_INVALID;
  return ffi::Error(bad_param ? ffi::ErrorCode::kInvalidArgument : ffi::ErrorCode::kInternal,
                    std::string("jax_threshold: ") + function + " failed with aclnn status " +
                        std::to_string(status) + " (" + StatusName(status) +
                        "): " + (reason != nullptr && *reason ? reason : "no reason given"));
}

// The call's operands and whether it is ReluGrad: (grad_output, x, threshold) with the
// attribute relu_grad, or the version-1 ReluGrad targets' (grad_output, x) without it.
ffi::Error DecodeCall(const ffi::RemainingArgs& args, const ffi::AnyBuffer& out,
                      const ffi::Dictionary& attrs, Operands* operands, bool* relu_grad) {
  if (args.size() != 2 && args.size() != 3) {
    return InvalidArgument("the custom call takes (grad_output, x, threshold); got " +
                           std::to_string(args.size()) + " operands");
  }
  *relu_grad = args.size() == 2;
  for (auto it = attrs.begin(); it != attrs.end(); ++it) {  // cheaper than a lookup by name
    if (*it != "relu_grad") continue;
    // Typed first: the decoder's message would print a dtype newer than the headers.
    if (!attrs.isa<bool>(it)) return InvalidArgument("attribute relu_grad must be a bool");
    *relu_grad = attrs.get<bool>(it).value();
  }
  if (!*relu_grad && args.size() == 2) {
    return InvalidArgument("relu_grad=false needs a threshold operand");
  }
  *operands = {};
  for (size_t i = 0; i < (*relu_grad ? 2 : 3); ++i) {
    ffi::ErrorOr<ffi::AnyBuffer> buffer = args.get<ffi::AnyBuffer>(i);
    if (buffer.has_error()) {
      return InvalidArgument("operand " + std::to_string(i) + " is not an array");
    }
    (*operands)[i] = Decode(buffer.value());
  }
  (*operands)[kOperandOut] = Decode(out);
  return ffi::Error::Success();
}

//===-- Plans ------------------------------------------------------------------------------===//

// What a plan depends on besides the buffers' addresses: every operand's dims and dtype, the
// kernel's choice and the cores it is split over. (No threshold value: a ThresholdGradV2D plan
// reads the threshold on the device; ReluGrad's is 0.)
struct CallSignature {
  std::vector<int64_t> dims[kNumOperands];
  aclnn::aclDataType dtypes[kNumOperands] = {};
  bool relu_grad = false;
  uint32_t core_num = 0;

  CallSignature() = default;
  CallSignature(const Operands& operands, bool relu, uint32_t cores)
      : relu_grad(relu), core_num(cores) {
    for (int i = 0; i < kNumOperands; ++i) {
      dims[i].assign(operands[i].dims.begin(), operands[i].dims.end());
      dtypes[i] = operands[i].dtype;
    }
  }
  bool Matches(const Operands& operands, bool relu, uint32_t cores) const {
    if (relu != relu_grad || cores != core_num) return false;
    for (int i = 0; i < kNumOperands; ++i) {
      const Operand& o = operands[i];
      if (o.dtype != dtypes[i] ||
          !std::equal(dims[i].begin(), dims[i].end(), o.dims.begin(), o.dims.end())) {
        return false;
      }
    }
    return true;
  }
};

// A planned call: its tensors, executor and workspace, rebound for every later call of the same
// signature.
struct PlannedCall {
  aclnn::aclTensor* tensors[kNumOperands] = {};
  void* bound[kNumOperands] = {};  // the buffers' addresses the executor is bound to now
  aclnn::aclOpExecutor* executor = nullptr;
  uint64_t workspace_size = 0;
  void* workspace = nullptr;  // CPU: allocated and freed here
  CallSignature signature;
  bool repeatable = false;  // may serve later calls

  PlannedCall() = default;
  PlannedCall(const PlannedCall&) = delete;
  PlannedCall& operator=(const PlannedCall&) = delete;
  ~PlannedCall() {
    if (executor != nullptr) aclnn::aclDestroyAclOpExecutor(executor);
    for (aclnn::aclTensor* t : tensors) {
      if (t != nullptr) aclnn::aclDestroyTensor(t);
    }
    std::free(workspace);
  }
};

// Idle plans between runs. On CPU, the plans of one compiled call: XLA FFI's per-executable
// state, made at instantiation. A run takes one of its signature (or plans a new one when none is
// idle, e.g. the executable running on several threads at once) and puts it back after a
// successful run. At most `max_idle` are kept; the least recently returned goes first. The last
// one returned waits in `hot_`, taken and put back without the lock: the common call is a run of
// the one signature an executable has.
class ExecutablePlans {
 public:
  static ffi::TypeId id;  // assigned when jax_threshold.ffi registers the type with XLA
  static constexpr size_t kMaxIdlePlans = 4;

  explicit ExecutablePlans(size_t max_idle = kMaxIdlePlans) : max_idle_(max_idle) {}
  ~ExecutablePlans() { delete hot_.load(); }
  size_t IdleCount() {
    std::lock_guard<std::mutex> lock(mu_);
    return idle_.size() + (hot_.load() != nullptr ? 1 : 0);
  }

  std::unique_ptr<PlannedCall> Take(const Operands& operands, bool relu_grad, uint32_t cores) {
    std::unique_ptr<PlannedCall> hot(hot_.exchange(nullptr));
    if (hot != nullptr && hot->signature.Matches(operands, relu_grad, cores)) return hot;
    std::lock_guard<std::mutex> lock(mu_);
    if (hot != nullptr) Keep(std::move(hot));
    for (size_t i = idle_.size(); i-- > 0;) {
      if (idle_[i]->signature.Matches(operands, relu_grad, cores)) {
        std::unique_ptr<PlannedCall> found = std::move(idle_[i]);
        idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(i));
        return found;
      }
    }
    return nullptr;
  }

  void Put(std::unique_ptr<PlannedCall> plan) {
    PlannedCall* empty = nullptr;
    if (hot_.compare_exchange_strong(empty, plan.get())) {
      plan.release();
      return;
    }
    std::unique_ptr<PlannedCall> evicted;  // destroyed after the lock is released
    std::lock_guard<std::mutex> lock(mu_);
    evicted = Keep(std::move(plan));
  }

 private:
  // Under mu_: keeps `plan`, and returns the plan that no longer fits, if any.
  std::unique_ptr<PlannedCall> Keep(std::unique_ptr<PlannedCall> plan) {
    idle_.push_back(std::move(plan));
    if (idle_.size() + (hot_.load() != nullptr ? 1 : 0) <= max_idle_) return nullptr;
    std::unique_ptr<PlannedCall> evicted = std::move(idle_.front());
    idle_.erase(idle_.begin());
    return evicted;
  }

  const size_t max_idle_;
  std::atomic<PlannedCall*> hot_{nullptr};
  std::mutex mu_;
  std::vector<std::unique_ptr<PlannedCall>> idle_;  // least recently returned first
};

ffi::TypeId ExecutablePlans::id = {};

// The scalar phase one takes at most 8 dims, a ReluGrad call any number: its row-major buffers
// are described with out's size-1 dims dropped and adjacent dims merged where grad_output and x
// each span both or broadcast along both (the same bytes, fewer dims). Operands that do not
// broadcast to out, or whose count overflows, are left as they are for phase one to refuse.
bool MergeDims(const Operands& operands, std::vector<int64_t> (&merged)[kNumOperands]) {
  const ffi::Span<const int64_t> out = operands[kOperandOut].dims;
  auto dim = [&](int k, size_t d) {
    const size_t lead = out.size() - operands[k].dims.size();
    return d < lead ? int64_t{1} : operands[k].dims[d - lead];
  };
  for (int k : {ascend_kernels::kOperandGrad, ascend_kernels::kOperandX}) {
    if (operands[k].dims.size() > out.size()) return false;
    for (size_t d = 0; d < out.size(); ++d) {
      if (out[d] < 0 || (dim(k, d) != out[d] && dim(k, d) != 1)) return false;
    }
  }
  int last = -1;  // which inputs span the previous kept dim: bit k for operand k
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    const int spans = (dim(0, d) == out[d] ? 1 : 0) | (dim(1, d) == out[d] ? 2 : 0);
    if (spans != last) {
      for (int k : {0, 1, kOperandOut}) merged[k].push_back(1);
      last = spans;
    }
    for (int k : {0, 1, kOperandOut}) {
      if ((k == kOperandOut || (spans >> k & 1)) &&
          __builtin_mul_overflow(merged[k].back(), out[d], &merged[k].back())) {
        return false;
      }
    }
  }
  return true;
}

// Phase one of the call: its tensors, the executor and its workspace size. Every check of the
// operator's contract is phase one's; its status and reason come back in the error.
ffi::Error PlanCall(PlannedCall& plan, const Operands& operands,
                    const aclnn::PlatformInfo& platform, bool relu_grad) {
  std::vector<int64_t> merged[kNumOperands];
  const bool merge =
      relu_grad && operands[kOperandOut].dims.size() > 8 && MergeDims(operands, merged);
  for (int i = 0; i < kNumOperands; ++i) {
    const Operand& o = operands[i];
    plan.bound[i] = o.data;
    if (relu_grad && i == kOperandThreshold) continue;
    const int64_t* dims = merge ? merged[i].data() : o.dims.begin();
    const size_t rank = merge ? merged[i].size() : o.dims.size();
    // Row-major strides (null). A buffer of no elements may have dims whose strides overflow and
    // a null address: phase one plans nothing for it and uses neither.
    plan.tensors[i] = aclnn::aclCreateTensor(dims, rank, o.dtype, nullptr, 0, o.data);
    if (plan.tensors[i] == nullptr) {
      return InvalidArgument("aclCreateTensor refused operand " + std::to_string(i) +
                             " of (grad_output, x, threshold, result): a negative dimension");
    }
  }
  aclnnStatus status;
  if (relu_grad) {
    const float zero = 0;
    aclnn::aclScalar* threshold = aclnn::aclCreateScalar(&zero, aclnn::ACL_FLOAT);
    status = aclnn::aclnnThresholdBackwardGetWorkspaceSize(
        plan.tensors[0], plan.tensors[1], threshold, plan.tensors[kOperandOut],
        &plan.workspace_size, &plan.executor, &platform);
    aclnn::aclDestroyScalar(threshold);
  } else {
    status = aclnn::aclnnThresholdBackwardDeviceThresholdGetWorkspaceSize(
        plan.tensors[0], plan.tensors[1], plan.tensors[kOperandThreshold],
        plan.tensors[kOperandOut], &plan.workspace_size, &plan.executor, &platform);
  }
  if (status != aclnn::ACLNN_SUCCESS) {
    return AclnnError("aclnnThresholdBackwardGetWorkspaceSize", status);
  }
  // The boundary's own rule, which phase one (any threshold that broadcasts) cannot see: the
  // lowering emits a 0-d threshold or one of the result's rank. Checked after phase one, whose
  // message names the shapes when they do not broadcast at all.
  const size_t rank = operands[kOperandThreshold].dims.size();
  const size_t result_rank = operands[kOperandOut].dims.size();
  if (!relu_grad && rank != 0 && rank != result_rank) {
    return InvalidArgument("the threshold has rank " + std::to_string(rank) +
                           "; the lowering emits a 0-d threshold or one of the result's rank " +
                           std::to_string(result_rank));
  }
  if (plan.workspace_size > 0) {
    const uint64_t a = aclnn::kWorkspaceAlignment;
    plan.workspace = std::aligned_alloc(a, (plan.workspace_size + a - 1) / a * a);
    if (plan.workspace == nullptr) {
      return ffi::Error(ffi::ErrorCode::kResourceExhausted,
                        "jax_threshold: cannot allocate a workspace of " +
                            std::to_string(plan.workspace_size) + " bytes");
    }
  }
  plan.signature = CallSignature(operands, relu_grad, *platform.core_num);
  plan.repeatable = aclnn::aclSetAclOpExecutorRepeatable(plan.executor) == aclnn::ACLNN_SUCCESS;
  return ffi::Error::Success();
}

// Points a kept plan's executor at this call's buffers (those that moved since its last run);
// false when it cannot take them.
bool RebindPlan(PlannedCall& plan, const Operands& operands) {
  for (int i = 0; i < kNumOperands; ++i) {
    void* addr = operands[i].data;
    if (addr == plan.bound[i] || plan.tensors[i] == nullptr) continue;
    const aclnnStatus status =
        i == kOperandOut ? aclnn::aclSetOutputTensorAddr(plan.executor, 0, plan.tensors[i], addr)
                         : aclnn::aclSetInputTensorAddr(plan.executor, i, plan.tensors[i], addr);
    if (status != aclnn::ACLNN_SUCCESS) return false;
    plan.bound[i] = addr;
  }
  return true;
}

// Runs phase two (`run`) on a plan for the call: a kept one of `plans` rebound to its buffers, or
// a new one, which `plans` keeps after a successful run. XLA may alias the buffers differently
// from one run to the next; phase two refuses (PARAM_INVALID, running nothing) an input that then
// overlaps out other than at planning, and the call plans afresh.
template <typename Run>
ffi::Error RunPlanned(ExecutablePlans& plans, const Operands& operands,
                      const aclnn::PlatformInfo& platform, bool relu_grad, Run run) {
  std::unique_ptr<PlannedCall> plan = plans.Take(operands, relu_grad, *platform.core_num);
  aclnnStatus status = aclnn::ACLNN_ERR_PARAM_INVALID;
  if (plan != nullptr && RebindPlan(*plan, operands)) status = run(*plan);
  if (status == aclnn::ACLNN_ERR_PARAM_INVALID) {
    plan = std::make_unique<PlannedCall>();
    if (ffi::Error e = PlanCall(*plan, operands, platform, relu_grad); e.failure()) return e;
    status = run(*plan);
  }
  if (status != aclnn::ACLNN_SUCCESS) return AclnnError("aclnnThresholdBackward", status);
  if (plan->repeatable) plans.Put(std::move(plan));
  return ffi::Error::Success();
}

//===-- CPU --------------------------------------------------------------------------------===//

// Output bytes per kernel block: an output below twice this runs as one block on the calling
// thread, where handing blocks to other threads costs more than it saves.
constexpr uint64_t kMinBlockBytes = 64 * 1024;
// Outputs from this size on get madvise(MADV_HUGEPAGE) before the kernel first touches them.
constexpr uint64_t kHugePageMinBytes = 8 * 1024 * 1024;

// out's byte size, saturating; 0 for an element type the executor does not know (ByteWidth has
// no answer for types newer than the headers). Phase one refuses both.
uint64_t ByteSize(const ffi::AnyBuffer& out) {
  if (ToAclDataType(out.element_type()) == aclnn::ACL_DT_UNDEFINED) return 0;
  uint64_t bytes = ffi::ByteWidth(out.element_type());
  for (int64_t d : out.dimensions()) {
    if (d <= 0) return 0;
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes)) return UINT64_MAX;
  }
  return bytes;
}

// Asks for transparent huge pages on a large output before its first touch: a fresh buffer
// otherwise takes a page fault per 4 KiB. Only the 2 MiB-aligned interior is advised; failure
// (no THP, memory already touched) changes nothing but speed.
void AdviseHugePages(void* out, uint64_t out_bytes) {
#ifdef __linux__
  if (out_bytes < kHugePageMinBytes) return;
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  const uintptr_t first = reinterpret_cast<uintptr_t>(out);
  const uintptr_t begin = (first + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t end = (first + out_bytes) & ~(kHugePage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)out;
  (void)out_bytes;
#endif
}

ffi::Error ThresholdBackwardCpu(ExecutablePlans* plans, ffi::RemainingArgs args,
                                ffi::Result<ffi::AnyBuffer> out, ffi::Dictionary attrs) {
  Operands operands;
  bool relu_grad = false;
  if (ffi::Error e = DecodeCall(args, *out, attrs, &operands, &relu_grad); e.failure()) return e;
  static const aclnn::PlatformInfo host = aclnn::HostPlatformInfo();
  aclnn::PlatformInfo platform = host;
  const uint64_t out_bytes = ByteSize(*out);
  platform.core_num =
      static_cast<uint32_t>(std::clamp<uint64_t>(out_bytes / kMinBlockBytes, 1, *host.core_num));
  AdviseHugePages(out->untyped_data(), out_bytes);
  // A null stream: the blocks run on this thread and the executor's block workers.
  return RunPlanned(*plans, operands, platform, relu_grad, [](PlannedCall& plan) {
    return aclnn::aclnnThresholdBackward(plan.workspace, plan.workspace_size, plan.executor,
                                         nullptr);
  });
}

// Instantiation: the executable's (empty) plans; the first run of each signature fills them.
ffi::ErrorOr<std::unique_ptr<ExecutablePlans>> InstantiatePlans() {
  return std::make_unique<ExecutablePlans>();
}

//===-- NPU (JAX Ascend PJRT plugin) -------------------------------------------------------===//
#ifdef JAX_THRESHOLD_ASCEND

// The call's aclrtStream, or why XLA gave none. Decoded here rather than as
// ffi::PlatformStream<aclrtStream>, whose failure ("Failed to get platform stream: ...") would
// not say what is missing: XLA hands a stream only to plugins that provide a GPU-style context.
struct NpuStream {
  aclrtStream stream = nullptr;
  std::string error;  // XLA_FFI_Stream_Get's message when it failed
};
struct NpuStreamContext {};

}  // namespace
}  // namespace jax_threshold::ffi_handler

template <>
struct xla::ffi::CtxDecoding<jax_threshold::ffi_handler::NpuStreamContext> {
  using Type = jax_threshold::ffi_handler::NpuStream;
  static std::optional<Type> Decode(const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* ctx,
                                    DiagnosticEngine&) {
    XLA_FFI_Stream_Get_Args args;
    args.struct_size = XLA_FFI_Stream_Get_Args_STRUCT_SIZE;
    args.extension_start = nullptr;
    args.ctx = ctx;
    args.stream = nullptr;
    Type decoded;
    if (XLA_FFI_Error* error = api->XLA_FFI_Stream_Get(&args)) {
      decoded.error = internal::GetErrorMessage(api, error);
      internal::DestroyError(api, error);
    } else {
      decoded.stream = static_cast<aclrtStream>(args.stream);
    }
    return decoded;
  }
};

namespace jax_threshold::ffi_handler {
namespace {

// The call's device (XLA FFI's device ordinal) must be the calling thread's current device: the
// ACL calls of the path (the SoC name, the first-use check's allocation and copies, the launches)
// act on the current device, and the runtime refuses a launch on a stream of another device
// (ACL_ERROR_RT_STREAM_CONTEXT) or, worse, plans for the wrong one.
ffi::Error CheckCurrentDevice(int32_t device) {
  int32_t current = -1;
  if (aclError rc = aclrtGetDevice(&current); rc != ACL_SUCCESS) {
    return ffi::Error(ffi::ErrorCode::kFailedPrecondition,
                      "jax_threshold: the call is for device " + std::to_string(device) +
                          " but the thread has no current device (aclrtGetDevice failed with ACL "
                          "error " +
                          std::to_string(rc) + ")");
  }
  if (current != device) {
    return ffi::Error(ffi::ErrorCode::kFailedPrecondition,
                      "jax_threshold: the call is for device " + std::to_string(device) +
                          " (XLA's device ordinal) but the thread's current device is " +
                          std::to_string(current) + " (aclrtGetDevice); nothing was run");
  }
  return ffi::Error::Success();
}

// The device's vector core count, asked once per device (aclGetDeviceCapability, in every CANN
// the project supports): the 910B1/B2 have 48, the 910B3/B4 40, so there is no default.
ffi::Error VectorCoreCount(int32_t device, uint32_t* core_num) {
  static std::mutex mu;
  static auto* counts = new std::unordered_map<int32_t, uint32_t>;  // by device id
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = counts->find(device); it != counts->end()) {
    *core_num = it->second;
    return ffi::Error::Success();
  }
  int64_t cores = 0;
  const aclError rc = aclGetDeviceCapability(static_cast<uint32_t>(device),
                                             ACL_DEVICE_INFO_VECTOR_CORE_NUM, &cores);
  if (rc != ACL_SUCCESS) {
    return ffi::Error(ffi::ErrorCode::kInternal,
                      "jax_threshold: aclGetDeviceCapability(ACL_DEVICE_INFO_VECTOR_CORE_NUM) of "
                      "device " +
                          std::to_string(device) + " gave ACL error " + std::to_string(rc) +
                          " and " + std::to_string(cores) + " cores");
  }
  // Phase one refuses a count outside its platform bounds.
  *core_num = static_cast<uint32_t>(std::clamp<int64_t>(cores, 0, UINT32_MAX));
  counts->emplace(device, *core_num);
  return ffi::Error::Success();
}

// The platform phase one plans for on `device` (the current one): the kernels' SoC
// (ascend_kernels::kBuildSoc, from SOC_VERSION), its UB, and the device's vector core count. The
// runtime names one SoC per process (aclrtGetSocName caches the first it resolves), so the name
// is checked against the build's SoC, not per device: on a device of another SoC the launches
// fail or (a null kernel handle) do not run, which phase two's first-use check reports.
ffi::Error NpuPlatform(int32_t device, aclnn::PlatformInfo* info) {
  const char* name = aclrtGetSocName();
  const ascend_kernels::SocRow* row =
      name != nullptr ? ascend_kernels::SocOfDeviceName(name) : nullptr;
  if (row == nullptr || row->soc != ascend_kernels::kBuildSoc) {
    return ffi::Error(ffi::ErrorCode::kFailedPrecondition,
                      std::string("jax_threshold: the process's SoC (aclrtGetSocName: ") +
                          (name != nullptr ? name : "null") + ") is not the " +
                          ascend_kernels::SocRowOf(ascend_kernels::kBuildSoc).name +
                          " the kernels were built for (SOC_VERSION); see docs/npu.md");
  }
  info->soc = static_cast<aclnn::SocVersion>(row->soc);
  info->ub_size = row->ub_bytes;
  uint32_t core_num = 0;
  ffi::Error e = VectorCoreCount(device, &core_num);
  info->core_num = core_num;
  return e;
}

// The ASCEND handler's idle plans on `device`, kept between calls as the CPU executables keep
// theirs, but by the handler: XLA FFI state on the NPU would need the Ascend plugin to support
// state types and the instantiate stage. A plan holds no device state (its tiling goes by value;
// its buffers are rebound per call), and plans are kept per device all the same.
ExecutablePlans* NpuPlans(int32_t device) {
  static std::mutex mu;
  static auto* plans = new std::unordered_map<int32_t, std::unique_ptr<ExecutablePlans>>;
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<ExecutablePlans>& found = (*plans)[device];
  if (found == nullptr) found = std::make_unique<ExecutablePlans>(kMaxNpuIdlePlans);
  return found.get();
}

// Phase one on the host, phase two submitted on the stream of the call's `device`; returns
// without waiting for the kernels. A device threshold is read by ThresholdGradV2D at Init, in
// stream order after its producer, so nothing here waits or copies.
ffi::Error ThresholdBackwardNpu(NpuStream npu_stream, int32_t device, ffi::RemainingArgs args,
                                ffi::Result<ffi::AnyBuffer> out, ffi::Dictionary attrs) {
  Operands operands;
  bool relu_grad = false;
  if (ffi::Error e = DecodeCall(args, *out, attrs, &operands, &relu_grad); e.failure()) return e;
  if (npu_stream.stream == nullptr) {
    return ffi::Error(
        ffi::ErrorCode::kFailedPrecondition,
        "jax_threshold: the ASCEND custom call got no aclrtStream from XLA (" +
            (npu_stream.error.empty() ? std::string("XLA_FFI_Stream_Get gave a null stream")
                                      : "XLA_FFI_Stream_Get failed: " + npu_stream.error) +
            "); the JAX Ascend PJRT plugin must hand FFI handlers its stream (docs/npu.md)");
  }
  if (ffi::Error e = CheckCurrentDevice(device); e.failure()) return e;
  aclnn::PlatformInfo platform;
  if (ffi::Error e = NpuPlatform(device, &platform); e.failure()) return e;
  // Once phase two has submitted, the launches have their arguments: the plan may serve the next
  // call.
  return RunPlanned(*NpuPlans(device), operands, platform, relu_grad, [&](PlannedCall& plan) {
    return aclnn::aclnnThresholdBackwardOnNpu(nullptr, 0, plan.executor, npu_stream.stream, device);
  });
}

#endif  // JAX_THRESHOLD_ASCEND

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxThresholdThresholdBackwardCpuInstantiate, InstantiatePlans,
                              xla::ffi::Ffi::BindInstantiate());

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxThresholdThresholdBackwardCpu, ThresholdBackwardCpu,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<xla::ffi::State<ExecutablePlans>>()
                                  .RemainingArgs()  // grad_output, x[, threshold]
                                  .Ret<xla::ffi::AnyBuffer>()
                                  .Attrs<xla::ffi::Dictionary>());  // relu_grad

#ifdef JAX_THRESHOLD_ASCEND
XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxThresholdThresholdBackwardNpu, ThresholdBackwardNpu,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<NpuStreamContext>()
                                  .Ctx<xla::ffi::DeviceOrdinal>()
                                  .RemainingArgs()  // grad_output, x[, threshold]
                                  .Ret<xla::ffi::AnyBuffer>()
                                  .Attrs<xla::ffi::Dictionary>());  // relu_grad

size_t NpuIdlePlanCount(int32_t device) { return NpuPlans(device)->IdleCount(); }
#endif

XLA_FFI_TypeId* ExecutablePlansTypeId() { return &ExecutablePlans::id; }

const XLA_FFI_TypeInfo* ExecutablePlansTypeInfo() {
  static const XLA_FFI_TypeInfo info = {XLA_FFI_TypeInfo_STRUCT_SIZE, nullptr, [](void* plans) {
                                          delete static_cast<ExecutablePlans*>(plans);
                                        }};
  return &info;
}

std::vector<FfiTarget> FfiTargets() {
  XLA_FFI_Handler* const cpu = JaxThresholdThresholdBackwardCpu;
  XLA_FFI_Handler* const instantiate = JaxThresholdThresholdBackwardCpuInstantiate;
  // Exported modules keep the names they were lowered with: versioned names stay registered.
  std::vector<FfiTarget> targets = {
      {kLoweringTarget, "cpu", cpu, instantiate},
      {"jax_threshold_threshold_backward_v1", "cpu", cpu, instantiate},
      {"jax_threshold_threshold_backward_relu_grad_v1", "cpu", cpu, instantiate},
      {"jax_threshold_threshold_backward_inline_v1", "cpu", cpu, instantiate},
      {"jax_threshold_threshold_backward_relu_grad_inline_v1", "cpu", cpu, instantiate},
  };
#ifdef JAX_THRESHOLD_ASCEND
  for (const char* name : {kLoweringTarget, "jax_threshold_threshold_backward_v1",
                           "jax_threshold_threshold_backward_relu_grad_v1"}) {
    targets.push_back({name, "ASCEND", JaxThresholdThresholdBackwardNpu, nullptr});
  }
#endif
  return targets;
}

}  // namespace jax_threshold::ffi_handler
