// Kernel entry points of ThresholdGradV2D, threshold_grad_v2_d_<name> for every row of the dtype
// table (dtype_soc_table.h), as the host launcher calls them. Arguments are GM addresses;
// `tiling` is the ThresholdGradV2DTilingData, by value, `threshold` at the threshold element the
// kernel reads when the tiling says ThresholdSource::kDevice.
#pragma once

#include <cstdint>

#include "ascend_kernels/dtype_soc_table.h"
#include "ascend_kernels/kernel_args.h"

// Hidden, as the definitions (cpu_ascendc/ascendc_types.h's __global__): the library that links
// the kernels does not export them.
#pragma GCC visibility push(hidden)

extern "C" {
#define ASCEND_KERNELS_THRESHOLD_GRAD_DECLARATION(Name, name, ...)                     \
  void threshold_grad_v2_d_##name(uint8_t* grad, uint8_t* feature, uint8_t* threshold, \
                                  uint8_t* out, uint8_t* workspace,                    \
                                  ThresholdGradV2DTilingData tiling);
ASCEND_KERNELS_KERNEL_DTYPES(ASCEND_KERNELS_THRESHOLD_GRAD_DECLARATION)
#undef ASCEND_KERNELS_THRESHOLD_GRAD_DECLARATION
}

#pragma GCC visibility pop
