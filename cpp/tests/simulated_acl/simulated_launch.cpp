// SIMULATION, test code only: the aclrtlaunch_<entry> launchers that CANN's ascendc_library()
// generates for the two kernel entries, in the generator's shape (asc-devkit
// cmake/asc/legacy_modules/util/extract_host_stub.py): `uint32_t aclrtlaunch_<entry>(uint32_t
// numBlocks, aclrtStream stream, <the entry's parameters>)`, the by-value tiling struct taken by
// host pointer and copied into the launch's arguments, returning the launch's error code; a
// kernel whose handle is null prints an error and returns 0; every call allocates and frees an
// 8-byte overflow-status buffer; a stream of another device than the thread's current one is
// refused (ACL_ERROR_RT_STREAM_CONTEXT). Instead of a device launch, each call queues the same
// kernel entry on the stream, to run on the CPU AscendC model (ascend_kernels/host_launch.h) under
// the device's SoC rules when the stream is synchronised, through the kernel views of its
// pointer arguments. The kernels are registered for the build's SoC (SOC_VERSION) only: on a
// device of another SoC their handle is null.
#include <cstdio>
#include <cstring>
#include <string>

#include "ascend_kernels/host_launch.h"
#include "ascend_kernels/kernel_args.h"
#include "simulated_acl.h"

namespace simulated_acl {
namespace {

using ascend_kernels::ReluGradTilingData;
using ascend_kernels::ThresholdGradV2DTilingData;

uint64_t ThresholdBytes(const ThresholdGradV2DTilingData& t) {
  return ascend_kernels::DtypeSize(t.threshold.gm_dtype);
}
uint64_t ThresholdBytes(const ReluGradTilingData&) { return 0; }

ascend_kernels::HostLaunch MakeLaunch(void* grad, void* feature, void* threshold, void* out,
                                      void* workspace, const ThresholdGradV2DTilingData* tiling,
                                      uint64_t ub, ascend_kernels::Soc soc) {
  return ascend_kernels::MakeThresholdGradV2DLaunch(grad, feature, threshold, out, workspace,
                                                    tiling, ub, soc);
}
ascend_kernels::HostLaunch MakeLaunch(void* grad, void* feature, void*, void* out, void* workspace,
                                      const ReluGradTilingData* tiling, uint64_t ub,
                                      ascend_kernels::Soc soc) {
  return ascend_kernels::MakeReluGradLaunch(grad, feature, out, workspace, tiling, ub, soc);
}

aclError RunError(const char* name, const std::string& what,
                  aclError code = ACL_ERROR_RT_AICORE_EXCEPTION) {
  SetRunError(std::string(name) + ": " + what);
  return code;
}

// One launch, run in stream order on `device`: every pointer argument the kernel will touch must
// lie in that device's live memory (a real device would fault or read another device's data).
// An injected `exception` stops the kernel after block 0.
template <typename Tiling>
aclError Run(const char* name, int device, uint32_t num_blocks, void* grad, void* feature,
             void* threshold, void* out, void* workspace, const Tiling& tiling,
             aclError exception) {
  std::string why;
  const uint64_t e = ascend_kernels::DtypeSize(tiling.dtype);
  const struct {
    const char* what;
    void* p;
    uint64_t bytes;
  } args[] = {
      {"grad", grad, ascend_kernels::LaunchSpan(tiling, ascend_kernels::kOperandGrad) * e},
      {"feature", feature, ascend_kernels::LaunchSpan(tiling, ascend_kernels::kOperandX) * e},
      {"out", out, ascend_kernels::LaunchSpan(tiling, ascend_kernels::kOperandOut) * e},
      {"threshold", threshold,
       ascend_kernels::LaunchSpan(tiling, ascend_kernels::kOperandThreshold) *
           ThresholdBytes(tiling)}};
  for (const auto& a : args) {
    if (a.bytes > 0 && !InDeviceMemory(device, a.p, a.bytes, &why)) {
      return RunError(name, std::string("the ") + a.what + " argument " + why);
    }
  }
  const ascend_kernels::SocRow* soc =
      ascend_kernels::SocOfDeviceName(Device(device).soc_name.c_str());
  if (soc == nullptr) return RunError(name, "no SoC row names device " + Device(device).soc_name);
  const ascend_kernels::HostLaunch launch =
      MakeLaunch(KernelView(grad), KernelView(feature), KernelView(threshold), KernelView(out),
                 KernelView(workspace), &tiling, soc->ub_bytes, soc->soc);
  if (launch.block_dim == 0) return RunError(name, "no kernel for this dtype");
  if (launch.block_dim != num_blocks) {
    return RunError(name, "launched on " + std::to_string(num_blocks) +
                              " blocks, its tiling splits for " + std::to_string(launch.block_dim));
  }
  RunHook();
  const uint32_t blocks = exception != ACL_SUCCESS ? 1 : num_blocks;
  for (uint32_t i = 0; i < blocks; ++i) launch.RunBlock(i);
  CountBlocks(blocks);
  if (exception != ACL_SUCCESS) return RunError(name, "injected exception", exception);
  return ACL_SUCCESS;
}

// Whether the kernels, built for SOC_VERSION's SoC, have a handle on `device`.
bool RegisteredOn(int device) {
  const ascend_kernels::SocRow* soc =
      ascend_kernels::SocOfDeviceName(Device(device).soc_name.c_str());
  return soc != nullptr && soc->soc == ascend_kernels::kBuildSoc;
}

template <typename Tiling>
uint32_t Launch(const char* name, uint32_t num_blocks, aclrtStream stream, void* grad,
                void* feature, void* threshold, void* out, void* workspace, const Tiling* tiling) {
  int device = -1;
  const aclError context = StreamContext(stream, &device);
  if (KernelIsDead(name) || (context == ACL_SUCCESS && !RegisteredOn(device))) {
    std::fprintf(stderr, "[ERROR] simulated: kernel %s has no handle\n", name);
    return 0;  // what the generated launcher returns
  }
  if (context != ACL_SUCCESS) return context;
  if (tiling == nullptr) return ACL_ERROR_INVALID_PARAM;
  if (aclError rc = TakeInjectedLaunchFailure(); rc != ACL_SUCCESS) return rc;
  const aclError exception = TakeInjectedException();
  const Tiling copy = *tiling;  // the launch's arguments hold the struct from here on
  void* overflow = nullptr;     // the generated launcher's per-call overflow-status buffer
  if (aclError rc = aclrtMalloc(&overflow, 8, ACL_MEM_MALLOC_HUGE_FIRST); rc != ACL_SUCCESS) {
    return rc;
  }
  CountLaunch();
  const aclError rc = Enqueue(stream, [=] {
    return Run<Tiling>(name, device, num_blocks, grad, feature, threshold, out, workspace, copy,
                       exception);
  });
  aclrtFree(overflow);
  return rc;
}

}  // namespace
}  // namespace simulated_acl

extern "C" uint32_t aclrtlaunch_relu_grad(uint32_t numBlocks, aclrtStream stream, void* grad,
                                          void* feature, void* out, void* workspace,
                                          ReluGradTilingData* tiling) {
  return simulated_acl::Launch("relu_grad", numBlocks, stream, grad, feature, nullptr, out,
                               workspace, tiling);
}

extern "C" uint32_t aclrtlaunch_threshold_grad_v2_d(uint32_t numBlocks, aclrtStream stream,
                                                    void* grad, void* feature, void* threshold,
                                                    void* out, void* workspace,
                                                    ThresholdGradV2DTilingData* tiling) {
  return simulated_acl::Launch("threshold_grad_v2_d", numBlocks, stream, grad, feature, threshold,
                               out, workspace, tiling);
}
