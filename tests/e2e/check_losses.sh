#!/usr/bin/env bash
# The run summary says when the fabric dropped or resent packets: on a lossy
# fabric under a heavy incast (lossy.yaml) the line names both counts, and
# they match the report's per-link sums; on a lossless one (stats.yaml, PFC)
# there is no such line.
# usage: check_losses.sh HYSIM LOSSY_SCENARIO LOSSLESS_SCENARIO PROGRAM WORK_DIR
set -euo pipefail
hysim=$1 lossy=$2 lossless=$3 prog=$4 work=$5
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
"$hysim" run --report lossy.json "$lossy" -- "$prog" -N 2 -i uid1 -b 1M -e 1M -n 1 -w 0 2>lossy.err >/dev/null ||
  { cat lossy.err; fail "the lossy run failed"; }
line=$(grep '^hysim: fabric: ' lossy.err) || { cat lossy.err; fail "no loss line after a lossy run"; }
echo "$line"
read -r drops resent < <(sed -n 's/^hysim: fabric: \([0-9]*\) packets dropped, \([0-9]*\) retransmitted.*/\1 \2/p' <<<"$line")
[[ -n $drops && $drops -gt 0 && $resent -gt 0 ]] || fail "want drops and retransmissions above 0: $line"
sum() { grep -o "\"$1\": [0-9]*" lossy.json | awk '{ s += $2 } END { print s + 0 }'; }
[[ $(sum drops) == "$drops" && $(sum retransmissions) == "$resent" ]] ||
  fail "the report's links sum to $(sum drops) drops and $(sum retransmissions) retransmissions"
"$hysim" run "$lossless" -- "$prog" -N 2 -i uid2 -b 1M -e 1M -n 1 -w 0 2>lossless.err >/dev/null ||
  { cat lossless.err; fail "the lossless run failed"; }
! grep '^hysim: fabric: ' lossless.err || fail "a loss line after a lossless run"
echo ok
