/*
 * hysimd NCCL tuner: NCCL's own choice of algorithm, protocol and channels,
 * and the cost model the flows then follow.
 *
 * Choice (NCCL 2.28 src/graph/tuning.cc, ncclTopoTuneModel / getAlgoInfo):
 * for each algorithm/protocol, time = latency + bytes / algorithm bandwidth,
 * and the minimum wins. NCCL_ALGO / NCCL_PROTO (sent by the interposer) and
 * the scenario's nccl: keys (which win) force one.
 *   latency   ring: baseLat + nsteps × hwLat (Broadcast/Reduce: one hwLat), where
 *             nsteps = 2(n−1) AllReduce, n−1 AllGather/ReduceScatter, and the
 *             hops that leave a server take the NET hwLat.
 *             baseLat ring {LL 6.6, LL128 14.0, Simple 8.4} µs; hwLat NVLink
 *             ring {0.6, 1.9, 3.4}, NET ring {2.7, 4.0, 14.0} µs.
 *   bandwidth bus bandwidth: Simple 0.8 × the NVLink rate on one server (NCCL's
 *             table on 2 × H200 gives 360 GB/s of 450: 24 channels × 15 GB/s),
 *             across servers the smaller of that and all NICs of a server;
 *             LL128 × 0.92 (NCCL's table: 331.2 / 360); LL the smaller of
 *             half of it and NCCL's llMaxBw for Hopper (141 GB/s one server,
 *             45 GB/s two, 35 more). Ring algorithm bandwidth = bus × n / nsteps.
 * With these numbers the choice on 2 × H200 is NCCL's logged one: AllReduce
 * RING/LL up to 1 MiB, RING/SIMPLE from 4 MiB
 * (bench/real/data/allreduce_nccl_debug_h200x2.txt).
 *
 * Channels: 24 on one NVSwitch server (NCCL 2.28 on 2 × H200: "24 coll
 * channels", same file); across servers one per NIC rail (nics.per_server),
 * so every NIC carries a ring; nccl.channels overrides. As NCCL does, a small
 * collective uses fewer: channels drop while bytes < channels × threads ×
 * threadThreshold (512 × 16 B LL, 640 × 8 B LL128, 512 × 64 B Simple).
 *
 * nccl.calibrated: false drops every latency and efficiency below: flows
 * then move payload × the protocol's wire factor at the link's rate.
 * Wire: LL sends an 8-byte flag with every 8 bytes of data (× 2), LL128 8 bytes
 * of flags per 128-byte line (× 128/120), Simple its data. Calibration
 * (nccl.calibrated, on by default, one server only): NCCL's kernels do not
 * reach the link rate; the measured 2 × H200 figures
 * (bench/real/data/collectives_h200x2.txt, 64 MiB..1 GiB) fit
 * time = start-up + wire bytes / (efficiency × link rate) per kind, and the
 * table below holds each kind's fitted efficiency and start-up. The start-up
 * is a fit, not a mechanism (NCCL's pipeline filling): below 64 MiB a
 * collective gets the share bytes / 64 MiB of it.
 * Tree (double binary tree) is in NCCL's formula but its flows are not
 * modelled yet: the tuner never picks it and forcing it fails with a message.
 */
#include <stdio.h>

#include "collective_tuner.h"

#define NPROTO 4 /* indexed by enum hs_nccl_proto; 0 (AUTO) unused */

static const double BASE_LAT_US[NPROTO] = {0, 6.6, 14.0, 8.4};
static const double HW_LAT_NVLINK_US[NPROTO] = {0, 0.6, 1.9, 3.4};
static const double HW_LAT_NET_US[NPROTO] = {0, 2.7, 4.0, 14.0};
static const uint32_t THREAD_BYTES[NPROTO] = {0, 512 * 16, 640 * 8, 512 * 64};
#define SINGLE_SERVER_CHANNELS 24

#define CALIBRATED_FROM_BYTES (64ull << 20) /* smallest size of the fit */

/* Measured on 2 × H200 (see the file comment): fraction of the link rate, start-up µs. */
typedef struct calib { double efficiency, startup_us; } calib;

static calib calibration(Hysim__CollKind k)
{
    switch (k) {
    case HYSIM__COLL_KIND__ALL_REDUCE: return (calib){0.724, 35.0};
    case HYSIM__COLL_KIND__ALL_GATHER: return (calib){0.596, 24.0};
    case HYSIM__COLL_KIND__REDUCE_SCATTER: return (calib){0.596, 30.0};
    case HYSIM__COLL_KIND__BROADCAST: return (calib){0.816, 10.0};
    case HYSIM__COLL_KIND__REDUCE: return (calib){0.827, 6.0};
    case HYSIM__COLL_KIND__ALL_TO_ALL: return (calib){0.718, 28.0};
    default: return (calib){0.782, 62.0}; /* Send/Recv */
    }
}

const char *hs_tuner_algo_name(enum hs_nccl_algo a)
{
    return a == HS_NCCL_ALGO_RING ? "Ring" : a == HS_NCCL_ALGO_TREE ? "Tree" : "auto";
}

const char *hs_tuner_proto_name(enum hs_nccl_proto p)
{
    return p == HS_NCCL_PROTO_LL ? "LL" : p == HS_NCCL_PROTO_LL128 ? "LL128" : p == HS_NCCL_PROTO_SIMPLE ? "Simple" : "auto";
}

static bool is_ring_kind(Hysim__CollKind k)
{
    return k == HYSIM__COLL_KIND__ALL_REDUCE || k == HYSIM__COLL_KIND__ALL_GATHER ||
           k == HYSIM__COLL_KIND__REDUCE_SCATTER;
}

static bool is_tuned(Hysim__CollKind k)
{
    return is_ring_kind(k) || k == HYSIM__COLL_KIND__BROADCAST || k == HYSIM__COLL_KIND__REDUCE;
}

/* Ring steps of the kind: NCCL's nsteps. */
static uint32_t ring_steps(Hysim__CollKind k, uint32_t n)
{
    if (k == HYSIM__COLL_KIND__ALL_REDUCE)
        return 2 * (n - 1);
    if (is_ring_kind(k))
        return n - 1;
    return n;
}

/* Bus bandwidth in GB/s (bytes) of proto. */
static double bus_gbs(const hs_scenario *sc, enum hs_nccl_proto p, uint32_t nnodes)
{
    double bw = 0.8 * sc->nvlink.gbps_per_gpu / 8.0;
    if (nnodes > 1) {
        double net = sc->nics.per_server * sc->nics.gbps / 8.0;
        bw = net < bw ? net : bw;
    }
    if (p == HS_NCCL_PROTO_LL128)
        return bw * 0.92;
    if (p == HS_NCCL_PROTO_LL) {
        double ll_max = nnodes == 1 ? 141.0 : nnodes == 2 ? 45.0 : 35.0;
        return bw / 2 < ll_max ? bw / 2 : ll_max;
    }
    return bw;
}

static double latency_us(Hysim__CollKind k, enum hs_nccl_proto p, uint32_t n, uint32_t nnodes)
{
    if (!is_ring_kind(k))
        return BASE_LAT_US[p] + (nnodes > 1 ? HW_LAT_NET_US[p] : HW_LAT_NVLINK_US[p]);
    uint32_t steps = ring_steps(k, n);
    uint32_t inter = nnodes > 1 ? (k == HYSIM__COLL_KIND__ALL_REDUCE ? 2 * (nnodes - 1) : nnodes - 1) : 0;
    return BASE_LAT_US[p] + (steps - inter) * HW_LAT_NVLINK_US[p] + inter * HW_LAT_NET_US[p];
}

/* NCCL's nBytes: AllGather and ReduceScatter count the whole buffer. */
static uint64_t tuned_bytes(Hysim__CollKind k, uint64_t bytes, uint32_t n)
{
    return k == HYSIM__COLL_KIND__ALL_GATHER || k == HYSIM__COLL_KIND__REDUCE_SCATTER ? bytes * n : bytes;
}

static double ring_time_us(const hs_scenario *sc, Hysim__CollKind k, enum hs_nccl_proto p, uint64_t nbytes,
                           uint32_t n, uint32_t nnodes)
{
    double algbw = bus_gbs(sc, p, nnodes) * n / ring_steps(k, n);
    return latency_us(k, p, n, nnodes) + (double)nbytes / (1000.0 * algbw);
}

static uint32_t channels_for(const hs_scenario *sc, enum hs_nccl_proto p, uint64_t nbytes, uint32_t nnodes)
{
    uint32_t c = sc->nccl.channels > 0 ? (uint32_t)sc->nccl.channels
                 : nnodes > 1          ? (uint32_t)sc->nics.per_server
                                       : SINGLE_SERVER_CHANNELS;
    if (c > HS_TUNER_MAX_CHANNELS)
        c = HS_TUNER_MAX_CHANNELS;
    while (c > 1 && nbytes < (uint64_t)c * THREAD_BYTES[p])
        c--;
    return c;
}

int hs_tuner_plan(const hs_scenario *sc, Hysim__CollKind kind, uint64_t bytes, uint32_t nranks,
                  uint32_t nnodes, uint32_t env_algo, uint32_t env_proto, hs_nccl_plan *out, char *err,
                  size_t errlen)
{
    enum hs_nccl_algo algo = sc->nccl.algo ? sc->nccl.algo : (enum hs_nccl_algo)env_algo;
    enum hs_nccl_proto proto = sc->nccl.proto ? sc->nccl.proto : (enum hs_nccl_proto)env_proto;
    if (algo > HS_NCCL_ALGO_TREE || proto > HS_NCCL_PROTO_SIMPLE) {
        snprintf(err, errlen, "NCCL algorithm %u / protocol %u: unknown", (unsigned)algo, (unsigned)proto);
        return -1;
    }
    if (algo == HS_NCCL_ALGO_TREE && kind == HYSIM__COLL_KIND__ALL_REDUCE) {
        snprintf(err, errlen, "NCCL_ALGO=Tree (double binary tree) is not modelled yet; use Ring");
        return -1;
    }
    /* NCCL runs Tree only for AllReduce across servers, p2p and AllToAll outside the tuner */
    algo = HS_NCCL_ALGO_RING;
    uint64_t nbytes = tuned_bytes(kind, bytes, nranks);
    if (!is_tuned(kind)) {
        proto = HS_NCCL_PROTO_SIMPLE;
    } else if (proto == HS_NCCL_PROTO_AUTO) {
        double best = 0;
        for (int p = HS_NCCL_PROTO_LL; p <= HS_NCCL_PROTO_SIMPLE; p++) {
            double t = ring_time_us(sc, kind, (enum hs_nccl_proto)p, nbytes, nranks, nnodes);
            if (proto == HS_NCCL_PROTO_AUTO || t < best) {
                best = t;
                proto = (enum hs_nccl_proto)p;
            }
        }
    }
    out->algo = algo;
    out->proto = proto;
    out->channels = is_tuned(kind) ? channels_for(sc, proto, nbytes, nnodes) : 1;
    out->wire_factor = proto == HS_NCCL_PROTO_LL ? 2.0 : proto == HS_NCCL_PROTO_LL128 ? 128.0 / 120.0 : 1.0;
    out->start_ps = out->hop_ps = 0;
    if (!sc->nccl.calibrated)
        return 0; /* the bare link model: payload × protocol factor at the link's rate */
    double start_us = BASE_LAT_US[proto]; /* Send/Recv and AllToAll: Simple's */
    if (nnodes == 1) {
        calib cb = calibration(kind);
        out->wire_factor /= cb.efficiency;
        /* fitted on 64 MiB..1 GiB; smaller buffers get a linear share of it */
        uint64_t total = kind == HYSIM__COLL_KIND__ALL_TO_ALL ? bytes * nranks : nbytes;
        double share = (double)total / (double)CALIBRATED_FROM_BYTES;
        start_us += cb.startup_us * (share < 1 ? share : 1);
    }
    out->start_ps = (uint64_t)(start_us * 1e6);
    out->hop_ps = (uint64_t)((nnodes > 1 ? HW_LAT_NET_US[proto] : HW_LAT_NVLINK_US[proto]) * 1e6);
    return 0;
}
