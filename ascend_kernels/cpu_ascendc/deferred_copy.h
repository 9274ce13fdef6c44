// Deferred GM -> UB copies: DataCopy(GM -> UB) records the copy instead of making it, and the
// vector primitives that only read a UB operand read it straight from the copy's GM source.
//
// On the NPU the MTE2 unit moves a tile into UB while the vector unit works on the previous one;
// on one host thread the copy is a pass of its own, storing every element into L1 and loading it
// back, which measured about a third of the kernel's time at 2^20 float32 elements
// (benchmarks/README.md). The observable behaviour is unchanged: UB bytes covered by a deferred
// copy are written (the copy made) before anything else touches them -- any LocalTensor data
// access settles the copies that overlap it -- and before any GM write that overlaps a deferred
// copy's source (DataCopy / DataCopyPad UB -> GM), so UB keeps the values GM had at DataCopy
// time. A read-only operand (`ReadableUb`) that lies inside one deferred copy reads GM directly.
//
// Per host thread (a block runs on one thread from start to end; pending_ub_work.h); CoreScope
// clears the list.
#pragma once

#include <cstdint>

#include "byte_span.h"
#include "vector_loops.h"

namespace cpu_ascendc {

class DeferredCopies {
 public:
  // Records "copy `bytes` bytes from gm to ub". Copies still pending for UB bytes this one
  // overwrites are dropped when it covers them whole, made first when it covers them in part.
  void Defer(uint8_t* ub, const uint8_t* gm, uint64_t bytes) {
    for (int i = 0; i < n_;) {
      Entry& e = entries_[i];
      if (RangesOverlap(e.ub, e.bytes, ub, bytes)) {
        if (!(ub <= e.ub && e.ub + e.bytes <= ub + bytes)) Make(e);
        Remove(i);
      } else {
        ++i;
      }
    }
    if (n_ == kMaxEntries) {  // more buffers in flight than a kernel keeps: make one
      Make(entries_[0]);
      Remove(0);
    }
    if (n_ == 0) {
      ub_span_ = ByteSpan{};
      gm_span_ = ByteSpan{};
    }
    entries_[n_++] = Entry{ub, gm, bytes};
    ub_span_.Add(ub, bytes);
    gm_span_.Add(gm, bytes);
  }

  // Makes the pending copies that write any of UB [p, p + bytes). Most calls (a vector op's
  // output, the mask, the scratch) touch none: the span of all pending copies says so without
  // looking at each.
  void SettleUb(const void* p, uint64_t bytes) {
    if (n_ != 0 && ub_span_.Overlaps(p, bytes)) SettleWhere(p, bytes, /*by_source=*/false);
  }
  // Makes the pending copies that read any of GM [p, p + bytes) (about to be written).
  void SettleGm(const void* p, uint64_t bytes) {
    if (n_ != 0 && gm_span_.Overlaps(p, bytes)) SettleWhere(p, bytes, /*by_source=*/true);
  }

  // Where UB [p, p + bytes) can be read now: the GM bytes a pending copy will put there, when one
  // copy covers the whole range; otherwise p, with the overlapping copies made.
  const void* Readable(const void* p, uint64_t bytes) {
    const auto* u = static_cast<const uint8_t*>(p);
    for (int i = 0; i < n_; ++i) {
      const Entry& e = entries_[i];
      if (e.ub <= u && u + bytes <= e.ub + e.bytes) {
        // The vector loops' aligned SIMD loads need 16 bytes (SSE2; the AVX forms load
        // unaligned), which a 32-byte aligned UB operand has; a GM source stands in for it when it
        // has them too. malloc's and NumPy's buffers are 16-byte aligned, XLA's 64.
        const uint8_t* g = e.gm + (u - e.ub);
        if (((reinterpret_cast<uintptr_t>(g) ^ reinterpret_cast<uintptr_t>(u)) & (kStandInAlign - 1)) == 0) {
          return g;
        }
        break;
      }
    }
    SettleUb(p, bytes);
    return p;
  }

  void Clear() { n_ = 0; }

  // The alignment a GM source needs to be read in place of its UB copy (vector_loops.h).
  static constexpr uintptr_t kStandInAlign = 16;
  int Pending() const { return n_; }

 private:
  static constexpr int kMaxEntries = 8;
  struct Entry {
    uint8_t* ub;
    const uint8_t* gm;
    uint64_t bytes;
  };

  static void Make(const Entry& e) { loops::CopyBytes(e.ub, e.gm, e.bytes); }
  void Remove(int i) { entries_[i] = entries_[--n_]; }  // order is irrelevant
  void SettleWhere(const void* p, uint64_t bytes, bool by_source) {
    for (int i = 0; i < n_;) {
      const Entry& e = entries_[i];
      if (RangesOverlap(by_source ? static_cast<const void*>(e.gm) : e.ub, e.bytes, p, bytes)) {
        Make(e);
        Remove(i);
      } else {
        ++i;
      }
    }
  }

  Entry entries_[kMaxEntries] = {};
  int n_ = 0;
  // The pending copies' UB (and GM) bytes since the list was last empty.
  ByteSpan ub_span_;
  ByteSpan gm_span_;
};

}  // namespace cpu_ascendc
