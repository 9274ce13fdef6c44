// aclnn::PoolStream over XLA's CPU intra-op pool (the executor's thread-pool stream kind).
#pragma once

#include <cstdint>
#include <functional>
#include <utility>

#include "aclnn/pool_stream.h"
#include "xla/ffi/api/ffi.h"

namespace jax_threshold::ffi_handler {

class XlaThreadPoolStream final : public aclnn::PoolStream {
 public:
  // `pool` may be null: everything then runs inline. It must outlive Close().
  XlaThreadPoolStream(xla::ffi::ThreadPool* pool, uint32_t num_workers)
      : PoolStream(pool == nullptr ? Schedule() : Schedule([pool](std::function<void()> task) {
                     pool->Schedule(std::move(task));
                   }),
                   num_workers) {}
};

}  // namespace jax_threshold::ffi_handler
