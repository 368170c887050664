/*
 * hysimd NCCL tuner: for one collective, the algorithm, protocol and number of
 * channels NCCL would use, and what they cost on the wire (bytes inflation,
 * latencies). Only collective_algos.c includes it.
 */
#ifndef HYSIM_BRIDGE_COLLECTIVE_TUNER_H
#define HYSIM_BRIDGE_COLLECTIVE_TUNER_H

#include <stdint.h>

#include "daemon_internal.h"

/* Most channels a collective may use (NCCL's MAXCHANNELS is 64). */
#define HS_TUNER_MAX_CHANNELS 64

typedef struct hs_nccl_plan {
    enum hs_nccl_algo algo;   /* RING, TREE or NVLS, never AUTO */
    enum hs_nccl_proto proto; /* LL, LL128 or SIMPLE, never AUTO */
    uint32_t channels;        /* ≥ 1 */
    double wire_factor;       /* bytes on the wire per byte of payload (protocol, kernel efficiency) */
    uint64_t start_ps;        /* once per collective: NCCL's base latency plus the calibrated start-up */
    uint64_t hop_ps;          /* per ring step / chain hop: the protocol's per-hop latency */
    uint64_t hop_net_ps;      /* tree: per hop between servers (hop_ps: within one) */
    double channel_gbps;      /* most wire GB/s one flow moves (a channel's, or a p2p peer's); 0 = no cap */
    /* Send/Recv, AllToAll (0 for the others): NCCL's p2p channels per peer P (a power of two), the
     * k of them one peer's bytes are split over, and how many peers' rounds share each of those */
    uint32_t p2p_channels, p2p_parts, p2p_sharing;
    bool nvls_refused; /* NVLS was forced (NCCL_ALGO, nccl.algo) where NCCL has none: the tuner chose instead */
} hs_nccl_plan;

/*
 * The plan for `kind` moving `bytes` (the Collective's size; AllToAll: per
 * peer) over `nranks` ranks (Send/Recv: the communicator's, not the pair's)
 * on `nnodes` servers. env_algo/env_proto: what NCCL_ALGO/NCCL_PROTO
 * said (0 = unset); the scenario's nccl: keys win over them. Tree is
 * AllReduce's only: forced for another kind, it falls back to Ring.
 * Returns 0, or −1 with err set when a choice is unknown.
 */
int hs_tuner_plan(const hs_scenario *sc, enum hs_coll_kind kind, uint64_t bytes, uint32_t nranks, uint32_t nnodes,
                  uint32_t env_algo, uint32_t env_proto, hs_nccl_plan *out, char *err, size_t errlen);

/* "Ring", "Simple", ... */
const char *hs_tuner_algo_name(enum hs_nccl_algo a);
const char *hs_tuner_proto_name(enum hs_nccl_proto p);

#endif
