// What each arch's AscendC API offers, keyed by __NPU_ARCH__: the primitives check the rules of
// the arch a launch runs for (CoreScope) at entry and abort naming the rule, the arch and the
// asc-devkit source it comes from.
//
// Every fact below was read from asc-devkit (github.com/mirror-cann/asc-devkit, commit 82b89a15,
// 2026-07-30), the file named beside it. Only the operations the kernels and the model implement
// are tabulated: a pair or mode missing here aborts, so an unverified operation cannot pass.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ascendc_types.h"

namespace cpu_ascendc {

// The element types the rules talk about (bit indexes of the rule masks).
enum class VType : uint8_t {
  kInt8,
  kUInt8,
  kInt16,
  kUInt16,
  kInt32,
  kUInt32,
  kInt64,
  kUInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
};

template <typename T, typename First, typename... Rest>
constexpr uint8_t IndexOf() {
  if constexpr (std::is_same_v<T, First>) {
    return 0;
  } else {
    static_assert(sizeof...(Rest) > 0, "VTypeOf: not a vector element type");
    return 1 + IndexOf<T, Rest...>();
  }
}

template <typename T>
constexpr VType VTypeOf() {
  return static_cast<VType>(IndexOf<T, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t,
                                    int64_t, uint64_t, half, bfloat16_t, float, double>());
}

constexpr const char* VTypeName(VType t) {  // the C type's name
  constexpr const char* kNames[] = {"int8_t",  "uint8_t",    "int16_t", "uint16_t",
                                    "int32_t", "uint32_t",   "int64_t", "uint64_t",
                                    "half",    "bfloat16_t", "float",   "double"};
  return kNames[static_cast<uint32_t>(t)];
}

constexpr const char* RoundModeName(AscendC::RoundMode m) {
  constexpr const char* kNames[] = {"CAST_NONE",  "CAST_RINT",  "CAST_FLOOR", "CAST_CEIL",
                                    "CAST_ROUND", "CAST_TRUNC", "CAST_ODD"};
  const auto i = static_cast<uint32_t>(m);
  return i < sizeof(kNames) / sizeof(kNames[0]) ? kNames[i] : "unknown RoundMode";
}

constexpr uint32_t Bit(VType t) { return 1u << static_cast<uint32_t>(t); }
constexpr uint32_t Bit(AscendC::RoundMode m) { return 1u << static_cast<uint32_t>(m); }

// One Cast (dst <- src) that exists on an arch, with the round modes that emit an instruction.
struct CastRule {
  VType dst;
  VType src;
  uint32_t round_modes;  // Bit(RoundMode) mask
};

struct ArchRules {
  uint32_t npu_arch;  // __NPU_ARCH__; 0: the host CPU
  const char* name;   // "dav_c220"
  // impl/basic_api/utils/kernel_utils_constants.h: the UB, and where the API's own temporaries
  // begin (a kernel's TPipe may hand out the bytes below it). 0: the launch's UB.
  uint64_t total_ub_size;
  uint64_t tmp_ub_offset;
  bool has_data_copy_pad;         // DataCopyPad moves bytes (false: an unsupported-API stub)
  uint32_t compare_scalar_types;  // CompareScalar (count form, GT) source types
  uint32_t select_scalar_types;   // Select VSEL_TENSOR_SCALAR_MODE operand types (0: mode absent)
  const CastRule* casts;
  uint32_t num_casts;
};

namespace rules {

using AscendC::RoundMode;

constexpr uint32_t kRoundAll = Bit(RoundMode::CAST_RINT) | Bit(RoundMode::CAST_FLOOR) |
                               Bit(RoundMode::CAST_CEIL) | Bit(RoundMode::CAST_ROUND) |
                               Bit(RoundMode::CAST_TRUNC);
constexpr uint32_t kNone = Bit(RoundMode::CAST_NONE);
constexpr uint32_t kHalfFloat = Bit(VType::kFloat16) | Bit(VType::kFloat32);

// dav_c220 and dav_3510: impl/basic_api/dav_c220/kernel_operator_vec_vconv_impl.h and
// dav_3510/kernel_operator_vec_vconv_impl.h (CastImpl, level 2): the widening casts half->float,
// bf16->float, int8/uint8->half emit an instruction only for CAST_NONE; half->int8/uint8 take
// every mode but CAST_ODD (on dav_3510 CAST_NONE means CAST_RINT); float->half every mode;
// float->bf16 every mode but CAST_NONE and CAST_ODD.
inline constexpr CastRule kC220Casts[] = {
    {VType::kFloat32, VType::kFloat16, kNone},
    {VType::kFloat32, VType::kBFloat16, kNone},
    {VType::kFloat16, VType::kInt8, kNone},
    {VType::kFloat16, VType::kUInt8, kNone},
    {VType::kInt8, VType::kFloat16, kNone | kRoundAll},
    {VType::kUInt8, VType::kFloat16, kNone | kRoundAll},
    {VType::kFloat16, VType::kFloat32, kNone | kRoundAll | Bit(RoundMode::CAST_ODD)},
    {VType::kBFloat16, VType::kFloat32, kRoundAll},
};

// dav_c100: impl/basic_api/dav_c100/kernel_operator_vec_vconv_impl.h: no bfloat16 conversion;
// half->float, int8/uint8->half CAST_NONE only; half->int8/uint8 every mode but CAST_RINT and
// CAST_ODD; float->half CAST_NONE and CAST_ODD only.
inline constexpr CastRule kC100Casts[] = {
    {VType::kFloat32, VType::kFloat16, kNone},
    {VType::kFloat16, VType::kInt8, kNone},
    {VType::kFloat16, VType::kUInt8, kNone},
    {VType::kInt8, VType::kFloat16, kNone | (kRoundAll & ~Bit(RoundMode::CAST_RINT))},
    {VType::kUInt8, VType::kFloat16, kNone | (kRoundAll & ~Bit(RoundMode::CAST_RINT))},
    {VType::kFloat16, VType::kFloat32, kNone | Bit(RoundMode::CAST_ODD)},
};

template <size_t N>
constexpr uint32_t Count(const CastRule (&)[N]) {
  return static_cast<uint32_t>(N);
}

// UB: kernel_utils_constants.h's TOTAL_UB_SIZE and TMP_UB_OFFSET of the arch (the API's scratch
// lies between them).
inline constexpr ArchRules kArchRules[] = {
    // dav_c100: DataCopyPad (dav_c100/kernel_operator_data_copy_impl.h) and every CompareScalar
    // (dav_c100/kernel_operator_vec_cmpsel_impl.h) report "not supported"; Select has mode 0
    // (VSEL_CMPMASK_SPR) only, the tensor-scalar form asserts (same file).
    {1001, "dav_c100", 256 * 1024, 248 * 1024, false, 0, 0, kC100Casts, Count(kC100Casts)},
    // dav_c220:
    //  UB: dav_c220/kernel_operator_vec_cmpsel_impl.h's scalar-mode Select duplicates its scalar
    //      into a temporary buffer at TMP_UB_OFFSET.
    //  DataCopyPad: dav_c220/kernel_operator_data_copy_impl.h (DataCopyPadGm2UBImpl / UB2GM).
    //  CompareScalar: dav_c220/kernel_operator_vec_cmp_impl.h, dst uint8_t, src half/float
    //      (int32_t for CMPMODE::EQ only, which the kernels do not use).
    //  Select: dav_c220/kernel_operator_vec_cmpsel_impl.h, operands half/float, mask uint8..uint64.
    {2201, "dav_c220", 192 * 1024, 184 * 1024, true, kHalfFloat, kHalfFloat, kC220Casts,
     Count(kC220Casts)},
    // dav_3510 (regbase):
    //  DataCopyPad: dav_3510/kernel_operator_data_copy_impl.h (byte-granular bursts).
    //  CompareScalar (count form): dav_3510/kernel_operator_vec_cmp_impl.h, src int8..uint64,
    //      half, bfloat16, float, double.
    //  Select (count form, scalar src1): dav_3510/kernel_operator_vec_sel_impl.h, int8..uint64,
    //      half, bfloat16, float (no double).
    {3510, "dav_3510", 248 * 1024, 248 * 1024, true,
     kHalfFloat | Bit(VType::kBFloat16) | Bit(VType::kFloat64) | Bit(VType::kInt8) |
         Bit(VType::kUInt8) | Bit(VType::kInt16) | Bit(VType::kUInt16) | Bit(VType::kInt32) |
         Bit(VType::kUInt32) | Bit(VType::kInt64) | Bit(VType::kUInt64),
     kHalfFloat | Bit(VType::kBFloat16) | Bit(VType::kInt8) | Bit(VType::kUInt8) |
         Bit(VType::kInt16) | Bit(VType::kUInt16) | Bit(VType::kInt32) | Bit(VType::kUInt32) |
         Bit(VType::kInt64) | Bit(VType::kUInt64),
     kC220Casts, Count(kC220Casts)},
    // 0, the host CPU: dav_c220's rules, plus float64 compare/select (no arch has them) and
    // dav_3510's int8/uint8 compare/select, so that byte kernels take the two-op path. Its UB is
    // whatever the launch asks for: nothing on the CPU reserves scratch.
    {0, "cpu", 0, 0, true,
     kHalfFloat | Bit(VType::kFloat64) | Bit(VType::kInt8) | Bit(VType::kUInt8),
     kHalfFloat | Bit(VType::kFloat64) | Bit(VType::kInt8) | Bit(VType::kUInt8), kC220Casts,
     Count(kC220Casts)},
};

}  // namespace rules

// The rules of __NPU_ARCH__ `npu_arch`; null for an arch the model does not know.
constexpr const ArchRules* FindRules(uint32_t npu_arch) {
  for (const ArchRules& r : rules::kArchRules) {
    if (r.npu_arch == npu_arch) return &r;
  }
  return nullptr;
}

// The bytes a kernel may allocate in UB on arch `r` for a launch given `ub_size` (the platform's
// UB, the tiling input): min(ub_size, TMP_UB_OFFSET).
constexpr uint64_t UsableUb(const ArchRules& r, uint64_t ub_size) {
  return r.tmp_ub_offset != 0 && r.tmp_ub_offset < ub_size ? r.tmp_ub_offset : ub_size;
}

// The round modes with which arch `r` has Cast dst <- src, as a Bit(RoundMode) mask; 0: no such
// Cast.
constexpr uint32_t CastRoundModes(const ArchRules& r, VType dst, VType src) {
  for (uint32_t i = 0; i < r.num_casts; ++i) {
    if (r.casts[i].dst == dst && r.casts[i].src == src) return r.casts[i].round_modes;
  }
  return 0;
}

// Whether arch `r` has both CompareScalar and tensor-scalar Select on `t` (what a kernel path that
// compares and selects in `t` itself needs).
constexpr bool HasCompareAndSelect(const ArchRules& r, VType t) {
  return (r.compare_scalar_types & r.select_scalar_types & Bit(t)) != 0;
}

}  // namespace cpu_ascendc
