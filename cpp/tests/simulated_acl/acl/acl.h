// SIMULATION, test code only: the part of CANN's acl/acl.h (acl_base_rt.h, acl_rt.h) that the
// NPU host path uses, with CANN's names, values and signatures, implemented by the simulated ACL
// runtime (simulated_acl.cpp) instead of a driver. It lets the NPU host sources
// (ascend_kernels/npu/npu_launch.cpp, cpp/aclnn/npu_phase_two.cpp and the "ASCEND" handlers of
// cpp/xla_ffi/ffi_handler.cpp) compile and run in CI without CANN; see docs/npu.md for what that
// proves and what it cannot.
#pragma once

#include <cstddef>
#include <cstdint>

typedef int aclError;
typedef void* aclrtStream;

static const int ACL_SUCCESS = 0;
static const int ACL_ERROR_INVALID_PARAM = 100000;
static const int ACL_ERROR_BAD_ALLOC = 200000;
static const int ACL_ERROR_INVALID_DEVICE = 200002;
#define ACL_ERROR_RT_PARAM_INVALID 107000
#define ACL_ERROR_RT_CONTEXT_NULL 107002
#define ACL_ERROR_RT_STREAM_CONTEXT 107003
#define ACL_ERROR_RT_INVALID_HANDLE 107017
#define ACL_ERROR_RT_AICORE_EXCEPTION 507015

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

typedef enum aclrtDevAttr {
  ACL_DEV_ATTR_AICORE_CORE_NUM = 101,
  ACL_DEV_ATTR_VECTOR_CORE_NUM = 201,
} aclrtDevAttr;

extern "C" {
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtGetDevice(int32_t* deviceId);
aclError aclrtGetDeviceCount(uint32_t* count);
const char* aclrtGetSocName();
aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr, int64_t* value);
aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void* devPtr);
aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count,
                     aclrtMemcpyKind kind);
aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count,
                          aclrtMemcpyKind kind, aclrtStream stream);
aclError aclrtCreateStream(aclrtStream* stream);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);
}
