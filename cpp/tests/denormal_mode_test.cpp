// Subnormals are numbers on a thread that flushes them (docs/behaviour.md §1): the executor's
// guard clears the flush mode XLA's CPU threads set (x86-64 MXCSR FTZ/DAZ, AArch64 FPCR.FZ) and
// puts it back, and a subnormal threshold and subnormal inputs give the same bits there as on a
// thread that does not flush.
#include <gtest/gtest.h>

#include <cstring>

#include "aclnn/host_stream.h"
#include "ascend_kernels/tests/flush_to_zero.h"
#include "executor_test_util.h"

namespace {

using namespace executor_test;

TEST(DenormalMode, GuardClearsTheFlushModeAndRestoresIt) {
  if (!flush_to_zero::kAvailable) GTEST_SKIP() << "no flush-to-zero control on this architecture";
  flush_to_zero::ScopedFlushing ftz;
  ASSERT_TRUE(flush_to_zero::SubnormalComparesAsZero());  // the thread really flushes
  {
    jax_threshold::aclnn::ScopedDenormalsAsNumbers guard;
    EXPECT_FALSE(flush_to_zero::SubnormalComparesAsZero());
    EXPECT_EQ(flush_to_zero::Mode() & flush_to_zero::kFlushBits, 0u);
  }
  EXPECT_EQ(flush_to_zero::Controls(), ftz.flushing_controls());
}

TEST(DenormalMode, GuardLeavesANonFlushingThreadAsItIs) {
  const uint64_t before = flush_to_zero::Controls();
  {
    jax_threshold::aclnn::ScopedDenormalsAsNumbers guard;
    EXPECT_FALSE(flush_to_zero::SubnormalComparesAsZero());
  }
  EXPECT_EQ(flush_to_zero::Controls(), before);
}

// threshold_backward of subnormal x against a subnormal threshold, phase one and two on the
// calling thread: out = g where x > t.
std::vector<float> RunSubnormalThreshold() {
  const int64_t dims[] = {8};
  float x[] = {1e-40f, 2e-40f, 0.0f, -1e-40f, 1.4e-45f, 1.5e-40f, 1.0f, -0.0f};
  float g[] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
  std::memset(out, 0xff, sizeof out);
  TensorPtr xt(aclCreateTensor(dims, 1, ACL_FLOAT, nullptr, 0, x));
  TensorPtr gt(aclCreateTensor(dims, 1, ACL_FLOAT, nullptr, 0, g));
  TensorPtr ot(aclCreateTensor(dims, 1, ACL_FLOAT, nullptr, 0, out));
  const double t = 1.5e-40;  // narrows to the subnormal float 1.5e-40f
  ScalarPtr thr(aclCreateScalar(&t, ACL_DOUBLE));
  uint64_t ws = 1;
  aclOpExecutor* e = nullptr;
  EXPECT_EQ(aclnnThresholdBackwardGetWorkspaceSize(gt.get(), xt.get(), thr.get(), ot.get(), &ws, &e,
                                                   nullptr),
            ACLNN_SUCCESS);
  ExecutorPtr owned(e);
  EXPECT_EQ(ws, 0u);
  EXPECT_EQ(aclnnThresholdBackward(nullptr, 0, e, nullptr), ACLNN_SUCCESS);
  return std::vector<float>(out, out + 8);
}

TEST(DenormalMode, SubnormalThresholdGivesTheSameBitsOnAFlushingThread) {
  const std::vector<float> expected = {0, 2, 0, 0, 0, 0, 7, 0};
  EXPECT_EQ(RunSubnormalThreshold(), expected);
  if (!flush_to_zero::kAvailable) GTEST_SKIP() << "no flush-to-zero control on this architecture";
  flush_to_zero::ScopedFlushing ftz;
  ASSERT_TRUE(flush_to_zero::SubnormalComparesAsZero());
  EXPECT_EQ(RunSubnormalThreshold(), expected);
  EXPECT_EQ(flush_to_zero::Controls(), ftz.flushing_controls());
}

}  // namespace
