// SIMULATION, test code only: a simulated ACL runtime for running the NPU host path in CI.
//
// Stand-ins for the acl* calls of acl/acl.h (this directory's copy) that refuse and fail as CANN's
// runtime does (hicann/runtime; docs/npu.md cites the files): devices with a SoC name and a vector
// core count, and one SoC name per process (aclrtGetSocName caches the first it resolves); a
// current device per thread; device allocations tagged with their device whose addresses host code
// can never touch (PROT_NONE, from any thread, also while a kernel runs: the simulated kernels and
// copies use a second, private mapping of the same memory), unmapped when freed; streams of one
// device, each an ordered queue that runs only when synchronised; a launch, an asynchronous copy
// or a destroy on a stream of another device than the calling thread's current one refused with
// ACL_ERROR_RT_STREAM_CONTEXT; after a kernel's exception, what the stream's failure mode says
// (aclrtSetStreamFailureMode). The generated aclrtlaunch_<entry> launchers (simulated_launch.cpp)
// enqueue the real kernel sources on the CPU AscendC model, after checking every pointer argument
// lies in a live allocation of the stream's device. Faults can be injected: launches refused,
// kernels that raise an exception, kernels whose handle is dead. The simulation proves host-side
// protocol and results on the CPU model, not what a device does (docs/npu.md).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "acl/acl.h"

namespace simulated_acl {

struct DeviceSpec {
  std::string soc_name = "Ascend910B1";
  int64_t vector_cores = 40;
};

// A fresh runtime, as in a new process, with these devices: every allocation and stream of the
// previous one is gone (its memory freed), every thread's current device unset, the SoC name
// unresolved, the counters and faults cleared.
void Reset(const std::vector<DeviceSpec>& devices);

// The next `count` launches return `code` and run nothing (a launch the runtime refused).
void FailLaunches(int count, aclError code);

// The next `count` launches are accepted, but their kernels raise `code` (an AI-core exception:
// ACL_ERROR_RT_AICORE_EXCEPTION, ACL_ERROR_RT_VECTOR_CORE_EXCEPTION) after running block 0.
void RaiseKernelExceptions(int count, aclError code);

// The kernel entry `name` (e.g. "relu_grad") has no kernel handle, as after a failed
// registration: its launcher prints an error and returns 0 without running, as CANN's generated
// launcher does.
void KillKernel(const std::string& name);

struct Counters {
  int64_t launches = 0;     // launches enqueued
  int64_t blocks_run = 0;   // kernel blocks run by synchronisations
  int64_t mallocs = 0;      // aclrtMalloc calls that succeeded
  int64_t device_info = 0;  // aclGetDeviceCapability calls
  int64_t live_allocations = 0;
};
Counters GetCounters();

// Called by every kernel run, on the synchronising thread, before the kernel's blocks run.
void WhileKernelsRun(std::function<void()> hook);

// The simulated launchers' side of the runtime.
// Whether work may be submitted on `stream` from this thread: ACL_SUCCESS with the stream's device
// in `*device` when it is the thread's current device; ACL_ERROR_RT_STREAM_CONTEXT when it is
// another; ACL_ERROR_RT_CONTEXT_NULL without a current device; ACL_ERROR_RT_PARAM_INVALID when
// `stream` is not a live stream.
aclError StreamContext(aclrtStream stream, int* device);
// Queues `task` on `stream`; it runs in order at the next synchronisation, and its nonzero result
// becomes the stream's error (aclrtSynchronizeStream, by the stream's failure mode).
aclError Enqueue(aclrtStream stream, std::function<aclError()> task);
// Whether [p, p + bytes) lies in one live allocation of `device`; else why not in `*why`.
bool InDeviceMemory(int device, const void* p, uint64_t bytes, std::string* why);
// The address where simulated device code reads and writes the device address `p` (null when `p`
// is in no live allocation).
void* KernelView(const void* p);
const DeviceSpec& Device(int device);
// Consumes one injected launch failure, if any (its code), else ACL_SUCCESS.
aclError TakeInjectedLaunchFailure();
// Consumes one injected kernel exception, if any (its code), else ACL_SUCCESS.
aclError TakeInjectedException();
void RunHook();
bool KernelIsDead(const char* name);
void CountBlocks(int64_t blocks);
void CountLaunch();
// The last error a queued task reported, for test diagnostics.
std::string LastRunError();
void SetRunError(std::string message);

}  // namespace simulated_acl
