// What phase one asks of a caller's SocVersion: its row of the SoC table
// (ascend_kernels/include/ascend_kernels/dtype_soc_table.h), the dtypes it takes
// (docs/behaviour.md §2, step 3) and its platform (§2, §3).
#pragma once

#include <cstdint>
#include <string>

#include "ascend_kernels/dtype_soc_table.h"
#include "jax_threshold/aclnn_threshold_backward.h"

namespace jax_threshold::aclnn {

// The row of `soc` (for a value no row has, the table's "unknown" one, refused).
const ascend_kernels::SocRow& RowOf(SocVersion soc);

// True if `dtype` is in `soc`'s list: ReluGrad's at a zero threshold, else ThresholdGradV2D's.
bool SocSupportsDtype(SocVersion soc, aclDataType dtype, bool threshold_is_zero);

// "float32, int32, ..." for error messages.
std::string SocDtypeList(SocVersion soc, bool threshold_is_zero);

// Whether `soc`'s list depends on the threshold (a dtype only ReluGrad runs there).
bool SocDtypesDependOnThreshold(SocVersion soc);

// Why phase one refuses `soc` outright (docs/behaviour.md §2 allows refusing a SoC whose AscendC
// API cannot run the kernels correctly: its row's reason; an unknown SoC), or "" when it does not.
std::string SocRefusal(SocVersion soc);

// ub_size: a multiple of 32 bytes (UB allocations are 32-byte aligned) in
// [kMinUbSize, kMaxUbSize] and at most the SoC's UB. kMinUbSize holds the largest per-kernel plan
// (every dtype, both kernels, with double buffering and scratch); kMaxUbSize is 4x the largest
// Ascend core's UB. core_num: in [1, kMaxCoreNum], far above any SoC's AI vector core count (each
// core is a kernel block, so an absurd count would only multiply per-block overhead).
inline constexpr uint64_t kUbAlignment = 32;
inline constexpr uint64_t kMinUbSize = 16 * 1024;
inline constexpr uint64_t kMaxUbSize = 1024 * 1024;
inline constexpr uint32_t kMaxCoreNum = 4096;

// `info` with the SoC's own ub_size and core_num where it has none (the host's:
// HostPlatformInfo; an unknown SoC's: 0).
PlatformInfo WithDefaults(const PlatformInfo& info);

// False with a message saying which parameter of a platform WithDefaults filled is wrong and
// what is accepted.
bool ValidatePlatform(const PlatformInfo& info, std::string* error);

}  // namespace jax_threshold::aclnn
