#include "aclnn/npu_phase_two.h"

#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "aclnn/executor.h"
#include "aclnn/threshold_params.h"
#include "npu_launch.h"

namespace jax_threshold::aclnn {
namespace {

constexpr uint64_t kTilingSlot = 128;  // bytes per tiling struct on the device, aligned
static_assert(sizeof(ascend_kernels::ThresholdGradV2DTilingData) <= kTilingSlot &&
                  sizeof(ascend_kernels::ReluGradTilingData) <= kTilingSlot,
              "tiling structs fit their slot");

// One kernel launch: the slice's pointers and its tiling bytes.
struct NpuLaunch {
  KernelKind kernel;
  void* grad;
  void* x;
  void* threshold;  // ThresholdGradV2D's GM threshold element (device-threshold plans), or null
  void* out;
  std::string tiling;  // kTilingSlot bytes
};

// Immutable device copies of tilings, for the life of the process (launches in flight on any
// stream may read them at any time, so none is ever freed or rewritten).
class TilingCache {
 public:
  static TilingCache& Get() {
    static TilingCache* cache = new TilingCache;  // never destroyed: the device may outlive it
    return *cache;
  }
  // The device copy of `tiling`, uploaded on first use; null when the cache is full.
  void* Find(const std::string& tiling, aclError* rc) {
    std::lock_guard<std::mutex> lock(mu_);
    *rc = ACL_SUCCESS;
    if (auto it = buffers_.find(tiling); it != buffers_.end()) return it->second;
    if (buffers_.size() >= kMaxNpuTilings) return nullptr;
    void* device = nullptr;
    *rc = aclrtMalloc(&device, kTilingSlot, ACL_MEM_MALLOC_HUGE_FIRST);
    if (*rc != ACL_SUCCESS || device == nullptr) return nullptr;
    *rc = aclrtMemcpy(device, kTilingSlot, tiling.data(), kTilingSlot, ACL_MEMCPY_HOST_TO_DEVICE);
    if (*rc != ACL_SUCCESS) {
      aclrtFree(device);
      return nullptr;
    }
    buffers_.emplace(tiling, device);
    return device;
  }

 private:
  std::mutex mu_;
  std::unordered_map<std::string, void*> buffers_;
};

template <typename T>
std::string TilingBytes(const T& tiling) {
  std::string bytes(kTilingSlot, '\0');
  std::memcpy(&bytes[0], &tiling, sizeof(tiling));
  return bytes;
}

NpuLaunch LaunchOf(const ExecutorPlan& p, const char* grad, const char* x, const char* threshold,
                   char* out, KernelKind kernel,
                   const ascend_kernels::ThresholdGradV2DTilingData& tgv2d) {
  return {kernel,
          const_cast<char*>(grad),
          const_cast<char*>(x),
          const_cast<char*>(threshold),
          out,
          kernel == KernelKind::kReluGrad ? TilingBytes(p.relu_grad_tiling) : TilingBytes(tgv2d)};
}

// Every launch of the plan: the whole tensors, or one per slice of a batch. A device-threshold
// plan's launches are ThresholdGradV2D with the plan's tiling (one cached buffer for all) and
// their threshold element's device address; otherwise the threshold is read here, on the host.
std::vector<NpuLaunch> PlanLaunches(const ExecutorPlan& p) {
  std::vector<NpuLaunch> launches;
  if (!p.batch) {
    launches.push_back(
        LaunchOf(p, p.grad, p.x, p.threshold_gm, p.out, p.kernel, p.threshold_grad_tiling));
    return launches;
  }
  const ThresholdBatch& b = *p.batch;
  launches.reserve(static_cast<size_t>(b.count));
  for (int64_t k = 0; k < b.count; ++k) {
    const std::array<int64_t, 4> off = b.Offsets(k);
    const auto at = [&b](int64_t elements) {
      return elements * static_cast<int64_t>(b.element_bytes);
    };
    const char* element =
        b.threshold + off[ThresholdBatch::kThreshold] * static_cast<int64_t>(b.threshold_bytes);
    ascend_kernels::ThresholdGradV2DTilingData tiling = p.threshold_grad_tiling;
    KernelKind kernel = KernelKind::kThresholdGradV2D;
    if (!p.ReadsThresholdOnDevice()) {
      aclScalar t;
      LoadScalar(element, b.threshold_dtype, &t);
      if (t.IsExactlyZero()) kernel = KernelKind::kReluGrad;
      if (kernel == KernelKind::kThresholdGradV2D) {
        tiling.threshold = MakeThresholdParams(t, p.dtype);
      }
      element = nullptr;
    }
    launches.push_back(LaunchOf(p, p.grad + at(off[ThresholdBatch::kGrad]),
                                p.x + at(off[ThresholdBatch::kX]), element,
                                p.out + at(off[ThresholdBatch::kOut]), kernel, tiling));
  }
  return launches;
}

aclnnStatus AclFailure(const char* function, aclError rc, ExecutorPlan* plan) {
  plan->run_status.store(ACLNN_ERR_RUNTIME_ERROR);
  return Fail(ACLNN_ERR_RUNTIME_ERROR,
              std::string(function) + " failed with ACL error " + std::to_string(rc));
}

aclError Submit(const ExecutorPlan& p, const NpuLaunch& l, aclrtStream stream, void* tiling) {
  const uint32_t block_dim = static_cast<uint32_t>(l.kernel == KernelKind::kReluGrad
                                                       ? p.relu_grad_tiling.tiling.block_dim
                                                       : p.threshold_grad_tiling.tiling.block_dim);
  return l.kernel == KernelKind::kReluGrad
             ? ascend_kernels::LaunchReluGradOnNpu(p.dtype, block_dim, stream, l.grad, l.x, l.out,
                                                   /*workspace=*/nullptr, tiling)
             : ascend_kernels::LaunchThresholdGradV2DOnNpu(p.dtype, block_dim, stream, l.grad, l.x,
                                                           l.threshold, l.out,
                                                           /*workspace=*/nullptr, tiling);
}

}  // namespace

aclnnStatus aclnnThresholdBackwardOnNpu(void* workspace, uint64_t workspace_size,
                                        aclOpExecutor* executor, aclrtStream stream) {
  ExecutorPlan* p = IsLiveExecutor(executor) ? executor->plan.get() : nullptr;
  if (p != nullptr && (p->grad_copy || p->x_copy || p->out_copy || p->workspace_size > 0)) {
    return Fail(ACLNN_ERR_PARAM_INVALID,
                "on the NPU, grad_output and x must have out's shape and be contiguous "
                "(broadcast them in JAX first): the executor's copies are host code");
  }
  char* base = nullptr;  // no workspace is planned for the NPU (refused above)
  if (aclnnStatus status = StartRun(workspace, workspace_size, executor, &base);
      status != ACLNN_SUCCESS) {
    return status;
  }
  struct EndOnReturn {  // the launches are submitted (or failed) by then: rebinding may follow
    ExecutorPlan* plan;
    ~EndOnReturn() { EndRun(plan); }
  } end_on_return{p};
  if (p->kernel == KernelKind::kNone) return ACLNN_SUCCESS;

  const std::vector<NpuLaunch> launches = PlanLaunches(*p);
  // Launches whose tiling the cache holds are submitted at once; the rest share one buffer of
  // this call, freed after a synchronisation.
  std::vector<size_t> uncached;
  for (size_t i = 0; i < launches.size(); ++i) {
    aclError rc = ACL_SUCCESS;
    void* tiling = TilingCache::Get().Find(launches[i].tiling, &rc);
    if (rc != ACL_SUCCESS) return AclFailure("aclrtMalloc/aclrtMemcpy (tiling)", rc, p);
    if (tiling == nullptr) {
      uncached.push_back(i);
      continue;
    }
    if (aclError launch_rc = Submit(*p, launches[i], stream, tiling); launch_rc != ACL_SUCCESS) {
      return AclFailure(KernelKindName(launches[i].kernel), launch_rc, p);
    }
  }
  if (uncached.empty()) return ACLNN_SUCCESS;
  std::string host(uncached.size() * kTilingSlot, '\0');
  for (size_t j = 0; j < uncached.size(); ++j) {
    std::memcpy(&host[j * kTilingSlot], launches[uncached[j]].tiling.data(), kTilingSlot);
  }
  void* device = nullptr;
  if (aclError rc = aclrtMalloc(&device, host.size(), ACL_MEM_MALLOC_HUGE_FIRST);
      rc != ACL_SUCCESS || device == nullptr) {
    return AclFailure("aclrtMalloc", rc, p);
  }
  aclError rc =
      aclrtMemcpy(device, host.size(), host.data(), host.size(), ACL_MEMCPY_HOST_TO_DEVICE);
  for (size_t j = 0; j < uncached.size() && rc == ACL_SUCCESS; ++j) {
    rc = Submit(*p, launches[uncached[j]], stream, static_cast<char*>(device) + j * kTilingSlot);
  }
  const aclError sync_rc = aclrtSynchronizeStream(stream);
  aclrtFree(device);
  if (rc != ACL_SUCCESS) return AclFailure("launch of an uncached tiling", rc, p);
  if (sync_rc != ACL_SUCCESS) return AclFailure("aclrtSynchronizeStream", sync_rc, p);
  return ACLNN_SUCCESS;
}

}  // namespace jax_threshold::aclnn
