// ReluGrad tiling: the ThresholdGradV2D scheme (docs/behaviour.md §3) with the same UB divisors.
// Our ReluGrad is a select against 0 (not upstream's multiply), so it keeps exactly the same UB
// buffers as ThresholdGradV2D; sharing the divisor keeps both kernels' per-core splits identical.
#pragma once

#include <cstdint>
#include <string>

#include "ascend_kernels/kernel_args.h"

namespace jax_threshold::aclnn {

uint64_t ReluGradUbDataNumber(ascend_kernels::KernelDType dtype);

bool ReluGradTiling(uint64_t num_elements, ascend_kernels::KernelDType dtype, uint64_t ub_size,
                    uint64_t core_num, ascend_kernels::ElementwiseTiling* tiling,
                    std::string* error);

}  // namespace jax_threshold::aclnn
