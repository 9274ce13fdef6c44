// host_launch.h on the CPU: pick the kernel's per-dtype entry point and wrap it so that
// run_block(i) runs block i on the calling thread, as AI core i with its own UB.
#include "ascend_kernels/host_launch.h"

#include <utility>
#include <vector>

#include "cpu_ascendc/core_state.h"
#include "cpu_ascendc/soc_rules.h"
#include "relu_grad/op_kernel/relu_grad.h"
#include "threshold_grad_v2_d/op_kernel/threshold_grad_v2_d.h"

namespace ascend_kernels {

namespace {

static_assert(static_cast<int>(KernelSoc::kAscend910) ==
                      static_cast<int>(cpu_ascendc::Soc::kAscend910) &&
                  static_cast<int>(KernelSoc::kAscend910B) ==
                      static_cast<int>(cpu_ascendc::Soc::kAscend910B) &&
                  static_cast<int>(KernelSoc::kAscend950) ==
                      static_cast<int>(cpu_ascendc::Soc::kAscend950) &&
                  static_cast<int>(KernelSoc::kHost) == static_cast<int>(cpu_ascendc::Soc::kHost),
              "KernelSoc and cpu_ascendc::Soc agree");

using ReluGradEntryPoint = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*, ReluGradTilingData);
// ThresholdGradV2D's: (grad, feature, threshold, out, workspace, tiling).
using ThresholdGradEntryPoint = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*,
                                         ThresholdGradV2DTilingData);

template <typename Entry>
struct EntryInfo {
  Entry entry;
  const char* name;
};

EntryInfo<ThresholdGradEntryPoint> ThresholdGradV2DEntry(KernelDType dtype) {
  switch (dtype) {
    case KernelDType::kFloat32:
      return {threshold_grad_v2_d_float32, "threshold_grad_v2_d_float32"};
    case KernelDType::kFloat16:
      return {threshold_grad_v2_d_float16, "threshold_grad_v2_d_float16"};
    case KernelDType::kBFloat16:
      return {threshold_grad_v2_d_bfloat16, "threshold_grad_v2_d_bfloat16"};
    case KernelDType::kInt32:
      return {threshold_grad_v2_d_int32, "threshold_grad_v2_d_int32"};
    case KernelDType::kInt8:
      return {threshold_grad_v2_d_int8, "threshold_grad_v2_d_int8"};
    case KernelDType::kUInt8:
      return {threshold_grad_v2_d_uint8, "threshold_grad_v2_d_uint8"};
    case KernelDType::kInt64:
      return {threshold_grad_v2_d_int64, "threshold_grad_v2_d_int64"};
    case KernelDType::kFloat64:
      return {threshold_grad_v2_d_float64, "threshold_grad_v2_d_float64"};
  }
  return {nullptr, ""};
}

EntryInfo<ReluGradEntryPoint> ReluGradEntry(KernelDType dtype) {
  switch (dtype) {
    case KernelDType::kFloat32:
      return {relu_grad_float32, "relu_grad_float32"};
    case KernelDType::kFloat16:
      return {relu_grad_float16, "relu_grad_float16"};
    case KernelDType::kBFloat16:
      return {relu_grad_bfloat16, "relu_grad_bfloat16"};
    case KernelDType::kInt32:
      return {relu_grad_int32, "relu_grad_int32"};
    case KernelDType::kInt8:
      return {relu_grad_int8, "relu_grad_int8"};
    case KernelDType::kUInt8:
      return {relu_grad_uint8, "relu_grad_uint8"};
    case KernelDType::kInt64:
      return {relu_grad_int64, "relu_grad_int64"};
    case KernelDType::kFloat64:
      return {relu_grad_float64, "relu_grad_float64"};
  }
  return {nullptr, ""};
}

uint8_t* Gm(const void* p) { return const_cast<uint8_t*>(static_cast<const uint8_t*>(p)); }

// An unknown dtype gives an empty launch (block_dim 0, no run_block): the caller validates.
// `call(entry)` runs the entry point with the launch's arguments; `regions` are the GM tensors
// of the launch besides grad, feature and out (GlobalTensor views must stay inside them).
template <typename Entry, typename TilingData, typename Call>
HostLaunch MakeLaunch(const EntryInfo<Entry>& info, KernelDType dtype, const void* grad,
                      const void* feature, void* out, const TilingData* tiling, uint64_t ub_size,
                      KernelSoc soc, std::vector<cpu_ascendc::GmRegion> regions, Call call) {
  HostLaunch launch;
  if (info.entry == nullptr || tiling == nullptr) {
    return launch;
  }
  launch.kernel_name = info.name;
  launch.block_dim = static_cast<uint32_t>(tiling->tiling.block_dim);
  const uint64_t elem_bytes = FactsOfDType(static_cast<int32_t>(dtype)).bytes;
  regions.reserve(regions.size() + 3);
  regions.push_back(
      {static_cast<const uint8_t*>(grad), LaunchSpan(*tiling, kOperandGrad) * elem_bytes});
  regions.push_back(
      {static_cast<const uint8_t*>(feature), LaunchSpan(*tiling, kOperandX) * elem_bytes});
  regions.push_back(
      {static_cast<const uint8_t*>(out), LaunchSpan(*tiling, kOperandOut) * elem_bytes});
  const uint32_t block_dim = launch.block_dim;
  const Entry entry = info.entry;
  const auto rules_soc = static_cast<cpu_ascendc::Soc>(soc);  // same values
  launch.run_block = [=, regions = std::move(regions)](uint32_t block_idx) {
    cpu_ascendc::CoreScope core(block_idx, block_dim, ub_size, regions, rules_soc);
    call(entry);
  };
  return launch;
}

// Bytes of the GM threshold elements a ThresholdGradV2D tiling asks for (0: none).
uint64_t GmThresholdBytes(const ThresholdGradV2DTilingData& tiling) {
  return LaunchSpan(tiling, kOperandThreshold) * FactsOfDType(tiling.threshold.gm_dtype).bytes;
}

}  // namespace

HostLaunch MakeThresholdGradV2DLaunch(KernelDType dtype, const void* grad, const void* feature,
                                      const void* threshold, void* out, void* workspace,
                                      const ThresholdGradV2DTilingData* tiling, uint64_t ub_size,
                                      KernelSoc soc) {
  std::vector<cpu_ascendc::GmRegion> regions;
  regions.reserve(4);  // with grad, feature and out (MakeLaunch): one allocation
  if (tiling != nullptr && GmThresholdBytes(*tiling) > 0) {
    regions.push_back({static_cast<const uint8_t*>(threshold), GmThresholdBytes(*tiling)});
  }
  return MakeLaunch(ThresholdGradV2DEntry(dtype), dtype, grad, feature, out, tiling, ub_size, soc,
                    std::move(regions), [=](ThresholdGradEntryPoint entry) {
                      entry(Gm(grad), Gm(feature), Gm(threshold), static_cast<uint8_t*>(out),
                            static_cast<uint8_t*>(workspace), *tiling);
                    });
}

HostLaunch MakeReluGradLaunch(KernelDType dtype, const void* grad, const void* feature, void* out,
                              void* workspace, const ReluGradTilingData* tiling, uint64_t ub_size,
                              KernelSoc soc) {
  std::vector<cpu_ascendc::GmRegion> regions;
  regions.reserve(3);  // grad, feature and out (MakeLaunch): one allocation
  return MakeLaunch(ReluGradEntry(dtype), dtype, grad, feature, out, tiling, ub_size, soc,
                    std::move(regions), [=](ReluGradEntryPoint entry) {
                      entry(Gm(grad), Gm(feature), static_cast<uint8_t*>(out),
                            static_cast<uint8_t*>(workspace), *tiling);
                    });
}

}  // namespace ascend_kernels
