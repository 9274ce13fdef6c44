// host_launch.h on the CPU: each operator's one entry, run as block i of the launch on the
// calling thread, as AI core i of the SoC's arch with its own UB.
#include "ascend_kernels/host_launch.h"

#include <initializer_list>

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

// Runs `entry` as block `block_idx` of launch `l`, its GlobalTensor views bounded to `regions`.
template <typename Entry>
void RunAsCore(const HostLaunch& l, uint32_t block_idx,
               std::initializer_list<cpu_ascendc::GmRegion> regions, Entry entry) {
  cpu_ascendc::CoreScope core(block_idx, l.block_dim, l.ub_size, regions, SocRowOf(l.soc).arch);
  entry();
}

}  // namespace

// The GM tensors are what the tiling spans of each operand from its base.
void HostLaunch::RunBlock(uint32_t block_idx) const {
  const auto region = [](const void* base, uint64_t elements, int32_t dtype) {
    return cpu_ascendc::GmRegion{static_cast<const uint8_t*>(base), elements * DtypeSize(dtype)};
  };
  if (op == KernelOp::kReluGrad) {
    const auto& t = *static_cast<const ReluGradTilingData*>(tiling);
    RunAsCore(*this, block_idx,
              {region(grad, LaunchSpan(t, kOperandGrad), t.dtype),
               region(feature, LaunchSpan(t, kOperandX), t.dtype),
               region(out, LaunchSpan(t, kOperandOut), t.dtype)},
              [&] { relu_grad(Gm(grad), Gm(feature), Gm(out), Gm(workspace), t); });
    return;
  }
  const auto& t = *static_cast<const ThresholdGradV2DTilingData*>(tiling);
  const auto run = [&] {
    threshold_grad_v2_d(Gm(grad), Gm(feature), Gm(threshold), Gm(out), Gm(workspace), t);
  };
  const cpu_ascendc::GmRegion g = region(grad, LaunchSpan(t, kOperandGrad), t.dtype);
  const cpu_ascendc::GmRegion f = region(feature, LaunchSpan(t, kOperandX), t.dtype);
  const cpu_ascendc::GmRegion o = region(out, LaunchSpan(t, kOperandOut), t.dtype);
  const uint64_t threshold_elements = LaunchSpan(t, kOperandThreshold);  // 0: not read from GM
  if (threshold_elements == 0) return RunAsCore(*this, block_idx, {g, f, o}, run);
  RunAsCore(*this, block_idx,
            {g, f, o, region(threshold, threshold_elements, t.threshold.gm_dtype)}, run);
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
