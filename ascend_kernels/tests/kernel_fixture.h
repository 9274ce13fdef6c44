// Shared by the kernel tests: docs/behaviour.md §3 tiling, per-dtype traits, the scalar reference,
// and a runner that launches a kernel through host_launch.h with guarded or exact-size buffers.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "ascend_kernels/dtype_soc_table.h"
#include "ascend_kernels/float64_bits.h"
#include "ascend_kernels/host_launch.h"
#include "ascend_kernels/kernel_args.h"
#include "ascendc_types.h"

namespace kt {

using ascend_kernels::Dtype;
using ascend_kernels::ElementwiseTiling;
using ascend_kernels::Soc;
using ascend_kernels::ThresholdMode;
using ascend_kernels::ThresholdParams;

// docs/behaviour.md §3, verbatim.
inline ElementwiseTiling SpecTiling(uint64_t n, uint64_t bytes, uint64_t ub_data_number,
                                    uint64_t ub_size, uint64_t core_num) {
  ElementwiseTiling t{};
  const uint64_t tile_block_num = (ub_size / 256) / ub_data_number;
  const uint64_t tile_data_num = tile_block_num * 256 / bytes;
  const uint64_t total_blocks = (n * bytes + 255) / 256;
  const uint64_t cores = tile_data_num >= n ? 1 : std::min(core_num, total_blocks);
  const uint64_t every = total_blocks / cores;
  t.total_num = n;
  t.block_dim = cores;
  t.tiling_key = 0;
  t.tile_data_num = tile_data_num;
  t.tail_block_num = total_blocks % cores;
  auto fill = [&](uint64_t blocks, uint64_t* data, uint64_t* tiles, uint64_t* tail) {
    *data = blocks * 256 / bytes;
    *tiles = (blocks + tile_block_num - 1) / tile_block_num;
    *tail = *data - tile_data_num * (blocks / tile_block_num);
    if (*tail == 0) *tail = tile_data_num;
  };
  fill(every, &t.small_core_data_num, &t.final_small_tile_num, &t.small_tail_data_num);
  fill(every + 1, &t.big_core_data_num, &t.final_big_tile_num, &t.big_tail_data_num);
  return t;
}

// A hand-written tiling of 1001 elements on 3 cores whose cores cover more than total_num, with
// 128-element tiles (half a 256-byte repeat of bytes) and a tail not a multiple of 32 bytes.
inline ElementwiseTiling HandTiling1001() {
  ElementwiseTiling t{};
  t.total_num = 1001;
  t.block_dim = 3;
  t.tile_data_num = 128;
  t.tail_block_num = 1;
  t.big_core_data_num = 384;
  t.final_big_tile_num = 3;
  t.big_tail_data_num = 128;
  t.small_core_data_num = 320;
  t.final_small_tile_num = 3;
  t.small_tail_data_num = 64;
  return t;
}

// The row of the kernel dtype whose C type is T.
template <typename T, int I = 0>
constexpr Dtype DtypeOf() {
  static_assert(I < ascend_kernels::kDtypeCount, "no kernel dtype has this C type");
  constexpr ascend_kernels::DtypeRow kRow = ascend_kernels::kDtypes[I];
  if constexpr (kRow.ub_divisor != 0 && std::is_same_v<ascend_kernels::CType<kRow.dtype>, T>) {
    return kRow.dtype;
  } else {
    return DtypeOf<T, I + 1>();
  }
}

// A kernel element type's facts, from its row of the dtype table.
template <typename T>
struct Traits {
  static constexpr Dtype kD = DtypeOf<T>();
  static constexpr int32_t kCode = static_cast<int32_t>(kD);
  static constexpr uint64_t kUbdn = ascend_kernels::DtypeRowOf(kCode).ub_divisor;
  static constexpr const char* kName = ascend_kernels::DtypeRowOf(kCode).name;
};

// The Ascend910B's UB (192 KiB) and core count.
constexpr uint64_t kUb910B = ascend_kernels::SocRowOf(Soc::kAscend910B).ub_bytes;
constexpr uint64_t kCores910B = ascend_kernels::SocRowOf(Soc::kAscend910B).default_cores;

// The platform a test tiles for on `soc`: its row's UB and cores. The host row leaves both to its
// caller; the tests give it a UB no SoC has and a few cores.
struct Platform {
  uint64_t ub;
  uint64_t cores;
};
constexpr Platform PlatformOf(Soc soc) {
  const ascend_kernels::SocRow& row = ascend_kernels::SocRowOf(soc);
  return row.ub_bytes != 0 ? Platform{row.ub_bytes, row.default_cores} : Platform{64 * 1024, 8};
}
inline const char* SocName(Soc soc) { return ascend_kernels::SocRowOf(soc).name; }

// The SoC rows the kernels run on, and those that run operator `op`'s kernel of T.
inline std::vector<Soc> RunnableSocs() {
  std::vector<Soc> socs;
  for (const ascend_kernels::SocRow& row : ascend_kernels::kSocs) {
    if (row.refusal == nullptr) socs.push_back(row.soc);
  }
  return socs;
}
template <typename T>
std::vector<Soc> SocsRunning(ascend_kernels::KernelOp op) {
  std::vector<Soc> socs;
  for (Soc soc : RunnableSocs()) {
    if (ascend_kernels::SocRunsKernel(soc, op, Traits<T>::kCode)) socs.push_back(soc);
  }
  return socs;
}

template <typename T>
constexpr bool kIsInt = std::is_integral_v<T>;

template <typename T>
inline double ToDouble(T v) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t>)
    return static_cast<float>(v);
  else
    return static_cast<double>(v);
}
template <typename T>
inline T FromDouble(double d) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t>)
    return T(static_cast<float>(d));
  else
    return static_cast<T>(d);
}

// The contract (docs/behaviour.md §1) element by element, independent of the kernels' tricks.
template <typename T>
inline bool Passes(T x, const ThresholdParams& p) {
  if constexpr (kIsInt<T>) {
    switch (static_cast<ThresholdMode>(p.mode)) {
      case ThresholdMode::kAllPass:
        return true;
      case ThresholdMode::kNonePass:
        return false;
      default:
        return static_cast<int64_t>(x) > p.threshold_int;
    }
  } else if constexpr (std::is_same_v<T, double>) {
    return x > ascend_kernels::Float64FromBits(p.threshold_f64_bits);
  } else {
    return static_cast<float>(x) > p.threshold_f32;  // widened to float32
  }
}

inline ThresholdParams FloatParams(float t, double t64) {
  ThresholdParams p{};
  p.mode = static_cast<int32_t>(ThresholdMode::kCompare);
  p.threshold_f32 = t;
  p.threshold_f64_bits = ascend_kernels::Float64ToBits(t64);
  return p;
}
inline ThresholdParams IntParams(ThresholdMode mode, int64_t t) {
  ThresholdParams p{};
  p.mode = static_cast<int32_t>(mode);
  p.threshold_int = t;
  return p;
}
inline ThresholdParams ZeroParams() { return IntParams(ThresholdMode::kCompare, 0); }

// Random values with the interesting ones mixed in: thresholds, signed zeros, inf, NaN, extremes.
template <typename T>
inline std::vector<T> RandomValues(uint64_t n, std::mt19937_64& rng,
                                   const std::vector<T>& specials) {
  std::vector<T> v(n);
  std::uniform_int_distribution<int> pick(0, 3);
  for (uint64_t i = 0; i < n; ++i) {
    if (!specials.empty() && pick(rng) == 0) {
      v[i] = specials[rng() % specials.size()];
    } else if constexpr (kIsInt<T>) {
      uint64_t bits = rng();
      std::memcpy(&v[i], &bits, sizeof(T));
    } else {
      v[i] = FromDouble<T>(std::uniform_real_distribution<double>(-4.0, 4.0)(rng));
    }
  }
  return v;
}

template <typename T>
inline std::vector<T> Specials() {
  if constexpr (kIsInt<T>) {
    const int64_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    std::vector<T> s = {T(lo), T(lo + 1), T(hi - 1), T(hi), T(0), T(1), T(2), T(3)};
    if constexpr (sizeof(T) >= 4) {
      for (int64_t v : {int64_t(1) << 24, (int64_t(1) << 24) + 1, (int64_t(1) << 24) - 1,
                        -(int64_t(1) << 24), -(int64_t(1) << 24) - 1, int64_t(-1)})
        s.push_back(T(v));
    }
    if constexpr (std::is_signed_v<T>) s.push_back(T(-1));
    return s;
  } else {
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<T> s = {FromDouble<T>(0.0),  FromDouble<T>(-0.0),         FromDouble<T>(0.5),
                        FromDouble<T>(1.0),  FromDouble<T>(-0.5),         FromDouble<T>(inf),
                        FromDouble<T>(-inf), FromDouble<T>(std::nan("")), FromDouble<T>(1e-9),
                        FromDouble<T>(-1e-9)};
    if constexpr (std::is_same_v<T, half>) {
      s.push_back(half::FromBits(0x3c01));  // 1 + 2^-10
      s.push_back(half::FromBits(0x0001));  // smallest subnormal
      s.push_back(half::FromBits(0x7c01));  // signalling NaN payload
      s.push_back(half::FromBits(0xfe42));  // negative NaN payload
    } else if constexpr (std::is_same_v<T, bfloat16_t>) {
      s.push_back(bfloat16_t::FromBits(0x3f81));
      s.push_back(bfloat16_t::FromBits(0x7f81));
    } else if constexpr (std::is_same_v<T, float>) {
      s.push_back(std::nextafter(1.0f, 2.0f));
      s.push_back(std::numeric_limits<float>::denorm_min());
    }
    return s;
  }
}

// Launch memory: exact-size heap blocks (ASan sees any overrun), or `out` inside a larger block
// with guard bytes before and after it (checked afterwards, with or without ASan).
template <typename T>
struct LaunchResult {
  std::vector<T> out;
  bool guards_intact = true;
};

// The SoC a kernel test runs under unless it names one: the Ascend910B (so a test's UB is the
// 184 KiB dav_c220 lets a kernel use) where it runs T's kernels, else the host.
template <typename T>
constexpr Soc DefaultSoc() {
  return ascend_kernels::SocRunsKernel(
             Soc::kAscend910B, ascend_kernels::KernelOp::kThresholdGradV2D, Traits<T>::kCode)
             ? Soc::kAscend910B
             : Soc::kHost;
}

// The launches Run made since the log was last cleared, for the sweeps that claim every SoC row
// (EveryRowRan).
struct Launched {
  Soc soc;
  ascend_kernels::KernelOp op;
  int32_t dtype;
  uint64_t ub;
  uint64_t block_dim;
};
inline std::vector<Launched>& LaunchLog() {
  static std::vector<Launched> log;
  return log;
}

// "" if `log` holds a launch of operator `op`'s kernel of `dtype` under every SoC row that runs
// it and, with `own_platform`, one of them on the row's own UB and with all its cores
// (PlatformOf), as a sweep that claims every row must; else what is missing.
inline std::string EveryRowRan(const std::vector<Launched>& log, ascend_kernels::KernelOp op,
                               int32_t dtype, bool own_platform) {
  for (const ascend_kernels::SocRow& row : ascend_kernels::kSocs) {
    if (!ascend_kernels::SocRunsKernel(row.soc, op, dtype)) continue;
    const Platform platform = PlatformOf(row.soc);
    bool ran = false;
    for (const Launched& l : log) {
      ran = ran || (l.soc == row.soc && l.op == op && l.dtype == dtype &&
                    (!own_platform || (l.ub == platform.ub && l.block_dim == platform.cores)));
    }
    if (!ran) {
      return std::string(ascend_kernels::KernelOpName(op)) + " of " +
             ascend_kernels::DtypeName(dtype) + " never ran on " + row.name +
             (own_platform ? " with its own UB and all its cores" : "");
    }
  }
  return "";
}

template <typename T>
inline LaunchResult<T> Run(bool relu, const std::vector<T>& grad, const std::vector<T>& x,
                           const ThresholdParams& p, const ElementwiseTiling& tiling,
                           uint64_t ub_size, unsigned threads, bool guarded,
                           Soc soc = DefaultSoc<T>()) {
  LaunchLog().push_back(
      {soc,
       relu ? ascend_kernels::KernelOp::kReluGrad : ascend_kernels::KernelOp::kThresholdGradV2D,
       Traits<T>::kCode, ub_size, tiling.block_dim});
  const uint64_t n = grad.size();
  std::unique_ptr<T[]> g(new T[n]), f(new T[n]);
  std::memcpy(g.get(), grad.data(), n * sizeof(T));
  std::memcpy(f.get(), x.data(), n * sizeof(T));
  constexpr uint64_t kGuard = 256;  // bytes each side, keeps out 256-byte aligned within the block
  std::unique_ptr<uint8_t[]> block(
      new uint8_t[guarded ? n * sizeof(T) + 2 * kGuard : n * sizeof(T)]);
  const uint64_t block_bytes = guarded ? n * sizeof(T) + 2 * kGuard : n * sizeof(T);
  std::memset(block.get(), 0xA5, block_bytes);
  T* out = reinterpret_cast<T*>(block.get() + (guarded ? kGuard : 0));

  ascend_kernels::ThresholdGradV2DTilingData td{};
  ascend_kernels::ReluGradTilingData rd{};
  td.dtype = rd.dtype = Traits<T>::kCode;
  td.tiling = rd.tiling = tiling;
  td.threshold = p;
  ascend_kernels::HostLaunch launch =
      relu ? ascend_kernels::MakeReluGradLaunch(g.get(), f.get(), out, nullptr, &rd, ub_size, soc)
           : ascend_kernels::MakeThresholdGradV2DLaunch(g.get(), f.get(), /*threshold=*/nullptr,
                                                        out, nullptr, &td, ub_size, soc);
  if (threads <= 1) {
    for (uint32_t i = 0; i < launch.block_dim; ++i) launch.RunBlock(i);
  } else {
    std::vector<std::thread> pool;
    for (unsigned w = 0; w < threads; ++w) {
      pool.emplace_back([&, w] {
        for (uint32_t i = launch.block_dim - 1 - w; i < launch.block_dim;
             i -= threads) {  // reverse order
          launch.RunBlock(i);
        }
      });
    }
    for (auto& t : pool) t.join();
  }
  LaunchResult<T> r;
  r.out.assign(out, out + n);
  if (guarded) {
    for (uint64_t i = 0; i < kGuard; ++i) {
      if (block[i] != 0xA5 || block[kGuard + n * sizeof(T) + i] != 0xA5) r.guards_intact = false;
    }
  }
  return r;
}

}  // namespace kt
