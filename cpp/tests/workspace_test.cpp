// Phase two's workspace rules (aclnn/workspace.h): any alignment of the caller's workspace works,
// a workspace that is too small, wraps, or overlaps a tensor is ACLNN_ERR_PARAM_INVALID, and
// nothing runs then.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "aclnn/executor.h"
#include "jax_threshold/aclnn_threshold_backward.h"

namespace {

using namespace jax_threshold::aclnn;

constexpr int64_t kRows = 16, kCols = 16, kN = kRows * kCols;

// A call whose out is a transposed view, so phase one plans a workspace buffer for the kernel's
// result; grad_output, x and out live in one arena, so a workspace can be placed over any of
// them. grad = i + 1, x = i - 100 (threshold 0.5: elements with i >= 101 pass).
struct TransposedOutCall {
  std::vector<float> arena;
  float* grad;
  float* x;
  float* out;
  aclTensor *g_t = nullptr, *x_t = nullptr, *out_t = nullptr;
  aclScalar* threshold = nullptr;
  aclOpExecutor* executor = nullptr;
  uint64_t workspace_size = 0;

  // The tensors at `base` (3 * kN floats), or in an arena of their own.
  explicit TransposedOutCall(float* base = nullptr)
      : arena(base == nullptr ? 3 * kN : 0),
        grad(base == nullptr ? arena.data() : base),
        x(grad + kN),
        out(grad + 2 * kN) {
    for (int64_t i = 0; i < kN; ++i) {
      grad[i] = static_cast<float>(i + 1);
      x[i] = static_cast<float>(i - 100);
      out[i] = -1.0f;
    }
    const int64_t dims[2] = {kRows, kCols};
    const int64_t transposed[2] = {1, kRows};
    g_t = aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0, grad);
    x_t = aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0, x);
    out_t = aclCreateTensor(dims, 2, ACL_FLOAT, transposed, 0, out);
    const float t = 0.5f;
    threshold = aclCreateScalar(&t, ACL_FLOAT);
  }
  ~TransposedOutCall() {
    aclDestroyAclOpExecutor(executor);
    aclDestroyTensor(g_t);
    aclDestroyTensor(x_t);
    aclDestroyTensor(out_t);
    aclDestroyScalar(threshold);
  }
  aclnnStatus Plan() {
    return aclnnThresholdBackwardGetWorkspaceSize(g_t, x_t, threshold, out_t, &workspace_size,
                                                  &executor);
  }
  aclnnStatus Run(void* workspace, uint64_t size) {
    return aclnnThresholdBackward(workspace, size, executor, nullptr);
  }
  // out (a transposed view: element (r, c) at out[c * kRows + r]) holds the expected values.
  bool OutIsCorrect() const {
    for (int64_t r = 0; r < kRows; ++r) {
      for (int64_t c = 0; c < kCols; ++c) {
        const int64_t i = r * kCols + c;
        const float want = x[i] > 0.5f ? grad[i] : 0.0f;
        if (std::memcmp(&out[c * kRows + r], &want, sizeof(float)) != 0) return false;
      }
    }
    return true;
  }
  bool OutUntouched() const {
    for (int64_t i = 0; i < kN; ++i) {
      if (out[i] != -1.0f) return false;
    }
    return true;
  }
};

TEST(WorkspaceTest, ReportedSizeHasRoomToAlignTheBuffers) {
  TransposedOutCall call;
  ASSERT_EQ(call.Plan(), ACLNN_SUCCESS) << aclGetRecentErrMsg();
  const ExecutorPlan* plan = GetExecutorPlan(call.executor);
  ASSERT_TRUE(plan->out_copy.has_value());
  EXPECT_GE(call.workspace_size, kN * sizeof(float) + kWorkspaceAlignment - 1);
  EXPECT_EQ(call.workspace_size, plan->workspace.planned + kWorkspaceAlignment - 1);
}

TEST(WorkspaceTest, EveryByteOffsetOfTheWorkspaceWorks) {
  for (uint64_t shift = 0; shift < kWorkspaceAlignment + 3; ++shift) {
    TransposedOutCall call;
    ASSERT_EQ(call.Plan(), ACLNN_SUCCESS) << aclGetRecentErrMsg();
    std::vector<unsigned char> storage(call.workspace_size + shift);
    ASSERT_EQ(call.Run(storage.data() + shift, call.workspace_size), ACLNN_SUCCESS)
        << "shift " << shift << ": " << aclGetRecentErrMsg();
    EXPECT_TRUE(call.OutIsCorrect()) << "shift " << shift;
  }
}

TEST(WorkspaceTest, OneByteTooSmallIsRefused) {
  TransposedOutCall call;
  ASSERT_EQ(call.Plan(), ACLNN_SUCCESS);
  std::vector<unsigned char> storage(call.workspace_size);
  EXPECT_EQ(call.Run(storage.data(), call.workspace_size - 1), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(std::strstr(aclGetRecentErrMsg(), "smaller"), nullptr);
  EXPECT_TRUE(call.OutUntouched());
  // Nothing ran: the executor still runs once with a good workspace.
  EXPECT_EQ(call.Run(storage.data(), call.workspace_size), ACLNN_SUCCESS);
  EXPECT_TRUE(call.OutIsCorrect());
}

TEST(WorkspaceTest, NullWorkspaceWhenOneIsPlannedIsNullptr) {
  TransposedOutCall call;
  ASSERT_EQ(call.Plan(), ACLNN_SUCCESS);
  EXPECT_EQ(call.Run(nullptr, call.workspace_size), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_TRUE(call.OutUntouched());
}

TEST(WorkspaceTest, WorkspaceOverlappingAnyTensorIsRefused) {
  const char* const names[3] = {"grad_output", "x", "out"};
  // Room before and after the tensors, so every workspace below is real memory.
  const int64_t margin = 2 * kN;
  std::vector<float> room(margin + 3 * kN + margin);
  for (int which = 0; which < 3; ++which) {
    for (int64_t at : {-kN / 2, int64_t{0}, kN - 1}) {  // elements before / at / inside it
      TransposedOutCall call(room.data() + margin);
      ASSERT_EQ(call.Plan(), ACLNN_SUCCESS);
      ASSERT_LE(call.workspace_size, static_cast<uint64_t>(margin) * sizeof(float));
      float* tensor = which == 0 ? call.grad : which == 1 ? call.x : call.out;
      const std::vector<float> before(room);
      EXPECT_EQ(call.Run(tensor + at, call.workspace_size), ACLNN_ERR_PARAM_INVALID)
          << names[which] << " at " << at;
      EXPECT_NE(std::strstr(aclGetRecentErrMsg(), "the workspace overlaps"), nullptr)
          << aclGetRecentErrMsg();
      EXPECT_EQ(std::memcmp(room.data(), before.data(), room.size() * sizeof(float)), 0)
          << "memory changed after a refused run";
    }
  }
}

TEST(WorkspaceTest, WorkspaceEndingRightBeforeATensorIsAccepted) {
  const int64_t margin = 2 * kN;
  std::vector<float> room(margin + 3 * kN);
  TransposedOutCall call(room.data() + margin);
  ASSERT_EQ(call.Plan(), ACLNN_SUCCESS);
  unsigned char* grad_bytes = reinterpret_cast<unsigned char*>(call.grad);
  EXPECT_EQ(call.Run(grad_bytes - call.workspace_size, call.workspace_size), ACLNN_SUCCESS)
      << aclGetRecentErrMsg();
  EXPECT_TRUE(call.OutIsCorrect());
}

TEST(WorkspaceTest, AddressRangeThatWrapsIsRefused) {
  TransposedOutCall call;
  ASSERT_EQ(call.Plan(), ACLNN_SUCCESS);
  void* near_top = reinterpret_cast<void*>(UINTPTR_MAX - 16);
  EXPECT_EQ(call.Run(near_top, call.workspace_size), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(std::strstr(aclGetRecentErrMsg(), "wraps"), nullptr);
  EXPECT_TRUE(call.OutUntouched());
}

TEST(WorkspaceTest, NoWorkspaceIsPlannedForContiguousTensors) {
  std::vector<float> g(8, 1.0f), x(8, 2.0f), out(8, 0.0f);
  const int64_t dims[1] = {8};
  aclTensor* g_t = aclCreateTensor(dims, 1, ACL_FLOAT, nullptr, 0, g.data());
  aclTensor* x_t = aclCreateTensor(dims, 1, ACL_FLOAT, nullptr, 0, x.data());
  aclTensor* out_t = aclCreateTensor(dims, 1, ACL_FLOAT, nullptr, 0, out.data());
  const float t = 0.5f;
  aclScalar* thr = aclCreateScalar(&t, ACL_FLOAT);
  uint64_t size = 1;
  aclOpExecutor* executor = nullptr;
  ASSERT_EQ(aclnnThresholdBackwardGetWorkspaceSize(g_t, x_t, thr, out_t, &size, &executor),
            ACLNN_SUCCESS);
  EXPECT_EQ(size, 0u);
  EXPECT_EQ(aclnnThresholdBackward(nullptr, 0, executor, nullptr), ACLNN_SUCCESS);
  EXPECT_EQ(out, g);
  aclDestroyAclOpExecutor(executor);
  aclDestroyTensor(g_t);
  aclDestroyTensor(x_t);
  aclDestroyTensor(out_t);
  aclDestroyScalar(thr);
}

}  // namespace
