// The dtypes and SoCs the operators know, as named data: one row per dtype and per SoC, each
// field named where the row is written. Every other list (codes, names, sizes, integer ranges,
// the threshold dtypes each x dtype takes, which SoC runs which kernel, UB sizes, core counts)
// follows these rows. Host code reads the rows; kernel code only in constant expressions (its
// helpers are __aicore__, and kernel code never reads the arrays at run time).
#pragma once

#include <cstdint>

// `__aicore__` and the 16-bit floats' C types, half and bfloat16_t, are AscendC's: kernel code
// includes kernel_operator.h (CANN's, or the CPU model's) first, which defines them and GM_ADDR;
// host code takes the CPU model's (`__aicore__` empty; bit for bit the same storage).
#ifndef GM_ADDR
#include "../../cpu_ascendc/ascendc_types.h"
#endif

namespace ascend_kernels {

// aclDataType's values.
enum class Dtype : int32_t {
  kFloat32 = 0,
  kFloat16 = 1,
  kInt8 = 2,
  kInt32 = 3,
  kUInt8 = 4,
  kInt16 = 6,
  kUInt16 = 7,
  kUInt32 = 8,
  kInt64 = 9,
  kUInt64 = 10,
  kFloat64 = 11,
  kBool = 12,
  kComplex64 = 16,
  kComplex128 = 17,
  kBFloat16 = 27,
};

enum class Soc : int32_t { kAscend910 = 0, kAscend910B = 1, kAscend950 = 2, kHost = 3 };

enum class KernelOp { kThresholdGradV2D, kReluGrad };
constexpr const char* KernelOpName(KernelOp op) {
  return op == KernelOp::kReluGrad ? "ReluGrad" : "ThresholdGradV2D";
}

// Which threshold dtypes the kernel reads (device thresholds) for an x dtype.
enum ThresholdDtypes : uint32_t {
  kThresholdFloat32 = 1u << 0,
  kThresholdFloat64 = 1u << 1,
  kThresholdSameAsX = 1u << 2,
  kIntegerXThresholds = kThresholdSameAsX | kThresholdFloat32 | kThresholdFloat64,
};

// What a SoC's AscendC API offers beyond float32, float16, int32, int8 and uint8.
enum SocFeatures : uint32_t {
  kSocBFloat16 = 1u << 0,               // float <- bfloat16 Cast (dav_c220 and later)
  kSocInt64ReluGrad = 1u << 1,          // int64 at threshold exactly 0 (count-form Maxs/Mins/Adds)
  kSocInt64ThresholdGradV2D = 1u << 2,  // int64 at any threshold
  kSocFloat64 = 1u << 3,
};

struct DtypeRow {
  Dtype dtype;
  const char* name = "";  // NumPy's
  // How many tile-sized buffers the kernels keep in UB for the dtype (docs/behaviour.md §3);
  // 0: no kernel runs the dtype (phase one names and refuses it).
  uint32_t ub_divisor = 0;
  uint32_t thresholds = 0;                // ThresholdDtypes
  uint32_t threshold_grad_v2d_needs = 0;  // SocFeatures a SoC needs for each operator's kernel
  uint32_t relu_grad_needs = 0;

  constexpr explicit DtypeRow(Dtype d) : dtype(d) {}
  constexpr DtypeRow Name(const char* v) const { return With(&DtypeRow::name, v); }
  constexpr DtypeRow UbDivisor(uint32_t v) const { return With(&DtypeRow::ub_divisor, v); }
  constexpr DtypeRow Thresholds(uint32_t v) const { return With(&DtypeRow::thresholds, v); }
  constexpr DtypeRow ThresholdGradV2DNeeds(uint32_t v) const {
    return With(&DtypeRow::threshold_grad_v2d_needs, v);
  }
  constexpr DtypeRow ReluGradNeeds(uint32_t v) const { return With(&DtypeRow::relu_grad_needs, v); }

 private:
  constexpr DtypeRow With(const char* DtypeRow::* field, const char* v) const {
    DtypeRow row = *this;
    row.*field = v;
    return row;
  }
  constexpr DtypeRow With(uint32_t DtypeRow::* field, uint32_t v) const {
    DtypeRow row = *this;
    row.*field = v;
    return row;
  }
};

// In the order messages list a SoC's dtypes. The UB divisors: float32/float16 7, int32 8,
// bfloat16 10, int8/uint8 14 (docs/behaviour.md §3); int64/float64 8 like int32 (the same six
// queue buffers plus the mask, no widening scratch).
inline constexpr DtypeRow kDtypes[] = {
    DtypeRow(Dtype::kFloat32).Name("float32").UbDivisor(7).Thresholds(kThresholdFloat32),
    DtypeRow(Dtype::kInt32).Name("int32").UbDivisor(8).Thresholds(kIntegerXThresholds),
    DtypeRow(Dtype::kFloat16).Name("float16").UbDivisor(7).Thresholds(kThresholdFloat32),
    DtypeRow(Dtype::kInt8).Name("int8").UbDivisor(14).Thresholds(kIntegerXThresholds),
    DtypeRow(Dtype::kUInt8).Name("uint8").UbDivisor(14).Thresholds(kIntegerXThresholds),
    DtypeRow(Dtype::kBFloat16)
        .Name("bfloat16")
        .UbDivisor(10)
        .Thresholds(kThresholdFloat32)
        .ThresholdGradV2DNeeds(kSocBFloat16)
        .ReluGradNeeds(kSocBFloat16),
    DtypeRow(Dtype::kInt64)
        .Name("int64")
        .UbDivisor(8)
        .Thresholds(kIntegerXThresholds)
        .ThresholdGradV2DNeeds(kSocInt64ThresholdGradV2D)
        .ReluGradNeeds(kSocInt64ReluGrad),
    DtypeRow(Dtype::kFloat64)
        .Name("float64")
        .UbDivisor(8)
        .Thresholds(kThresholdFloat64)
        .ThresholdGradV2DNeeds(kSocFloat64)
        .ReluGradNeeds(kSocFloat64),
    DtypeRow(Dtype::kInt16).Name("int16"),
    DtypeRow(Dtype::kUInt16).Name("uint16"),
    DtypeRow(Dtype::kUInt32).Name("uint32"),
    DtypeRow(Dtype::kUInt64).Name("uint64"),
    DtypeRow(Dtype::kBool).Name("bool"),
    DtypeRow(Dtype::kComplex64).Name("complex64"),
    DtypeRow(Dtype::kComplex128).Name("complex128"),
};
inline constexpr int kDtypeCount = sizeof(kDtypes) / sizeof(kDtypes[0]);

// The kernels' element types. Integer range and size follow from the C type.
template <typename T>
struct IntegerType {
  using Type = T;
  static constexpr bool kInteger = true;
};
template <typename T>
struct FloatType {
  using Type = T;
  static constexpr bool kInteger = false;
};
struct Complex64 {
  float real, imag;
};
struct Complex128 {
  double real, imag;
};
template <Dtype D>
struct CTypeOf;
template <>
struct CTypeOf<Dtype::kFloat32> : FloatType<float> {};
template <>
struct CTypeOf<Dtype::kFloat16> : FloatType<half> {};
template <>
struct CTypeOf<Dtype::kInt8> : IntegerType<int8_t> {};
template <>
struct CTypeOf<Dtype::kInt32> : IntegerType<int32_t> {};
template <>
struct CTypeOf<Dtype::kUInt8> : IntegerType<uint8_t> {};
template <>
struct CTypeOf<Dtype::kInt16> : IntegerType<int16_t> {};
template <>
struct CTypeOf<Dtype::kUInt16> : IntegerType<uint16_t> {};
template <>
struct CTypeOf<Dtype::kUInt32> : IntegerType<uint32_t> {};
template <>
struct CTypeOf<Dtype::kInt64> : IntegerType<int64_t> {};
template <>
struct CTypeOf<Dtype::kUInt64> : IntegerType<uint64_t> {};
template <>
struct CTypeOf<Dtype::kFloat64> : FloatType<double> {};
template <>
struct CTypeOf<Dtype::kBool> : IntegerType<bool> {};
template <>
struct CTypeOf<Dtype::kComplex64> : FloatType<Complex64> {};
template <>
struct CTypeOf<Dtype::kComplex128> : FloatType<Complex128> {};
template <>
struct CTypeOf<Dtype::kBFloat16> : FloatType<bfloat16_t> {};

template <Dtype D>
using CType = typename CTypeOf<D>::Type;

// [min, max] of an integer C type (of at most 63 value bits).
struct IntegerRange {
  int64_t min, max;
};
template <typename T>
__aicore__ constexpr IntegerRange IntegerRangeOf() {
  constexpr bool kSigned = static_cast<T>(-1) < static_cast<T>(0);
  static_assert(kSigned || sizeof(T) < 8, "a range of int64_t values");
  constexpr int64_t kMax = static_cast<int64_t>(~uint64_t{0} >> (64 - 8 * sizeof(T) + kSigned));
  return {kSigned ? -kMax - 1 : 0, kMax};
}

// f(CTypeOf<D>{}) for the row whose code is `code`: every row (VisitDtype), or those a kernel
// runs (VisitKernelDtype, whose f is instantiated for kernel element types only). False: no such
// row, f not called.
template <bool kKernelsOnly, int I = 0, typename F>
__aicore__ inline bool VisitRow(int32_t code, F& f) {
  if constexpr (I < kDtypeCount) {
    constexpr DtypeRow kRow = kDtypes[I];
    if constexpr (!kKernelsOnly || kRow.ub_divisor != 0) {
      if (code == static_cast<int32_t>(kRow.dtype)) {
        f(CTypeOf<kRow.dtype>{});
        return true;
      }
    }
    return VisitRow<kKernelsOnly, I + 1>(code, f);
  } else {
    (void)code;
    (void)f;
    return false;
  }
}
template <typename F>
__aicore__ inline bool VisitDtype(int32_t code, F& f) {
  return VisitRow<false>(code, f);
}
template <typename F>
__aicore__ inline bool VisitKernelDtype(int32_t code, F& f) {
  return VisitRow<true>(code, f);
}

// Bytes of one element of dtype `code`; 0 for a code no row has.
struct DtypeSizeOf {
  uint32_t size = 0;
  template <Dtype D>
  __aicore__ void operator()(CTypeOf<D>) {
    size = sizeof(CType<D>);
  }
};
__aicore__ inline uint32_t DtypeSize(int32_t code) {
  DtypeSizeOf of;
  VisitDtype(code, of);
  return of.size;
}

// Whether kernel dtype `code` is an integer, and then its range.
struct DtypeIntegerRangeOf {
  IntegerRange range{0, 0};
  bool integer = false;
  template <Dtype D>
  __aicore__ void operator()(CTypeOf<D>) {
    if constexpr (CTypeOf<D>::kInteger) {
      range = IntegerRangeOf<CType<D>>();
      integer = true;
    }
  }
};
__aicore__ inline bool DtypeIntegerRange(int32_t code, IntegerRange* range) {
  DtypeIntegerRangeOf of;
  VisitKernelDtype(code, of);
  *range = of.range;
  return of.integer;
}

// The row of `code`; for a code no row has, one with no name and no kernel. (References, not
// pointers that may be null: GCC's sanitizers keep a null test of a row's address from being a
// constant expression.)
inline constexpr DtypeRow kNoDtypeRow = DtypeRow(static_cast<Dtype>(-1)).Name("undefined");
__aicore__ constexpr const DtypeRow& DtypeRowOf(int32_t code) {
  for (const DtypeRow& row : kDtypes) {
    if (static_cast<int32_t>(row.dtype) == code) return row;
  }
  return kNoDtypeRow;
}

__aicore__ constexpr const char* DtypeName(int32_t code) { return DtypeRowOf(code).name; }

__aicore__ constexpr bool HasKernel(int32_t code) { return DtypeRowOf(code).ub_divisor != 0; }

// Whether the kernel reads a threshold of dtype `threshold` for x of dtype `x`.
__aicore__ constexpr bool TakesThresholdDtype(int32_t x, int32_t threshold) {
  const uint32_t taken = HasKernel(x) ? DtypeRowOf(x).thresholds : 0;
  return ((taken & kThresholdSameAsX) != 0 && threshold == x) ||
         ((taken & kThresholdFloat32) != 0 && threshold == static_cast<int32_t>(Dtype::kFloat32)) ||
         ((taken & kThresholdFloat64) != 0 && threshold == static_cast<int32_t>(Dtype::kFloat64));
}

// The CANN SOC_VERSION values (asc-devkit cmake/asc/legacy_modules/host_config.cmake) an NPU
// build may name for each SoC that has one, default first, compared without case. Macros, so that
// the NPU build's static_assert can list them (ASCEND_KERNELS_SOC_VERSIONS).
#define ASCEND_KERNELS_ASCEND910B_SOC_VERSIONS                                                 \
  "Ascend910B1 Ascend910B2 Ascend910B2C Ascend910B3 Ascend910B4 Ascend910B4-1 Ascend910_9391 " \
  "Ascend910_9381 Ascend910_9372 Ascend910_9392 Ascend910_9382 Ascend910_9362"
#define ASCEND_KERNELS_ASCEND950_SOC_VERSIONS                                             \
  "Ascend950PR_9599 Ascend950PR_958A Ascend950PR_9589 Ascend950PR_958B Ascend950PR_9579 " \
  "Ascend950PR_957B Ascend950PR_957C Ascend950PR_957D Ascend950PR_950Z Ascend950DT_950X " \
  "Ascend950DT_950Y Ascend950DT_95A1 Ascend950DT_95A2 Ascend950DT_9591 Ascend950DT_9592 " \
  "Ascend950DT_9595 Ascend950DT_9596 Ascend950DT_9581 Ascend950DT_9582 Ascend950DT_9583 " \
  "Ascend950DT_9584 Ascend950DT_9585 Ascend950DT_9586 Ascend950DT_9587 Ascend950DT_9588 " \
  "Ascend950DT_9571 Ascend950DT_9572 Ascend950DT_9573 Ascend950DT_9574 Ascend950DT_9575 " \
  "Ascend950DT_9576 Ascend950DT_9577 Ascend950DT_9578"
#define ASCEND_KERNELS_SOC_VERSIONS \
  ASCEND_KERNELS_ASCEND910B_SOC_VERSIONS " " ASCEND_KERNELS_ASCEND950_SOC_VERSIONS

struct SocRow {
  Soc soc;
  const char* name = "";
  // The AscendC API its kernels compile for, as __NPU_ARCH__ names it (asc-devkit
  // tests/api/basic_api/CMakeLists.txt); 0: the host CPU.
  uint32_t arch = 0;
  // asc-devkit impl/basic_api/utils/kernel_utils_constants.h TOTAL_UB_SIZE of the arch; 0 for
  // the host, whose UB is whatever the caller tiles for.
  uint64_t ub_bytes = 0;
  uint32_t default_cores = 0;     // AIV cores the tiling assumes when the caller gives none
  uint32_t features = 0;          // SocFeatures
  const char* refusal = nullptr;  // why phase one refuses the SoC outright; null: it does not
  const char* device_names = "";  // prefixes of the names aclrtGetSocName gives (without case)
  const char* soc_versions = "";  // ASCEND_KERNELS_<SOC>_SOC_VERSIONS; "": no NPU build

  constexpr explicit SocRow(Soc s) : soc(s) {}
  constexpr SocRow Name(const char* v) const { return With(&SocRow::name, v); }
  constexpr SocRow Arch(uint32_t v) const { return With(&SocRow::arch, v); }
  constexpr SocRow UbBytes(uint64_t v) const { return With(&SocRow::ub_bytes, v); }
  constexpr SocRow DefaultCores(uint32_t v) const { return With(&SocRow::default_cores, v); }
  constexpr SocRow Features(uint32_t v) const { return With(&SocRow::features, v); }
  constexpr SocRow Refusal(const char* v) const { return With(&SocRow::refusal, v); }
  constexpr SocRow DeviceNames(const char* v) const { return With(&SocRow::device_names, v); }
  constexpr SocRow SocVersions(const char* v) const { return With(&SocRow::soc_versions, v); }

 private:
  constexpr SocRow With(const char* SocRow::* field, const char* v) const {
    SocRow row = *this;
    row.*field = v;
    return row;
  }
  constexpr SocRow With(uint32_t SocRow::* field, uint32_t v) const {
    SocRow row = *this;
    row.*field = v;
    return row;
  }
  constexpr SocRow With(uint64_t SocRow::* field, uint64_t v) const {
    SocRow row = *this;
    row.*field = v;
    return row;
  }
};

inline constexpr SocRow kSocs[] = {
    // asc-devkit impl/basic_api/dav_c100: DataCopyPad and CompareScalar report "not supported"
    // and Select has mode 0 only.
    SocRow(Soc::kAscend910)
        .Name("Ascend910")
        .Arch(1001)
        .UbBytes(256 * 1024)
        .DefaultCores(48)
        .Refusal("its AscendC API (dav_c100) has no DataCopyPad, so tensors that are not whole "
                 "32-byte blocks cannot be copied without touching memory outside them, and no "
                 "CompareScalar or tensor-scalar Select for the kernels' compare and select"),
    // "Ascend910B" alone names the first-generation dav_c100 chip in CANN, hence the digits.
    SocRow(Soc::kAscend910B)
        .Name("Ascend910B")
        .Arch(2201)
        .UbBytes(192 * 1024)
        .DefaultCores(48)
        .Features(kSocBFloat16)
        .DeviceNames("Ascend910B1 Ascend910B2 Ascend910B3 Ascend910B4 Ascend910_93")
        .SocVersions(ASCEND_KERNELS_ASCEND910B_SOC_VERSIONS),
    SocRow(Soc::kAscend950)
        .Name("Ascend950")
        .Arch(3510)
        .UbBytes(248 * 1024)
        .DefaultCores(48)
        .Features(kSocBFloat16 | kSocInt64ReluGrad)
        .DeviceNames("Ascend950")
        .SocVersions(ASCEND_KERNELS_ASCEND950_SOC_VERSIONS),
    // The CPU through the AscendC model: every dtype the JAX primitive supports.
    SocRow(Soc::kHost)
        .Name("host")
        .Features(kSocBFloat16 | kSocInt64ReluGrad | kSocInt64ThresholdGradV2D | kSocFloat64),
};

// Whether a row has `soc`, and its row (for a SoC no row has, an "unknown" one, refused).
__aicore__ constexpr bool HasSocRow(Soc soc) {
  for (const SocRow& row : kSocs) {
    if (row.soc == soc) return true;
  }
  return false;
}
inline constexpr SocRow kNoSocRow = SocRow(static_cast<Soc>(-1)).Name("unknown").Refusal("unknown");
__aicore__ constexpr const SocRow& SocRowOf(Soc soc) {
  for (const SocRow& row : kSocs) {
    if (row.soc == soc) return row;
  }
  return kNoSocRow;
}

// Whether `soc` runs operator `op`'s kernel of dtype `dtype`.
__aicore__ constexpr bool SocRunsKernel(Soc soc, KernelOp op, int32_t dtype) {
  const SocRow& s = SocRowOf(soc);
  const DtypeRow& d = DtypeRowOf(dtype);
  const uint32_t needs = op == KernelOp::kReluGrad ? d.relu_grad_needs : d.threshold_grad_v2d_needs;
  return s.refusal == nullptr && d.ub_divisor != 0 && (s.features & needs) == needs;
}

constexpr char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

// Whether one of the space-separated `words` is `name` (whole: a prefix of it), without case.
constexpr bool MatchesAWord(const char* name, const char* words, bool whole) {
  for (const char* w = words; *w != '\0';) {
    if (*w == ' ') {
      ++w;
      continue;
    }
    int i = 0;
    bool match = true;
    for (; w[i] != '\0' && w[i] != ' '; ++i) {
      match = match && name[i] != '\0' && AsciiLower(name[i]) == AsciiLower(w[i]);
    }
    if (match && (!whole || name[i] == '\0')) return true;
    w += i;
  }
  return false;
}

// The SoC of a device aclrtGetSocName calls `name`; null: no row runs the kernels on it.
constexpr const SocRow* SocOfDeviceName(const char* name) {
  for (const SocRow& row : kSocs) {
    if (MatchesAWord(name, row.device_names, false)) return &row;
  }
  return nullptr;
}

// Whether an NPU build may name SOC_VERSION `version`, and the SoC it then runs on.
constexpr bool IsSocVersion(const char* version) {
  for (const SocRow& row : kSocs) {
    if (MatchesAWord(version, row.soc_versions, true)) return true;
  }
  return false;
}
constexpr Soc SocOfSocVersion(const char* version) {
  for (const SocRow& row : kSocs) {
    if (MatchesAWord(version, row.soc_versions, true)) return row.soc;
  }
  return Soc::kHost;
}

// The __NPU_ARCH__ of a device compile whose compiler defines only __CCE_AICORE__, as CANN
// 8.1.RC1's does; 0 for a value no arch has. asc-devkit's first public commit (3d5cee08) defines
// the two side by side (tools/ascc/asc_plugin/src/asc_ast_device_analyzer.cpp,
// tests/unit/basic_api/ut/CMakeLists.txt): 100 dav_c100 1001, 200 dav_m200 2002, 220 dav_c220
// 2201, 300 dav_m300 3002, 310 dav_c310 (the Ascend950: 3101 there, 3510 since, as
// tests/api/basic_api/CMakeLists.txt at 82b89a15 has it) and dav_m310 (3102, Ascend610Lite, which
// no row has).
struct CceAicoreArch {
  uint32_t cce_aicore;
  uint32_t arch;
};
inline constexpr CceAicoreArch kCceAicoreArchs[] = {
    {100, 1001}, {200, 2002}, {220, 2201}, {300, 3002}, {310, 3510}};
__aicore__ constexpr uint32_t ArchOfCceAicore(uint32_t cce_aicore) {
  for (const CceAicoreArch& a : kCceAicoreArchs) {
    if (a.cce_aicore == cce_aicore) return a.arch;
  }
  return 0;
}

// An NPU build's SoC: the row of its SOC_VERSION (ascend_kernels/npu/CMakeLists.txt).
#ifdef JAX_THRESHOLD_SOC_VERSION
static_assert(IsSocVersion(JAX_THRESHOLD_SOC_VERSION),
              "SOC_VERSION is none the kernels build for: " ASCEND_KERNELS_SOC_VERSIONS);
inline constexpr Soc kBuildSoc = SocOfSocVersion(JAX_THRESHOLD_SOC_VERSION);
#endif

}  // namespace ascend_kernels
