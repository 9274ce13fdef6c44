// aclnn-style two-phase API of threshold_backward (docs/behaviour.md §2):
//
//   aclnnThresholdBackwardGetWorkspaceSize(grad_output, x, threshold, out, &ws_size, &executor);
//   aclnnThresholdBackward(workspace, ws_size, executor, stream);
//
// Phase one validates (in the contract's order), picks the kernel (ReluGrad for a threshold of
// exactly 0, else ThresholdGradV2D), plans contiguous/broadcast copies, computes the tiling and
// sizes the workspace. Phase two only runs. Everything lives in the executor: no global state, so
// any number of threads may use the API at once.
//
// Names mirror CANN's aclnn API but live in namespace jax_threshold::aclnn so the NPU build can
// include CANN's own headers beside this one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

namespace jax_threshold::aclnn {

using aclnnStatus = int32_t;
inline constexpr aclnnStatus ACLNN_SUCCESS = 0;
inline constexpr aclnnStatus ACLNN_ERR_PARAM_NULLPTR = 161001;
inline constexpr aclnnStatus ACLNN_ERR_PARAM_INVALID = 161002;
inline constexpr aclnnStatus ACLNN_ERR_INNER_CREATE_EXECUTOR = 561101;
inline constexpr aclnnStatus ACLNN_ERR_INNER_NULLPTR = 561103;
// Added beside the contract's table (values from the same aclnn table): the tiling cannot be made
// for the given PlatformInfo (ub_size too small, core_num 0), and a kernel block failed while
// running.
inline constexpr aclnnStatus ACLNN_ERR_INNER_TILING_ERROR = 561002;
inline constexpr aclnnStatus ACLNN_ERR_RUNTIME_ERROR = 361001;

// aclDataType values.
enum aclDataType : int32_t {
  ACL_DT_UNDEFINED = -1,
  ACL_FLOAT = 0,
  ACL_FLOAT16 = 1,
  ACL_INT8 = 2,
  ACL_INT32 = 3,
  ACL_UINT8 = 4,
  ACL_INT16 = 6,
  ACL_UINT16 = 7,
  ACL_UINT32 = 8,
  ACL_INT64 = 9,
  ACL_UINT64 = 10,
  ACL_DOUBLE = 11,
  ACL_BOOL = 12,
  ACL_COMPLEX64 = 16,
  ACL_COMPLEX128 = 17,
  ACL_BF16 = 27,
};

// The SoC phase one plans for: which dtypes it takes (docs/behaviour.md §2), under which AscendC
// API rules the kernels run, and its defaults. kHost is the CPU, where the XLA FFI handler runs:
// the Ascend910B list plus int64 and float64 at every threshold. kAscend910 is refused
// (PARAM_INVALID): its AscendC API cannot run the kernels (no DataCopyPad).
enum class SocVersion : int32_t { kAscend910 = 0, kAscend910B = 1, kAscend950 = 2, kHost = 3 };

// Platform facts the tiling depends on (docs/behaviour.md §3). An empty ub_size or core_num is
// the SoC's own (the Ascend910B's: 192 KiB of UB, 48 cores; the host's: a 64 KiB tile budget and
// 4 blocks per hardware thread). Phase one refuses (ACLNN_ERR_PARAM_INVALID) a ub_size that is
// not a multiple of 32 in [16 KiB, 1 MiB] or beyond the SoC's UB, and a core_num outside
// [1, 4096].
struct PlatformInfo {
  SocVersion soc = SocVersion::kAscend910B;
  std::optional<uint64_t> ub_size;   // bytes of unified buffer per core
  std::optional<uint32_t> core_num;  // AIV cores used for tiling
};

// A strided view of memory, like aclTensor: view shape, strides and storage offset in elements.
struct aclTensor;
// A typed host scalar, like aclScalar (the value is copied at creation).
struct aclScalar;
// The plan made by phase one; runs once, or any number of times once made repeatable.
struct aclOpExecutor;

aclTensor* aclCreateTensor(const int64_t* view_dims, uint64_t view_dims_num, aclDataType dtype,
                           const int64_t* strides, int64_t offset, void* data);
aclnnStatus aclDestroyTensor(const aclTensor* tensor);
aclScalar* aclCreateScalar(const void* value, aclDataType dtype);
aclnnStatus aclDestroyScalar(const aclScalar* scalar);
// Releases an executor. A destroyed (or never created) executor is an error code wherever it is
// passed afterwards, never a crash: PARAM_INVALID ("not a live executor"). As CANN's, destroying
// an executor that was not made repeatable is PARAM_INVALID too; unlike CANN's phase two, ours
// does not release a non-repeatable executor, so this call releases it all the same (callers
// that release every executor they plan keep doing so, and leak nothing). A null executor is
// PARAM_NULLPTR. Runs in flight end first: the call admits no more and waits for them (a
// synchronous run until it returns, a run on a HostStream until its last launch has finished, an
// NPU run until submitted); so do not call it from a stream's own work for a run queued behind
// it. Status codes only: aclGetRecentErrMsg keeps the reason of the call before.
aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor* executor);

// The host's stand-in for aclrtStream: where the executor's kernel blocks run. `Launch` runs
// block(i) for every i in [0, n) and then calls done(); it may return before the blocks run, and
// must never block a worker waiting on another task. A null stream in aclnnThresholdBackward
// means "run now on the calling thread plus std::threads, and return when finished".
class HostStream {
 public:
  virtual ~HostStream() = default;
  virtual uint32_t NumWorkers() const = 0;
  virtual void Launch(uint32_t n, std::function<void(uint32_t)> block,
                      std::function<void()> done) = 0;
};

// Phase one. `platform` may be null (the Ascend910B's defaults). A null `executor` out-parameter is
// reported with workspace_size's check (step 1): ACLNN_ERR_PARAM_NULLPTR.
// On success *executor is always set, also for empty tensors (step 7: its run is a no-op).
// The executor copies what it needs from the tensor and scalar descriptors, so they may be
// destroyed right after this call; the memory they describe must stay valid until the run ends.
// aclCreateTensor: strides null means row-major contiguous; strides and offset are in elements
// (negative and 0 strides allowed); returns null for a negative dimension.
// Hostile input (docs/behaviour.md §2): every size is overflow-checked (a view whose byte extent,
// or a workspace whose size, does not fit in 63 bits is ACLNN_ERR_PARAM_INVALID before anything
// is allocated); data not aligned to its element is copied byte-wise through the workspace; an
// out that partly overlaps an input gets copy semantics (the input is copied first), while out
// being exactly an input's view (in place) runs directly. Byte order is the host's (the
// descriptors carry none).
aclnnStatus aclnnThresholdBackwardGetWorkspaceSize(const aclTensor* grad_output, const aclTensor* x,
                                                   const aclScalar* threshold, aclTensor* out,
                                                   uint64_t* workspace_size,
                                                   aclOpExecutor** executor,
                                                   const PlatformInfo* platform = nullptr);

// Phase two. `stream` is a HostStream* on the host (null: synchronous), an aclrtStream on the NPU.
// With an asynchronous stream, `on_done` (optional) is called once everything has finished (also
// after a failure, when the remaining launches are skipped); the outcome is then
// aclnnThresholdBackwardRunStatus(executor). A run holds the executor's plan until it ends; a
// destroy meanwhile waits for that (the workspace and the tensors' memory must stay valid until
// on_done).
// The workspace may have any alignment: the size phase one reports includes the slack phase two
// needs to align its buffers inside it.
// Errors (nothing runs): null executor -> PARAM_NULLPTR; workspace_size below the reported size
// -> PARAM_INVALID; null workspace when the reported size is > 0 -> PARAM_NULLPTR; a workspace
// whose [workspace, workspace + workspace_size) wraps or shares a byte with the extent of
// grad_output, x or out -> PARAM_INVALID; executor already run (and not repeatable) or destroyed
// -> PARAM_INVALID. A failing
// kernel block -> ACLNN_ERR_RUNTIME_ERROR (synchronous).
aclnnStatus aclnnThresholdBackward(void* workspace, uint64_t workspace_size,
                                   aclOpExecutor* executor, void* stream,
                                   std::function<void()> on_done = nullptr);

// CANN's executor reuse. A repeatable executor runs any number of times, each run with the plan
// phase one made, until aclDestroyAclOpExecutor; a non-repeatable one is consumed by its first
// run. As in CANN, reuse is enabled right after phase one, before the first run. Errors: null
// executor -> PARAM_NULLPTR; an executor already destroyed, or one that has run (or whose first
// run is in flight) without being repeatable -> PARAM_INVALID.
aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor* executor);

// Rebinds the data address of a tensor of the plan; the plan itself (kernel, tiling, copies,
// workspace size) is unchanged. Inputs: 0 grad_output, 1 x, and for the threshold-tensor phase
// ones (aclnnThresholdBackwardBatchedGetWorkspaceSize and the device-threshold one) 2 the
// threshold; output 0 is out. `tensor` describes the new
// binding and must have the planned dtype, shape, strides and storage offset (so the bytes read
// and written are the planned ones); its own data pointer is not used. Errors: null executor or
// tensor -> PARAM_NULLPTR; destroyed executor, index out of range, a tensor of another size or
// layout, an address not aligned like the planned one, a threshold whose value phase one read
// (only a threshold the kernel reads, ThresholdSource::kDevice, can be rebound), or a run of this
// executor still in flight -> PARAM_INVALID. A null `addr` is PARAM_NULLPTR unless the planned
// tensor is empty. Phase two refuses (PARAM_INVALID) bindings under which an input overlaps out
// other than the way it did at planning (phase one chose copies or an in-place run for that).
aclnnStatus aclSetInputTensorAddr(aclOpExecutor* executor, size_t index, aclTensor* tensor,
                                  void* addr);
aclnnStatus aclSetOutputTensorAddr(aclOpExecutor* executor, size_t index, aclTensor* tensor,
                                   void* addr);
// Beyond CANN's API: whether phase two will take the executor's current bindings, so a caller
// can plan afresh instead of failing the run. PARAM_INVALID (with aclGetRecentErrMsg's reason)
// when a rebinding made an input overlap out other than the way it did at planning, or for a
// destroyed executor; PARAM_NULLPTR for a null one.
aclnnStatus aclnnThresholdBackwardCheckBindings(const aclOpExecutor* executor);

// Introspection beyond CANN's API. The kernel phase one chose: "ThresholdGradV2D", "ReluGrad",
// or "" when nothing runs (empty tensors) or executor is null.
const char* aclnnThresholdBackwardKernelName(const aclOpExecutor* executor);
// ACLNN_SUCCESS until a run failed (for asynchronous runs, read it in on_done); PARAM_NULLPTR for
// a null executor, PARAM_INVALID for a destroyed one (whose kernel name is "").
aclnnStatus aclnnThresholdBackwardRunStatus(const aclOpExecutor* executor);

// Workspace buffers are aligned like aclnn's (512 bytes), so kernels see aligned GM pointers.
// Callers that allocate workspaces themselves (the XLA FFI handler) align to it too.
inline constexpr uint64_t kWorkspaceAlignment = 512;

// Phase one with a threshold tensor: an extension of the aclnn API for callers whose threshold is
// an array (a vmap-batched threshold in the XLA custom call), one plan for the whole call.
//
// grad_output, x and threshold broadcast (NumPy rules, NumPy broadcasting) to out, of any rank.
// Each threshold element covers a slice of out: phase one plans one slice (validating, tiling,
// sizing its copies as aclnnThresholdBackwardGetWorkspaceSize does) and phase two,
// aclnnThresholdBackward, runs that plan once per slice with the slice's pointers and threshold
// (ReluGrad where it is exactly 0, else ThresholdGradV2D). Memory is O(1) in the number of
// slices, and time O(out). Before planning, out's size-1 dims are dropped and adjacent dims are
// merged where every operand's strides allow, and dims beyond the kernel's rank of 8 are looped
// over like the threshold's. Slices of at most kSmallSliceBytes of output run whole, in up to
// core_num blocks of consecutive slices; larger ones one after another, each on every block.
// Status codes as aclnnThresholdBackwardGetWorkspaceSize's. Besides its checks: the threshold's
// dtype must be real, its data host memory; out's shape must be the broadcast shape of the three
// (PARAM_INVALID naming all four shapes otherwise). An empty out plans nothing (workspace 0)
// before any stride or size is computed; every stride and byte count is overflow-checked.
aclnnStatus aclnnThresholdBackwardBatchedGetWorkspaceSize(
    const aclTensor* grad_output, const aclTensor* x, const aclTensor* threshold, aclTensor* out,
    uint64_t* workspace_size, aclOpExecutor** executor, const PlatformInfo* platform = nullptr);

// Phase one with a threshold tensor in device memory, whose data phase one and phase two never
// read: the same checks and plan as aclnnThresholdBackwardBatchedGetWorkspaceSize (the threshold's
// data pointer must be non-null), except that every launch is ThresholdGradV2D (at threshold 0
// it gives ReluGrad's bits: docs/behaviour.md §1), checked with a nonzero threshold's dtype list,
// and its kernel reads the launch's threshold element at Init (ThresholdSource::kDevice in the
// tiling, the element's address as the kernel's `threshold` argument). So the tiling does not
// depend on the threshold's value: one tiling serves every slice. Besides those checks, the
// threshold's dtype must be one the kernel converts for x's dtype (float16 / bfloat16 / float32
// x: float32; float64 x: float64; integer x: x's dtype, float32 or float64), else PARAM_INVALID.
// Phase two runs it on host streams like any plan (the kernels see host memory there) and on the
// NPU with aclnnThresholdBackwardOnNpu.
aclnnStatus aclnnThresholdBackwardDeviceThresholdGetWorkspaceSize(
    const aclTensor* grad_output, const aclTensor* x, const aclTensor* threshold, aclTensor* out,
    uint64_t* workspace_size, aclOpExecutor** executor, const PlatformInfo* platform = nullptr);

// The reason of the last failing call on this thread (like aclGetRecentErrMsg).
const char* aclGetRecentErrMsg();

}  // namespace jax_threshold::aclnn
