#!/usr/bin/env bash
# README command 1: install what is missing, build, and run the shipped
# all-reduce benchmark on the default scenario (one server, 8 simulated H200).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh >&2 # the build's progress on stderr: stdout is the benchmark's table alone
echo "+ build/bin/hysim run scenarios/h200x8.yaml -- build/bin/allreduce_bench -b 1M -e 1G" >&2
exec build/bin/hysim run scenarios/h200x8.yaml -- build/bin/allreduce_bench -b 1M -e 1G
