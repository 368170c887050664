#!/usr/bin/env bash
# NCCL_MAX_NCHANNELS / NCCL_MIN_NCHANNELS given to `hysim run` bound the
# channels hysim's NCCL tuner uses, as they bound NCCL's (bridge/collectives/collective_tuner.c);
# the scenario's nccl.channels wins over them. Observed through the number of
# flows one 64 MiB collectives_bench round moves (one ring per channel): fewer
# channels, fewer flows.
# usage: check_nccl_env_channels.sh HYSIM SCENARIO BENCH
set -euo pipefail
hysim=$1 scenario=$2 bench=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{ cat "$scenario"; echo "nccl: {channels: 24}"; } >"$tmp/channels24.yaml"
flows() { # SCENARIO ENV...: the run's flow count
  local sc=$1
  shift
  env "$@" "$hysim" run "$sc" -- "$bench" -g 2 -b 64M -n 1 -w 0 2>&1 >/dev/null |
    sed -n 's/.* \([0-9][0-9]*\) flows.*/\1/p'
}
default=$(flows "$scenario" HYSIM_UNSET=1)
max4=$(flows "$scenario" NCCL_MAX_NCHANNELS=4)
both8=$(flows "$scenario" NCCL_MIN_NCHANNELS=8 NCCL_MAX_NCHANNELS=8)
min32=$(flows "$scenario" NCCL_MIN_NCHANNELS=32)
keyed=$(flows "$tmp/channels24.yaml" NCCL_MAX_NCHANNELS=4)
junk=$(flows "$scenario" NCCL_MAX_NCHANNELS=four)
echo "flows: default $default, MAX=4 $max4, MIN=MAX=8 $both8, MIN=32 $min32, nccl.channels 24 with MAX=4 $keyed, MAX=four $junk"
fail() { echo "FAIL: $*"; exit 1; }
[[ -n $default && -n $max4 && -n $both8 && -n $min32 && -n $keyed && -n $junk ]] || fail "a run printed no flow count"
((max4 < both8 && both8 < default)) || fail "NCCL_MAX_NCHANNELS does not lower the channels (4 < 8 < 24 expected)"
((min32 > default)) || fail "NCCL_MIN_NCHANNELS=32 does not raise the channels above 24"
((keyed == default)) || fail "the scenario's nccl.channels does not win over NCCL_MAX_NCHANNELS"
((junk == default)) || fail "NCCL_MAX_NCHANNELS=four (not a count) changed the channels"
echo ok
