// What the target SoC's AscendC API offers the kernels, decided at compile time on the NPU.
//
// The CPU build compiles every path; there the launch's SoC rules (cpu_ascendc/soc_rules.h)
// decide at run time. On the NPU, __NPU_ARCH__ names the arch (asc-devkit
// tests/api/basic_api/CMakeLists.txt: 1001 dav_c100 = Ascend910, 2002 dav_m200 = Ascend310P,
// 2201 dav_c220 = Ascend910B, 3510 dav_3510 = Ascend950).
#pragma once

#include "kernel_operator.h"

#include "ascend_kernels/dtype_soc_table.h"

#if !defined(ASCEND_KERNELS_CPU_ASCENDC) && defined(__NPU_ARCH__) && \
    (__NPU_ARCH__ == 1001 || __NPU_ARCH__ == 2002)
// dav_c100 / dav_m200: DataCopyPad and (dav_c100) CompareScalar are "not supported" stubs that
// emit nothing in a release build (asc-devkit impl/basic_api/kernel_log.h,
// ASCENDC_REPORT_NOT_SUPPORT), so the kernels would build and silently leave tails uncopied.
// Phase one refuses soc Ascend910 for the same reason (cpp/aclnn/soc_dtypes.cpp).
#error \
    "ThresholdGradV2D/ReluGrad need DataCopyPad, CompareScalar and tensor-scalar Select: not on dav_c100/dav_m200"
#endif

#if !defined(ASCEND_KERNELS_CPU_ASCENDC) && defined(__NPU_ARCH__) && defined(JAX_THRESHOLD_NPU_SOC)
// The SoC row the NPU build names (JAX_THRESHOLD_NPU_SOC, from SOC_VERSION) is of the arch CANN
// compiles SOC_VERSION for.
static_assert(ascend_kernels::FactsOfSoc(JAX_THRESHOLD_NPU_SOC).arch == __NPU_ARCH__,
              "SOC_VERSION's arch is not its SoC row's (dtype_soc_table.h)");
#endif

// Which dtypes a build has kernels for is the SoC table's (dtype_soc_table.h: each dtype row
// names the SoC feature its kernels need; select_kernel.h's BuildHasKernel). bfloat16 needs the
// float <- bfloat16 Cast (dav_c220 and later: asc-devkit impl/basic_api/dav_c100 and dav_m200
// have none); int64 ReluGrad the Ascend950's dav_3510 count-form Maxs/Mins/Adds on int64_t
// (impl/basic_api/dav_3510/kernel_operator_vec_binary_scalar_impl.h) that the exact-integer path
// uses.

// CompareScalar and tensor-scalar Select on int8/uint8 themselves: the Ascend950's dav_3510 API
// has both (impl/basic_api/dav_3510/kernel_operator_vec_cmp_impl.h, kernel_operator_vec_sel_impl.h;
// cpu_ascendc/soc_rules.cpp), so its byte kernels compare and select in two ops; dav_c220 has
// neither, hence the half detour there, and its build does not compile the two-op path. On the
// CPU both paths are compiled and the launch's SoC rules decide.
#if defined(ASCEND_KERNELS_CPU_ASCENDC) || (defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510)
#define ASCEND_KERNELS_HAS_BYTE_COMPARE_SELECT 1
#else
#define ASCEND_KERNELS_HAS_BYTE_COMPARE_SELECT 0
#endif
template <typename T>
__aicore__ inline bool HasByteCompareSelect() {
#if defined(ASCEND_KERNELS_CPU_ASCENDC)
  return cpu_ascendc::HasCompareAndSelect(cpu_ascendc::CurrentRules(), cpu_ascendc::VTypeOf<T>());
#else
  return ASCEND_KERNELS_HAS_BYTE_COMPARE_SELECT != 0;
#endif
}
