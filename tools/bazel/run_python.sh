#!/bin/sh
# sh_test driver: runs a Python script with the interpreter the build was configured for
# (@local_python//:defs.bzl PYTHON), which Bazel's own Python rules would not pick.
# Usage: run_python.sh PYTHON SCRIPT [ARGS...]
python=$1
shift
exec "$python" "$@"
