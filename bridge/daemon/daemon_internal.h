/*
 * hysimd internals, shared by the daemon's modules and by nothing else:
 *   u64map.c      a small uint64 → pointer hash map
 *   hysimd.c      create/run/destroy, the listening socket, the poll loop,
 *                 children (pidfds), failure and kill handling
 *   session.c     one session per connection: frames in, replies out
 *   session_wire.c  the wire's messages into the daemon's own types (requests.h)
 *   timeline.c    per-GPU streams, ops, their dependencies, the event heap
 *   collective.c  communicators, matching ranks' parts into collectives and
 *                 Send/Recv pairs, parts' completion, reports
 *   collective_algos.c  each kind expanded into fabric flows as NCCL runs it
 *   sim_loop.c   global safe time, stepping the timeline and the fabric,
 *                 answers to Wait, deadlock detection
 *   stall.c       the stall watchdog: wall time without simulated progress
 *   background.c  other tenants' traffic from the scenario (background.h)
 *   stats_output.c  the files of `hysim run --stats` (stats_output.h)
 *   speculate.c   run.mode: optimistic: answers by a forked copy of the
 *                 daemon that simulates ahead; later revisions counted
 *   fabric_speculation.c  the fabric as the clock sees it: with a worker-
 *                 process fabric (run.fabric) it runs ahead while hysimd
 *                 waits; completions are held back until the safe time
 *
 * Times: picoseconds of simulated time (`_ps`) inside the daemon; the wire
 * carries host nanoseconds (`_ns`), converted as ns × 1000.
 */
#ifndef HYSIM_BRIDGE_DAEMON_INTERNAL_H
#define HYSIM_BRIDGE_DAEMON_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "frame.h"
#include "hysim/fabric.h"
#include "hysimd.h"
#include "requests.h"

#define HS_TIME_INF UINT64_MAX

/* ------------------------------------------------------------------ misc */

void *hs_xcalloc(size_t n, size_t size); /* aborts with a message when memory runs out */
void *hs_xrealloc(void *p, size_t n, size_t size);
/* Grows *arr (element size `size`) so that index `need - 1` fits. */
void hs_grow(void **arr, size_t *cap, size_t need, size_t size);
/* Appends printf-style text to buf[at..len); returns the new end (saturates past len). */
size_t hs_appendf(char *buf, size_t len, size_t at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static inline uint64_t hs_min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static inline uint64_t hs_max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }
/* ns → ps, saturating. */
static inline uint64_t hs_ns_to_ps(uint64_t ns) { return ns > HS_TIME_INF / 1000 ? HS_TIME_INF : ns * 1000; }
/* ps → ns, rounded up. */
static inline uint64_t hs_ps_to_ns_ceil(uint64_t ps) { return ps / 1000 + (ps % 1000 != 0); }

/* ---------------------------------------------------------------- u64map */

typedef struct hs_u64map {
    uint64_t *keys;
    void **vals;
    uint8_t *used;
    size_t cap, len;
} hs_u64map;

void *hs_u64map_get(const hs_u64map *m, uint64_t key);
void hs_u64map_put(hs_u64map *m, uint64_t key, void *val); /* inserts or replaces */
void *hs_u64map_del(hs_u64map *m, uint64_t key);           /* returns the removed value */
void hs_u64map_free(hs_u64map *m);

/* ------------------------------------------------------------- timeline */

struct hs_session;
struct hs_coll;

/* One rank's part of a collective carried by an op: coll->parts[idx]. */
typedef struct hs_op_part {
    struct hs_coll *coll;
    uint32_t idx;
} hs_op_part;

enum hs_op_kind {
    HS_OP_KERNEL,
    HS_OP_COPY, /* H2D, D2H, H2H, same-device D2D: fixed duration */
    HS_OP_MEMSET,
    HS_OP_PEER_COPY,  /* D2D between two GPUs: one fabric flow */
    HS_OP_RECORD,     /* EventRecord: zero duration */
    HS_OP_WAIT_EVENT, /* StreamWaitEvent: zero duration, depends on the record */
    HS_OP_COLLECTIVE, /* one rank's part of a collective */
};

/*
 * One unit of GPU work. Reference counted: held by its stream (as tail), the
 * session's event table (last record), the legacy-stream bookkeeping, heap
 * entries, predecessors' successor lists, flows and collectives.
 */
typedef struct hs_op {
    int refs;
    uint8_t kind;
    uint8_t copy_kind;     /* enum hs_copy_kind, for HS_OP_COPY */
    uint8_t kernel_source; /* enum hs_kernel_source (kernel_time.h), for HS_OP_KERNEL */
    bool started, done;
    struct hs_session *s;
    uint32_t gpu;      /* global GPU index */
    uint32_t peer;     /* HS_OP_PEER_COPY: the other GPU */
    bool from_peer;    /* HS_OP_PEER_COPY: bytes flow peer → gpu (else gpu → peer) */
    uint32_t npending; /* predecessors not yet done */
    uint64_t seq;      /* per-session op number: the canonical tie-break */
    uint64_t issue_ps; /* host time of issue */
    uint64_t ready_ps; /* max(issue, predecessors' completions) */
    uint64_t start_ps, done_ps;
    uint64_t dur_ps;        /* fixed-duration ops */
    uint64_t launch_gap_ps; /* HS_OP_KERNEL: the GPU's idle time after the op before it on its stream */
    uint64_t bytes;
    uint64_t stream; /* the stream it was issued on (trace tracks) */
    uint32_t label;  /* its name in run_stats (kernel, collective kind; 0: none) */
    /* HS_OP_COLLECTIVE: its parts; several when parts of one NCCL group on
     * one stream were fused (hs_coll_call.group). Done when all parts are. */
    uint64_t group;
    hs_op_part *parts;
    uint32_t nparts, parts_left;
    struct hs_op **succ;
    uint32_t nsucc, capsucc;
} hs_op;

typedef struct hs_stream {
    uint64_t id;
    bool non_blocking;
    bool destroyed;
    hs_op *tail; /* last op issued on it (ref), NULL if none */
} hs_stream;

/* One GPU as one session sees it. */
typedef struct hs_sgpu {
    hs_stream legacy;  /* stream 0 */
    hs_u64map streams; /* id → hs_stream* (live ones) */
    hs_stream **all;   /* every stream created, destroyed ones too */
    size_t nall, capall;
    uint64_t pending; /* ops issued and not done */
    uint64_t last_done_ps;
} hs_sgpu;

void hs_op_ref(hs_op *op);
void hs_op_unref(hs_op *op);

void hs_tl_session_init(struct hs_session *s);
void hs_tl_session_free(struct hs_session *s);
/* Looks up (gpu, stream) of a session; gpu is global and already range-checked. */
hs_stream *hs_tl_stream(struct hs_session *s, uint32_t gpu, uint64_t id);

/* Ingests one op a process issued. 0, or -1 after hs_daemon_fail (protocol violation). */
int hs_tl_ingest(struct hs_daemon *d, struct hs_session *s, const hs_issued_op *op);

uint64_t hs_tl_next_time(const struct hs_daemon *d); /* HS_TIME_INF if the heap is empty */
bool hs_tl_empty(const struct hs_daemon *d);
void hs_tl_process_one(struct hs_daemon *d); /* pops and runs the earliest event */
/* Completes a flow-driven op (peer copy, collective part) at time t. */
void hs_tl_op_complete(struct hs_daemon *d, hs_op *op, uint64_t t);
/* One collective part of op is done at time t; the op completes with its last part. */
void hs_tl_part_done(struct hs_daemon *d, hs_op *op, uint64_t t);
/* Time of a copy of `bytes` within one GPU's memory (read + write through HBM), in ps. */
uint64_t hs_tl_local_copy_ps(const struct hs_daemon *d, uint64_t bytes);
/*
 * Schedules the end of collective c's copy within op's GPU at time t: then
 * hs_coll_flow_done(c, 0, 0, t), as if its one flow had completed.
 */
void hs_tl_local_copy_at(struct hs_daemon *d, hs_op *op, struct hs_coll *c, uint64_t t);
/* Schedules hs_coll_flow_done(c, step, rank, t) at time t (op: any part of c, held until then). */
void hs_tl_coll_flow_at(struct hs_daemon *d, hs_op *op, struct hs_coll *c, uint32_t step, uint32_t rank, uint64_t t);
void hs_tl_free(struct hs_daemon *d);

/* ----------------------------------------------------------- collective */

int hs_coll_comm_init(struct hs_daemon *d, struct hs_session *s, const hs_issued_op *op);
int hs_coll_comm_destroy(struct hs_daemon *d, struct hs_session *s, const hs_issued_op *op);
/*
 * Attaches a collective part to op (a new op, or the stream's tail when the
 * part joins its group) and to its (comm, seq) or Send/Recv pair; validates.
 * 0 or -1 after hs_daemon_fail.
 */
int hs_coll_attach(struct hs_daemon *d, struct hs_session *s, const hs_issued_op *msg, hs_op *op);
/*
 * Whether every rank of comm `key` (of nranks) has joined, in any process;
 * ranks[0..*mine) get the ranks session s joined (ranks: room for nranks).
 */
bool hs_coll_comm_joined(const struct hs_daemon *d, uint64_t key, uint32_t nranks, const struct hs_session *s,
                         uint32_t *ranks, uint32_t *mine);
/* collective_values.c: a small collective part's send bytes (hs_coll_call.values), by (comm, seq), issued at
 * issue_ps (its host time). */
void hs_cvals_part(struct hs_daemon *d, uint32_t nranks, const hs_coll_call *k, uint64_t issue_ps);
/*
 * Rank's receive bytes of collective (comm_key, seq) (*len of them), or with
 * peer >= 0 of its Recv number seq from peer; NULL when not known (a part
 * came without values, a Reduce's non-root, forgotten); *ready: every part
 * has come (or it was forgotten), so the answer is final; *ready_ps: the
 * latest part's issue time (0 when forgotten).
 */
const uint8_t *hs_cvals_get(const struct hs_daemon *d, uint64_t comm_key, uint64_t seq, uint32_t rank, int32_t peer,
                            bool *ready, uint64_t *ready_ps, size_t *len);
void hs_cvals_free(struct hs_daemon *d);
/* The op's stream has reached its collective parts (from part `first` on) at time t. */
void hs_coll_reached(struct hs_daemon *d, hs_op *op, uint32_t first, uint64_t t);
/* A flow (step, rank: coordinates that depend on the kind) of collective c has completed at time t. */
void hs_coll_flow_done(struct hs_daemon *d, struct hs_coll *c, uint32_t step, uint32_t rank, uint64_t t);
/* Appends a description of every unfinished collective to buf; returns their number. */
size_t hs_coll_describe_unfinished(const struct hs_daemon *d, char *buf, size_t len);
void hs_coll_free(struct hs_daemon *d);

/* ----------------------------------------------------------- comm split */

/*
 * A process's CommSplit (comm_split.c): its ranks' calls are recorded and the
 * process waits (split_waiting); once every rank of the parent has called,
 * every calling process is answered.
 */
void hs_split_call(struct hs_daemon *d, struct hs_session *s, const hs_split_request *m);
/* Appends a description of every unanswered split to buf; returns their number. */
size_t hs_split_describe_unfinished(const struct hs_daemon *d, char *buf, size_t len);
void hs_split_free(struct hs_daemon *d);

/* ------------------------------------------------------------ sim clock */

enum hs_flow_owner { HS_FLOW_PEER_COPY = 1, HS_FLOW_COLL = 2 };

typedef struct hs_flow {
    uint8_t owner;
    uint32_t step, rank; /* HS_FLOW_COLL: the flow within its collective */
    hs_op *op;           /* HS_FLOW_PEER_COPY (ref) */
    struct hs_coll *coll;
} hs_flow;

/* Hands a flow to the fabric at `start_ps`; the id is the next daemon-wide one. */
int hs_loop_start_flow(struct hs_daemon *d, const hs_flow *owner, uint32_t src, uint32_t dst, uint64_t bytes,
                       uint64_t start_ps);
/* Simulates as far as the safe time allows and answers the Waits that became final. */
void hs_loop_advance(struct hs_daemon *d);
/* True, after failing the run, when every live session waits and nothing can move. */
bool hs_loop_check_deadlock(struct hs_daemon *d);
/* Observes a simulated time for sim_end_ps. */
void hs_loop_saw(struct hs_daemon *d, uint64_t t_ps);

/* -------------------------------------------------------------- admission */

/* A connection must register this soon after it is accepted, or it is closed. */
#define HS_REGISTER_GRACE_MS 5000
/* At most this many connections may be open without having registered; past it the oldest is closed. */
#define HS_UNREGISTERED_MAX 256
/* The largest frame an unregistered connection may send (a Register is a few hundred bytes). */
#define HS_UNREGISTERED_FRAME_MAX (64u << 10)

int hs_admit_init(struct hs_daemon *d, char *err, size_t errlen);
void hs_admit_fini(struct hs_daemon *d);
/* Accepts what is pending, up to a batch. Past HS_UNREGISTERED_MAX or the open-file limit the oldest unregistered
 * connection is closed to make room (or, with none, the new one), and counted. */
void hs_admit_accept(struct hs_daemon *d);
/* Closes connections silent past HS_REGISTER_GRACE_MS; ms until the next is due, -1 if none waits. */
int hs_admit_close_silent(struct hs_daemon *d, int64_t now_ms);
/* Once the program is gone, a connection that never registered must not keep the run alive. */
void hs_admit_close_strangers(struct hs_daemon *d);
/* Frees closed connections that never registered, and the read buffers of every closed one. */
void hs_admit_forget_closed(struct hs_daemon *d);

/* -------------------------------------------------------------- session */

enum hs_sess_state {
    HS_SESS_NEW,     /* connected, not registered: does not bound the safe time (admission.c) */
    HS_SESS_RUNNING, /* bounds safe time at its host time */
    HS_SESS_WAITING, /* every thread that issued work is blocked in a Wait: does not bound */
    HS_SESS_CLOSED,  /* Bye received, or the connection is gone */
};

typedef struct hs_wait {
    enum hs_wait_cond cond;
    bool query;
    uint64_t host_ns;
    uint32_t gpu;
    uint64_t stream_id, event_id; /* for messages */
    hs_op *target;                /* STREAM_IDLE: the stream's tail; EVENT_DONE: the last record (ref) */
    uint64_t *timed;
    size_t ntimed;
    uint64_t spec_mark; /* speculate.c: work issued when a speculation last found no answer (0: never tried) */
    uint64_t id;        /* Wait.id: its Reply carries it (0: the one-thread protocol) */
    uint64_t thread_id; /* THREAD_EXIT: the thread waited for */
    bool exited;        /* THREAD_EXIT: its exit arrived, at exit_ns */
    uint64_t exit_ns;
    uint64_t until_ns; /* UNTIL: when the sleep ends */
    bool woken;        /* UNTIL: a Wake came first, at wake_ns */
    uint64_t wake_ns;
    uint64_t comm_key, coll_seq; /* COLL_VALUES: the collective whose receive bytes it asks for */
    uint32_t coll_rank;
    int32_t coll_peer; /* COLL_VALUES of a Recv: its sender; -1: a collective */
} hs_wait;

/* What a waiting session waits for, in words ("stream 3 of GPU 1 to go idle"). */
const char *hs_wait_describe(const hs_wait *w, char *buf, size_t len);

/* Ancestors a Register may name (a launcher is a few levels up at most). */
#define HS_MAX_ANCESTORS 16

typedef struct hs_session {
    struct hs_daemon *d;
    uint32_t index;       /* connection order: a last-resort tie-break only */
    int64_t connected_ms; /* CLOCK_MONOTONIC at accept: a connection must register soon after */
    int fd;               /* -1 once closed */
    hs_frame_reader rd;
    bool eof; /* the peer closed its end */
    bool io_error;

    enum hs_sess_state state;
    bool registered, said_bye;
    bool active;   /* joined: it issues work (until then it bounds only as a non-launcher) */
    bool outside;  /* every thread blocks outside hysimd (Threads.outside) until it joins again */
    bool launcher; /* a descendant registered while it was not active: it does not bound */
    uint32_t server, pid, first_gpu, gpu_count;
    uint32_t rank, world_size;            /* Register's (world_size 0: not a launcher's job) */
    uint32_t ancestors[HS_MAX_ANCESTORS]; /* Register.ancestors, nearest first */
    size_t nancestors;
    char program[128];
    uint64_t host_ns;  /* latest host time seen */
    uint64_t floor_ns; /* its ops start no earlier (session.c, late_thread) */

    uint64_t next_seq;
    hs_sgpu *gpus;    /* [gpu_count] */
    hs_u64map events; /* event id → hs_op* (last record) */
    uint64_t pending; /* ops issued and not done */
    uint64_t last_done_ps;

    /* Unanswered Waits, oldest first: wait, then more_waits[0..nwaits-2]. The
     * session is WAITING when nwaits reaches threads (its threads that issued
     * work, as the client last said; at least 1), RUNNING otherwise. */
    hs_wait wait;
    hs_wait *more_waits;
    size_t nwaits, capwaits;
    uint32_t threads;
    bool threaded;      /* has had several threads: a new one may still come (no deadlock is certain) */
    bool split_waiting; /* its CommSplit is unanswered (comm_split.c); state stays RUNNING */
} hs_session;

hs_session *hs_session_new(struct hs_daemon *d, int fd);
/* Reads what the socket has into the session's buffer, without decoding (notes EOF and errors). */
void hs_session_drain(hs_session *s);
/* Decodes and handles every complete frame buffered; handles EOF. */
void hs_session_process(hs_session *s);
/*
 * Sends a reply. A session has at most one request unanswered per thread of
 * its process, so a small reply always finds room in the socket; a peer that
 * is gone shows as EOF.
 */
void hs_session_reply(hs_session *s, const hs_answer *a);
/* The i-th unanswered Wait of s, oldest first (i < s->nwaits). */
hs_wait *hs_session_wait(hs_session *s, size_t i);
/* Whether s holds the safe time back at its host time (running, not a launcher, not blocked outside). */
static inline bool hs_session_bounds(const hs_session *s)
{
    return s->state == HS_SESS_RUNNING && !s->launcher && !s->outside;
}
/* Forgets s's i-th Wait, answered at host time n_ns; the session runs again. */
void hs_session_wait_answered(hs_session *s, size_t i, uint64_t n_ns);
/* Closes the connection (state CLOSED); the session's ops live on. */
void hs_session_close(hs_session *s);
void hs_session_free(hs_session *s);
/* "process 1234 (server 0, ./train)" */
const char *hs_session_name(const hs_session *s, char *buf, size_t len);
/* Canonical order of sessions: (server, first_gpu, pid, index). */
int hs_session_cmp(const hs_session *a, const hs_session *b);

/* --------------------------------------------------------------- daemon */

typedef struct hs_child {
    pid_t pid;
    int pidfd; /* -1 where pidfd_open is unavailable */
    bool exited;
    bool registered; /* a session registered with its pid */
    bool launcher;   /* a descendant of it registered: it does not bound */
    int status;
} hs_child;

typedef struct hs_heap_ev {
    uint64_t time;
    hs_op *op;            /* ref */
    uint8_t type;         /* HS_EV_START, HS_EV_DONE, HS_EV_LOCAL_COPY, HS_EV_COLL_FLOW */
    struct hs_coll *coll; /* HS_EV_LOCAL_COPY, HS_EV_COLL_FLOW: the collective */
    uint32_t step, rank;  /* HS_EV_COLL_FLOW: the flow within it */
} hs_heap_ev;

/* HS_EV_LOCAL_COPY: a Send/Recv of a rank to itself, copied within its GPU, ends.
 * HS_EV_COLL_FLOW: a collective flow held past the fabric's end (a channel's rate cap) ends. */
enum { HS_EV_START = 0, HS_EV_DONE = 1, HS_EV_LOCAL_COPY = 2, HS_EV_COLL_FLOW = 3 };

struct hs_daemon {
    hs_scenario sc;
    uint32_t total_gpus;
    hs_fabric *fabric;
    char endpoint[512];
    int listen_fd;
    int spare_fd; /* admission.c: held back for refusing past the open-file limit */
    uint64_t epoch_ns;

    hs_session **sessions; /* open ones, and the closed ones that registered */
    size_t nsessions, capsessions;
    uint32_t connections; /* accepted so far: the next session's index */
    hs_child *children;
    int nchildren;

    /* timeline */
    hs_heap_ev *heap;
    size_t heaplen, heapcap;

    /* collectives */
    hs_u64map comms;       /* comm_key → hs_comm* */
    hs_u64map coll_values; /* comm_key → its small collectives' values (collective_values.c) */
    hs_u64map splits;      /* (parent comm, split number) → hs_split*, unanswered (comm_split.c) */

    /* flows, indexed by id */
    hs_flow *flows;
    size_t flowcap;
    uint64_t next_flow_id;

    hs_run_summary sum;               /* counters; error is copied in at the end */
    struct hs_profile_db *profiles;   /* scenario's compute.profiles, NULL when none */
    struct hs_profile_db **databases; /* hysim's measured databases (compute.database_dir), by file name */
    size_t ndatabases;
    struct hs_default_kernel *defaults; /* kernels the default timed, by name (kernel_time.c) */
    size_t ndefaults, capdefaults;
    hs_u64map default_of;  /* name's hash -> index + 1 in defaults */
    uint64_t processed_ps; /* latest time the timeline or the fabric has simulated */

    /* The job a launcher started (Register.rank, world_size): the safe time
     * stays at 0 until each of its ranks has registered. */
    uint32_t world_size;
    uint32_t ranks_seen;
    /* Servers started elsewhere (hs_daemon_expect_remote): [servers.count], 1 until one of its processes
     * registers; remote_missing counts those still at 1. */
    unsigned char *remote_pending;
    int remote_missing;
    uint8_t *rank_seen; /* [world_size] */
    uint64_t steps;     /* events processed, for draining sockets regularly */

    bool failed;
    char error[1024];
    bool running; /* inside hs_daemon_run */

    char token[256]; /* HYSIM_TOKEN at create: every Register must carry it ("" = none needed) */

    /* stall watchdog (stall.c) */
    uint64_t stall_mark;    /* fingerprint of the simulation's state at the last progress */
    int64_t stall_since_ms; /* CLOCK_MONOTONIC ms of that progress */

    struct hs_run_stats *stats;    /* run_stats.c: per-GPU times, trace, progress (NULL until used) */
    struct hs_background *bg;      /* background.c: other tenants' traffic (NULL: none) */
    struct hs_statsout *stats_out; /* stats_output.c: `hysim run --stats` files (NULL: not asked for) */

    /* speculate.c (run.mode: optimistic) */
    struct hs_spec *spec;   /* answered speculations awaiting their true answer, fork fault injection */
    bool spec_child;        /* this process is a speculation: no output, no bound, answers the target only */
    bool said_nvls_refused; /* collective_algos.c: a forced NVLS that NCCL would not have was said once */

    struct hs_fspec *fspec; /* fabric_speculation.c: completions computed ahead (NULL: no speculation) */
};

typedef struct hs_daemon hs_daemon;

/* Fails the run (the first message wins); the poll loop then ends it. */
void hs_daemon_fail(hs_daemon *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Reads every session socket into its buffer, so that no client blocks on a full socket. */
void hs_daemon_drain_all(hs_daemon *d);
/*
 * For the simulation loop, on every step (cheap): true once the run has
 * failed, now also because a stop signal arrived or a child died (hysimd.c).
 */
bool hs_daemon_interrupted(hs_daemon *d);
/*
 * A session's connection ended without Bye: fails the run naming it, with the
 * exit status of its process where that is one of the children.
 */
void hs_daemon_session_lost(hs_daemon *d, hs_session *s, const char *how);
/* CLOCK_MONOTONIC in milliseconds. */
int64_t hs_daemon_now_ms(void);

/* ------------------------------------------------------------ speculate */

/*
 * At hs_daemon_create: reads HYSIM_FAULT_FORK (tests: the Nth fork fails with
 * EAGAIN) and refuses run.mode: optimistic with the worker-mode fabric.
 * 0, or -1 with the reason in err.
 */
int hs_spec_init(hs_daemon *d, char *err, size_t errlen);
/*
 * From hs_loop_advance where exact rules let it go no further: compares the
 * speculative answers whose true answer is now known, then (optimistic mode)
 * answers the waits that exact rules cannot answer yet by speculation.
 * Returns how many sessions it answered (they run again: the bound moved).
 */
int hs_spec_step(hs_daemon *d);
/* In a speculation, from answer(): keeps the target's answer for the parent. */
void hs_spec_child_answered(hs_daemon *d, const hs_session *s, const hs_answer *r);
/* fork(), failing with EAGAIN on the Nth call when HYSIM_FAULT_FORK=N. */
pid_t hs_spec_fork(hs_daemon *d);
void hs_spec_free(hs_daemon *d);

/* ----------------------------------------------------- fabric speculation */

/*
 * The fabric as hs_loop_advance sees it (fabric_speculation.c). Without
 * speculation every call is the hs_fabric_* one. With it, the fabric may be
 * ahead of the "applied" time these report: completions it computed there
 * are held back and handed out by hs_fspec_next_completion as if computed
 * just then.
 */
/* Speculates with a worker-process fabric (worker) when run.fabric.speculate asks for it. */
void hs_fspec_init(hs_daemon *d, bool worker);
/* After the background traffic is known: speculation is off with it. */
void hs_fspec_configure(hs_daemon *d);
/* The fabric time the daemon's state reflects: every completion before it is applied. */
uint64_t hs_fspec_now(const hs_daemon *d);
/* Flows handed over whose completion has not been applied (background ones included). */
uint64_t hs_fspec_in_flight(const hs_daemon *d);
/* hs_fabric_add_flow; a flow in the fabric's speculative past rolls it back. */
int hs_fspec_add_flow(hs_daemon *d, uint64_t id, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t start_ps,
                      char *err, size_t errlen);
/* hs_fabric_next_completion's contract, held-back completions first. After a failure (hs_daemon_fail): 0. */
int hs_fspec_next_completion(hs_daemon *d, uint64_t limit_ps, hs_flow_done *done);
/* Where the clock can go no further: runs the fabric ahead by one bounded step. */
void hs_fspec_run_ahead(hs_daemon *d);
/* Whether another hs_fspec_run_ahead would simulate something (the poll loop then does not sleep). */
bool hs_fspec_more(const hs_daemon *d);
/* Copies the counters into d->sum. */
void hs_fspec_summarize(hs_daemon *d);
void hs_fspec_free(hs_daemon *d);

/* ------------------------------------------------------- stall watchdog */

/* Starts watching: the present counts as progress. */
void hs_stall_start(hs_daemon *d, int64_t now_ms);
/*
 * Notes progress since the last call, or fails the run naming what is stuck
 * once run.stall_timeout_s passed without any while some process waits.
 * Returns the milliseconds until it must be called again, -1 for never.
 */
int hs_stall_check(hs_daemon *d, int64_t now_ms);

#endif
