#include "aclnn/npu_phase_two.h"

#include <array>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "aclnn/executor.h"
#include "aclnn/threshold_params.h"
#include "common/op_host/elementwise_tiling.h"
#include "npu_launch.h"

namespace jax_threshold::aclnn {
namespace {

using ascend_kernels::KernelOp;

// One kernel launch: the slice's pointers and its tiling, passed by value.
struct NpuLaunch {
  KernelOp kernel;
  void* grad;
  void* x;
  void* threshold;  // the device threshold's element (device-threshold plans), or null
  void* out;
  ascend_kernels::ThresholdGradV2DTilingData threshold_grad_tiling;
  ascend_kernels::ReluGradTilingData relu_grad_tiling;
};

NpuLaunch LaunchOf(const ExecutorPlan& p, const char* grad, const char* x, const char* threshold,
                   char* out, KernelOp kernel,
                   const ascend_kernels::ThresholdGradV2DTilingData& tgv2d) {
  return {kernel, const_cast<char*>(grad), const_cast<char*>(x), const_cast<char*>(threshold), out,
          tgv2d,  p.relu_grad_tiling};
}

// A device-threshold batch as one ThresholdGradV2D launch over all the platform's cores: each
// block finds its slices' elements and threshold elements from the tiling's batch (kernel_args.h).
// False (one launch per slice instead) for batches the tiling cannot describe: more than
// kMaxBatchRank looped dims, or negative strides.
bool OneLaunch(const ExecutorPlan& p, NpuLaunch* launch) {
  const ThresholdBatch& b = *p.batch;
  if (!p.HasDeviceThreshold() || b.core_num == 0 ||
      b.sizes.size() > ascend_kernels::kMaxBatchRank) {
    return false;
  }
  ascend_kernels::ThresholdGradV2DTilingData tiling = p.threshold_grad_tiling;
  ascend_kernels::ThresholdBatchTiling& batch = tiling.batch;
  batch.slice_num = static_cast<uint64_t>(b.count);
  batch.slice_len = p.threshold_grad_tiling.tiling.total_num;
  batch.rank = b.sizes.size();
  for (size_t d = 0; d < b.sizes.size(); ++d) {
    batch.sizes[d] = static_cast<uint64_t>(b.sizes[d]);
    for (int j = 0; j < ascend_kernels::kNumOperands; ++j) {
      if (b.strides[d][j] < 0) return false;
      batch.strides[d][j] = b.strides[d][j];
    }
  }
  std::string error;  // all slices' elements: out's element count, which phase one checked
  if (!ascend_kernels::ElementwiseTilingFor(batch.slice_num * batch.slice_len, p.dtype, p.ub_size,
                                            b.core_num, &tiling.tiling, &error)) {
    return false;
  }
  *launch = LaunchOf(p, p.grad, p.x, b.threshold, p.out, KernelOp::kThresholdGradV2D, tiling);
  return true;
}

// Every launch of the plan: the whole tensors, one for a device-threshold batch, or one per
// slice of a host-threshold batch. A device-threshold
// plan's launches are ThresholdGradV2D with the plan's tiling and their threshold element's
// device address; otherwise the threshold is read here, on the host.
std::vector<NpuLaunch> PlanLaunches(const ExecutorPlan& p) {
  std::vector<NpuLaunch> launches;
  if (!p.batch) {
    launches.push_back(
        LaunchOf(p, p.grad, p.x, p.device_threshold, p.out, *p.kernel, p.threshold_grad_tiling));
    return launches;
  }
  const ThresholdBatch& b = *p.batch;
  if (NpuLaunch whole; OneLaunch(p, &whole)) {
    launches.push_back(whole);
    return launches;
  }
  launches.reserve(static_cast<size_t>(b.count));
  for (int64_t k = 0; k < b.count; ++k) {
    const ThresholdBatch::Slice slice = b.At(k, p.grad, p.x, p.out);
    const char* element = slice.threshold;
    ascend_kernels::ThresholdGradV2DTilingData tiling = p.threshold_grad_tiling;
    KernelOp kernel = KernelOp::kThresholdGradV2D;
    if (!p.HasDeviceThreshold()) {
      aclScalar t;
      LoadScalar(element, b.threshold_dtype, &t);
      if (t.IsExactlyZero()) kernel = KernelOp::kReluGrad;
      if (kernel == KernelOp::kThresholdGradV2D) {
        tiling.threshold = MakeThresholdParams(t, p.dtype);
      }
      element = nullptr;
    }
    launches.push_back(LaunchOf(p, slice.grad, slice.x, element, slice.out, kernel, tiling));
  }
  return launches;
}

aclnnStatus AclFailure(const char* function, aclError rc, ExecutorPlan* plan) {
  plan->run_status.store(ACLNN_ERR_RUNTIME_ERROR);
  return Fail(ACLNN_ERR_RUNTIME_ERROR,
              std::string(function) + " failed with ACL error " + std::to_string(rc));
}

aclError Submit(const NpuLaunch& l, aclrtStream stream) {
  if (l.kernel == KernelOp::kReluGrad) {
    return ascend_kernels::LaunchReluGradOnNpu(
        static_cast<uint32_t>(l.relu_grad_tiling.tiling.block_dim), stream, l.grad, l.x, l.out,
        /*workspace=*/nullptr, l.relu_grad_tiling);
  }
  return ascend_kernels::LaunchThresholdGradV2DOnNpu(
      static_cast<uint32_t>(l.threshold_grad_tiling.tiling.block_dim), stream, l.grad, l.x,
      l.threshold, l.out, /*workspace=*/nullptr, l.threshold_grad_tiling);
}

// The kernel entry's name, as ascendc_library() names its launcher (aclrtlaunch_<entry>), and
// the dtype it runs.
std::string EntryName(KernelOp kernel, aclDataType dtype) {
  return std::string(kernel == KernelOp::kReluGrad ? "relu_grad" : "threshold_grad_v2_d") + " (" +
         DtypeName(dtype) + ")";
}

// A launch that did not run must not pass for one: a generated launcher whose kernel handle is
// null (e.g. registered for another SoC) prints an error and returns 0. So each kernel entry is
// run once per device and dtype, at its first use there, on one element of zeros (whose result is 0
// for both kernels at threshold 0) over an output holding a sentinel, and waited for: it must have
// overwritten the sentinel. This is the only synchronisation and device allocation of the path.
class FirstUseCheck {
 public:
  static FirstUseCheck& Get() {
    static FirstUseCheck* check = new FirstUseCheck;  // never destroyed: used until exit
    return *check;
  }

  aclnnStatus Ensure(const ExecutorPlan& p, KernelOp kernel, aclrtStream stream, int32_t device) {
    const auto key = std::make_tuple(device, static_cast<int>(kernel), static_cast<int>(p.dtype));
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (checked_.count(key) != 0) return ACLNN_SUCCESS;
    }
    const std::string entry = EntryName(kernel, p.dtype);
    std::string error = Run(p, kernel, stream);
    if (!error.empty()) {
      return Fail(ACLNN_ERR_RUNTIME_ERROR,
                  "kernel " + entry + " on device " + std::to_string(device) + ": " + error);
    }
    std::lock_guard<std::mutex> lock(mu_);
    checked_.insert(key);
    return ACLNN_SUCCESS;
  }

 private:
  static std::string AclFailed(const char* what, aclError rc) {
    return std::string(what) + " failed with ACL error " + std::to_string(rc);
  }

  // The check's launch; an empty string when the kernel ran.
  static std::string Run(const ExecutorPlan& p, KernelOp kernel, aclrtStream stream) {
    constexpr size_t kBlock = 32;  // one 32-byte block per tensor: grad, x, out
    constexpr unsigned char kSentinel = 0xA5;
    NpuLaunch l{kernel, nullptr, nullptr, nullptr, nullptr, {}, {}};
    l.threshold_grad_tiling.dtype = l.relu_grad_tiling.dtype = p.dtype;
    std::string tiling_error;
    const bool tiled = ascend_kernels::ElementwiseTilingFor(1, p.dtype, p.ub_size, 1,
                                                            kernel == KernelOp::kReluGrad
                                                                ? &l.relu_grad_tiling.tiling
                                                                : &l.threshold_grad_tiling.tiling,
                                                            &tiling_error);
    if (!tiled) return "no one-element tiling: " + tiling_error;
    void* device = nullptr;
    if (aclError rc = aclrtMalloc(&device, 3 * kBlock, ACL_MEM_MALLOC_HUGE_FIRST);
        rc != ACL_SUCCESS || device == nullptr) {
      return AclFailed("aclrtMalloc", rc);
    }
    std::array<unsigned char, 3 * kBlock> host{};
    std::memset(host.data() + 2 * kBlock, kSentinel, kBlock);
    char* base = static_cast<char*>(device);
    l.grad = base;
    l.x = base + kBlock;
    l.out = base + 2 * kBlock;
    std::string error;
    aclError rc =
        aclrtMemcpy(device, host.size(), host.data(), host.size(), ACL_MEMCPY_HOST_TO_DEVICE);
    if (rc != ACL_SUCCESS) error = AclFailed("aclrtMemcpy", rc);
    if (error.empty() && (rc = Submit(l, stream)) != ACL_SUCCESS) {
      error = AclFailed("its launch", rc);
    }
    if (error.empty() && (rc = aclrtSynchronizeStream(stream)) != ACL_SUCCESS) {
      error = AclFailed("aclrtSynchronizeStream", rc);
    }
    if (error.empty() && (rc = aclrtMemcpy(host.data(), kBlock, l.out, kBlock,
                                           ACL_MEMCPY_DEVICE_TO_HOST)) != ACL_SUCCESS) {
      error = AclFailed("aclrtMemcpy", rc);
    }
    if (error.empty() && host[0] == kSentinel) {
      error =
          "its launch reported success but the kernel did not run (is its handle registered "
          "for this device's SoC?)";
    }
    aclrtFree(device);
    return error;
  }

  std::mutex mu_;
  std::set<std::tuple<int32_t, int, int>> checked_;  // (device, kernel, dtype)
};

}  // namespace

aclnnStatus aclnnThresholdBackwardOnNpu(void* workspace, uint64_t workspace_size,
                                        aclOpExecutor* executor, aclrtStream stream,
                                        int32_t device) {
  if (const std::shared_ptr<ExecutorPlan> p = LivePlan(executor);
      p != nullptr && (p->grad_copy || p->x_copy || p->out_copy || p->workspace_size > 0)) {
    return Fail(ACLNN_ERR_PARAM_INVALID,
                "on the NPU, grad_output and x must have out's shape and be contiguous "
                "(broadcast them in JAX first): the executor's copies are host code");
  }
  char* base = nullptr;                // no workspace is planned for the NPU (refused above)
  std::shared_ptr<ExecutorPlan> plan;  // the run reads the plan from here, never via `executor`
  if (aclnnStatus status = StartRun(workspace, workspace_size, executor, &plan, &base);
      status != ACLNN_SUCCESS) {
    return status;
  }
  ExecutorPlan* p = plan.get();
  struct EndOnReturn {  // the launches are submitted (or failed) by then: rebinding may follow
    ExecutorPlan* plan;
    ~EndOnReturn() { EndRun(plan); }
  } end_on_return{p};
  if (!p->kernel) return ACLNN_SUCCESS;

  const std::vector<NpuLaunch> launches = PlanLaunches(*p);
  bool checked[2] = {false, false};  // ThresholdGradV2D, ReluGrad
  for (const NpuLaunch& l : launches) {
    bool& done = checked[l.kernel == KernelOp::kReluGrad ? 1 : 0];
    if (done) continue;
    if (aclnnStatus status = FirstUseCheck::Get().Ensure(*p, l.kernel, stream, device);
        status != ACLNN_SUCCESS) {
      p->run_status.store(status);
      return status;
    }
    done = true;
  }
  for (const NpuLaunch& l : launches) {
    if (aclError rc = Submit(l, stream); rc != ACL_SUCCESS) {
      return AclFailure(ascend_kernels::KernelOpName(l.kernel), rc, p);
    }
  }
  return ACLNN_SUCCESS;
}

}  // namespace jax_threshold::aclnn
