"""Measures GEMM time on a real GPU over a grid of shapes and types.

The data calibrates hysim's compute model (roofline × efficiency curve for
cuBLAS GEMMs). Each shape is timed with CUDA events: 3 warm-up products, then
the mean of 10. Output: CSV on stdout, one row per (dtype, m, n, k), where
m x n is torch.mm's row-major product (m x k times k x n); cuBLAS runs it as
the column-major n x m product, which is the shape hysim's model is given
(tests/compute/gemm_calibration_test.c swaps them).
usage: python3 bench/real/gemm_grid.py > gemm_<gpu>.csv
"""
import itertools
import sys

import torch

SIZES = [256, 512, 1024, 2048, 4096, 8192, 16384]
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
WARMUP, REPS = 3, 10


def time_gemm(m, n, k, dtype):
    a = torch.randn(m, k, device="cuda", dtype=dtype)
    b = torch.randn(k, n, device="cuda", dtype=dtype)
    for _ in range(WARMUP):
        torch.mm(a, b)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(REPS):
        torch.mm(a, b)
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) / REPS * 1e3  # microseconds


def main():
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 means fp32 here
    props = torch.cuda.get_device_properties(0)
    print(f"# {props.name}, {props.multi_processor_count} SMs, torch {torch.__version__}, "
          f"cuda {torch.version.cuda}; {WARMUP} warm-up, mean of {REPS}; tf32 off")
    print("dtype,m,n,k,us,tflops")
    for name, dtype in DTYPES.items():
        for m, n, k in itertools.product(SIZES, SIZES, SIZES):
            if name == "fp32" and m * n * k > 4096 ** 3:
                continue  # slow and far from the tensor-core roofline anyway
            us = time_gemm(m, n, k, dtype)
            print(f"{name},{m},{n},{k},{us:.3f},{2 * m * n * k / us / 1e6:.2f}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
