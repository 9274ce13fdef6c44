// Host-only conversion between a double and the uint64_t that carries it in ThresholdParams
// (kernel_args.h keeps device-side arguments free of float64). Never included by NPU kernels.
#pragma once

#include <cstdint>
#include <cstring>

namespace ascend_kernels {

inline uint64_t Float64ToBits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

inline double Float64FromBits(uint64_t u) {
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
}

}  // namespace ascend_kernels
