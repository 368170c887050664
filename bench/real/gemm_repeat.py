"""How well a GEMM's time repeats, by the way it is timed.

gemm_grid.py times a shape as the CUDA-event mean of 10 back-to-back
torch.mm after 3 warm-ups, with fresh operands; over five whole passes of
the grid, TF32 rows' figures spread by more than 10 % on a third to a half
of the shapes, while the GPU's own kernel times (CUPTI, --kernel-times)
repeat within 10 % on all but one. This asks, for a few shapes, which
timing repeats and what it converges to:

  grid    fresh operands, 3 warm-up, event mean of 10 (gemm_grid.py's way)
  long    same operands, 10 warm-up, event mean of 200
  graph   10 products captured in a CUDA graph, replayed 20 times after a
          warm-up replay, event mean per product (no host launches)

each taken ROUNDS times, interleaved over the shapes, with the SM clock
(MHz) and power (W) read after each figure where NVML answers. Caveat, as
measured (bench/real/data/gemm_repeat_h100.txt): grid and long keep every
product's output alive (a list), so torch allocates for each and those two
columns overstate large outputs; the graph column, which reuses one output,
is the figure bench/RESULTS.md uses, beside gemm_grid.py's own grid.
usage: python3 bench/real/gemm_repeat.py [--rounds 5] [--types tf32,bf16]
"""
import argparse
import statistics

import torch

SHAPES = [  # torch.mm m, n, k: the rows whose grid figures spread most, and some that did not
    (256, 4096, 4096), (512, 2048, 4096), (1024, 1024, 4096), (256, 1024, 16384),
    (512, 2048, 8192), (1024, 2048, 8192), (1024, 16384, 512), (16384, 1024, 4096),
    (4096, 4096, 256), (4096, 512, 8192), (8192, 256, 16384), (2048, 2048, 2048),
    (4096, 4096, 4096), (1024, 1024, 1024),
]
DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32, "tf32": torch.float32}


def clocks():
    try:
        return f"{torch.cuda.clock_rate()},{torch.cuda.power_draw() / 1000:.0f}"
    except Exception:  # no NVML binding
        return "?,?"


def event_mean(run, reps):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    run()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) * 1e3 / reps


def grid_way(m, n, k, dtype):
    a, b = torch.randn(m, k, device="cuda", dtype=dtype), torch.randn(k, n, device="cuda", dtype=dtype)
    for _ in range(3):
        torch.mm(a, b)
    return event_mean(lambda: [torch.mm(a, b) for _ in range(10)], 10)


def long_way(a, b):
    for _ in range(10):
        torch.mm(a, b)
    return event_mean(lambda: [torch.mm(a, b) for _ in range(200)], 200)


def graph_way(a, b):
    out = torch.empty(a.shape[0], b.shape[1], device="cuda", dtype=a.dtype)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            torch.mm(a, b, out=out)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(10):
            torch.mm(a, b, out=out)
    g.replay()

    def run():
        for _ in range(20):
            g.replay()
    return event_mean(run, 200)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--types", default="tf32,bf16")
    opt = ap.parse_args()
    props = torch.cuda.get_device_properties(0)
    print(f"# {props.name}, torch {torch.__version__}, cuda {torch.version.cuda}")
    print("dtype,m,n,k,round,way,us,sm_mhz,watts")
    for name in opt.types.split(","):
        torch.backends.cuda.matmul.allow_tf32 = name == "tf32"
        dtype = DTYPES[name]
        figures = {}
        for r in range(opt.rounds):
            for m, n, k in SHAPES:
                a, b = torch.randn(m, k, device="cuda", dtype=dtype), torch.randn(k, n, device="cuda", dtype=dtype)
                for way, f in (("grid", lambda: grid_way(m, n, k, dtype)), ("long", lambda: long_way(a, b)),
                               ("graph", lambda: graph_way(a, b))):
                    us = f()
                    figures.setdefault((m, n, k, way), []).append(us)
                    print(f"{name},{m},{n},{k},{r},{way},{us:.3f},{clocks()}", flush=True)
        print(f"# {name}: per shape and way, median and (max - min) / min over {opt.rounds} rounds")
        for m, n, k in SHAPES:
            cells = []
            for way in ("grid", "long", "graph"):
                xs = figures[(m, n, k, way)]
                cells.append(f"{way} {statistics.median(xs):9.3f} ({100 * (max(xs) - min(xs)) / min(xs):4.1f} %)")
            print(f"# {name} {m:5d} {n:5d} {k:5d}  " + "  ".join(cells))


if __name__ == "__main__":
    main()
