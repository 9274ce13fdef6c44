// Thin launcher over the aclrtlaunch_<entry>.h wrappers that ascendc_library() generates, one per
// kernel entry (relu_grad_<name>, threshold_grad_v2_d_<name> for every row of the dtype table).
#include "npu_launch.h"

// The generated headers take the tiling structs by pointer without declaring them (asc-devkit's
// generate_header_code): kernel_args.h, which defines them at global scope, comes first.
#include "ascend_kernels/kernel_args.h"

#include "aclrtlaunch_entries.h"  // every aclrtlaunch_<entry>.h (npu/CMakeLists.txt writes it)

namespace ascend_kernels {

// The generated launcher takes the tiling struct by host pointer and copies it into the launch's
// arguments before returning (extract_host_stub.py), hence the non-const pointer to a copy here.
// A dtype whose kernel the build's SoC (JAX_THRESHOLD_NPU_SOC) does not run has an entry with an
// empty body (select_kernel.h): it is refused, never launched.

aclError LaunchThresholdGradV2DOnNpu(KernelDType dtype, uint32_t block_dim, aclrtStream stream,
                                     void* grad, void* feature, void* threshold, void* out,
                                     void* workspace, const ThresholdGradV2DTilingData& tiling) {
  if (!SocRunsKernel(JAX_THRESHOLD_NPU_SOC, KernelOp::kThresholdGradV2D,
                     static_cast<int32_t>(dtype))) {
    return ACL_ERROR_INVALID_PARAM;
  }
  ThresholdGradV2DTilingData tiling_copy = tiling;
  switch (dtype) {
#define JT_LAUNCH_CASE(Name, name, ...)                                           \
  case KernelDType::k##Name:                                                      \
    return static_cast<aclError>(ACLRT_LAUNCH_KERNEL(threshold_grad_v2_d_##name)( \
        block_dim, stream, grad, feature, threshold, out, workspace, &tiling_copy));
    ASCEND_KERNELS_KERNEL_DTYPES(JT_LAUNCH_CASE)
#undef JT_LAUNCH_CASE
  }
  return ACL_ERROR_INVALID_PARAM;
}

aclError LaunchReluGradOnNpu(KernelDType dtype, uint32_t block_dim, aclrtStream stream, void* grad,
                             void* feature, void* out, void* workspace,
                             const ReluGradTilingData& tiling) {
  if (!SocRunsKernel(JAX_THRESHOLD_NPU_SOC, KernelOp::kReluGrad, static_cast<int32_t>(dtype))) {
    return ACL_ERROR_INVALID_PARAM;
  }
  ReluGradTilingData tiling_copy = tiling;
  switch (dtype) {
#define JT_LAUNCH_CASE(Name, name, ...)                                 \
  case KernelDType::k##Name:                                            \
    return static_cast<aclError>(ACLRT_LAUNCH_KERNEL(relu_grad_##name)( \
        block_dim, stream, grad, feature, out, workspace, &tiling_copy));
    ASCEND_KERNELS_KERNEL_DTYPES(JT_LAUNCH_CASE)
#undef JT_LAUNCH_CASE
  }
  return ACL_ERROR_INVALID_PARAM;
}

}  // namespace ascend_kernels
