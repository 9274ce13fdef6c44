// Thin launcher over the two launch headers ascendc_library() generates, one per kernel entry.
#include "npu_launch.h"

// The generated headers take the tiling structs by pointer without declaring them (asc-devkit's
// generate_header_code): kernel_args.h, which defines them at global scope, comes first.
#include "ascend_kernels/kernel_args.h"

#include "aclrtlaunch_relu_grad.h"
#include "aclrtlaunch_threshold_grad_v2_d.h"
#include "ascend_kernels/dtype_soc_table.h"

namespace ascend_kernels {

// The generated launcher takes the tiling struct by host pointer and copies it into the launch's
// arguments before returning (extract_host_stub.py), hence the non-const pointer to a copy here.

aclError LaunchThresholdGradV2DOnNpu(uint32_t block_dim, aclrtStream stream, void* grad,
                                     void* feature, void* threshold, void* out, void* workspace,
                                     const ThresholdGradV2DTilingData& tiling) {
  if (!SocRunsKernel(kBuildSoc, KernelOp::kThresholdGradV2D, tiling.dtype)) {
    return ACL_ERROR_FEATURE_UNSUPPORTED;
  }
  ThresholdGradV2DTilingData tiling_copy = tiling;
  return static_cast<aclError>(ACLRT_LAUNCH_KERNEL(threshold_grad_v2_d)(
      block_dim, stream, grad, feature, threshold, out, workspace, &tiling_copy));
}

aclError LaunchReluGradOnNpu(uint32_t block_dim, aclrtStream stream, void* grad, void* feature,
                             void* out, void* workspace, const ReluGradTilingData& tiling) {
  if (!SocRunsKernel(kBuildSoc, KernelOp::kReluGrad, tiling.dtype)) {
    return ACL_ERROR_FEATURE_UNSUPPORTED;
  }
  ReluGradTilingData tiling_copy = tiling;
  return static_cast<aclError>(ACLRT_LAUNCH_KERNEL(relu_grad)(block_dim, stream, grad, feature, out,
                                                              workspace, &tiling_copy));
}

}  // namespace ascend_kernels
