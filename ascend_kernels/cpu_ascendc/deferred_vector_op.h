// Deferred vector ops: a vector primitive whose source is read from GM (a deferred copy stands for
// it, deferred_copy.h) is recorded instead of run when what usually follows it can use it
// better from GM than from UB:
//  - a widening Cast (bfloat16 / float16 -> float, int8 / uint8 -> half), when the CompareScalar
//    that reads its result compares straight from the narrow GM source (vector_loops.h,
//    CompareBf16Bits / CompareHalfBits / CompareByteIntBits: the same bits);
//  - a Select of a launch that streams its output to memory, when the DataCopy UB -> GM of its
//    result runs it straight into GM with non-temporal stores.
//
// On the NPU the vector unit writes each result into UB and MTE3 moves the tile out while the next
// one computes; on one host thread each store into L1 and load back is work of its own: the
// bfloat16 tile's widened float copy cost ~30% of its compare stage at 2^20 elements, and the
// select's copy-out 10-17% of a float32 tile from DRAM (benchmarks/README.md). The observable
// behaviour is unchanged:
//  - a select's mask is snapshotted when it is recorded, so later writes to the mask do not
//    matter; a cast has no UB operand;
//  - the GM source holds the values the deferred copy put in UB, since any GM write that overlaps
//    it (DataCopy / DataCopyPad UB -> GM) makes the op first;
//  - the op's UB bytes are written (the op made) before anything reads them or writes part of
//    them; a write that covers them whole (the next chunk's Cast, the next Select into the same
//    buffer, a DataCopy GM -> UB) drops them, since nothing could read them in between; a cast
//    written over at its start or end keeps the rest pending (elementwise, so it splits).
// Per host thread (a block runs on one thread from start to end; pending_ub_work.h); CoreScope
// clears the list.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "byte_span.h"
#include "vector_loops.h"

namespace cpu_ascendc {

// What a deferred op computes into UB from its GM source.
enum class DeferredKind : uint8_t {
  kSelect,       // bit i of the mask ? src[i] : fill, on 16/32/64-bit element bits
  kBf16ToFloat,  // the widening Casts: exact
  kHalfToFloat,
  kInt8ToHalf,
  kUint8ToHalf,
};

class DeferredVectorOps {
 public:
  // The largest select recorded (mask bytes; 8192 elements), beyond any host tile.
  static constexpr uint64_t kMaxMaskBytes = 1024;

  // Records "ub[i] = bit i of mask ? src[i] : fill for i < count" (B: 16-, 32- or 64-bit
  // element bits; src in GM). False when it cannot be deferred (the caller selects now).
  template <typename B>
  bool DeferSelect(B* ub, const uint8_t* mask, const B* src, B fill, uint64_t count) {
    static_assert(sizeof(B) == 2 || sizeof(B) == 4 || sizeof(B) == 8, "16/32/64-bit elements");
    const uint64_t mask_bytes = (count + 7) / 8;
    if (count == 0 || mask_bytes > kMaxMaskBytes) return false;
    Entry& e = Add(DeferredKind::kSelect, ub, src, count, sizeof(B), sizeof(B));
    std::memcpy(&e.fill, &fill, sizeof fill);
    std::memcpy(e.mask, mask, mask_bytes);
    return true;
  }

  // Records a widening Cast of `count` elements from GM src into ub (kind: not kSelect).
  void DeferCast(DeferredKind kind, void* ub, const void* src, uint64_t count) {
    const uint32_t in = kind == DeferredKind::kInt8ToHalf || kind == DeferredKind::kUint8ToHalf ? 1 : 2;
    const uint32_t out = kind == DeferredKind::kBf16ToFloat || kind == DeferredKind::kHalfToFloat ? 4 : 2;
    if (count != 0) Add(kind, ub, src, count, out, in);
  }

  // The pending cast whose first `count` results are UB ub, or null: its kind and GM source are
  // what a compare of those results reads instead.
  struct CastSource {
    DeferredKind kind;
    const void* src;
  };
  bool PendingCast(const void* ub, uint64_t count, CastSource* found) const {
    for (int i = 0; i < n_; ++i) {
      const Entry& e = entries_[i];
      if (e.kind != DeferredKind::kSelect && e.ub == ub && count <= e.count) {
        *found = CastSource{e.kind, e.src};
        return true;
      }
    }
    return false;
  }

  // UB [p, p + bytes) is about to be read, or written in part: makes the ops that write it.
  void SettleUb(const void* p, uint64_t bytes) {
    if (n_ != 0 && span_.Overlaps(p, bytes)) SettleUbWhere(p, bytes, /*overwritten=*/false);
  }
  // UB [p, p + bytes) is about to be written whole, unread: drops the ops it covers, trims the
  // casts it covers at one end, makes the rest of those it overlaps.
  void Overwrite(const void* p, uint64_t bytes) {
    if (n_ != 0 && span_.Overlaps(p, bytes)) SettleUbWhere(p, bytes, /*overwritten=*/true);
  }
  // GM [p, p + bytes) is about to be written: makes the ops that read it.
  void SettleGm(const void* p, uint64_t bytes) {
    for (int i = 0; i < n_;) {
      const Entry& e = entries_[i];
      if (RangesOverlap(e.src, e.SrcBytes(), p, bytes)) {
        Make(e);
        Remove(i);
      } else {
        ++i;
      }
    }
  }

  // DataCopy UB -> GM of `bytes` from ub: when a pending select starts at ub and covers them,
  // selects into gm instead (non-temporal stores if `stream`) and returns true. The select
  // stays pending for its UB bytes. The caller has settled GM [gm, gm + bytes) first.
  bool CopyOut(void* gm, const void* ub, uint64_t bytes, bool stream) {
    for (int i = 0; i < n_; ++i) {
      const Entry& e = entries_[i];
      // The loops' SSE2 form stores 16 bytes aligned, as it does into UB.
      if (e.kind != DeferredKind::kSelect || e.ub != ub || bytes > e.Bytes() || bytes % e.width != 0 ||
          (reinterpret_cast<uintptr_t>(gm) & 15) != 0 || RangesOverlap(e.src, e.SrcBytes(), gm, bytes)) {
        continue;
      }
      RunSelect(e, gm, bytes / e.width, stream);
      return true;
    }
    return false;
  }

  void Clear() { n_ = 0; }
  int Pending() const { return n_; }

 private:
  static constexpr int kMaxEntries = 4;
  struct Entry {
    DeferredKind kind;
    uint32_t width;      // bytes of a result element
    uint32_t src_width;  // bytes of a source element
    uint8_t* ub;
    const uint8_t* src;
    uint64_t count;
    uint64_t fill;  // a select's scalar bits, low `width` bytes
    alignas(64) uint8_t mask[kMaxMaskBytes];  // a select's mask, count bits
    uint64_t Bytes() const { return count * width; }
    uint64_t SrcBytes() const { return count * src_width; }
  };

  Entry& Add(DeferredKind kind, void* ub, const void* src, uint64_t count, uint32_t width, uint32_t src_width) {
    if (n_ == kMaxEntries) {  // more ops in flight than a kernel keeps: make one
      Make(entries_[0]);
      Remove(0);
    }
    if (n_ == 0) span_ = ByteSpan{};
    Entry& e = entries_[n_++];
    e.kind = kind;
    e.width = width;
    e.src_width = src_width;
    e.ub = static_cast<uint8_t*>(ub);
    e.src = static_cast<const uint8_t*>(src);
    e.count = count;
    e.fill = 0;
    span_.Add(e.ub, e.Bytes());
    return e;
  }

  template <typename B>
  static void RunSelectAs(const Entry& e, void* dst, uint64_t count, bool stream) {
    B* d = static_cast<B*>(dst);
    const B* s = reinterpret_cast<const B*>(e.src);
    const B fill = static_cast<B>(e.fill);
    if (stream) {
      loops::StreamSelectBits(d, e.mask, s, fill, count);
    } else {
      loops::SelectBits(d, e.mask, s, fill, count);
    }
  }
  static void RunSelect(const Entry& e, void* dst, uint64_t count, bool stream) {
    switch (e.width) {
      case 2: RunSelectAs<uint16_t>(e, dst, count, stream); break;
      case 4: RunSelectAs<uint32_t>(e, dst, count, stream); break;
      default: RunSelectAs<uint64_t>(e, dst, count, stream); break;
    }
  }
  static void Make(const Entry& e) {
    switch (e.kind) {
      case DeferredKind::kSelect:
        RunSelect(e, e.ub, e.count, /*stream=*/false);
        break;
      case DeferredKind::kBf16ToFloat:
        loops::Bf16ToFloat(reinterpret_cast<float*>(e.ub), reinterpret_cast<const uint16_t*>(e.src), e.count);
        break;
      case DeferredKind::kHalfToFloat:
        loops::HalfToFloat(reinterpret_cast<float*>(e.ub), reinterpret_cast<const uint16_t*>(e.src), e.count);
        break;
      case DeferredKind::kInt8ToHalf:
        loops::ByteIntToHalf(reinterpret_cast<uint16_t*>(e.ub), reinterpret_cast<const int8_t*>(e.src), e.count);
        break;
      case DeferredKind::kUint8ToHalf:
        loops::ByteIntToHalf(reinterpret_cast<uint16_t*>(e.ub), reinterpret_cast<const uint8_t*>(e.src), e.count);
        break;
    }
  }
  void Remove(int i) {  // order is irrelevant; the last entry moves into i (a select's mask bytes only)
    const Entry& last = entries_[--n_];
    if (i == n_) return;
    const uint64_t mask_bytes = last.kind == DeferredKind::kSelect ? (last.count + 7) / 8 : 0;
    std::memcpy(&entries_[i], &last, offsetof(Entry, mask) + mask_bytes);
  }
  // A cast overwritten in whole elements at its start or its end: the rest stays pending.
  static bool TrimCast(Entry& e, const uint8_t* p, uint64_t bytes) {
    if (e.kind == DeferredKind::kSelect) return false;
    const uint8_t* end = e.ub + e.Bytes();
    if (p <= e.ub && p + bytes < end && (p + bytes - e.ub) % e.width == 0) {  // the start
      const uint64_t k = static_cast<uint64_t>(p + bytes - e.ub) / e.width;
      e.ub += k * e.width;
      e.src += k * e.src_width;
      e.count -= k;
      return true;
    }
    if (p > e.ub && p + bytes >= end && (p - e.ub) % e.width == 0) {  // the end
      e.count = static_cast<uint64_t>(p - e.ub) / e.width;
      return true;
    }
    return false;
  }
  void SettleUbWhere(const void* p, uint64_t bytes, bool overwritten) {
    const auto* u = static_cast<const uint8_t*>(p);
    for (int i = 0; i < n_;) {
      Entry& e = entries_[i];
      if (!RangesOverlap(e.ub, e.Bytes(), p, bytes)) {
        ++i;
        continue;
      }
      const bool covered = u <= e.ub && e.ub + e.Bytes() <= u + bytes;
      if (overwritten && !covered && TrimCast(e, u, bytes)) {
        ++i;
        continue;
      }
      if (!(overwritten && covered)) Make(e);
      Remove(i);
    }
  }

  Entry entries_[kMaxEntries] = {};
  int n_ = 0;
  ByteSpan span_;  // every pending op's UB bytes since the list was last empty
};

}  // namespace cpu_ascendc
