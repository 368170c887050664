#!/usr/bin/env bash
# NCCL's Tree all-reduce end to end (multiprocess_allreduce, one process per
# server, the packet-level fabric):
#   1. 2 servers × 1 GPU, one 400G NIC each, 1 GiB, NCCL_ALGO=Tree: the two
#      trees each carry half the data up and down, so the NIC carries the data
#      once each way: busbw (= algbw with 2 ranks) within 3 % of the NIC's
#      50 GB/s; NCCL_ALGO=Ring is no slower; the trace names the algorithm.
#   2. 4 servers × 4 GPUs, 64 KiB, NCCL's tuner: it picks Tree (the trace says
#      "AllReduce Tree/..."), and NCCL_ALGO=Ring is slower (30 ring steps
#      against 2 · (3 NVLink + 2 NIC) tree hops).
# usage: check_nccl_tree.sh HYSIM TREE_2SRV.yaml TREE_4SRV.yaml PROGRAM WORK_DIR
set -euo pipefail
hysim=$1 two=$2 four=$3 prog=$4 work=$5
rm -rf "$work" && mkdir -p "$work"

# run NAME SCENARIO NPROCS SIZE [NCCL_ALGO]: prints the time (us) of the size's row
run() {
  local name=$1 scen=$2 np=$3 size=$4 algo=${5:-}
  env ${algo:+NCCL_ALGO=$algo} "$hysim" run --trace "$work/$name.json" "$scen" -- \
    "$prog" -N "$np" -i "$work/$name.id" -b "$size" -e "$size" -n 1 -w 1 >"$work/$name.out" 2>"$work/$name.err" ||
    { cat "$work/$name.err"; echo "$name: the run failed"; exit 1; }
  awk '!/^#/ && NF == 6 { print $4 }' "$work/$name.out"
}
names() { grep -o '"name":"AllReduce[^"]*"' "$work/$1.json" | sort -u | tr '\n' ' '; }

tree=$(run tree1g "$two" 2 1G Tree)
ring=$(run ring1g "$two" 2 1G Ring)
echo "1 GiB on 2 servers x 1 GPU: tree $tree us ($(names tree1g)), ring $ring us ($(names ring1g))"
[[ "$(names tree1g)" == '"name":"AllReduce Tree/Simple" ' ]] || { echo "NCCL_ALGO=Tree not named in the trace"; exit 1; }
[[ "$(names ring1g)" == '"name":"AllReduce Ring/Simple" ' ]] || { echo "NCCL_ALGO=Ring not named in the trace"; exit 1; }
awk -v t="$tree" -v r="$ring" 'BEGIN {
  busbw = 1073741824 / (t * 1e3); err = (busbw - 50) / 50      # GB/s; 2 ranks: busbw = algbw
  printf "tree busbw %.2f GB/s, NIC 50 GB/s (%+.2f %%)\n", busbw, 100 * err
  if (err < -0.03 || err > 0.03) { print "tree busbw off the NIC rate by more than 3 %"; exit 1 }
  if (r > t) { print "ring slower than tree at 1 GiB on 2 servers"; exit 1 }
}'

auto=$(run auto64k "$four" 4 64K)
ring=$(run ring64k "$four" 4 64K Ring)
echo "64 KiB on 4 servers x 4 GPUs: tuner $auto us ($(names auto64k)), NCCL_ALGO=Ring $ring us ($(names ring64k))"
names auto64k | grep -q '"name":"AllReduce Tree/' || { echo "the tuner did not pick Tree"; exit 1; }
names ring64k | grep -q '"name":"AllReduce Ring/' || { echo "NCCL_ALGO=Ring not honoured"; exit 1; }
awk -v a="$auto" -v r="$ring" 'BEGIN { if (!(a < r)) { print "tree not faster than ring at 64 KiB"; exit 1 } }'
echo ok
