// The one definition of the dtypes and SoCs the operator knows: every other list (aclDataType
// and KernelDType codes, element sizes, names, UB divisors, integer ranges, the threshold dtypes
// each x dtype takes, each SoC's code, UB, core count and dtype features) is read from here.
// X-macros, so that enums, switches and tables expand from the same rows, and plain scalar code,
// so that the AI core compiler reads it too (no globals, no standard library).
#pragma once

#include <cstdint>

// The dtypes the kernels run: X(Name, name, acl code, C type, bytes, UB divisor, select path,
// is integer, integer min, integer max, threshold dtypes, ReluGrad's SoC feature,
// ThresholdGradV2D's SoC feature). Rows are in the order messages list a SoC's dtypes.
//  - name: NumPy's name, also the kernel entry points' suffix (relu_grad_<name>).
//  - acl code: aclDataType's value, which KernelDType keeps so phase one passes a dtype through.
//  - C type: the kernels' element type (AscendC's half, bfloat16_t; read only by kernel code).
//  - UB divisor: how many tile-sized buffers ThresholdGradV2D and ReluGrad keep in UB for the
//    dtype (docs/behaviour.md §3): float32/float16 7, int32 8, bfloat16 10, int8/uint8 14;
//    int64/float64, beyond the contract, 8 like int32 (the same 6 queue buffers plus the mask,
//    no widening scratch).
//  - select path: how the compute stage compares and selects (threshold_select.h's SelectPath).
//  - threshold dtypes: which threshold dtypes the lowering emits and the kernel converts at Init
//    for this x dtype (kThresholdSelf: x's own), a mask of ThresholdDtypeBits.
//  - SoC features: the SocFeatureBits a SoC needs for the operator's kernel of this dtype
//    (0: every SoC the kernels run on); a SoC without it has no such kernel.
#define ASCEND_KERNELS_KERNEL_DTYPES(X)                                                            \
  X(Float32, float32, 0, float, 4, 7, kFloat, false, 0, 0, ascend_kernels::kThresholdFloat32, 0,   \
    0)                                                                                             \
  X(Int32, int32, 3, int32_t, 4, 8, kExactInt, true, -2147483647 - 1, 2147483647,                  \
    ascend_kernels::kThresholdOfInteger, 0, 0)                                                     \
  X(Float16, float16, 1, half, 2, 7, kWide16, false, 0, 0, ascend_kernels::kThresholdFloat32, 0,   \
    0)                                                                                             \
  X(Int8, int8, 2, int8_t, 1, 14, kByte, true, -128, 127, ascend_kernels::kThresholdOfInteger, 0,  \
    0)                                                                                             \
  X(UInt8, uint8, 4, uint8_t, 1, 14, kByte, true, 0, 255, ascend_kernels::kThresholdOfInteger, 0,  \
    0)                                                                                             \
  X(BFloat16, bfloat16, 27, bfloat16_t, 2, 10, kWide16, false, 0, 0,                               \
    ascend_kernels::kThresholdFloat32, ascend_kernels::kSocBFloat16, ascend_kernels::kSocBFloat16) \
  X(Int64, int64, 9, int64_t, 8, 8, kExactInt, true, -9223372036854775807LL - 1,                   \
    9223372036854775807LL, ascend_kernels::kThresholdOfInteger, ascend_kernels::kSocInt64ReluGrad, \
    ascend_kernels::kSocInt64ThresholdGrad)                                                        \
  X(Float64, float64, 11, double, 8, 8, kFloat, false, 0, 0, ascend_kernels::kThresholdFloat64,    \
    ascend_kernels::kSocFloat64, ascend_kernels::kSocFloat64)

// The other aclDataType values the executor names (phase one refuses them):
// X(Name, acl code, "numpy name", bytes).
#define ASCEND_KERNELS_OTHER_DTYPES(X) \
  X(Int16, 6, "int16", 2)              \
  X(UInt16, 7, "uint16", 2)            \
  X(UInt32, 8, "uint32", 4)            \
  X(UInt64, 10, "uint64", 8)           \
  X(Bool, 12, "bool", 1)               \
  X(Complex64, 16, "complex64", 8)     \
  X(Complex128, 17, "complex128", 16)

// The SoCs phase one plans for: X(Name, code, "name", arch, UB bytes per core, usable UB bytes,
// default core count, features, "device names", "SOC_VERSION").
//  - arch: the AscendC API the SoC's kernels compile for, as __NPU_ARCH__ names it (asc-devkit
//    tests/api/basic_api/CMakeLists.txt: 1001 dav_c100, 2201 dav_c220, 3510 dav_3510); the CPU
//    model's rule set (cpu_ascendc/soc_rules.cpp) and the NPU build's feature checks follow it.
//    0: the host, the CPU itself.
//  - UB bytes: asc-devkit impl/basic_api/utils/kernel_utils_constants.h TOTAL_UB_SIZE per
//    __NPU_ARCH__; 0 for the host, whose UB is whatever the caller tiles for.
//  - usable UB bytes: what a kernel's TPipe may hand out, the same file's TMP_UB_OFFSET (the API's
//    own temporaries live above it: dav_c220's tensor-scalar Select writes its scalar there); 0
//    for the host.
//  - default core count: the AIV cores the tiling assumes when the caller gives none (the host's
//    follows its hardware threads, 0 here).
//  - features: a mask of SocFeatureBits.
//  - device names: space-separated prefixes of the names aclrtGetSocName gives and the CANN
//    SOC_VERSION values an NPU build accepts for the SoC (compared without case); empty: no NPU
//    build or device runs the kernels as this SoC. "Ascend910B" alone is the first-generation
//    dav_c100 in CANN, hence the digits.
//  - SOC_VERSION: the CANN SOC_VERSION an NPU build for the SoC names by default.
#define ASCEND_KERNELS_SOCS(X)                                                                    \
  X(Ascend910, 0, "Ascend910", 1001, 256 * 1024, 248 * 1024, 48, ascend_kernels::kSocRefused, "", \
    "")                                                                                           \
  X(Ascend910B, 1, "Ascend910B", 2201, 192 * 1024, 184 * 1024, 48, ascend_kernels::kSocBFloat16,  \
    "Ascend910B1 Ascend910B2 Ascend910B3 Ascend910B4 Ascend910_93", "Ascend910B1")                \
  X(Ascend950, 2, "Ascend950", 3510, 248 * 1024, 248 * 1024, 48,                                  \
    ascend_kernels::kSocBFloat16 | ascend_kernels::kSocInt64ReluGrad, "Ascend950", "Ascend950")   \
  X(Host, 3, "host", 0, 0, 0, 0,                                                                  \
    ascend_kernels::kSocBFloat16 | ascend_kernels::kSocInt64ReluGrad |                            \
        ascend_kernels::kSocInt64ThresholdGrad | ascend_kernels::kSocFloat64,                     \
    "", "")

namespace ascend_kernels {

// Threshold dtypes an x dtype takes.
enum ThresholdDtypeBits : uint32_t {
  kThresholdFloat32 = 1u << 0,
  kThresholdFloat64 = 1u << 1,
  kThresholdSelf = 1u << 2,
  kThresholdOfInteger = kThresholdSelf | kThresholdFloat32 | kThresholdFloat64,
};

// What a SoC's kernels can do beyond float32, float16, int32, int8 and uint8.
enum SocFeatureBits : uint32_t {
  kSocRefused = 1u << 0,             // its AscendC API cannot run the kernels at all
  kSocBFloat16 = 1u << 1,            // bfloat16 (float <- bfloat16 Cast: dav_c220 and later)
  kSocInt64ReluGrad = 1u << 2,       // int64 at threshold exactly 0 (ReluGrad)
  kSocInt64ThresholdGrad = 1u << 3,  // int64 at any threshold (ThresholdGradV2D)
  kSocFloat64 = 1u << 4,             // float64
};

// How the compute stage compares and selects a dtype (common/threshold_select.h).
enum class SelectPath { kFloat, kWide16, kByte, kExactInt };

// The operators, for the column of a dtype row that names each one's SoC feature.
enum class KernelOp { kReluGrad, kThresholdGradV2D };

// Element type of a kernel's tensors, valued as aclDataType.
enum class KernelDType : int32_t {
#define ASCEND_KERNELS_ENUMERATOR(Name, name, code, ...) k##Name = code,
  ASCEND_KERNELS_KERNEL_DTYPES(ASCEND_KERNELS_ENUMERATOR)
#undef ASCEND_KERNELS_ENUMERATOR
};

// How many kernel dtypes there are: the capacity of every per-SoC dtype list.
inline constexpr int kKernelDTypeCount = 0
#define ASCEND_KERNELS_COUNT(...) +1
    ASCEND_KERNELS_KERNEL_DTYPES(ASCEND_KERNELS_COUNT)
#undef ASCEND_KERNELS_COUNT
    ;

// The SoC a launch runs for: the executor's SocVersion and the CPU model's Soc are this enum.
enum class KernelSoc : int32_t {
#define ASCEND_KERNELS_ENUMERATOR(Name, code, ...) k##Name = code,
  ASCEND_KERNELS_SOCS(ASCEND_KERNELS_ENUMERATOR)
#undef ASCEND_KERNELS_ENUMERATOR
};

// The facts of one aclDataType code.
struct DTypeFacts {
  const char* name;     // NumPy's name; "undefined" for a code not in the table
  uint32_t bytes;       // 0: not in the table
  uint32_t ub_divisor;  // 0: no kernel runs it
  bool is_integer;
  int64_t min, max;           // an integer kernel dtype's range
  uint32_t threshold_dtypes;  // ThresholdDtypeBits
  uint32_t op_features[2];    // SocFeatureBits each KernelOp's kernel needs
};

constexpr DTypeFacts FactsOfDType(int32_t code) {
  switch (code) {
#define ASCEND_KERNELS_KERNEL_CASE(Name, name, c, type, bytes, divisor, path, integer, lo, hi, \
                                   thresholds, relu, threshold_grad)                           \
  case c:                                                                                      \
    return {#name, bytes, divisor, integer, lo, hi, thresholds, {relu, threshold_grad}};
    ASCEND_KERNELS_KERNEL_DTYPES(ASCEND_KERNELS_KERNEL_CASE)
#undef ASCEND_KERNELS_KERNEL_CASE
#define ASCEND_KERNELS_OTHER_CASE(name, c, str, bytes) \
  case c:                                              \
    return {str, bytes, 0, false, 0, 0, 0, {0, 0}};
    ASCEND_KERNELS_OTHER_DTYPES(ASCEND_KERNELS_OTHER_CASE)
#undef ASCEND_KERNELS_OTHER_CASE
    default:
      return {"undefined", 0, 0, false, 0, 0, 0, {0, 0}};
  }
}

// Whether a threshold of dtype `threshold` is one the kernel reads for x of kernel dtype `x`.
constexpr bool TakesThresholdDtype(int32_t x, int32_t threshold) {
  const uint32_t allowed = FactsOfDType(x).threshold_dtypes;
  return ((allowed & kThresholdSelf) != 0 && threshold == x) ||
         ((allowed & kThresholdFloat32) != 0 &&
          threshold == static_cast<int32_t>(KernelDType::kFloat32)) ||
         ((allowed & kThresholdFloat64) != 0 &&
          threshold == static_cast<int32_t>(KernelDType::kFloat64));
}

// The facts of one SoC code.
struct SocFacts {
  const char* name;  // "unknown" for a code not in the table
  uint32_t arch;     // __NPU_ARCH__ of its AscendC API; 0: the host
  uint64_t ub_bytes;
  uint64_t usable_ub_bytes;  // ub_bytes without the API's reserved scratch
  uint32_t default_core_num;
  uint32_t features;        // SocFeatureBits; 0 for a code not in the table
  const char* devices;      // space-separated device-name / SOC_VERSION prefixes
  const char* soc_version;  // the CANN SOC_VERSION an NPU build names by default
  bool known;
};

constexpr SocFacts FactsOfSoc(int32_t code) {
  switch (code) {
#define ASCEND_KERNELS_SOC_CASE(Name, c, str, arch, ub, usable_ub, cores, features, devices, \
                                soc_version)                                                 \
  case c:                                                                                    \
    return {str, arch, ub, usable_ub, cores, features, devices, soc_version, true};
    ASCEND_KERNELS_SOCS(ASCEND_KERNELS_SOC_CASE)
#undef ASCEND_KERNELS_SOC_CASE
    default:
      return {"unknown", 0, 0, 0, 0, 0, "", "", false};
  }
}

// Whether SoC `soc` runs operator `op`'s kernel of dtype `dtype`.
constexpr bool SocRunsKernel(int32_t soc, KernelOp op, int32_t dtype) {
  const SocFacts s = FactsOfSoc(soc);
  const DTypeFacts d = FactsOfDType(dtype);
  const uint32_t needs = d.op_features[static_cast<int>(op)];
  return s.known && (s.features & kSocRefused) == 0 && d.ub_divisor != 0 &&
         (needs == 0 || (s.features & needs) != 0);
}

constexpr char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

// Whether `name` starts with one of the space-separated `prefixes`, ignoring ASCII case.
constexpr bool HasPrefixIn(const char* name, const char* prefixes) {
  const char* p = prefixes;
  while (*p != '\0') {
    if (*p == ' ') {
      ++p;
      continue;
    }
    bool match = true;
    for (int i = 0; *p != '\0' && *p != ' '; ++p, ++i) {
      match = match && name[i] != '\0' && AsciiLower(name[i]) == AsciiLower(*p);
    }
    if (match) return true;
  }
  return false;
}

// The SoC code of a device named `name` (aclrtGetSocName, or a CANN SOC_VERSION); -1: no SoC in
// the table runs the kernels on it.
constexpr int32_t SocOfDeviceName(const char* name) {
#define ASCEND_KERNELS_SOC_MATCH(Name, c, str, arch, ub, usable_ub, cores, features, devices, \
                                 soc_version)                                                 \
  if (HasPrefixIn(name, devices)) return c;
  ASCEND_KERNELS_SOCS(ASCEND_KERNELS_SOC_MATCH)
#undef ASCEND_KERNELS_SOC_MATCH
  return -1;
}

// The SoC whose platform is the default (the PlatformInfo a caller does not give, the NPU build's
// SOC_VERSION when none is given).
#define ASCEND_KERNELS_DEFAULT_SOC Ascend910B
#define ASCEND_KERNELS_SOC_ENUMERATOR(Name) KernelSoc::k##Name
#define ASCEND_KERNELS_SOC_ENUMERATOR_OF(Name) ASCEND_KERNELS_SOC_ENUMERATOR(Name)
inline constexpr KernelSoc kDefaultSoc =
    ASCEND_KERNELS_SOC_ENUMERATOR_OF(ASCEND_KERNELS_DEFAULT_SOC);
#undef ASCEND_KERNELS_SOC_ENUMERATOR_OF
#undef ASCEND_KERNELS_SOC_ENUMERATOR

}  // namespace ascend_kernels
