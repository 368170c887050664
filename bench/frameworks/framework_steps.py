"""Median step time and peak memory from the frameworks' own log lines, the
same way for real and simulated runs (bench/RESULTS.md "Frameworks on 4 real
H200s"): TorchTitan's tps (step = tokens per rank / (tps x non-data-parallel
size)) and memory (reserved), Megatron's "elapsed time per iteration" and
"max allocated", the Trainer script's "step time" line, DeepSpeed's
CurrSamplesPerSec (of its global batch) and MaxMemAllocated. Steps from the
third on, as the Trainer script counts them.
usage: framework_steps.py LOG [TOKENS NON_DP | GLOBAL_BATCH]"""
import re
import statistics
import sys

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def summary(path, extra):
    text = ANSI.sub("", open(path, errors="replace").read())
    if "[titan]" in text:
        tokens, non_dp = (int(a) for a in extra)
        rows = re.findall(r"step:\s+(\d+)\s.*?memory:\s+([\d.]+)GiB.*?tps: ([\d,]+)", text)
        by_step = {}
        for step, mem, tps in rows:
            by_step.setdefault(int(step), []).append((float(mem), int(tps.replace(",", ""))))
        ms = [1e3 * tokens / (statistics.median(t for _, t in v) * non_dp) for s, v in by_step.items() if s >= 3]
        mem = max(m for v in by_step.values() for m, _ in v)
        return statistics.median(ms), f"{mem:.2f} GiB reserved", len(by_step)
    if "elapsed time per iteration" in text:
        rows = re.findall(r"iteration\s+(\d+)/.*?per iteration \(ms\): ([\d.]+).*?max allocated \(MiB\): ([\d.]+)", text)
        ms = [float(t) for s, t, _ in rows if int(s) >= 3]
        return statistics.median(ms), f"{max(float(m) for *_, m in rows):.1f} MiB allocated", len(rows)
    m = re.search(r"step time: median ([\d.]+) ms over steps 3\.\.(\d+); peak memory: ([\d.]+) MiB", text)
    if m:
        return float(m.group(1)), f"{m.group(3)} MiB allocated", int(m.group(2))
    rows = re.findall(r"global_step=(\d+), .*?CurrSamplesPerSec=([\d.]+), .*?MaxMemAllocated=([\d.]+)GB", text)
    if rows:
        batch = int(extra[0])
        ms = [1e3 * batch / float(sps) for s, sps, _ in rows if int(s) >= 3]
        return statistics.median(ms), f"{max(float(m) for *_, m in rows):.2f} GB allocated", len(rows)
    raise SystemExit(f"{path}: no step lines of a known framework")


if __name__ == "__main__":
    ms, mem, steps = summary(sys.argv[1], sys.argv[2:])
    print(f"{sys.argv[1]}: {steps} steps, median step {ms:.2f} ms, peak {mem}")
