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
 *     is an error, except in worker mode (rollback: see below).
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
    uint64_t packet_hops; /* packets transmitted over any link */
    uint64_t events;      /* simulator events executed */
    uint64_t bytes_delivered;
} hs_fabric_stats;

/* Builds the topology the scenario describes. NULL on error, with a message in err. */
hs_fabric *hs_fabric_create(const hs_scenario *sc, char *err, size_t errlen);

/* 0 on success; -1 with a message in err (unknown GPU, start in the past, zero bytes, duplicate id). */
int hs_fabric_add_flow(hs_fabric *f, uint64_t flow_id, uint32_t src_gpu, uint32_t dst_gpu, uint64_t bytes,
                       uint64_t start_ps, char *err, size_t errlen);

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
 * spineN, edgeN/aggN/coreN (fat_tree): e.g. "nic3>leaf0", "leaf0>spine1", "gpu2>nic2" (PCIe).
 */
typedef struct hs_fabric_link_stats {
    char name[48];
    double gbps;    /* line rate of this direction */
    uint64_t bytes; /* transmitted: data and control, retransmissions included */
    uint64_t packets;
    uint64_t pfc_pauses;      /* PFC XOFF frames that paused this port */
    uint64_t pfc_paused_ps;   /* time this port's data priority spent paused (up to now) */
    uint64_t ecn_marks;       /* data packets CE-marked when leaving this port */
    uint64_t drops;           /* packets dropped by the switch buffer while queueing here */
    uint64_t retransmissions; /* data packets a NIC sent again (go-back-N) over this link */
    uint64_t cnps;            /* congestion notifications sent over this link */
    uint64_t max_queue_bytes; /* deepest data queue at this port (NIC ports: 0) */
} hs_fabric_link_stats;

/* Number of links (directions); indices 0 .. count-1 are stable for a fabric. */
size_t hs_fabric_link_count(const hs_fabric *f);

/* 0 and *out filled; -1 when i is out of range. */
int hs_fabric_get_link_stats(const hs_fabric *f, size_t i, hs_fabric_link_stats *out);

/*
 * Link sampling, for statistics over time (hysim run --stats). Once enabled
 * (before the first flow is added), the model calls fn for every multiple t
 * of interval_ps (t > 0) that it simulates through, with every link's
 * counters as they stand at t before any other event at t. Sampling only
 * reads the model: no flow's timing changes. It runs while flows are in the
 * model; the points of an idle stretch are reported (with the counters
 * unchanged) when the next flow is added. Off unless enabled: costs nothing.
 * 0, or -1 with a message in err (interval 0, no fn, flows already added).
 *
 * Worker mode (below): a rollback may change what the worker sampled ahead,
 * so a sample is delivered only once final, at t <= the safe time: from
 * hs_fabric_next_completion or hs_fabric_set_safe_time, in time order, each
 * once, with the counters of a run that had every flow from the start. A
 * caller that samples a worker hands over its safe time as it advances (at
 * the end, the fabric's time), or receives nothing. fn may call the fabric's
 * query functions (link statistics, now).
 */
typedef struct hs_fabric_link_sample {
    uint64_t bytes;         /* transmitted up to t (as hs_fabric_link_stats.bytes) */
    uint64_t queue_bytes;   /* data queued at this port at t (NIC ports: 0) */
    uint64_t pfc_paused_ps; /* paused time up to t */
} hs_fabric_link_sample;

typedef void (*hs_fabric_sample_fn)(void *ctx, uint64_t t_ps, const hs_fabric_link_sample *links, size_t nlinks);

int hs_fabric_sample_links(hs_fabric *f, uint64_t interval_ps, hs_fabric_sample_fn fn, void *ctx, char *err,
                           size_t errlen);

/*
 * Worker mode: checkpoints and rollback.
 *
 * hs_fabric_create_opts(sc, &o, ...) with o.worker = 1 (or hs_fabric_create
 * with HYSIM_FABRIC_WORKER=1 in the environment) runs the model in a worker
 * process the calls above are forwarded to; the calling process never touches
 * ns-3, so it may hold several such fabrics. The worker forks a paused copy of
 * itself (a checkpoint, copy on write) at time 0 and whenever its time reaches
 * a multiple of checkpoint_interval_ps, keeping the newest checkpoints_max.
 * The worker and its checkpoints die with the calling process (any exit,
 * SIGKILL included) and with hs_fabric_destroy; a worker that dies or a fork
 * that fails makes the call fail with a message. In-process mode (the
 * default) keeps every rule above and has no checkpoints.
 *
 * Rollback contract (worker mode only):
 *   - hs_fabric_add_flow with start_ps < hs_fabric_now_ps() is accepted: the
 *     fabric resumes its newest checkpoint taken at a time C <= start_ps,
 *     hands it again every flow added after that checkpoint (in the order they
 *     were first added), adds the late flow, and hs_fabric_now_ps() becomes C.
 *     It fails (nothing changes) when no checkpoint that old remains, or when
 *     start_ps is below the safe time.
 *   - Every completion already returned by hs_fabric_next_completion with
 *     finish_ps >= C is withdrawn: hs_fabric_next_revision returns each once
 *     (flow id and the finish time reported before), earliest first, and the
 *     flow counts as in flight again. hs_fabric_next_completion reports it again
 *     as the model re-simulates, with its new finish time (possibly the same).
 *     Completions before C stand.
 *   - Results do not depend on rollbacks: the completions finally reported are
 *     bit-identical to a run that had every flow from the start.
 *   - hs_fabric_generation counts rollbacks; compare it to tell whether
 *     revisions may be pending.
 */
typedef struct hs_fabric_options {
    int worker;                      /* 1: worker process with checkpoints; 0: in this process */
    uint64_t checkpoint_interval_ps; /* 0: the scenario's run.checkpoint_interval_us (100 us) */
    uint32_t checkpoints_max;        /* 0: the scenario's run.checkpoints_max (16); at most 64 */
} hs_fabric_options;

typedef struct hs_fabric_checkpoint_stats {
    uint64_t taken;     /* checkpoints forked since creation */
    uint64_t live;      /* paused checkpoints now */
    uint64_t oldest_ps; /* time of the oldest live one (0 when none) */
    uint64_t rollbacks;
    uint64_t replayed_flows; /* flows handed again to resumed checkpoints */
    uint64_t worker_pid;     /* the process running the model now (0: in-process) */
    /* Flows reach the worker in batches: those added before the next step (or
     * safe time, link statistics, these statistics) in one message, 2048 flows
     * a message. A rollback resumes its checkpoint only then, with the replayed
     * flows in the same batch, so late flows added before the next step cost
     * one resume; what the calls above return is as if it happened at once. */
    uint64_t replay_messages; /* messages that carried replayed flows */
    uint64_t flow_messages;   /* messages that carried flows */
} hs_fabric_checkpoint_stats;

/* As hs_fabric_create, with options (NULL: in-process, ignoring the environment). */
hs_fabric *hs_fabric_create_opts(const hs_scenario *sc, const hs_fabric_options *opts, char *err, size_t errlen);

/* The caller will hand over no flow starting before safe_ps: checkpoints older
 * than the newest one at or before safe_ps are dropped (by the next step or
 * checkpoint statistics), and link samples up to safe_ps are delivered. The
 * safe time only grows. 0 on success; -1 with a message (the worker died).
 * In-process: no effect. */
int hs_fabric_set_safe_time(hs_fabric *f, uint64_t safe_ps, char *err, size_t errlen);

/* 1 and *withdrawn filled with a completion withdrawn by a rollback; 0 when none is left. */
int hs_fabric_next_revision(hs_fabric *f, hs_flow_done *withdrawn);

/* Number of rollbacks so far (0 in-process). */
uint64_t hs_fabric_generation(const hs_fabric *f);

void hs_fabric_get_checkpoint_stats(const hs_fabric *f, hs_fabric_checkpoint_stats *out);

#ifdef __cplusplus
}
#endif
#endif
