#!/usr/bin/env bash
# NCCL's p2p channels in hysim's NCCL model (bridge/collectives/collective_tuner.c): a
# forced channel count slows send/recv and all-to-all as the per-channel caps
# fitted on bench/real/data/channels_h200x2.txt say. At 1 GiB on 2 GPUs:
# 4 channels against 16 take 3.5-4.1 times as long for send/recv (the caps
# give 4x, less the start-up; real 2 x H200: 3.75x); 3 channels run as 4
# (NCCL rounds its p2p channels up to a power of two); all-to-all on 4
# channels takes 1.8-2.1 times as long as on 8. At 64 MiB, send/recv on 8
# channels takes as long as on 4 (NCCL splits a peer's bytes over half its
# p2p channels while the parts stay under 16 MiB; real: 810 and 815 us).
# The default 24 channels (32 p2p) at 1 GiB are link-bound, within 0.5 % of
# no cap at all; the scenario's nccl.channels: 4 does what
# NCCL_MIN/MAX_NCHANNELS=4 do; an out-of-range nccl.channels is refused with
# an error that names it.
# usage: check_nccl_p2p_channels.sh HYSIM SCENARIO BENCH
set -euo pipefail
hysim=$1 scenario=$2 bench=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
with() { { cat "$scenario"; echo "nccl: {$1}"; } >"$tmp/$2.yaml"; }
with "channel_gbps: 0" nocap
with "channels: 4" keyed4
with "channels: 65" bad
us() { # OP SCENARIO ENV...: OP's time in µs at ${size:-1G}
  local op=$1 sc=$2
  shift 2
  env "$@" "$hysim" run "$sc" -- "$bench" -g 2 -b "${size:-1G}" -n 1 -w 0 2>/dev/null | awk -v op="$op" '$1 == op { print $3 }'
}
forced() { us "$1" "$scenario" NCCL_MIN_NCHANNELS="$2" NCCL_MAX_NCHANNELS="$2"; } # OP C
sr4=$(forced sendrecv 4) sr16=$(forced sendrecv 16) sr3=$(forced sendrecv 3)
a4=$(forced alltoall 4) a8=$(forced alltoall 8) a3=$(forced alltoall 3)
key4=$(us sendrecv "$tmp/keyed4.yaml" HYSIM_UNSET=1)
size=64M
mid4=$(forced sendrecv 4) mid8=$(forced sendrecv 8)
unset size
srdef=$(us sendrecv "$scenario" HYSIM_UNSET=1) srfree=$(us sendrecv "$tmp/nocap.yaml" HYSIM_UNSET=1)
adef=$(us alltoall "$scenario" HYSIM_UNSET=1) afree=$(us alltoall "$tmp/nocap.yaml" HYSIM_UNSET=1)
echo "send/recv 1 GiB: 3 channels $sr3 us, 4 $sr4 us, 16 $sr16 us, nccl.channels 4 $key4 us, default $srdef us (no cap $srfree us);" \
  "all-to-all: 3 $a3 us, 4 $a4 us, 8 $a8 us, default $adef us (no cap $afree us); send/recv 64 MiB: 4 $mid4 us, 8 $mid8 us"
fail() { echo "FAIL: $*"; exit 1; }
for v in "$sr4" "$sr16" "$sr3" "$a4" "$a8" "$a3" "$key4" "$srdef" "$srfree" "$adef" "$afree" "$mid4" "$mid8"; do
  [[ -n $v ]] || fail "a run printed no time"
done
ratio() { awk -v a="$1" -v b="$2" -v lo="$3" -v hi="$4" 'BEGIN { r = a / b; exit !(r >= lo && r <= hi) }'; }
ratio "$sr4" "$sr16" 3.5 4.1 || fail "send/recv on 4 channels is not 3.5-4.1x the time on 16"
ratio "$a4" "$a8" 1.8 2.1 || fail "all-to-all on 4 channels is not 1.8-2.1x the time on 8"
[[ $sr3 == "$sr4" && $a3 == "$a4" ]] || fail "3 channels do not run as 4 (p2p channels a power of two)"
[[ $key4 == "$sr4" ]] || fail "nccl.channels: 4 differs from NCCL_MIN/MAX_NCHANNELS=4"
[[ $mid4 == "$mid8" ]] || fail "64 MiB send/recv: 8 channels differ from 4 (NCCL uses 4 of 8 there)"
ratio "$srdef" "$srfree" 1 1.005 || fail "the cap changes the default send/recv"
ratio "$adef" "$afree" 1 1.005 || fail "the cap changes the default all-to-all"
if msg=$("$hysim" run "$tmp/bad.yaml" -- "$bench" -g 2 -b 1M -n 1 -w 0 2>&1); then
  fail "nccl.channels: 65 was accepted"
fi
grep -q "nccl.channels" <<<"$msg" || fail "the error does not name nccl.channels: $msg"
echo ok
