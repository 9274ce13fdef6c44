// XLA FFI handlers of threshold_backward (see ffi_handler.h for the targets and the threading):
// phase two of each call on its platform, and the handler symbols. Phase one (the call's plan) is
// ffi_call_plan.h's, the threshold's decoding ffi_threshold.h's.
#include "xla_ffi/ffi_handler.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#ifdef __linux__
#include <sys/mman.h>
#endif

#include "xla_ffi/denormal_mode.h"
#include "xla_ffi/ffi_call_plan.h"
#include "xla_ffi/ffi_error.h"
#include "xla_ffi/ffi_threshold.h"
#include "jax_threshold/aclnn_threshold_backward.h"
#include "xla/ffi/api/ffi.h"
#include "xla_ffi/xla_thread_pool_stream.h"  // header-only

#ifdef JAX_THRESHOLD_ASCEND
#include <cstring>

#include "acl/acl.h"
#include "aclnn/executor.h"
#include "aclnn/soc_dtypes.h"
#include "npu_launch.h"
#endif

namespace jax_threshold::ffi_handler {
namespace {

namespace ffi = ::xla::ffi;
using aclnn::aclnnStatus;

// The static targets' common part: encodes the attributes' threshold (its bytes live in this
// frame until `run` returns) and runs the call with it; `fail` turns an encoding error into the
// handler's result.
template <typename Run, typename Fail>
auto WithStaticThreshold(std::string_view dtype_name, double value_float, int64_t value_int,
                         Run run, Fail fail) {
  ThresholdValues threshold;
  unsigned char storage[8];
  if (ffi::Error e = EncodeStaticThreshold(dtype_name, value_float, value_int, threshold, storage);
      e.failure()) {
    return fail(std::move(e));
  }
  return run(threshold);
}

//===-- CPU --------------------------------------------------------------------------------===//

// Threads that can run at the same time on this host (>= 1).
int64_t HostThreads() {
  static const int64_t threads = std::max<int64_t>(1, std::thread::hardware_concurrency());
  return threads;
}

// Asks for transparent huge pages on a large output before its first touch: a fresh buffer of
// 64 MiB otherwise takes 16384 page faults of 4 KiB. Only the 2 MiB-aligned interior is advised;
// failure (no THP, memory already touched) changes nothing but speed.
void AdviseHugePages(const ffi::AnyBuffer& out) {
#ifdef __linux__
  if (out.size_bytes() < kHugePageMinBytes) return;
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  const uintptr_t first = reinterpret_cast<uintptr_t>(out.untyped_data());
  const uintptr_t begin = (first + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t end = (first + out.size_bytes()) & ~(kHugePage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)out;
#endif
}

// A batched threshold over small slices (ffi_shared_plan.h): inline, or in `blocks` contiguous
// ranges of slices claimed by the pool's workers like kernel blocks.
ffi::Future RunSharedPlan(ffi::ThreadPool& pool, std::shared_ptr<CallState> state, bool run_inline,
                          int64_t workers, int64_t blocks) {
  SharedPlanSlices& shared = *state->shared;
  auto outcome = [&shared]() {
    const std::string error = shared.FirstError();
    return error.empty() ? ffi::Error::Success()
                         : ffi::Error(ffi::ErrorCode::kInternal, "jax_threshold: " + error);
  };
  const int64_t ranges = run_inline ? 1 : std::min<int64_t>(blocks, shared.count);
  if (ranges <= 1) {
    shared.Run(0, shared.count);
    return ReadyFuture(outcome());
  }
  state->stream = std::make_unique<XlaThreadPoolStream>(&pool, static_cast<uint32_t>(workers));
  state->stream->SetOwner(state);
  state->done.emplace(1);
  ffi::Future future(*state->done);
  CallState* raw = state.get();  // the launch keeps the state alive until `done` has returned
  const int64_t count = shared.count;
  state->stream->Launch(
      static_cast<uint32_t>(ranges),
      [raw, count, ranges](uint32_t r) {
        raw->shared->Run(count * r / ranges, count * (r + 1) / ranges);
      },
      [raw, outcome] { raw->done->CountDown(outcome()); });
  state->stream->Close();
  return future;
}

ffi::Future RunOnHost(ffi::ThreadPool& pool, const ffi::AnyBuffer& grad, const ffi::AnyBuffer& x,
                      const ThresholdValues& threshold, const ffi::AnyBuffer& out) {
  const HostSplit split = SplitHostCall(pool.num_threads(), out.size_bytes());
  const bool run_inline = split.run_inline;
  const int64_t workers = split.workers, blocks = split.blocks;
  aclnn::PlatformInfo platform;
  platform.soc = aclnn::SocVersion::kHost;
  platform.ub_size = kHostUbSize;
  platform.core_num = run_inline ? 1 : static_cast<uint32_t>(blocks);

  auto state = std::make_shared<CallState>();
  if (ffi::Error e = PlanCall(*state, grad, x, threshold, out, &platform); e.failure()) {
    return ReadyFuture(std::move(e));
  }
  if (state->shared) return RunSharedPlan(pool, std::move(state), run_inline, workers, blocks);
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
    state->kernel_stream = std::make_unique<DenormalsAsNumbersStream>(state->stream.get());
    for (Slice& s : state->slices) {
      const aclnnStatus status = aclnn::aclnnThresholdBackward(
          workspace_of(s), s.workspace_size, s.executor, state->kernel_stream.get());
      if (status != aclnn::ACLNN_SUCCESS) {
        return ReadyFuture(AclnnError("aclnnThresholdBackward", status));
      }
    }
    for (size_t k = 0; k < state->slices.size(); ++k) {
      if (ffi::Error e = state->RunOutcome(k); e.failure()) return ReadyFuture(std::move(e));
    }
    return ReadyFuture(ffi::Error::Success());
  }

  AdviseHugePages(out);
  state->stream = std::make_unique<XlaThreadPoolStream>(&pool, static_cast<uint32_t>(workers));
  state->stream->SetOwner(state);
  state->kernel_stream = std::make_unique<DenormalsAsNumbersStream>(state->stream.get());
  const int64_t count = static_cast<int64_t>(state->slices.size());
  state->done.emplace(count);
  ffi::Future future(*state->done);
  CallState* raw = state.get();  // launches keep the state alive until on_done has returned
  for (int64_t k = 0; k < count; ++k) {
    Slice& s = state->slices[k];
    const aclnnStatus status = aclnn::aclnnThresholdBackward(
        workspace_of(s), s.workspace_size, s.executor, state->kernel_stream.get(),
        [raw, k] { raw->done->CountDown(raw->RunOutcome(static_cast<size_t>(k))); });
    if (status != aclnn::ACLNN_SUCCESS) {  // slices before k still run and count down
      state->done->CountDown(static_cast<size_t>(count - k),
                             AclnnError("aclnnThresholdBackward", status));
      break;
    }
  }
  state->stream->Close();  // runs the queued blocks: pool helpers plus this thread
  state->stream->WaitFinished(kFinishPoll);
  return future;
}

ffi::Future ThresholdBackwardCpu(ffi::ThreadPool pool, ffi::AnyBuffer grad, ffi::AnyBuffer x,
                                 ffi::AnyBuffer threshold, ffi::Result<ffi::AnyBuffer> out) {
  // Phase one narrows thresholds to float32 on this thread too (pool threads: kernel_stream).
  ScopedDenormalsAsNumbers guard;
  return RunOnHost(pool, grad, x, OperandThreshold(threshold), *out);
}

ffi::Future ThresholdBackwardStaticCpu(ffi::ThreadPool pool, ffi::AnyBuffer grad,
                                       ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> out,
                                       std::string_view threshold_dtype, double threshold_float,
                                       int64_t threshold_int) {
  ScopedDenormalsAsNumbers guard;  // the attribute's double narrows to float32 here
  return WithStaticThreshold(
      threshold_dtype, threshold_float, threshold_int,
      [&](const ThresholdValues& threshold) { return RunOnHost(pool, grad, x, threshold, *out); },
      ReadyFuture);
}

//===-- NPU (JAX Ascend PJRT plugin) -------------------------------------------------------===//
#ifdef JAX_THRESHOLD_ASCEND

ffi::Error AclError(const char* function, aclError code) {
  return ffi::Error(ffi::ErrorCode::kInternal, std::string("jax_threshold: ") + function +
                                                   " failed with ACL error " +
                                                   std::to_string(code));
}

// The platform phase one plans for: the device's SoC, which must be the one the kernels were
// compiled for (JAX_THRESHOLD_NPU_SOC, from SOC_VERSION in ascend_kernels/npu/CMakeLists.txt),
// its UB, and its vector core count.
ffi::Error NpuPlatform(aclnn::PlatformInfo* info) {
  const char* name = aclrtGetSocName();
  if (name == nullptr) {
    return ffi::Error(ffi::ErrorCode::kInternal, "jax_threshold: aclrtGetSocName returned null");
  }
  const std::string soc(name);
  auto starts = [&soc](const char* prefix) { return soc.rfind(prefix, 0) == 0; };
  if ((starts("Ascend910B") && soc.size() > 10 && soc[10] >= '1' && soc[10] <= '4') ||
      starts("Ascend910_93")) {
    info->soc = aclnn::SocVersion::kAscend910B;
  } else if (starts("Ascend950")) {
    info->soc = aclnn::SocVersion::kAscend950;
  } else {
    return ffi::Error(ffi::ErrorCode::kUnimplemented,
                      "jax_threshold: device SoC " + soc +
                          " cannot run the kernels (built for Ascend910B1..B4, Ascend910_93xx, "
                          "Ascend950 only; see README, NPU build)");
  }
  if (static_cast<int>(info->soc) != JAX_THRESHOLD_NPU_SOC) {
    return ffi::Error(ffi::ErrorCode::kFailedPrecondition,
                      "jax_threshold: the kernels were built for another SOC_VERSION than device " +
                          soc);
  }
  info->ub_size = aclnn::SocUbBytes(info->soc);
  int32_t device = 0;
  int64_t cores = 0;
  if (aclrtGetDevice(&device) == ACL_SUCCESS &&
      aclGetDeviceCapability(static_cast<uint32_t>(device), ACL_DEVICE_INFO_VECTOR_CORE_NUM,
                             &cores) == ACL_SUCCESS &&
      cores > 0) {
    info->core_num = static_cast<uint32_t>(cores);
  }  // else the PlatformInfo default (48, the 910B's AIV count)
  return ffi::Error::Success();
}

// Phase two on the NPU. The executor's own phase two runs its kernel blocks on the host, so here
// each slice's kernel is launched on the stream with the tiling phase one computed (copied to the
// device once for all slices). Synchronous on the host side: the stream is synchronised before
// the tiling buffer and the executors are freed.
ffi::Error RunOnNpu(aclrtStream stream, const ffi::AnyBuffer& grad, const ffi::AnyBuffer& x,
                    const ThresholdValues& threshold, const ffi::AnyBuffer& out) {
  aclnn::PlatformInfo platform;
  if (ffi::Error e = NpuPlatform(&platform); e.failure()) return e;
  CallState state;
  if (ffi::Error e = PlanCall(state, grad, x, threshold, out, &platform); e.failure()) {
    return e;
  }
  constexpr uint64_t kTilingStride = 128;  // bytes per slice's tiling struct, aligned
  static_assert(sizeof(ascend_kernels::ThresholdGradV2DTilingData) <= kTilingStride &&
                    sizeof(ascend_kernels::ReluGradTilingData) <= kTilingStride,
                "tiling structs fit their slot");
  std::vector<char> host_tiling(state.slices.size() * kTilingStride, 0);
  for (size_t k = 0; k < state.slices.size(); ++k) {
    const aclnn::ExecutorPlan* p = aclnn::GetExecutorPlan(state.slices[k].executor);
    if (p->grad_copy || p->x_copy || p->out_copy) {
      // The strided/broadcast copies are host code (aclnn/strided_copy.cpp); no NPU kernel yet.
      return ffi::Error(ffi::ErrorCode::kUnimplemented,
                        "jax_threshold: on the NPU, grad_output and x must have out's shape "
                        "(broadcast them in JAX first): device-side broadcast copies are not built");
    }
    char* slot = host_tiling.data() + k * kTilingStride;
    if (p->kernel == aclnn::KernelKind::kReluGrad) {
      std::memcpy(slot, &p->relu_grad_tiling, sizeof(p->relu_grad_tiling));
    } else {
      std::memcpy(slot, &p->threshold_grad_tiling, sizeof(p->threshold_grad_tiling));
    }
  }
  void* tiling = nullptr;
  if (!host_tiling.empty()) {
    if (aclError rc = aclrtMalloc(&tiling, host_tiling.size(), ACL_MEM_MALLOC_HUGE_FIRST);
        rc != ACL_SUCCESS || tiling == nullptr) {
      return AclError("aclrtMalloc", rc);
    }
    if (aclError rc = aclrtMemcpy(tiling, host_tiling.size(), host_tiling.data(),
                                  host_tiling.size(), ACL_MEMCPY_HOST_TO_DEVICE);
        rc != ACL_SUCCESS) {
      aclrtFree(tiling);
      return AclError("aclrtMemcpy", rc);
    }
  }
  ffi::Error result = ffi::Error::Success();
  for (size_t k = 0; k < state.slices.size() && result.success(); ++k) {
    const aclnn::ExecutorPlan* p = aclnn::GetExecutorPlan(state.slices[k].executor);
    if (p->kernel == aclnn::KernelKind::kNone) continue;
    void* g = const_cast<char*>(p->grad);
    void* xd = const_cast<char*>(p->x);
    void* slot = static_cast<char*>(tiling) + k * kTilingStride;
    const uint32_t block_dim = static_cast<uint32_t>(p->tiling().block_dim);
    const aclError rc =
        p->kernel == aclnn::KernelKind::kReluGrad
            ? ascend_kernels::LaunchReluGradOnNpu(p->dtype, block_dim, stream, g, xd, p->out,
                                                  /*workspace=*/nullptr, slot)
            : ascend_kernels::LaunchThresholdGradV2DOnNpu(p->dtype, block_dim, stream, g, xd,
                                                          p->out, /*workspace=*/nullptr, slot);
    if (rc != ACL_SUCCESS) result = AclError(aclnn::KernelKindName(p->kernel), rc);
  }
  if (aclError rc = aclrtSynchronizeStream(stream); rc != ACL_SUCCESS && result.success()) {
    result = AclError("aclrtSynchronizeStream", rc);
  }
  if (tiling != nullptr) aclrtFree(tiling);
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
  return WithStaticThreshold(
      threshold_dtype, threshold_float, threshold_int,
      [&](const ThresholdValues& threshold) { return RunOnNpu(stream, grad, x, threshold, *out); },
      [](ffi::Error e) { return e; });
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

HostSplit SplitHostCall(int64_t pool_threads, uint64_t out_bytes) {
  HostSplit split;
  split.run_inline = pool_threads <= 0 || out_bytes <= kInlineMaxBytes;
  // Workers: pool threads plus the caller, no more than the host runs at once. Blocks: a few per
  // worker (each of at least kMinBlockBytes of output), claimed dynamically, so a helper that
  // wakes late takes fewer of them instead of holding up the call.
  split.workers = std::min(pool_threads + 1, HostThreads());
  split.blocks = std::clamp<int64_t>(
      std::min<int64_t>(split.workers * kBlocksPerWorker,
                        static_cast<int64_t>(out_bytes / kMinBlockBytes)),
      1, kMaxCores);
  return split;
}

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
