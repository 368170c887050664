#!/usr/bin/env bash
# An MPI + NCCL benchmark launched as multi-node NCCL benchmarks are, one
# mpirun for the whole job (docs/launchers.md): `hysim run SCENARIO -- mpirun
# -np 4 mpi_allreduce_bench -g 1` on 2 servers of 2 GPUs. Each rank must land
# where it would on the real cluster (rank r on server r / 2, local rank and GPU
# r % 2, host name serverN, which the benchmark reads as nccl-tests does), the
# all-reduce must cross the servers' NICs, and the run must end cleanly with
# every rank registered.
# usage: check_mpirun.sh HYSIM SCENARIO BENCH
set -uo pipefail
hysim=$1 scenario=$2 bench=$3
fail() { echo "FAIL: $*"; exit 1; }
command -v mpirun >/dev/null || fail "mpirun is not installed (tools/install-deps.sh installs Debian's Open MPI)"
# Open MPI refuses root without these; --oversubscribe: 4 ranks on fewer cores
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(timeout 240 "$hysim" run "$scenario" -- mpirun -np 4 --oversubscribe "$bench" -g 1 -b 1M -e 4M -n 5 -w 2 2>&1) ||
  { echo "$out"; fail "the run failed"; }
echo "$out" | grep -v "^hysim:  "
for r in 0 1 2 3; do
  want="# rank $r: host server$((r / 2)), local rank $((r % 2)), GPU $((r % 2))"
  grep -qxF "$want" <<<"$out" || fail "expected \"$want\""
done
rows=$(grep -cE "^ +[0-9]+ +[0-9]+ +float +[0-9.]+ " <<<"$out")
[[ $rows -eq 3 ]] || fail "expected 3 timed sizes, got $rows"
grep -q "^hysim: 4 processes," <<<"$out" || fail "not every rank registered"
grep -q "busiest links (mean utilisation): nic" <<<"$out" || fail "the all-reduce did not cross the servers' NICs"
echo "mpirun: ok"
