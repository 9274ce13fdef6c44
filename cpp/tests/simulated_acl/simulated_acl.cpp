// SIMULATION, test code only: the simulated ACL runtime (simulated_acl.h).
#include "simulated_acl.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>

namespace simulated_acl {
namespace {

// One memory object mapped twice: at the device address handed out, never accessible to host
// code (PROT_NONE), and at a private read-write view that only simulated device code uses.
struct Allocation {
  int device;
  uint64_t bytes;
  size_t mapped;  // bytes mapped: `bytes` rounded up to whole pages
  char* view;
};

// CANN's stream failure modes (runtime src/runtime/core/src/stream/stream.cc): with
// ACL_CONTINUE_ON_FAILURE the tasks after a failed one run and the error is reported by one
// synchronisation, then cleared (Stream::GetError); with ACL_STOP_ON_FAILURE the first failure
// aborts the stream (Stream::EnterFailureAbort): later tasks are accepted and never run, every
// synchronisation reports the error, and the device's context records it.
struct Stream {
  int device;
  std::deque<std::function<aclError()>> queue;
  aclError error = ACL_SUCCESS;
  bool stop_on_failure = false;
  bool aborted = false;
};

// A device's (primary) context: once a stream of it is in stop mode, a synchronisation of any of
// its streams reports the error that aborted one (Stream::GetSynchronizeError).
struct Context {
  bool stop_mode = false;
  aclError failure = ACL_SUCCESS;
};

struct Runtime {
  std::mutex mu;
  uint64_t generation = 1;
  std::vector<DeviceSpec> devices{DeviceSpec{}};
  std::vector<Context> contexts{Context{}};
  std::string soc_name;  // resolved by the first aclrtGetSocName, then the process's
  std::map<uintptr_t, Allocation> allocations;  // by start address
  std::set<Stream*> streams;
  int failing_launches = 0;
  aclError failure_code = ACL_SUCCESS;
  int raising_launches = 0;
  aclError exception_code = ACL_SUCCESS;
  std::function<void()> run_hook;
  std::set<std::string> dead_kernels;
  Counters counters;
  std::string last_run_error;
};

Runtime& State() {
  static Runtime* runtime = new Runtime;  // outlives every test's threads
  return *runtime;
}

struct CurrentDevice {
  int device = -1;
  uint64_t generation = 0;
};
thread_local CurrentDevice current;

// The current device of this thread in this runtime, or -1. Caller holds the lock.
int CurrentLocked(const Runtime& r) {
  return current.generation == r.generation ? current.device : -1;
}

// Unmapped, so that any later use of the pointer by host code faults.
void FreeLocked(Runtime& r, std::map<uintptr_t, Allocation>::iterator it) {
  munmap(reinterpret_cast<void*>(it->first), it->second.mapped);
  munmap(it->second.view, it->second.mapped);
  r.allocations.erase(it);
}

}  // namespace

void Reset(const std::vector<DeviceSpec>& devices) {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  while (!r.allocations.empty()) FreeLocked(r, r.allocations.begin());
  for (Stream* s : r.streams) delete s;
  r.streams.clear();
  r.devices = devices;
  r.contexts.assign(devices.size(), Context{});
  r.soc_name.clear();
  ++r.generation;
  r.failing_launches = 0;
  r.raising_launches = 0;
  r.run_hook = nullptr;
  r.dead_kernels.clear();
  r.counters = Counters{};
  r.last_run_error.clear();
}

void FailLaunches(int count, aclError code) {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  r.failing_launches = count;
  r.failure_code = code;
}

void KillKernel(const std::string& name) {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  r.dead_kernels.insert(name);
}

Counters GetCounters() {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  Counters c = r.counters;
  c.live_allocations = static_cast<int64_t>(r.allocations.size());
  return c;
}

void RaiseKernelExceptions(int count, aclError code) {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  r.raising_launches = count;
  r.exception_code = code;
}

void WhileKernelsRun(std::function<void()> hook) {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  r.run_hook = std::move(hook);
}

void RunHook() {
  std::function<void()> hook;
  {
    Runtime& r = State();
    std::lock_guard<std::mutex> lock(r.mu);
    hook = r.run_hook;
  }
  if (hook) hook();
}

aclError StreamContext(aclrtStream stream, int* device) {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  auto* s = static_cast<Stream*>(stream);
  if (r.streams.count(s) == 0) return ACL_ERROR_RT_PARAM_INVALID;
  const int current_device = CurrentLocked(r);
  if (current_device < 0) return ACL_ERROR_RT_CONTEXT_NULL;
  if (current_device != s->device) return ACL_ERROR_RT_STREAM_CONTEXT;
  *device = s->device;
  return ACL_SUCCESS;
}

aclError Enqueue(aclrtStream stream, std::function<aclError()> task) {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  auto* s = static_cast<Stream*>(stream);
  if (r.streams.count(s) == 0) return ACL_ERROR_RT_PARAM_INVALID;
  s->queue.push_back(std::move(task));
  return ACL_SUCCESS;
}

bool InDeviceMemory(int device, const void* p, uint64_t bytes, std::string* why) {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  const auto address = reinterpret_cast<uintptr_t>(p);
  auto it = r.allocations.upper_bound(address);
  if (p == nullptr || it == r.allocations.begin()) {
    *why = "is not device memory";
    return false;
  }
  --it;
  if (address - it->first + bytes > it->second.bytes) {
    *why = "is not inside one live device allocation";
    return false;
  }
  if (it->second.device != device) {
    *why = "is memory of device " + std::to_string(it->second.device) + ", not of device " +
           std::to_string(device);
    return false;
  }
  return true;
}

void* KernelView(const void* p) {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  const auto address = reinterpret_cast<uintptr_t>(p);
  auto it = r.allocations.upper_bound(address);
  if (p == nullptr || it == r.allocations.begin()) return nullptr;
  --it;
  if (address - it->first >= it->second.mapped) return nullptr;
  return it->second.view + (address - it->first);
}

const DeviceSpec& Device(int device) {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.devices.at(static_cast<size_t>(device));
}

aclError TakeInjectedLaunchFailure() {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.failing_launches == 0) return ACL_SUCCESS;
  --r.failing_launches;
  return r.failure_code;
}

aclError TakeInjectedException() {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.raising_launches == 0) return ACL_SUCCESS;
  --r.raising_launches;
  return r.exception_code;
}

bool KernelIsDead(const char* name) {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.dead_kernels.count(name) != 0;
}

void CountBlocks(int64_t blocks) {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  r.counters.blocks_run += blocks;
}

std::string LastRunError() {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.last_run_error;
}

void SetRunError(std::string message) {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  r.last_run_error = std::move(message);
}

void CountLaunch() {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  ++r.counters.launches;
}

}  // namespace simulated_acl

using simulated_acl::Runtime;
using simulated_acl::State;

extern "C" {

aclError aclrtSetDevice(int32_t deviceId) {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  if (deviceId < 0 || static_cast<size_t>(deviceId) >= r.devices.size()) {
    return ACL_ERROR_INVALID_DEVICE;
  }
  simulated_acl::current = {deviceId, r.generation};
  return ACL_SUCCESS;
}

aclError aclrtGetDevice(int32_t* deviceId) {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  if (deviceId == nullptr) return ACL_ERROR_INVALID_PARAM;
  const int device = simulated_acl::CurrentLocked(r);
  if (device < 0) return ACL_ERROR_RT_CONTEXT_NULL;
  *deviceId = device;
  return ACL_SUCCESS;
}

aclError aclrtGetDeviceCount(uint32_t* count) {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  if (count == nullptr) return ACL_ERROR_INVALID_PARAM;
  *count = static_cast<uint32_t>(r.devices.size());
  return ACL_SUCCESS;
}

// One name per process, as CANN's aclrtGetSocName caches the first it resolves (acl
// src/acl/aclrt_impl/acl_rt_impl_base.cpp, InitSocVersion): here the current device's, or device
// 0's without one.
const char* aclrtGetSocName() {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.soc_name.empty()) {
    const int device = std::max(simulated_acl::CurrentLocked(r), 0);
    r.soc_name = r.devices.at(static_cast<size_t>(device)).soc_name;
  }
  return r.soc_name.c_str();
}

aclError aclGetDeviceCapability(uint32_t deviceId, aclDeviceInfo deviceInfo, int64_t* value) {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  ++r.counters.device_info;
  if (value == nullptr || deviceId >= r.devices.size()) return ACL_ERROR_INVALID_PARAM;
  if (deviceInfo != ACL_DEVICE_INFO_VECTOR_CORE_NUM) return ACL_ERROR_INVALID_PARAM;
  const int64_t cores = r.devices[deviceId].vector_cores;
  if (cores <= 0) return ACL_ERROR_RT_PARAM_INVALID;  // a device that cannot say
  *value = cores;
  return ACL_SUCCESS;
}

aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy) {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  if (devPtr == nullptr || size == 0) return ACL_ERROR_INVALID_PARAM;
  const int device = simulated_acl::CurrentLocked(r);
  if (device < 0) return ACL_ERROR_RT_CONTEXT_NULL;
  // Whole pages (aligned beyond aclrtMalloc's 512 bytes) of a memory object mapped twice.
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  simulated_acl::Allocation a{device, size, (size + page - 1) / page * page, nullptr};
  const int fd = memfd_create("simulated_acl_device_memory", MFD_CLOEXEC);
  if (fd < 0) return ACL_ERROR_BAD_ALLOC;
  void* p = MAP_FAILED;
  void* view = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(a.mapped)) == 0) {
    p = mmap(nullptr, a.mapped, PROT_NONE, MAP_SHARED, fd, 0);
    view = mmap(nullptr, a.mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  close(fd);  // the mappings keep the memory
  if (p == MAP_FAILED || view == MAP_FAILED) {
    if (p != MAP_FAILED) munmap(p, a.mapped);
    if (view != MAP_FAILED) munmap(view, a.mapped);
    return ACL_ERROR_BAD_ALLOC;
  }
  a.view = static_cast<char*>(view);
  r.allocations[reinterpret_cast<uintptr_t>(p)] = a;
  ++r.counters.mallocs;
  *devPtr = p;
  return ACL_SUCCESS;
}

aclError aclrtFree(void* devPtr) {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.allocations.find(reinterpret_cast<uintptr_t>(devPtr));
  if (it == r.allocations.end()) return ACL_ERROR_INVALID_PARAM;
  simulated_acl::FreeLocked(r, it);
  return ACL_SUCCESS;
}

namespace {

// Checks a copy's ends against its kind: device sides must be live allocations of `device`. Then
// copies, through the device sides' kernel views.
aclError Copy(int device, void* dst, size_t destMax, const void* src, size_t count,
              aclrtMemcpyKind kind) {
  if (dst == nullptr || src == nullptr || count > destMax) return ACL_ERROR_INVALID_PARAM;
  std::string why;
  const bool dst_device = kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
  const bool src_device = kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
  if (dst_device && !simulated_acl::InDeviceMemory(device, dst, count, &why)) {
    simulated_acl::SetRunError("aclrtMemcpy destination " + why);
    return ACL_ERROR_INVALID_PARAM;
  }
  if (src_device && !simulated_acl::InDeviceMemory(device, src, count, &why)) {
    simulated_acl::SetRunError("aclrtMemcpy source " + why);
    return ACL_ERROR_INVALID_PARAM;
  }
  std::memmove(dst_device ? simulated_acl::KernelView(dst) : dst,
               src_device ? simulated_acl::KernelView(src) : src, count);
  return ACL_SUCCESS;
}

}  // namespace

aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count,
                     aclrtMemcpyKind kind) {
  int32_t device = -1;
  if (aclError rc = aclrtGetDevice(&device); rc != ACL_SUCCESS) return rc;
  return Copy(device, dst, destMax, src, count, kind);
}

aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count,
                          aclrtMemcpyKind kind, aclrtStream stream) {
  int device = -1;
  if (aclError rc = simulated_acl::StreamContext(stream, &device); rc != ACL_SUCCESS) return rc;
  return simulated_acl::Enqueue(stream,
                                [=] { return Copy(device, dst, destMax, src, count, kind); });
}

aclError aclrtCreateStream(aclrtStream* stream) {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  if (stream == nullptr) return ACL_ERROR_INVALID_PARAM;
  const int device = simulated_acl::CurrentLocked(r);
  if (device < 0) return ACL_ERROR_RT_CONTEXT_NULL;
  auto* s = new simulated_acl::Stream{device, {}};
  r.streams.insert(s);
  *stream = s;
  return ACL_SUCCESS;
}

// No context check: CANN switches to the stream's context to wait for it (runtime
// src/runtime/api/impl/api_impl.cc, ApiImpl::StreamSynchronize).
aclError aclrtSynchronizeStream(aclrtStream stream) {
  Runtime& r = State();
  auto* s = static_cast<simulated_acl::Stream*>(stream);
  for (;;) {
    std::function<aclError()> task;
    {
      std::lock_guard<std::mutex> lock(r.mu);
      if (r.streams.count(s) == 0) return ACL_ERROR_RT_PARAM_INVALID;
      if (s->queue.empty()) {
        const aclError error = s->error;
        if (!s->aborted) s->error = ACL_SUCCESS;  // reported once
        const simulated_acl::Context& c = r.contexts[static_cast<size_t>(s->device)];
        return error != ACL_SUCCESS ? error : c.stop_mode ? c.failure : ACL_SUCCESS;
      }
      task = std::move(s->queue.front());
      s->queue.pop_front();
      if (s->aborted) continue;  // accepted, never run
    }
    const aclError rc = task();  // outside the lock: tasks call back into the runtime
    if (rc != ACL_SUCCESS) {
      std::lock_guard<std::mutex> lock(r.mu);
      if (s->error == ACL_SUCCESS) s->error = rc;
      simulated_acl::Context& c = r.contexts[static_cast<size_t>(s->device)];
      if (s->stop_on_failure && !s->aborted) {
        s->aborted = true;
        if (c.failure == ACL_SUCCESS) c.failure = rc;
      }
    }
  }
}

// Refused on a stream of another device than the current one, as ApiImpl::StreamDestroy checks
// the stream's context (runtime src/runtime/api/impl/api_impl.cc); waits for its tasks first.
aclError aclrtDestroyStream(aclrtStream stream) {
  int device = -1;
  if (aclError rc = simulated_acl::StreamContext(stream, &device); rc != ACL_SUCCESS) return rc;
  aclrtSynchronizeStream(stream);
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  auto* s = static_cast<simulated_acl::Stream*>(stream);
  r.streams.erase(s);
  delete s;
  return ACL_SUCCESS;
}

// ACL_STOP_ON_FAILURE puts the stream's context in stop mode too; a stream in stop mode cannot
// return to ACL_CONTINUE_ON_FAILURE (runtime src/runtime/api/impl/api_impl.cc, StreamSetMode;
// stream.cc, Stream::SetFailMode).
aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode) {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  auto* s = static_cast<simulated_acl::Stream*>(stream);
  if (r.streams.count(s) == 0) return ACL_ERROR_RT_PARAM_INVALID;
  if (simulated_acl::CurrentLocked(r) < 0) return ACL_ERROR_RT_CONTEXT_NULL;
  const bool stop = (mode & ACL_STOP_ON_FAILURE) != 0;
  if (stop == s->stop_on_failure) return ACL_SUCCESS;
  if (s->stop_on_failure) return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
  if (simulated_acl::CurrentLocked(r) != s->device) return ACL_ERROR_RT_STREAM_CONTEXT;
  s->stop_on_failure = true;
  r.contexts[static_cast<size_t>(s->device)].stop_mode = true;
  return ACL_SUCCESS;
}

}  // extern "C"
