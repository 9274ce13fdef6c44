// host_launch.h on the CPU: each operator's one entry, wrapped so that run_block(i) runs block i
// on the calling thread, as AI core i of the SoC's arch with its own UB.
#include "ascend_kernels/host_launch.h"

#include <utility>
#include <vector>

#include "cpu_ascendc/core_state.h"

// The kernel entries (op_kernel/*.cpp), hidden like their definitions (cpu_ascendc's
// __global__): the library that links them does not export them.
#pragma GCC visibility push(hidden)
extern "C" {
void threshold_grad_v2_d(uint8_t* grad, uint8_t* feature, uint8_t* threshold, uint8_t* out,
                         uint8_t* workspace, ThresholdGradV2DTilingData tiling);
void relu_grad(uint8_t* grad, uint8_t* feature, uint8_t* out, uint8_t* workspace,
               ReluGradTilingData tiling);
}
#pragma GCC visibility pop

namespace ascend_kernels {
namespace {

uint8_t* Gm(const void* p) { return const_cast<uint8_t*>(static_cast<const uint8_t*>(p)); }

// `call()` runs the entry with the launch's arguments; `regions` are the GM tensors of the launch
// besides grad, feature and out (GlobalTensor views must stay inside them).
template <typename TilingData, typename Call>
HostLaunch MakeLaunch(const void* grad, const void* feature, void* out, const TilingData* tiling,
                      uint64_t ub_size, Soc soc, std::vector<cpu_ascendc::GmRegion> regions,
                      Call call) {
  HostLaunch launch;
  if (tiling == nullptr || !HasKernel(tiling->dtype) || !HasSocRow(soc)) return launch;
  launch.block_dim = static_cast<uint32_t>(tiling->tiling.block_dim);
  const uint64_t elem_bytes = DtypeSize(tiling->dtype);
  regions.reserve(regions.size() + 3);
  regions.push_back(
      {static_cast<const uint8_t*>(grad), LaunchSpan(*tiling, kOperandGrad) * elem_bytes});
  regions.push_back(
      {static_cast<const uint8_t*>(feature), LaunchSpan(*tiling, kOperandX) * elem_bytes});
  regions.push_back(
      {static_cast<const uint8_t*>(out), LaunchSpan(*tiling, kOperandOut) * elem_bytes});
  const uint32_t block_dim = launch.block_dim;
  const uint32_t arch = SocRowOf(soc).arch;
  launch.run_block = [=, regions = std::move(regions)](uint32_t block_idx) {
    cpu_ascendc::CoreScope core(block_idx, block_dim, ub_size, regions, arch);
    call();
  };
  return launch;
}

}  // namespace

HostLaunch MakeThresholdGradV2DLaunch(const void* grad, const void* feature, const void* threshold,
                                      void* out, void* workspace,
                                      const ThresholdGradV2DTilingData* tiling, uint64_t ub_size,
                                      Soc soc) {
  std::vector<cpu_ascendc::GmRegion> regions;
  regions.reserve(4);  // with grad, feature and out (MakeLaunch): one allocation
  const uint64_t threshold_bytes = tiling == nullptr ? 0
                                                     : LaunchSpan(*tiling, kOperandThreshold) *
                                                           DtypeSize(tiling->threshold.gm_dtype);
  if (threshold_bytes > 0)
    regions.push_back({static_cast<const uint8_t*>(threshold), threshold_bytes});
  return MakeLaunch(grad, feature, out, tiling, ub_size, soc, std::move(regions), [=] {
    threshold_grad_v2_d(Gm(grad), Gm(feature), Gm(threshold), static_cast<uint8_t*>(out),
                        static_cast<uint8_t*>(workspace), *tiling);
  });
}

HostLaunch MakeReluGradLaunch(const void* grad, const void* feature, void* out, void* workspace,
                              const ReluGradTilingData* tiling, uint64_t ub_size, Soc soc) {
  std::vector<cpu_ascendc::GmRegion> regions;
  regions.reserve(3);  // grad, feature and out (MakeLaunch): one allocation
  return MakeLaunch(grad, feature, out, tiling, ub_size, soc, std::move(regions), [=] {
    relu_grad(Gm(grad), Gm(feature), static_cast<uint8_t*>(out), static_cast<uint8_t*>(workspace),
              *tiling);
  });
}

}  // namespace ascend_kernels
