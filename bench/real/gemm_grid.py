"""Measures GEMM time on a real GPU over a grid of shapes and types.

The data calibrates hysim's compute model (roofline × efficiency curve for
cuBLAS GEMMs). Each shape is timed with CUDA events: 3 warm-up products, then
the mean of 10. Output: CSV on stdout, one row per (dtype, m, n, k), where
m x n is torch.mm's row-major product (m x k times k x n); cuBLAS runs it as
the column-major n x m product, which is the shape hysim's model is given
(tests/compute/gemm_calibration_test.c swaps them).

With --kernels, every row also names the kernels cuBLAS ran for it and their
launch grids (torch.profiler, one extra product per shape): cuBLAS's own
choice of tile, cluster and split-k, which the model has to predict from the
shape alone. tf32 is fp32 with TF32 tensor cores allowed (cuBLAS's
CUBLAS_COMPUTE_32F_FAST_TF32).
With --kernel-times, the time of a row is the GPU's own: each product's
kernels' durations as CUPTI records them (torch.profiler), summed per product
(a split-k GEMM runs two kernels), the median of the 10 timed products. That
is free of the host's launch rate, so small shapes measure their GPU time too,
and a median is robust to the odd slow product. The grid is measured twice,
one whole pass after the other (columns us and us_repeat), to show how well a
row repeats; event_us is the CUDA-event mean of the first pass, as before.
With --graph, a row's time is the CUDA-event mean per product of 10
products captured in a CUDA graph and replayed 3 times (after 3 products on
a side stream and one replay to warm up): the GPU's own time of back-to-back
products, with no host launch between them. Timed as above, a product's
figure is the longer of its GPU time and the time the host takes to issue a
torch.mm; TF32 products of 40-110 us measured 8-18 % (and up to 44 % in one
pass of five) above their graph times on an H100 (bench/real/gemm_repeat.py),
which no model of the GPU can follow. In a graph the GPU has no gap between
kernels (bench/RESULTS.md, "Kernel launch gap"), so these figures are kernel
times; a stream adds the launch gap.
With --passes N, the event timing runs over the whole grid N times (each
type's passes one after the other, fresh operands each time): a row's us is
the median of its N figures, which are listed in the passes column. One
figure can be off by more than 10 % (clocks, power, where the operands
landed in memory); the median of five rarely is.
With --sizes, the grid is every m, n, k of that list instead of the powers
of two from 256 to 16384: sizes between the calibration points (and not
multiples of 128) check that the model holds off its calibration grid.
usage: python3 bench/real/gemm_grid.py [--kernels | --kernel-times] [--graph] [--passes N] [--types bf16,fp16,fp32,tf32]
                                       [--sizes 384,1000,...] > gemm_<gpu>.csv
"""
import argparse
import itertools
import json
import os
import statistics
import sys
import tempfile

import torch

SIZES = [256, 512, 1024, 2048, 4096, 8192, 16384]
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "tf32": torch.float32}
WARMUP, REPS = 3, 10
GRAPH_REPLAYS = 3


def shapes(name):
    for m, n, k in itertools.product(SIZES, SIZES, SIZES):
        if name in ("fp32", "tf32") and m * n * k > 4096 ** 3:
            continue  # slow (fp32) and not needed for the curve
        yield m, n, k


def operands(m, n, k, dtype):
    return (torch.randn(m, k, device="cuda", dtype=dtype),
            torch.randn(k, n, device="cuda", dtype=dtype))


def time_gemm(a, b):
    for _ in range(WARMUP):
        torch.mm(a, b)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(REPS):
        torch.mm(a, b)
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) / REPS * 1e3  # microseconds


def time_gemm_graph(a, b):
    out = torch.empty(a.shape[0], b.shape[1], device="cuda", dtype=a.dtype)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # cuBLAS's workspace and heuristics, before capture
        for _ in range(WARMUP):
            torch.mm(a, b, out=out)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(REPS):
            torch.mm(a, b, out=out)
    graph.replay()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(GRAPH_REPLAYS):
        graph.replay()
    stop.record()
    stop.synchronize()
    del graph
    return start.elapsed_time(stop) / (GRAPH_REPLAYS * REPS) * 1e3  # microseconds


def profiled(run):
    """Runs run() under torch.profiler; returns {(m, n, k): {product id: [(kernel@grid, us), ...]}},
    one entry per torch.mm the run issued, its kernels in launch order."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
        run()
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    prof.export_chrome_trace(path)
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    os.unlink(path)
    shape_of, products = {}, {}
    for e in events:
        args = e.get("args", {})
        if e.get("cat") == "cpu_op" and e.get("name") == "aten::mm" and "Input Dims" in args:
            (m, k), (_, n) = args["Input Dims"][:2]
            shape_of[args.get("External id")] = (m, n, k)
    for e in sorted((e for e in events if e.get("cat") == "kernel"), key=lambda e: e.get("ts", 0)):
        ext = e["args"].get("External id")
        key = shape_of.get(ext)
        if key is None:
            continue  # randn's kernels
        grid = ".".join(str(g) for g in e["args"].get("grid", []))
        products.setdefault(key, {}).setdefault(ext, []).append((f"{e['name'].replace(',', ';')}@{grid}",
                                                                 float(e["dur"])))
    return products


def kernel_names(kernels):
    return "+".join(name for name, _ in kernels)


def kernels_of(name, dtype):
    """{(m, n, k): 'kernel@gx.gy.gz+...'} for one product of every shape."""
    def run():
        for m, n, k in shapes(name):
            torch.mm(*operands(m, n, k, dtype))
            torch.cuda.synchronize()

    return {key: kernel_names(next(iter(calls.values()))) for key, calls in profiled(run).items()}


def profiled_products(name, dtype):
    """{(m, n, k): (median kernel us per product, event mean us, kernels)} over the grid."""
    events_us = {}

    def run():
        for m, n, k in shapes(name):
            events_us[(m, n, k)] = time_gemm(*operands(m, n, k, dtype))

    out = {}
    for key, calls in profiled(run).items():
        timed = [calls[ext] for ext in sorted(calls)][-REPS:]  # the timed products, after the warm-up
        us = statistics.median(sum(dur for _, dur in kernels) for kernels in timed)
        out[key] = (us, events_us[key], kernel_names(timed[-1]))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", action="store_true")
    ap.add_argument("--kernel-times", action="store_true")
    ap.add_argument("--graph", action="store_true")
    ap.add_argument("--passes", type=int, default=1)
    ap.add_argument("--types", default="bf16,fp16,fp32")
    ap.add_argument("--sizes", help="comma-separated m, n and k values (default: powers of two 256..16384)")
    opt = ap.parse_args()
    if opt.sizes:
        SIZES[:] = [int(x) for x in opt.sizes.split(",")]
    props = torch.cuda.get_device_properties(0)
    how = (f"{REPS} products in a CUDA graph, mean of {GRAPH_REPLAYS} replays" if opt.graph else
           f"{WARMUP} warm-up, mean of {REPS}")
    print(f"# {props.name}, {props.multi_processor_count} SMs, torch {torch.__version__}, "
          f"cuda {torch.version.cuda}; {how}; tf32 only in tf32 rows")
    if opt.kernel_times:
        print("# us, us_repeat: median CUPTI kernel time per product of two whole passes; event_us: CUDA events")
        print("dtype,m,n,k,us,tflops,us_repeat,event_us,kernels")
    else:
        print("dtype,m,n,k,us,tflops" + (",passes" if opt.passes > 1 else "") + (",kernels" if opt.kernels else ""))
    for name in opt.types.split(","):
        dtype = DTYPES[name]
        torch.backends.cuda.matmul.allow_tf32 = name == "tf32"
        if opt.kernel_times:
            first, second = profiled_products(name, dtype), profiled_products(name, dtype)
            for m, n, k in shapes(name):
                us, ev, kern = first[(m, n, k)]
                print(f"{name},{m},{n},{k},{us:.3f},{2 * m * n * k / us / 1e6:.2f},"
                      f"{second[(m, n, k)][0]:.3f},{ev:.3f},{kern}")
            sys.stdout.flush()
            continue
        names = kernels_of(name, dtype) if opt.kernels else {}
        figures = {}
        for _ in range(opt.passes):
            for m, n, k in shapes(name):
                timer = time_gemm_graph if opt.graph else time_gemm
                figures.setdefault((m, n, k), []).append(timer(*operands(m, n, k, dtype)))
        for m, n, k in shapes(name):
            us = statistics.median(figures[(m, n, k)])
            row = f"{name},{m},{n},{k},{us:.3f},{2 * m * n * k / us / 1e6:.2f}"
            if opt.passes > 1:
                row += "," + ";".join(f"{x:.3f}" for x in figures[(m, n, k)])
            if opt.kernels:
                row += "," + names.get((m, n, k), "?")
            print(row)
            sys.stdout.flush()


if __name__ == "__main__":
    main()
