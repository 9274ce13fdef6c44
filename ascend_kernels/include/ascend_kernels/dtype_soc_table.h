// The one definition of the dtypes and SoCs the operator knows: every other list (aclDataType
// and KernelDType codes, element sizes, names, UB divisors, integer ranges, the threshold dtypes
// each x dtype takes, each SoC's code, UB, core count and dtype features) is read from here.
// X-macros, so that enums, switches and tables expand from the same rows, and plain scalar code,
// so that the AI core compiler reads it too (no globals, no standard library).
#pragma once

#include <cstdint>

// The dtypes the kernels run: X(Name, acl code, "numpy name", bytes, UB divisor, is integer,
// integer min, integer max, threshold dtypes).
//  - acl code: aclDataType's value, which KernelDType keeps so phase one passes a dtype through.
//  - UB divisor: how many tile-sized buffers ThresholdGradV2D and ReluGrad keep in UB for the
//    dtype (docs/behaviour.md §3): float32/float16 7, int32 8, bfloat16 10, int8/uint8 14;
//    int64/float64, beyond the contract, 8 like int32 (the same 6 queue buffers plus the mask,
//    no widening scratch).
//  - threshold dtypes: which threshold dtypes the lowering emits and the kernel converts at Init
//    for this x dtype (kThresholdSelf: x's own), a mask of ThresholdDtypeBits.
#define ASCEND_KERNELS_KERNEL_DTYPES(X)                                               \
  X(Float32, 0, "float32", 4, 7, false, 0, 0, ascend_kernels::kThresholdFloat32)      \
  X(Float16, 1, "float16", 2, 7, false, 0, 0, ascend_kernels::kThresholdFloat32)      \
  X(Int8, 2, "int8", 1, 14, true, -128, 127, ascend_kernels::kThresholdOfInteger)     \
  X(Int32, 3, "int32", 4, 8, true, -2147483647 - 1, 2147483647,                       \
    ascend_kernels::kThresholdOfInteger)                                              \
  X(UInt8, 4, "uint8", 1, 14, true, 0, 255, ascend_kernels::kThresholdOfInteger)      \
  X(Int64, 9, "int64", 8, 8, true, -9223372036854775807LL - 1, 9223372036854775807LL, \
    ascend_kernels::kThresholdOfInteger)                                              \
  X(Float64, 11, "float64", 8, 8, false, 0, 0, ascend_kernels::kThresholdFloat64)     \
  X(BFloat16, 27, "bfloat16", 2, 10, false, 0, 0, ascend_kernels::kThresholdFloat32)

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

// The SoCs phase one plans for: X(Name, code, "name", UB bytes per core, usable UB bytes, default
// core count, features). UB bytes: asc-devkit impl/basic_api/utils/kernel_utils_constants.h
// TOTAL_UB_SIZE per __NPU_ARCH__ (1001, 2201, 3510); 0 for the host, whose UB is whatever the
// caller tiles for. Usable UB bytes: what a kernel's TPipe may hand out, the same file's
// TMP_UB_OFFSET (the API's own temporaries live above it: dav_c220's tensor-scalar Select writes
// its scalar there); 0 for the host. Default core count: the AIV cores the tiling assumes when the
// caller gives none (the 910B's 48; the host's follows its hardware threads, 0 here). Features are
// a mask of SocFeatureBits.
#define ASCEND_KERNELS_SOCS(X)                                                             \
  X(Ascend910, 0, "Ascend910", 256 * 1024, 248 * 1024, 48, ascend_kernels::kSocRefused)    \
  X(Ascend910B, 1, "Ascend910B", 192 * 1024, 184 * 1024, 48, ascend_kernels::kSocBFloat16) \
  X(Ascend950, 2, "Ascend950", 248 * 1024, 248 * 1024, 48,                                 \
    ascend_kernels::kSocBFloat16 | ascend_kernels::kSocInt64ReluGrad)                      \
  X(Host, 3, "host", 0, 0, 0,                                                              \
    ascend_kernels::kSocBFloat16 | ascend_kernels::kSocInt64ReluGrad |                     \
        ascend_kernels::kSocInt64ThresholdGrad | ascend_kernels::kSocFloat64)

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

// Element type of a kernel's tensors, valued as aclDataType.
enum class KernelDType : int32_t {
#define ASCEND_KERNELS_ENUMERATOR(name, code, ...) k##name = code,
  ASCEND_KERNELS_KERNEL_DTYPES(ASCEND_KERNELS_ENUMERATOR)
#undef ASCEND_KERNELS_ENUMERATOR
};

// The SoC a launch runs for, valued as the executor's SocVersion.
enum class KernelSoc : int32_t {
#define ASCEND_KERNELS_ENUMERATOR(name, code, ...) k##name = code,
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
};

constexpr DTypeFacts FactsOfDType(int32_t code) {
  switch (code) {
#define ASCEND_KERNELS_KERNEL_CASE(name, c, str, bytes, divisor, integer, lo, hi, thresholds) \
  case c:                                                                                     \
    return {str, bytes, divisor, integer, lo, hi, thresholds};
    ASCEND_KERNELS_KERNEL_DTYPES(ASCEND_KERNELS_KERNEL_CASE)
#undef ASCEND_KERNELS_KERNEL_CASE
#define ASCEND_KERNELS_OTHER_CASE(name, c, str, bytes) \
  case c:                                              \
    return {str, bytes, 0, false, 0, 0, 0};
    ASCEND_KERNELS_OTHER_DTYPES(ASCEND_KERNELS_OTHER_CASE)
#undef ASCEND_KERNELS_OTHER_CASE
    default:
      return {"undefined", 0, 0, false, 0, 0, 0};
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
  uint64_t ub_bytes;
  uint64_t usable_ub_bytes;  // ub_bytes without the API's reserved scratch
  uint32_t default_core_num;
  uint32_t features;  // SocFeatureBits; 0 for a code not in the table
  bool known;
};

constexpr SocFacts FactsOfSoc(int32_t code) {
  switch (code) {
#define ASCEND_KERNELS_SOC_CASE(name, c, str, ub, usable_ub, cores, features) \
  case c:                                                                     \
    return {str, ub, usable_ub, cores, features, true};
    ASCEND_KERNELS_SOCS(ASCEND_KERNELS_SOC_CASE)
#undef ASCEND_KERNELS_SOC_CASE
    default:
      return {"unknown", 0, 0, 0, 0, false};
  }
}

// The SoC whose platform is the default (the PlatformInfo a caller does not give).
inline constexpr KernelSoc kDefaultSoc = KernelSoc::kAscend910B;

}  // namespace ascend_kernels
