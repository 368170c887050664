/*
 * Stream capture: between cudaStreamBeginCapture and cudaStreamEndCapture,
 * work issued to a capturing stream (kernels, cuBLAS GEMMs, async copies and
 * memsets, NCCL calls: every op of the client core) becomes a node of the
 * capture's graph instead of being sent to hysimd (client.h's capture hooks).
 *
 * As in CUDA, each capturing stream has a set of nodes the next one depends
 * on; an event recorded in a capturing stream takes that set, and a stream
 * that waits on such an event joins the capture with it (fork), or adds it
 * to its own (join). Every stream forked must be joined back into the one
 * that began the capture before it ends. Calls that would synchronise with
 * captured work fail with cudaErrorStreamCaptureUnsupported and invalidate
 * the capture, following the capture mode rules of
 * cudaThreadExchangeStreamCaptureMode.
 *
 * NCCL calls are numbered per communicator by libnccl.so.2; a captured call
 * is not sent, and each launch of its graph sends a new one. So that every
 * rank's k-th collective keeps sequence number k on the wire, the numbers of
 * calls on a channel (communicator and rank, and peer for Send/Recv) that a
 * capture has touched are shifted here: a captured call gives its number
 * back, a launched one takes the next.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudart_graphs.h"
#include "internal.h"

#define GLOCK()   pthread_mutex_lock(&hs_graph_lock)
#define GUNLOCK() pthread_mutex_unlock(&hs_graph_lock)

typedef struct cap_stream {
    uintptr_t key;   /* stream_key() */
    hs_nodeset deps; /* what the stream's next node depends on */
} cap_stream;

typedef struct capture {
    unsigned long long id;
    cudaGraph_t graph;
    enum cudaStreamCaptureMode mode;
    const void *thread; /* thread_token() of the thread that began it */
    uintptr_t origin;
    int invalidated;
    cap_stream *streams;
    size_t nstreams;
} capture;

/* An event last recorded in a capturing stream. */
typedef struct cap_event {
    cudaEvent_t event;
    capture *cap;
    hs_nodeset deps;
} cap_event;

/* A numbering of NCCL calls that captures have shifted. */
typedef struct nccl_channel {
    uint64_t comm_key;
    int rank, cls, peer; /* cls: 0 collectives, 1 Sends, 2 Recvs (to / from peer) */
    uint64_t next;       /* libnccl.so.2's number for the channel's next call */
    int64_t shift;       /* wire number = libnccl.so.2's + shift */
} nccl_channel;

static capture **g_caps;
static size_t g_ncaps;
static cap_event *g_events;
static size_t g_nevents;
static nccl_channel *g_channels;
static size_t g_nchannels;
static _Atomic int g_busy; /* captures in progress or channels: the hooks have work */
static unsigned long long g_next_id = 1;

static __thread enum cudaStreamCaptureMode t_mode = cudaStreamCaptureModeGlobal;
static __thread char t_token;

static const void *thread_token(void) { return &t_token; }

static void *grow(void *p, size_t n, size_t size)
{
    p = realloc(p, (n + 1) * size);
    if (!p) {
        fprintf(stderr, "hysim: out of host memory\n");
        abort();
    }
    return p;
}

/* Captures key streams by handle; cudaStreamPerThread is a different stream in every thread. 0: legacy. */
static uintptr_t stream_key(cudaStream_t s)
{
    if (s == NULL || s == cudaStreamLegacy)
        return 0;
    return s == cudaStreamPerThread ? (uintptr_t)thread_token() : (uintptr_t)s;
}

static void update_busy_locked(void) { atomic_store(&g_busy, g_ncaps > 0 || g_nchannels > 0); }

/* The capture a stream takes part in, and its entry; NULL when it is not capturing. */
static capture *find_stream_locked(cudaStream_t s, cap_stream **cs)
{
    uintptr_t key = stream_key(s);
    for (size_t i = 0; key && i < g_ncaps; i++)
        for (size_t j = 0; j < g_caps[i]->nstreams; j++)
            if (g_caps[i]->streams[j].key == key) {
                *cs = &g_caps[i]->streams[j];
                return g_caps[i];
            }
    return NULL;
}

static cap_stream *join_locked(capture *c, uintptr_t key, const hs_nodeset *deps)
{
    c->streams = grow(c->streams, c->nstreams, sizeof *c->streams);
    cap_stream *cs = &c->streams[c->nstreams++];
    memset(cs, 0, sizeof *cs);
    cs->key = key;
    if (deps)
        hs_nodeset_copy(&cs->deps, deps);
    return cs;
}

static cap_event *find_event_locked(cudaEvent_t ev)
{
    for (size_t i = 0; i < g_nevents; i++)
        if (g_events[i].event == ev)
            return &g_events[i];
    return NULL;
}

static void drop_event_locked(cap_event *e)
{
    hs_nodeset_free(&e->deps);
    *e = g_events[--g_nevents];
}

/* Ends a capture: its streams stop capturing, its events forget it; the graph is the caller's. */
static void end_locked(capture *c)
{
    for (size_t i = 0; i < g_nevents;)
        if (g_events[i].cap == c)
            drop_event_locked(&g_events[i]);
        else
            i++;
    for (size_t i = 0; i < c->nstreams; i++)
        hs_nodeset_free(&c->streams[i].deps);
    free(c->streams);
    for (size_t i = 0; i < g_ncaps; i++)
        if (g_caps[i] == c)
            g_caps[i] = g_caps[--g_ncaps];
    free(c);
    update_busy_locked();
}

/* ---- NCCL numbering ---- */

static nccl_channel *channel_locked(const hs_stream_op *op, int create)
{
    int cls = op->u.coll.kind == HS_COLL_SEND ? 1 : op->u.coll.kind == HS_COLL_RECV ? 2 : 0;
    int peer = cls ? op->u.coll.root : 0;
    for (size_t i = 0; i < g_nchannels; i++) {
        nccl_channel *c = &g_channels[i];
        if (c->comm_key == op->u.coll.comm_key && c->rank == op->u.coll.rank && c->cls == cls && c->peer == peer)
            return c;
    }
    if (!create)
        return NULL;
    g_channels = grow(g_channels, g_nchannels, sizeof *g_channels);
    nccl_channel *c = &g_channels[g_nchannels++];
    *c = (nccl_channel){.comm_key = op->u.coll.comm_key, .rank = op->u.coll.rank, .cls = cls, .peer = peer};
    update_busy_locked();
    return c;
}

uint64_t hs_capture_replay_seq_locked(const hs_stream_op *op)
{
    nccl_channel *c = channel_locked(op, 1);
    return (uint64_t)((int64_t)c->next + c->shift++);
}

/* ---- the hooks ---- */

static int divert_locked(hs_stream_op *op, cudaError_t *err)
{
    cap_stream *cs = NULL;
    capture *c = find_stream_locked(op->stream, &cs);
    *err = c && c->invalidated ? cudaErrorStreamCaptureInvalidated : cudaSuccess;
    if (op->kind == HS_SOP_EVENT_RECORD) {
        cap_event *ev = find_event_locked(op->u.event);
        if (ev && ev->cap != c)
            drop_event_locked(ev), ev = NULL;
        if (!c)
            return 0; /* an ordinary record */
        if (!ev) {
            g_events = grow(g_events, g_nevents, sizeof *g_events);
            ev = &g_events[g_nevents++];
            memset(ev, 0, sizeof *ev);
            ev->event = op->u.event;
            ev->cap = c;
        }
        hs_nodeset_copy(&ev->deps, &cs->deps);
        return 1;
    }
    if (op->kind == HS_SOP_WAIT_EVENT) {
        cap_event *ev = find_event_locked(op->u.event);
        if (ev && c && ev->cap != c) {
            c->invalidated = ev->cap->invalidated = 1;
            *err = cudaErrorStreamCaptureIsolation; /* a dependency between two captures */
        } else if (ev && !c && !stream_key(op->stream)) {
            ev->cap->invalidated = 1; /* the legacy stream cannot join a capture */
            *err = cudaErrorStreamCaptureImplicit;
        } else if (ev && !c) {
            join_locked(ev->cap, stream_key(op->stream), &ev->deps); /* fork: the stream joins the capture */
            *err = ev->cap->invalidated ? cudaErrorStreamCaptureInvalidated : cudaSuccess;
        } else if (ev) {
            for (size_t i = 0; i < ev->deps.n; i++)
                hs_nodeset_add(&cs->deps, ev->deps.v[i]);
        }
        /* A capturing stream waiting on an event recorded outside the capture: already ordered before the launch. */
        return c || ev;
    }
    if (op->kind == HS_SOP_COLLECTIVE && *err == cudaSuccess) { /* a call that fails keeps its number */
        nccl_channel *ch = channel_locked(op, c != NULL);
        if (ch) {
            ch->next = op->u.coll.seq + 1;
            if (c)
                ch->shift--; /* this number is not sent; the next call takes it */
            else
                op->u.coll.seq = (uint64_t)((int64_t)op->u.coll.seq + ch->shift);
        }
    }
    if (!c)
        return 0;
    if (*err == cudaSuccess) {
        int dev = op->kind == HS_SOP_COLLECTIVE ? op->u.coll.device : hs_client_get_device();
        unsigned flags;
        int prio;
        if (op->kind != HS_SOP_COLLECTIVE)
            hs_client_stream_info(op->stream, &dev, &flags, &prio);
        cudaGraphNode_t n = hs_graph_add_node_locked(c->graph,
                                                     op->kind == HS_SOP_COPY     ? cudaGraphNodeTypeMemcpy
                                                     : op->kind == HS_SOP_MEMSET ? cudaGraphNodeTypeMemset
                                                     : op->kind == HS_SOP_HOST   ? cudaGraphNodeTypeHost
                                                                                 : cudaGraphNodeTypeKernel,
                                                     op, dev, &cs->deps);
        cs->deps.n = 0;
        hs_nodeset_add(&cs->deps, n);
    }
    return 1;
}

static int divert(hs_stream_op *op, cudaError_t *err)
{
    if (hs_graph_replaying || !atomic_load_explicit(&g_busy, memory_order_acquire))
        return 0;
    GLOCK();
    int taken = divert_locked(op, err);
    GUNLOCK();
    return taken;
}

/*
 * Whether capture c forbids the calling thread potentially unsafe calls, by
 * the thread's mode: global, its own captures not begun relaxed and other
 * threads' global ones; thread-local, its own only; relaxed, none.
 */
static int forbids_unsafe(const capture *c)
{
    int mine = c->thread == thread_token();
    if (t_mode == cudaStreamCaptureModeRelaxed)
        return 0;
    return mine ? c->mode != cudaStreamCaptureModeRelaxed
                : t_mode == cudaStreamCaptureModeGlobal && c->mode == cudaStreamCaptureModeGlobal;
}

static cudaError_t check(enum hs_capture_check what, cudaStream_t stream)
{
    if (hs_graph_replaying || !atomic_load_explicit(&g_busy, memory_order_acquire))
        return cudaSuccess;
    cudaError_t e = cudaSuccess;
    GLOCK();
    cap_stream *cs;
    capture *c = what == HS_CHECK_STREAM_SYNC ? find_stream_locked(stream, &cs) : NULL;
    if (c) {
        c->invalidated = 1;
        e = cudaErrorStreamCaptureUnsupported;
    } else if (what == HS_CHECK_UNSAFE) {
        for (size_t i = 0; i < g_ncaps; i++)
            if (forbids_unsafe(g_caps[i])) {
                g_caps[i]->invalidated = 1;
                e = cudaErrorStreamCaptureUnsupported;
            }
    }
    GUNLOCK();
    return e;
}

static const hs_capture_hooks g_hooks = {divert, check};

int hs_capture_divert(hs_stream_op *op, cudaError_t *err) { return divert(op, err); }

int hs_capture_stream_active(cudaStream_t stream)
{
    if (!atomic_load_explicit(&g_busy, memory_order_acquire))
        return 0;
    cap_stream *cs;
    GLOCK();
    int active = find_stream_locked(stream, &cs) != NULL;
    GUNLOCK();
    return active;
}

/* ---- the API ---- */

static cudaError_t begin_capture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    int dev, prio;
    unsigned flags;
    if ((unsigned)mode > cudaStreamCaptureModeRelaxed)
        return cudaErrorInvalidValue;
    cudaError_t e = hs_client_stream_info(stream, &dev, &flags, &prio);
    if (e != cudaSuccess)
        return e;
    if (!stream_key(stream))
        return cudaErrorStreamCaptureUnsupported; /* the legacy stream cannot be captured */
    hs_client_set_capture_hooks(&g_hooks);
    GLOCK();
    cap_stream *cs;
    if (find_stream_locked(stream, &cs)) {
        e = cudaErrorIllegalState;
    } else {
        capture *c = calloc(1, sizeof *c);
        g_caps = grow(g_caps, g_ncaps, sizeof *g_caps);
        if (!c)
            abort();
        g_caps[g_ncaps++] = c;
        c->id = g_next_id++;
        c->graph = hs_graph_new_locked();
        c->mode = mode;
        c->thread = thread_token();
        c->origin = stream_key(stream);
        join_locked(c, c->origin, NULL);
        update_busy_locked();
    }
    GUNLOCK();
    return e;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    RT_ENTER();
    RT_RETURN(begin_capture(stream, mode));
}

cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, enum cudaStreamCaptureMode mode);
cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    RT_ENTER();
    RT_RETURN(begin_capture(stream ? stream : cudaStreamPerThread, mode));
}

/* Marks set and its ancestors in seen (node → 1). */
static void mark_ancestors(const hs_nodeset *set, hs_ptrmap *seen)
{
    hs_nodeset todo = {0};
    for (size_t i = 0; i < set->n; i++)
        hs_nodeset_push(&todo, set->v[i]);
    while (todo.n) {
        cudaGraphNode_t n = todo.v[--todo.n];
        if (hs_ptrmap_get(seen, (uintptr_t)n))
            continue;
        hs_ptrmap_put(seen, (uintptr_t)n, 1);
        for (size_t i = 0; i < n->deps.n; i++)
            hs_nodeset_push(&todo, n->deps.v[i]);
    }
    hs_nodeset_free(&todo);
}

/* Whether every stream forked from the origin was joined back into it: its last nodes precede the origin's. */
static int all_joined_locked(const capture *c, const cap_stream *origin)
{
    hs_ptrmap seen = {0};
    mark_ancestors(&origin->deps, &seen);
    int ok = 1;
    for (size_t i = 0; i < c->nstreams && ok; i++)
        for (size_t j = 0; j < c->streams[i].deps.n && ok; j++)
            ok = hs_ptrmap_get(&seen, (uintptr_t)c->streams[i].deps.v[j]) != 0;
    hs_ptrmap_clear(&seen);
    return ok;
}

static cudaError_t end_capture(cudaStream_t stream, cudaGraph_t *pGraph)
{
    if (!pGraph)
        return cudaErrorInvalidValue;
    int dev, prio;
    unsigned flags;
    cudaError_t e = hs_client_stream_info(stream, &dev, &flags, &prio);
    if (e != cudaSuccess)
        return e;
    GLOCK();
    cap_stream *cs;
    capture *c = find_stream_locked(stream, &cs);
    if (!c)
        e = cudaErrorIllegalState;
    else if (c->origin != cs->key)
        e = cudaErrorStreamCaptureUnmatched;
    else if (c->mode != cudaStreamCaptureModeRelaxed && c->thread != thread_token())
        e = cudaErrorStreamCaptureWrongThread;
    if (e != cudaSuccess) {
        if (c && e == cudaErrorStreamCaptureUnmatched)
            c->invalidated = 1;
        GUNLOCK();
        return e;
    }
    e = c->invalidated              ? cudaErrorStreamCaptureInvalidated
        : !all_joined_locked(c, cs) ? cudaErrorStreamCaptureUnjoined
                                    : cudaSuccess;
    if (e == cudaSuccess) {
        *pGraph = c->graph;
    } else {
        *pGraph = NULL;
        hs_graph_free_locked(c->graph);
    }
    end_locked(c);
    GUNLOCK();
    return e;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
    RT_ENTER();
    RT_RETURN(end_capture(stream, pGraph));
}

cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *pGraph);
cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *pGraph)
{
    RT_ENTER();
    RT_RETURN(end_capture(stream ? stream : cudaStreamPerThread, pGraph));
}

cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
    RT_ENTER();
    if (!mode || (unsigned)*mode > cudaStreamCaptureModeRelaxed)
        RT_RETURN(cudaErrorInvalidValue);
    enum cudaStreamCaptureMode old = t_mode;
    t_mode = *mode;
    *mode = old;
    RT_RETURN(cudaSuccess);
}

/* The stream's capture status, id, graph and current dependencies (valid until the capture changes). */
static cudaError_t capture_info(cudaStream_t stream, enum cudaStreamCaptureStatus *status, unsigned long long *id,
                                cudaGraph_t *graph, const cudaGraphNode_t **deps, size_t *ndeps)
{
    int dev, prio;
    unsigned flags;
    cudaError_t e = hs_client_stream_info(stream, &dev, &flags, &prio);
    if (e != cudaSuccess)
        return e;
    GLOCK();
    cap_stream *cs = NULL;
    capture *c = find_stream_locked(stream, &cs);
    *status = !c               ? cudaStreamCaptureStatusNone
              : c->invalidated ? cudaStreamCaptureStatusInvalidated
                               : cudaStreamCaptureStatusActive;
    if (id)
        *id = c ? c->id : 0;
    if (graph)
        *graph = c ? c->graph : NULL;
    if (deps)
        *deps = c ? (const cudaGraphNode_t *)cs->deps.v : NULL;
    if (ndeps)
        *ndeps = c ? cs->deps.n : 0;
    GUNLOCK();
    return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{
    RT_ENTER();
    RT_RETURN(pCaptureStatus ? capture_info(stream, pCaptureStatus, NULL, NULL, NULL, NULL) : cudaErrorInvalidValue);
}

/* Edge data: NULL, every edge being a default one. */
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
                                     unsigned long long *id_out, cudaGraph_t *graph_out,
                                     const cudaGraphNode_t **dependencies_out, const cudaGraphEdgeData **edgeData_out,
                                     size_t *numDependencies_out)
{
    RT_ENTER();
    if (!captureStatus_out)
        RT_RETURN(cudaErrorInvalidValue);
    if (edgeData_out)
        *edgeData_out = NULL;
    RT_RETURN(capture_info(stream, captureStatus_out, id_out, graph_out, dependencies_out, numDependencies_out));
}
