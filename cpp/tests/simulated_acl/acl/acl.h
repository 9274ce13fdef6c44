// SIMULATION, test code only: the part of CANN's acl/acl.h (acl_rt.h; acl_base.h beside it) that
// the NPU host path uses, with CANN's names, values and signatures, implemented by the simulated
// ACL runtime (simulated_acl.cpp) instead of a driver. It lets the NPU host sources
// (ascend_kernels/npu/npu_launch.cpp, cpp/aclnn/npu_phase_two.cpp and the "ASCEND" handlers of
// cpp/xla_ffi/ffi_handler.cpp) compile and run in CI without CANN; see docs/npu.md for what that
// proves and what it cannot.
#pragma once

#include "acl/acl_base.h"

typedef enum aclrtMemMallocPolicy {
  ACL_MEM_MALLOC_HUGE_FIRST,
  ACL_MEM_MALLOC_HUGE_ONLY,
  ACL_MEM_MALLOC_NORMAL_ONLY,
} aclrtMemMallocPolicy;

typedef enum aclrtMemcpyKind {
  ACL_MEMCPY_HOST_TO_HOST,
  ACL_MEMCPY_HOST_TO_DEVICE,
  ACL_MEMCPY_DEVICE_TO_HOST,
  ACL_MEMCPY_DEVICE_TO_DEVICE,
} aclrtMemcpyKind;

#define ACL_CONTINUE_ON_FAILURE 0x00000000U
#define ACL_STOP_ON_FAILURE 0x00000001U

extern "C" {
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtGetDevice(int32_t* deviceId);
aclError aclrtGetDeviceCount(uint32_t* count);
aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void* devPtr);
aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count,
                     aclrtMemcpyKind kind);
aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count,
                          aclrtMemcpyKind kind, aclrtStream stream);
aclError aclrtCreateStream(aclrtStream* stream);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);
aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode);
}
