#!/usr/bin/env bash
# NCCL_ALGO / NCCL_PROTO in the program's environment and the scenario's
# nccl: keys steer hysim's NCCL model:
#   - on AUTO_SCENARIO (tuner free), NCCL_PROTO=LL makes a 64 MiB all-reduce
#     at least 1.6x slower than the tuner's choice (Simple): LL carries an
#     8-byte flag with every 8 bytes, twice the bytes on the wire (the
#     start-up latency, about a fifth of the time, stays);
#   - NCCL_PROTO=Simple gives the tuner's own figure at 64 MiB;
#   - on FORCED_SCENARIO (nccl: {proto: simple}), NCCL_PROTO=LL changes nothing;
#   - NCCL_ALGO=Tree runs the all-reduce as a tree (on one server a chain,
#     a figure of its own), and the other collectives, which have no tree,
#     fall back to Ring as NCCL does: their figures do not change.
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
op() { "$hysim" run "$1" -- "$bench" -g 2 -b 64M -n 2 -w 1 2>/dev/null | awk -v k="$2" '$1 == k { print $3 }'; }
t_ar=$(NCCL_ALGO=Tree op "$auto" allreduce)
t_ag=$(NCCL_ALGO=Tree op "$auto" allgather)
ag=$(op "$auto" allgather)
echo "NCCL_ALGO=Tree: all-reduce $t_ar us (tuner's Ring: $tuned us), all-gather $t_ag us (tuner: $ag us)"
[[ -n "$t_ar" && "$t_ar" != "$tuned" ]] || { echo "NCCL_ALGO=Tree did not change the all-reduce"; exit 1; }
[[ -n "$ag" && "$t_ag" == "$ag" ]] || { echo "NCCL_ALGO=Tree changed the all-gather (no tree: Ring)"; exit 1; }
echo ok
