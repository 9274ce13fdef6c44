// ThresholdGradV2D tiling (docs/behaviour.md §3): the kernel's UB divisor per dtype plus the shared
// scheme.
#pragma once

#include <cstdint>
#include <string>

#include "ascend_kernels/dtype_soc_table.h"
#include "ascend_kernels/kernel_args.h"

namespace jax_threshold::aclnn {

// UB divisor of ThresholdGradV2D per dtype (ascend_kernels/dtype_soc_table.h); 0 for a dtype the
// kernel does not support.
uint64_t ThresholdGradV2DUbDataNumber(ascend_kernels::KernelDType dtype);

// Bytes per element of a kernel dtype (0 if unknown).
uint64_t KernelDTypeSize(ascend_kernels::KernelDType dtype);

bool ThresholdGradV2DTiling(uint64_t num_elements, ascend_kernels::KernelDType dtype,
                            uint64_t ub_size, uint64_t core_num,
                            ascend_kernels::ElementwiseTiling* tiling, std::string* error);

}  // namespace jax_threshold::aclnn
