// The dtypes an operator runs on a SoC, from the dtype and SoC tables (dtype_soc_table.h): each
// dtype row names the SoC feature each operator's kernel needs.
#pragma once

#include <cstdint>

#include "ascend_kernels/dtype_soc_table.h"

namespace ascend_kernels {

// A fixed-capacity list, room for every kernel dtype: phase one asks on every call, so no heap.
struct KernelDTypeList {
  KernelDType items[kKernelDTypeCount] = {};
  int size = 0;
  constexpr void push_back(KernelDType d) { items[size++] = d; }
  constexpr const KernelDType* begin() const { return items; }
  constexpr const KernelDType* end() const { return items + size; }
};

// In the table's order (the order messages list them). Empty for a SoC the kernels cannot run
// on, or an unknown one.
constexpr KernelDTypeList OpDtypes(KernelSoc soc, KernelOp op) {
  KernelDTypeList list;
#define ASCEND_KERNELS_ADD_DTYPE(Name, ...)                                                     \
  if (SocRunsKernel(static_cast<int32_t>(soc), op, static_cast<int32_t>(KernelDType::k##Name))) \
    list.push_back(KernelDType::k##Name);
  ASCEND_KERNELS_KERNEL_DTYPES(ASCEND_KERNELS_ADD_DTYPE)
#undef ASCEND_KERNELS_ADD_DTYPE
  return list;
}

}  // namespace ascend_kernels
