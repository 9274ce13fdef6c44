// XLA FFI handlers of threshold_backward (see ffi_handler.h): decode, phase one, phase two.
#include "xla_ffi/ffi_handler.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#ifdef __linux__
#include <sys/mman.h>
#endif

#include "aclnn/host_stream.h"  // the host runtime: HostPlatformInfo's UB
#include "aclnn/pool_stream.h"
#include "ascend_kernels/dtype_soc_table.h"  // element sizes; the SoC's UB
#include "jax_threshold/aclnn_threshold_backward.h"
#include "xla/ffi/api/ffi.h"
#include "xla_ffi/ffi_buffer.h"
#include "xla_ffi/ffi_error.h"
#include "xla_ffi/xla_thread_pool_stream.h"

#ifdef JAX_THRESHOLD_ASCEND
#include <unordered_map>

#include "acl/acl.h"
#include "aclnn/npu_phase_two.h"
#endif

namespace jax_threshold::ffi_handler {
namespace {

namespace ffi = ::xla::ffi;
using aclnn::aclnnStatus;
using ascend_kernels::kNumOperands;
using ascend_kernels::ThresholdSource;

// What a plan depends on besides the buffers' addresses: every operand's dims and dtype, and the
// cores it is split over. (No threshold value: the operand targets' plans read a device
// threshold, the ReluGrad targets' threshold is always 0.)
struct CallSignature {
  std::vector<int64_t> dims[kNumOperands];
  aclnn::aclDataType dtypes[kNumOperands] = {};
  uint32_t core_num = 0;

  CallSignature() = default;
  CallSignature(const Operands& operands, uint32_t cores) : core_num(cores) {
    for (int i = 0; i < kNumOperands; ++i) {
      dims[i].assign(operands[i].dims.begin(), operands[i].dims.end());
      dtypes[i] = operands[i].dtype;
    }
  }
  bool Matches(const Operands& operands, uint32_t cores) const {
    if (cores != core_num) return false;
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

struct PlannedCall;

// Idle plans, between runs. On CPU, the plans of one compiled call: XLA FFI's per-executable
// state, made at instantiation (XLA FFI API 0.3 has the instantiate stage and state types). A run
// takes one whose signature is its own (or plans a new one when none is idle, e.g. the executable
// running on several threads at once) and puts it back when finished. At most `max_idle` are
// kept; the least recently returned goes first.
class ExecutablePlans {
 public:
  static ffi::TypeId id;  // assigned when jax_threshold.ffi registers the type with XLA
  static constexpr size_t kMaxIdlePlans = 4;

  explicit ExecutablePlans(size_t max_idle = kMaxIdlePlans) : max_idle_(max_idle) {}
  size_t IdleCount() {
    std::lock_guard<std::mutex> lock(mu_);
    return idle_.size();
  }

  // An idle plan made for `operands` on `cores`, or null.
  std::unique_ptr<PlannedCall> Take(const Operands& operands, uint32_t cores);
  void Put(std::unique_ptr<PlannedCall> plan);

 private:
  const size_t max_idle_;
  std::mutex mu_;
  std::vector<std::unique_ptr<PlannedCall>> idle_;  // least recently returned first
};

ffi::TypeId ExecutablePlans::id = {};

// A planned call: its tensors, executor and workspace. Made by phase one for one call, or kept by
// the executable (ExecutablePlans) and rebound for every later call of the same signature.
struct PlannedCall {
  aclnn::aclTensor* tensors[kNumOperands] = {};
  void* bound[kNumOperands] = {};  // the buffers' addresses the executor is bound to now
  aclnn::aclOpExecutor* executor = nullptr;
  uint64_t workspace_size = 0;
  void* workspace = nullptr;  // CPU: allocated and freed here
  CallSignature signature;    // what the plan was made for (reused plans only)

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

std::unique_ptr<PlannedCall> ExecutablePlans::Take(const Operands& operands, uint32_t cores) {
  std::unique_ptr<PlannedCall> found;
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = idle_.size(); i-- > 0;) {
    if (idle_[i]->signature.Matches(operands, cores)) {
      found = std::move(idle_[i]);
      idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
  return found;
}

void ExecutablePlans::Put(std::unique_ptr<PlannedCall> plan) {
  std::unique_ptr<PlannedCall> evicted;  // destroyed after the lock is released
  std::lock_guard<std::mutex> lock(mu_);
  idle_.push_back(std::move(plan));
  if (idle_.size() > max_idle_) {
    evicted = std::move(idle_.front());
    idle_.erase(idle_.begin());
  }
}

// Everything one call owns until its last kernel block has finished.
struct CallState {
  std::unique_ptr<PlannedCall> plan;  // a reused one, or made by phase one for this call
  ExecutablePlans* home = nullptr;    // where a reusable plan goes back after the run
  std::unique_ptr<XlaThreadPoolStream> stream;
  std::optional<ffi::CountDownPromise> done;

  CallState() = default;
  CallState(const CallState&) = delete;
  CallState& operator=(const CallState&) = delete;
  ~CallState() { ReturnPlan(); }

  // After the run has finished: a reusable plan goes back to its executable's idle plans.
  void ReturnPlan() {
    if (home != nullptr && plan != nullptr) home->Put(std::move(plan));
    plan.reset();
  }

  // The outcome of the run once it has finished.
  ffi::Error RunOutcome() const {
    const aclnnStatus status = aclnn::aclnnThresholdBackwardRunStatus(plan->executor);
    const std::string error = stream ? stream->FirstError() : std::string();
    if (status == aclnn::ACLNN_SUCCESS && error.empty()) return ffi::Error::Success();
    return ffi::Error(ffi::ErrorCode::kInternal,
                      "jax_threshold: aclnnThresholdBackward's run failed with aclnn status " +
                          std::to_string(status) + " (" + StatusName(status) + ")" +
                          (error.empty() ? std::string() : ": " + error));
  }
};

// The ReluGrad targets' threshold: 0 (a 0-d float32), so phase one plans ReluGrad for every x.
Operand ZeroThreshold() {
  static float zero = 0;  // never written
  return {aclnn::ACL_FLOAT, {}, &zero};
}

// Phase one of the call: its tensors, the executor and its workspace size. Every check of the
// operator's contract is phase one's; its status and reason come back in the error.
ffi::Error PlanCall(PlannedCall& plan, const Operands& operands,
                    const aclnn::PlatformInfo& platform, ThresholdSource source) {
  for (int i = 0; i < kNumOperands; ++i) {
    const Operand& o = operands[i];
    // Row-major strides (null). A buffer of no elements may have dims whose strides overflow and
    // a null address: phase one plans nothing for it and uses neither.
    plan.tensors[i] =
        aclnn::aclCreateTensor(o.dims.begin(), o.dims.size(), o.dtype, nullptr, 0, o.data);
    if (plan.tensors[i] == nullptr) {
      return InvalidArgument("aclCreateTensor refused operand " + std::to_string(i) +
                             " of (grad_output, x, threshold, result): a negative dimension");
    }
    plan.bound[i] = o.data;
  }
  const auto phase_one = source == ThresholdSource::kDevice
                             ? aclnn::aclnnThresholdBackwardDeviceThresholdGetWorkspaceSize
                             : aclnn::aclnnThresholdBackwardBatchedGetWorkspaceSize;
  const aclnnStatus status =
      phase_one(plan.tensors[0], plan.tensors[1], plan.tensors[2], plan.tensors[3],
                &plan.workspace_size, &plan.executor, &platform);
  if (status != aclnn::ACLNN_SUCCESS) {
    return AclnnError("aclnnThresholdBackwardGetWorkspaceSize", status);
  }
  // The boundary's own rule, which phase one (any threshold that broadcasts) cannot see: the
  // lowering emits a 0-d threshold or one of the result's rank. Checked after phase one, whose
  // message names the shapes when they do not broadcast at all.
  const size_t rank = operands[ascend_kernels::kOperandThreshold].dims.size();
  const size_t result_rank = operands[ascend_kernels::kOperandOut].dims.size();
  if (rank != 0 && rank != result_rank) {
    return InvalidArgument("the threshold has rank " + std::to_string(rank) +
                           "; the lowering emits a 0-d threshold or one of the result's rank " +
                           std::to_string(result_rank));
  }
  return ffi::Error::Success();
}

// Points a reused plan's executor at this call's buffers (those that moved since its last run;
// the ReluGrad targets' threshold never does), and checks that phase two will take them: an
// input may overlap out only as it did when the plan was made (XLA may alias buffers differently
// from one run to the next). False when the plan cannot take them: the call then plans afresh.
bool RebindPlan(PlannedCall& plan, const Operands& operands) {
  bool moved = false;
  for (int i = 0; i < kNumOperands; ++i) {
    void* addr = operands[i].data;
    if (addr == plan.bound[i]) continue;
    const aclnnStatus status =
        i == ascend_kernels::kOperandOut
            ? aclnn::aclSetOutputTensorAddr(plan.executor, 0, plan.tensors[i], addr)
            : aclnn::aclSetInputTensorAddr(plan.executor, i, plan.tensors[i], addr);
    if (status != aclnn::ACLNN_SUCCESS) return false;
    plan.bound[i] = addr;
    moved = true;
  }
  return !moved ||
         aclnn::aclnnThresholdBackwardCheckBindings(plan.executor) == aclnn::ACLNN_SUCCESS;
}

// Phase one for `state`, or a plan of `plans` rebound to this call's buffers. A plan made here
// for an executable is repeatable and goes back to `plans` when its run has finished.
ffi::Error PrepareCall(CallState& state, ExecutablePlans* plans, const Operands& operands,
                       const aclnn::PlatformInfo& platform, ThresholdSource source) {
  if (plans != nullptr) {
    if (std::unique_ptr<PlannedCall> reused = plans->Take(operands, *platform.core_num);
        reused != nullptr && RebindPlan(*reused, operands)) {
      state.plan = std::move(reused);
      state.home = plans;
      return ffi::Error::Success();
    }
  }
  state.plan = std::make_unique<PlannedCall>();
  PlannedCall& plan = *state.plan;
  if (ffi::Error e = PlanCall(plan, operands, platform, source); e.failure()) return e;
  if (plan.workspace_size > 0) {
    const uint64_t a = aclnn::kWorkspaceAlignment;
    plan.workspace = std::aligned_alloc(a, (plan.workspace_size + a - 1) / a * a);
    if (plan.workspace == nullptr) {
      return ffi::Error(ffi::ErrorCode::kResourceExhausted,
                        "jax_threshold: cannot allocate a workspace of " +
                            std::to_string(plan.workspace_size) + " bytes");
    }
  }
  if (plans != nullptr &&
      aclnn::aclSetAclOpExecutorRepeatable(plan.executor) == aclnn::ACLNN_SUCCESS) {
    plan.signature = CallSignature(operands, *platform.core_num);
    state.home = plans;
  }
  return ffi::Error::Success();
}

//===-- CPU --------------------------------------------------------------------------------===//

// The lowering picks the target: the synchronous ones for outputs of at most
// aclnn::kInlineMaxBytes, run on the calling thread; the asynchronous ones, run on XLA's pool,
// for the rest. Each target runs its own way, whatever the size.

// The host platform the CPU handlers plan for, with `core_num` blocks.
aclnn::PlatformInfo HostPlatform(uint32_t core_num) {
  aclnn::PlatformInfo platform;
  platform.soc = aclnn::SocVersion::kHost;
  platform.ub_size = aclnn::kHostUbSize;
  platform.core_num = core_num;
  return platform;
}

// The call run synchronously on the calling thread, one block per step (core_num 1). `plans`:
// the executable's plans (null: plan this call only).
ffi::Error RunInline(const Operands& operands, ExecutablePlans* plans, ThresholdSource source) {
  CallState state;
  if (ffi::Error e = PrepareCall(state, plans, operands, HostPlatform(1), source); e.failure()) {
    return e;
  }
  PlannedCall& plan = *state.plan;
  const aclnnStatus status =
      aclnn::aclnnThresholdBackward(plan.workspace, plan.workspace_size, plan.executor, nullptr);
  if (status != aclnn::ACLNN_SUCCESS) {
    state.home = nullptr;  // a plan whose run failed is not kept
    return AclnnError("aclnnThresholdBackward", status);
  }
  return ffi::Error::Success();  // ~CallState returns the plan to `plans`
}

// out's byte size, saturating: only the split over the pool and the huge-page advice use it, and
// phase one refuses a buffer whose size does not fit.
uint64_t ByteSize(const Operand& out) {
  uint64_t bytes = ascend_kernels::DtypeSize(out.dtype);
  for (int64_t d : out.dims) {
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

// The call on XLA's intra-op pool: phase two's blocks on pool helpers and this thread; the future
// completes when the last has finished. `plans` as for RunInline.
ffi::Future RunOnPool(ffi::ThreadPool& pool, const Operands& operands, ExecutablePlans* plans,
                      ThresholdSource source) {
  const Operand& out = operands[ascend_kernels::kOperandOut];
  const uint64_t out_bytes = ByteSize(out);
  const aclnn::HostSplit split = aclnn::SplitHostCall(pool.num_threads(), out_bytes);
  auto state = std::make_shared<CallState>();
  if (ffi::Error e = PrepareCall(*state, plans, operands,
                                 HostPlatform(static_cast<uint32_t>(split.blocks)), source);
      e.failure()) {
    return ReadyFuture(std::move(e));
  }
  PlannedCall& plan = *state->plan;
  AdviseHugePages(out.data, out_bytes);
  state->stream =
      std::make_unique<XlaThreadPoolStream>(&pool, static_cast<uint32_t>(split.workers));
  state->stream->SetOwner(state);
  state->done.emplace(1);
  ffi::Future future(*state->done);
  CallState* raw = state.get();  // launches keep the state alive until on_done has returned
  const aclnnStatus status = aclnn::aclnnThresholdBackward(
      plan.workspace, plan.workspace_size, plan.executor, state->stream.get(), [raw] {
        // Every block has finished: the plan may serve the executable's next run before the
        // future completes (after that, the executable and its plans may be gone).
        ffi::Error outcome = raw->RunOutcome();
        if (outcome.failure()) raw->home = nullptr;  // a plan whose run failed is not kept
        raw->ReturnPlan();
        raw->done->CountDown(std::move(outcome));
      });
  if (status != aclnn::ACLNN_SUCCESS) {
    state->done->CountDown(AclnnError("aclnnThresholdBackward", status));
  }
  state->stream->Close();  // runs the queued blocks: pool helpers plus this thread
  state->stream->WaitFinished(kFinishPoll);
  return future;
}

// The operand targets' threshold is a device threshold (ThresholdSource::kDevice): the kernel
// reads it, so a reused plan serves every threshold value.
ffi::Future ThresholdBackwardCpu(ffi::ThreadPool pool, ExecutablePlans* plans, ffi::AnyBuffer grad,
                                 ffi::AnyBuffer x, ffi::AnyBuffer threshold,
                                 ffi::Result<ffi::AnyBuffer> out) {
  return RunOnPool(pool, {Decode(grad), Decode(x), Decode(threshold), Decode(*out)}, plans,
                   ThresholdSource::kDevice);
}

ffi::Future ThresholdBackwardReluGradCpu(ffi::ThreadPool pool, ExecutablePlans* plans,
                                         ffi::AnyBuffer grad, ffi::AnyBuffer x,
                                         ffi::Result<ffi::AnyBuffer> out) {
  return RunOnPool(pool, {Decode(grad), Decode(x), ZeroThreshold(), Decode(*out)}, plans,
                   ThresholdSource::kTiling);
}

ffi::Error ThresholdBackwardInlineCpu(ExecutablePlans* plans, ffi::AnyBuffer grad, ffi::AnyBuffer x,
                                      ffi::AnyBuffer threshold, ffi::Result<ffi::AnyBuffer> out) {
  return RunInline({Decode(grad), Decode(x), Decode(threshold), Decode(*out)}, plans,
                   ThresholdSource::kDevice);
}

ffi::Error ThresholdBackwardReluGradInlineCpu(ExecutablePlans* plans, ffi::AnyBuffer grad,
                                              ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> out) {
  return RunInline({Decode(grad), Decode(x), ZeroThreshold(), Decode(*out)}, plans,
                   ThresholdSource::kTiling);
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

// The platform phase one plans for on `device` (the current one): its SoC, which must be the one
// the kernels were compiled for (ascend_kernels::kBuildSoc, from SOC_VERSION in
// ascend_kernels/npu/CMakeLists.txt), its UB, and its vector core count.
ffi::Error NpuPlatform(int32_t device, aclnn::PlatformInfo* info) {
  const char* name = aclrtGetSocName();
  if (name == nullptr) {
    return ffi::Error(ffi::ErrorCode::kInternal, "jax_threshold: aclrtGetSocName returned null");
  }
  const std::string soc(name);
  const ascend_kernels::SocRow* row = ascend_kernels::SocOfDeviceName(name);
  if (row == nullptr) {
    return ffi::Error(ffi::ErrorCode::kUnimplemented,
                      "jax_threshold: device SoC " + soc + " cannot run the kernels (built for " +
                          ascend_kernels::SocRowOf(ascend_kernels::kBuildSoc).name +
                          " only; see docs/npu.md)");
  }
  info->soc = static_cast<aclnn::SocVersion>(row->soc);
  if (row->soc != ascend_kernels::kBuildSoc) {
    return ffi::Error(
        ffi::ErrorCode::kFailedPrecondition,
        "jax_threshold: the kernels were built for another SOC_VERSION than device " + soc);
  }
  info->ub_size = row->ub_bytes;
  uint32_t core_num = 0;
  ffi::Error e = VectorCoreCount(device, &core_num);
  info->core_num = core_num;
  return e;
}

// The ASCEND handlers' idle plans on `device`, kept between calls as the CPU targets' executables
// keep theirs, but by the handler: XLA FFI state on the NPU would need the Ascend plugin to
// support state types and the instantiate stage. A plan holds no device state (its tiling goes
// by value; its buffers are rebound per call), and plans are kept per device all the same.
ExecutablePlans* NpuPlans(int32_t device) {
  static std::mutex mu;
  static auto* plans = new std::unordered_map<int32_t, std::unique_ptr<ExecutablePlans>>;
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<ExecutablePlans>& found = (*plans)[device];
  if (found == nullptr) found = std::make_unique<ExecutablePlans>(kMaxNpuIdlePlans);
  return found.get();
}

// Phase one on the host, phase two submitted on the stream of the call's `device`
// (aclnn/npu_phase_two.h); returns without waiting for the kernels.
ffi::Error RunOnNpu(const NpuStream& npu_stream, int32_t device, const Operands& operands,
                    ThresholdSource source) {
  if (npu_stream.stream == nullptr) {
    return ffi::Error(
        ffi::ErrorCode::kFailedPrecondition,
        "jax_threshold: the ASCEND custom call got no aclrtStream from XLA (" +
            (npu_stream.error.empty() ? std::string("XLA_FFI_Stream_Get gave a null stream")
                                      : "XLA_FFI_Stream_Get failed: " + npu_stream.error) +
            "); the JAX Ascend PJRT plugin must hand FFI handlers its stream (docs/npu.md)");
  }
  const aclrtStream stream = npu_stream.stream;
  if (ffi::Error e = CheckCurrentDevice(device); e.failure()) return e;
  aclnn::PlatformInfo platform;
  if (ffi::Error e = NpuPlatform(device, &platform); e.failure()) return e;
  // A plan kept from an earlier call of this signature on this device, rebound; or phase one.
  // Once phase two has submitted, the launch has its arguments: the plan may serve the next call.
  CallState state;
  if (ffi::Error e = PrepareCall(state, NpuPlans(device), operands, platform, source);
      e.failure()) {
    return e;
  }
  const aclnnStatus status =
      aclnn::aclnnThresholdBackwardOnNpu(nullptr, 0, state.plan->executor, stream, device);
  if (status == aclnn::ACLNN_SUCCESS) return ffi::Error::Success();
  state.home = nullptr;  // a plan whose run failed is not kept
  return AclnnError("aclnnThresholdBackward", status);
}

// A traced threshold lives on the device: ThresholdGradV2D reads each launch's element at Init,
// in stream order after its producer, so nothing here waits or copies.
ffi::Error ThresholdBackwardNpu(NpuStream stream, int32_t device, ffi::AnyBuffer grad,
                                ffi::AnyBuffer x, ffi::AnyBuffer threshold,
                                ffi::Result<ffi::AnyBuffer> out) {
  return RunOnNpu(stream, device, {Decode(grad), Decode(x), Decode(threshold), Decode(*out)},
                  ThresholdSource::kDevice);
}

ffi::Error ThresholdBackwardReluGradNpu(NpuStream stream, int32_t device, ffi::AnyBuffer grad,
                                        ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> out) {
  return RunOnNpu(stream, device, {Decode(grad), Decode(x), ZeroThreshold(), Decode(*out)},
                  ThresholdSource::kTiling);
}

#endif  // JAX_THRESHOLD_ASCEND

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxThresholdThresholdBackwardCpuInstantiate, InstantiatePlans,
                              xla::ffi::Ffi::BindInstantiate());

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxThresholdThresholdBackwardCpu, ThresholdBackwardCpu,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<xla::ffi::ThreadPool>()
                                  .Ctx<xla::ffi::State<ExecutablePlans>>()
                                  .Arg<xla::ffi::AnyBuffer>()  // grad_output
                                  .Arg<xla::ffi::AnyBuffer>()  // x
                                  .Arg<xla::ffi::AnyBuffer>()  // threshold
                                  .Ret<xla::ffi::AnyBuffer>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxThresholdThresholdBackwardReluGradCpu,
                              ThresholdBackwardReluGradCpu,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<xla::ffi::ThreadPool>()
                                  .Ctx<xla::ffi::State<ExecutablePlans>>()
                                  .Arg<xla::ffi::AnyBuffer>()  // grad_output
                                  .Arg<xla::ffi::AnyBuffer>()  // x
                                  .Ret<xla::ffi::AnyBuffer>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxThresholdThresholdBackwardInlineCpu, ThresholdBackwardInlineCpu,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<xla::ffi::State<ExecutablePlans>>()
                                  .Arg<xla::ffi::AnyBuffer>()  // grad_output
                                  .Arg<xla::ffi::AnyBuffer>()  // x
                                  .Arg<xla::ffi::AnyBuffer>()  // threshold
                                  .Ret<xla::ffi::AnyBuffer>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxThresholdThresholdBackwardReluGradInlineCpu,
                              ThresholdBackwardReluGradInlineCpu,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<xla::ffi::State<ExecutablePlans>>()
                                  .Arg<xla::ffi::AnyBuffer>()  // grad_output
                                  .Arg<xla::ffi::AnyBuffer>()  // x
                                  .Ret<xla::ffi::AnyBuffer>());

#ifdef JAX_THRESHOLD_ASCEND
XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxThresholdThresholdBackwardReluGradNpu,
                              ThresholdBackwardReluGradNpu,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<NpuStreamContext>()
                                  .Ctx<xla::ffi::DeviceOrdinal>()
                                  .Arg<xla::ffi::AnyBuffer>()  // grad_output
                                  .Arg<xla::ffi::AnyBuffer>()  // x
                                  .Ret<xla::ffi::AnyBuffer>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxThresholdThresholdBackwardNpu, ThresholdBackwardNpu,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<NpuStreamContext>()
                                  .Ctx<xla::ffi::DeviceOrdinal>()
                                  .Arg<xla::ffi::AnyBuffer>()  // grad_output
                                  .Arg<xla::ffi::AnyBuffer>()  // x
                                  .Arg<xla::ffi::AnyBuffer>()  // threshold
                                  .Ret<xla::ffi::AnyBuffer>());
#endif

#ifdef JAX_THRESHOLD_ASCEND
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
  std::vector<FfiTarget> targets = {
      {kThresholdBackwardTarget, "cpu", JaxThresholdThresholdBackwardCpu,
       JaxThresholdThresholdBackwardCpuInstantiate},
      {kThresholdBackwardReluGradTarget, "cpu", JaxThresholdThresholdBackwardReluGradCpu,
       JaxThresholdThresholdBackwardCpuInstantiate},
      {kThresholdBackwardInlineTarget, "cpu", JaxThresholdThresholdBackwardInlineCpu,
       JaxThresholdThresholdBackwardCpuInstantiate},
      {kThresholdBackwardReluGradInlineTarget, "cpu",
       JaxThresholdThresholdBackwardReluGradInlineCpu, JaxThresholdThresholdBackwardCpuInstantiate},
  };
#ifdef JAX_THRESHOLD_ASCEND
  targets.push_back({kThresholdBackwardTarget, "ASCEND", JaxThresholdThresholdBackwardNpu});
  targets.push_back(
      {kThresholdBackwardReluGradTarget, "ASCEND", JaxThresholdThresholdBackwardReluGradNpu});
#endif
  return targets;
}

}  // namespace jax_threshold::ffi_handler
