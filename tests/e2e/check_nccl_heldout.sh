#!/usr/bin/env bash
# Held-out check of hysim's NCCL model against real 2 x H200 figures that its
# constants were not fitted on (bench/real/heldout_real.sh; bench/RESULTS.md,
# "Held-out validation on real 2 x H200"). REAL_FILE holds collectives_bench-style
# rows (op, size, time, algbw, busbw), optionally in blocks headed
# "## env VAR=VALUE ...": each block's sizes are simulated with that
# environment given to `hysim run` (NCCL_PROTO, NCCL_MIN/MAX_NCHANNELS), the
# rest with none. Prints the table (predicted, measured, error) and fails when
# a checked figure (64 MiB or above, and, in an env block, "ENV|OP" not
# matching UNCHECKED) is more than 10 % off, when a real row has no simulated
# counterpart, or when the number of checked figures is not CHECKED.
# The program runs on as many GPUs as REAL_FILE's first line names ("# DATE N x GPU",
# as the bench/real scripts write it); SCENARIO must have them.
# usage: check_nccl_heldout.sh HYSIM SCENARIO BENCH REAL_FILE CHECKED [UNCHECKED_REGEX]
set -euo pipefail
hysim=$1 scenario=$2 bench=$3 real=$4 checked=$5 unchecked=${6:-a^}
# the GPUs the real figures were taken on: the first line "# YYYY-MM-DD N x GPU"
gpus=$(awk 'NR == 1 && $3 ~ /^[0-9]+$/ && $4 == "x" { print $3 }' "$real")
gpus=${gpus:-2}
# "env|op size time" for every measured row
rows=$(awk '/^## env / { sub(/^## env /, ""); env = $0; next }
            !/^#/ && NF == 5 && $2 ~ /^[0-9]+$/ { print env "|" $1 " " $2 " " $3 }' "$real")
sim=""
while IFS= read -r key; do
  env=${key%|*} size=${key#*|}
  out=$(env $env "$hysim" run "$scenario" -- "$bench" -g "$gpus" -b "$size" -n 2 -w 1 2>/dev/null)
  sim+=$(awk -v env="$env" '!/^#/ && NF == 5 { print env "|" $1 " " $2 " " $3 }' <<<"$out")
  sim+=$'\n'
done < <(awk -F'|' '{ split($2, f, " "); print $1 "|" f[2] }' <<<"$rows" | sort -u)
awk -F'|' -v rows="$rows" -v want_checked="$checked" -v unchecked="$unchecked" '
  BEGIN {
    n = split(rows, r, "\n")
    for (i = 1; i <= n; i++) {
      split(r[i], kv, "|"); split(kv[2], f, " ")
      k = kv[1] "|" f[1] " " f[2]; want[k] = f[3]; order[i] = k
    }
  }
  { split($2, f, " "); got[$1 "|" f[1] " " f[2]] = f[3] }
  END {
    printf "%-42s %-14s %11s %10s %10s %8s\n", "env", "op", "size(B)", "hysim(us)", "real(us)", "error"
    for (i = 1; i <= n; i++) {
      k = order[i]; split(k, kv, "|"); split(kv[2], kk, " ")
      if (!(k in got)) { print "no simulated figure for " k; bad++; continue }
      err = (got[k] - want[k]) / want[k]
      check = kk[2] >= 67108864 && !(kv[1] != "" && (kv[1] "|" kk[1]) ~ unchecked)
      mark = check ? "" : "  (not checked)"
      printf "%-42s %-14s %11d %10.2f %10.2f %+7.1f%%%s\n", kv[1] == "" ? "-" : kv[1], kk[1], kk[2], got[k], want[k], 100 * err, mark
      if (check) { nchecked++; if (err < -0.10 || err > 0.10) bad++ }
    }
    if (nchecked != want_checked) { print "expected " want_checked " checked figures, got " nchecked + 0; exit 1 }
    if (bad) { print bad " figure(s) off by more than 10 % (or missing)"; exit 1 }
    print "ok"
  }' <<<"$sim"
