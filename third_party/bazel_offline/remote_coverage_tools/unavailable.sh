#!/bin/sh
echo "remote_coverage_tools is not available in the offline Bazel config: run 'bazel coverage' with a network" >&2
exit 1
