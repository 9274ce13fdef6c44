// The rules of each arch's AscendC API, enforced by the CPU implementation of the primitives.
//
// The emulation otherwise models one generic vector unit. A launch names the arch it runs for,
// as __NPU_ARCH__ names it (CoreScope); each primitive checks the arch's rule once at entry: a
// kernel that breaks it aborts with a message naming the rule, the arch and the asc-devkit source
// the rule comes from (cited beside each table in arch_rules.cpp).
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

template <typename T>
constexpr VType VTypeOf() {
  using std::is_same_v;
  if constexpr (is_same_v<T, int8_t>)
    return VType::kInt8;
  else if constexpr (is_same_v<T, uint8_t>)
    return VType::kUInt8;
  else if constexpr (is_same_v<T, int16_t>)
    return VType::kInt16;
  else if constexpr (is_same_v<T, uint16_t>)
    return VType::kUInt16;
  else if constexpr (is_same_v<T, int32_t>)
    return VType::kInt32;
  else if constexpr (is_same_v<T, uint32_t>)
    return VType::kUInt32;
  else if constexpr (is_same_v<T, int64_t>)
    return VType::kInt64;
  else if constexpr (is_same_v<T, uint64_t>)
    return VType::kUInt64;
  else if constexpr (is_same_v<T, half>)
    return VType::kFloat16;
  else if constexpr (is_same_v<T, bfloat16_t>)
    return VType::kBFloat16;
  else if constexpr (is_same_v<T, float>)
    return VType::kFloat32;
  else {
    static_assert(is_same_v<T, double>, "VTypeOf: not a vector element type");
    return VType::kFloat64;
  }
}

const char* VTypeName(VType t);
const char* RoundModeName(AscendC::RoundMode m);

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
  // asc-devkit impl/basic_api/utils/kernel_utils_constants.h: the UB, and where the API's own
  // temporaries begin (a kernel's TPipe may hand out the bytes below it). 0: the launch's UB.
  uint64_t total_ub_size;
  uint64_t tmp_ub_offset;
  bool has_data_copy_pad;         // DataCopyPad moves bytes (false: an unsupported-API stub)
  uint32_t compare_scalar_types;  // CompareScalar (count form, GT) source types
  uint32_t select_scalar_types;   // Select VSEL_TENSOR_SCALAR_MODE operand types (0: mode absent)
  const CastRule* casts;
  uint32_t num_casts;
};

// The rules of __NPU_ARCH__ `npu_arch`; aborts for an arch the model does not know.
const ArchRules& RulesOf(uint32_t npu_arch);

// The bytes a kernel may allocate in UB on arch `r` for a launch given `ub_size` (the platform's
// UB, the tiling input): min(ub_size, TMP_UB_OFFSET).
uint64_t UsableUb(const ArchRules& r, uint64_t ub_size);

// Entry checks: abort naming the rule when arch `r` does not have the operation (the primitives
// pass the rules of the launch's arch, CurrentRules() in core_state.h).
void CheckCastRule(const ArchRules& r, VType dst, VType src, AscendC::RoundMode mode);
void CheckCompareScalarRule(const ArchRules& r, VType src);
void CheckSelectScalarRule(const ArchRules& r, VType src);
void CheckDataCopyPadRule(const ArchRules& r, const char* api);

// Whether arch `r` has both CompareScalar and tensor-scalar Select on `t` (what a kernel path that
// compares and selects in `t` itself needs).
constexpr bool HasCompareAndSelect(const ArchRules& r, VType t) {
  return (r.compare_scalar_types & r.select_scalar_types & Bit(t)) != 0;
}

}  // namespace cpu_ascendc
