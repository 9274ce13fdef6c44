// Launches ThresholdGradV2D / ReluGrad on an Ascend NPU stream (NPU build only).
//
// Pointers are device memory; the tiling struct (kernel_args.h), whose dtype picks the kernel's
// element type, goes by value into the launch's arguments, so nothing of it needs to outlive the
// call. ThresholdGradV2D's `threshold` is the threshold element the kernel reads at Init when its
// tiling says ThresholdSource::kDevice (else unused, may be null). A dtype the build's SoC
// (SOC_VERSION's row, dtype_soc_table.h) has no kernel for is refused with
// ACL_ERROR_FEATURE_UNSUPPORTED and never launched.
#pragma once

#include <cstdint>

#include "acl/acl.h"
#include "ascend_kernels/kernel_args.h"

namespace ascend_kernels {

aclError LaunchThresholdGradV2DOnNpu(uint32_t block_dim, aclrtStream stream, void* grad,
                                     void* feature, void* threshold, void* out, void* workspace,
                                     const ThresholdGradV2DTilingData& tiling);

aclError LaunchReluGradOnNpu(uint32_t block_dim, aclrtStream stream, void* grad, void* feature,
                             void* out, void* workspace, const ReluGradTilingData& tiling);

}  // namespace ascend_kernels
