#!/usr/bin/env bash
# Compiles the NPU-only host sources with `-std=c++17 -Wall -Wextra -Werror` against CANN's ACL
# runtime headers, without a toolkit or a device compiler: the NPU launcher, the executor's NPU
# phase two and the "ASCEND" FFI handlers, for the default SOC_VERSION of each SoC row an NPU
# build can name (tools/npu_socs.cpp prints them), against the XLA FFI headers of each jaxlib.
#
# usage: tools/npu_syntax_check.sh CANN [JAXLIB...]
#   CANN    --pinned: the oldest and the newest CANN headers the project claims, taken from the
#           torch-npu wheels on PyPI by tools/cann_acl_headers.sh (what CI runs); or a directory
#           holding acl/acl.h, acl/acl_rt.h, acl/acl_base.h... (a toolkit's include/)
#   JAXLIB  a Python interpreter with jaxlib installed, or a directory holding a jaxlib package
#           (jaxlib/include/xla/ffi/api/ffi.h, jaxlib/version.py); default: python3
#
# The two aclrtlaunch_<entry>.h headers that ascendc_library() generates are written to a
# temporary directory in exactly the generator's form (asc-devkit extract_host_stub.py,
# generate_header_code): a guard, acl/acl_base.h, the ACLRT_LAUNCH_KERNEL macro and
# `extern "C" uint32_t aclrtlaunch_<entry>(uint32_t numBlocks, aclrtStream stream, void* ...,
# <Tiling>* tiling);`, one void* per GM argument and the by-value tiling struct by host pointer.
# The header does not declare <Tiling>: the code that includes it must have declared it first.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [[ $# -lt 1 || ($1 != --pinned && ! -f $1/acl/acl.h) ]]; then
  echo "usage: $0 --pinned|CANN_INCLUDE_DIR [JAXLIB...]   (CANN_INCLUDE_DIR/acl/acl.h must exist)" >&2
  exit 2
fi
if [[ $1 == --pinned ]]; then
  CANN_INCS=()
  for end in oldest newest; do CANN_INCS+=("$("$ROOT/tools/cann_acl_headers.sh" "$end")"); done
else
  CANN_INCS=("$(cd "$1" && pwd)")
fi
shift
JAXLIBS=("$@")
[[ ${#JAXLIBS[@]} -gt 0 ]] || JAXLIBS=(python3)
CXX=${CXX:-g++}
STUBS=$(mktemp -d)
trap 'rm -rf "$STUBS"' EXIT

launch_header() {  # launch_header ENTRY TILING ARG...: aclrtlaunch_ENTRY.h, one void* per GM argument
  local entry=$1 tiling=$2
  shift 2
  local params=""
  for arg in "$@"; do params+=", void* $arg"; done
  params+=", $tiling* tiling"
  cat >"$STUBS/aclrtlaunch_$entry.h" <<EOF
#ifndef HEADER_ACLRTLAUNCH_${entry^^}_H
#define HEADER_ACLRTLAUNCH_${entry^^}_H
#include "acl/acl_base.h"

#ifndef ACLRT_LAUNCH_KERNEL
#define ACLRT_LAUNCH_KERNEL(kernel_func) aclrtlaunch_##kernel_func
#endif

extern "C" uint32_t aclrtlaunch_$entry(uint32_t numBlocks, aclrtStream stream$params);
#endif
EOF
}
launch_header relu_grad ReluGradTilingData grad feature out workspace
launch_header threshold_grad_v2_d ThresholdGradV2DTilingData grad feature threshold out workspace
# The default SOC_VERSION of each SoC row that has one (its list's first), as C++ reads the table.
"$CXX" -std=c++17 -I"$ROOT/ascend_kernels/include" "$ROOT/tools/npu_socs.cpp" -o "$STUBS/npu_socs"
mapfile -t SOC_VERSIONS < <("$STUBS/npu_socs" | cut -d' ' -f3)
[[ ${#SOC_VERSIONS[@]} -gt 0 ]] || { echo "no SoC row has a SOC_VERSION" >&2; exit 1; }

jaxlib_of() {  # jaxlib_of JAXLIB: prints "VERSION FFI_INCLUDE_DIR"
  if [[ -d $1 ]]; then
    local version
    version=$(sed -n 's/^_version = "\(.*\)"$/\1/p' "$1/jaxlib/version.py")
    echo "$version $(cd "$1/jaxlib/include" && pwd)"
  else
    "$1" -c "import jaxlib, jaxlib.version, os; print(jaxlib.version.__version__, os.path.join(os.path.dirname(jaxlib.__file__), 'include'))"
  fi
}

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

for cann_inc in "${CANN_INCS[@]}"; do
  acl_version=$(sed -n 's/^#define ACL_\(MAJOR\|MINOR\)_VERSION *\([0-9]*\).*/\2/p' "$cann_inc"/acl/acl*.h | paste -sd.)
  echo "CANN ACL headers $cann_inc (ACL API ${acl_version:-?})"
  FLAGS=(-std=c++17 -c -o /dev/null -Wall -Wextra -Werror -I"$STUBS" -isystem "$cann_inc"
         -I"$ROOT/ascend_kernels/include" -I"$ROOT/ascend_kernels" -I"$ROOT/ascend_kernels/npu"
         -I"$ROOT/cpp" -I"$ROOT/cpp/include")
  for soc in "${SOC_VERSIONS[@]}"; do
    check "npu_launch.cpp (SOC_VERSION $soc)" "-DJAX_THRESHOLD_SOC_VERSION=\"$soc\"" \
      "$ROOT/ascend_kernels/npu/npu_launch.cpp"
  done
  # A SOC_VERSION of no row fails the build with the accepted values.
  if out=$("$CXX" "${FLAGS[@]}" -DJAX_THRESHOLD_SOC_VERSION=\"Ascend910A\" \
    "$ROOT/ascend_kernels/npu/npu_launch.cpp" 2>&1) || ! grep -q "Ascend910B1 Ascend910B2" <<<"$out"; then
    echo "FAIL  npu_launch.cpp (SOC_VERSION Ascend910A): not refused with the accepted values"
    failures=$((failures + 1))
  else
    echo "ok    npu_launch.cpp (SOC_VERSION Ascend910A): refused"
  fi
  check "npu_phase_two.cpp" "$ROOT/cpp/aclnn/npu_phase_two.cpp"
  for jaxlib in "${JAXLIBS[@]}"; do
    read -r jaxlib_version ffi_inc < <(jaxlib_of "$jaxlib")
    for soc in "${SOC_VERSIONS[@]}"; do
      check "ffi_handler.cpp (jaxlib $jaxlib_version, SOC_VERSION $soc)" \
        -isystem "$ffi_inc" -DJAX_THRESHOLD_ASCEND=1 "-DJAX_THRESHOLD_SOC_VERSION=\"$soc\"" \
        -DJAX_THRESHOLD_HAS_FFI_HANDLER=1 "$ROOT/cpp/xla_ffi/ffi_handler.cpp"
    done
  done
done
if [[ $failures -gt 0 ]]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
