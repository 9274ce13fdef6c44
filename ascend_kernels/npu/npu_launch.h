// Launches ThresholdGradV2D / ReluGrad on an Ascend NPU stream (NPU build only).
//
// Pointers are device memory; the tiling struct (kernel_args.h) goes by value into the launch's
// arguments, so nothing of it needs to outlive the call. ThresholdGradV2D's `threshold` is the
// threshold element the kernel reads at Init when its tiling says ThresholdSource::kDevice (else
// unused, may be null). int64 ReluGrad exists in Ascend950 builds only and float64 has no NPU
// kernel: otherwise both return ACL_ERROR_INVALID_PARAM here. The bfloat16 entries of a build
// without a bfloat16 Cast are empty (common/soc_features.h); phase one never plans bfloat16 for
// such a SoC.
#pragma once

#include <cstdint>

#include "acl/acl.h"
#include "ascend_kernels/kernel_args.h"

namespace ascend_kernels {

aclError LaunchThresholdGradV2DOnNpu(KernelDType dtype, uint32_t block_dim, aclrtStream stream,
                                     void* grad, void* feature, void* threshold, void* out,
                                     void* workspace, const ThresholdGradV2DTilingData& tiling);

aclError LaunchReluGradOnNpu(KernelDType dtype, uint32_t block_dim, aclrtStream stream, void* grad,
                             void* feature, void* out, void* workspace,
                             const ReluGradTilingData& tiling);

}  // namespace ascend_kernels
