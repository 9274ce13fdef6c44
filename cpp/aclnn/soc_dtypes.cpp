// Per-SoC dtype lists (docs/behaviour.md §2), from the SoC table's features, so the message and
// the check cannot disagree.
#include "aclnn/soc_dtypes.h"

#include <initializer_list>

#include "aclnn/tensor.h"
#include "ascend_kernels/dtype_soc_table.h"

namespace jax_threshold::aclnn {

#define JAX_THRESHOLD_CHECK_SOC(name, code, str, ...)                                 \
  static_assert(static_cast<int32_t>(SocVersion::k##name) == code &&                  \
                    static_cast<int32_t>(ascend_kernels::KernelSoc::k##name) == code, \
                "SocVersion and KernelSoc values are the SoC table's: " str);
ASCEND_KERNELS_SOCS(JAX_THRESHOLD_CHECK_SOC)
#undef JAX_THRESHOLD_CHECK_SOC
// PlatformInfo's defaults (the public header, which stands alone) are the default SoC's.
static_assert(static_cast<int32_t>(PlatformInfo{}.soc) ==
                      static_cast<int32_t>(ascend_kernels::kDefaultSoc) &&
                  PlatformInfo{}.ub_size ==
                      ascend_kernels::FactsOfSoc(static_cast<int32_t>(ascend_kernels::kDefaultSoc))
                          .ub_bytes &&
                  PlatformInfo{}.core_num ==
                      ascend_kernels::FactsOfSoc(static_cast<int32_t>(ascend_kernels::kDefaultSoc))
                          .default_core_num,
              "PlatformInfo's defaults are the default SoC's");

namespace {

// A fixed-capacity list: phase one asks on every call, so no heap.
struct DtypeList {
  aclDataType items[8];
  int size = 0;
  void push_back(aclDataType d) { items[size++] = d; }
  const aclDataType* begin() const { return items; }
  const aclDataType* end() const { return items + size; }
};

using ascend_kernels::FactsOfSoc;

uint32_t Features(SocVersion soc) { return FactsOfSoc(static_cast<int32_t>(soc)).features; }

// In the order messages list them: the dtypes every SoC has, then its features'.
DtypeList DtypesOf(SocVersion soc, bool threshold_is_zero) {
  DtypeList list;
  if (SocRefusalReason(soc) != nullptr) return list;
  const uint32_t features = Features(soc);
  for (aclDataType d : {ACL_FLOAT, ACL_INT32, ACL_FLOAT16, ACL_INT8, ACL_UINT8}) list.push_back(d);
  if (features & ascend_kernels::kSocBFloat16) list.push_back(ACL_BF16);
  if (features & (threshold_is_zero ? ascend_kernels::kSocInt64ReluGrad
                                    : ascend_kernels::kSocInt64ThresholdGrad)) {
    list.push_back(ACL_INT64);
  }
  if (features & ascend_kernels::kSocFloat64) list.push_back(ACL_DOUBLE);
  return list;
}

}  // namespace

bool SocSupportsDtype(SocVersion soc, aclDataType dtype, bool threshold_is_zero) {
  for (aclDataType d : DtypesOf(soc, threshold_is_zero)) {
    if (d == dtype) return true;
  }
  return false;
}

std::string SocDtypeList(SocVersion soc, bool threshold_is_zero) {
  std::string out;
  for (aclDataType d : DtypesOf(soc, threshold_is_zero)) {
    if (!out.empty()) out += ", ";
    out += DataTypeName(d);
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
    return "unknown soc (expected Ascend910B, Ascend950 or host)";
  }
  return nullptr;
}

uint64_t SocUbBytes(SocVersion soc) { return FactsOfSoc(static_cast<int32_t>(soc)).ub_bytes; }

const char* SocName(SocVersion soc) { return FactsOfSoc(static_cast<int32_t>(soc)).name; }

}  // namespace jax_threshold::aclnn
