/*
 * hysim fabric: the C ABI of the packet-level network model (ns3-glue/).
 *
 * The caller (hysimd) hands over flows — (id, source GPU, destination GPU,
 * bytes, start time) — and steps the model forward; the model reports when
 * each flow's last byte arrives. Times are picoseconds of simulated time.
 *
 * Stepping contract:
 *   - hs_fabric_next_completion(f, limit, &done) runs the model until a flow
 *     completes at a time < limit (returns 1, fabric time = done.finish_ps), or
 *     until every event before `limit` has run (returns 0, fabric time = limit;
 *     events at exactly `limit` have not run yet).
 *   - A flow may be added with start_ps >= hs_fabric_now_ps(); starting earlier
 *     is an error (rollback is not part of this ABI yet).
 *   - Several completions at the same time are returned one call at a time in
 *     flow-id order. Equal-time events are ordered by a canonical key, never by
 *     insertion order, so results do not depend on when a flow was handed over.
 *
 * ns-3 is a process-wide singleton: at most one hs_fabric may exist per process.
 */
#ifndef HYSIM_FABRIC_H
#define HYSIM_FABRIC_H

#include <stddef.h>
#include <stdint.h>

#include "hysim/scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hs_fabric hs_fabric;

typedef struct hs_flow_done {
    uint64_t flow_id;
    uint64_t finish_ps; /* arrival of the last byte at the destination GPU */
} hs_flow_done;

typedef struct hs_fabric_stats {
    uint64_t flows_added;
    uint64_t flows_done;
    uint64_t packet_hops;   /* packets transmitted over any link */
    uint64_t events;        /* simulator events executed */
    uint64_t bytes_delivered;
} hs_fabric_stats;

/* Builds the topology the scenario describes. NULL on error, with a message in err. */
hs_fabric *hs_fabric_create(const hs_scenario *sc, char *err, size_t errlen);

/* 0 on success; -1 with a message in err (unknown GPU, start in the past, zero bytes, duplicate id). */
int hs_fabric_add_flow(hs_fabric *f, uint64_t flow_id, uint32_t src_gpu, uint32_t dst_gpu,
                       uint64_t bytes, uint64_t start_ps, char *err, size_t errlen);

/* See the stepping contract above. */
int hs_fabric_next_completion(hs_fabric *f, uint64_t limit_ps, hs_flow_done *done);

uint64_t hs_fabric_now_ps(const hs_fabric *f);

/* Flows added and not yet reported complete. */
uint64_t hs_fabric_flows_in_flight(const hs_fabric *f);

void hs_fabric_get_stats(const hs_fabric *f, hs_fabric_stats *out);

void hs_fabric_destroy(hs_fabric *f);

/*
 * Per-link statistics, counted by the model since creation. A link here is one
 * direction of a physical link (its sending port), named "FROM>TO" with nodes
 * gpuN, nvsN (NVSwitch of server N), nicN, swN (single_switch), railN, leafN,
 * spineN: e.g. "nic3>leaf0", "leaf0>spine1", "gpu2>nic2" (PCIe).
 */
typedef struct hs_fabric_link_stats {
    char name[48];
    double gbps;               /* line rate of this direction */
    uint64_t bytes;            /* transmitted: data and control, retransmissions included */
    uint64_t packets;
    uint64_t pfc_pauses;       /* PFC XOFF frames that paused this port */
    uint64_t pfc_paused_ps;    /* time this port's data priority spent paused (up to now) */
    uint64_t ecn_marks;        /* data packets CE-marked when leaving this port */
    uint64_t drops;            /* packets dropped by the switch buffer while queueing here */
    uint64_t retransmissions;  /* data packets a NIC sent again (go-back-N) over this link */
    uint64_t cnps;             /* congestion notifications sent over this link */
    uint64_t max_queue_bytes;  /* deepest data queue at this port (NIC ports: 0) */
} hs_fabric_link_stats;

/* Number of links (directions); indices 0 .. count-1 are stable for a fabric. */
size_t hs_fabric_link_count(const hs_fabric *f);

/* 0 and *out filled; -1 when i is out of range. */
int hs_fabric_get_link_stats(const hs_fabric *f, size_t i, hs_fabric_link_stats *out);

#ifdef __cplusplus
}
#endif
#endif
