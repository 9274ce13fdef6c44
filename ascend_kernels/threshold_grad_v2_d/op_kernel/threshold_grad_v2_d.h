// Kernel entry points of ThresholdGradV2D, one per dtype, as the host launcher calls them.
// Arguments are GM addresses; `tiling` is the ThresholdGradV2DTilingData, by value, `threshold` at
// the threshold element the kernel reads when the tiling says ThresholdSource::kDevice. The int64
// and float64 entries exist only in the CPU build.
#pragma once

#include <cstdint>

#include "ascend_kernels/kernel_args.h"

// Hidden, as the definitions (cpu_ascendc/ascendc_types.h's __global__): the library that links
// the kernels does not export them.
#pragma GCC visibility push(hidden)

extern "C" {
void threshold_grad_v2_d_float32(uint8_t* grad, uint8_t* feature, uint8_t* threshold, uint8_t* out,
                                 uint8_t* workspace, ThresholdGradV2DTilingData tiling);
void threshold_grad_v2_d_float16(uint8_t* grad, uint8_t* feature, uint8_t* threshold, uint8_t* out,
                                 uint8_t* workspace, ThresholdGradV2DTilingData tiling);
void threshold_grad_v2_d_bfloat16(uint8_t* grad, uint8_t* feature, uint8_t* threshold, uint8_t* out,
                                  uint8_t* workspace, ThresholdGradV2DTilingData tiling);
void threshold_grad_v2_d_int32(uint8_t* grad, uint8_t* feature, uint8_t* threshold, uint8_t* out,
                               uint8_t* workspace, ThresholdGradV2DTilingData tiling);
void threshold_grad_v2_d_int8(uint8_t* grad, uint8_t* feature, uint8_t* threshold, uint8_t* out,
                              uint8_t* workspace, ThresholdGradV2DTilingData tiling);
void threshold_grad_v2_d_uint8(uint8_t* grad, uint8_t* feature, uint8_t* threshold, uint8_t* out,
                               uint8_t* workspace, ThresholdGradV2DTilingData tiling);
void threshold_grad_v2_d_int64(uint8_t* grad, uint8_t* feature, uint8_t* threshold, uint8_t* out,
                               uint8_t* workspace, ThresholdGradV2DTilingData tiling);
void threshold_grad_v2_d_float64(uint8_t* grad, uint8_t* feature, uint8_t* threshold, uint8_t* out,
                                 uint8_t* workspace, ThresholdGradV2DTilingData tiling);
}

#pragma GCC visibility pop
