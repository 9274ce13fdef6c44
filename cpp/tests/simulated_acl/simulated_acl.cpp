// SIMULATION, test code only: the simulated ACL runtime (simulated_acl.h).
#include "simulated_acl.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>

namespace simulated_acl {
namespace {

struct Allocation {
  int device;
  uint64_t bytes;
  size_t mapped;  // bytes mapped: `bytes` rounded up to whole pages
};

struct Stream {
  int device;
  std::deque<std::function<aclError()>> queue;
  aclError error = ACL_SUCCESS;
};

struct Runtime {
  std::mutex mu;
  uint64_t generation = 1;
  std::vector<DeviceSpec> devices{DeviceSpec{}};
  std::map<uintptr_t, Allocation> allocations;  // by start address
  std::set<Stream*> streams;
  int failing_launches = 0;
  aclError failure_code = ACL_SUCCESS;
  std::set<std::string> dead_kernels;
  Counters counters;
  std::string last_run_error;
  int open_accesses = 0;  // DeviceAccess scopes alive: while > 0, device memory is accessible
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

// Makes the allocation at `start` accessible to host code (PROT_READ | PROT_WRITE) or not at all
// (PROT_NONE). A failure leaves the simulation unable to keep its promise: it aborts.
void Protect(uintptr_t start, const Allocation& a, int prot) {
  if (mprotect(reinterpret_cast<void*>(start), a.mapped, prot) != 0) {
    std::perror("simulated_acl: mprotect");
    std::abort();
  }
}

int AccessLocked(const Runtime& r) {
  return r.open_accesses > 0 ? PROT_READ | PROT_WRITE : PROT_NONE;
}

// Unmapped, so that any later use of the pointer by host code faults.
void FreeLocked(Runtime& r, std::map<uintptr_t, Allocation>::iterator it) {
  munmap(reinterpret_cast<void*>(it->first), it->second.mapped);
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
  ++r.generation;
  r.failing_launches = 0;
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

DeviceAccess::DeviceAccess() {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.open_accesses++ == 0) {
    for (const auto& [start, a] : r.allocations) Protect(start, a, PROT_READ | PROT_WRITE);
  }
}

DeviceAccess::~DeviceAccess() {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  if (--r.open_accesses == 0) {
    for (const auto& [start, a] : r.allocations) Protect(start, a, PROT_NONE);
  }
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

const char* aclrtGetSocName() {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  const int device = simulated_acl::CurrentLocked(r);
  return device < 0 ? nullptr : r.devices[static_cast<size_t>(device)].soc_name.c_str();
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
  // Its own pages (aligned beyond aclrtMalloc's 512 bytes), inaccessible to host code outside a
  // DeviceAccess scope.
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const simulated_acl::Allocation a{device, size, (size + page - 1) / page * page};
  void* p = mmap(nullptr, a.mapped, AccessLocked(r), MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return ACL_ERROR_BAD_ALLOC;
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

// Checks a copy's ends against its kind: device sides must be live allocations of `device`.
aclError CheckCopy(int device, void* dst, size_t destMax, const void* src, size_t count,
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
  return ACL_SUCCESS;
}

}  // namespace

aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count,
                     aclrtMemcpyKind kind) {
  int32_t device = -1;
  if (aclError rc = aclrtGetDevice(&device); rc != ACL_SUCCESS) return rc;
  if (aclError rc = CheckCopy(device, dst, destMax, src, count, kind); rc != ACL_SUCCESS) {
    return rc;
  }
  const simulated_acl::DeviceAccess access;
  std::memmove(dst, src, count);
  return ACL_SUCCESS;
}

aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count,
                          aclrtMemcpyKind kind, aclrtStream stream) {
  int device = -1;
  if (aclError rc = simulated_acl::StreamContext(stream, &device); rc != ACL_SUCCESS) return rc;
  return simulated_acl::Enqueue(stream, [=] {
    if (aclError rc = CheckCopy(device, dst, destMax, src, count, kind); rc != ACL_SUCCESS) {
      return rc;
    }
    const simulated_acl::DeviceAccess access;
    std::memmove(dst, src, count);
    return ACL_SUCCESS;
  });
}

aclError aclrtCreateStream(aclrtStream* stream) {
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  if (stream == nullptr) return ACL_ERROR_INVALID_PARAM;
  const int device = simulated_acl::CurrentLocked(r);
  if (device < 0) return ACL_ERROR_RT_CONTEXT_NULL;
  auto* s = new simulated_acl::Stream{device, {}, ACL_SUCCESS};
  r.streams.insert(s);
  *stream = s;
  return ACL_SUCCESS;
}

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
        s->error = ACL_SUCCESS;
        return error;
      }
      task = std::move(s->queue.front());
      s->queue.pop_front();
      if (s->error != ACL_SUCCESS) continue;  // a failed stream runs nothing more
    }
    const aclError rc = task();  // outside the lock: tasks call back into the runtime
    if (rc != ACL_SUCCESS) {
      std::lock_guard<std::mutex> lock(r.mu);
      s->error = rc;
    }
  }
}

aclError aclrtDestroyStream(aclrtStream stream) {
  const aclError rc = aclrtSynchronizeStream(stream);  // CANN waits for the stream's tasks too
  if (rc == ACL_ERROR_RT_PARAM_INVALID) return rc;
  Runtime& r = State();
  std::lock_guard<std::mutex> lock(r.mu);
  auto* s = static_cast<simulated_acl::Stream*>(stream);
  r.streams.erase(s);
  delete s;
  return ACL_SUCCESS;
}

}  // extern "C"
