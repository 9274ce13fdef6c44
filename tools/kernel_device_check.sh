#!/usr/bin/env bash
# The kernels' host/device split, checked without a device compiler: every kernel translation
# unit (both operators' op_kernel/*.cpp, each entry with every dtype's case; the table helpers
# they call included) is compiled a second time by clang in CUDA device-only mode, where a call
# from device code into a host function is an error ("reference to __host__ function").
# `__aicore__` is `__device__`; the extern "C" entries are device functions (clang refuses
# `__global__` and `__device__` together), which the compile emits and whose call graphs it
# therefore checks; `__gm__` is empty. constexpr functions get no implicit device side
# (-fno-cuda-host-device-constexpr): kernel code calls only what it marks `__aicore__`.
#
# Each unit is compiled
#  - as the CPU build does (the CPU model's branch), and
#  - as an NPU build of each SoC row that has a SOC_VERSION (tools/npu_socs.cpp prints them) does
#    (the NPU branch), once with the arch as __NPU_ARCH__ and once as __CCE_AICORE__ alone (CANN
#    8.1.RC1's compiler defines only that).
# The CPU model's API stands in for CANN's kernel_operator.h in both
# (tools/kernel_device_check/kernel_operator.h). An NPU compile that defines neither arch macro,
# or whose arch is not its SOC_VERSION's, must fail with the kernel's message.
#
# usage: tools/kernel_device_check.sh [CLANG++]   (default: clang++-14, else clang++)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CLANGXX=${1:-$(command -v clang++-14 || command -v clang++)}
[[ -n "$CLANGXX" ]] || { echo "kernel_device_check: clang++ not found" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

FLAGS=(-x cuda --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_70 -fsyntax-only
       -std=c++17 -Wno-unknown-cuda-version -Xclang -fno-cuda-host-device-constexpr
       -Xclang -fcuda-allow-variadic-functions
       "-D__aicore__=__attribute__((device))" -D__global__= -D__gm__=
       -I"$ROOT/tools/kernel_device_check" -I"$ROOT/ascend_kernels/cpu_ascendc"
       -I"$ROOT/ascend_kernels/include" -I"$ROOT/ascend_kernels")
"$CLANGXX" -std=c++17 -I"$ROOT/ascend_kernels/include" "$ROOT/tools/npu_socs.cpp" -o "$TMP/npu_socs"
mapfile -t SOCS < <("$TMP/npu_socs")  # "ARCH CCE_AICORE SOC_VERSION" per NPU row
[[ ${#SOCS[@]} -gt 0 ]] || { echo "kernel_device_check: no NPU SoC row" >&2; exit 2; }

failures=0
compiles() {  # compiles LABEL TU DEFINE...: the unit must compile
  local label=$1 tu=$2
  shift 2
  if "$CLANGXX" "${FLAGS[@]}" "$@" "$tu"; then
    echo "kernel_device_check: ${tu#"$ROOT"/} ($label): ok"
  else
    echo "kernel_device_check: ${tu#"$ROOT"/} ($label): FAILED" >&2
    failures=$((failures + 1))
  fi
}
refused() {  # refused LABEL MESSAGE TU DEFINE...: the unit must fail to compile with MESSAGE
  local label=$1 message=$2 tu=$3 out
  shift 3
  if out=$("$CLANGXX" "${FLAGS[@]}" "$@" "$tu" 2>&1) || ! grep -qF "$message" <<<"$out"; then
    echo "kernel_device_check: ${tu#"$ROOT"/} ($label): not refused with \"$message\"" >&2
    failures=$((failures + 1))
  else
    echo "kernel_device_check: ${tu#"$ROOT"/} ($label): refused"
  fi
}

for tu in "$ROOT"/ascend_kernels/*/op_kernel/*.cpp; do
  compiles "CPU model" "$tu"
  for soc in "${SOCS[@]}"; do
    read -r arch cce_aicore version <<<"$soc"
    compiles "$version, __NPU_ARCH__=$arch" "$tu" "-D__NPU_ARCH__=$arch" \
      "-DJAX_THRESHOLD_SOC_VERSION=\"$version\""
    if [[ $cce_aicore -ne 0 ]]; then
      compiles "$version, __CCE_AICORE__=$cce_aicore" "$tu" "-D__CCE_AICORE__=$cce_aicore" \
        "-DJAX_THRESHOLD_SOC_VERSION=\"$version\""
    fi
  done
done
# The arch checks live in the shared kernel header: one unit shows them.
tu=$ROOT/ascend_kernels/threshold_grad_v2_d/op_kernel/threshold_grad_v2_d.cpp
read -r arch _ version <<<"${SOCS[0]}"
refused "$version, no arch" "neither __NPU_ARCH__ nor __CCE_AICORE__ is defined" "$tu" \
  "-DJAX_THRESHOLD_SOC_VERSION=\"$version\""
refused "$version, __NPU_ARCH__=$((arch + 1))" "SOC_VERSION's arch is not the compiler's" "$tu" \
  "-D__NPU_ARCH__=$((arch + 1))" "-DJAX_THRESHOLD_SOC_VERSION=\"$version\""
exit $((failures > 0))
