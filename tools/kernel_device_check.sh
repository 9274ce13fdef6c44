#!/usr/bin/env bash
# The kernels' host/device split, checked without a device compiler: every kernel translation
# unit (both operators' op_kernel/*.cpp, each entry with every dtype's case, as the CPU build
# compiles them; the table helpers they call included) is compiled a second time by clang in
# CUDA device-only mode, where a call from device code into a host function is an error. `__aicore__` is `__device__`; the extern "C" entries are device
# functions (clang refuses `__global__` and `__device__` together), which the compile emits and
# whose call graphs it therefore checks; `__gm__` is empty. The CPU model is the API
# (tools/kernel_device_check/kernel_operator.h). constexpr functions get no implicit device side
# (-fno-cuda-host-device-constexpr): kernel code calls only what it marks `__aicore__`.
#
# usage: tools/kernel_device_check.sh [CLANG++]   (default: clang++-14, else clang++)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CLANGXX=${1:-$(command -v clang++-14 || command -v clang++)}
[[ -n "$CLANGXX" ]] || { echo "kernel_device_check: clang++ not found" >&2; exit 2; }

FLAGS=(-x cuda --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_70 -fsyntax-only
       -std=c++17 -Wno-unknown-cuda-version -Xclang -fno-cuda-host-device-constexpr
       -Xclang -fcuda-allow-variadic-functions
       "-D__aicore__=__attribute__((device))" -D__global__= -D__gm__=
       -I"$ROOT/tools/kernel_device_check" -I"$ROOT/ascend_kernels/cpu_ascendc"
       -I"$ROOT/ascend_kernels/include" -I"$ROOT/ascend_kernels")
failures=0
for tu in "$ROOT"/ascend_kernels/*/op_kernel/*.cpp; do
  if "$CLANGXX" "${FLAGS[@]}" "$tu"; then
    echo "kernel_device_check: ${tu#"$ROOT"/}: ok"
  else
    echo "kernel_device_check: ${tu#"$ROOT"/}: FAILED" >&2
    failures=$((failures + 1))
  fi
done
exit $((failures > 0))
