#include "xla_ffi/ffi_probe_passes.h"

#include <algorithm>
#include <cstdint>

#include "ascend_kernels/host_launch.h"  // kStreamStoreMinBytes
#include "bench/pass_model.h"
#include "xla/ffi/api/ffi.h"
#include "xla_ffi/ffi_error.h"
#include "xla_ffi/ffi_handler.h"  // kHostUbSize
#include "xla_ffi/ffi_probe_select.h"  // RunProbeBlocks

namespace jax_threshold::ffi_handler {
namespace {

namespace ffi = ::xla::ffi;
namespace bench = ::ascend_kernels::bench;

// The host tile of T (the kernel's tiling at kHostUbSize), and the UB stand-in it needs.
template <typename T>
constexpr uint64_t HostTile() {
  return bench::SpecTileElements(kHostUbSize, bench::PassModelUbDataNumber<T>(), sizeof(T));
}
template <typename T>
constexpr uint64_t HostScratchBytes() {
  return bench::PassModelScratchBytes<T>(HostTile<T>());
}
constexpr uint64_t kScratchBytes =
    std::max({HostScratchBytes<float>(), HostScratchBytes<uint16_t>(), HostScratchBytes<int8_t>()});

// The calling thread's UB stand-in: fixed size, so a block never allocates.
uint8_t* ThreadScratch() {
  alignas(64) thread_local uint8_t scratch[kScratchBytes];
  return scratch;
}

// T: float, uint16_t (bfloat16 bits) or int8_t. Tiles as the host UB tiles the kernel.
template <typename T>
ffi::Future Run(ffi::ThreadPool& pool, const void* grad, const void* x, void* out, int64_t n,
                float t) {
  constexpr uint64_t tile = HostTile<T>();
  const bool stream = static_cast<uint64_t>(n) * sizeof(T) >= ::ascend_kernels::kStreamStoreMinBytes;
  const T* g = static_cast<const T*>(grad);
  const T* xs = static_cast<const T*>(x);
  T* o = static_cast<T*>(out);
  return RunProbeBlocks(pool, static_cast<uint64_t>(n) * sizeof(T),
                        [g, xs, o, n, t, stream](int64_t b, int64_t blocks) {
                          // Blocks start on 256-element steps, so only the last has a tail.
                          const int64_t begin = n * b / blocks / 256 * 256;
                          const int64_t end = b + 1 == blocks ? n : n * (b + 1) / blocks / 256 * 256;
                          if (end <= begin) return;
                          bench::PassModelAll(g + begin, xs + begin, o + begin,
                                              static_cast<uint64_t>(end - begin), tile, t,
                                              ThreadScratch(), stream);
                          if (stream) cpu_ascendc::loops::StoreFence();
                        });
}

ffi::Future ProbePassesCpu(ffi::ThreadPool pool, ffi::AnyBuffer grad, ffi::AnyBuffer x,
                           ffi::Result<ffi::AnyBuffer> out, double threshold) {
  const int64_t n = static_cast<int64_t>(out->element_count());
  if (grad.element_type() != out->element_type() || x.element_type() != out->element_type() ||
      static_cast<int64_t>(grad.element_count()) != n ||
      static_cast<int64_t>(x.element_count()) != n) {
    return ReadyFuture(ffi::Error::InvalidArgument(
        "jax_threshold_probe_passes_v1: grad, x and out must have one dtype and element count"));
  }
  const float t = static_cast<float>(threshold);
  switch (out->element_type()) {
    case ffi::DataType::F32:
      return Run<float>(pool, grad.untyped_data(), x.untyped_data(), out->untyped_data(), n, t);
    case ffi::DataType::BF16:
      return Run<uint16_t>(pool, grad.untyped_data(), x.untyped_data(), out->untyped_data(), n, t);
    case ffi::DataType::S8:
      return Run<int8_t>(pool, grad.untyped_data(), x.untyped_data(), out->untyped_data(), n, t);
    default:
      return ReadyFuture(ffi::Error::InvalidArgument(
          "jax_threshold_probe_passes_v1: float32, bfloat16 and int8 only"));
  }
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxThresholdProbePassesCpu, ProbePassesCpu,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<xla::ffi::ThreadPool>()
                                  .Arg<xla::ffi::AnyBuffer>()  // grad
                                  .Arg<xla::ffi::AnyBuffer>()  // x
                                  .Ret<xla::ffi::AnyBuffer>()
                                  .Attr<double>("threshold"));

XLA_FFI_Handler* ProbePassesCpuHandler() { return JaxThresholdProbePassesCpu; }

}  // namespace jax_threshold::ffi_handler
