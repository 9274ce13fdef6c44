// SIMULATION, test code only: a simulated ACL runtime for running the NPU host path in CI.
//
// Stand-ins for the acl* calls of acl/acl.h (this directory's copy) with the behaviour the NPU
// path relies on: devices with a SoC name and a vector core count; a current device per thread
// (none until aclrtSetDevice); device allocations tagged with their device, each on pages of its
// own that host code cannot touch (PROT_NONE) except inside a simulated kernel run or an ACL copy,
// so a host read or write of a device pointer faults as on hardware, and unmapped when freed;
// streams of one device, each an ordered queue that runs only when synchronised (so nothing the
// host frees or rewrites before then can be mistaken for what a kernel read); asynchronous copies
// on that queue. A launch or an asynchronous copy on a stream of another device than the calling
// thread's current one is refused with ACL_ERROR_RT_STREAM_CONTEXT, as the runtime refuses it.
// The generated aclrtlaunch_<entry> launchers (simulated_launch.cpp) enqueue the real kernel
// sources on the CPU AscendC model, after checking every pointer argument lies in a live
// allocation of the stream's device. Faults can be injected: launches that fail, kernels whose
// handle is dead. The simulation proves host-side protocol and results on the CPU model, not what
// a device does (docs/npu.md).
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

// A fresh runtime with these devices: every allocation and stream of the previous one is gone
// (its memory freed), every thread's current device unset, the counters and faults cleared.
void Reset(const std::vector<DeviceSpec>& devices);

// The next `count` launches return `code` and run nothing (a launch the runtime refused).
void FailLaunches(int count, aclError code);

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

// While one is alive (on any thread), device memory is readable and writable by host code: the
// simulated kernel runs and copies hold one. Outside them every access faults.
class DeviceAccess {
 public:
  DeviceAccess();
  ~DeviceAccess();
  DeviceAccess(const DeviceAccess&) = delete;
  DeviceAccess& operator=(const DeviceAccess&) = delete;
};

// The simulated launchers' side of the runtime.
// Whether work may be submitted on `stream` from this thread: ACL_SUCCESS with the stream's device
// in `*device` when it is the thread's current device; ACL_ERROR_RT_STREAM_CONTEXT when it is
// another; ACL_ERROR_RT_CONTEXT_NULL without a current device; ACL_ERROR_RT_PARAM_INVALID when
// `stream` is not a live stream.
aclError StreamContext(aclrtStream stream, int* device);
// Queues `task` on `stream`; it runs in order at the next synchronisation, and its nonzero result
// becomes the stream's error (returned by aclrtSynchronizeStream, the rest of the queue skipped).
aclError Enqueue(aclrtStream stream, std::function<aclError()> task);
// Whether [p, p + bytes) lies in one live allocation of `device`; else why not in `*why`.
bool InDeviceMemory(int device, const void* p, uint64_t bytes, std::string* why);
const DeviceSpec& Device(int device);
// Consumes one injected launch failure, if any (its code), else ACL_SUCCESS.
aclError TakeInjectedLaunchFailure();
bool KernelIsDead(const char* name);
void CountBlocks(int64_t blocks);
void CountLaunch();
// The last error a queued task reported, for test diagnostics.
std::string LastRunError();
void SetRunError(std::string message);

}  // namespace simulated_acl
