#!/usr/bin/env bash
# A job started once for all servers (`hysim run --job`, implied for mpirun):
# each process finds its server from its launcher's rank variables (torchrun's,
# Open MPI's, PMI's, Slurm's), one GPU per rank: rank r runs on server
# r / gpus_per_server with local rank r % gpus_per_server, and its host name is
# "serverN" (interpose/core/job_placement.c, docs/launchers.md).
# usage: check_job_placement.sh HYSIM SCENARIO(2 servers x 2 GPUs)
set -uo pipefail
hysim=$1 scenario=$2
fail() { echo "FAIL: $*"; exit 1; }
# in a sanitizer build the runtime is preloaded into every process: hostname(1)'s own leak must not end it
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
out=$("$hysim" run --job "$scenario" -- sh -c '
  for v in "RANK=3 WORLD_SIZE=4" "OMPI_COMM_WORLD_RANK=2 OMPI_COMM_WORLD_SIZE=4" "PMI_RANK=1 PMI_SIZE=4" \
           "SLURM_PROCID=3 SLURM_NTASKS=4"; do
    env $v NAME="${v%%=*}" sh -c "echo placed \$NAME: server=\$HYSIM_SERVER host=\$(hostname) local=\${LOCAL_RANK:-}\${OMPI_COMM_WORLD_LOCAL_RANK:-}\${MPI_LOCALRANKID:-}\${SLURM_LOCALID:-}"
  done
  echo "launcher: server=${HYSIM_SERVER:-none} job=${HYSIM_JOB:-}"' 2>&1) || { echo "$out"; fail "the run failed"; }
echo "$out" | grep "^placed\|^launcher"
want=("placed RANK: server=1 host=server1 local=1"
      "placed OMPI_COMM_WORLD_RANK: server=1 host=server1 local=0"
      "placed PMI_RANK: server=0 host=server0 local=1"
      "placed SLURM_PROCID: server=1 host=server1 local=1"
      "launcher: server=none job=1")
for w in "${want[@]}"; do
  grep -qxF "$w" <<<"$out" || fail "expected the line \"$w\""
done
# a launcher of a whole job cannot be started once per container
err=$("$hysim" run --containers "$scenario" -- mpirun true 2>&1) && fail "--containers with mpirun was accepted"
grep -q "launches a whole job across servers" <<<"$err" || fail "--containers with mpirun: unclear message: $err"
echo "job placement: ok"
