"""CUDA_VISIBLE_DEVICES=3 under hysim: torch sees one GPU, the server's fourth.

torch counts devices through NVML (all of a server's GPUs) trimmed by the
variable; the CUDA runtime maps device 0 to the server's GPU 3 (its UUID and
PCI bus), and its memory shows on that GPU in NVML.
"""
import torch
import pynvml


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        raise SystemExit(1)


check(torch.cuda.device_count() == 1, f"device_count() == 1: {torch.cuda.device_count()}")
props = torch.cuda.get_device_properties(0)
check(str(props.uuid).endswith("000000000003"), f"cuda:0 is the server's GPU 3: {props.uuid}")
check(props.pci_bus_id == 3, f"on PCI bus 3: {props.pci_bus_id}")
x = torch.empty(1 << 24, device="cuda")
pynvml.nvmlInit()
check(pynvml.nvmlDeviceGetCount() == 8, "NVML counts the server's 8 GPUs")
used = [pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(i)).used for i in range(8)]
check(used[3] == torch.cuda.memory_reserved(0) > 0 and sum(used) == used[3], f"memory in use on GPU 3 only: {used}")
print("visible devices: ok", flush=True)
