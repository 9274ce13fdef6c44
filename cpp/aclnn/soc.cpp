#include "aclnn/soc.h"

#include "aclnn/host_stream.h"
#include "aclnn/tensor.h"

namespace jax_threshold::aclnn {

using ascend_kernels::Soc;

// The public header's SocVersion (standing alone) names the table's rows.
constexpr bool Names(SocVersion soc, const char* name) {
  const char* own = ascend_kernels::SocRowOf(static_cast<Soc>(soc)).name;
  while (*own != '\0' && *own == *name) ++own, ++name;
  return *own == *name;
}
static_assert(Names(SocVersion::kAscend910, "Ascend910") &&
                  Names(SocVersion::kAscend910B, "Ascend910B") &&
                  Names(SocVersion::kAscend950, "Ascend950") && Names(SocVersion::kHost, "host") &&
                  sizeof(ascend_kernels::kSocs) / sizeof(ascend_kernels::kSocs[0]) == 4,
              "SocVersion's enumerators are the SoC table's rows");

const ascend_kernels::SocRow& RowOf(SocVersion soc) {
  return ascend_kernels::SocRowOf(static_cast<Soc>(soc));
}

namespace {

ascend_kernels::KernelOp OpFor(bool threshold_is_zero) {
  return threshold_is_zero ? ascend_kernels::KernelOp::kReluGrad
                           : ascend_kernels::KernelOp::kThresholdGradV2D;
}

}  // namespace

bool SocSupportsDtype(SocVersion soc, aclDataType dtype, bool threshold_is_zero) {
  return ascend_kernels::SocRunsKernel(static_cast<Soc>(soc), OpFor(threshold_is_zero), dtype);
}

std::string SocDtypeList(SocVersion soc, bool threshold_is_zero) {
  std::string out;
  for (const ascend_kernels::DtypeRow& row : ascend_kernels::kDtypes) {
    if (SocSupportsDtype(soc, static_cast<aclDataType>(row.dtype), threshold_is_zero)) {
      out += (out.empty() ? "" : ", ") + std::string(row.name);
    }
  }
  return out;
}

bool SocDtypesDependOnThreshold(SocVersion soc) {
  return SocDtypeList(soc, true) != SocDtypeList(soc, false);
}

std::string SocRefusal(SocVersion soc) {
  if (!ascend_kernels::HasSocRow(static_cast<Soc>(soc))) {
    std::string names, last;  // "Ascend910B, Ascend950 or host": the SoCs the kernels run on
    for (const ascend_kernels::SocRow& row : ascend_kernels::kSocs) {
      if (row.refusal != nullptr) continue;
      if (!last.empty()) names += (names.empty() ? "" : ", ") + last;
      last = row.name;
    }
    return "unknown soc (expected " + (names.empty() ? last : names + " or " + last) + ")";
  }
  if (RowOf(soc).refusal == nullptr) return "";
  return std::string("soc ") + RowOf(soc).name + " is not supported: " + RowOf(soc).refusal;
}

PlatformInfo WithDefaults(const PlatformInfo& info) {
  PlatformInfo out = info;
  const ascend_kernels::SocRow& row = RowOf(info.soc);
  const PlatformInfo host = info.soc == SocVersion::kHost ? HostPlatformInfo() : PlatformInfo{};
  if (!out.ub_size) out.ub_size = host.ub_size.value_or(row.ub_bytes);
  if (!out.core_num) out.core_num = host.core_num.value_or(row.default_cores);
  return out;
}

bool ValidatePlatform(const PlatformInfo& info, std::string* error) {
  const uint64_t ub_size = info.ub_size.value_or(0);
  const uint32_t core_num = info.core_num.value_or(0);
  // Messages are built only on failure: phase one runs on every custom call.
  if (ub_size % kUbAlignment != 0 || ub_size < kMinUbSize || ub_size > kMaxUbSize) {
    *error = "platform ub_size " + std::to_string(ub_size) + " is not a multiple of " +
             std::to_string(kUbAlignment) + " bytes in [" + std::to_string(kMinUbSize) + ", " +
             std::to_string(kMaxUbSize) + "]";
    return false;
  }
  // A real SoC's UB is fixed: a plan for more would overrun it (the host has no such bound).
  const ascend_kernels::SocRow& row = RowOf(info.soc);
  if (row.ub_bytes != 0 && ub_size > row.ub_bytes) {
    *error = "platform ub_size " + std::to_string(ub_size) + " exceeds the " +
             std::to_string(row.ub_bytes) + "-byte unified buffer of " + row.name;
    return false;
  }
  if (core_num < 1 || core_num > kMaxCoreNum) {
    *error = "platform core_num " + std::to_string(core_num) + " is not in [1, " +
             std::to_string(kMaxCoreNum) + "]";
    return false;
  }
  if (!ascend_kernels::HasSocRow(static_cast<Soc>(info.soc))) {
    *error = "platform soc " + std::to_string(static_cast<int32_t>(info.soc)) + " is unknown";
    return false;
  }
  return true;
}

}  // namespace jax_threshold::aclnn
