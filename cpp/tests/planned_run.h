// A phase one's outcome as the threshold-tensor tests keep it, and phase two of it into a
// workspace of its own: synchronously, or on a ThreadPoolHostStream waited for through on_done.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <future>
#include <string>
#include <vector>

#include "aclnn/executor.h"  // kWorkspaceAlignment
#include "aclnn/host_stream.h"
#include "executor_test_util.h"
#include "thread_pool_host_stream.h"

namespace executor_test {

struct Planned {
  aclnnStatus status;
  uint64_t ws = 0;
  ExecutorPtr executor;
  std::string message;  // aclGetRecentErrMsg() after phase one
};

// Fails the test (ASSERT: wrap calls in ASSERT_NO_FATAL_FAILURE) when phase two or its run fails.
inline void RunPlanned(const Planned& p, bool on_stream) {
  std::vector<unsigned char> ws(p.ws + kWorkspaceAlignment);
  void* base = ws.data() + (kWorkspaceAlignment -
                            reinterpret_cast<uintptr_t>(ws.data()) % kWorkspaceAlignment) %
                               kWorkspaceAlignment;
  if (on_stream) {
    ThreadPoolHostStream stream(2);
    std::promise<void> done;
    ASSERT_EQ(aclnnThresholdBackward(base, p.ws, p.executor.get(), &stream,
                                     [&done] { done.set_value(); }),
              ACLNN_SUCCESS);
    done.get_future().wait();
    ASSERT_EQ(aclnnThresholdBackwardRunStatus(p.executor.get()), ACLNN_SUCCESS);
  } else {
    ASSERT_EQ(aclnnThresholdBackward(base, p.ws, p.executor.get(), nullptr), ACLNN_SUCCESS)
        << aclGetRecentErrMsg();
  }
}

}  // namespace executor_test
