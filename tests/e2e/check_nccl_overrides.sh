#!/usr/bin/env bash
# NCCL_ALGO / NCCL_PROTO in the program's environment and the scenario's
# nccl: keys steer hysim's NCCL model:
#   - on AUTO_SCENARIO (tuner free), NCCL_PROTO=LL makes a 64 MiB all-reduce
#     at least 1.6x slower than the tuner's choice (Simple): LL carries an
#     8-byte flag with every 8 bytes, twice the bytes on the wire (the
#     start-up latency, about a fifth of the time, stays);
#   - NCCL_PROTO=Simple gives the tuner's own figure at 64 MiB;
#   - on FORCED_SCENARIO (nccl: {proto: simple}), NCCL_PROTO=LL changes nothing;
#   - NCCL_ALGO=Tree stops the run with a message saying it is not modelled.
# usage: check_nccl_overrides.sh HYSIM AUTO_SCENARIO FORCED_SCENARIO BENCH
set -euo pipefail
hysim=$1 auto=$2 forced=$3 bench=$4
ar() { "$hysim" run "$1" -- "$bench" -g 2 -b 64M -n 2 -w 1 2>/dev/null | awk '$1 == "allreduce" { print $3 }'; }
tuned=$(ar "$auto")
ll=$(NCCL_PROTO=LL ar "$auto")
simple=$(NCCL_PROTO=Simple ar "$auto")
f_plain=$(ar "$forced")
f_ll=$(NCCL_PROTO=LL ar "$forced")
echo "64 MiB all-reduce: tuner $tuned us, NCCL_PROTO=LL $ll us, NCCL_PROTO=Simple $simple us;" \
     "forced Simple: $f_plain us, with NCCL_PROTO=LL $f_ll us"
awk -v t="$tuned" -v l="$ll" 'BEGIN { exit !(l >= 1.6 * t) }' || { echo "LL is not about twice as slow"; exit 1; }
[[ "$simple" == "$tuned" ]] || { echo "NCCL_PROTO=Simple differs from the tuner's Simple"; exit 1; }
[[ "$f_ll" == "$f_plain" ]] || { echo "the scenario's proto did not override NCCL_PROTO"; exit 1; }
if out=$(NCCL_ALGO=Tree "$hysim" run "$auto" -- "$bench" -g 2 -b 64M -n 2 -w 1 2>&1); then
  echo "NCCL_ALGO=Tree ran"; exit 1
fi
echo "$out" | grep -q "NCCL_ALGO=Tree (double binary tree) is not modelled yet" || { echo "$out"; echo "no Tree message"; exit 1; }
echo ok
