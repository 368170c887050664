#!/usr/bin/env bash
# Runs collectives_bench on N simulated GPUs of one NVSwitch server and checks
# each operation's time against the arithmetic of how hysim expands it:
#   flow(b)  one flow of b bytes alone on a GPU's NVLink: (b + min(b, seg))·8/R
#            + latency (the packet model stores and forwards one segment)
#   allreduce      2(n−1) ring steps of flow(S/n)
#   allgather,
#   reducescatter  n−1 ring steps of flow(S/n)
#   broadcast,
#   reduce         chain of n−1 hops, C = S/512 KiB chunks, one per hop at a
#                  time: (C + n − 2) · flow(512 KiB)
#   alltoall       n−1 flows of S/n at once share each GPU's link, as one
#                  flow((n−1)·S/n)
#   sendrecv       one flow(S) per GPU, both directions at once
# Every figure within 5 %.
# usage: check_collectives.sh HYSIM SCENARIO BENCH NGPUS GBPS LATENCY_NS SEGMENT_BYTES
set -euo pipefail
hysim=$1 scenario=$2 bench=$3 n=$4 gbps=$5 lat_ns=$6 seg=$7
out=$("$hysim" run "$scenario" -- "$bench" -g "$n" -b 64M -n 2 -w 1)
echo "$out"
echo "$out" | awk -v n="$n" -v gbps="$gbps" -v lat="$lat_ns" -v seg="$seg" '
  function flow_us(b) { return (b + (b < seg ? b : seg)) * 8 / (gbps * 1e3) + lat / 1e3 }
  /^#/ || NF != 5 { next }
  {
    op = $1; S = $2; got = $3; rows++
    chunk = 512 * 1024
    if (op == "allreduce") want = 2 * (n - 1) * flow_us(S / n)
    else if (op == "allgather" || op == "reducescatter") want = (n - 1) * flow_us(S / n)
    else if (op == "broadcast" || op == "reduce") want = (S / chunk + n - 2) * flow_us(chunk)
    else if (op == "alltoall") want = flow_us((n - 1) * S / n)
    else if (op == "sendrecv") want = flow_us(S)
    else { print "unknown op " op; bad++; next }
    err = (got - want) / want
    printf "%-14s %10.2f us, arithmetic %10.2f us (%+.2f %%)\n", op, got, want, 100 * err
    if (err < -0.05 || err > 0.05) bad++
  }
  END {
    if (rows != 7) { print "expected 7 rows, got " rows + 0; exit 1 }
    if (bad) { print bad " figure(s) off by more than 5 %"; exit 1 }
    print "ok"
  }'
