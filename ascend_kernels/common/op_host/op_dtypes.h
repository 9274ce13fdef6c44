// The dtypes an operator runs on a SoC, from the SoC table's features (dtype_soc_table.h): the
// operator definitions in <op>/op_host/<op>_def.h name which int64 feature is theirs.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "ascend_kernels/dtype_soc_table.h"

namespace ascend_kernels {

// A fixed-capacity list: phase one asks on every call, so no heap.
struct KernelDTypeList {
  KernelDType items[8] = {};
  int size = 0;
  constexpr void push_back(KernelDType d) { items[size++] = d; }
  constexpr const KernelDType* begin() const { return items; }
  constexpr const KernelDType* end() const { return items + size; }
};

// In the order messages list them: the dtypes every SoC has, then bfloat16, int64 where the SoC
// has `int64_feature`, float64. Empty for a SoC the kernels cannot run on, or an unknown one.
constexpr KernelDTypeList OpDtypes(KernelSoc soc, uint32_t int64_feature) {
  KernelDTypeList list;
  const SocFacts facts = FactsOfSoc(static_cast<int32_t>(soc));
  if (!facts.known || (facts.features & kSocRefused) != 0) return list;
  for (KernelDType d : {KernelDType::kFloat32, KernelDType::kInt32, KernelDType::kFloat16,
                        KernelDType::kInt8, KernelDType::kUInt8}) {
    list.push_back(d);
  }
  if (facts.features & kSocBFloat16) list.push_back(KernelDType::kBFloat16);
  if (facts.features & int64_feature) list.push_back(KernelDType::kInt64);
  if (facts.features & kSocFloat64) list.push_back(KernelDType::kFloat64);
  return list;
}

}  // namespace ascend_kernels
