#!/usr/bin/env bash
# Runs allreduce_bench on N simulated GPUs and checks its own table against
# ring arithmetic: busbw at 256 MiB and above within 5 % of the NVLink rate,
# and the 1 GiB time within 5 % of 2(n-1)/n x bytes / rate.
# usage: check_allreduce.sh HYSIM SCENARIO BENCH NGPUS GBPS_PER_GPU
set -euo pipefail
hysim=$1 scenario=$2 bench=$3 n=$4 gbps=$5
out=$("$hysim" run "$scenario" -- "$bench" -g "$n" -b 256M -e 1G -n 2 -w 1 2>"${TMPDIR:-/tmp}/check_allreduce.$$")
err=$(cat "${TMPDIR:-/tmp}/check_allreduce.$$"); rm -f "${TMPDIR:-/tmp}/check_allreduce.$$"
echo "$out"; echo "$err"
# its few default-timed kernels are a sliver of the GPUs' time: no hint about them
if grep -q "kernels hysim does not know" <<<"$err"; then echo "a default-kernel hint for a collectives benchmark"; exit 1; fi
echo "$out" | awk -v n="$n" -v gbps="$gbps" '
  /^#/ || NF < 6 { next }
  {
    bytes = $1; time_us = $4; busbw = $6; rows++
    rate = gbps * 1e9 / 8                      # bytes per second on one NVLink direction
    want_bus = rate / 1e9                      # GB/s
    err = (busbw - want_bus) / want_bus
    printf "size %d: busbw %.2f GB/s, ring arithmetic %.2f GB/s (%+.2f %%)\n", bytes, busbw, want_bus, 100 * err
    if (err < -0.05 || err > 0.05) bad++
    if (bytes == 1073741824) {
      want_us = 2 * (n - 1) / n * bytes / rate * 1e6
      terr = (time_us - want_us) / want_us
      printf "1 GiB time %.2f us, arithmetic %.2f us (%+.2f %%)\n", time_us, want_us, 100 * terr
      if (terr < -0.05 || terr > 0.05) bad++
      seen_1g = 1
    }
  }
  END {
    if (rows != 3) { print "expected 3 rows (256M, 512M, 1G), got " rows + 0; exit 1 }
    if (!seen_1g) { print "no 1 GiB row"; exit 1 }
    if (bad) { print bad " figure(s) off by more than 5 %"; exit 1 }
    print "ok"
  }'
