// Kernel entry points of ReluGrad, relu_grad_<name> for every row of the dtype table
// (dtype_soc_table.h), as the host launcher calls them. Arguments are GM addresses; `tiling` is
// the ReluGradTilingData, by value.
#pragma once

#include <cstdint>

#include "ascend_kernels/dtype_soc_table.h"
#include "ascend_kernels/kernel_args.h"

// Hidden, as the definitions (cpu_ascendc/ascendc_types.h's __global__): the library that links
// the kernels does not export them.
#pragma GCC visibility push(hidden)

extern "C" {
#define ASCEND_KERNELS_RELU_GRAD_DECLARATION(Name, name, ...)                              \
  void relu_grad_##name(uint8_t* grad, uint8_t* feature, uint8_t* out, uint8_t* workspace, \
                        ReluGradTilingData tiling);
ASCEND_KERNELS_KERNEL_DTYPES(ASCEND_KERNELS_RELU_GRAD_DECLARATION)
#undef ASCEND_KERNELS_RELU_GRAD_DECLARATION
}

#pragma GCC visibility pop
