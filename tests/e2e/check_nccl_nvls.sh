#!/usr/bin/env bash
# NVLink SHARP (docs/nccl.md, "NVLS") on an 8 x H200 NVSwitch server:
#   - the tuner takes NVLS for an all-reduce of 64 MiB and 1 GiB (the trace
#     names it), Ring/LL for 256 KiB, and Ring for all-gather, as NCCL does;
#   - its 1 GiB bus bandwidth is within 5 % of the 480 GB/s the model is
#     fitted to, and above the same all-reduce with NVLS off;
#   - NCCL_NVLS_ENABLE=0 and the scenario's nccl.nvls: false each turn it off;
#   - NCCL_ALGO=NVLS where NCCL has none (2 GPUs) leaves the tuner's Ring, and says so.
# usage: check_nccl_nvls.sh HYSIM SCENARIO_8GPU SCENARIO_2GPU BENCH WORKDIR
set -euo pipefail
hysim=$1 sc8=$2 sc2=$3 bench=$4 work=$5
rm -rf "$work" && mkdir -p "$work"
sed 's/^run:/nccl: {nvls: false}\nrun:/' "$sc8" >"$work/off.yaml"
grep -q 'nvls: false' "$work/off.yaml" || { echo "could not write the NVLS-off scenario"; exit 1; }
# label SCENARIO GPUS BYTES [ENV...]: the trace's label of the run's all-reduces and its busbw
run() {
  local sc=$1 g=$2 b=$3
  shift 3
  env "$@" "$hysim" run --trace "$work/t.json" "$sc" -- "$bench" -g "$g" -b "$b" -n 1 -w 0 >"$work/out" 2>&1
  algo=$(grep -o '"AllReduce [A-Za-z]*/[A-Za-z0-9]*' "$work/t.json" | sort -u | tr -d '"' | tr '\n' ' ')
  ag=$(grep -o '"AllGather [A-Za-z]*/[A-Za-z0-9]*' "$work/t.json" | sort -u | tr -d '"' | tr '\n' ' ')
  busbw=$(awk '$1 == "allreduce" { print $5 }' "$work/out")
}
fail() { echo "FAIL: $*"; exit 1; }
run "$sc8" 8 1G
echo "8 GPUs, 1 GiB: $algo($busbw GB/s), $ag"
[[ $algo == "AllReduce NVLS/Simple " ]] || fail "1 GiB all-reduce on 8 GPUs is not NVLS"
[[ $ag == "AllGather Ring/Simple " ]] || fail "all-gather should stay Ring"
awk -v b="$busbw" 'BEGIN { exit !(b > 456 && b < 504) }' || fail "NVLS busbw $busbw not within 5 % of 480 GB/s"
on=$busbw
run "$sc8" 8 64M
[[ $algo == "AllReduce NVLS/Simple " ]] || fail "64 MiB all-reduce on 8 GPUs is not NVLS ($algo)"
run "$sc8" 8 256K
[[ $algo == "AllReduce Ring/LL " ]] || fail "256 KiB all-reduce should be Ring/LL ($algo)"
run "$sc8" 8 1G NCCL_NVLS_ENABLE=0
echo "NCCL_NVLS_ENABLE=0: $algo($busbw GB/s)"
[[ $algo == "AllReduce Ring/Simple " ]] || fail "NCCL_NVLS_ENABLE=0 did not turn NVLS off"
awk -v on="$on" -v off="$busbw" 'BEGIN { exit !(on > 1.1 * off) }' || fail "NVLS ($on) not faster than Ring ($busbw)"
run "$work/off.yaml" 8 1G
[[ $algo == "AllReduce Ring/Simple " ]] || fail "nccl.nvls: false did not turn NVLS off ($algo)"
run "$sc2" 2 1G NCCL_ALGO=NVLS
echo "2 GPUs, NCCL_ALGO=NVLS: $algo"
[[ $algo == "AllReduce Ring/Simple " ]] || fail "NVLS on 2 GPUs, where NCCL has none ($algo)"
[[ $(grep -c "hysim: NVLS forced (NCCL_ALGO or nccl.algo) for AllReduce on 2 GPUs" "$work/out") == 1 ]] ||
  fail "a forced NVLS where NCCL has none is not said once"
echo ok
