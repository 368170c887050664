#!/usr/bin/env python3
"""Fit the NCCL model's per-channel rate caps on the real channel sweep.

What it fits: the per-channel caps of bridge/collectives/collective_tuner.c, i.e. the
calibration table's channel_gbps of all-reduce, all-gather, reduce-scatter,
broadcast and reduce (GB/s of wire bytes per channel), and the two p2p rates
P2P_CHANNEL_GBS (GB/s of payload per channel, one round alone: send/recv) and
P2P_SHARED_CHANNEL_GBS (GB/s of payload per channel in all, when two rounds of
an all-to-all share it).

On which file: bench/real/data/channels_h200x2.txt, collectives_bench on
2 x H200 with NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS = C for C in
1 2 3 6 12 16, at 64 MiB, 256 MiB and 1 GiB. Every cap is fitted on C = 1, 2,
3, 6 (all three sizes), where the cap alone binds; the 12- and 16-channel rows
are printed only (there NVLink binds first).

Model (what hysimd computes for these rows on tests/e2e/h200x2.yaml, one
server, 2 ranks, Simple; bridge/collectives/collective_tuner.c, bridge/collectives/collective_algos.c).
Every flow starts a hop latency after its predecessor is done (the first
flow also after the plan's start-up) and, capped, is done at
start + wire bytes / cap, wire = payload / the kind's efficiency:
  start-up s = Simple baseLat 8.4 us + the kind's fitted start-up (full at
               >= 64 MiB; broadcast, reduce, p2p) + for all-reduce, all-gather
               and reduce-scatter the local write, S/2 bytes at the kind's
               local rate x C/24, and the channels' spread, j x sqrt(S/2 in
               MiB) x sqrt(C/24) (bench/nccl/fit_ring_model.py fits the local
               rate and j at 24 channels) ; hop h = Simple NVLink hwLat 3.4 us
  all-reduce      T = s + 2 (h + ceil(S / 2C) / eff / cap)   (2 ring steps)
  all-gather,
  reduce-scatter  T = s + h + ceil(S / 2 / C) / eff / cap    (1 ring step)
  broadcast,
  reduce          T = s + sum over channel 0's 512 KiB chunks of
                      (h + chunk / eff / cap), channel 0 = ceil(S / C) bytes
  send/recv       T = s + h + S / (k x P2P_CHANNEL_GBS)
  all-to-all      T = s + h + (S/2) / (k x rate), rate = P2P_CHANNEL_GBS when
                      the two rounds use disjoint channels (m = 1), else
                      P2P_SHARED_CHANNEL_GBS / 2 (m = 2)
where P = C rounded up to a power of two, k = the channels one peer's bytes
are split over (NCCL's addP2pToPlan: P/2 on 2 ranks, P when a part would
exceed 16 MiB) and m = the rounds sharing a channel. The 12/16-channel rows
add the link, 450 GB/s of wire bytes out of each GPU: a ring step takes at
least its C flows' wire bytes over it; broadcast/reduce at least s + h + all
C channels' wire bytes over it (the channels' chunks drift apart and fill
each other's hops); a p2p flow at least its wire bytes over it. That link
term is an estimate of the packet-level fabric: for those rows hysim's own
figure (bench/RESULTS.md) differs by up to about 3 %; on 1-6 channels the
cap alone binds and the formulas are hysim's to the rounding of a picosecond.

Fit: least squares of the relative time error, sum ((T_model - T_real) /
T_real)^2, over the fitted rows. T is linear in 1/cap, so the minimum is in
closed form. P2P_CHANNEL_GBS is fitted on the send/recv rows,
P2P_SHARED_CHANNEL_GBS on the all-to-all rows with m = 2 (the other rate
plays no part there); the all-to-all rows with m = 1 (3 and 6 channels at
64 MiB) are predicted from P2P_CHANNEL_GBS. Each fitted cap is printed to
two decimals and to one (the committed precision), next to the committed
constant read from bridge/collectives/collective_tuner.c (whose efficiencies, start-ups
and Simple latencies it uses); every row's relative error is printed at the
committed caps, as hysim runs them.

Where a fitted cap, rounded to one decimal, is not the committed constant
it says so (DIFFERS) and prints the objective and the worst fitted-row error
at both values. Broadcast (32.2 fitted, 32.3 committed) and reduce (52.2 vs
52.5) do so: no documented objective or row set reproduces both (a per-chunk
hop of about 3.46 us instead of 3.4 would); the committed values are kept.

Usage (from the repository root):
  python3 bench/nccl/fit_channel_caps.py [SWEEP_FILE [COLLECTIVE_TUNER_C]]
Exit status 0 when it ran (whether or not a cap differs), 1 on unreadable input.
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SWEEP = os.path.join(ROOT, "bench", "real", "data", "channels_h200x2.txt")
TUNER = os.path.join(ROOT, "bridge", "collectives", "collective_tuner.c")

MIB = 1 << 20
LINK_GBS = 450.0  # tests/e2e/h200x2.yaml: nvlink 3600 Gb/s per GPU
CALIBRATED_FROM_BYTES = 64 * MIB  # collective_tuner.c: start-up ramps up to this
CHAIN_CHUNK_BYTES = 512 << 10  # collective_algos.c HS_CHAIN_CHUNK_BYTES
P2P_MIN_PART_BYTES = 64 << 10  # collective_tuner.c
P2P_MAX_PART_BYTES = 16 * MIB
NRANKS = 2
SINGLE_SERVER_CHANNELS = 24  # collective_tuner.c: the channels the local rate was fitted at
FIT_CHANNELS = (1, 2, 3, 6)

# sweep op name -> collective_tuner.c calibration() case
KINDS = {
    "allreduce": "ALL_REDUCE",
    "allgather": "ALL_GATHER",
    "reducescatter": "REDUCE_SCATTER",
    "broadcast": "BROADCAST",
    "reduce": "REDUCE",
    "alltoall": "ALL_TO_ALL",
    "sendrecv": "default",
}
COLLECTIVES = ("allreduce", "allgather", "reducescatter", "broadcast", "reduce")


def read_sweep(path):
    """Rows (channels, op, bytes, time_us) of every '## env NCCL_MIN_NCHANNELS=C' block."""
    rows, chans = [], None
    with open(path) as f:
        for line in f:
            if line.startswith("## "):
                m = re.match(r"## env NCCL_MIN_NCHANNELS=(\d+) NCCL_MAX_NCHANNELS=(\d+)", line)
                chans = int(m.group(1)) if m and m.group(1) == m.group(2) else None
                continue
            fields = line.split()
            if chans is None or line.startswith("#") or len(fields) != 5 or fields[0] not in KINDS:
                continue
            rows.append((chans, fields[0], int(fields[1]), float(fields[2])))
    if not rows:
        sys.exit("%s: no channel-sweep rows found" % path)
    return rows


def read_tuner(path):
    """The committed constants of collective_tuner.c the model and the fit need."""
    with open(path) as f:
        src = f.read()

    def array_simple(name):  # the Simple entry (index 3) of a per-protocol array
        m = re.search(r"\b%s\[NPROTO\]\s*=\s*\{([^}]*)\}" % name, src)
        if not m:
            sys.exit("%s: %s not found" % (path, name))
        return float(m.group(1).split(",")[3])

    def define(name):
        m = re.search(r"#define\s+%s\s+([0-9.]+)" % name, src)
        if not m:
            sys.exit("%s: %s not found" % (path, name))
        return float(m.group(1))

    calib = {}
    for op, case in KINDS.items():
        pat = (r"default:\s*return\s*\(calib\)\{([^}]*)\}" if case == "default"
               else r"HS_COLL_%s:\s*return\s*\(calib\)\{([^}]*)\}" % case)
        m = re.search(pat, src)
        if not m:
            sys.exit("%s: calibration() entry for %s not found" % (path, op))
        eff, startup, cap, local, spread = (float(x) for x in m.group(1).split(","))
        calib[op] = {"eff": eff, "startup": startup, "cap": cap, "local": local, "spread": spread}
    return {
        "calib": calib,
        "base_lat": array_simple("BASE_LAT_US"),
        "hop": array_simple("HW_LAT_NVLINK_US"),
        "p2p": define("P2P_CHANNEL_GBS"),
        "p2p_shared": define("P2P_SHARED_CHANNEL_GBS"),
    }


def ceil_div(a, b):
    return -(-a // b)


def pow2_up(c):
    p = 1
    while p < c:
        p *= 2
    return p


def p2p_parts(P, nranks, nbytes):
    """k: channels one peer's bytes are split over (collective_tuner.c p2p_parts)."""
    kmin = P
    while kmin * nranks > P and kmin > 1:
        kmin //= 2
    k = max(1, min(kmin, ceil_div(nbytes, P2P_MIN_PART_BYTES)))
    while ceil_div(nbytes, k) > P2P_MAX_PART_BYTES and k <= P // 2:
        k *= 2
    return k


def p2p_sharing(P, k, rounds):
    stride = P // k
    return 1 if stride >= rounds else ceil_div(rounds, stride)


def spread_us(per_sqrt_mib, local_bytes, chans):
    """The ring kinds' channel spread (collective_tuner.c spread_us): per_sqrt_mib x sqrt(local MiB) x
    sqrt(C / 24), fitted from 64 MiB of S; smaller buffers a linear share of its value there."""
    start = CALIBRATED_FROM_BYTES / NRANKS
    at = (local_bytes / MIB) ** 0.5 if local_bytes >= start else (start / MIB) ** 0.5 * local_bytes / start
    return per_sqrt_mib * at * (chans / SINGLE_SERVER_CHANNELS) ** 0.5


def startup_us(tc, op, size, chans=SINGLE_SERVER_CHANNELS):
    """Start-up before the first flow (plan start_ps, then the flow's hop) and the hop itself. The start-up holds
    the ring kinds' local write, S/n bytes at the kind's local rate for 24 channels, scaled to the channels that
    do it (collective_tuner.c local_write_bytes), and their channels' spread."""
    c = tc["calib"][op]
    share = min(1.0, size / CALIBRATED_FROM_BYTES)
    local = c["local"] * chans / SINGLE_SERVER_CHANNELS
    write_us = size / NRANKS / (local * 1e3) if local > 0 else 0.0
    spread = spread_us(c["spread"], size / NRANKS, chans) if c["spread"] > 0 else 0.0
    return tc["base_lat"] + c["startup"] * share + write_us + spread, tc["hop"]


def collective_terms(tc, op, chans, size):
    """(fixed us, wire bytes one channel moves in sequence, steps, flows a GPU sends per step, wire per step)."""
    eff = tc["calib"][op]["eff"]
    s, hop = startup_us(tc, op, size, chans)
    if op == "allreduce":
        chunk = ceil_div(size, NRANKS * chans)
        return s + 2 * hop, 2 * chunk / eff, 2, chunk / eff
    if op in ("allgather", "reducescatter"):
        chunk = ceil_div(size // NRANKS, chans)
        return s + hop, chunk / eff, 1, chunk / eff
    ch_bytes = ceil_div(size, chans)  # broadcast, reduce: channel 0 holds the most
    chunk = min(CHAIN_CHUNK_BYTES, ch_bytes)
    nchunks = ceil_div(ch_bytes, chunk)
    return s + nchunks * hop, ch_bytes / eff, nchunks, chunk / eff


def collective_us(tc, op, chans, size, cap, link=True):
    fixed, wire, steps, step_wire = collective_terms(tc, op, chans, size)
    t_cap = wire / (cap * 1e3)
    if not link:
        return fixed + t_cap
    if op in ("broadcast", "reduce"):
        # the channels' chunk flows drift apart, so one channel's hop fills with
        # another's bytes: the link carries all C channels' wire bytes back to back
        s, hop = startup_us(tc, op, size)
        return max(fixed + t_cap, s + hop + chans * wire / (LINK_GBS * 1e3))
    # ring: each step's C flows leave one GPU together over its link
    t_link = steps * chans * step_wire / (LINK_GBS * 1e3)
    return fixed + max(t_cap, t_link)


def p2p_terms(tc, op, chans, size):
    """(fixed us, payload bytes of one flow, k, m, wire bytes of one flow)."""
    P = pow2_up(chans)
    nbytes = size // NRANKS if op == "alltoall" else size  # a peer's bytes
    k = p2p_parts(P, NRANKS, nbytes)
    m = p2p_sharing(P, k, NRANKS) if op == "alltoall" else 1
    s, hop = startup_us(tc, op, size)
    return s + hop, nbytes, k, m, nbytes / tc["calib"][op]["eff"]


def p2p_us(tc, op, chans, size, alone, shared, link=True):
    fixed, nbytes, k, m, wire = p2p_terms(tc, op, chans, size)
    rate = k * (alone if m == 1 else shared / m)  # payload GB/s of the flow
    t = nbytes / (rate * 1e3)
    if link:  # one flow leaves each GPU
        t = max(t, wire / (LINK_GBS * 1e3))
    return fixed + t


def fit_inverse(points):
    """Least-squares x of sum(((fixed + a x - t) / t)^2) over (fixed, a, t); returns 1 / x."""
    num = sum(a * (t - fixed) / (t * t) for fixed, a, t in points)
    den = sum(a * a / (t * t) for fixed, a, t in points)
    return den / num


def rel(model, real):
    return 100.0 * (model - real) / real


def print_rows(title, rows, predict, detail):
    print(title)
    for chans, op, size, t in rows:
        m = predict(chans, op, size)
        tag = "fit" if chans in FIT_CHANNELS else "printed only"
        print("  C=%2d %-13s %5d MiB %s real %9.2f us  model %9.2f us  %+6.1f%%  (%s)"
              % (chans, op, size // MIB, detail(chans, op, size), t, m, rel(m, t), tag))


def main():
    sweep = sys.argv[1] if len(sys.argv) > 1 else SWEEP
    tuner = sys.argv[2] if len(sys.argv) > 2 else TUNER
    try:
        rows = read_sweep(sweep)
        tc = read_tuner(tuner)
    except OSError as e:
        sys.exit("fit_channel_caps.py: %s" % e)
    print("sweep: %s (%d rows)" % (os.path.relpath(sweep), len(rows)))
    print("model constants from %s: Simple baseLat %.1f us, NVLink hop %.1f us; link %.0f GB/s"
          % (os.path.relpath(tuner), tc["base_lat"], tc["hop"], LINK_GBS))
    print("fit: least squares of the relative time error on C in %s, all sizes\n"
          % " ".join(map(str, FIT_CHANNELS)))
    mismatches = []

    def report(name, unit, fitted, committed, used, pts):
        ok = round(fitted, 1) == round(committed, 1)
        print("%s: fitted %.2f -> %.1f %s, committed %.1f %s; rows used: %s"
              % (name, fitted, fitted, unit, committed, "(same)" if ok else "(DIFFERS)", used))
        if not ok:
            mismatches.append("%s %.1f fitted vs %.1f committed" % (name, fitted, committed))
            for label, cap in (("fitted", fitted), ("committed", committed)):
                errs = [(fixed + a / cap - t) / t for fixed, a, t in pts]
                print("  at the %s %.2f: sum of squared relative errors %.6f, worst fitted row %+.1f%%"
                      % (label, cap, sum(e * e for e in errs), 100 * max(errs, key=abs)))

    for op in COLLECTIVES:
        mine = [r for r in rows if r[1] == op]
        used = [r for r in mine if r[0] in FIT_CHANNELS]
        pts = []
        for chans, _, size, t in used:
            fixed, wire, _, _ = collective_terms(tc, op, chans, size)
            pts.append((fixed, wire / 1e3, t))
        cap = fit_inverse(pts)
        c = tc["calib"][op]
        report("%s channel_gbps" % op, "GB/s wire per channel", cap, c["cap"],
               "%d rows, C %s" % (len(used), ",".join(map(str, FIT_CHANNELS))), pts)
        print("  efficiency %.3f, start-up %.1f us (as committed)" % (c["eff"], c["startup"]))
        committed = c["cap"]

        def detail(chans, op_, size):
            _, _, steps, _ = collective_terms(tc, op_, chans, size)
            binds = collective_us(tc, op_, chans, size, committed) > collective_us(
                tc, op_, chans, size, committed, link=False) + 1e-9
            return "steps %3d %-4s" % (steps, "link" if binds else "cap")

        print_rows("  rows, committed cap:", mine,
                   lambda ch, o, s: collective_us(tc, o, ch, s, committed), detail)
        print()

    # p2p: send/recv first (one round per channel), then all-to-all rows whose two rounds share
    sr = [r for r in rows if r[1] == "sendrecv"]
    used = [r for r in sr if r[0] in FIT_CHANNELS]
    pts = []
    for chans, op, size, t in used:
        fixed, nbytes, k, _, _ = p2p_terms(tc, op, chans, size)
        pts.append((fixed, nbytes / (k * 1e3), t))
    alone = fit_inverse(pts)
    report("P2P_CHANNEL_GBS", "GB/s payload per channel", alone, tc["p2p"],
           "%d send/recv rows, C %s" % (len(used), ",".join(map(str, FIT_CHANNELS))), pts)

    a2a = [r for r in rows if r[1] == "alltoall"]
    used = [r for r in a2a if r[0] in FIT_CHANNELS and p2p_terms(tc, r[1], r[0], r[2])[3] == 2]
    pts = []
    for chans, op, size, t in used:
        fixed, nbytes, k, m, _ = p2p_terms(tc, op, chans, size)
        pts.append((fixed, nbytes * m / (k * 1e3), t))
    shared = fit_inverse(pts)
    report("P2P_SHARED_CHANNEL_GBS", "GB/s payload per channel in all", shared, tc["p2p_shared"],
           "%d all-to-all rows where two rounds share a channel (%s)"
           % (len(used), ", ".join("C=%d %d MiB" % (r[0], r[2] // MIB) for r in used)), pts)

    def p2p_detail(chans, op, size):
        _, _, k, m, _ = p2p_terms(tc, op, chans, size)
        return "P %2d k %2d m %d" % (pow2_up(chans), k, m)

    print_rows("  rows, committed rates (m = 1 all-to-all rows and C 12/16: predicted only):", sr + a2a,
               lambda ch, o, s: p2p_us(tc, o, ch, s, tc["p2p"], tc["p2p_shared"]), p2p_detail)

    print()
    if mismatches:
        print("DIFFERS from bridge/collectives/collective_tuner.c (kept there): %s" % "; ".join(mismatches))
    else:
        print("every fitted cap equals the committed constant at one decimal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
