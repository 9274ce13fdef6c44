#include "aclnn/platform_check.h"

#include "aclnn/soc_dtypes.h"

namespace jax_threshold::aclnn {

bool ValidatePlatform(const PlatformInfo& info, std::string* error) {
  if (info.ub_size % kUbAlignment != 0 || info.ub_size < kMinUbSize || info.ub_size > kMaxUbSize) {
    // Messages are built only on failure: phase one runs on every custom call.
    *error = "platform ub_size " + std::to_string(info.ub_size) + " is not a multiple of " +
             std::to_string(kUbAlignment) + " bytes in [" + std::to_string(kMinUbSize) + ", " +
             std::to_string(kMaxUbSize) + "]";
    return false;
  }
  // A real SoC's UB is fixed: a plan for more would overrun it (the host has no such bound).
  if (SocUbBytes(info.soc) != 0 && info.ub_size > SocUbBytes(info.soc)) {
    *error = "platform ub_size " + std::to_string(info.ub_size) + " exceeds the " +
             std::to_string(SocUbBytes(info.soc)) + "-byte unified buffer of " + SocName(info.soc);
    return false;
  }
  if (info.core_num < 1 || info.core_num > kMaxCoreNum) {
    *error = "platform core_num " + std::to_string(info.core_num) + " is not in [1, " +
             std::to_string(kMaxCoreNum) + "]";
    return false;
  }
  if (!SocIsKnown(info.soc)) {
    *error = "platform soc " + std::to_string(static_cast<int32_t>(info.soc)) + " is unknown";
    return false;
  }
  return true;
}

}  // namespace jax_threshold::aclnn
