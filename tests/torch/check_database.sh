#!/usr/bin/env bash
# A GPU-less run with no profile (scenarios/h200x8.yaml): hysim's measured
# database of torch's kernels (share/hysim/profiles, docs/compute.md) times a
# GPT of a shape it never measured (dim 1536, 12 heads, 1024 tokens) with
# under 5 % of the kernel time from the default; with compute.kernel_database
# off, the same kernels fall to the default.
# usage: check_database.sh HYSIM SCENARIO VENV GPT WORK_DIR
set -uo pipefail
hysim=$1 scenario=$2 venv=$3 gpt=$4 work=$5
fail() { echo "FAIL: $*"; exit 1; }
[[ -x $venv/bin/python3 ]] || fail "no PyTorch environment at $venv: run tools/install-deps.sh"
mkdir -p "$work"
args=(--layers 2 --dim 1536 --heads 12 --seq 1024 --batch 4 --steps 3 --warmup 1 --dtype bf16)
"$hysim" run "$scenario" -- "$venv/bin/python3" "$gpt" "${args[@]}" >"$work/on.out" 2>&1 ||
  { tail -20 "$work/on.out"; fail "the run failed"; }
src=$(grep -m1 "kernel time by source" "$work/on.out")
echo "$src"
awk -v s="$src" 'BEGIN {
  n = split(s, f, " "); total = 0; dflt = 0
  for (i = 1; i <= n; i++) if (f[i] == "ms," || f[i] == "ms") { total += f[i - 1]; if (f[i - 4] == "default") dflt = f[i - 1] }
  printf "default %.3f of %.3f ms of kernel time\n", dflt, total
  exit !(total > 0 && dflt < 0.05 * total)
}' || fail "5 % or more of the kernel time from the default"
[[ $src =~ database\ ([1-9][0-9]*)\ kernels ]] || fail "no kernel timed by the database: $src"
sed 's/^  default_kernel_us: 10$/  default_kernel_us: 10\n  kernel_database: false/' "$scenario" >"$work/off.yaml"
grep -q "kernel_database: false" "$work/off.yaml" || fail "cannot turn the database off in $scenario"
"$hysim" run "$work/off.yaml" -- "$venv/bin/python3" "$gpt" "${args[@]}" >"$work/off.out" 2>&1 ||
  { tail -20 "$work/off.out"; fail "the run without the database failed"; }
off=$(grep -m1 "kernel time by source" "$work/off.out")
echo "$off"
[[ $off == *"database 0 kernels"* && ! $off =~ default\ 0\ kernels ]] || fail "kernel_database: false still used it"
echo "database: ok"
