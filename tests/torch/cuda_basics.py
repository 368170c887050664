"""torch.cuda under hysim: what the scenario says, and the semantics a script relies on.

usage: python cuda_basics.py GPUS MEMORY_GIB   (the scenario's GPUs per server and memory)
Prints one line per check and "cuda basics: ok" at the end; exits 1 on the first failure.
"""
import os
import sys
import time

import torch

gpus, memory_gib = int(sys.argv[1]), float(sys.argv[2])


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        sys.exit(1)


check(torch.cuda.is_available(), "torch.cuda.is_available()")
check(torch.cuda.device_count() == gpus, f"device_count() == {gpus}: {torch.cuda.device_count()}")
props = torch.cuda.get_device_properties(0)
check("H200" in props.name, f"device name from the scenario: {props.name}")
check(abs(props.total_memory / 2**30 - memory_gib) < 1, f"total_memory {props.total_memory / 2**30:.1f} GiB")
check((props.major, props.minor) == (9, 0), f"compute capability {props.major}.{props.minor}")

torch.cuda.set_device(1)
check(torch.cuda.current_device() == 1, "set_device(1)")
x = torch.empty(1 << 20, device="cuda")
check(x.device.index == 1, "a tensor on cuda:1")
torch.cuda.set_device(0)

# The caching allocator keeps what the script frees; empty_cache gives it back.
a = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
check(torch.cuda.memory_allocated() >= 256 << 20, f"memory_allocated {torch.cuda.memory_allocated()}")
del a
check(torch.cuda.memory_reserved() >= 256 << 20, "freed memory stays reserved")
torch.cuda.empty_cache()
check(torch.cuda.memory_reserved() < 256 << 20, f"empty_cache: reserved {torch.cuda.memory_reserved()}")
check(torch.cuda.max_memory_reserved() >= 256 << 20, "max_memory_reserved")

# Values: what copies put in device memory comes back; computed values read as zeros.
h = torch.arange(1000, dtype=torch.int64)
d = h.to("cuda")
check(torch.equal(d.cpu(), h), "a host-to-device copy reads back")
check(d.clone().cpu().tolist() == h.tolist(), "a device copy keeps the values")
check((d + 1).sum().item() == 0, "a kernel's result reads as zero")
check(torch.zeros(4, device="cuda").add_(3).cpu().tolist() == [0.0] * 4, "computed values are zeros")
check(torch.full((4,), 7, dtype=torch.uint8, device="cuda").cpu().tolist() == [0] * 4,
      "a fill kernel's values are not computed either")

# Events and clocks read simulated time: a large matmul takes what the roofline says.
m = torch.empty(8192, 8192, device="cuda", dtype=torch.bfloat16)
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
torch.cuda.synchronize()
t0 = time.perf_counter()
start.record()
for _ in range(10):
    m @ m
end.record()
torch.cuda.synchronize()
wall = time.perf_counter() - t0
ms = start.elapsed_time(end)
flops = 10 * 2 * 8192**3
check(0.5 < flops / (ms * 1e-3) / 989e12 < 1.0, f"10 bf16 8192^3 matmuls: {ms:.3f} ms of events, "
      f"{flops / (ms * 1e-3) / 1e12:.0f} TFLOP/s of 989")
check(wall * 1e3 >= ms * 0.99, f"perf_counter sees them too: {wall * 1e3:.3f} ms")

# bf16 attention goes to cuDNN on an H200 (torch 2.11 prefers it): its graph's products are timed.
import torch.nn.functional as F
b, h, seq, dim = 8, 16, 2048, 128
q = torch.empty(b, h, seq, dim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
F.scaled_dot_product_attention(q, q, q, is_causal=True).backward(torch.empty_like(q))  # builds cuDNN's graphs
torch.cuda.synchronize()
start.record()
o = F.scaled_dot_product_attention(q, q, q, is_causal=True)
end.record()
torch.cuda.synchronize()
fwd_ms = start.elapsed_time(end)
flops = 2 * 2 * b * h * seq * seq * dim  # Q K^T and P V, every key charged
check(0.3 < flops / (fwd_ms * 1e-3) / 989e12 < 1.0, f"SDPA forward {fwd_ms:.3f} ms: "
      f"{flops / (fwd_ms * 1e-3) / 1e12:.0f} TFLOP/s of its two products")
start.record()
o.backward(torch.empty_like(o))
end.record()
torch.cuda.synchronize()
check(2.0 < start.elapsed_time(end) / fwd_ms < 4.0, f"SDPA backward {start.elapsed_time(end):.3f} ms, "
      f"{start.elapsed_time(end) / fwd_ms:.1f} x the forward (five products and the rest)")

# Streams order work; pinned memory and non_blocking copies.
s = torch.cuda.Stream()
with torch.cuda.stream(s):
    y = m @ m
ev = s.record_event()
check(not ev.query(), "an event behind a 1.6 ms matmul is not done at once")
s.synchronize()
check(ev.query(), "an event is done after its stream synchronised")
p = torch.empty(64 << 20, dtype=torch.uint8).pin_memory()
check(p.is_pinned(), "pin_memory")
g = p.to("cuda", non_blocking=True)
torch.cuda.synchronize()
check(g.numel() == 64 << 20, "non_blocking copy from pinned memory")

# CUDA graphs: capture and replay.
static = torch.empty(4096, 4096, device="cuda")
graph = torch.cuda.CUDAGraph()
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    static @ static  # warm up outside the capture, as torch recommends
torch.cuda.current_stream().wait_stream(side)
with torch.cuda.graph(graph):
    out = static @ static
start.record()
graph.replay()
end.record()
torch.cuda.synchronize()
check(start.elapsed_time(end) > 0, f"a captured graph replays: {start.elapsed_time(end):.3f} ms")

# Past the GPU's memory: torch's own out-of-memory error.
try:
    torch.empty(int(memory_gib * 2**30) + (1 << 30), dtype=torch.uint8, device="cuda")
    check(False, "allocating past the GPU's memory raises")
except torch.OutOfMemoryError as e:
    check("out of memory" in str(e).lower(), "allocating past the GPU's memory raises torch.OutOfMemoryError")

# torch.nonzero counts elements with a kernel hysim does not compute: empty, and hysim says so once on stderr
# (the test's other expected line; docs/values.md, "Kernels hysim computes").
picked = torch.nonzero(torch.tensor([0, 2, 0, 3], device="cuda"))
check(picked.numel() == 0, f"torch.nonzero reads an empty result, {picked.tolist()}")

# NVML (hysim's libnvidia-ml.so.1), as torch.cuda and pynvml ask it.
import pynvml  # noqa: E402

pynvml.nvmlInit()
check(pynvml.nvmlDeviceGetCount() == gpus, f"NVML: {pynvml.nvmlDeviceGetCount()} devices")
h = pynvml.nvmlDeviceGetHandleByIndex(1)
uuid = str(torch.cuda.get_device_properties(1).uuid)
check(pynvml.nvmlDeviceGetUUID(h) == "GPU-" + uuid, f"NVML: the UUID torch reports, {pynvml.nvmlDeviceGetUUID(h)}")
check(pynvml.nvmlDeviceGetName(h) == props.name, f"NVML: name {pynvml.nvmlDeviceGetName(h)}")
used = pynvml.nvmlDeviceGetMemoryInfo(h).used
check(used == torch.cuda.memory_reserved(1) > 0, f"NVML: {used} bytes used on GPU 1, what torch reserved")
listed = torch.cuda.list_gpu_processes(1)
check(str(os.getpid()) in listed, f"list_gpu_processes names this process: {listed.splitlines()[-1]}")
links = pynvml.nvmlDeviceGetNvLinkRemoteDeviceType(h, 17)
check(links == pynvml.NVML_NVLINK_DEVICE_TYPE_SWITCH, "NVML: 18 NVLinks to the NVSwitch plane")
try:
    torch.cuda.temperature(1)
    check(False, "NVML: a temperature, which hysim does not model")
except pynvml.NVMLError_NotSupported:
    check(True, "NVML: temperature is not supported")
print("cuda basics: ok", flush=True)
