#!/usr/bin/env bash
# Runs multiprocess_allreduce as one process per server (`hysim run` starts
# it once per server; each takes its index from HYSIM_SERVER) on a scenario
# whose servers are joined by NICs. The scenario runs one ring channel per
# NIC rail (8), each crossing servers on its own rail, so the channels' rings
# together run at the rate of all of a server's NICs, NIC_GBPS (8 × 400 Gb/s
# here; NVLink's 3600 Gb/s carries every channel and is not the limit):
#   time = 2(n−1) · (S/n) · 8 / NIC_GBPS,  busbw = algbw · 2(n−1)/n = NIC_GBPS / 8.
# Checks busbw within 5 % of NIC_GBPS / 8 at every size, and that the unique
# id went through the file (process 0 removes it once all ranks have joined).
# usage: check_multiprocess.sh HYSIM SCENARIO PROGRAM NPROCS NIC_GBPS WORK_DIR
set -euo pipefail
hysim=$1 scenario=$2 prog=$3 nprocs=$4 nic_gbps=$5 work=$6
rm -rf "$work" && mkdir -p "$work"
out=$("$hysim" run "$scenario" -- "$prog" -N "$nprocs" -i "$work/id" -b 64M -e 256M -f 4 -n 2 -w 1)
echo "$out"
[[ ! -e "$work/id" ]] || { echo "the unique id file is still there"; exit 1; }
echo "$out" | grep -q "^# multiprocess_allreduce: $nprocs processes x " || { echo "no header"; exit 1; }
echo "$out" | awk -v gbps="$nic_gbps" '
  /^#/ || NF != 6 { next }
  {
    bytes = $1; busbw = $6; rows++
    want = gbps / 8                               # GB/s
    err = (busbw - want) / want
    printf "size %d: busbw %.2f GB/s, NIC rate %.2f GB/s (%+.2f %%)\n", bytes, busbw, want, 100 * err
    if (err < -0.05 || err > 0.05) bad++
  }
  END {
    if (rows != 2) { print "expected 2 rows (64M, 256M), got " rows + 0; exit 1 }
    if (bad) { print bad " figure(s) off by more than 5 %"; exit 1 }
    print "ok"
  }'
