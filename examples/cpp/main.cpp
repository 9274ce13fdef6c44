// The example of CANN's aclnnThresholdBackward documentation, on jax-threshold's aclnn-style
// executor: threshold_backward of a {2, 2} float32 tensor, x = {0.2, 1.2, 2.2, 3.2},
// grad_output = {4.5, 4.4, 4.3, 4.2}, threshold 1.0 -> {0, 4.4, 4.3, 4.2}. Then threshold 0.0,
// which gives {4.5, 4.4, 4.3, 4.2} (0.2 > 0; the documentation claims otherwise).
//
// Phase one (GetWorkspaceSize) validates and plans; phase two runs. Without an NPU the AscendC
// kernels run on the CPU; a null stream runs them right away on this thread plus std::threads.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "jax_threshold/aclnn_threshold_backward.h"

namespace aclnn = jax_threshold::aclnn;

#define CHECK_ACLNN(expr)                                                            \
  do {                                                                               \
    const aclnn::aclnnStatus status_ = (expr);                                       \
    if (status_ != aclnn::ACLNN_SUCCESS) {                                           \
      std::fprintf(stderr, "%s failed: %d (%s)\n", #expr, static_cast<int>(status_), \
                   aclnn::aclGetRecentErrMsg());                                     \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

int Run(float threshold_value) {
  const std::vector<int64_t> shape = {2, 2};
  std::vector<float> x = {0.2f, 1.2f, 2.2f, 3.2f};
  std::vector<float> grad_output = {4.5f, 4.4f, 4.3f, 4.2f};
  std::vector<float> out(4, -1.0f);

  // Contiguous tensors: strides null; the data stays owned by the vectors.
  aclnn::aclTensor* x_t =
      aclnn::aclCreateTensor(shape.data(), shape.size(), aclnn::ACL_FLOAT, nullptr, 0, x.data());
  aclnn::aclTensor* grad_t = aclnn::aclCreateTensor(shape.data(), shape.size(), aclnn::ACL_FLOAT,
                                                    nullptr, 0, grad_output.data());
  aclnn::aclTensor* out_t =
      aclnn::aclCreateTensor(shape.data(), shape.size(), aclnn::ACL_FLOAT, nullptr, 0, out.data());
  aclnn::aclScalar* threshold = aclnn::aclCreateScalar(&threshold_value, aclnn::ACL_FLOAT);

  uint64_t workspace_size = 0;
  aclnn::aclOpExecutor* executor = nullptr;
  CHECK_ACLNN(aclnn::aclnnThresholdBackwardGetWorkspaceSize(grad_t, x_t, threshold, out_t,
                                                            &workspace_size, &executor));
  std::vector<unsigned char> workspace(workspace_size);
  CHECK_ACLNN(aclnn::aclnnThresholdBackward(workspace.empty() ? nullptr : workspace.data(),
                                            workspace_size, executor, /*stream=*/nullptr));

  std::printf("threshold %.1f (%s):", threshold_value,
              aclnn::aclnnThresholdBackwardKernelName(executor));
  for (float v : out) std::printf(" %g", v);
  std::printf("\n");

  aclnn::aclDestroyAclOpExecutor(executor);
  aclnn::aclDestroyScalar(threshold);
  aclnn::aclDestroyTensor(out_t);
  aclnn::aclDestroyTensor(grad_t);
  aclnn::aclDestroyTensor(x_t);
  return 0;
}

int main() {
  if (Run(1.0f) != 0) return 1;
  return Run(0.0f);
}
