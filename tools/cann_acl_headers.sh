#!/usr/bin/env bash
# CANN's ACL runtime headers (acl/acl.h, acl/acl_rt.h, acl/acl_base.h, acl/error_codes/...) from a
# registry: the torch-npu wheels on PyPI carry them under torch_npu/include/third_party/acl/inc.
# Downloads the pinned wheel once (pip download --no-deps), keeps only the headers of acl/ and ge/
# (which acl_base.h includes) in the cache directory and prints the include directory that holds
# acl/.
#
# usage: tools/cann_acl_headers.sh oldest|newest|TORCH_NPU_VERSION
#   oldest, newest   the ends of the CANN range the project claims (docs/npu.md, "CANN versions")
# env:  CANN_HEADERS_CACHE  cache directory (default ~/.cache/jax-threshold-cann-headers)
#       PYTHON              interpreter whose pip downloads (default python3)
set -euo pipefail

# The wheel paired with CANN 8.1.RC1 (ACL API 1.12), and the newest on PyPI (ACL API 1.17).
OLDEST=2.5.1
NEWEST=2.14.0

case "${1:-}" in
  oldest) version=$OLDEST ;;
  newest) version=$NEWEST ;;
  [0-9]*) version=$1 ;;
  *)
    echo "usage: $0 oldest|newest|TORCH_NPU_VERSION" >&2
    exit 2
    ;;
esac
cache=${CANN_HEADERS_CACHE:-${HOME:-/root}/.cache/jax-threshold-cann-headers}/torch-npu-$version
include=$cache/torch_npu/include/third_party/acl/inc
if [[ ! -f $include/acl/acl.h ]]; then
  # Any wheel of the release carries the headers: its CPython 3.11 x86-64 one is taken.
  "${PYTHON:-python3}" -m pip download -q --no-deps --only-binary=:all: --python-version 3.11 \
    --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 \
    -d "$cache/wheel" "torch-npu==$version" >&2
  wheel=$(ls "$cache"/wheel/torch_npu-"$version"-*.whl | head -1)
  "${PYTHON:-python3}" - "$wheel" "$cache" <<'EOF'
import sys, zipfile
inc = "torch_npu/include/third_party/acl/inc/"
with zipfile.ZipFile(sys.argv[1]) as wheel:
    members = [n for n in wheel.namelist()
               if n.startswith((inc + "acl/", inc + "ge/")) and n.endswith(".h")]
    if inc + "acl/acl.h" not in members:
        sys.exit(f"{sys.argv[1]} has no {inc}acl/acl.h")
    wheel.extractall(sys.argv[2], members)
EOF
  rm -rf "$cache/wheel"  # the headers are all that is kept
fi
echo "$include"
