#!/usr/bin/env bash
# CI: `bazel test --config=offline //...` (BUILD.bazel: kernels, tiling, executor, FFI handler,
# nanobind extension, C++ unit tests), without a network.
#
# Bazel: the one on PATH, else Debian's bazel-bootstrap (4.2.3) installed with apt-get when we are
# root (about 10 s with a warm apt cache); CI_BAZEL_INSTALL=0 forbids the install. Without Bazel
# this step is skipped, or fails when CI_BAZEL_REQUIRED=1.
# Python: $PYTHON_BIN_PATH (the interpreter whose jaxlib gives the XLA FFI headers and whose
# nanobind gives the extension's sources; then both are required), else python3 on PATH (then
# whatever it lacks is left out of the build, with a warning).
# Bounded by CI_BAZEL_TIMEOUT seconds (default 1500). CI_BAZEL_OUTPUT_BASE: a fresh output base
# (e.g. under CI's work dir) instead of Bazel's per-workspace default under ~/.cache/bazel.
# Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v bazel >/dev/null 2>&1; then
  if [ "${CI_BAZEL_INSTALL:-1}" != 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "bazel not found: installing Debian's bazel-bootstrap"
    t0=$SECONDS
    timeout 600 apt-get update -qq || true
    if DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq bazel-bootstrap >/dev/null; then
      echo "installed bazel-bootstrap in $((SECONDS - t0))s"
    else
      echo "could not install bazel-bootstrap"
    fi
  fi
fi
if ! command -v bazel >/dev/null 2>&1; then
  if [ "${CI_BAZEL_REQUIRED:-0}" = 1 ]; then echo "bazel not available"; exit 1; fi
  echo "bazel not available: Bazel build skipped"
  exit 0
fi

startup=()
if [ -n "${CI_BAZEL_OUTPUT_BASE:-}" ]; then startup+=("--output_base=$CI_BAZEL_OUTPUT_BASE"); fi
args=(--config=offline)
if [ -n "${PYTHON_BIN_PATH:-}" ]; then args+=("--repo_env=PYTHON_BIN_PATH=$PYTHON_BIN_PATH"); fi

# Never leave a Bazel server behind, whatever happens.
trap 'bazel "${startup[@]}" shutdown >/dev/null 2>&1 || true' EXIT

t0=$SECONDS
# --symlink_prefix=/: no bazel-* symlinks in the tree.
timeout "${CI_BAZEL_TIMEOUT:-1500}" bazel "${startup[@]}" test "${args[@]}" --symlink_prefix=/ //...
echo "bazel test --config=offline //... passed in $((SECONDS - t0))s"
# What the build found in that Python. A Python named by PYTHON_BIN_PATH must give everything:
# missing FFI headers or nanobind there would silently drop the FFI handler or the extension.
defs="$(bazel "${startup[@]}" info "${args[@]}" output_base)/external/local_python/defs.bzl"
grep -E '^(PYTHON|HAS_)' "$defs"
if [ -n "${PYTHON_BIN_PATH:-}" ] && grep -q '^HAS_.* = False' "$defs"; then
  echo "$PYTHON_BIN_PATH lacks jaxlib or nanobind: the FFI handler or the extension was not built"
  exit 1
fi
