// libFuzzer target over the CPU XLA FFI handler of threshold_backward: each input becomes one
// XLA_FFI_CallFrame, handed to a CPU target's XLA_FFI_Handler entry as XLA's CPU runtime hands it
// over, against a fake XLA FFI API (fake_xla_ffi_api.h).
//
// Fuzzed: the target and the call's form (the lowering's (grad_output, x, threshold) with
// relu_grad false or true, the legacy targets' three operands, or two for ReluGrad); the
// execution stage, the metadata query and the frame's struct size; the argument and result
// counts and kinds (buffer, token); every buffer's dtype (each XLA_FFI_DataType, valid or not),
// rank (0..10) and dims (0, small, large, huge, negative, products that overflow); the data
// pointers (null when empty, in one arena with guard bytes, out equal to or overlapping an
// input); more attributes (count, names, relu_grad among them, types, scalar dtypes known to the
// headers or newer, values); the threshold's dtype and shape (0-d, the result's rank, batched,
// other ranks); the values; FTZ/DAZ on the calling thread.
//
// Every input must end in success or an error, never a crash or a sanitizer report, and:
// - nothing outside the result buffer changed (the arena's guard bytes and the inputs);
// - a buffer with a negative dim or more elements than int64 holds is never touched: its data
//   points at a page that faults on access (a call with a buffer that is just too large for the
//   arena is not made);
// - on success with float32, float64, bfloat16, float16, int8, uint8, int32 or int64 operands
//   that do not overlap the result, the result holds the select's bits (docs/behaviour.md §1,
//   NumPy broadcasting, a batched threshold per element, 0 for ReluGrad), computed here by a
//   scalar oracle;
// - a relu_grad attribute that is not a bool is refused;
// - a metadata query reports this build's XLA FFI API version; a wrong stage or
//   struct size is an error.
//
// Seeds: JAX_THRESHOLD_FFI_FUZZ_WRITE_SEEDS=DIR ./jax_threshold_ffi_handler_fuzzer writes the
// seed corpus (a valid call per target and dtype family) to DIR and exits.
// JAX_THRESHOLD_FFI_FUZZ_VERBOSE=1 prints each call and its outcome.
#include <sys/mman.h>
#include <xmmintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "fuzz/fake_xla_ffi_api.h"
#include "xla/ffi/api/c_api.h"
#include "xla_ffi/ffi_handler.h"

namespace {

using jax_threshold::fuzz::CallOutcome;
using jax_threshold::fuzz::FakeXlaFfiApi;

constexpr size_t kBufferBudget = size_t{256} << 10;  // bytes the arena gives one buffer at most
constexpr size_t kGuard = 64;                        // guard bytes before and after each buffer

bool Verbose() {
  static const bool verbose = std::getenv("JAX_THRESHOLD_FFI_FUZZ_VERBOSE") != nullptr;
  return verbose;
}

[[noreturn]] void Finding(const char* what) {
  std::fprintf(stderr, "ffi_handler_fuzzer: %s\n", what);
  std::abort();
}

// Reads the fuzz input as a stream of small integers; zeros once it is used up.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint64_t U64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | Byte();
    return v;
  }
  size_t remaining() const { return size_ - pos_; }
  const uint8_t* rest() const { return data_ + pos_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// The XLA types of the dtypes the host runs (the table's rows, the lowering's first), then every
// XLA_FFI_DataType value and some that are none.
const std::vector<XLA_FFI_DataType> kSupported = [] {
  std::vector<XLA_FFI_DataType> out;
  for (const jax_threshold::fuzz::XlaDtype& p : jax_threshold::fuzz::kXlaDtypes) {
    if (ascend_kernels::SocRunsKernel(ascend_kernels::Soc::kHost,
                                      ascend_kernels::KernelOp::kThresholdGradV2D,
                                      static_cast<int32_t>(p.dtype))) {
      out.push_back(p.xla);
    }
  }
  return out;
}();

// An XLA_FFI_DataType value of these headers' enum (0..33 without 13 and 14).
XLA_FFI_DataType HeaderDtype(uint8_t b) {
  const int v = b % 34;
  return static_cast<XLA_FFI_DataType>(v == 13 || v == 14 ? 0 : v);
}

XLA_FFI_DataType DecodeDtype(uint8_t b) {
  if (b < 200) return kSupported[b % kSupported.size()];
  // 0..55: every value of the enum, and values a newer XLA may add (the handler must refuse
  // them before anything reads their byte width).
  return static_cast<XLA_FFI_DataType>(b - 200);
}

// Bytes per element as XLA lays the buffer out (the table's); 1 for the sub-byte, token and
// unknown types, so that a buffer of any dtype gets room the guard check can watch.
size_t ElementBytes(XLA_FFI_DataType d) {
  const uint32_t bytes = ascend_kernels::DtypeSize(jax_threshold::fuzz::TableDtypeOf(d));
  return bytes == 0 ? 1 : bytes;
}

// Dims from a byte: mostly small, some large enough for several kernel blocks, some that no
// buffer can have.
int64_t DecodeDim(uint8_t b) {
  constexpr int64_t kSpecial[] = {4097,
                                  60000,
                                  int64_t{1} << 31,
                                  int64_t{1} << 40,
                                  int64_t{1} << 62,
                                  std::numeric_limits<int64_t>::max(),
                                  -1,
                                  -2,
                                  std::numeric_limits<int64_t>::min()};
  if (b < 230) return b % 6;
  if (b < 240) return 7 + (b - 230) * 5;
  return kSpecial[(b - 240) % 9];
}

using Shape = std::vector<int64_t>;

// NumPy's broadcast shape of a and b, or false.
bool Broadcast(const Shape& a, const Shape& b, Shape* out) {
  const size_t rank = std::max(a.size(), b.size());
  out->assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    (*out)[i] = da == 1 ? db : da;
  }
  return true;
}

// An operand's shape: the result's, the result's with dims set to 1 and leading dims dropped
// (it broadcasts), or any shape.
Shape OperandShape(Input& in, const Shape& result) {
  const uint8_t mode = in.Byte();
  Shape s = result;
  if (mode % 4 == 1) {
    const uint8_t ones = in.Byte();
    for (size_t d = 0; d < s.size(); ++d) {
      if (ones >> (d % 8) & 1) s[d] = 1;
    }
    const size_t drop = s.empty() ? 0 : in.Byte() % (s.size() + 1);
    s.erase(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(drop));
  } else if (mode % 4 == 2) {
    s.clear();
    const int rank = in.Byte() % 11;
    for (int d = 0; d < rank; ++d) s.push_back(DecodeDim(in.Byte()));
  }
  return s;
}

struct Buffer {
  XLA_FFI_DataType dtype = XLA_FFI_DataType_F32;
  Shape dims;
  bool backed = false;     // the arena holds it (dims non-negative, bytes within kBufferBudget)
  bool empty = false;      // no elements (some dim is 0)
  bool overflows = false;  // more elements than int64 holds: no buffer XLA could have
  size_t bytes = 0;        // when backed
  size_t offset = 0;       // in the arena, when backed
  XLA_FFI_Buffer c{};
};

void Measure(Buffer& b) {
  __int128 n = 1;
  bool negative = false;
  for (int64_t d : b.dims) {
    if (d < 0) negative = true;
    if (d == 0) b.empty = true;
  }
  for (int64_t d : b.dims) {
    if (b.empty || negative) break;
    n *= d;
    if (n > std::numeric_limits<int64_t>::max()) {
      b.overflows = true;
      break;
    }
  }
  if (b.empty) n = 0;
  if (b.overflows) n = std::numeric_limits<int64_t>::max();
  const __int128 bytes = n * static_cast<__int128>(ElementBytes(b.dtype));
  b.backed = !negative && !b.overflows && bytes <= static_cast<__int128>(kBufferBudget);
  b.bytes = b.backed ? static_cast<size_t>(bytes) : 0;
}

// A page every access to faults: the data of buffers the arena cannot hold.
void* NoAccessPage() {
  static void* page = [] {
    void* p = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) Finding("mmap of the no-access page failed");
    return p;
  }();
  return page;
}

// One attribute of the call frame, with the storage its pointers refer to.
struct Attr {
  std::string name;
  XLA_FFI_AttrType type = XLA_FFI_AttrType_SCALAR;
  std::string text;  // STRING
  XLA_FFI_DataType scalar_dtype = XLA_FFI_DataType_F64;
  alignas(16) unsigned char value[16] = {};  // SCALAR's value, or ARRAY's elements
  XLA_FFI_ByteSpan name_span{}, text_span{};
  XLA_FFI_Scalar scalar{};
  XLA_FFI_Array array{};
  XLA_FFI_Attrs dict{};
};

//===-- The oracle: docs/behaviour.md §1 -------------------------------------------------===//

float HalfToFloat(uint16_t h) {
  const int sign = h >> 15, exp = h >> 10 & 0x1f, mant = h & 0x3ff;
  float f;
  if (exp == 0) {
    f = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    f = mant != 0 ? std::numeric_limits<float>::quiet_NaN()
                  : std::numeric_limits<float>::infinity();
  } else {
    f = std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
  }
  return sign ? -f : f;
}

// A threshold element: a double (exact for float32 and float64) or an int64.
struct Scalar {
  bool is_int = false;
  double f = 0;
  int64_t i = 0;
};

// The integer and IEEE float rows through their C type, so that a new row of either is read.
struct ScalarLoad {
  const unsigned char* p;
  Scalar s;
  bool known = false;
  template <ascend_kernels::Dtype D>
  void operator()(ascend_kernels::CTypeOf<D>) {
    using T = ascend_kernels::CType<D>;
    if constexpr (ascend_kernels::CTypeOf<D>::kInteger || std::is_floating_point_v<T>) {
      T v;
      std::memcpy(&v, p, sizeof v);
      if constexpr (ascend_kernels::CTypeOf<D>::kInteger) {
        s = {true, 0, static_cast<int64_t>(v)};
      } else {
        s.f = static_cast<double>(v);
      }
      known = true;
    }
  }
};

Scalar ReadScalar(XLA_FFI_DataType d, const unsigned char* p) {
  Scalar s;
  uint16_t bits16;
  if (d == XLA_FFI_DataType_F16 || d == XLA_FFI_DataType_BF16) std::memcpy(&bits16, p, 2);
  if (d == XLA_FFI_DataType_F16) {
    s.f = HalfToFloat(bits16);
  } else if (d == XLA_FFI_DataType_BF16) {
    const uint32_t bits = uint32_t{bits16} << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    s.f = f;
  } else {
    ScalarLoad load{p, {}};
    ascend_kernels::VisitKernelDtype(jax_threshold::fuzz::TableDtypeOf(d), load);
    if (!load.known) Finding("oracle: a dtype it does not know");
    s = load.s;
  }
  return s;
}

// x > t as real numbers (the comparison precision table: float x against a float32 or float64
// threshold, integer x exactly).
bool Greater(const Scalar& x, const Scalar& t) {
  if (!x.is_int && !t.is_int) return x.f > t.f;
  if (x.is_int && t.is_int) return x.i > t.i;
  if (x.is_int) {  // x > t <=> x > floor(t)
    if (std::isnan(t.f)) return false;
    if (t.f >= 0x1p63) return false;
    if (t.f < -0x1p63) return true;
    return x.i > static_cast<int64_t>(std::floor(t.f));
  }
  Finding("oracle: a float x against an integer threshold");
}

bool OracleDtype(XLA_FFI_DataType d) {
  return std::find(kSupported.begin(), kSupported.end(), d) != kSupported.end();
}

// The element offset in `shape` (aligned at the last dim of `result`) of result index `idx`.
int64_t BroadcastOffset(const Shape& shape, const Shape& result, const std::vector<int64_t>& idx) {
  int64_t offset = 0, stride = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    const size_t d = shape.size() - 1 - k;
    const size_t r = result.size() - 1 - k;
    if (shape[d] != 1) offset += idx[r] * stride;
    stride *= shape[d];
  }
  return offset;
}

//===-- The call ---------------------------------------------------------------------------===//

// The call's form: the lowering's (grad_output, x, threshold) with relu_grad, or a legacy
// target's operands without it.
enum Form { kOperand, kReluGrad, kLegacyOperand, kLegacyReluGrad };

struct Call {
  Form form = kOperand;
  const char* target = nullptr;
  uint8_t frame_mode = 0;
  bool caller_flushes = false;
  std::vector<Buffer> args, rets;
  std::vector<Attr> attrs;  // sorted by name, each name once, as XLA passes them
};

// Attributes a hostile caller adds, whatever their type or scalar dtype (one newer than the
// headers too): a relu_grad of another type replaces the form's. A bool's byte is 0 or 1, as XLA
// writes it.
void DecodeAttrs(Input& in, Call& call) {
  if (call.form == kOperand || call.form == kReluGrad) {
    Attr a;
    a.name = "relu_grad";
    a.scalar_dtype = XLA_FFI_DataType_PRED;
    a.value[0] = call.form == kReluGrad;
    call.attrs.push_back(a);
  }
  const uint8_t count = in.Byte();
  if (count < 192) return;
  const char* const names[] = {"threshold", "relu_grad", "zzz_unknown", ""};
  for (int k = 0; k <= count % 3; ++k) {
    Attr a;
    a.name = names[in.Byte() % 4];
    a.type = static_cast<XLA_FFI_AttrType>(1 + in.Byte() % 4);
    a.text = "float32";
    a.scalar_dtype = DecodeDtype(in.Byte());
    for (size_t b = 0; b < 8; ++b) a.value[b] = in.Byte();
    if (a.scalar_dtype == XLA_FFI_DataType_PRED) a.value[0] &= 1;
    auto same = std::find_if(call.attrs.begin(), call.attrs.end(),
                             [&](const Attr& b) { return b.name == a.name; });
    if (same != call.attrs.end()) call.attrs.erase(same);
    call.attrs.push_back(a);
  }
  std::sort(call.attrs.begin(), call.attrs.end(),
            [](const Attr& a, const Attr& b) { return a.name < b.name; });
}

// Wires an attribute's C structs to its storage (after the vector holding it stopped moving).
void Wire(Attr& a) {
  a.name_span = {a.name.data(), a.name.size()};
  a.text_span = {a.text.data(), a.text.size()};
  a.scalar = {a.scalar_dtype, a.value};
  a.array = {a.scalar_dtype, 1, a.value};
  a.dict = {XLA_FFI_Attrs_STRUCT_SIZE, nullptr, 0, nullptr, nullptr, nullptr};
}

void* AttrPointer(Attr& a) {
  switch (a.type) {
    case XLA_FFI_AttrType_STRING:
      return &a.text_span;
    case XLA_FFI_AttrType_ARRAY:
      return &a.array;
    case XLA_FFI_AttrType_DICTIONARY:
      return &a.dict;
    default:
      return &a.scalar;
  }
}

// A threshold dtype the lowering emits for x (the table's), or float32 for an x it has none for.
XLA_FFI_DataType LoweringThresholdDtype(XLA_FFI_DataType x, uint8_t b) {
  std::vector<XLA_FFI_DataType> choices;
  for (XLA_FFI_DataType t : {x, XLA_FFI_DataType_F32, XLA_FFI_DataType_F64}) {
    using jax_threshold::fuzz::TableDtypeOf;
    if (ascend_kernels::TakesThresholdDtype(TableDtypeOf(x), TableDtypeOf(t))) choices.push_back(t);
  }
  return choices.empty() ? XLA_FFI_DataType_F32 : choices[b % choices.size()];
}

void Fill(Input& in, unsigned char* p, const Buffer& b) {
  const uint8_t mode = in.Byte();
  const size_t width = ElementBytes(b.dtype);
  const size_t n = width == 0 ? 0 : b.bytes / width;
  if (mode % 3 == 0 && in.remaining() > 0) {  // the input's own bytes
    const size_t avail = in.remaining();
    for (size_t i = 0; i < b.bytes; ++i) p[i] = in.rest()[i % avail];
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    const int k = static_cast<int>((i * 7 + mode) % 13) - 6;  // -6..6
    unsigned char* e = p + i * width;
    switch (b.dtype) {
      case XLA_FFI_DataType_F32: {
        float f = static_cast<float>(k) * 0.25f;
        if (mode % 3 == 2 && k == 6) f = std::numeric_limits<float>::quiet_NaN();
        if (mode % 3 == 2 && k == -6) f = 1e-40f;  // subnormal
        if (mode % 3 == 2 && k == 5) f = -std::numeric_limits<float>::infinity();
        std::memcpy(e, &f, 4);
        break;
      }
      case XLA_FFI_DataType_F64: {
        double f = static_cast<double>(k) * 0.25;
        if (mode % 3 == 2 && k == 6) f = std::nan("");
        if (mode % 3 == 2 && k == -6) f = 1e-310;  // subnormal
        std::memcpy(e, &f, 8);
        break;
      }
      case XLA_FFI_DataType_BF16:
      case XLA_FFI_DataType_F16: {
        float f = static_cast<float>(k) * 0.25f;
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        uint16_t h = static_cast<uint16_t>(bits >> 16);  // bfloat16 of a quarter: exact
        if (b.dtype == XLA_FFI_DataType_F16) {
          // k/4 in binary16: sign, exponent and the top mantissa bits of the float32.
          const int exp = static_cast<int>(bits >> 23 & 0xff) - 127 + 15;
          h = f == 0 ? 0
                     : static_cast<uint16_t>((bits >> 16 & 0x8000) | (exp << 10) |
                                             (bits >> 13 & 0x3ff));
        }
        if (mode % 3 == 2 && k == 6) h = b.dtype == XLA_FFI_DataType_F16 ? 0x7e00 : 0x7fc0;
        if (mode % 3 == 2 && k == -6) h = 0x0001;  // subnormal in both
        std::memcpy(e, &h, 2);
        break;
      }
      default:
        for (size_t j = 0; j < width; ++j) {
          e[j] = j == 0 ? static_cast<unsigned char>(k) : (k < 0 ? 0xff : 0);
        }
    }
  }
}

bool Overlap(const Buffer& a, const Buffer& b) {
  return a.backed && b.backed && a.bytes > 0 && b.bytes > 0 && a.offset < b.offset + b.bytes &&
         b.offset < a.offset + a.bytes;
}

// The CPU target `name`'s execute stage, or (instantiate) its instantiate stage.
XLA_FFI_Handler* Handler(const char* name, bool instantiate) {
  namespace fh = jax_threshold::ffi_handler;
  // What jax_threshold.ffi's registration of the state type does in XLA: give it an id.
  XLA_FFI_TypeId* id = fh::ExecutablePlansTypeId();
  if (id->type_id == 0) id->type_id = 1;
  for (const auto& t : fh::FfiTargets()) {
    if (std::strcmp(t.platform, "cpu") == 0 && std::strcmp(t.name, name) == 0) {
      if (t.handler == nullptr || t.instantiate == nullptr) Finding("a CPU target without stages");
      return instantiate ? t.instantiate : t.handler;
    }
  }
  Finding("a CPU target that is not registered");
}

void Run(Input& in) {
  Call call;
  const uint8_t form = in.Byte();
  call.form = static_cast<Form>(form % 4);
  const bool inline_name = form >> 2 & 1;
  switch (call.form) {
    case kOperand:
    case kReluGrad:
      call.target = jax_threshold::ffi_handler::kLoweringTarget;
      break;
    case kLegacyOperand:
      call.target = inline_name ? "jax_threshold_threshold_backward_inline_v1"
                                : "jax_threshold_threshold_backward_v1";
      break;
    case kLegacyReluGrad:
      call.target = inline_name ? "jax_threshold_threshold_backward_relu_grad_inline_v1"
                                : "jax_threshold_threshold_backward_relu_grad_v1";
      break;
  }
  call.frame_mode = in.Byte();
  call.caller_flushes = in.Byte() & 1;

  // dtypes: one for the operands and the result, sometimes one each.
  const XLA_FFI_DataType x_dtype = DecodeDtype(in.Byte());
  const uint8_t mix = in.Byte();
  const XLA_FFI_DataType g_dtype = mix % 16 == 1 ? DecodeDtype(in.Byte()) : x_dtype;
  const XLA_FFI_DataType out_dtype = mix % 16 == 2 ? DecodeDtype(in.Byte()) : x_dtype;

  // The result's shape, the operands' (most broadcast to it), then the result's as declared.
  Shape result;
  const int rank = in.Byte() % 6;
  for (int d = 0; d < rank; ++d) result.push_back(DecodeDim(in.Byte()));
  Buffer g, x, out, t;
  g.dtype = g_dtype;
  g.dims = OperandShape(in, result);
  x.dtype = x_dtype;
  x.dims = OperandShape(in, result);
  out.dtype = out_dtype;
  Shape bcast;
  out.dims = Broadcast(g.dims, x.dims, &bcast) ? bcast : result;
  if (in.Byte() % 8 == 7) out.dims = OperandShape(in, result);

  // The threshold: the lowering's dtype and a 0-d or batched shape mostly.
  const uint8_t t_mode = in.Byte();
  t.dtype = t_mode % 8 == 7 ? DecodeDtype(in.Byte()) : LoweringThresholdDtype(x_dtype, t_mode >> 3);
  const uint8_t t_shape = in.Byte();
  switch (t_shape % 5) {
    case 0:
      break;  // 0-d
    case 1:
      t.dims.assign(out.dims.size(), 1);
      break;
    case 2: {  // batched: each dim 1 or the result's
      const uint8_t mask = in.Byte();
      t.dims = out.dims;
      for (size_t d = 0; d < t.dims.size(); ++d) {
        if (mask >> (d % 8) & 1) t.dims[d] = 1;
      }
      break;
    }
    default:
      t.dims = OperandShape(in, out.dims);
  }
  DecodeAttrs(in, call);

  // The frame's buffers: the form's own, sometimes fewer, more or tokens.
  call.args =
      call.form == kLegacyReluGrad ? std::vector<Buffer>{g, x} : std::vector<Buffer>{g, x, t};
  call.rets = {out};
  const uint8_t counts = in.Byte();
  if (counts % 16 == 13) call.args.resize(in.Byte() % 6, x);
  if (counts % 16 == 14) call.rets.resize(in.Byte() % 3, out);
  if (counts % 16 == 15) {  // a token among them
    Buffer token;
    token.dtype = XLA_FFI_DataType_TOKEN;
    auto& list = in.Byte() % 2 ? call.rets : call.args;
    if (!list.empty()) list[in.Byte() % list.size()] = token;
  }

  // The arena: each backed buffer in its own 64-byte aligned slot between guard bytes; out may
  // share an input's bytes instead.
  size_t arena_size = kGuard;
  std::vector<Buffer*> all;
  for (Buffer& b : call.args) all.push_back(&b);
  for (Buffer& b : call.rets) all.push_back(&b);
  for (Buffer* b : all) {
    Measure(*b);
    if (!b->backed) continue;
    b->offset = arena_size;
    arena_size += (b->bytes + 63) / 64 * 64 + kGuard;
  }
  const uint8_t place = in.Byte();
  if (!call.rets.empty() && call.args.size() >= 2 && place % 4 == 3) {
    Buffer& r = call.rets[0];
    const Buffer& src = call.args[place / 4 % 2];
    if (r.backed && src.backed) {  // out == an input, or shifted by some 16-byte steps
      const size_t shift = (place >> 3) % 2 ? 16 * static_cast<size_t>(in.Byte() % 8) : 0;
      r.offset = src.offset + std::min(shift, src.bytes / 16 * 16);
      if (r.offset + r.bytes + kGuard > arena_size) arena_size = r.offset + r.bytes + kGuard;
    }
  }
  std::vector<unsigned char> arena(arena_size + 64);
  unsigned char* base =
      reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(arena.data()) + 63) / 64 * 64);
  for (size_t i = 0; i < arena_size; ++i) base[i] = static_cast<unsigned char>(i * 131 + 7);
  const bool null_empty = in.Byte() % 2 == 0;
  for (Buffer* b : all) {
    if (b->backed && b->bytes > 0) Fill(in, base + b->offset, *b);
    void* data = b->backed ? static_cast<void*>(base + b->offset) : NoAccessPage();
    if (b->empty && null_empty) data = nullptr;
    if (b->dtype == XLA_FFI_DataType_TOKEN) data = nullptr;
    b->c = {XLA_FFI_Buffer_STRUCT_SIZE,           nullptr,       b->dtype, data,
            static_cast<int64_t>(b->dims.size()), b->dims.data()};
  }
  // A buffer that is not empty and too large for the arena, but one XLA could hand over: the
  // handler may read or write it, so the call is not made.
  for (const Buffer* b : all) {
    bool negative = false;
    for (int64_t d : b->dims) negative = negative || d < 0;
    if (!b->backed && !b->empty && !negative && !b->overflows) return;
  }

  std::vector<XLA_FFI_ArgType> arg_types(call.args.size(), XLA_FFI_ArgType_BUFFER);
  std::vector<void*> arg_ptrs;
  for (Buffer& b : call.args) arg_ptrs.push_back(&b.c);
  std::vector<XLA_FFI_RetType> ret_types(call.rets.size(), XLA_FFI_RetType_BUFFER);
  std::vector<void*> ret_ptrs;
  for (Buffer& b : call.rets) ret_ptrs.push_back(&b.c);
  std::vector<XLA_FFI_AttrType> attr_types;
  std::vector<XLA_FFI_ByteSpan*> attr_names;
  std::vector<void*> attr_ptrs;
  for (Attr& a : call.attrs) {
    Wire(a);
    attr_types.push_back(a.type);
    attr_names.push_back(&a.name_span);
    attr_ptrs.push_back(AttrPointer(a));
  }

  XLA_FFI_Handler* instantiate = Handler(call.target, /*instantiate=*/true);
  XLA_FFI_Handler* execute = Handler(call.target, /*instantiate=*/false);
  FakeXlaFfiApi fake;
  fake.RegisterType(jax_threshold::ffi_handler::ExecutablePlansTypeId()->type_id,
                    jax_threshold::ffi_handler::ExecutablePlansTypeInfo()->deleter);
  XLA_FFI_Metadata metadata{XLA_FFI_Metadata_STRUCT_SIZE, {}, 0, {}};
  XLA_FFI_Metadata_Extension metadata_ext{
      {XLA_FFI_Metadata_Extension_STRUCT_SIZE, XLA_FFI_Extension_Metadata, nullptr}, &metadata};
  XLA_FFI_CallFrame frame{};
  frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  frame.api = fake.api();
  frame.ctx = fake.ctx();
  frame.stage = XLA_FFI_ExecutionStage_EXECUTE;
  const bool query_metadata = call.frame_mode == 250;
  const bool wrong_size = call.frame_mode == 251;
  if (query_metadata) frame.extension_start = &metadata_ext.extension_base;
  if (wrong_size) frame.struct_size -= 8;
  if (call.frame_mode >= 252)
    frame.stage = static_cast<XLA_FFI_ExecutionStage>(call.frame_mode - 252);
  frame.args = {XLA_FFI_Args_STRUCT_SIZE, nullptr, static_cast<int64_t>(call.args.size()),
                arg_types.data(), arg_ptrs.data()};
  frame.rets = {XLA_FFI_Rets_STRUCT_SIZE, nullptr, static_cast<int64_t>(call.rets.size()),
                ret_types.data(), ret_ptrs.data()};
  frame.attrs = {
      XLA_FFI_Attrs_STRUCT_SIZE, nullptr,           static_cast<int64_t>(call.attrs.size()),
      attr_types.data(),         attr_names.data(), attr_ptrs.data()};

  if (Verbose()) {
    for (size_t i = 0; i < all.size(); ++i) {
      const Buffer* b = all[i];
      std::string dims;
      for (int64_t d : b->dims) dims += (dims.empty() ? "" : ",") + std::to_string(d);
      std::fprintf(stderr, "  %s dtype %d dims [%s]%s\n", i < call.args.size() ? "arg" : "ret",
                   static_cast<int>(b->dtype), dims.c_str(), b->backed ? "" : " (no access)");
    }
  }
  const std::vector<unsigned char> before(base, base + arena_size);
  const unsigned int csr = _mm_getcsr();
  if (call.caller_flushes) _mm_setcsr(csr | 0x8040);  // FTZ | DAZ, as XLA's CPU threads run
  // XLA instantiates the executable's custom call (attributes only) before its first run; an
  // instantiation it refuses leaves no state, and the run then fails cleanly.
  XLA_FFI_CallFrame inst = frame;
  inst.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  inst.extension_start = nullptr;
  inst.stage = XLA_FFI_ExecutionStage_INSTANTIATE;
  inst.args = {XLA_FFI_Args_STRUCT_SIZE, nullptr, 0, nullptr, nullptr};
  inst.rets = {XLA_FFI_Rets_STRUCT_SIZE, nullptr, 0, nullptr, nullptr};
  FakeXlaFfiApi::Outcome(instantiate(&inst));
  CallOutcome outcome = FakeXlaFfiApi::Outcome(execute(&frame));
  _mm_setcsr(csr);
  if (outcome.code == XLA_FFI_Error_Code_OK && !query_metadata) {
    // The executable runs again: its plan is reused with the buffers rebound, and must give the
    // same outcome (the oracle below checks the second run's result).
    if (call.caller_flushes) _mm_setcsr(csr | 0x8040);
    outcome = FakeXlaFfiApi::Outcome(execute(&frame));
    _mm_setcsr(csr);
    if (outcome.code != XLA_FFI_Error_Code_OK) Finding("a second run of a call that ran failed");
  }
  const bool ok = outcome.code == XLA_FFI_Error_Code_OK;
  if (!ok && outcome.message.empty()) Finding("an error without a message");

  // The kernel the call asks for: ReluGrad for two operands or relu_grad=true, which must be a
  // bool.
  bool relu_grad = call.args.size() == 2;
  for (const Attr& a : call.attrs) {
    if (a.name != "relu_grad") continue;
    if (a.type != XLA_FFI_AttrType_SCALAR || a.scalar_dtype != XLA_FFI_DataType_PRED) {
      if (ok && !query_metadata) Finding("a relu_grad attribute that is not a bool was accepted");
    }
    relu_grad = a.value[0] != 0;
  }

  if (query_metadata) {
    if (!ok) Finding("a metadata query did not just succeed");
    if (metadata.api_version.major_version != XLA_FFI_API_MAJOR ||
        metadata.api_version.minor_version != XLA_FFI_API_MINOR) {
      Finding("a metadata query reported another XLA FFI API version");
    }
  }
  if ((wrong_size || frame.stage != XLA_FFI_ExecutionStage_EXECUTE) && ok) {
    Finding("a call with a wrong struct size or stage succeeded");
  }

  // Nothing outside the result changed.
  const Buffer* result_buf = call.rets.empty() ? nullptr : &call.rets[0];
  for (size_t i = 0; i < arena_size; ++i) {
    const bool in_result = result_buf != nullptr && result_buf->backed && i >= result_buf->offset &&
                           i < result_buf->offset + result_buf->bytes;
    if (!in_result && base[i] != before[i]) Finding("a byte outside the result changed");
  }

  // The oracle, for calls the lowering could emit whose operands do not overlap the result.
  // The operands the kernel reads: a ReluGrad call's threshold is not one of them.
  const size_t read = relu_grad ? 2 : 3;
  bool oracle = ok && !query_metadata && call.rets.size() == 1 && result_buf->backed &&
                !result_buf->empty && OracleDtype(x_dtype) && g_dtype == x_dtype &&
                out_dtype == x_dtype && call.args.size() >= read;
  for (size_t i = 0; i < read && i < call.args.size(); ++i) {
    const Buffer& b = call.args[i];
    oracle = oracle && b.backed && b.dtype != XLA_FFI_DataType_TOKEN && !Overlap(b, *result_buf);
  }
  for (size_t i = 0; i < read && i < call.args.size(); ++i) {  // broadcast as NumPy says
    Shape to;
    const Buffer& b = call.args[i];
    if (oracle && !(Broadcast(b.dims, result_buf->dims, &to) && to == result_buf->dims)) {
      Finding("operands that do not broadcast to the result were accepted");
    }
  }
  if (Verbose()) {
    std::fprintf(stderr, "target %s stage %d args %zu rets %zu attrs %zu x dtype %d: %s%s\n",
                 call.target, static_cast<int>(frame.stage), call.args.size(), call.rets.size(),
                 call.attrs.size(), static_cast<int>(x_dtype),
                 ok ? (relu_grad ? "ok (ReluGrad)" : "ok") : outcome.message.c_str(),
                 oracle ? ", oracle checked" : "");
  }
  if (!oracle) return;

  const Buffer& rb = *result_buf;
  const Buffer& gb = call.args[0];
  const Buffer& xb = call.args[1];
  const size_t width = ElementBytes(x_dtype);
  const size_t n = rb.bytes / width;
  std::vector<int64_t> idx(rb.dims.size(), 0);
  const unsigned char zero[8] = {};
  const Scalar relu_grad_threshold = ReadScalar(x_dtype, zero);  // 0, integer for integer x
  for (size_t i = 0; i < n; ++i) {
    const int64_t gi = BroadcastOffset(gb.dims, rb.dims, idx);
    const int64_t xi = BroadcastOffset(xb.dims, rb.dims, idx);
    const Scalar xv = ReadScalar(x_dtype, &before[xb.offset + xi * width]);
    Scalar tv = relu_grad_threshold;
    if (!relu_grad) {
      const Buffer& tb = call.args[2];
      const int64_t ti = BroadcastOffset(tb.dims, rb.dims, idx);
      tv = ReadScalar(tb.dtype, &before[tb.offset + ti * ElementBytes(tb.dtype)]);
    }
    unsigned char want[8] = {};
    if (Greater(xv, tv)) std::memcpy(want, &before[gb.offset + gi * width], width);
    if (std::memcmp(want, base + rb.offset + i * width, width) != 0) {
      Finding("the result differs from the select's bits");
    }
    for (size_t d = idx.size(); d-- > 0;) {  // the next row-major index
      if (++idx[d] < rb.dims[d]) break;
      idx[d] = 0;
    }
  }
}

// The starting corpus: a valid call of each form and dtype family, in the byte order Run reads.
void WriteSeeds(const char* dir) {
  struct Seed {
    const char* name;
    std::vector<uint8_t> bytes;
  };
  // form, frame, flags, x dtype, mix, rank, dims..., g shape, x shape, out declared, threshold
  // dtype, threshold shape [, mask], attributes, counts, placement, null-if-empty, one fill byte
  // per buffer.
  auto call = [&](Form form, uint8_t dtype, std::vector<uint8_t> shape, uint8_t t_shape,
                  std::vector<uint8_t> attrs = {0}) {
    std::vector<uint8_t> b = {static_cast<uint8_t>(form),        0, 0, dtype, 0,
                              static_cast<uint8_t>(shape.size())};
    b.insert(b.end(), shape.begin(), shape.end());
    b.insert(b.end(), {0, 0, 1, 0, t_shape});
    if (t_shape == 2) b.push_back(1);  // batched over every dim but the first
    b.insert(b.end(), attrs.begin(), attrs.end());
    b.insert(b.end(), {3, 1, 1, 1, 1, 7, 1});
    return b;
  };
  // One scalar attribute "threshold" of XLA_FFI_DataType 55, newer than any headers.
  const std::vector<uint8_t> newer_scalar = {192, 0, 2, 255, 1, 0, 0, 0, 0, 0, 0, 0};
  // relu_grad as a float64 scalar (1.0) instead of a bool.
  const std::vector<uint8_t> relu_grad_float = {192, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f};
  // A ReluGrad call of rank 10: grad_output and x of their own shapes (mode 2), broadcasting to
  // a result whose dims merge into fewer than 8 (`alternating`: into 10, which phase one refuses).
  auto rank_10 = [](bool alternating) {
    std::vector<uint8_t> b = {kReluGrad, 0, 0, 0, 0, 0, 2, 10};
    for (int d = 0; d < 10; ++d) b.push_back(d == 9 ? 3 : 2);
    b.insert(b.end(), {2, 10});
    for (int d = 0; d < 10; ++d) b.push_back(d == 9 ? 3 : alternating ? 1 + d % 2 : 1);
    b.insert(b.end(), {1, 0, 0, 0, 3, 1, 1, 1, 1, 7, 1});
    return b;
  };
  const Seed seeds[] = {
      {"operand-float32", call(kOperand, 0, {3, 4}, 0)},
      {"operand-float32-batched", call(kOperand, 0, {3, 4}, 2)},
      {"operand-float32-blocks", call(kOperand, 0, {241}, 0)},
      {"operand-bfloat16", call(kOperand, 2, {5}, 0)},
      {"operand-float16", call(kOperand, 1, {2, 3}, 0)},
      {"operand-float64", call(kOperand, 3, {4, 2}, 0)},
      {"operand-int8", call(kOperand, 4, {7}, 0)},
      {"operand-int64", call(kOperand, 7, {2, 2}, 2)},
      {"relu-grad-float32", call(kReluGrad, 0, {3, 4}, 0)},
      {"relu-grad-bfloat16", call(kReluGrad, 2, {5}, 0)},
      {"relu-grad-float64", call(kReluGrad, 3, {4}, 0)},
      {"relu-grad-uint8", call(kReluGrad, 5, {3, 3}, 0)},
      {"relu-grad-int32", call(kReluGrad, 6, {2, 5}, 0)},
      {"relu-grad-rank-10", rank_10(false)},
      {"relu-grad-rank-10-alternating", rank_10(true)},
      {"legacy-operand-float32", call(kLegacyOperand, 0, {3, 4}, 2)},
      {"legacy-relu-grad-int8", call(kLegacyReluGrad, 4, {7}, 0)},
      // A result of dims INT64_MIN and 2^31 (DecodeDim 248, 251): their product overflows.
      {"dims-whose-product-overflows", call(kOperand, 0, {248, 251}, 0)},
      {"attribute-scalar-of-a-dtype-newer-than-the-headers",
       call(kReluGrad, 0, {3}, 0, newer_scalar)},
      {"relu-grad-attribute-not-a-bool", call(kReluGrad, 0, {3}, 0, relu_grad_float)},
  };
  for (const Seed& s : seeds) {
    const std::string path = std::string(dir) + "/" + s.name;
    FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr || std::fwrite(s.bytes.data(), 1, s.bytes.size(), f) != s.bytes.size()) {
      Finding("cannot write a seed");
    }
    std::fclose(f);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("JAX_THRESHOLD_FFI_FUZZ_WRITE_SEEDS")) {
    WriteSeeds(dir);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  Run(in);
  return 0;
}
