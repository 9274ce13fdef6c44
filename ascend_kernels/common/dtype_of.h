// A kernel element type's row of the dtype table (dtype_soc_table.h), as compile-time facts: the
// one mapping between the kernels' C types and their dtype codes.
#pragma once

#include "kernel_operator.h"

#include "ascend_kernels/dtype_soc_table.h"

namespace ascend_kernels {
namespace kernel_common {

template <typename T>
struct DTypeOf;  // no row: not a kernel element type

#define ASCEND_KERNELS_DTYPE_OF(Name, name, code, type, bytes, divisor, select_path, integer, lo, \
                                hi, ...)                                                          \
  template <>                                                                                     \
  struct DTypeOf<type> {                                                                          \
    static constexpr KernelDType kValue = KernelDType::k##Name;                                   \
    static constexpr SelectPath kPath = SelectPath::select_path;                                  \
    static constexpr int64_t kMin = lo, kMax = hi; /* an integer dtype's range */                 \
    static constexpr uint32_t kUbDivisor = divisor;                                               \
    static_assert(sizeof(type) == bytes, "the row's byte count is its C type's size");            \
  };
ASCEND_KERNELS_KERNEL_DTYPES(ASCEND_KERNELS_DTYPE_OF)
#undef ASCEND_KERNELS_DTYPE_OF

}  // namespace kernel_common
}  // namespace ascend_kernels
