// Where kernel blocks run on the host: a synchronous runner (calling thread + persistent workers)
// and the host platform it tiles for.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "jax_threshold/aclnn_threshold_backward.h"

namespace jax_threshold::aclnn {

// The UB size host launches tile for (docs/behaviour.md §3's formula with this ub_size): 64 KiB
// gives tiles of 9 KiB (float32: 2304 elements), so what a block touches of its UB (input and
// output buffers, mask, the widening scratch) stays in the host core's L1 and L2, where the 910B's
// 192 KiB spills (benchmarks/README.md, "Why the host tiles for a 64 KiB UB").
inline constexpr uint64_t kHostUbSize = 64 * 1024;

// Blocks ("cores") the host platform tiles for per hardware thread: the synchronous runner's
// threads claim blocks dynamically, so a thread that starts late (a busy machine) takes fewer of
// them instead of holding up the call.
inline constexpr uint32_t kHostBlocksPerThread = 4;

// The host platform: kHost dtype list, kHostUbSize, kHostBlocksPerThread "cores" per hardware
// thread.
PlatformInfo HostPlatformInfo();

// Runs block(i) for every i in [0, n) on the calling thread plus up to max_threads - 1 of the
// process's persistent block workers (0: hardware_concurrency; the workers, hardware threads - 1
// of them, are started on first use, poll briefly for the next job and then park), and returns
// when all have finished. Safe to call from many threads at once. An exception from a block is
// caught; the first one's message is returned (empty string: all blocks succeeded).
std::string RunBlocksSynchronously(uint32_t n, const std::function<void(uint32_t)>& block,
                                   uint32_t max_threads = 0);

}  // namespace jax_threshold::aclnn
