// host_launch.h on the CPU: each operator's one entry, run as block i of the launch on the
// calling thread, as AI core i of the SoC's arch with its own UB.
#include "ascend_kernels/host_launch.h"

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

template <typename TilingData>
HostLaunch MakeLaunch(KernelOp op, const void* grad, const void* feature, const void* threshold,
                      void* out, void* workspace, const TilingData* tiling, uint64_t ub_size,
                      Soc soc) {
  HostLaunch launch{0, op, grad, feature, threshold, out, workspace, tiling, ub_size, soc};
  if (tiling != nullptr && HasKernel(tiling->dtype) && HasSocRow(soc)) {
    launch.block_dim = static_cast<uint32_t>(tiling->tiling.block_dim);
  }
  return launch;
}

int32_t ThresholdDtype(const ThresholdGradV2DTilingData& t) { return t.threshold.gm_dtype; }
int32_t ThresholdDtype(const ReluGradTilingData&) { return 0; }  // no threshold to read

// The GM tensors of a launch, which GlobalTensor views must stay inside: what the tiling spans
// of each operand from its base.
template <typename TilingData>
void Regions(const HostLaunch& l, const TilingData& t, std::vector<cpu_ascendc::GmRegion>* out) {
  const void* bases[kNumOperands] = {l.grad, l.feature, l.threshold, l.out};
  out->clear();
  for (int j = 0; j < kNumOperands; ++j) {
    const uint64_t bytes =
        LaunchSpan(t, j) * DtypeSize(j == kOperandThreshold ? ThresholdDtype(t) : t.dtype);
    if (bytes > 0) out->push_back({static_cast<const uint8_t*>(bases[j]), bytes});
  }
}

}  // namespace

void HostLaunch::RunBlock(uint32_t block_idx) const {
  thread_local std::vector<cpu_ascendc::GmRegion> regions;  // grown once per thread
  const uint32_t arch = SocRowOf(soc).arch;
  if (op == KernelOp::kReluGrad) {
    const auto& t = *static_cast<const ReluGradTilingData*>(tiling);
    Regions(*this, t, &regions);
    cpu_ascendc::CoreScope core(block_idx, block_dim, ub_size, regions, arch);
    relu_grad(Gm(grad), Gm(feature), Gm(out), Gm(workspace), t);
  } else {
    const auto& t = *static_cast<const ThresholdGradV2DTilingData*>(tiling);
    Regions(*this, t, &regions);
    cpu_ascendc::CoreScope core(block_idx, block_dim, ub_size, regions, arch);
    threshold_grad_v2_d(Gm(grad), Gm(feature), Gm(threshold), Gm(out), Gm(workspace), t);
  }
}

HostLaunch MakeThresholdGradV2DLaunch(const void* grad, const void* feature, const void* threshold,
                                      void* out, void* workspace,
                                      const ThresholdGradV2DTilingData* tiling, uint64_t ub_size,
                                      Soc soc) {
  return MakeLaunch(KernelOp::kThresholdGradV2D, grad, feature, threshold, out, workspace, tiling,
                    ub_size, soc);
}

HostLaunch MakeReluGradLaunch(const void* grad, const void* feature, void* out, void* workspace,
                              const ReluGradTilingData* tiling, uint64_t ub_size, Soc soc) {
  return MakeLaunch(KernelOp::kReluGrad, grad, feature, nullptr, out, workspace, tiling, ub_size,
                    soc);
}

}  // namespace ascend_kernels
