// Per-SoC dtype lists (SPEC §2). Kept as data so the message and the check cannot disagree.
#include "aclnn/soc_dtypes.h"

#include <vector>

#include "aclnn/tensor.h"

namespace jax_threshold::aclnn {
namespace {

std::vector<aclDataType> DtypeList(SocVersion soc, bool threshold_is_zero) {
  std::vector<aclDataType> list = {ACL_FLOAT, ACL_INT32, ACL_FLOAT16, ACL_INT8, ACL_UINT8};
  if (soc == SocVersion::kAscend910) return list;
  list.push_back(ACL_BF16);  // Ascend910B and later
  if (soc == SocVersion::kAscend950 && threshold_is_zero) list.push_back(ACL_INT64);
  if (soc == SocVersion::kHost) {
    list.push_back(ACL_INT64);
    list.push_back(ACL_DOUBLE);
  }
  return list;
}

}  // namespace

bool SocSupportsDtype(SocVersion soc, aclDataType dtype, bool threshold_is_zero) {
  for (aclDataType d : DtypeList(soc, threshold_is_zero)) {
    if (d == dtype) return true;
  }
  return false;
}

std::string SocDtypeList(SocVersion soc, bool threshold_is_zero) {
  std::string out;
  for (aclDataType d : DtypeList(soc, threshold_is_zero)) {
    if (!out.empty()) out += ", ";
    out += DataTypeName(d);
  }
  return out;
}

const char* SocName(SocVersion soc) {
  switch (soc) {
    case SocVersion::kAscend910: return "Ascend910";
    case SocVersion::kAscend910B: return "Ascend910B";
    case SocVersion::kAscend950: return "Ascend950";
    case SocVersion::kHost: return "host";
  }
  return "unknown";
}

}  // namespace jax_threshold::aclnn
