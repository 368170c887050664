/*
 * hysimd collective internals shared by collective.c (communicators, matching
 * ranks' parts, parts' completion, reports) and collective_algos.c (how each
 * kind becomes fabric flows). Nothing else includes it.
 */
#ifndef HYSIM_BRIDGE_COLLECTIVE_H
#define HYSIM_BRIDGE_COLLECTIVE_H

#include "collective_tuner.h"
#include "daemon_internal.h"

struct hs_comm;
struct hs_p2p_chan;

enum { HS_PART_REACHED = 1, HS_PART_DONE = 2 };                   /* hs_coll.pstate bits */
enum { HS_FLOW_IDLE = 0, HS_FLOW_RUNNING = 1, HS_FLOW_DONE = 2 }; /* hs_coll.fstate */
#define HS_TREE_ROOT UINT32_MAX                                   /* hs_coll.parent of a tree's root */

/*
 * One collective: every rank's part with one (comm_key, seq), or one Send and
 * its Recv (n = 2: part 0 the sender, part 1 the receiver; the same rank
 * when it sends to itself).
 */
typedef struct hs_coll {
    struct hs_comm *comm;
    struct hs_p2p_chan *chan; /* Send/Recv pair: its channel; NULL otherwise */
    bool local;               /* a rank's Send/Recv to itself: a copy within its GPU, no flow */
    uint64_t comm_key;
    uint64_t seq;
    enum hs_coll_kind kind; /* a Send/Recv pair: HS_COLL_SEND */
    uint64_t bytes;
    int32_t root;
    uint32_t n;          /* parts */
    uint32_t comm_ranks; /* the communicator's ranks (a Send/Recv pair has n = 2 parts) */
    uint32_t nparts;     /* parts issued */
    uint32_t parts_done;
    hs_op **parts;   /* [n] (ref) */
    uint8_t *pstate; /* [n] HS_PART_* */
    /* flows: per channel a grid of rows × cols states; its meaning depends on the kind */
    hs_nccl_plan plan; /* algorithm, protocol, channels, wire cost */
    uint32_t rows, cols;
    uint64_t chunk;    /* ring: bytes per flow; chain: bytes per full chunk */
    uint64_t ch_bytes; /* chain: bytes one channel moves */
    uint8_t *fstate;   /* [channels × rows × cols] HS_FLOW_* */
    uint64_t *fmin;    /* [channels × rows × cols] earliest end of each flow (a channel's rate cap); NULL: none */
    uint32_t *left;    /* per rank: AllToAll flows, ring/chain channels not done */
    uint32_t *order;   /* ring: [channels × n] rank at each ring position */
    uint32_t *pos;     /* ring: [channels × n] position of each rank */
    uint32_t *parent;  /* tree: [channels × n] parent rank, HS_TREE_ROOT at the channel's root */
    uint8_t *tdone;    /* tree: [channels × n] rank done with the channel */
    uint64_t flows_running;
} hs_coll;

/* collective.c */
/* Part idx is done at time t (its op completes with its last part). */
void hs_coll_part_done(hs_daemon *d, hs_coll *co, uint32_t idx, uint64_t t);
static inline bool hs_coll_part_reached(const hs_coll *co, uint32_t idx)
{
    return (co->pstate[idx] & HS_PART_REACHED) != 0;
}
static inline bool hs_coll_part_is_done(const hs_coll *co, uint32_t idx)
{
    return (co->pstate[idx] & HS_PART_DONE) != 0;
}
/* "AllReduce", "Send", ... */
const char *hs_coll_kind_name(enum hs_coll_kind k);

/* collective_algos.c */
/*
 * Plans the collective (collective_tuner.c) and sizes its flow grid; called
 * once it is created. server[r]: rank r's server (ranks of a server are
 * consecutive in a ring channel). env_algo/env_proto: the first part's
 * NCCL_ALGO/NCCL_PROTO. Returns −1 after failing the run.
 */
int hs_algo_setup(hs_daemon *d, hs_coll *co, const uint32_t *server, uint32_t env_algo, uint32_t env_proto);
/* Part idx has been reached: starts the flows that can start now. */
void hs_algo_reached(hs_daemon *d, hs_coll *co, uint32_t idx, uint64_t t);
/* Flow (row, col) has completed: marks it, starts what follows, completes parts. */
void hs_algo_flow_done(hs_daemon *d, hs_coll *co, uint32_t row, uint32_t col, uint64_t t);

#endif
