// The CPU AscendC model seen from a device-only compile (tools/kernel_device_check.sh). The model
// stands in for the AI core's API and hardware: its own code, and the standard library it uses,
// are made callable from device code here (host and device), so the check judges only the
// kernel sources. Its public API is `__aicore__` (device) as the real API's is. Kernel headers
// are never included from inside this region: kernel code keeps the qualifiers it spells.
#pragma once

// Before the region: clang's CUDA wrapper of <new> declares device operators itself.
#include <new>

#pragma clang force_cuda_host_device begin
#include_next "kernel_operator.h"
#pragma clang force_cuda_host_device end

// An NPU build (SOC_VERSION given): the kernel code takes its NPU branch, as with CANN's API.
#if defined(JAX_THRESHOLD_SOC_VERSION)
#undef ASCEND_KERNELS_CPU_ASCENDC
#endif
