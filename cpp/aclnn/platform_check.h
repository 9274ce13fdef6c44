// Validation of the caller's PlatformInfo (docs/behaviour.md §2, §3), done in phase one so that
// phase two never runs a kernel on a unified buffer it cannot use.
#pragma once

#include <cstdint>
#include <string>

#include "jax_threshold/aclnn_threshold_backward.h"

namespace jax_threshold::aclnn {

// ub_size: a multiple of 32 bytes (UB allocations are 32-byte aligned) in
// [kMinUbSize, kMaxUbSize]. kMinUbSize holds the largest per-kernel plan (every dtype, both
// kernels, with double buffering and scratch); kMaxUbSize is 4x the largest Ascend core's UB.
inline constexpr uint64_t kUbAlignment = 32;
inline constexpr uint64_t kMinUbSize = 16 * 1024;
inline constexpr uint64_t kMaxUbSize = 1024 * 1024;
// core_num: at least 1, at most kMaxCoreNum (far above any SoC's AI vector core count; each
// core is a kernel block, so an absurd count would only multiply per-block overhead).
inline constexpr uint32_t kMaxCoreNum = 4096;

// False with a message saying which parameter is wrong and what is accepted.
bool ValidatePlatform(const PlatformInfo& info, std::string* error);

}  // namespace jax_threshold::aclnn
