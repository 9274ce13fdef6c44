// Conversion between a double and the uint64_t that carries it in ThresholdParams (kernel_args.h
// keeps device-side arguments free of float64). Host code and the CPU build's float64 kernel (host
// SoC only) use it; NPU kernels never include it. __builtin_memcpy: no library call, so kernel code
// may call it.
#pragma once

#include <cstdint>

#include "ascend_kernels/dtype_soc_table.h"

namespace ascend_kernels {

__aicore__ inline uint64_t Float64ToBits(double d) {
  uint64_t u;
  __builtin_memcpy(&u, &d, sizeof u);
  return u;
}

__aicore__ inline double Float64FromBits(uint64_t u) {
  double d;
  __builtin_memcpy(&d, &u, sizeof d);
  return d;
}

}  // namespace ascend_kernels
