// Keywords, scalar types and enums of AscendC, for g++.
//
// On the NPU these come from the CANN compiler (`__global__`, `__aicore__`, `__gm__`, `half`) and
// from kernel_operator.h (`bfloat16_t`, `GM_ADDR`, the enums). Here they are plain C++ so the
// kernel sources compile unchanged.
#pragma once

#include <cstdint>

#include "scalar_types.h"

// Marks the kernel sources as built against this CPU implementation (guards for NPU-impossible
// paths such as float64).
#define ASCEND_KERNELS_CPU_ASCENDC 1

// Kernel entries stay inside the library that links them: the NPU build's host objects may
// define the same extern "C" names.
#ifndef __global__
#define __global__ __attribute__((visibility("hidden")))
#endif
// The kernel type of an entry (AIV-only, mixed...) matters to the device launch only.
#ifndef KERNEL_TASK_TYPE_DEFAULT
#define KERNEL_TASK_TYPE_DEFAULT(type)
#endif
#ifndef __aicore__
#define __aicore__
#endif
#ifndef __gm__
#define __gm__
#endif
#ifndef __ubuf__
#define __ubuf__
#endif

// As kernel_operator.h spells it (asc-devkit impl/basic_api/utils/kernel_utils_macros.h): a macro,
// so `const GM_ADDR p` is a pointer to const here too and cannot be passed on as a GM_ADDR.
#define GM_ADDR __gm__ uint8_t*

namespace AscendC {

enum class TPosition : uint8_t {
  GM,
  A1,
  A2,
  B1,
  B2,
  C1,
  C2,
  CO1,
  CO2,
  VECIN,
  VECOUT,
  VECCALC,
  LCM = VECCALC
};
using QuePosition = TPosition;

enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };

enum class SELMODE : uint8_t {
  VSEL_CMPMASK_SPR = 0,
  VSEL_TENSOR_SCALAR_MODE = 1,
  VSEL_TENSOR_TENSOR_MODE = 2,
};

enum class RoundMode : uint8_t {
  CAST_NONE = 0,
  CAST_RINT,
  CAST_FLOOR,
  CAST_CEIL,
  CAST_ROUND,
  CAST_TRUNC,
  CAST_ODD,
};

// Hardware granules (bytes): a UB block and one vector repeat.
constexpr uint32_t ONE_BLK_SIZE = 32;
constexpr uint32_t ONE_REPEAT_BYTE_SIZE = 256;

}  // namespace AscendC
