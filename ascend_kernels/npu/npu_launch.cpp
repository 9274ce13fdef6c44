// Thin launcher over the aclrtlaunch_<entry>.h wrappers that ascendc_library() generates.
#include "npu_launch.h"

// The generated headers take the tiling structs by pointer without declaring them (asc-devkit's
// generate_header_code): kernel_args.h, which defines them at global scope, comes first.
#include "ascend_kernels/kernel_args.h"

#include "aclrtlaunch_relu_grad_bfloat16.h"
#include "aclrtlaunch_relu_grad_float16.h"
#include "aclrtlaunch_relu_grad_float32.h"
#include "aclrtlaunch_relu_grad_int32.h"
#include "aclrtlaunch_relu_grad_int8.h"
#include "aclrtlaunch_relu_grad_uint8.h"
#include "aclrtlaunch_threshold_grad_v2_d_bfloat16.h"
#include "aclrtlaunch_threshold_grad_v2_d_float16.h"
#include "aclrtlaunch_threshold_grad_v2_d_float32.h"
#include "aclrtlaunch_threshold_grad_v2_d_int32.h"
#include "aclrtlaunch_threshold_grad_v2_d_int8.h"
#include "aclrtlaunch_threshold_grad_v2_d_uint8.h"
#if defined(ASCEND_KERNELS_NPU_INT64)
#include "aclrtlaunch_relu_grad_int64.h"  // Ascend950 builds only (common/soc_features.h)
#endif

namespace ascend_kernels {

// The generated launcher takes the tiling struct by host pointer and copies it into the launch's
// arguments before returning (extract_host_stub.py), hence the non-const pointer to a copy here.
#define JT_LAUNCH(ENTRY)        \
  return static_cast<aclError>( \
      ACLRT_LAUNCH_KERNEL(ENTRY)(block_dim, stream, grad, feature, out, workspace, &tiling_copy))
#define JT_LAUNCH_WITH_THRESHOLD(ENTRY)                    \
  return static_cast<aclError>(ACLRT_LAUNCH_KERNEL(ENTRY)( \
      block_dim, stream, grad, feature, threshold, out, workspace, &tiling_copy))

aclError LaunchThresholdGradV2DOnNpu(KernelDType dtype, uint32_t block_dim, aclrtStream stream,
                                     void* grad, void* feature, void* threshold, void* out,
                                     void* workspace, const ThresholdGradV2DTilingData& tiling) {
  ThresholdGradV2DTilingData tiling_copy = tiling;
  switch (dtype) {
    case KernelDType::kFloat32:
      JT_LAUNCH_WITH_THRESHOLD(threshold_grad_v2_d_float32);
    case KernelDType::kFloat16:
      JT_LAUNCH_WITH_THRESHOLD(threshold_grad_v2_d_float16);
    case KernelDType::kBFloat16:
      JT_LAUNCH_WITH_THRESHOLD(threshold_grad_v2_d_bfloat16);
    case KernelDType::kInt32:
      JT_LAUNCH_WITH_THRESHOLD(threshold_grad_v2_d_int32);
    case KernelDType::kInt8:
      JT_LAUNCH_WITH_THRESHOLD(threshold_grad_v2_d_int8);
    case KernelDType::kUInt8:
      JT_LAUNCH_WITH_THRESHOLD(threshold_grad_v2_d_uint8);
    default:
      return ACL_ERROR_INVALID_PARAM;
  }
}

aclError LaunchReluGradOnNpu(KernelDType dtype, uint32_t block_dim, aclrtStream stream, void* grad,
                             void* feature, void* out, void* workspace,
                             const ReluGradTilingData& tiling) {
  ReluGradTilingData tiling_copy = tiling;
  switch (dtype) {
    case KernelDType::kFloat32:
      JT_LAUNCH(relu_grad_float32);
    case KernelDType::kFloat16:
      JT_LAUNCH(relu_grad_float16);
    case KernelDType::kBFloat16:
      JT_LAUNCH(relu_grad_bfloat16);
    case KernelDType::kInt32:
      JT_LAUNCH(relu_grad_int32);
    case KernelDType::kInt8:
      JT_LAUNCH(relu_grad_int8);
    case KernelDType::kUInt8:
      JT_LAUNCH(relu_grad_uint8);
#if defined(ASCEND_KERNELS_NPU_INT64)
    case KernelDType::kInt64:
      JT_LAUNCH(relu_grad_int64);
#endif
    default:
      return ACL_ERROR_INVALID_PARAM;
  }
}

#undef JT_LAUNCH
#undef JT_LAUNCH_WITH_THRESHOLD

}  // namespace ascend_kernels
