// `__aicore__`, the AscendC qualifier of a function that runs on the AI core, for headers that
// kernels and host code share (tiling structs, threshold decoding). The device compiler
// (asc-devkit impl/utils/sys_macros.h) and the CPU model (cpu_ascendc/ascendc_types.h) define it
// first; a host translation unit (the executor, phase one, the launcher) sees it empty.
#pragma once

#ifndef __aicore__
#if defined(__CCE_AICORE__) || defined(__NPU_ARCH__)
#define __aicore__ [aicore]
#else
#define __aicore__
#endif
#endif
