// The pass model: ThresholdGradV2D's per-tile passes on the host with none of the emulation's
// bookkeeping. A benchmark tool, not the operator.
//
// Per tile it runs the loops the CPU AscendC primitives run (cpu_ascendc/vector_loops.h), in the
// order ThresholdSelect and SelectKernel call them, on `scratch` standing in for UB, inputs read
// from GM as the deferred copies do, and the deferred vector ops' shortcuts as the primitives
// take them (cpu_ascendc/deferred_vector_op.h: the compare of a widened x from x's own bits on
// AVX-512 hosts, a streamed output's select straight into GM). No queues, no checks, no deferred-copy list: the fastest
// this kernel's shape can run on the host. `kernel / passes` is what the emulation's bookkeeping
// costs; `passes / a fused loop` what the shape costs. Used by the kernel microbenchmark
// (bench/kernel_bench.cpp) and by the benchmark-only custom call probe_passes
// (cpp/xla_ffi/ffi_probe_select.h), which holds the FFI goals against it in the same run.
//
// float32, bfloat16 and int8 only: the dtypes the speed goals name.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "vector_loops.h"

namespace ascend_kernels::bench {

// docs/behaviour.md §3: the tile (elements) the tiling gives for `ub_size` and `ub_data_number`.
constexpr uint64_t SpecTileElements(uint64_t ub_size, uint64_t ub_data_number, uint64_t element_bytes) {
  return (ub_size / 256) / ub_data_number * 256 / element_bytes;
}

// The tiling's ub_data_number of the modelled dtypes (float32 7, bfloat16 10, int8 14).
template <typename T>
constexpr uint64_t PassModelUbDataNumber() {
  return std::is_same_v<T, float> ? 7 : std::is_same_v<T, int8_t> ? 14 : 10;
}

// Bytes of UB stand-in PassModel needs for tiles of `tile` elements of T.
template <typename T>
constexpr uint64_t PassModelScratchBytes(uint64_t tile) {
  return 2 * (tile * sizeof(T) + 64) + (tile / 8 + 64) + tile * 4 + 64;
}

// out = x > t ? g : 0 over n elements in tiles of `tile` (a multiple of 64 elements), the
// kernel's passes per tile. n must be a multiple of 256 (the loops' whole steps; the kernel
// rounds its counts up instead, which GM cannot). `stream`: UB -> GM copies with non-temporal
// stores, as a launch with kStreamStoreMinBytes of output makes them. False for other dtypes.
// The uint16_t bits of bfloat16 are passed as T = uint16_t.
template <typename T>
bool PassModel(const T* g, const T* x, T* out, uint64_t n, uint64_t tile, float t, uint8_t* scratch,
               bool stream) {
  namespace loops = cpu_ascendc::loops;
  using AscendC::CMPMODE;
  constexpr uint64_t kWideChunk = 2048;  // ThresholdSelect::kWideChunk
  auto round64 = [](uint64_t bytes) { return (bytes + 63) / 64 * 64; };
  auto copy_out = [stream](void* dst, const void* src, uint64_t bytes) {
    if (stream) {
      loops::StreamCopyBytes(dst, src, bytes);
    } else {
      loops::CopyBytes(dst, src, bytes);
    }
  };
  // The select of a GM-read grad into UB and the copy-out; for a streamed output, the select
  // straight into GM at the copy-out (deferred_vector_op.h).
  auto select_out = [stream, &copy_out](auto* dst, const uint8_t* mask, const auto* src, uint64_t count,
                                        uint8_t* ub) {
    using B = std::remove_const_t<std::remove_pointer_t<decltype(src)>>;
    if (stream) {
      loops::StreamSelectBits(dst, mask, src, B{0}, count);
    } else {
      loops::SelectBits(reinterpret_cast<B*>(ub), mask, src, B{0}, count);
      copy_out(dst, ub, count * sizeof(B));
    }
  };
  // The compare of a widened x reads x's narrow bits on AVX-512 hosts (the deferred Cast).
  const bool narrow_compare = loops::BestIsa() == loops::Isa::kAvx512;
  uint8_t* out_ub[2] = {scratch, scratch + round64(tile * sizeof(T))};
  uint8_t* mask = out_ub[1] + round64(tile * sizeof(T));
  uint8_t* wide = mask + round64(tile / 8 + 1);
  int k = 0;
  if constexpr (std::is_same_v<T, float>) {
    for (uint64_t b = 0; b < n; b += tile, k ^= 1) {
      const uint64_t m = std::min(tile, n - b);
      loops::CompareBits<CMPMODE::GT, float>(mask, x + b, t, m);
      select_out(reinterpret_cast<uint32_t*>(out + b), mask, reinterpret_cast<const uint32_t*>(g + b), m,
                 out_ub[k]);
    }
    return true;
  } else if constexpr (std::is_same_v<T, uint16_t>) {  // bfloat16 bits
    // A whole tile widened per chunk, at most kWideChunk (ThresholdSelect::Init for bfloat16).
    const uint64_t chunk = std::clamp<uint64_t>(tile / 256 * 256, 256, kWideChunk);
    for (uint64_t b = 0; b < n; b += tile, k ^= 1) {
      const uint64_t m = std::min(tile, n - b);
      for (uint64_t c = 0; c < m; c += chunk) {
        const uint64_t cm = std::min(chunk, m - c);
        if (narrow_compare) {
          loops::CompareBf16Bits<CMPMODE::GT>(mask + c / 8, x + b + c, t, cm);
        } else {
          loops::Bf16ToFloat(reinterpret_cast<float*>(wide), x + b + c, cm);
          loops::CompareBits<CMPMODE::GT, float>(mask + c / 8, reinterpret_cast<const float*>(wide), t, cm);
        }
      }
      select_out(out + b, mask, g + b, m, out_ub[k]);
    }
    return true;
  } else if constexpr (std::is_same_v<T, int8_t>) {
    const uint64_t chunk = std::min(tile, kWideChunk);
    uint16_t* x_half = reinterpret_cast<uint16_t*>(wide);
    uint16_t* minus_one = x_half + chunk;
    std::fill(minus_one, minus_one + chunk, uint16_t{0xbc00});  // -1.0h
    for (uint64_t b = 0; b < n; b += tile, k ^= 1) {
      const uint64_t m = std::min(tile, n - b);
      int8_t* keep = reinterpret_cast<int8_t*>(out_ub[k]);
      for (uint64_t c = 0; c < m; c += chunk) {
        const uint64_t cm = std::min(chunk, m - c);
        if (narrow_compare) {
          loops::CompareByteIntBits<CMPMODE::GT>(mask, x + b + c, t, cm);
        } else {
          loops::ByteIntToHalf(x_half, x + b + c, cm);
          loops::CompareHalfBits<CMPMODE::GT>(mask, x_half, t, cm);
        }
        loops::SelectBits(x_half, mask, minus_one, uint16_t{0}, cm);
        loops::HalfToByteIntRint(keep + c, x_half, cm);
        loops::Zip(reinterpret_cast<int16_t*>(keep + c), reinterpret_cast<const int16_t*>(keep + c),
                   reinterpret_cast<const int16_t*>(g + b + c), cm / 2, loops::ZipAlias::kDstX,
                   [](int16_t a, int16_t v) { return static_cast<int16_t>(a & v); });
      }
      copy_out(out + b, out_ub[k], m * sizeof(T));
    }
    return true;
  } else {
    (void)g, (void)x, (void)out, (void)n, (void)tile, (void)t, (void)scratch, (void)k, (void)select_out, (void)narrow_compare;
    return false;
  }
}

// PassModel over any n: the whole 256-element steps through the passes, the rest (< 256
// elements) by a scalar loop with the same comparison, so every element is computed.
template <typename T>
bool PassModelAll(const T* g, const T* x, T* out, uint64_t n, uint64_t tile, float t, uint8_t* scratch,
                  bool stream) {
  const uint64_t whole = n / 256 * 256;
  if (whole > 0 && !PassModel(g, x, out, whole, tile, t, scratch, stream)) return false;
  for (uint64_t i = whole; i < n; ++i) {
    float v;
    if constexpr (std::is_same_v<T, uint16_t>) {
      v = cpu_ascendc::Bf16BitsToFloat(x[i]);
    } else {
      v = static_cast<float>(x[i]);
    }
    out[i] = v > t ? g[i] : T{0};
  }
  return true;
}

}  // namespace ascend_kernels::bench
