// Phase one's per-SoC dtype check and its message (docs/behaviour.md §2), from the operators'
// definitions (<op>/op_host/<op>_def.h), so the message and the check cannot disagree.
#include "aclnn/soc_dtypes.h"

#include "aclnn/tensor.h"
#include "ascend_kernels/dtype_soc_table.h"
#include "relu_grad/op_host/relu_grad_def.h"
#include "threshold_grad_v2_d/op_host/threshold_grad_v2_d_def.h"

namespace jax_threshold::aclnn {

namespace {

using ascend_kernels::FactsOfSoc;

uint32_t Features(SocVersion soc) { return FactsOfSoc(static_cast<int32_t>(soc)).features; }

// The operator definition phase one checks against: ReluGrad's at threshold 0, else
// ThresholdGradV2D's.
ascend_kernels::KernelDTypeList DtypesOf(SocVersion soc, bool threshold_is_zero) {
  const auto kernel_soc = static_cast<ascend_kernels::KernelSoc>(soc);
  return threshold_is_zero ? ascend_kernels::ReluGradDtypes(kernel_soc)
                           : ascend_kernels::ThresholdGradV2DDtypes(kernel_soc);
}

// "Ascend910B, Ascend950 or host": the SoCs the kernels run on.
std::string RunnableSocNames() {
  std::string names, last;
#define JAX_THRESHOLD_ADD_SOC_NAME(Name, code, str, arch, ub, usable_ub, cores, features, ...) \
  if (((features) & ascend_kernels::kSocRefused) == 0) {                                       \
    if (!last.empty()) names += (names.empty() ? "" : ", ") + last;                            \
    last = str;                                                                                \
  }
  ASCEND_KERNELS_SOCS(JAX_THRESHOLD_ADD_SOC_NAME)
#undef JAX_THRESHOLD_ADD_SOC_NAME
  return names.empty() ? last : names + " or " + last;
}

}  // namespace

bool SocSupportsDtype(SocVersion soc, aclDataType dtype, bool threshold_is_zero) {
  for (ascend_kernels::KernelDType d : DtypesOf(soc, threshold_is_zero)) {
    if (static_cast<int32_t>(d) == dtype) return true;
  }
  return false;
}

std::string SocDtypeList(SocVersion soc, bool threshold_is_zero) {
  std::string out;
  for (ascend_kernels::KernelDType d : DtypesOf(soc, threshold_is_zero)) {
    if (!out.empty()) out += ", ";
    out += DataTypeName(static_cast<aclDataType>(d));
  }
  return out;
}

const char* SocRefusalReason(SocVersion soc) {
  // asc-devkit impl/basic_api/dav_c100 (the Ascend910's arch): DataCopyPad and CompareScalar
  // report "not supported" and Select has mode 0 only. Without DataCopyPad a tensor whose size is
  // not a whole 32-byte block cannot be copied without touching bytes outside it (docs/behaviour.md
  // §3).
  if (Features(soc) & ascend_kernels::kSocRefused) {
    return "soc Ascend910 is not supported: its AscendC API (dav_c100) has no DataCopyPad, so "
           "tensors "
           "that are not whole 32-byte blocks cannot be copied without touching memory outside "
           "them, "
           "and no CompareScalar or tensor-scalar Select for the kernels' compare and select";
  }
  if (!FactsOfSoc(static_cast<int32_t>(soc)).known) {
    static const std::string unknown = "unknown soc (expected " + RunnableSocNames() + ")";
    return unknown.c_str();
  }
  return nullptr;
}

bool SocDtypesDependOnThreshold(SocVersion soc) {
  const ascend_kernels::KernelDTypeList zero = DtypesOf(soc, true), nonzero = DtypesOf(soc, false);
  if (zero.size != nonzero.size) return true;
  for (int i = 0; i < zero.size; ++i) {
    if (zero.items[i] != nonzero.items[i]) return true;
  }
  return false;
}

bool SocIsKnown(SocVersion soc) { return FactsOfSoc(static_cast<int32_t>(soc)).known; }

PlatformInfo SocPlatform(SocVersion soc) {
  const ascend_kernels::SocFacts facts = FactsOfSoc(static_cast<int32_t>(soc));
  PlatformInfo info;
  info.soc = soc;
  info.ub_size = facts.ub_bytes;
  info.core_num = facts.default_core_num;
  return info;
}

uint64_t SocUbBytes(SocVersion soc) { return FactsOfSoc(static_cast<int32_t>(soc)).ub_bytes; }

const char* SocName(SocVersion soc) { return FactsOfSoc(static_cast<int32_t>(soc)).name; }

}  // namespace jax_threshold::aclnn
