/*
 * What a process asks of hysimd and what it is answered, in the daemon's own
 * types. The session layer (session.c, session_wire.c) translates the wire's
 * messages (bridge/wire/messages.h) into these and answers from hs_answer;
 * the model (timeline, collectives, compute, speculation) sees nothing of
 * the wire (docs/architecture.md, "The wire stops at the session").
 */
#ifndef HYSIM_BRIDGE_REQUESTS_H
#define HYSIM_BRIDGE_REQUESTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "copy_time.h"   /* enum hs_copy_kind */
#include "kernel_time.h" /* hs_kernel_launch */
#include "hysim/coll_kind.h"

/*
 * One rank's part of a collective as its process issued it. seq counts the
 * rank's collectives on the communicator (Send and Recv: its earlier Sends to,
 * or Recvs from, that peer); bytes are one rank's call's (hysim.proto
 * Collective says which for each kind).
 */
typedef struct hs_coll_call {
    uint64_t comm_key;
    uint32_t rank;
    uint64_t seq;
    enum hs_coll_kind kind; /* as sent: hs_coll_attach refuses one it does not know */
    uint64_t bytes;
    int32_t root;    /* Broadcast/Reduce root, Send/Recv peer */
    uint64_t group;  /* its ncclGroupStart/End block (0: none): one operation per stream */
    uint32_t algo;   /* NCCL_ALGO as the process read it (enum hs_nccl_algo; 0: the tuner's) */
    uint32_t proto;  /* NCCL_PROTO (enum hs_nccl_proto; 0: the tuner's) */
    bool has_values; /* a small collective's send bytes (docs/values.md) */
    const uint8_t *values;
    size_t values_len;
    uint32_t dtype, redop; /* NCCL's numbering (element_reduce.h) */
} hs_coll_call;

/* A copy. */
typedef struct hs_copy_call {
    enum hs_copy_kind kind; /* as sent: the timeline refuses one it does not know */
    uint64_t bytes;
    uint32_t peer_gpu; /* D2D between GPUs: the other global GPU */
    bool from_peer;    /* ... bytes flow peer_gpu → the op's GPU (else the other way) */
    bool pageable;     /* H2D/D2H from memory the host stages */
    uint64_t rows;     /* a 2D copy in this many rows (0 or 1: contiguous) */
} hs_copy_call;

enum hs_issued_kind {
    HS_ISSUED_NONE, /* a message without a kind: a protocol violation */
    HS_ISSUED_KERNEL,
    HS_ISSUED_COPY,
    HS_ISSUED_MEMSET,
    HS_ISSUED_EVENT_RECORD,
    HS_ISSUED_WAIT_EVENT,
    HS_ISSUED_STREAM_CREATE,
    HS_ISSUED_STREAM_DESTROY,
    HS_ISSUED_COMM_INIT,
    HS_ISSUED_COMM_DESTROY,
    HS_ISSUED_COLLECTIVE,
};

/* One unit of GPU work on (gpu, stream), in issue order. */
typedef struct hs_issued_op {
    uint64_t host_ns;  /* the process's host time at the call */
    uint32_t gpu;      /* global GPU index */
    uint64_t stream;   /* 0: the GPU's legacy default stream */
    uint64_t reach_ns; /* it reaches its GPU this long after host_ns (interpose/core/api_cost.h) */
    enum hs_issued_kind kind;
    union {
        hs_kernel_launch kernel;
        hs_copy_call copy;
        struct {
            uint64_t bytes, rows;
        } memset;
        uint64_t event;    /* EVENT_RECORD, WAIT_EVENT */
        bool non_blocking; /* STREAM_CREATE */
        struct {
            uint64_t key;
            uint32_t rank, nranks; /* nranks: COMM_INIT */
        } comm;                    /* COMM_INIT, COMM_DESTROY */
        hs_coll_call coll;
    };
} hs_issued_op;

/* What a Wait waits for (hysim.proto Wait.Cond says when each holds). */
enum hs_wait_cond {
    HS_WAIT_STREAM_IDLE,
    HS_WAIT_EVENT_DONE,
    HS_WAIT_DEVICE_IDLE,
    HS_WAIT_PROCESS_IDLE,
    HS_WAIT_THREAD_EXIT,
    HS_WAIT_UNTIL,
    HS_WAIT_COLL_VALUES,
};

/* One rank's call of an ncclCommSplit (color NCCL_SPLIT_NOCOLOR, -1: no new communicator). */
typedef struct hs_split_rank_call {
    uint32_t rank; /* in the parent */
    int32_t color, key;
} hs_split_rank_call;

/* A process's ncclCommSplit calls of the gen-th split of a parent; none: which ranks of it the process holds. */
typedef struct hs_split_request {
    uint64_t host_ns;
    uint64_t parent_key;
    uint32_t parent_nranks;
    uint64_t gen;
    const hs_split_rank_call *calls;
    size_t ncalls;
} hs_split_request;

/* The answer to one call: the new communicator, or none. */
typedef struct hs_split_rank {
    bool none;
    uint64_t comm_key;
    uint32_t rank, nranks;
} hs_split_rank;

/* An event's completion as a Wait's answer carries it. */
typedef struct hs_event_time {
    uint64_t event;
    bool done; /* recorded and completed at or before the answer's now_ns */
    bool recorded;
    uint64_t time_ps; /* if done */
} hs_event_time;

/* An answer to a process (a Wait, a CommSplit, or an error that ends the run). */
typedef struct hs_answer {
    uint64_t now_ns;
    bool done;
    uint64_t id;       /* the Wait's id (0: the one-thread protocol, or not a Wait) */
    const char *error; /* non-NULL: the request failed; the process prints it */
    const hs_event_time *event_times;
    size_t nevent_times;
    const hs_split_rank *split;
    size_t nsplit;
    bool has_values; /* COLL_VALUES: the receive bytes */
    const uint8_t *values;
    size_t values_len;
} hs_answer;

#endif
