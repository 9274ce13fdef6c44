// Throughput of a full kernel launch on the CPU AscendC implementation (not a test: no ctest).
//
// For each dtype and size: the docs/behaviour.md §3 910B tiling (48 blocks, 192 KiB UB), every
// block run on N std::threads, buffers preallocated and pre-touched, best of several launches,
// reported as GB/s over 3 * n * itemsize bytes. Beside it, a plain C++ select loop over the same
// buffers (also split over N threads) as the host's ceiling.
//   ascend_kernels_bench [dtype|all] [max-log2-size] [ub-bytes] [core-num]
// ub-bytes (default 196608, the 910B's) sizes the tiles as docs/behaviour.md §3 does, to see which
// tile size suits the host's caches; core-num (default 48) sets the tiling's block count.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tests/aligned_buffer.h"
#include "tests/kernel_fixture.h"

namespace {

using namespace kt;

uint64_t g_ub_size = kUb910B;
uint64_t g_core_num = kCores910B;
using Clock = std::chrono::steady_clock;

// x > t ? g : 0 with the contract's comparison, written the way g++ vectorises it (both loads
// unconditional, the select on bits), as a compiler would without AscendC.
template <typename T>
void PlainSelect(const T* __restrict g, const T* __restrict x, T* __restrict out, uint64_t n,
                 float t) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t>) {
    const uint16_t* __restrict gb = reinterpret_cast<const uint16_t*>(g);
    const uint16_t* __restrict xb = reinterpret_cast<const uint16_t*>(x);
    uint16_t* __restrict ob = reinterpret_cast<uint16_t*>(out);
    for (uint64_t i = 0; i < n; ++i) {
      const float xf = std::is_same_v<T, half> ? cpu_ascendc::HalfBitsToFloat(xb[i])
                                               : cpu_ascendc::Bf16BitsToFloat(xb[i]);
      const uint16_t gv = gb[i];
      ob[i] = xf > t ? gv : uint16_t{0};
    }
  } else {
    using B = std::conditional_t<sizeof(T) == 1, uint8_t,
                                 std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;
    const B* __restrict gb = reinterpret_cast<const B*>(g);
    B* __restrict ob = reinterpret_cast<B*>(out);
    const T tt = static_cast<T>(t);
    for (uint64_t i = 0; i < n; ++i) {
      const B gv = gb[i];
      ob[i] = x[i] > tt ? gv : B{0};
    }
  }
}

// A 64-byte aligned copy of `values`.
template <typename T>
test::Aligned<T> AlignedCopy(const std::vector<T>& values) {
  test::Aligned<T> buf(values.size());
  std::memcpy(buf.data(), values.data(), values.size() * sizeof(T));
  return buf;
}

template <typename F>
double BestSeconds(int reps, F f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

template <typename T>
void Bench(uint64_t n, unsigned threads) {
  std::mt19937_64 rng(1);
  // 64-byte aligned, as XLA's buffers are.
  test::Aligned<T> g = AlignedCopy(RandomValues<T>(n, rng, {}));
  test::Aligned<T> x = AlignedCopy(RandomValues<T>(n, rng, {}));
  test::Aligned<T> out = AlignedCopy(std::vector<T>(n));  // touched
  const ThresholdParams p =
      kIsInt<T> ? IntParams(ThresholdMode::kCompare, 1) : FloatParams(0.25f, 0.25);
  ascend_kernels::ThresholdGradV2DTilingData td{};
  td.dtype = Traits<T>::kCode;
  td.tiling = SpecTiling(n, sizeof(T), Traits<T>::kUbdn, g_ub_size, g_core_num);
  td.threshold = p;
  const ascend_kernels::HostLaunch launch = ascend_kernels::MakeThresholdGradV2DLaunch(
      g.data(), x.data(), /*threshold=*/nullptr, out.data(), nullptr, &td, g_ub_size);
  const uint32_t blocks = launch.block_dim;
  auto run_launch = [&] {
    if (threads <= 1) {
      for (uint32_t i = 0; i < blocks; ++i) launch.RunBlock(i);
      return;
    }
    std::vector<std::thread> pool;
    for (unsigned w = 0; w < threads; ++w) {
      pool.emplace_back([&, w] {
        for (uint32_t i = w; i < blocks; i += threads) launch.RunBlock(i);
      });
    }
    for (auto& t : pool) t.join();
  };
  auto run_plain = [&] {
    const float t = kIsInt<T> ? 1.0f : 0.25f;
    if (threads <= 1) {
      PlainSelect(g.data(), x.data(), out.data(), n, t);
      return;
    }
    std::vector<std::thread> pool;
    const uint64_t per = (n + threads - 1) / threads;
    for (unsigned w = 0; w < threads; ++w) {
      pool.emplace_back([&, w] {
        const uint64_t b = std::min<uint64_t>(n, w * per), e = std::min<uint64_t>(n, b + per);
        PlainSelect(g.data() + b, x.data() + b, out.data() + b, e - b, t);
      });
    }
    for (auto& t : pool) t.join();
  };
  const int reps = n <= (1u << 16) ? 400 : (n <= (1u << 20) ? 40 : 6);
  run_launch();
  const double tk = BestSeconds(reps, run_launch);
  run_plain();
  const double tp = BestSeconds(reps, run_plain);
  const double bytes = 3.0 * static_cast<double>(n) * sizeof(T);
  std::printf(
      "%-8s 2^%-3d thr=%u blocks=%-3u tile=%-6llu kernel %8.1f us %6.2f GB/s   plain %8.1f us "
      "%6.2f GB/s   ratio %.2f\n",
      Traits<T>::kName, static_cast<int>(std::log2(static_cast<double>(n))), threads, blocks,
      static_cast<unsigned long long>(td.tiling.tile_data_num), tk * 1e6, bytes / tk * 1e-9,
      tp * 1e6, bytes / tp * 1e-9, tp / tk);
  std::fflush(stdout);
}

template <typename T>
void BenchDtype(const char* filter, int max_log2) {
  if (filter != nullptr && std::strcmp(filter, "all") != 0 &&
      std::strcmp(filter, Traits<T>::kName) != 0)
    return;
  for (int lg : {16, 20, 22, 24}) {
    if (lg > max_log2) continue;
    for (unsigned thr : {1u, 2u}) Bench<T>(uint64_t{1} << lg, thr);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* filter = argc > 1 ? argv[1] : nullptr;
  const int max_log2 = argc > 2 ? std::atoi(argv[2]) : 24;
  if (argc > 3) g_ub_size = std::strtoull(argv[3], nullptr, 10);
  if (argc > 4) g_core_num = std::strtoull(argv[4], nullptr, 10);
  BenchDtype<float>(filter, max_log2);
  BenchDtype<half>(filter, max_log2);
  BenchDtype<bfloat16_t>(filter, max_log2);
  BenchDtype<int32_t>(filter, max_log2);
  BenchDtype<int8_t>(filter, max_log2);
  BenchDtype<uint8_t>(filter, max_log2);
  BenchDtype<int64_t>(filter, max_log2);
  BenchDtype<double>(filter, max_log2);
  return 0;
}
