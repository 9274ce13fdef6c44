// libFuzzer target over the executor's C API: phase one with a threshold scalar or a device
// threshold tensor, and aclnnThresholdBackward, with fuzzed dtypes, ranks, dims, strides, offsets,
// placements (aliasing included), thresholds, platforms and workspaces (size, alignment, placement
// over the tensors).
//
// Every input must end in a status code, never a crash or a sanitizer report, and:
// - a phase two that succeeds wrote nothing outside out's extent (and the workspace);
// - a workspace that shares a byte with a tensor's extent was refused;
// - for float32 tensors that do not overlap, out holds the select's bits (docs/behaviour.md §1).
// Tensors live in one arena; a view that does not fit in it is only planned, never run.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <vector>

#include "ascend_kernels/dtype_soc_table.h"
#include "jax_threshold/aclnn_threshold_backward.h"

namespace {

using namespace jax_threshold::aclnn;

// Reads the fuzz input as a stream of small integers; zeros once it is used up.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint32_t U32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = v << 8 | Byte();
    return v;
  }
  int64_t Range(int64_t lo, int64_t hi) {  // [lo, hi]; one byte for a small range
    const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
    return lo + static_cast<int64_t>((span <= 256 ? Byte() : U32()) % span);
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// Every dtype of the table, then two codes it does not name.
const std::vector<aclDataType> kFuzzDtypes = [] {
  std::vector<aclDataType> out;
  for (const auto& row : ascend_kernels::kDtypes)
    out.push_back(static_cast<aclDataType>(row.dtype));
  out.push_back(static_cast<aclDataType>(5));
  out.push_back(ACL_DT_UNDEFINED);
  return out;
}();
constexpr size_t kArenaBytes = 1 << 16;
constexpr size_t kMaxWorkspace = 1 << 22;

// The table's element size (1 for a code it does not name).
size_t ElementBytes(aclDataType d) {
  const uint32_t bytes = ascend_kernels::DtypeSize(d);
  return bytes == 0 ? 1 : bytes;
}

struct View {
  aclDataType dtype = ACL_FLOAT;
  std::vector<int64_t> dims, strides;
  int64_t offset = 0;
  size_t base = 0;    // byte position of element offset 0 in the arena
  bool fits = false;  // every element lies inside the arena
  bool empty = false;
  size_t begin = 0, end = 0;  // the extent's bytes in the arena, when it fits
};

// Whether the view lies in the arena, and its extent (computed in 128 bits: no overflow).
void Place(View& v) {
  __int128 lo = v.offset, hi = v.offset;
  for (size_t d = 0; d < v.dims.size(); ++d) {
    if (v.dims[d] == 0) v.empty = true;
    if (v.dims[d] <= 1) continue;
    const __int128 span = static_cast<__int128>(v.dims[d] - 1) * v.strides[d];
    (span > 0 ? hi : lo) += span;
  }
  const __int128 elem = static_cast<__int128>(ElementBytes(v.dtype));
  const __int128 first = static_cast<__int128>(v.base) + lo * elem;
  const __int128 last = static_cast<__int128>(v.base) + (hi + 1) * elem;  // exclusive
  v.fits = v.empty || (first >= 0 && last <= static_cast<__int128>(kArenaBytes));
  if (v.fits && !v.empty) {
    v.begin = static_cast<size_t>(first);
    v.end = static_cast<size_t>(last);
  }
}

View MakeView(Input& in, aclDataType dtype, const std::vector<int64_t>* like) {
  View v;
  v.dtype = dtype;
  const uint8_t mode = in.Byte();
  if (like != nullptr && mode % 4 != 0) {
    v.dims = *like;  // most calls: the broadcast shape
  } else {
    const int rank = static_cast<int>(in.Range(0, 9));
    for (int d = 0; d < rank; ++d) {
      const uint8_t k = in.Byte();
      v.dims.push_back(k < 240 ? k % 6 : (k < 250 ? k * 1000003LL : int64_t{1} << (k % 64)));
    }
  }
  // Contiguous, or fuzzed strides (0 and negative included).
  int64_t stride = 1;
  std::vector<int64_t> contiguous(v.dims.size());
  for (size_t d = v.dims.size(); d-- > 0;) {
    contiguous[d] = stride;
    stride *= v.dims[d] > 0 && v.dims[d] < 1024 ? v.dims[d] : 1;
  }
  const bool fuzz_strides = in.Byte() % 3 == 0;
  for (size_t d = 0; d < v.dims.size(); ++d) {
    v.strides.push_back(fuzz_strides ? in.Range(-9, 9) : contiguous[d]);
  }
  v.offset = in.Byte() % 4 == 0 ? in.Range(0, 40) : 0;
  return v;
}

bool Overlap(size_t a0, size_t a1, size_t b0, size_t b1) { return a0 < b1 && b0 < a1; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  const uint8_t dt = in.Byte();
  const aclDataType dtype = kFuzzDtypes[dt % kFuzzDtypes.size()];
  const uint8_t mix = in.Byte();
  const aclDataType g_dtype = mix % 16 == 1 ? kFuzzDtypes[in.Byte() % kFuzzDtypes.size()] : dtype;
  const aclDataType out_dtype = mix % 16 == 2 ? kFuzzDtypes[in.Byte() % kFuzzDtypes.size()] : dtype;

  std::vector<int64_t> shape;
  const int rank = static_cast<int>(in.Range(0, 5));
  for (int d = 0; d < rank; ++d) shape.push_back(in.Range(0, 7));
  View views[3] = {MakeView(in, g_dtype, &shape), MakeView(in, dtype, &shape),
                   MakeView(in, out_dtype, &shape)};
  // Placements: separate regions, or out over an input (in place or a partial overlap).
  for (int k = 0; k < 3; ++k) views[k].base = static_cast<size_t>(in.Range(0, 3)) * 16384;
  if (in.Byte() % 4 == 0) views[2].base = views[in.Byte() % 2].base + in.Range(0, 9);
  for (int k = 0; k < 3; ++k) {
    views[k].base += in.Range(0, 3) == 0 ? in.Range(0, 7) : 0;  // element-unaligned sometimes
    Place(views[k]);
  }

  std::vector<unsigned char> arena(kArenaBytes);
  for (size_t i = 0; i < arena.size(); ++i) arena[i] = static_cast<unsigned char>(i * 131 + 7);
  if (in.Byte() % 2 == 0) {  // float32 values around the threshold
    for (size_t i = 0; i + 4 <= arena.size(); i += 4) {
      const float f = static_cast<float>(static_cast<int>(i / 4 % 11) - 5) * 0.5f;
      std::memcpy(&arena[i], &f, 4);
    }
  }
  aclTensor* tensors[3];
  for (int k = 0; k < 3; ++k) {
    View& v = views[k];
    tensors[k] = aclCreateTensor(v.dims.data(), v.dims.size(), v.dtype, v.strides.data(), v.offset,
                                 arena.data() + v.base);
  }

  const aclDataType t_dtype = kFuzzDtypes[in.Byte() % kFuzzDtypes.size()];
  unsigned char t_bytes[16] = {};
  for (unsigned char& b : t_bytes) b = in.Byte();
  if (in.Byte() % 2 == 0) {  // a float32 threshold between the values above
    const float t = static_cast<float>(in.Range(-6, 6)) * 0.25f;
    std::memcpy(t_bytes, &t, 4);
  }
  const aclDataType scalar_dtype = in.Byte() % 3 == 0 ? t_dtype : ACL_FLOAT;
  aclScalar* threshold = aclCreateScalar(t_bytes, scalar_dtype);
  // Or a device threshold, described by the threshold's spare bytes (so that inputs written for
  // the scalar form keep their meaning): 0-d, its element the scalar's bytes, or of the output's
  // rank with leading dims of the output's size, somewhere in the arena.
  const bool device = t_bytes[15] % 3 == 1;
  View t_view;
  t_view.dtype = scalar_dtype;
  if (t_bytes[11] % 2 == 1) {
    const size_t batch = t_bytes[12] % (shape.size() + 1);
    for (size_t d = 0; d < shape.size(); ++d) t_view.dims.push_back(d < batch ? shape[d] : 1);
    int64_t stride = 1;
    t_view.strides.assign(shape.size(), 1);
    for (size_t d = shape.size(); d-- > 0; stride *= t_view.dims[d]) t_view.strides[d] = stride;
  }
  t_view.base = t_bytes[13] % 4 * 16384 + t_bytes[14] * 3u;
  Place(t_view);
  if (t_view.dims.empty() && t_view.fits) {
    std::memcpy(&arena[t_view.begin], t_bytes, ElementBytes(scalar_dtype));
  }
  aclTensor* t_tensor =
      aclCreateTensor(t_view.dims.data(), t_view.dims.size(), t_view.dtype, t_view.strides.data(),
                      t_view.offset, arena.data() + t_view.base);

  PlatformInfo platform;
  // Every SoC row, and one code no row has.
  platform.soc = static_cast<SocVersion>(in.Range(0, std::size(ascend_kernels::kSocs)));
  if (in.Byte() % 4 == 0) platform.ub_size = in.U32() % 2 ? in.U32() : in.Range(0, 1 << 21);
  if (in.Byte() % 4 == 0) platform.core_num = static_cast<uint32_t>(in.Range(0, 5000));

  uint64_t workspace_size = 0;
  aclOpExecutor* executor = nullptr;
  const uint8_t nulls = in.Byte();
  const PlatformInfo* info = in.Byte() % 8 == 0 ? nullptr : &platform;
  const aclnnStatus planned =
      device ? aclnnThresholdBackwardDeviceThresholdGetWorkspaceSize(
                   nulls == 1 ? nullptr : tensors[0], nulls == 2 ? nullptr : tensors[1],
                   nulls == 3 ? nullptr : t_tensor, nulls == 4 ? nullptr : tensors[2],
                   nulls == 5 ? nullptr : &workspace_size, nulls == 6 ? nullptr : &executor, info)
             : aclnnThresholdBackwardGetWorkspaceSize(
                   nulls == 1 ? nullptr : tensors[0], nulls == 2 ? nullptr : tensors[1],
                   nulls == 3 ? nullptr : threshold, nulls == 4 ? nullptr : tensors[2],
                   nulls == 5 ? nullptr : &workspace_size, nulls == 6 ? nullptr : &executor, info);
  if (planned != ACLNN_SUCCESS && executor != nullptr) __builtin_trap();  // no half results

  const bool runnable = planned == ACLNN_SUCCESS && views[0].fits && views[1].fits &&
                        views[2].fits && (!device || t_view.fits) &&
                        workspace_size <= kMaxWorkspace;
  if (runnable) {
    // The workspace: its own allocation at any alignment, or placed in the arena (maybe over a
    // tensor), a little smaller or larger than asked, or null.
    const uint8_t where = in.Byte();
    const int64_t delta = in.Range(-2, 2);
    uint64_t size = workspace_size;
    if (delta < 0 && size >= static_cast<uint64_t>(-delta)) size -= static_cast<uint64_t>(-delta);
    if (delta > 0) size += static_cast<uint64_t>(delta);
    const size_t shift = static_cast<size_t>(in.Range(0, 600));
    std::vector<unsigned char> own(size + shift + 1);
    unsigned char* workspace = own.data() + shift;
    bool in_arena = false;
    size_t ws_begin = 0;
    if (where % 4 == 0 && size <= kArenaBytes) {
      // Near one of the tensors: before it, over it, or just after it.
      const int64_t near = static_cast<int64_t>(views[where / 4 % 3].base) +
                           in.Range(-static_cast<int64_t>(size) - 64, 256);
      ws_begin = static_cast<size_t>(
          std::min<int64_t>(std::max<int64_t>(near, 0), static_cast<int64_t>(kArenaBytes - size)));
      workspace = arena.data() + ws_begin;
      in_arena = true;
    }
    if (where % 8 == 1) workspace = nullptr;

    const std::vector<unsigned char> before(arena);
    const aclnnStatus ran = aclnnThresholdBackward(workspace, size, executor, nullptr);
    if (ran == ACLNN_SUCCESS) {
      const View& out = views[2];
      const bool empty = views[0].empty || views[1].empty || out.empty;
      if (in_arena && workspace_size > 0 && !empty) {  // with nothing planned it is unused
        for (int k = 0; k < 3; ++k) {
          if (Overlap(ws_begin, ws_begin + size, views[k].begin, views[k].end)) {
            __builtin_trap();  // a workspace over a tensor was accepted
          }
        }
      }
      for (size_t i = 0; i < arena.size(); ++i) {
        const bool in_out = !empty && i >= out.begin && i < out.end;
        const bool in_ws = in_arena && i >= ws_begin && i < ws_begin + size;
        if (!in_out && !in_ws && arena[i] != before[i]) __builtin_trap();  // stray write
      }
      // The select's bits where they are easy to tell: float32 tensors of the broadcast shape
      // (strided inputs, out contiguous), no overlap, a float32 threshold.
      bool simple = !empty && dtype == ACL_FLOAT && g_dtype == ACL_FLOAT &&
                    out_dtype == ACL_FLOAT && scalar_dtype == ACL_FLOAT && !in_arena &&
                    (!device || t_view.dims.empty()) && views[0].dims == shape &&
                    views[1].dims == shape && out.dims == shape &&
                    !Overlap(out.begin, out.end, views[0].begin, views[0].end) &&
                    !Overlap(out.begin, out.end, views[1].begin, views[1].end);
      int64_t n = 1, stride = 1;
      for (size_t d = shape.size(); d-- > 0;) {
        simple = simple && (shape[d] == 1 || out.strides[d] == stride);
        stride *= shape[d];
        n *= shape[d];
      }
      if (simple) {
        float t;
        std::memcpy(&t, t_bytes, 4);
        for (int64_t i = 0; i < n; ++i) {
          int64_t at[2] = {views[0].offset, views[1].offset};
          for (int k = 0; k < 2; ++k) {
            int64_t rest = i;
            for (size_t d = shape.size(); d-- > 0;) {
              at[k] += rest % shape[d] * views[k].strides[d];
              rest /= shape[d];
            }
          }
          float g, x;
          std::memcpy(&g, &before[views[0].base + at[0] * 4], 4);
          std::memcpy(&x, &before[views[1].base + at[1] * 4], 4);
          const float want = x > t ? g : 0.0f;
          if (std::memcmp(&want, &arena[out.base + (out.offset + i) * 4], 4) != 0) {
            __builtin_trap();  // a wrong answer
          }
        }
      }
    }
  }
  aclDestroyAclOpExecutor(executor);
  for (aclTensor* t : tensors) aclDestroyTensor(t);
  aclDestroyTensor(t_tensor);
  aclDestroyScalar(threshold);
  return 0;
}
