// A batch of small slices that share one phase-one plan (CPU only): how a vmap-batched threshold
// over small slices runs without an executor per batch element.
//
// Every slice of a call has the same views of grad_output / x / out (only the offsets differ) and
// its own scalar threshold, and phase one's plan depends on the threshold only through the kernel
// it picks (ReluGrad for exactly 0, else ThresholdGradV2D) and ThresholdGradV2D's threshold
// parameters. So phase one runs once per kernel the batch needs, on a representative slice, and
// each slice then runs that plan's kernel block directly with its own pointers and threshold
// parameters: no allocation that lives beyond the slice, no per-slice executor or thread dispatch.
// Used only where the shared plan is one kernel block with no copies and no workspace (small,
// contiguous slices); anything else keeps an executor per slice.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "jax_threshold/aclnn_threshold_backward.h"

namespace jax_threshold::ffi_handler {

struct SharedPlanSlices {
  static constexpr int kGrad = 0, kX = 1, kThreshold = 2, kOut = 3;
  // The looped dims, outer to inner: sizes and per-operand element strides (0: broadcast).
  std::vector<int64_t> sizes;
  std::vector<std::array<int64_t, 4>> strides;
  int64_t count = 0;  // slices: the product of sizes
  uint64_t element_bytes = 0;  // of grad_output / x / out
  // The batch's thresholds (element offsets from `strides[..][kThreshold]`).
  aclnn::aclDataType threshold_dtype = aclnn::ACL_DT_UNDEFINED;
  const char* threshold_data = nullptr;
  uint64_t threshold_bytes = 0;
  // [0]: the ThresholdGradV2D plan (a nonzero threshold), [1]: the ReluGrad plan (threshold 0);
  // null where no slice needs it. `base` is the representative slice's element offsets.
  std::array<aclnn::aclOpExecutor*, 2> executors{};
  std::array<std::array<int64_t, 4>, 2> base{};

  SharedPlanSlices() = default;
  SharedPlanSlices(const SharedPlanSlices&) = delete;
  SharedPlanSlices& operator=(const SharedPlanSlices&) = delete;
  ~SharedPlanSlices();  // destroys the executors

  // Element offsets of slice k's operands.
  std::array<int64_t, 4> Offsets(int64_t k) const;
  // Whether slice k's threshold is exactly 0 (either sign): the ReluGrad plan.
  bool ThresholdIsZero(int64_t k) const;
  // Runs slices [begin, end) on the calling thread (subnormals as numbers). A failing kernel
  // block is recorded (FirstError) and the rest of the range skipped.
  void Run(int64_t begin, int64_t end);
  std::string FirstError() const;

  // Whether `dtype` is a threshold dtype ThresholdIsZero understands.
  static bool SupportsThresholdDtype(aclnn::aclDataType dtype);
  // Whether phase one's plan for a slice can be shared: one block, no copies, no workspace.
  static bool IsShareable(const aclnn::aclOpExecutor* executor);

 private:
  mutable std::mutex error_mu_;
  std::string first_error_;
};

}  // namespace jax_threshold::ffi_handler
