#include "xla_ffi/ffi_probe_select.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "xla/ffi/api/ffi.h"
#include "xla_ffi/ffi_error.h"
#include "xla_ffi/ffi_handler.h"
#include "xla_ffi/xla_thread_pool_stream.h"  // header-only

namespace jax_threshold::ffi_handler {
namespace {

namespace ffi = ::xla::ffi;

// The loop a compiler writes for x > t ? g : 0, in the widest vector ISA the host has. Both
// loads are unconditional (a conditional load of g keeps g++ from vectorising: a branch per
// element, mispredicted on random data).
__attribute__((target_clones("avx512f", "avx2", "default"))) void PlainSelect(
    const float* __restrict g, const float* __restrict x, float* __restrict out, int64_t n,
    float t) {
  for (int64_t i = 0; i < n; ++i) {
    const float gv = g[i];
    out[i] = x[i] > t ? gv : 0.0f;
  }
}

// What a pooled probe call keeps alive until its last block has finished.
struct ProbeCall {
  std::unique_ptr<XlaThreadPoolStream> stream;
  std::optional<ffi::CountDownPromise> done;
};

ffi::Future ProbeSelectCpu(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> grad,
                           ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> out,
                           double threshold) {
  const int64_t n = static_cast<int64_t>(out->element_count());
  if (static_cast<int64_t>(grad.element_count()) != n ||
      static_cast<int64_t>(x.element_count()) != n) {
    return ReadyFuture(ffi::Error::InvalidArgument(
        "jax_threshold_probe_select_v1: grad, x and out must have the same element count"));
  }
  const float* g = grad.typed_data();
  const float* xs = x.typed_data();
  float* o = out->typed_data();
  const float t = static_cast<float>(threshold);
  return RunProbeBlocks(pool, static_cast<uint64_t>(n) * sizeof(float),
                        [g, xs, o, n, t](int64_t b, int64_t blocks) {
                          const int64_t begin = n * b / blocks, end = n * (b + 1) / blocks;
                          PlainSelect(g + begin, xs + begin, o + begin, end - begin, t);
                        });
}

}  // namespace

ffi::Future RunProbeBlocks(ffi::ThreadPool& pool, uint64_t out_bytes,
                           std::function<void(int64_t block, int64_t blocks)> block) {
  const HostSplit split = SplitHostCall(pool.num_threads(), out_bytes);
  if (split.run_inline) {
    block(0, 1);
    return ReadyFuture(ffi::Error::Success());
  }
  const int64_t workers = split.workers, blocks = split.blocks;
  auto call = std::make_shared<ProbeCall>();
  call->stream = std::make_unique<XlaThreadPoolStream>(&pool, static_cast<uint32_t>(workers));
  call->stream->SetOwner(call);
  call->done.emplace(1);
  ffi::Future future(*call->done);
  ProbeCall* raw = call.get();  // the launch keeps `call` alive until `done` has returned
  call->stream->Launch(
      static_cast<uint32_t>(blocks), [block, blocks](uint32_t b) { block(b, blocks); },
      [raw] { raw->done->CountDown(1); });
  call->stream->Close();
  call->stream->WaitFinished(kFinishPoll);
  return future;
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxThresholdProbeSelectCpu, ProbeSelectCpu,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<xla::ffi::ThreadPool>()
                                  .Arg<xla::ffi::Buffer<xla::ffi::F32>>()  // grad
                                  .Arg<xla::ffi::Buffer<xla::ffi::F32>>()  // x
                                  .Ret<xla::ffi::Buffer<xla::ffi::F32>>()
                                  .Attr<double>("threshold"));

XLA_FFI_Handler* ProbeSelectCpuHandler() { return JaxThresholdProbeSelectCpu; }

}  // namespace jax_threshold::ffi_handler
