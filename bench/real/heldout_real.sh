#!/usr/bin/env bash
# Held-out real figures for hysim's NCCL model: measurements on a real
# 2-GPU server that the model's constants were NOT fitted on
# (bench/RESULTS.md, "Held-out validation on real 2 x H200").
#  (a) torch.distributed (NCCL backend, one process per GPU) all_reduce,
#      all_gather_into_tensor, reduce_scatter_tensor, broadcast and
#      all_to_all_single on float32 buffers, timed with CUDA events around
#      ITERS back-to-back warm calls, as a user would time them. Rows use
#      collectives_bench's op names and size convention (S = the buffer,
#      the gathered output, the scattered input, the all-to-all input).
#  (b) examples/collectives_bench under NCCL settings hysim models:
#      NCCL_PROTO=Simple, NCCL_PROTO=LL128, and NCCL_MIN_NCHANNELS =
#      NCCL_MAX_NCHANNELS = 4 and 8. Each block starts "## env VAR=VALUE ...".
# Versions (GPU, driver, CUDA, system NCCL, torch and its NCCL) head each file.
# usage: bench/real/heldout_real.sh [OUT_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-.}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 # NVLink SHARP (multicast) stays off on shared hosts
gpus=$(nvidia-smi -L | wc -l)
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
. "$root/bench/real/system_nccl.sh" # inc, lib: the host's NCCL
versions() {
  echo "# $(date -u +%F) $gpus x $name; driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
  echo "# $(nvcc --version | tail -1)"
  echo "# system NCCL: $(ls "$lib"/libnccl.so.2.* 2>/dev/null | head -1)"
  python3 -c 'import torch; print("# torch", torch.__version__, "CUDA", torch.version.cuda, "NCCL", ".".join(map(str, torch.cuda.nccl.version())))'
  echo "# NCCL_NVLS_ENABLE=0"
}

# (a) torch.distributed
torch_py=$(mktemp --suffix=.py)
cat >"$torch_py" <<'EOF'
import os, sys
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

SIZES = [1 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30]
ITERS, WARMUP = 20, 5


def ops(rank, n, S):
    """(name, busbw factor, call) per op; S counted as collectives_bench does."""
    f = torch.float32
    buf = torch.ones(S // 4, device="cuda", dtype=f)
    part = torch.ones(S // 4 // n, device="cuda", dtype=f)
    full = torch.empty(S // 4, device="cuda", dtype=f)
    out = torch.empty(S // 4, device="cuda", dtype=f)
    return [
        ("allreduce", 2 * (n - 1) / n, lambda: dist.all_reduce(buf)),
        ("allgather", (n - 1) / n, lambda: dist.all_gather_into_tensor(full, part)),
        ("reducescatter", (n - 1) / n, lambda: dist.reduce_scatter_tensor(part, buf)),
        ("broadcast", 1.0, lambda: dist.broadcast(buf, 0)),
        ("alltoall", (n - 1) / n, lambda: dist.all_to_all_single(out, buf)),
    ]


def worker(rank, n, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=n, device_id=torch.device("cuda", rank))
    for S in SIZES:
        if rank == 0:
            print(f"# torch.distributed: {n} x {torch.cuda.get_device_name()}, {S} bytes, float32, "
                  f"{ITERS} iterations ({WARMUP} warm-up), CUDA events", flush=True)
            print("#%13s %14s %12s %12s %12s" % ("op", "size(B)", "time(us)", "algbw(GB/s)", "busbw(GB/s)"))
        for op, factor, call in ops(rank, n, S):
            for _ in range(WARMUP):
                call()
            torch.cuda.synchronize()
            dist.barrier()
            torch.cuda.synchronize()
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(ITERS):
                call()
            stop.record()
            stop.synchronize()
            us = start.elapsed_time(stop) * 1e3 / ITERS
            t = torch.tensor([us], device="cuda")
            dist.all_reduce(t, op=dist.ReduceOp.MAX)  # the slower rank's time, as a user sees it
            if rank == 0:
                algbw = S / (t.item() * 1e3)
                print("%14s %14d %12.2f %12.2f %12.2f" % (op, S, t.item(), algbw, algbw * factor), flush=True)
        torch.cuda.empty_cache()
    dist.destroy_process_group()


if __name__ == "__main__":
    n = torch.cuda.device_count()
    mp.spawn(worker, args=(n, 29517), nprocs=n)
EOF
{
  versions
  echo "# command: bench/real/heldout_real.sh (torch part: python3 heldout torch.distributed, mp.spawn of $gpus ranks)"
  python3 "$torch_py"
} 2>&1 | tee "$out/heldout_torch_${gpus}x${name}.txt"

# (b) collectives_bench under NCCL settings
nvcc -O2 -std=c++17 -cudart shared -arch=sm_90 -I"$inc" -L"$lib" \
  -o /tmp/collectives_bench "$root/examples/collectives_bench.cu" -lnccl
{
  versions
  echo "# command: bench/real/heldout_real.sh (collectives_bench part, system NCCL)"
  for env in "NCCL_PROTO=Simple" "NCCL_PROTO=LL128" \
    "NCCL_MIN_NCHANNELS=4 NCCL_MAX_NCHANNELS=4" "NCCL_MIN_NCHANNELS=8 NCCL_MAX_NCHANNELS=8"; do
    echo "## env $env"
    for size in 1M 16M 64M 256M 1G; do
      env $env /tmp/collectives_bench -g "$gpus" -b "$size" -n 20 -w 5
    done
  done
  # the channels NCCL really ran, for the 4-channel setting
  echo "## NCCL's log for NCCL_MIN_NCHANNELS=4 NCCL_MAX_NCHANNELS=4 (channels)"
  NCCL_DEBUG=INFO NCCL_MIN_NCHANNELS=4 NCCL_MAX_NCHANNELS=4 /tmp/collectives_bench -g "$gpus" -b 64M -n 1 -w 0 2>&1 |
    grep -i "coll channels\|NCCL version" | sed 's/^/#   /' || true
} 2>&1 | tee "$out/heldout_nccl_env_${gpus}x${name}.txt"
