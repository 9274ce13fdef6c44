// The rule tables of arch_rules.h, one per arch, and the entry checks the primitives call.
//
// Every fact below was read from asc-devkit (github.com/mirror-cann/asc-devkit, commit
// 82b89a15, 2026-07-30); the file each comes from is named beside it. Only the operations this
// project's kernels and the emulation implement are tabulated: a pair or mode missing here
// aborts, so an unverified operation cannot pass silently.
#include "arch_rules.h"

#include "precondition.h"

namespace cpu_ascendc {
namespace {

using AscendC::RoundMode;

constexpr uint32_t kRoundAll = Bit(RoundMode::CAST_RINT) | Bit(RoundMode::CAST_FLOOR) |
                               Bit(RoundMode::CAST_CEIL) | Bit(RoundMode::CAST_ROUND) |
                               Bit(RoundMode::CAST_TRUNC);
constexpr uint32_t kNone = Bit(RoundMode::CAST_NONE);

// dav_c220 (__NPU_ARCH__ 2201).
// impl/basic_api/dav_c220/kernel_operator_vec_vconv_impl.h: the widening casts half->float,
// bf16->float, int8/uint8->half emit an instruction only for CAST_NONE; half->int8/uint8 take every
// mode but CAST_ODD; float->half every mode; float->bf16 every mode but CAST_NONE and CAST_ODD.
constexpr CastRule kC220Casts[] = {
    {VType::kFloat32, VType::kFloat16, kNone},
    {VType::kFloat32, VType::kBFloat16, kNone},
    {VType::kFloat16, VType::kInt8, kNone},
    {VType::kFloat16, VType::kUInt8, kNone},
    {VType::kInt8, VType::kFloat16, kNone | kRoundAll},
    {VType::kUInt8, VType::kFloat16, kNone | kRoundAll},
    {VType::kFloat16, VType::kFloat32, kNone | kRoundAll | Bit(RoundMode::CAST_ODD)},
    {VType::kBFloat16, VType::kFloat32, kRoundAll},
};

// dav_c100 (__NPU_ARCH__ 1001).
// impl/basic_api/dav_c100/kernel_operator_vec_vconv_impl.h: no bfloat16 conversion at all;
// half->float, int8/uint8->half CAST_NONE only; half->int8/uint8 every mode but CAST_RINT and
// CAST_ODD; float->half CAST_NONE and CAST_ODD only.
constexpr CastRule kC100Casts[] = {
    {VType::kFloat32, VType::kFloat16, kNone},
    {VType::kFloat16, VType::kInt8, kNone},
    {VType::kFloat16, VType::kUInt8, kNone},
    {VType::kInt8, VType::kFloat16, kNone | (kRoundAll & ~Bit(RoundMode::CAST_RINT))},
    {VType::kUInt8, VType::kFloat16, kNone | (kRoundAll & ~Bit(RoundMode::CAST_RINT))},
    {VType::kFloat16, VType::kFloat32, kNone | Bit(RoundMode::CAST_ODD)},
};

// dav_3510 (__NPU_ARCH__ 3510).
// impl/basic_api/dav_3510/kernel_operator_vec_vconv_impl.h (CastImpl, level 2): half->float,
// bf16->float, int8/uint8->half CAST_NONE only; half->int8/uint8 and float->half every rounding
// mode, CAST_NONE meaning CAST_RINT; float->half also CAST_ODD; float->bf16 the five rounding
// modes.
constexpr CastRule k3510Casts[] = {
    {VType::kFloat32, VType::kFloat16, kNone},
    {VType::kFloat32, VType::kBFloat16, kNone},
    {VType::kFloat16, VType::kInt8, kNone},
    {VType::kFloat16, VType::kUInt8, kNone},
    {VType::kInt8, VType::kFloat16, kNone | kRoundAll},
    {VType::kUInt8, VType::kFloat16, kNone | kRoundAll},
    {VType::kFloat16, VType::kFloat32, kNone | kRoundAll | Bit(RoundMode::CAST_ODD)},
    {VType::kBFloat16, VType::kFloat32, kRoundAll},
};

template <size_t N>
constexpr uint32_t Count(const CastRule (&)[N]) {
  return static_cast<uint32_t>(N);
}

constexpr uint32_t kHalfFloat = Bit(VType::kFloat16) | Bit(VType::kFloat32);

// The rule sets by arch. UB: kernel_utils_constants.h's TOTAL_UB_SIZE and TMP_UB_OFFSET of the
// arch (the API's scratch lies between them).
constexpr ArchRules kArchRules[] = {
    // dav_c100:
    //  DataCopyPad: dav_c100/kernel_operator_data_copy_impl.h, both directions report "not
    //  supported".
    //  CompareScalar: dav_c100/kernel_operator_vec_cmpsel_impl.h, every form reports "not
    //  supported".
    //  Select: same file, mode 0 (VSEL_CMPMASK_SPR) only; the tensor-scalar form asserts.
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
     k3510Casts, Count(k3510Casts)},
    // 0, the host CPU: dav_c220's rules, plus float64 compare/select (no arch has them) and
    // dav_3510's int8/uint8 compare/select, so that byte kernels take the two-op path. Its UB is
    // whatever the launch asks for: nothing on the CPU reserves scratch.
    {0, "cpu", 0, 0, true,
     kHalfFloat | Bit(VType::kFloat64) | Bit(VType::kInt8) | Bit(VType::kUInt8),
     kHalfFloat | Bit(VType::kFloat64) | Bit(VType::kInt8) | Bit(VType::kUInt8), kC220Casts,
     Count(kC220Casts)},
};

}  // namespace

const char* VTypeName(VType t) {  // the C type's name
  static const char* const kNames[] = {"int8_t",  "uint8_t",    "int16_t", "uint16_t",
                                       "int32_t", "uint32_t",   "int64_t", "uint64_t",
                                       "half",    "bfloat16_t", "float",   "double"};
  return kNames[static_cast<uint32_t>(t)];
}

const char* RoundModeName(RoundMode m) {
  static const char* const kNames[] = {"CAST_NONE",  "CAST_RINT",  "CAST_FLOOR", "CAST_CEIL",
                                       "CAST_ROUND", "CAST_TRUNC", "CAST_ODD"};
  const auto i = static_cast<uint32_t>(m);
  return i < sizeof(kNames) / sizeof(kNames[0]) ? kNames[i] : "unknown RoundMode";
}

const ArchRules& RulesOf(uint32_t npu_arch) {
  for (const ArchRules& r : kArchRules) {
    if (r.npu_arch == npu_arch) return r;
  }
  PreconditionFailed("ArchRules", "unknown __NPU_ARCH__ %u", npu_arch);
}

uint64_t UsableUb(const ArchRules& r, uint64_t ub_size) {
  return r.tmp_ub_offset != 0 && r.tmp_ub_offset < ub_size ? r.tmp_ub_offset : ub_size;
}

void CheckCastRule(const ArchRules& r, VType dst, VType src, RoundMode mode) {
  for (uint32_t i = 0; i < r.num_casts; ++i) {
    const CastRule& c = r.casts[i];
    if (c.dst == dst && c.src == src) {
      CPU_ASCENDC_CHECK((c.round_modes & Bit(mode)) != 0, "Cast",
                        "%s rule: no Cast %s -> %s with %s", r.name, VTypeName(src), VTypeName(dst),
                        RoundModeName(mode));
      return;
    }
  }
  PreconditionFailed("Cast", "%s rule: no Cast %s -> %s", r.name, VTypeName(src), VTypeName(dst));
}

void CheckCompareScalarRule(const ArchRules& r, VType src) {
  CPU_ASCENDC_CHECK((r.compare_scalar_types & Bit(src)) != 0, "CompareScalar",
                    "%s rule: no CompareScalar on %s", r.name, VTypeName(src));
}

void CheckSelectScalarRule(const ArchRules& r, VType src) {
  CPU_ASCENDC_CHECK((r.select_scalar_types & Bit(src)) != 0, "Select",
                    "%s rule: no VSEL_TENSOR_SCALAR_MODE Select on %s", r.name, VTypeName(src));
}

void CheckDataCopyPadRule(const ArchRules& r, const char* api) {
  CPU_ASCENDC_CHECK(r.has_data_copy_pad, api,
                    "%s rule: no DataCopyPad (an unsupported-API stub there)", r.name);
}

}  // namespace cpu_ascendc
