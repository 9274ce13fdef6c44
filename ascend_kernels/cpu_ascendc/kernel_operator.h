// The CPU model of the AscendC kernel API: kernel sources include "kernel_operator.h" exactly as
// on the NPU and, built with g++ against this directory, run on host threads (one block each).
#pragma once

// Marks a kernel build against the model (the NPU paths it cannot take, such as float64, and the
// checks only the model makes).
#define ASCEND_KERNELS_CPU_ASCENDC 1

// Kernel entries stay inside the library that links them: an NPU build's host objects may define
// the same extern "C" names.
#ifndef __global__
#define __global__ __attribute__((visibility("hidden")))
#endif
// The kernel type of an entry (AIV-only, mixed...) matters to the device launch only.
#ifndef KERNEL_TASK_TYPE_DEFAULT
#define KERNEL_TASK_TYPE_DEFAULT(type)
#endif

#include "ascendc_types.h"
#include "core_state.h"
#include "data_copy.h"
#include "kernel_tensor.h"
#include "vector_ops.h"
