// Per-SoC rules of the AscendC API, enforced by the CPU implementation of the primitives.
//
// The emulation otherwise models one generic vector unit. A launch names the SoC it runs for
// (host_launch.h); every block's CoreState then points at that SoC's rule set, and each
// primitive checks its rule once at entry: a kernel that breaks its SoC's rule aborts with a
// message naming the rule, the SoC and the asc-devkit source the rule comes from.
//
// Facts (asc-devkit, github.com/mirror-cann/asc-devkit; arch per SoC from
// tests/api/basic_api/CMakeLists.txt: ascend910 -> __NPU_ARCH__ 1001 / dav_c100, ascend910B1 ->
// 2201 / dav_c220, ascend950 -> 3510 / dav_3510) are cited beside each table in soc_rules.cpp.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ascend_kernels/dtype_soc_table.h"
#include "ascendc_types.h"

namespace cpu_ascendc {

// The SoCs a launch can run for: the SoC table's (kHost is the CPU itself: FFI handler, executor
// soc "host").
using Soc = ascend_kernels::KernelSoc;

// Element types the rules talk about, valued as the dtype table's aclDataType codes (a bit index
// in the rule masks: every code is below 32).
enum class VType : uint8_t {
#define CPU_ASCENDC_VTYPE(Name, name, code, ...) k##Name = code,
  ASCEND_KERNELS_KERNEL_DTYPES(CPU_ASCENDC_VTYPE)
#undef CPU_ASCENDC_VTYPE
#define CPU_ASCENDC_VTYPE(Name, code, ...) k##Name = code,
      ASCEND_KERNELS_OTHER_DTYPES(CPU_ASCENDC_VTYPE)
#undef CPU_ASCENDC_VTYPE
};

// The VType of a C type: a kernel dtype's from its table row; the 16-, 32- and 64-bit integer
// types the kernels only reinterpret (no kernel dtype of the table) by their aclDataType.
template <typename T>
constexpr VType VTypeOf() {
#define CPU_ASCENDC_VTYPE_OF(Name, name, code, type, ...) \
  if constexpr (std::is_same_v<T, type>) {                \
    return VType::k##Name;                                \
  } else
  ASCEND_KERNELS_KERNEL_DTYPES(CPU_ASCENDC_VTYPE_OF)
#undef CPU_ASCENDC_VTYPE_OF
  if constexpr (std::is_same_v<T, int16_t>)
    return VType::kInt16;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return VType::kUInt16;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return VType::kUInt32;
  else {
    static_assert(std::is_same_v<T, uint64_t>, "VTypeOf: not a vector element type");
    return VType::kUInt64;
  }
}

const char* VTypeName(VType t);
const char* RoundModeName(AscendC::RoundMode m);

constexpr uint32_t Bit(VType t) { return 1u << static_cast<uint32_t>(t); }
constexpr uint32_t Bit(AscendC::RoundMode m) { return 1u << static_cast<uint32_t>(m); }

// One Cast (dst <- src) that exists on a SoC, with the round modes that emit an instruction.
struct CastRule {
  VType dst;
  VType src;
  uint32_t round_modes;  // Bit(RoundMode) mask
};

// The rules of one arch's AscendC API (a SoC row's arch column, dtype_soc_table.h).
struct ArchRules {
  uint32_t npu_arch;              // __NPU_ARCH__; 0: the host
  const char* arch;               // "dav_c220"
  bool has_data_copy_pad;         // DataCopyPad moves bytes (false: an unsupported-API stub)
  uint32_t compare_scalar_types;  // CompareScalar (count form, GT) source types
  uint32_t select_scalar_types;   // Select VSEL_TENSOR_SCALAR_MODE operand types (0: mode absent)
  const CastRule* casts;
  uint32_t num_casts;
};

// One SoC's rules: its arch's, with its own name and UB.
struct SocRules {
  Soc soc;
  const char* name;        // "Ascend910B"
  const char* arch;        // "dav_c220"
  uint64_t ub_usable;      // bytes a kernel's TPipe may hand out (0: the launch's ub_size, host)
  uint64_t ub_scratch;     // bytes above ub_usable the API itself uses (Select's scalar scratch)
  bool has_data_copy_pad;  // DataCopyPad moves bytes (false: an unsupported-API stub)
  uint32_t compare_scalar_types;  // CompareScalar (count form, GT) source types
  uint32_t select_scalar_types;   // Select VSEL_TENSOR_SCALAR_MODE operand types (0: mode absent)
  const CastRule* casts;
  uint32_t num_casts;
};

const SocRules& RulesFor(Soc soc);

// The bytes a kernel may allocate in UB on `soc` for a launch given `ub_size` (the platform's
// UB, the tiling input): min(ub_size, the SoC's usable UB).
uint64_t UsableUb(Soc soc, uint64_t ub_size);

// Entry checks: abort naming the rule when SoC `r` does not have the operation (the primitives
// pass the rules of the launch's SoC, CurrentRules() in core_state.h).
void CheckCastRule(const SocRules& r, VType dst, VType src, AscendC::RoundMode mode);
void CheckCompareScalarRule(const SocRules& r, VType src);
void CheckSelectScalarRule(const SocRules& r, VType src);
void CheckDataCopyPadRule(const SocRules& r, const char* api);

// Whether SoC `r` has both CompareScalar and tensor-scalar Select on `t` (what a kernel path that
// compares and selects in `t` itself needs).
constexpr bool HasCompareAndSelect(const SocRules& r, VType t) {
  return (r.compare_scalar_types & r.select_scalar_types & Bit(t)) != 0;
}

}  // namespace cpu_ascendc
