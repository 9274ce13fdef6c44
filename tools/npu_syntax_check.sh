#!/usr/bin/env bash
# Type-checks the NPU-only host sources with `g++ -fsyntax-only` against CANN's runtime headers,
# without a toolkit or a device compiler: the NPU launcher, the executor's NPU phase two and the
# "ASCEND" FFI handlers, for every SoC row an NPU build can name (JAX_THRESHOLD_NPU_SOC: the rows
# of ascend_kernels/include/ascend_kernels/dtype_soc_table.h with device names), against the XLA
# FFI headers of each Python's jaxlib.
#
# usage: tools/npu_syntax_check.sh CANN_INCLUDE_DIR [PYTHON...]
#   CANN_INCLUDE_DIR  holds acl/acl.h, acl/acl_rt.h, acl/acl_base.h... (a toolkit's include/, or
#                     hicann/runtime's include/external)
#   PYTHON            interpreters whose jaxlib/include provides xla/ffi/api/ffi.h (default:
#                     python3)
#
# The aclrtlaunch_<entry>.h headers that ascendc_library() generates are written to a temporary
# directory in the generator's shape: `uint32_t aclrtlaunch_<entry>(uint32_t numBlocks,
# aclrtStream stream, void* ..., <Tiling>* tiling)`, one void* per GM argument and the by-value
# tiling struct (forward-declared at global scope) by host pointer, as the entry macros of
# ascend_kernels/common/select_kernel.h declare them (asc-devkit extract_host_stub.py). Not part of CI (it has no CANN headers).
set -euo pipefail

if [[ $# -lt 1 || ! -f "$1/acl/acl.h" ]]; then
  echo "usage: $0 CANN_INCLUDE_DIR [PYTHON...]   (CANN_INCLUDE_DIR/acl/acl.h must exist)" >&2
  exit 2
fi
CANN_INC=$(cd "$1" && pwd)
shift
PYTHONS=("$@")
[[ ${#PYTHONS[@]} -gt 0 ]] || PYTHONS=(python3)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CXX=${CXX:-g++}
STUBS=$(mktemp -d)
trap 'rm -rf "$STUBS"' EXIT

stand_in() {  # stand_in ENTRY TILING ARG...: aclrtlaunch_ENTRY.h, one void* per GM argument
  local entry=$1 tiling=$2
  shift 2
  local params=""
  for arg in "$@"; do params+=", void* $arg"; done
  params+=", $tiling* tiling"
  cat >"$STUBS/aclrtlaunch_$entry.h" <<EOF
#ifndef HEADER_ACLRTLAUNCH_${entry^^}_H
#define HEADER_ACLRTLAUNCH_${entry^^}_H
#include "acl/acl_base.h"
struct $tiling;
#ifndef ACLRT_LAUNCH_KERNEL
#define ACLRT_LAUNCH_KERNEL(kernel_func) aclrtlaunch_##kernel_func
#endif
extern "C" uint32_t aclrtlaunch_$entry(uint32_t numBlocks, aclrtStream stream$params);
#endif
EOF
}
# The kernel dtypes and the SoC codes of NPU builds, from the table through the preprocessor
# (ascend_kernels/dtype_soc_lists.in).
LISTS=$("$CXX" -E -P -x c++ -I"$ROOT/ascend_kernels/include" "$ROOT/ascend_kernels/dtype_soc_lists.in" |
  sed -n 's/^DTYPE_SOC_LISTS://p' | tr '@' '\n')
DTYPES=$(sed -n 's/^dtype \([A-Za-z0-9_]*\) *$/\1/p' <<<"$LISTS")
NPU_SOCS=$(sed -n 's/^soc [A-Za-z0-9_]* \([0-9]*\) "[^"][^"]*".*/\1/p' <<<"$LISTS")
[[ -n "$DTYPES" && -n "$NPU_SOCS" ]] || { echo "cannot read the dtype and SoC table" >&2; exit 1; }
for dtype in $DTYPES; do
  stand_in "relu_grad_$dtype" ReluGradTilingData grad feature out workspace
  stand_in "threshold_grad_v2_d_$dtype" ThresholdGradV2DTilingData grad feature threshold out workspace
  echo "#include \"aclrtlaunch_relu_grad_$dtype.h\"" >>"$STUBS/aclrtlaunch_entries.h"
  echo "#include \"aclrtlaunch_threshold_grad_v2_d_$dtype.h\"" >>"$STUBS/aclrtlaunch_entries.h"
done

FLAGS=(-std=c++17 -fsyntax-only -Wall -Wextra -Werror -I"$STUBS" -isystem "$CANN_INC"
       -I"$ROOT/ascend_kernels/include" -I"$ROOT/ascend_kernels" -I"$ROOT/ascend_kernels/npu" -I"$ROOT/cpp"
       -I"$ROOT/cpp/include")
failures=0
check() {  # check LABEL FLAGS... FILE
  local label=$1
  shift
  if "$CXX" "${FLAGS[@]}" "$@"; then
    echo "ok    $label"
  else
    echo "FAIL  $label"
    failures=$((failures + 1))
  fi
}

for soc in $NPU_SOCS; do
  check "npu_launch.cpp (JAX_THRESHOLD_NPU_SOC=$soc)" -DJAX_THRESHOLD_NPU_SOC=$soc \
    "$ROOT/ascend_kernels/npu/npu_launch.cpp"
done
check "npu_phase_two.cpp" "$ROOT/cpp/aclnn/npu_phase_two.cpp"
for python in "${PYTHONS[@]}"; do
  read -r jaxlib_version ffi_inc < <("$python" -c \
    "import jaxlib, jaxlib.version, os; print(jaxlib.version.__version__, os.path.join(os.path.dirname(jaxlib.__file__), 'include'))")
  for soc in $NPU_SOCS; do
    check "ffi_handler.cpp (jaxlib $jaxlib_version, JAX_THRESHOLD_NPU_SOC=$soc)" \
      -isystem "$ffi_inc" -DJAX_THRESHOLD_ASCEND=1 -DJAX_THRESHOLD_NPU_SOC=$soc \
      -DJAX_THRESHOLD_HAS_FFI_HANDLER=1 -DJAX_THRESHOLD_XLA_FFI_JAXLIB_VERSION="\"$jaxlib_version\"" \
      "$ROOT/cpp/xla_ffi/ffi_handler.cpp"
  done
done
if [[ $failures -gt 0 ]]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
