#!/usr/bin/env bash
# The per-channel rate cap of hysim's NCCL model (nccl.channel_gbps,
# bridge/collectives/collective_tuner.c): with 4 channels forced a 64 MiB all-reduce is
# held to the cap (twice as slow at half the cap, much faster with none), at
# 24 channels the link binds instead (no cap: within 2 %), calibrated: false
# has no cap (4 channels take what 24 do), and a negative cap is refused.
# usage: check_nccl_channel_cap.sh HYSIM SCENARIO BENCH
set -euo pipefail
hysim=$1 scenario=$2 bench=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
with() { { cat "$scenario"; echo "nccl: {$1}"; } >"$tmp/$2.yaml"; }
with "channel_gbps: 0" off
with "channel_gbps: 14.15" half
with "calibrated: false" bare
with "channel_gbps: -1" negative
us() { # SCENARIO ENV...: the all-reduce's time in µs
  local sc=$1
  shift
  env "$@" "$hysim" run "$sc" -- "$bench" -g 2 -b 64M -n 1 -w 0 2>/dev/null | awk '$1 == "allreduce" { print $3 }'
}
four=(NCCL_MIN_NCHANNELS=4 NCCL_MAX_NCHANNELS=4)
fitted=$(us "$scenario" "${four[@]}") off=$(us "$tmp/off.yaml" "${four[@]}") half=$(us "$tmp/half.yaml" "${four[@]}")
wide=$(us "$scenario" HYSIM_UNSET=1) wide_off=$(us "$tmp/off.yaml" HYSIM_UNSET=1)
bare4=$(us "$tmp/bare.yaml" "${four[@]}") bare24=$(us "$tmp/bare.yaml" HYSIM_UNSET=1)
echo "4 channels: fitted cap $fitted us, no cap $off us, cap 14.15 GB/s $half us;" \
  "24 channels: fitted $wide us, no cap $wide_off us; calibrated false: 4 channels $bare4 us, 24 $bare24 us"
fail() { echo "FAIL: $*"; exit 1; }
[[ -n $fitted && -n $off && -n $half && -n $wide && -n $wide_off && -n $bare4 && -n $bare24 ]] || fail "a run printed no all-reduce time"
awk -v a="$fitted" -v b="$off" 'BEGIN { exit !(b < 0.5 * a) }' || fail "the fitted cap does not slow 4 channels down"
awk -v a="$fitted" -v h="$half" 'BEGIN { exit !(h > 1.8 * a) }' || fail "half the cap does not about double the time"
awk -v a="$wide" -v b="$wide_off" 'BEGIN { exit !(a <= 1.02 * b && a >= b) }' || fail "the cap changes 24 channels by more than 2 %"
awk -v a="$bare4" -v b="$bare24" 'BEGIN { exit !(a <= 1.02 * b) }' || fail "calibrated: false is capped"
if msg=$("$hysim" run "$tmp/negative.yaml" -- "$bench" -g 2 -b 1M -n 1 -w 0 2>&1); then
  fail "a negative nccl.channel_gbps was accepted"
fi
grep -q "nccl.channel_gbps" <<<"$msg" || fail "the error does not name nccl.channel_gbps: $msg"
echo ok
