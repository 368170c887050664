"""Checks a framework's own log lines from a run under hysim.
usage: check_log.py CHECK [ARGS...] LOG EXIT_STATUS

  torchtitan STEPS RANKS TOKENS_PER_STEP NON_DP_SIZE [uneven]
      every rank logs steps 1..STEPS; from step 2 on, the step time the
      framework's tps implies (TOKENS_PER_STEP / (tps * NON_DP_SIZE)) is not
      zero, its MFU lies in (0, 100] (so the step is no shorter than the
      scenario's GPU peak allows) and, up to the last step, its log
      timestamps, read from the simulated wall clock, agree with it.
      uneven: the ranks' memory differs in some step (a mixture of experts
      whose skewed routing sends some ranks more tokens than others).
  trainer STEPS PEAK_TFLOPS
      Hugging Face's Trainer logged STEPS losses and its train_runtime and
      train_steps_per_second; the step time they give is no shorter than the
      script's model (its "model: N parameters, T tokens" line) takes at the
      scenario's peak, 6 N T / PEAK.
  deepspeed STEPS GLOBAL_BATCH PEAK_TFLOPS GPU_GIB
      DeepSpeed logged steps 1..STEPS with none skipped, and its throughput
      timer's line for global step STEPS: the step time its samples per
      second give (GLOBAL_BATCH / CurrSamplesPerSec) is no shorter than the
      script's model takes at the scenario's peak (6 N T / PEAK), and its
      MaxMemAllocated is more than zero and at most the GPU's memory.
  megatron STEPS PEAK_TFLOPS
      the script ran tensor parallelism with sequence parallelism, printed
      Megatron-LM's iteration line for 1..STEPS, none
      skipped, a finite grad norm, and from iteration 2 on a time per
      iteration no shorter than the whole model's 6 N T / PEAK spread over
      the job's GPUs (its "megatron:" line: the model-parallel group's
      parameters, the global batch's tokens).
  oom
      the run failed and the framework reported torch's OutOfMemoryError.
"""
import datetime
import re
import statistics
import sys

ANSI = re.compile(r"\x1b\[[0-9;]*m")
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def torchtitan(lines, rc, steps, ranks, tokens, non_dp, uneven=False):
    check(rc == 0, f"exit status {rc}")
    pat = re.compile(r"^\[titan\] (\S+ \S+) .*step:\s+(\d+)\s+loss:\s+(\S+).*memory:\s+([\d.]+)GiB.*tps: ([\d,]+).*"
                     r"mfu: ([\d.]+)%")
    rows = [m.groups() for m in map(pat.match, lines) if m]
    by_step, memory = {}, {}
    for stamp, step, loss, mem, tps, mfu in rows:
        t = datetime.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp()
        by_step.setdefault(int(step), []).append((t, float(loss), int(tps.replace(",", "")), float(mfu)))
        memory.setdefault(int(step), set()).add(mem)
    if uneven:
        check(any(len(m) > 1 for s, m in memory.items() if s > 1), "every rank's memory the same: routing not uneven")
    for s in range(1, steps + 1):
        check(len(by_step.get(s, [])) == ranks, f"step {s} logged by {len(by_step.get(s, []))} ranks, not {ranks}")
    if failures:
        return
    step_ms = []
    for s in range(2, steps + 1):
        tps = statistics.median(r[2] for r in by_step[s])
        mfu = statistics.median(r[3] for r in by_step[s])
        check(tps > 0, f"step {s}: tps {tps}")
        check(0 < mfu <= 100, f"step {s}: mfu {mfu}% outside (0, 100]")
        if tps > 0:
            step_ms.append(1e3 * tokens / (tps * non_dp))
        gap = 1e3 * (min(r[0] for r in by_step[s]) - min(r[0] for r in by_step[s - 1]))
        # the log lines carry no rank: the first rank's line of a step against the median tps, steps 2..N-1 (the
        # last step's ranks may part: one counted late by hysim, docs/frameworks.md "Step times")
        if tps > 0 and s < steps:
            check(abs(gap - step_ms[-1]) <= 1 + 0.1 * step_ms[-1],
                  f"step {s}: {step_ms[-1]:.2f} ms from tps, {gap:.2f} ms between log lines")
    print(f"torchtitan: {steps} steps on {ranks} ranks; step time from tps: "
          + ", ".join(f"{x:.2f}" for x in step_ms) + " ms; mfu "
          + ", ".join(f"{statistics.median(r[3] for r in by_step[s]):.2f}" for s in range(2, steps + 1)) + " %")


def trainer(lines, rc, steps, peak_tflops):
    check(rc == 0, f"exit status {rc}")
    losses = [l for l in lines if l.startswith("{'loss':")]
    check(len(losses) == steps, f"{len(losses)} losses logged, not {steps}")
    params, tokens = model_line(lines)
    end = [re.search(r"'train_runtime': '([\d.e-]+)', .*'train_steps_per_second': '([\d.e-]+)'", l) for l in lines]
    end = [m for m in end if m]
    check(len(end) == 1, "no train_runtime line")
    if failures:
        return
    runtime, per_s = map(float, end[0].groups())
    step_ms = 1e3 / per_s if per_s > 0 else 0
    floor_ms = 1e3 * 6 * params * tokens / (peak_tflops * 1e12)
    check(runtime > 0 and step_ms > 0, f"train_runtime {runtime} s, {per_s} steps/s")
    check(step_ms >= floor_ms, f"{step_ms:.3f} ms a step, shorter than 6 N T / peak = {floor_ms:.3f} ms")
    print(f"trainer: {steps} steps, {step_ms:.2f} ms a step (train_runtime {runtime} s); at peak {floor_ms:.3f} ms")


def model_line(lines):
    found = [m for m in (re.search(r"model: (\d+) parameters, (\d+) tokens", l) for l in lines) if m]
    check(len(found) == 1, f"{len(found)} model lines, not 1")
    return tuple(map(int, found[0].groups())) if found else (0, 0)


def deepspeed(lines, rc, steps, batch, peak_tflops, gpu_gib):
    check(rc == 0, f"exit status {rc}")
    logged = [m for m in (re.search(r"\] step=(\d+), skipped=(\d+)", l) for l in lines) if m]
    got = sorted({int(m.group(1)) for m in logged})
    check(set(range(1, steps + 1)) <= set(got), f"steps logged {got}, not 1..{steps}")
    check(all(m.group(2) == "0" for m in logged), "a step was skipped")
    tput = [m for m in (re.search(r"global_step=(\d+), RunningAvgSamplesPerSec=([\d.]+), CurrSamplesPerSec=([\d.]+), "
                                  r"MemAllocated=([\d.]+)GB, MaxMemAllocated=([\d.]+)GB", l) for l in lines) if m]
    last = [m for m in tput if int(m.group(1)) == steps]
    check(len(last) == 1, f"no throughput line for global step {steps}")
    params, tokens = model_line(lines)
    if failures:
        return
    per_s, max_gb = float(last[0].group(3)), float(last[0].group(5))
    step_ms = 1e3 * batch / per_s if per_s > 0 else 0
    floor_ms = 1e3 * 6 * params * tokens / (peak_tflops * 1e12)
    check(step_ms >= floor_ms > 0, f"{step_ms:.3f} ms a step, shorter than 6 N T / peak = {floor_ms:.3f} ms")
    check(0 < max_gb <= gpu_gib * 1.0737, f"MaxMemAllocated {max_gb} GB outside (0, {gpu_gib} GiB]")
    print(f"deepspeed: {steps} steps, none skipped, {step_ms:.2f} ms a step ({per_s:.0f} samples/s); "
          f"at peak {floor_ms:.3f} ms; MaxMemAllocated {max_gb} GB")


def megatron(lines, rc, steps, peak_tflops):
    check(rc == 0, f"exit status {rc}")
    head = [m for m in (re.search(r"megatron: TP (\d+) x PP (\d+) .* x DP (\d+), (\d+) micro-batches of (\d+) x (\d+) "
                                  r"tokens per step; rank 0 holds (\d+) parameters; sequence parallel: (on|off)", l)
                        for l in lines) if m]
    its = [m for m in (re.search(r"iteration\s+(\d+)/\s*(\d+) \| elapsed time per iteration \(ms\): ([\d.]+) \| .*"
                                 r"grad norm: ([\d.naif-]+) \| skipped: (\d)", l) for l in lines) if m]
    check(len(head) == 1, "no megatron: line")
    check(not head or head[0].group(1) == "1" or head[0].group(8) == "on", "tensor parallel without sequence parallelism")
    check([int(m.group(1)) for m in its] == list(range(1, steps + 1)), f"iterations {[m.group(1) for m in its]}")
    check(all(m.group(5) == "0" for m in its), "an iteration was skipped")
    check(all(m.group(4) not in ("nan", "inf") for m in its), "a grad norm is not finite")
    if failures:
        return
    tp, pp, dp, mbs, mb, seq, params = map(int, head[0].groups()[:7])
    # rank 0 holds 1/(TP x PP) of the model, roughly; the global batch's tokens over every GPU
    floor_ms = 1e3 * 6 * params * tp * pp * (mbs * mb * seq * dp) / (tp * pp * dp * peak_tflops * 1e12)
    ms = [float(m.group(3)) for m in its[1:]]
    check(all(x >= floor_ms for x in ms), f"iterations of {ms} ms, shorter than 6 N T / peak = {floor_ms:.3f} ms")
    print(f"megatron: {steps} iterations, TP {tp} x PP {pp} x DP {dp}; " + ", ".join(f"{x:.1f}" for x in ms)
          + f" ms from iteration 2; at peak {floor_ms:.3f} ms")


def oom(lines, rc):
    check(rc != 0, "the run succeeded")
    check(any("torch.OutOfMemoryError: CUDA out of memory" in l for l in lines), "no OutOfMemoryError reported")
    if not failures:
        print("oom: the framework reported CUDA out of memory")


def main(argv):
    kind, args, log, rc = argv[1], argv[2:-2], argv[-2], int(argv[-1])
    with open(log, errors="replace") as f:
        lines = [ANSI.sub("", l.rstrip("\n")) for l in f]
    if kind == "torchtitan":
        torchtitan(lines, rc, *map(int, args[:4]), uneven=args[4:] == ["uneven"])
    elif kind == "trainer":
        trainer(lines, rc, int(args[0]), float(args[1]))
    elif kind == "deepspeed":
        deepspeed(lines, rc, int(args[0]), int(args[1]), float(args[2]), float(args[3]))
    elif kind == "megatron":
        megatron(lines, rc, int(args[0]), float(args[1]))
    elif kind == "oom":
        oom(lines, rc)
    else:
        failures.append(f"unknown check {kind}")
    for f in failures:
        print("FAIL:", f)
    if failures:
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
