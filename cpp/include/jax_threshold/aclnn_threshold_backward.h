// aclnn-style two-phase API of threshold_backward (docs/behaviour.md §2):
//
//   aclnnThresholdBackwardGetWorkspaceSize(grad_output, x, threshold, out, &ws_size, &executor);
//   aclnnThresholdBackward(workspace, ws_size, executor, stream);
//
// Phase one validates in the contract's order, picks the kernel (ReluGrad for a threshold of
// exactly 0, else ThresholdGradV2D), plans copies, tiles and sizes the workspace; phase two only
// runs. Everything lives in the executor: no global state, so any number of threads may use the
// API at once. Names mirror CANN's aclnn API in namespace jax_threshold::aclnn, so the NPU build
// can include CANN's own headers beside this one.
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
// Beside the contract's table, from the same aclnn table: no tiling for the given PlatformInfo,
// and a kernel block that failed while running.
inline constexpr aclnnStatus ACLNN_ERR_INNER_TILING_ERROR = 561002;
inline constexpr aclnnStatus ACLNN_ERR_RUNTIME_ERROR = 361001;

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

// The SoC phase one plans for: the dtypes it takes (docs/behaviour.md §2), the AscendC API rules
// the kernels run under, its defaults. kHost is the CPU, where the XLA FFI handler runs: the
// Ascend910B list plus int64 and float64 at every threshold. kAscend910 is refused
// (PARAM_INVALID): its AscendC API cannot run the kernels (no DataCopyPad).
enum class SocVersion : int32_t { kAscend910 = 0, kAscend910B = 1, kAscend950 = 2, kHost = 3 };

// What the tiling depends on (docs/behaviour.md §3). An empty field is the SoC's own (its row's
// UB and cores, e.g. the Ascend910B's 192 KiB and 48; the host's: a 64 KiB tile budget, 4 blocks
// per hardware thread). Phase one refuses (PARAM_INVALID) a ub_size that is not a multiple of 32 in
// [16 KiB, 1 MiB] or exceeds the SoC's UB, and a core_num outside [1, 4096].
struct PlatformInfo {
  SocVersion soc = SocVersion::kAscend910B;
  std::optional<uint64_t> ub_size;   // bytes of unified buffer per core
  std::optional<uint32_t> core_num;  // AIV cores the tiling splits over
};

struct aclTensor;      // a strided view: shape, strides and storage offset in elements, dtype, data
struct aclScalar;      // a typed host scalar, copied at creation
struct aclOpExecutor;  // phase one's plan

// A view of `data`: strides null means row-major; strides and offset are in elements (negative
// and 0 strides allowed). Null for a negative dimension. The memory is the caller's.
aclTensor* aclCreateTensor(const int64_t* view_dims, uint64_t view_dims_num, aclDataType dtype,
                           const int64_t* strides, int64_t offset, void* data);
aclnnStatus aclDestroyTensor(const aclTensor* tensor);
// The value at `value`, of `dtype`, copied. Null for a null value.
aclScalar* aclCreateScalar(const void* value, aclDataType dtype);
aclnnStatus aclDestroyScalar(const aclScalar* scalar);

// Phase one with a threshold scalar. `platform` null: the Ascend910B's defaults. Steps 1-8 of
// docs/behaviour.md §2, in order (a null `executor` out-parameter is reported with
// workspace_size's, step 1). On success *executor is set, also for empty tensors (its run does
// nothing). The descriptors may be destroyed after the call; the memory they describe must stay
// valid until the run ends. Hostile input: every size is overflow-checked (a view or workspace
// beyond 63 bits of bytes is PARAM_INVALID before anything is allocated); data not aligned to its
// element, strided views and an out that partly overlaps an input go through contiguous copies in
// the workspace (copy semantics); an out that is exactly an input's view runs in place. Byte
// order is the host's (the descriptors carry none).
aclnnStatus aclnnThresholdBackwardGetWorkspaceSize(const aclTensor* grad_output, const aclTensor* x,
                                                   const aclScalar* threshold, aclTensor* out,
                                                   uint64_t* workspace_size,
                                                   aclOpExecutor** executor,
                                                   const PlatformInfo* platform = nullptr);

// Phase one with a threshold tensor that ThresholdGradV2D reads when it runs (device memory on
// the NPU, host memory on the CPU; phase one and two never read it), so one plan serves every
// threshold value. grad_output, x and threshold broadcast (NumPy rules, any rank) to out; dims of
// out up to the last along which the threshold varies (and leading ones beyond 8) are looped
// over, slice after slice: in one launch when the tiling can describe the loop (kernel_args.h's
// ThresholdBatchTiling), else one launch per slice. The threshold's dtype must be one the kernel
// reads for x's (float16 / bfloat16 / float32 x: float32; float64 x: float64; integer x: its own,
// float32 or float64); x is checked with the nonzero threshold's dtype list. PARAM_INVALID also
// when out is not the broadcast shape of the three, when the threshold overlaps out, and when a
// threshold of more than one slice meets a grad_output, x or out that would need a copy
// (strided, unaligned, or overlapping out other than in place): batches run their tensors in
// place. Statuses otherwise as aclnnThresholdBackwardGetWorkspaceSize's.
aclnnStatus aclnnThresholdBackwardDeviceThresholdGetWorkspaceSize(
    const aclTensor* grad_output, const aclTensor* x, const aclTensor* threshold, aclTensor* out,
    uint64_t* workspace_size, aclOpExecutor** executor, const PlatformInfo* platform = nullptr);

// Workspace buffers are aligned like aclnn's, so kernels see aligned GM pointers. The size phase
// one reports includes kWorkspaceAlignment - 1 bytes of slack: a workspace of any alignment works.
inline constexpr uint64_t kWorkspaceAlignment = 512;

// Where the executor's kernel blocks run on the host (the host's aclrtStream). Launch runs
// block(i) for every i in [0, n), then done(); it may return before the blocks run and must never
// block a worker waiting on another task.
class HostStream {
 public:
  virtual ~HostStream() = default;
  virtual uint32_t NumWorkers() const = 0;
  virtual void Launch(uint32_t n, std::function<void(uint32_t)> block,
                      std::function<void()> done) = 0;
};

// Phase two. `stream`: a HostStream*, or null to run now on the calling thread plus the
// executor's block workers and return when finished. On a stream the call returns once the run
// is queued; `on_done` (optional) is called when it has finished, also after a failure (then
// read aclnnThresholdBackwardRunStatus). A run holds the plan until it ends; the workspace and the
// tensors' memory must stay valid until then. Errors, with nothing run: null executor ->
// PARAM_NULLPTR; workspace_size below phase one's -> PARAM_INVALID; null workspace when one is
// planned -> PARAM_NULLPTR; a workspace that wraps or shares a byte with grad_output, x or out ->
// PARAM_INVALID; an executor destroyed, or already run and not repeatable -> PARAM_INVALID. A
// failing block: ACLNN_ERR_RUNTIME_ERROR (synchronous) or the run status (on a stream).
aclnnStatus aclnnThresholdBackward(void* workspace, uint64_t workspace_size,
                                   aclOpExecutor* executor, void* stream,
                                   std::function<void()> on_done = nullptr);

// CANN's reuse: a repeatable executor runs any number of times until destroyed; one that is not
// is consumed by its first run. Made repeatable right after phase one: null -> PARAM_NULLPTR; an
// executor destroyed, or one that has run (or whose first run is in flight) -> PARAM_INVALID.
aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor* executor);

// Rebind a tensor's data address; the plan (kernel, tiling, copies, workspace) is unchanged.
// Inputs: 0 grad_output, 1 x, 2 the threshold (device-threshold plans only); output 0: out.
// `tensor` must have the planned dtype, shape, strides and offset (its own data pointer is not
// used). Errors: null executor or tensor, or a null `addr` for a non-empty tensor ->
// PARAM_NULLPTR; destroyed executor, index out of range, another layout, an address not aligned
// like the planned one, or a run of this executor in flight -> PARAM_INVALID. Phase two refuses
// (PARAM_INVALID, running nothing) bindings under which an input overlaps out other than it did
// at planning: plan afresh for those.
aclnnStatus aclSetInputTensorAddr(aclOpExecutor* executor, size_t index, aclTensor* tensor,
                                  void* addr);
aclnnStatus aclSetOutputTensorAddr(aclOpExecutor* executor, size_t index, aclTensor* tensor,
                                   void* addr);

// Releases an executor; runs in flight end first (a synchronous run returns, a run on a
// HostStream finishes, an NPU run is submitted), so never call it from a stream's own work for a
// run queued behind it. Null -> PARAM_NULLPTR; not live (destroyed, never created) ->
// PARAM_INVALID. As in CANN, destroying an executor that is not repeatable is PARAM_INVALID, but
// it is released all the same. Codes only: aclGetRecentErrMsg keeps the previous call's reason.
aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor* executor);

// Beyond CANN: the kernel phase one chose ("ThresholdGradV2D", "ReluGrad"; "" when nothing runs
// or the executor is not live).
const char* aclnnThresholdBackwardKernelName(const aclOpExecutor* executor);
// ACLNN_SUCCESS until a run failed (for a run on a stream, read it in on_done); PARAM_NULLPTR for
// a null executor, PARAM_INVALID for one that is not live.
aclnnStatus aclnnThresholdBackwardRunStatus(const aclOpExecutor* executor);

// The reason of this thread's last failing call (like aclGetRecentErrMsg).
const char* aclGetRecentErrMsg();

}  // namespace jax_threshold::aclnn
