#!/usr/bin/env bash
# bench/interpose/memcpy_kinds (nvcc, the real headers) under hysim run on a
# scenario with pcie at its defaults and host_time zero: every copy of pinned
# memory takes pcie.copy_latency_ns (4 us) + bytes at pcie.copy_gbps (0.876 x
# the gen 5 x 16 encoded 504.123 Gb/s), one of pageable memory 4 us + bytes at
# pcie.pageable_gbps (96 Gb/s), each way and by cudaMemcpy and
# cudaMemcpyAsync alike; cudaMemcpyAsync of pinned memory returns at once, of
# pageable memory only once its copy is done (call_us = the copy); a copy
# within the GPU takes the longer of 5.5 us and its bytes read and written at
# 87 % of the H200's 4800 GB/s, and holds no caller (so the asynchronous one
# timed after it starts when it ends, as on a real GPU: async_us twice the
# copy).
# usage: check_host_copies.sh HYSIM SCENARIO MEMCPY_KINDS
set -euo pipefail
hysim=$1 scenario=$2 prog=$3
out=$("$hysim" run "$scenario" -- "$prog" 16 3 2>&1) || { echo "$out"; echo "FAIL: hysim run"; exit 1; }
echo "$out" | awk '
  function near(got, want) { return got - want <= 0.01 && want - got <= 0.01 }
  $1 ~ /^[0-9]+$/ && NF == 9 {
    bytes = $1; host = $3; sync = $5; call = $6; async = $7; event = $8
    gbps = host == "pinned" ? 0.876 * 32 * 16 * 128 / 130 : 96
    want = 4 + bytes * 8 / gbps / 1000
    if (host == "device") { want = 2 * bytes / (0.87 * 4800e3); if (want < 5.5) want = 5.5 }
    rows++
    # a device copy by cudaMemcpy returns at once: the next, on a blocking stream, waits for it, as on a GPU
    if (!near(event, want) || !near(sync, host == "device" ? 0 : want) || !near(async, (host == "device" ? 2 : 1) * want)) {
      printf "FAIL: %s %s %s: sync %s async %s event %s us, expected %.2f\n", bytes, $2, host, sync, async, event, want; bad++ }
    if (!near(call, host == "pageable" ? want : 0)) {
      printf "FAIL: %s %s %s: cudaMemcpyAsync held the caller %s us\n", bytes, $2, host, call; bad++ }
  }
  END { if (rows != 20) { print "FAIL: " rows " rows, expected 20"; bad++ }
        if (bad) exit 1; print "ok: " rows " rows" }' || { echo "$out"; exit 1; }
