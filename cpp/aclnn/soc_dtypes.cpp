// Per-SoC dtype lists (docs/behaviour.md §2). Kept as data so the message and the check cannot
// disagree.
#include "aclnn/soc_dtypes.h"

#include <initializer_list>

#include "aclnn/tensor.h"

namespace jax_threshold::aclnn {
namespace {

// A fixed-capacity list: phase one asks on every call, so no heap.
struct DtypeList {
  aclDataType items[8];
  int size = 0;
  void push_back(aclDataType d) { items[size++] = d; }
  const aclDataType* begin() const { return items; }
  const aclDataType* end() const { return items + size; }
};

DtypeList DtypesOf(SocVersion soc, bool threshold_is_zero) {
  DtypeList list;
  if (SocRefusalReason(soc) != nullptr) return list;
  for (aclDataType d : {ACL_FLOAT, ACL_INT32, ACL_FLOAT16, ACL_INT8, ACL_UINT8}) list.push_back(d);
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
  if (soc == SocVersion::kAscend910) {
    return "soc Ascend910 is not supported: its AscendC API (dav_c100) has no DataCopyPad, so "
           "tensors "
           "that are not whole 32-byte blocks cannot be copied without touching memory outside "
           "them, "
           "and no CompareScalar or tensor-scalar Select for the kernels' compare and select";
  }
  if (static_cast<int32_t>(soc) < 0 ||
      static_cast<int32_t>(soc) > static_cast<int32_t>(SocVersion::kHost)) {
    return "unknown soc (expected Ascend910B, Ascend950 or host)";
  }
  return nullptr;
}

uint64_t SocUbBytes(SocVersion soc) {
  switch (soc) {
    case SocVersion::kAscend910:
      return 256 * 1024;  // __NPU_ARCH__ 1001
    case SocVersion::kAscend910B:
      return 192 * 1024;  // __NPU_ARCH__ 2201
    case SocVersion::kAscend950:
      return 248 * 1024;  // __NPU_ARCH__ 3510
    case SocVersion::kHost:
      return 0;
  }
  return 0;
}

const char* SocName(SocVersion soc) {
  switch (soc) {
    case SocVersion::kAscend910:
      return "Ascend910";
    case SocVersion::kAscend910B:
      return "Ascend910B";
    case SocVersion::kAscend950:
      return "Ascend950";
    case SocVersion::kHost:
      return "host";
  }
  return "unknown";
}

}  // namespace jax_threshold::aclnn
