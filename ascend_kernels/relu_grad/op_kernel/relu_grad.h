// Kernel entry points of ReluGrad, one per dtype, as the host launcher calls them.
// Arguments are GM addresses; `tiling` is the ReluGradTilingData, by value. The int64 and
// float64 entries exist only in the CPU build.
#pragma once

#include <cstdint>

#include "ascend_kernels/kernel_args.h"

// Hidden, as the definitions (cpu_ascendc/ascendc_types.h's __global__): the library that links
// the kernels does not export them.
#pragma GCC visibility push(hidden)

extern "C" {
void relu_grad_float32(uint8_t* grad, uint8_t* feature, uint8_t* out, uint8_t* workspace,
                       ReluGradTilingData tiling);
void relu_grad_float16(uint8_t* grad, uint8_t* feature, uint8_t* out, uint8_t* workspace,
                       ReluGradTilingData tiling);
void relu_grad_bfloat16(uint8_t* grad, uint8_t* feature, uint8_t* out, uint8_t* workspace,
                        ReluGradTilingData tiling);
void relu_grad_int32(uint8_t* grad, uint8_t* feature, uint8_t* out, uint8_t* workspace,
                     ReluGradTilingData tiling);
void relu_grad_int8(uint8_t* grad, uint8_t* feature, uint8_t* out, uint8_t* workspace,
                    ReluGradTilingData tiling);
void relu_grad_uint8(uint8_t* grad, uint8_t* feature, uint8_t* out, uint8_t* workspace,
                     ReluGradTilingData tiling);
void relu_grad_int64(uint8_t* grad, uint8_t* feature, uint8_t* out, uint8_t* workspace,
                     ReluGradTilingData tiling);
void relu_grad_float64(uint8_t* grad, uint8_t* feature, uint8_t* out, uint8_t* workspace,
                       ReluGradTilingData tiling);
}

#pragma GCC visibility pop
