// The calling thread's deferred UB work: GM -> UB copies (deferred_copy.h) and vector ops
// (deferred_vector_op.h). One thread-local object, constant-initialised, so the UB accesses that
// check both find them with one thread-local lookup and no initialisation guard.
#pragma once

#include "deferred_copy.h"
#include "deferred_vector_op.h"

namespace cpu_ascendc {

struct PendingUbWork {
  DeferredCopies copies;
  DeferredVectorOps ops;
};

inline PendingUbWork& ThreadPendingUbWork() {
  thread_local PendingUbWork work;
  return work;
}
inline DeferredCopies& ThreadDeferredCopies() { return ThreadPendingUbWork().copies; }
inline DeferredVectorOps& ThreadDeferredVectorOps() { return ThreadPendingUbWork().ops; }

}  // namespace cpu_ascendc
