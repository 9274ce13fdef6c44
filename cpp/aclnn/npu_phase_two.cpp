#include "aclnn/npu_phase_two.h"

#include <array>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>

#include "aclnn/executor.h"
#include "common/op_host/elementwise_tiling.h"
#include "npu_launch.h"

namespace jax_threshold::aclnn {
namespace {

using ascend_kernels::KernelOp;

aclnnStatus AclFailure(const char* function, aclError rc, ExecutorPlan* plan) {
  plan->run_status.store(ACLNN_ERR_RUNTIME_ERROR);
  return Fail(ACLNN_ERR_RUNTIME_ERROR,
              std::string(function) + " failed with ACL error " + std::to_string(rc));
}

// One launch of `kernel` on `a`'s tensors, its tiling passed by value.
aclError Submit(KernelOp kernel, const ascend_kernels::ThresholdGradV2DTilingData& threshold_grad,
                const ascend_kernels::ReluGradTilingData& relu_grad, const LaunchArgs& a,
                aclrtStream stream) {
  void* grad = const_cast<char*>(a.grad);
  void* x = const_cast<char*>(a.x);
  if (kernel == KernelOp::kReluGrad) {
    return ascend_kernels::LaunchReluGradOnNpu(static_cast<uint32_t>(relu_grad.tiling.block_dim),
                                               stream, grad, x, a.out, /*workspace=*/nullptr,
                                               relu_grad);
  }
  return ascend_kernels::LaunchThresholdGradV2DOnNpu(
      static_cast<uint32_t>(threshold_grad.tiling.block_dim), stream, grad, x,
      const_cast<char*>(a.threshold), a.out, /*workspace=*/nullptr, threshold_grad);
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
    ascend_kernels::ThresholdGradV2DTilingData threshold_grad{};
    ascend_kernels::ReluGradTilingData relu_grad{};
    threshold_grad.dtype = relu_grad.dtype = p.dtype;
    std::string tiling_error;
    const bool tiled = ascend_kernels::ElementwiseTilingFor(
        1, p.dtype, p.ub_size, 1,
        kernel == KernelOp::kReluGrad ? &relu_grad.tiling : &threshold_grad.tiling, &tiling_error);
    if (!tiled) return "no one-element tiling: " + tiling_error;
    void* device = nullptr;
    if (aclError rc = aclrtMalloc(&device, 3 * kBlock, ACL_MEM_MALLOC_HUGE_FIRST);
        rc != ACL_SUCCESS || device == nullptr) {
      return AclFailed("aclrtMalloc", rc);
    }
    std::array<unsigned char, 3 * kBlock> host{};
    std::memset(host.data() + 2 * kBlock, kSentinel, kBlock);
    char* base = static_cast<char*>(device);
    const LaunchArgs l{base, base + kBlock, nullptr, base + 2 * kBlock};
    std::string error;
    aclError rc =
        aclrtMemcpy(device, host.size(), host.data(), host.size(), ACL_MEMCPY_HOST_TO_DEVICE);
    if (rc != ACL_SUCCESS) error = AclFailed("aclrtMemcpy", rc);
    if (error.empty() &&
        (rc = Submit(kernel, threshold_grad, relu_grad, l, stream)) != ACL_SUCCESS) {
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
      p != nullptr && (p->grad_copy || p->x_copy || p->out_copy)) {
    return Fail(ACLNN_ERR_PARAM_INVALID,
                "on the NPU, grad_output, x and out must be contiguous and aligned: the "
                "executor's copies are host code");
  }
  char* base = nullptr;                // no workspace is planned without copies
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
  if (aclnnStatus status = FirstUseCheck::Get().Ensure(*p, *p->kernel, stream, device);
      status != ACLNN_SUCCESS) {
    p->run_status.store(status);
    return status;
  }
  for (int64_t k = 0; k < p->slices.count; ++k) {
    const LaunchArgs args = LaunchAt(*p, k, p->grad, p->x, p->out);
    if (aclError rc =
            Submit(*p->kernel, p->threshold_grad_tiling, p->relu_grad_tiling, args, stream);
        rc != ACL_SUCCESS) {
      return AclFailure(ascend_kernels::KernelOpName(*p->kernel), rc, p);
    }
  }
  return ACLNN_SUCCESS;
}

}  // namespace jax_threshold::aclnn
