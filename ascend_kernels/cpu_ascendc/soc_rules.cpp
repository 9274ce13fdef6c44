// The rule tables of soc_rules.h, one per SoC, and the entry checks the primitives call.
//
// Every fact below was read from asc-devkit (github.com/mirror-cann/asc-devkit, commit
// 82b89a15, 2026-07-30); the file each comes from is named beside it. Only the operations this
// project's kernels and the emulation implement are tabulated: a pair or mode missing here
// aborts, so an unverified operation cannot pass silently.
#include "soc_rules.h"

#include "ascend_kernels/dtype_soc_table.h"
#include "precondition.h"

namespace cpu_ascendc {
namespace {

using AscendC::RoundMode;

constexpr uint32_t kRoundAll = Bit(RoundMode::CAST_RINT) | Bit(RoundMode::CAST_FLOOR) |
                               Bit(RoundMode::CAST_CEIL) | Bit(RoundMode::CAST_ROUND) |
                               Bit(RoundMode::CAST_TRUNC);
constexpr uint32_t kNone = Bit(RoundMode::CAST_NONE);

// Ascend910B = dav_c220 (__NPU_ARCH__ 2201).
// impl/basic_api/dav_c220/kernel_operator_vec_vconv_impl.h: the widening casts half->float,
// bf16->float, int8/uint8->half emit an instruction only for CAST_NONE; half->int8/uint8 take every
// mode but CAST_ODD; float->half every mode; float->bf16 every mode but CAST_NONE and CAST_ODD.
constexpr CastRule kC220Casts[] = {
    {VType::kFloat, VType::kHalf, kNone},
    {VType::kFloat, VType::kBf16, kNone},
    {VType::kHalf, VType::kInt8, kNone},
    {VType::kHalf, VType::kUInt8, kNone},
    {VType::kInt8, VType::kHalf, kNone | kRoundAll},
    {VType::kUInt8, VType::kHalf, kNone | kRoundAll},
    {VType::kHalf, VType::kFloat, kNone | kRoundAll | Bit(RoundMode::CAST_ODD)},
    {VType::kBf16, VType::kFloat, kRoundAll},
};

// Ascend910 = dav_c100 (__NPU_ARCH__ 1001).
// impl/basic_api/dav_c100/kernel_operator_vec_vconv_impl.h: no bfloat16 conversion at all;
// half->float, int8/uint8->half CAST_NONE only; half->int8/uint8 every mode but CAST_RINT and
// CAST_ODD; float->half CAST_NONE and CAST_ODD only.
constexpr CastRule kC100Casts[] = {
    {VType::kFloat, VType::kHalf, kNone},
    {VType::kHalf, VType::kInt8, kNone},
    {VType::kHalf, VType::kUInt8, kNone},
    {VType::kInt8, VType::kHalf, kNone | (kRoundAll & ~Bit(RoundMode::CAST_RINT))},
    {VType::kUInt8, VType::kHalf, kNone | (kRoundAll & ~Bit(RoundMode::CAST_RINT))},
    {VType::kHalf, VType::kFloat, kNone | Bit(RoundMode::CAST_ODD)},
};

// Ascend950 = dav_3510 (__NPU_ARCH__ 3510).
// impl/basic_api/dav_3510/kernel_operator_vec_vconv_impl.h (CastImpl, level 2): half->float,
// bf16->float, int8/uint8->half CAST_NONE only; half->int8/uint8 and float->half every rounding
// mode, CAST_NONE meaning CAST_RINT; float->half also CAST_ODD; float->bf16 the five rounding
// modes.
constexpr CastRule k3510Casts[] = {
    {VType::kFloat, VType::kHalf, kNone},
    {VType::kFloat, VType::kBf16, kNone},
    {VType::kHalf, VType::kInt8, kNone},
    {VType::kHalf, VType::kUInt8, kNone},
    {VType::kInt8, VType::kHalf, kNone | kRoundAll},
    {VType::kUInt8, VType::kHalf, kNone | kRoundAll},
    {VType::kHalf, VType::kFloat, kNone | kRoundAll | Bit(RoundMode::CAST_ODD)},
    {VType::kBf16, VType::kFloat, kRoundAll},
};

template <size_t N>
constexpr uint32_t Count(const CastRule (&)[N]) {
  return static_cast<uint32_t>(N);
}

constexpr uint32_t kHalfFloat = Bit(VType::kHalf) | Bit(VType::kFloat);

// A SoC's usable UB and the scratch above it, from its row of the SoC table
// (ascend_kernels/dtype_soc_table.h: TOTAL_UB_SIZE and TMP_UB_OFFSET).
constexpr uint64_t UsableUbOf(Soc soc) {
  return ascend_kernels::FactsOfSoc(static_cast<int32_t>(soc)).usable_ub_bytes;
}
constexpr uint64_t ScratchUbOf(Soc soc) {
  return ascend_kernels::FactsOfSoc(static_cast<int32_t>(soc)).ub_bytes - UsableUbOf(soc);
}

const SocRules kRules[] = {
    // Ascend910 (dav_c100):
    //  UB: the SoC table's row (API scratch above TMP_UB_OFFSET).
    //  DataCopyPad: dav_c100/kernel_operator_data_copy_impl.h, both directions report "not
    //  supported".
    //  CompareScalar: dav_c100/kernel_operator_vec_cmpsel_impl.h, every form reports "not
    //  supported".
    //  Select: same file, mode 0 (VSEL_CMPMASK_SPR) only; the tensor-scalar form asserts.
    {Soc::kAscend910, "Ascend910", "dav_c100", UsableUbOf(Soc::kAscend910),
     ScratchUbOf(Soc::kAscend910), false, 0, 0, kC100Casts, Count(kC100Casts)},
    // Ascend910B (dav_c220):
    //  UB: the SoC table's row; dav_c220/kernel_operator_vec_cmpsel_impl.h's scalar-mode Select
    //      duplicates its scalar into a temporary buffer at TMP_UB_OFFSET.
    //  DataCopyPad: dav_c220/kernel_operator_data_copy_impl.h (DataCopyPadGm2UBImpl / UB2GM).
    //  CompareScalar: dav_c220/kernel_operator_vec_cmp_impl.h, dst uint8_t, src half/float
    //      (int32_t for CMPMODE::EQ only, which the kernels do not use).
    //  Select: dav_c220/kernel_operator_vec_cmpsel_impl.h, operands half/float, mask uint8..uint64.
    {Soc::kAscend910B, "Ascend910B", "dav_c220", UsableUbOf(Soc::kAscend910B),
     ScratchUbOf(Soc::kAscend910B), true, kHalfFloat, kHalfFloat, kC220Casts, Count(kC220Casts)},
    // Ascend950 (dav_3510, regbase):
    //  UB: the SoC table's row (TOTAL_UB_SIZE = TMP_UB_OFFSET: nothing reserved).
    //  DataCopyPad: dav_3510/kernel_operator_data_copy_impl.h (byte-granular bursts).
    //  CompareScalar (count form): dav_3510/kernel_operator_vec_cmp_impl.h, src int8..uint64,
    //      half, bfloat16, float, double.
    //  Select (count form, scalar src1): dav_3510/kernel_operator_vec_sel_impl.h, int8..uint64,
    //      half, bfloat16, float (no double).
    {Soc::kAscend950, "Ascend950", "dav_3510", UsableUbOf(Soc::kAscend950),
     ScratchUbOf(Soc::kAscend950), true,
     kHalfFloat | Bit(VType::kBf16) | Bit(VType::kDouble) | Bit(VType::kInt8) | Bit(VType::kUInt8) |
         Bit(VType::kInt16) | Bit(VType::kUInt16) | Bit(VType::kInt32) | Bit(VType::kUInt32) |
         Bit(VType::kInt64) | Bit(VType::kUInt64),
     kHalfFloat | Bit(VType::kBf16) | Bit(VType::kInt8) | Bit(VType::kUInt8) | Bit(VType::kInt16) |
         Bit(VType::kUInt16) | Bit(VType::kInt32) | Bit(VType::kUInt32) | Bit(VType::kInt64) |
         Bit(VType::kUInt64),
     k3510Casts, Count(k3510Casts)},
    // host: the CPU. The Ascend910B's API rules, plus float64 compare/select (the host-only
    // float64 kernels; no SoC has them) and the Ascend950's int8/uint8 compare/select (above), so
    // the byte kernels take the Ascend950's two-op path (common/soc_features.h). Its UB is
    // whatever the launch asks for (ub_usable 0): nothing on the CPU reserves scratch, and the
    // FFI handler tiles for a 64 KiB UB (cpp/xla_ffi/ffi_handler.h kHostUbSize) that must be
    // usable whole.
    {Soc::kHost, "host", "cpu", UsableUbOf(Soc::kHost), ScratchUbOf(Soc::kHost), true,
     kHalfFloat | Bit(VType::kDouble) | Bit(VType::kInt8) | Bit(VType::kUInt8),
     kHalfFloat | Bit(VType::kDouble) | Bit(VType::kInt8) | Bit(VType::kUInt8), kC220Casts,
     Count(kC220Casts)},
};

}  // namespace

const char* VTypeName(VType t) {
  static const char* const kNames[] = {"half",    "bfloat16_t", "float",   "double",
                                       "int8_t",  "uint8_t",    "int16_t", "uint16_t",
                                       "int32_t", "uint32_t",   "int64_t", "uint64_t"};
  return kNames[static_cast<uint32_t>(t)];
}

const char* RoundModeName(RoundMode m) {
  static const char* const kNames[] = {"CAST_NONE",  "CAST_RINT",  "CAST_FLOOR", "CAST_CEIL",
                                       "CAST_ROUND", "CAST_TRUNC", "CAST_ODD"};
  const auto i = static_cast<uint32_t>(m);
  return i < sizeof(kNames) / sizeof(kNames[0]) ? kNames[i] : "unknown RoundMode";
}

const SocRules& RulesFor(Soc soc) {
  const auto i = static_cast<uint32_t>(soc);
  CPU_ASCENDC_CHECK(i < sizeof(kRules) / sizeof(kRules[0]), "SocRules", "unknown SoC %u", i);
  return kRules[i];
}

uint64_t UsableUb(Soc soc, uint64_t ub_size) {
  const SocRules& r = RulesFor(soc);
  return r.ub_usable != 0 && r.ub_usable < ub_size ? r.ub_usable : ub_size;
}

void CheckCastRule(const SocRules& r, VType dst, VType src, RoundMode mode) {
  for (uint32_t i = 0; i < r.num_casts; ++i) {
    const CastRule& c = r.casts[i];
    if (c.dst == dst && c.src == src) {
      CPU_ASCENDC_CHECK((c.round_modes & Bit(mode)) != 0, "Cast",
                        "SoC rule: %s (%s) has no Cast %s -> %s with %s", r.name, r.arch,
                        VTypeName(src), VTypeName(dst), RoundModeName(mode));
      return;
    }
  }
  PreconditionFailed("Cast", "SoC rule: %s (%s) has no Cast %s -> %s", r.name, r.arch,
                     VTypeName(src), VTypeName(dst));
}

void CheckCompareScalarRule(const SocRules& r, VType src) {
  CPU_ASCENDC_CHECK((r.compare_scalar_types & Bit(src)) != 0, "CompareScalar",
                    "SoC rule: %s (%s) has no CompareScalar on %s", r.name, r.arch, VTypeName(src));
}

void CheckSelectScalarRule(const SocRules& r, VType src) {
  CPU_ASCENDC_CHECK((r.select_scalar_types & Bit(src)) != 0, "Select",
                    "SoC rule: %s (%s) has no VSEL_TENSOR_SCALAR_MODE Select on %s", r.name, r.arch,
                    VTypeName(src));
}

void CheckDataCopyPadRule(const SocRules& r, const char* api) {
  CPU_ASCENDC_CHECK(r.has_data_copy_pad, api,
                    "SoC rule: %s (%s) has no DataCopyPad (an unsupported-API stub there)", r.name,
                    r.arch);
}

}  // namespace cpu_ascendc
