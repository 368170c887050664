/*
 * hysimd NCCL tuner: NCCL's own choice of algorithm, protocol and channels
 * for a collective, and the cost model (latencies, bandwidths, wire factors,
 * channel caps, calibration) its flows then follow: docs/nccl.md, "The tuner
 * in detail", says which NCCL source and which measurement each number is.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "collective_tuner.h"

#define NPROTO 4 /* indexed by enum hs_nccl_proto; 0 (AUTO) unused */

static const double BASE_LAT_US[NPROTO] = {0, 6.6, 14.0, 8.4};
static const double HW_LAT_NVLINK_US[NPROTO] = {0, 0.6, 1.9, 3.4};
static const double HW_LAT_NET_US[NPROTO] = {0, 2.7, 4.0, 14.0};
static const double TREE_BASE_LAT_US[NPROTO] = {0, 6.8, 14.0, 8.4};
static const double TREE_HW_LAT_NVLINK_US[NPROTO] = {0, 0.6, 1.25, 4.0};
static const double TREE_HW_LAT_NET_US[NPROTO] = {0, 5.0, 8.5, 14.0};
/* NCCL's treeCorrectionFactor[proto][log2(bytes / 64)], 64 B .. 128 MiB; 1 above */
#define TREE_CORRECTION_SIZES 22
static const double TREE_CORRECTION[NPROTO][TREE_CORRECTION_SIZES] = {
    {0},
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .5, .6, .6, .7, .7, .8, .9, .9, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .5, .5, .6, .6, .7, .8, .9},
};
static const uint32_t THREAD_BYTES[NPROTO] = {0, 512 * 16, 640 * 8, 512 * 64};
#define SINGLE_SERVER_CHANNELS 24

#define CALIBRATED_FROM_BYTES (64ull << 20) /* smallest size of the fit */

/* NVLink SHARP (docs/nccl.md, "NVLS"). NCCL 2.28's constants for Hopper, for the choice: NVLS_NCHANNELS_SM90,
 * the NVLS graph's hwLat on NVLink (Simple only, no base latency), nvlsEfficiency. For the flows: the fraction
 * of the link rate the switch path moves, fitted to the 480 GB/s bus bandwidth NCCL's maintainers give for an
 * all-reduce on 8 H100s (algorithm bandwidth 275 GB/s: 9/8 of it on each link, over 450 GB/s). */
#define NVLS_CHANNELS         16
#define NVLS_LATENCY_US       25.0
#define NVLS_TUNER_EFFICIENCY 0.85
#define NVLS_WIRE_EFFICIENCY  0.687
#define NVLS_MIN_CC           9

/* P2P channel rates, GB/s of payload (see the file comment): one channel for one peer; one shared by several */
#define P2P_CHANNEL_GBS        21.8
#define P2P_SHARED_CHANNEL_GBS 29.1
/* NCCL's bounds on one peer's part of a channel on one server: NCCL_P2P_NVL_CHUNKSIZE / 8 and × 32 */
#define P2P_MIN_PART_BYTES (64ull << 10)
#define P2P_MAX_PART_BYTES (16ull << 20)
/* NCCL_P2P_LL_THRESHOLD: a peer's bytes up to P times this go by LL */
#define P2P_LL_THRESHOLD_BYTES (16ull << 10)

/* Measured on H200 (see the file comment): fraction of the link rate, start-up µs, one channel's most wire
 * GB/s (0: p2p, whose channels follow P2P_*_GBS), the GB/s of the ring kinds' local write (0: none), and their
 * channels' spread, µs per square root of the MiB each rank writes locally (0: none). */
typedef struct calib {
    double efficiency, startup_us, channel_gbps, local_gbs, spread_us_per_sqrt_mib;
} calib;

static calib calibration(enum hs_coll_kind k)
{
    switch (k) {
    /* bench/nccl/fit_ring_model.py, on 2 and 4 GPUs (docs/nccl.md, "Bus bandwidth and the GPU count") */
    case HS_COLL_ALL_REDUCE: return (calib){0.8527, 0, 28.3, 1880, 7.76};
    case HS_COLL_ALL_GATHER: return (calib){0.8262, 0, 24.2, 1541, 6.42};
    case HS_COLL_REDUCE_SCATTER: return (calib){0.8463, 0, 31.3, 1437, 7.22};
    /* 2 GPUs (collectives_h200x2.txt) */
    case HS_COLL_BROADCAST: return (calib){0.816, 10.0, 32.3, 0, 0};
    case HS_COLL_REDUCE: return (calib){0.827, 6.0, 52.5, 0, 0};
    case HS_COLL_ALL_TO_ALL: return (calib){0.718, 28.0, 0, 0, 0};
    default: return (calib){0.782, 62.0, 0, 0, 0}; /* Send/Recv */
    }
}

/* A ring kind ends with its last channel: the channels' finishing times drift apart like the square root of
 * the loops each runs (a rank's local bytes), and fewer channels spread less (by the root of their share of
 * the 24 it was fitted at). Fitted from 64 MiB; smaller buffers get a linear share of it. */
static double spread_us(const calib *cb, uint64_t local_bytes, uint32_t nranks, uint32_t channels)
{
    uint64_t from = CALIBRATED_FROM_BYTES / nranks;
    double at = local_bytes >= from ? sqrt((double)local_bytes / (1 << 20))
                                    : sqrt((double)from / (1 << 20)) * (double)local_bytes / (double)from;
    return cb->spread_us_per_sqrt_mib * at * sqrt((double)channels / SINGLE_SERVER_CHANNELS);
}

/* Bytes each rank of a ring kind writes within its own memory between its sends: all-gather's own chunk,
 * reduce-scatter's and all-reduce's reduced chunk (`bytes` is a rank's chunk for the first two). */
static uint64_t local_write_bytes(enum hs_coll_kind k, uint64_t bytes, uint32_t nranks)
{
    if (k == HS_COLL_ALL_REDUCE)
        return bytes / nranks;
    return k == HS_COLL_ALL_GATHER || k == HS_COLL_REDUCE_SCATTER ? bytes : 0;
}

const char *hs_tuner_algo_name(enum hs_nccl_algo a)
{
    return a == HS_NCCL_ALGO_RING ? "Ring" : a == HS_NCCL_ALGO_TREE ? "Tree" : a == HS_NCCL_ALGO_NVLS ? "NVLS" : "auto";
}

const char *hs_tuner_proto_name(enum hs_nccl_proto p)
{
    return p == HS_NCCL_PROTO_LL       ? "LL"
           : p == HS_NCCL_PROTO_LL128  ? "LL128"
           : p == HS_NCCL_PROTO_SIMPLE ? "Simple"
                                       : "auto";
}

/* The kinds NCCL's tuner plans (the others have one way to run). */
static bool is_tuned(enum hs_coll_kind k) { return hs_coll_kind_ring(k) || hs_coll_kind_rooted(k); }

/* Ring steps of the kind: NCCL's nsteps. */
static uint32_t ring_steps(enum hs_coll_kind k, uint32_t n)
{
    if (k == HS_COLL_ALL_REDUCE)
        return 2 * (n - 1);
    if (hs_coll_kind_ring(k))
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

static double latency_us(enum hs_coll_kind k, enum hs_nccl_proto p, uint32_t n, uint32_t nnodes)
{
    if (!hs_coll_kind_ring(k))
        return BASE_LAT_US[p] + (nnodes > 1 ? HW_LAT_NET_US[p] : HW_LAT_NVLINK_US[p]);
    uint32_t steps = ring_steps(k, n);
    uint32_t inter = nnodes > 1 ? (k == HS_COLL_ALL_REDUCE ? 2 * (nnodes - 1) : nnodes - 1) : 0;
    return BASE_LAT_US[p] + (steps - inter) * HW_LAT_NVLINK_US[p] + inter * HW_LAT_NET_US[p];
}

/* NCCL's nBytes: AllGather and ReduceScatter count the whole buffer. */
static uint64_t tuned_bytes(enum hs_coll_kind k, uint64_t bytes, uint32_t n)
{
    return k == HS_COLL_ALL_GATHER || k == HS_COLL_REDUCE_SCATTER ? bytes * n : bytes;
}

static double ring_time_us(const hs_scenario *sc, enum hs_coll_kind k, enum hs_nccl_proto p, uint64_t nbytes,
                           uint32_t n, uint32_t nnodes)
{
    double algbw = bus_gbs(sc, p, nnodes) * n / ring_steps(k, n);
    return latency_us(k, p, n, nnodes) + (double)nbytes / (1000.0 * algbw);
}

static uint32_t log2_floor(uint64_t x)
{
    uint32_t l = 0;
    while (x >>= 1)
        l++;
    return l;
}

/* Tree bus bandwidth in GB/s of proto on `channels` channels (see the file comment). */
static double tree_bus_gbs(const hs_scenario *sc, enum hs_nccl_proto p, uint32_t nnodes, uint32_t channels)
{
    double bw = bus_gbs(sc, HS_NCCL_PROTO_SIMPLE, nnodes);
    double per_ch_max = nnodes == 1 ? 38.7 : nnodes == 2 ? 41.4 : 36.0;
    if (p == HS_NCCL_PROTO_LL) {
        double ll_max = nnodes == 1 ? 141.0 : nnodes == 2 ? 45.0 : 35.0;
        return bw / 3.8 < ll_max ? bw / 3.8 : ll_max;
    }
    if (p == HS_NCCL_PROTO_LL128) {
        double b = bw * (nnodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), cap = channels * 36.7;
        return b < cap ? b : cap;
    }
    double b = bw * 0.92, cap = channels * per_ch_max;
    return b < cap ? b : cap;
}

static double tree_time_us(const hs_scenario *sc, enum hs_nccl_proto p, uint64_t nbytes, uint32_t n, uint32_t nnodes,
                           uint32_t channels)
{
    double lat = TREE_BASE_LAT_US[p] +
                 2 * ((double)(n / nnodes - 1) * TREE_HW_LAT_NVLINK_US[p] + log2_floor(nnodes) * TREE_HW_LAT_NET_US[p]);
    double algbw = tree_bus_gbs(sc, p, nnodes, channels) * 0.5;
    uint32_t l = log2_floor(nbytes >> 6);
    if (nbytes >> 6 && l < TREE_CORRECTION_SIZES)
        algbw *= TREE_CORRECTION[p][l];
    return lat + (double)nbytes / (1000.0 * algbw);
}

/*
 * Whether NCCL would offer NVLS for this collective: all-reduce, all-gather or reduce-scatter on one NVSwitch
 * server of more than 2 GPUs (ncclNvlsInit: gpuCount <= 2 has none; NVLS across servers needs CollNet, and
 * NVLS-Tree is not modelled), Hopper or later, unless the scenario's nccl.nvls or NCCL_NVLS_ENABLE=0 says no.
 */
static bool nvls_offered(const hs_scenario *sc, enum hs_coll_kind k, uint32_t n, uint32_t nnodes)
{
    const char *env = getenv("NCCL_NVLS_ENABLE");
    return hs_coll_kind_ring(k) && nnodes == 1 && n > 2 && sc->gpu.cc_major >= NVLS_MIN_CC &&
           sc->nvlink.gbps_per_gpu > 0 && sc->nccl.nvls && !(env && atoi(env) == 0);
}

/*
 * NCCL's estimate for NVLS (tuning.cc, ncclTopoTuneModel), with the NVLS graph's bandwidth taken as the ring's
 * bus bandwidth: per channel min(bwIntra × efficiency × (C−1)/C × (all-reduce: 2, else (n−1)/n), bwInter);
 * all-reduce's algorithm bandwidth is that × n / (2(n−1)), the others' that itself.
 */
static double nvls_time_us(const hs_scenario *sc, enum hs_coll_kind k, uint64_t nbytes, uint32_t n)
{
    double bus = bus_gbs(sc, HS_NCCL_PROTO_SIMPLE, 1);
    double intra = bus * NVLS_TUNER_EFFICIENCY * (NVLS_CHANNELS - 1) / NVLS_CHANNELS *
                   (k == HS_COLL_ALL_REDUCE ? 2.0 : (double)(n - 1) / n);
    double busbw = intra < bus ? intra : bus;
    double algbw = k == HS_COLL_ALL_REDUCE ? busbw * n / ring_steps(k, n) : busbw;
    return NVLS_LATENCY_US + (double)nbytes / (1000.0 * algbw);
}

/* NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS as a count 1..64; 0 when unset or not a count. */
static uint32_t env_channel_count(const char *var)
{
    const char *v = getenv(var);
    char *end = NULL;
    long n = v ? strtol(v, &end, 10) : 0;
    if (!v || end == v || *end || n < 1)
        return 0;
    return n > HS_TUNER_MAX_CHANNELS ? HS_TUNER_MAX_CHANNELS : (uint32_t)n;
}

/* The communicator's channel count: the topology's, bounded by NCCL's environment, or nccl.channels. */
static uint32_t comm_channels(const hs_scenario *sc, uint32_t nnodes)
{
    uint32_t c = sc->nccl.channels > 0 ? (uint32_t)sc->nccl.channels
                 : nnodes > 1          ? (uint32_t)sc->nics.per_server
                                       : SINGLE_SERVER_CHANNELS;
    if (sc->nccl.channels <= 0) { /* NCCL's environment bounds the topology's count; the scenario's key wins */
        uint32_t lo = env_channel_count("NCCL_MIN_NCHANNELS"), hi = env_channel_count("NCCL_MAX_NCHANNELS");
        if (hi && c > hi)
            c = hi;
        if (lo && c < lo)
            c = lo;
    }
    return c > HS_TUNER_MAX_CHANNELS ? HS_TUNER_MAX_CHANNELS : c;
}

static uint32_t channels_for(const hs_scenario *sc, enum hs_nccl_proto p, uint64_t nbytes, uint32_t nnodes)
{
    uint32_t c = comm_channels(sc, nnodes);
    while (c > 1 && nbytes < (uint64_t)c * THREAD_BYTES[p])
        c--;
    return c;
}

/* NCCL's p2p channels per peer: the communicator's count, bounded by NCCL_MAX/MIN_P2P_NCHANNELS,
 * rounded up to a power of two (ncclTopoComputeP2pChannels). */
static uint32_t p2p_channels(const hs_scenario *sc, uint32_t nnodes)
{
    uint32_t c = comm_channels(sc, nnodes), p = 1;
    if (sc->nccl.channels <= 0) {
        uint32_t lo = env_channel_count("NCCL_MIN_P2P_NCHANNELS"), hi = env_channel_count("NCCL_MAX_P2P_NCHANNELS");
        if (hi && c > hi)
            c = hi;
        if (lo && c < lo)
            c = lo;
    }
    while (p < c)
        p <<= 1;
    return p;
}

/* Channels k one peer's `bytes` are split over, of P, in a communicator of `nranks` (addP2pToPlan). */
static uint32_t p2p_parts(uint32_t P, uint32_t nranks, uint64_t bytes)
{
    uint32_t kmin = P;
    while ((uint64_t)kmin * nranks > P && kmin > 1)
        kmin /= 2;
    uint64_t by_size = bytes / P2P_MIN_PART_BYTES + (bytes % P2P_MIN_PART_BYTES != 0);
    uint32_t k = by_size < kmin ? (uint32_t)(by_size ? by_size : 1) : kmin;
    uint64_t part = bytes / k + (bytes % k != 0);
    while (part > P2P_MAX_PART_BYTES && k <= P / 2) {
        k *= 2;
        part = bytes / k + (bytes % k != 0);
    }
    return k;
}

/* Rounds of `rounds` that share each channel of one round split over k of P (rounds r ≡ r' mod P/k). */
static uint32_t p2p_sharing(uint32_t P, uint32_t k, uint32_t rounds)
{
    uint32_t stride = P / k;
    return stride >= rounds ? 1 : (rounds + stride - 1) / stride;
}

/*
 * Most wire GB/s one peer gets of a p2p channel that `sharing` rounds use:
 * the fitted payload rates over the kind's efficiency, or nccl.channel_gbps
 * (a channel's wire GB/s) split evenly; 0 (no cap) where that key is 0.
 */
static double p2p_channel_share(const hs_scenario *sc, double efficiency, uint32_t sharing)
{
    if (sc->nccl.channel_gbps >= 0)
        return sc->nccl.channel_gbps / sharing;
    return (sharing == 1 ? P2P_CHANNEL_GBS : P2P_SHARED_CHANNEL_GBS / sharing) / efficiency;
}

/* NVLS's plan: its channels, its latency once (no steps, no hops), the switch path's efficiency, no cap. */
static int nvls_plan(const hs_scenario *sc, hs_nccl_plan *out)
{
    out->channels = NVLS_CHANNELS;
    out->wire_factor = sc->nccl.calibrated ? 1.0 / NVLS_WIRE_EFFICIENCY : 1.0;
    out->start_ps = sc->nccl.calibrated ? (uint64_t)(NVLS_LATENCY_US * 1e6) : 0;
    out->hop_ps = out->hop_net_ps = 0;
    out->channel_gbps = 0;
    out->p2p_channels = out->p2p_parts = out->p2p_sharing = 0;
    return 0;
}

int hs_tuner_plan(const hs_scenario *sc, enum hs_coll_kind kind, uint64_t bytes, uint32_t nranks, uint32_t nnodes,
                  uint32_t env_algo, uint32_t env_proto, hs_nccl_plan *out, char *err, size_t errlen)
{
    enum hs_nccl_algo algo = sc->nccl.algo ? sc->nccl.algo : (enum hs_nccl_algo)env_algo;
    enum hs_nccl_proto proto = sc->nccl.proto ? sc->nccl.proto : (enum hs_nccl_proto)env_proto;
    if (algo > HS_NCCL_ALGO_NVLS || proto > HS_NCCL_PROTO_SIMPLE) {
        snprintf(err, errlen, "NCCL algorithm %u / protocol %u: unknown", (unsigned)algo, (unsigned)proto);
        return -1;
    }
    /* NCCL has a tree for AllReduce only: the others fall back to Ring (see the file comment) */
    bool tree_ok = kind == HS_COLL_ALL_REDUCE && nranks > 1;
    bool nvls_ok = nvls_offered(sc, kind, nranks, nnodes);
    out->nvls_refused = algo == HS_NCCL_ALGO_NVLS && !nvls_ok;
    if (out->nvls_refused)
        algo = HS_NCCL_ALGO_AUTO; /* forced where NCCL has none: the tuner chooses among the others */
    else if (algo == HS_NCCL_ALGO_NVLS)
        proto = HS_NCCL_PROTO_SIMPLE; /* NVLS runs Simple only */
    else if (!tree_ok && algo == HS_NCCL_ALGO_TREE)
        algo = HS_NCCL_ALGO_RING;
    uint64_t nbytes = tuned_bytes(kind, bytes, nranks);
    if (!is_tuned(kind)) {
        proto = HS_NCCL_PROTO_SIMPLE;
    } else if (proto == HS_NCCL_PROTO_AUTO || algo == HS_NCCL_ALGO_AUTO) {
        /* the least time over the (algorithm, protocol) pairs left open, as NCCL's getAlgoInfo */
        double best = 0;
        enum hs_nccl_algo best_a = HS_NCCL_ALGO_RING;
        enum hs_nccl_proto best_p = HS_NCCL_PROTO_SIMPLE;
        bool found = false;
        for (int a = HS_NCCL_ALGO_RING; a <= HS_NCCL_ALGO_NVLS; a++) {
            if ((algo != HS_NCCL_ALGO_AUTO && a != (int)algo) || (a == HS_NCCL_ALGO_TREE && !tree_ok) ||
                (a == HS_NCCL_ALGO_NVLS && !nvls_ok))
                continue;
            for (int p = HS_NCCL_PROTO_LL; p <= HS_NCCL_PROTO_SIMPLE; p++) {
                if ((proto != HS_NCCL_PROTO_AUTO && p != (int)proto) ||
                    (a == HS_NCCL_ALGO_NVLS && p != HS_NCCL_PROTO_SIMPLE))
                    continue;
                enum hs_nccl_proto pp = (enum hs_nccl_proto)p;
                double t = a == HS_NCCL_ALGO_TREE
                               ? tree_time_us(sc, pp, nbytes, nranks, nnodes, channels_for(sc, pp, nbytes, nnodes))
                           : a == HS_NCCL_ALGO_NVLS ? nvls_time_us(sc, kind, nbytes, nranks)
                                                    : ring_time_us(sc, kind, pp, nbytes, nranks, nnodes);
                if (!found || t < best) {
                    found = true;
                    best = t;
                    best_a = (enum hs_nccl_algo)a;
                    best_p = pp;
                }
            }
        }
        algo = best_a;
        proto = best_p;
    }
    if (algo == HS_NCCL_ALGO_AUTO)
        algo = HS_NCCL_ALGO_RING; /* kinds outside the tuner */
    out->algo = algo;
    out->proto = proto;
    out->channels = is_tuned(kind) ? channels_for(sc, proto, nbytes, nnodes) : 1;
    if (algo == HS_NCCL_ALGO_NVLS)
        return nvls_plan(sc, out);
    if (algo == HS_NCCL_ALGO_TREE && out->channels < 2)
        out->channels = 2; /* NCCL always runs both trees of the double binary tree */
    out->wire_factor = proto == HS_NCCL_PROTO_LL ? 2.0 : proto == HS_NCCL_PROTO_LL128 ? 128.0 / 120.0 : 1.0;
    out->start_ps = out->hop_ps = out->hop_net_ps = 0;
    out->channel_gbps = 0;
    out->p2p_channels = out->p2p_parts = out->p2p_sharing = 0;
    if (!is_tuned(kind)) {
        out->p2p_channels = p2p_channels(sc, nnodes);
        out->p2p_parts = p2p_parts(out->p2p_channels, nranks, bytes);
        /* AllToAll: every round, its own GPU's included, is one peer's; a Send/Recv pair is one round */
        out->p2p_sharing = kind == HS_COLL_ALL_TO_ALL ? p2p_sharing(out->p2p_channels, out->p2p_parts, nranks) : 1;
    }
    if (!sc->nccl.calibrated)
        return 0; /* the bare link model: payload × protocol factor at the link's rate */
    bool tree = algo == HS_NCCL_ALGO_TREE;
    double start_us = (tree ? TREE_BASE_LAT_US : BASE_LAT_US)[proto]; /* Send/Recv and AllToAll: Simple's */
    calib cb = calibration(kind);
    if (nnodes == 1) {
        out->wire_factor /= cb.efficiency;
        /* fitted on 64 MiB..1 GiB; smaller buffers get a linear share of it */
        uint64_t total = kind == HS_COLL_ALL_TO_ALL ? bytes * nranks : nbytes;
        double share = (double)total / (double)CALIBRATED_FROM_BYTES;
        start_us += cb.startup_us * (share < 1 ? share : 1);
        out->channel_gbps = sc->nccl.channel_gbps < 0 ? cb.channel_gbps : sc->nccl.channel_gbps;
        bool ll = bytes <= (uint64_t)out->p2p_channels * P2P_LL_THRESHOLD_BYTES; /* NCCL's LL: not measured */
        if (out->p2p_parts) /* one flow per peer stands for its k channels */
            out->channel_gbps = ll ? 0 : out->p2p_parts * p2p_channel_share(sc, cb.efficiency, out->p2p_sharing);
    }
    /* the ring's local write shares the thread blocks with the sends, so its time adds to theirs, at the rate of
     * the channels that do it (local_gbs: all SINGLE_SERVER_CHANNELS of them), whatever carries the sends; so
     * does the spread of its channels' finishing times */
    if (cb.local_gbs > 0 && algo == HS_NCCL_ALGO_RING && nranks > 1) {
        uint64_t local = local_write_bytes(kind, bytes, nranks);
        start_us += (double)local / (cb.local_gbs * 1e3 * out->channels / SINGLE_SERVER_CHANNELS) +
                    spread_us(&cb, local, nranks, out->channels);
    }
    out->start_ps = (uint64_t)(start_us * 1e6);
    if (tree) {
        out->hop_ps = (uint64_t)(TREE_HW_LAT_NVLINK_US[proto] * 1e6);
        out->hop_net_ps = (uint64_t)(TREE_HW_LAT_NET_US[proto] * 1e6);
        return 0;
    }
    out->hop_ps = (uint64_t)((nnodes > 1 ? HW_LAT_NET_US[proto] : HW_LAT_NVLINK_US[proto]) * 1e6);
    out->hop_net_ps = out->hop_ps;
    return 0;
}
