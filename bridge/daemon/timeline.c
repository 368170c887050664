/*
 * hysimd timeline: every session's streams as in-order queues of ops, the
 * dependencies between ops, and the event heap in simulated picoseconds.
 *
 * An op starts at max(its stream's previous op done, its issue host time,
 * the ops it waits on); that moment is a START event, its end a DONE event.
 * A kernel launched on a stream starts a launch gap (scenario
 * compute.kernel_gap_us) after its stream's previous op: the time a GPU
 * takes between two kernels queued back to back. A CUDA graph's kernel
 * nodes have none, as on a GPU.
 * Events are ordered by (time, session (server, first_gpu, pid), op
 * sequence): never by wall-clock arrival, so a run does not depend on when a
 * batch happened to be read.
 */
#include <stdlib.h>
#include <string.h>

#include "copy_time.h"
#include "daemon_internal.h"
#include "kernel_time.h"
#include "run_stats.h"

/* ------------------------------------------------------------- ops */

void hs_op_ref(hs_op *op) { op->refs++; }

void hs_op_unref(hs_op *op)
{
    if (!op || --op->refs > 0)
        return;
    for (uint32_t i = 0; i < op->nsucc; i++)
        hs_op_unref(op->succ[i]);
    free(op->succ);
    free(op->parts);
    free(op);
}

static void set_ref(hs_op **slot, hs_op *op)
{
    if (op)
        hs_op_ref(op);
    hs_op_unref(*slot);
    *slot = op;
}

/* When `op` may start if `pred`, which it waits for, is done at t. */
static uint64_t ready_after(const hs_op *pred, const hs_op *op, uint64_t t)
{
    bool same_stream = pred->s == op->s && pred->gpu == op->gpu && pred->stream == op->stream;
    uint64_t gap = same_stream ? op->launch_gap_ps : 0;
    return t > HS_TIME_INF - gap ? HS_TIME_INF : t + gap;
}

/* `op` may not start before `pred` is done. */
static void add_dep(hs_op *op, hs_op *pred)
{
    if (!pred || pred == op)
        return;
    if (pred->done) {
        op->ready_ps = hs_max_u64(op->ready_ps, ready_after(pred, op, pred->done_ps));
        return;
    }
    if (pred->nsucc == pred->capsucc) {
        pred->capsucc = pred->capsucc ? pred->capsucc * 2 : 4;
        pred->succ = hs_xrealloc(pred->succ, pred->capsucc, sizeof(*pred->succ));
    }
    pred->succ[pred->nsucc++] = op;
    hs_op_ref(op);
    op->npending++;
}

/* ------------------------------------------------------------- heap */

static bool ev_before(const hs_heap_ev *a, const hs_heap_ev *b)
{
    if (a->time != b->time)
        return a->time < b->time;
    if (a->op->s != b->op->s)
        return hs_session_cmp(a->op->s, b->op->s) < 0;
    if (a->op->seq != b->op->seq)
        return a->op->seq < b->op->seq;
    if (a->type != b->type)
        return a->type < b->type;
    return a->step != b->step ? a->step < b->step : a->rank < b->rank; /* HS_EV_COLL_FLOW of one op */
}

static void heap_push_ev(hs_daemon *d, hs_heap_ev ev)
{
    hs_grow((void **)&d->heap, &d->heapcap, d->heaplen + 1, sizeof(*d->heap));
    hs_op_ref(ev.op);
    size_t i = d->heaplen++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!ev_before(&ev, &d->heap[parent]))
            break;
        d->heap[i] = d->heap[parent];
        i = parent;
    }
    d->heap[i] = ev;
}

static void heap_push(hs_daemon *d, uint64_t time, hs_op *op, uint8_t type)
{
    heap_push_ev(d, (hs_heap_ev){.time = time, .op = op, .type = type});
}

void hs_tl_local_copy_at(hs_daemon *d, hs_op *op, struct hs_coll *c, uint64_t t)
{
    heap_push_ev(d, (hs_heap_ev){.time = t, .op = op, .type = HS_EV_LOCAL_COPY, .coll = c});
}

void hs_tl_coll_flow_at(hs_daemon *d, hs_op *op, struct hs_coll *c, uint32_t step, uint32_t rank, uint64_t t)
{
    heap_push_ev(d, (hs_heap_ev){.time = t, .op = op, .type = HS_EV_COLL_FLOW, .coll = c, .step = step, .rank = rank});
}

static hs_heap_ev heap_pop(hs_daemon *d)
{
    hs_heap_ev top = d->heap[0];
    hs_heap_ev last = d->heap[--d->heaplen];
    size_t i = 0, n = d->heaplen;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && ev_before(&d->heap[c + 1], &d->heap[c]))
            c++;
        if (!ev_before(&d->heap[c], &last))
            break;
        d->heap[i] = d->heap[c];
        i = c;
    }
    if (n)
        d->heap[i] = last;
    return top;
}

uint64_t hs_tl_next_time(const hs_daemon *d) { return d->heaplen ? d->heap[0].time : HS_TIME_INF; }

bool hs_tl_empty(const hs_daemon *d) { return d->heaplen == 0; }

/* ------------------------------------------------------------- streams */

void hs_tl_session_init(hs_session *s) { s->gpus = hs_xcalloc(s->gpu_count, sizeof(*s->gpus)); }

void hs_tl_session_free(hs_session *s)
{
    for (uint32_t g = 0; s->gpus && g < s->gpu_count; g++) {
        hs_sgpu *sg = &s->gpus[g];
        hs_op_unref(sg->legacy.tail);
        for (size_t i = 0; i < sg->nall; i++) {
            hs_op_unref(sg->all[i]->tail);
            free(sg->all[i]);
        }
        free(sg->all);
        hs_u64map_free(&sg->streams);
    }
    free(s->gpus);
    s->gpus = NULL;
    for (size_t i = 0; i < s->events.cap; i++)
        if (s->events.used[i])
            hs_op_unref(s->events.vals[i]);
    hs_u64map_free(&s->events);
}

hs_stream *hs_tl_stream(hs_session *s, uint32_t gpu, uint64_t id)
{
    hs_sgpu *sg = &s->gpus[gpu - s->first_gpu];
    return id == 0 ? &sg->legacy : hs_u64map_get(&sg->streams, id);
}

static int stream_create(hs_daemon *d, hs_session *s, const hs_issued_op *m)
{
    char who[256];
    hs_sgpu *sg = &s->gpus[m->gpu - s->first_gpu];
    if (m->stream == 0 || hs_u64map_get(&sg->streams, m->stream)) {
        hs_daemon_fail(d, "hysim: %s: StreamCreate of stream %llu on GPU %u, which already exists",
                       hs_session_name(s, who, sizeof(who)), (unsigned long long)m->stream, m->gpu);
        return -1;
    }
    hs_stream *st = hs_xcalloc(1, sizeof(*st));
    st->id = m->stream;
    st->non_blocking = m->non_blocking;
    hs_u64map_put(&sg->streams, st->id, st);
    hs_grow((void **)&sg->all, &sg->capall, sg->nall + 1, sizeof(*sg->all));
    sg->all[sg->nall++] = st;
    return 0;
}

static int stream_destroy(hs_daemon *d, hs_session *s, const hs_issued_op *m)
{
    char who[256];
    hs_sgpu *sg = &s->gpus[m->gpu - s->first_gpu];
    hs_stream *st = m->stream ? hs_u64map_del(&sg->streams, m->stream) : NULL;
    if (!st) {
        hs_daemon_fail(d, "hysim: %s: StreamDestroy of stream %llu on GPU %u, which does not exist",
                       hs_session_name(s, who, sizeof(who)), (unsigned long long)m->stream, m->gpu);
        return -1;
    }
    /* its pending work still runs, and the legacy stream still waits for it */
    st->destroyed = true;
    return 0;
}

/* ------------------------------------------------------------- durations (bridge/compute/copy_time.c) */

uint64_t hs_tl_local_copy_ps(const hs_daemon *d, uint64_t bytes) { return hs_copy_time_local(&d->sc, bytes); }

/* The part of an op's fixed cost that overlaps the work before it: it may start no sooner than this after
 * it reaches the GPU, and its duration holds the rest. */
static void take_early(hs_op *op, uint64_t early)
{
    op->ready_ps = op->ready_ps > HS_TIME_INF - early ? HS_TIME_INF : op->ready_ps + early;
}

/* Fills kind and duration of a copy op; -1 after failing on a bad message. */
static int setup_copy(hs_daemon *d, hs_session *s, const hs_issued_op *m, hs_op *op)
{
    const hs_scenario *sc = &d->sc;
    const hs_copy_call *c = &m->copy;
    char who[256];
    op->kind = HS_OP_COPY;
    op->copy_kind = (uint8_t)c->kind;
    op->bytes = c->bytes;
    switch (c->kind) {
    case HS_COPY_H2D:
    case HS_COPY_D2H: {
        hs_copy_time t = hs_copy_time_host(sc, c->kind == HS_COPY_H2D, c->pageable, c->bytes, c->rows);
        op->dur_ps = t.dur_ps;
        take_early(op, t.early_ps);
        return 0;
    }
    case HS_COPY_H2H:
        op->dur_ps = 0; /* host memory is not modelled: a host-to-host copy costs no GPU time */
        return 0;
    case HS_COPY_D2D:
        if (c->peer_gpu >= d->total_gpus) {
            hs_daemon_fail(d, "hysim: %s: D2D copy to GPU %u, but the scenario has %u GPUs",
                           hs_session_name(s, who, sizeof(who)), c->peer_gpu, d->total_gpus);
            return -1;
        }
        if (c->peer_gpu == m->gpu) {
            op->dur_ps = hs_copy_time_device(sc, c->bytes, c->rows);
            return 0;
        }
        op->kind = HS_OP_PEER_COPY;
        op->peer = c->peer_gpu;
        op->from_peer = c->from_peer;
        return 0;
    default:
        hs_daemon_fail(d, "hysim: %s: unknown copy kind %d", hs_session_name(s, who, sizeof(who)), (int)c->kind);
        return -1;
    }
}

/* ------------------------------------------------------------- ingest */

/* reach_ns is a call's host cost and a submission latency: microseconds; more is a broken client. */
#define HS_MAX_REACH_NS 1000000000ull

/* When an op issued by m reaches its GPU: its host time and its reach (saturating). */
static uint64_t reach_ps(const hs_issued_op *m)
{
    uint64_t issue = hs_ns_to_ps(m->host_ns), reach = hs_ns_to_ps(m->reach_ns);
    return issue > HS_TIME_INF - reach ? HS_TIME_INF : issue + reach;
}

/*
 * A collective part issued in the same NCCL group as the stream's last op,
 * itself a collective not yet done, joins that op: NCCL runs a group as one
 * kernel per stream, so its parts start together (a Send and a Recv of one
 * group never wait for each other). 1: joined; 0: not; -1 after failing.
 */
static int join_group(hs_daemon *d, hs_session *s, const hs_issued_op *m, hs_stream *st)
{
    hs_op *tail = st->tail;
    uint64_t group = m->coll.group;
    if (group == 0 || !tail || tail->kind != HS_OP_COLLECTIVE || tail->group != group || tail->done)
        return 0;
    uint32_t first = tail->nparts;
    if (hs_coll_attach(d, s, m, tail) < 0)
        return -1;
    uint64_t issue_ps = reach_ps(m);
    if (tail->started)
        hs_coll_reached(d, tail, first, hs_max_u64(tail->start_ps, issue_ps));
    else
        tail->ready_ps = hs_max_u64(tail->ready_ps, issue_ps);
    return 1;
}

int hs_tl_ingest(hs_daemon *d, hs_session *s, const hs_issued_op *m)
{
    char who[256];
    if (m->host_ns < s->host_ns) {
        hs_daemon_fail(d, "hysim: %s: host time went backwards (op at %llu ns after %llu ns)",
                       hs_session_name(s, who, sizeof(who)), (unsigned long long)m->host_ns,
                       (unsigned long long)s->host_ns);
        return -1;
    }
    if (m->reach_ns > HS_MAX_REACH_NS) {
        hs_daemon_fail(d, "hysim: %s: op reaches its GPU %llu ns after its host time, more than a second",
                       hs_session_name(s, who, sizeof(who)), (unsigned long long)m->reach_ns);
        return -1;
    }
    s->host_ns = m->host_ns;
    hs_loop_saw(d, hs_ns_to_ps(m->host_ns));
    if (m->gpu < s->first_gpu || m->gpu - s->first_gpu >= s->gpu_count) {
        hs_daemon_fail(d, "hysim: %s: op on GPU %u, outside its GPUs %u..%u", hs_session_name(s, who, sizeof(who)),
                       m->gpu, s->first_gpu, s->first_gpu + s->gpu_count - 1);
        return -1;
    }
    if (m->kind == HS_ISSUED_NONE) {
        hs_daemon_fail(d, "hysim: %s: op without a kind", hs_session_name(s, who, sizeof(who)));
        return -1;
    }
    switch (m->kind) {
    case HS_ISSUED_STREAM_CREATE: return stream_create(d, s, m);
    case HS_ISSUED_STREAM_DESTROY: return stream_destroy(d, s, m);
    case HS_ISSUED_COMM_INIT: return hs_coll_comm_init(d, s, m);
    case HS_ISSUED_COMM_DESTROY: return hs_coll_comm_destroy(d, s, m);
    default: break;
    }

    hs_sgpu *sg = &s->gpus[m->gpu - s->first_gpu];
    hs_stream *st = hs_tl_stream(s, m->gpu, m->stream);
    if (!st) {
        hs_daemon_fail(d, "hysim: %s: op on stream %llu of GPU %u, which was never created (or was destroyed)",
                       hs_session_name(s, who, sizeof(who)), (unsigned long long)m->stream, m->gpu);
        return -1;
    }

    if (m->kind == HS_ISSUED_COLLECTIVE) {
        int joined = join_group(d, s, m, st);
        if (joined != 0)
            return joined < 0 ? -1 : 0;
    }

    hs_op *op = hs_xcalloc(1, sizeof(*op));
    op->refs = 1; /* ours until the end of this function */
    op->s = s;
    op->gpu = m->gpu;
    op->seq = s->next_seq++;
    op->issue_ps = hs_ns_to_ps(m->host_ns);
    op->ready_ps = reach_ps(m);
    op->stream = m->stream;
    hs_op *record = NULL; /* StreamWaitEvent: the record it waits for */

    switch (m->kind) {
    case HS_ISSUED_KERNEL:
        op->kind = HS_OP_KERNEL;
        op->label = hs_stats_label(d, m->kernel.name);
        op->kernel_source = (uint8_t)hs_kernel_time(d, m->gpu, &m->kernel, &op->dur_ps);
        if (op->kernel_source == HS_KERNEL_DEFAULT)
            hs_kernel_time_note_default(d, m->kernel.name, op->dur_ps);
        op->launch_gap_ps = m->kernel.graph_node ? 0 : hs_ns_to_ps(d->sc.compute.kernel_gap_ns);
        break;
    case HS_ISSUED_COPY:
        if (setup_copy(d, s, m, op) < 0)
            goto fail;
        break;
    case HS_ISSUED_MEMSET: {
        op->kind = HS_OP_MEMSET;
        op->bytes = m->memset.bytes;
        hs_copy_time t = hs_copy_time_memset(&d->sc, op->bytes, m->memset.rows);
        op->dur_ps = t.dur_ps;
        take_early(op, t.early_ps);
        break;
    }
    case HS_ISSUED_EVENT_RECORD: op->kind = HS_OP_RECORD; break;
    case HS_ISSUED_WAIT_EVENT:
        op->kind = HS_OP_WAIT_EVENT;
        /* the most recent record issued before it; never recorded: no wait */
        record = hs_u64map_get(&s->events, m->event);
        break;
    case HS_ISSUED_COLLECTIVE:
        op->kind = HS_OP_COLLECTIVE;
        op->label = hs_stats_coll_label(d, m->coll.kind);
        op->group = m->coll.group;
        if (hs_coll_attach(d, s, m, op) < 0)
            goto fail;
        break;
    default:
        hs_daemon_fail(d, "hysim: %s: unknown op kind %d", hs_session_name(s, who, sizeof(who)), (int)m->kind);
        goto fail;
    }

    /* dependencies: stream order, legacy default stream semantics, events */
    add_dep(op, st->tail);
    if (st == &sg->legacy) {
        for (size_t i = 0; i < sg->nall; i++)
            if (!sg->all[i]->non_blocking)
                add_dep(op, sg->all[i]->tail);
    } else if (!st->non_blocking) {
        add_dep(op, sg->legacy.tail);
    }
    add_dep(op, record);

    set_ref(&st->tail, op);
    if (op->kind == HS_OP_RECORD) {
        hs_op_ref(op);
        hs_op *old = hs_u64map_get(&s->events, m->event);
        hs_u64map_put(&s->events, m->event, op);
        hs_op_unref(old);
    }
    sg->pending++;
    s->pending++;
    if (op->npending == 0)
        heap_push(d, op->ready_ps, op, HS_EV_START);
    hs_op_unref(op);
    return 0;

fail:
    hs_op_unref(op);
    return -1;
}

/* ------------------------------------------------------------- processing */

static void count_done(hs_daemon *d, const hs_op *op)
{
    switch (op->kind) {
    case HS_OP_KERNEL: hs_kernel_time_count(d, op->kernel_source, op->dur_ps); break;
    case HS_OP_COPY:
    case HS_OP_PEER_COPY: d->sum.copies++; break;
    default: break;
    }
}

void hs_tl_op_complete(hs_daemon *d, hs_op *op, uint64_t t)
{
    if (op->done)
        return;
    op->done = true;
    op->done_ps = t;
    hs_session *s = op->s;
    hs_sgpu *sg = &s->gpus[op->gpu - s->first_gpu];
    sg->pending--;
    sg->last_done_ps = hs_max_u64(sg->last_done_ps, t);
    s->pending--;
    s->last_done_ps = hs_max_u64(s->last_done_ps, t);
    count_done(d, op);
    hs_stats_op_done(d, op);
    hs_loop_saw(d, t);

    hs_op **succ = op->succ;
    uint32_t n = op->nsucc;
    op->succ = NULL;
    op->nsucc = op->capsucc = 0;
    for (uint32_t i = 0; i < n; i++) {
        hs_op *x = succ[i];
        x->ready_ps = hs_max_u64(x->ready_ps, ready_after(op, x, t));
        if (--x->npending == 0)
            heap_push(d, x->ready_ps, x, HS_EV_START);
        hs_op_unref(x);
    }
    free(succ);
}

void hs_tl_part_done(hs_daemon *d, hs_op *op, uint64_t t)
{
    if (op->parts_left > 0 && --op->parts_left == 0)
        hs_tl_op_complete(d, op, t);
}

static void op_start(hs_daemon *d, hs_op *op, uint64_t t)
{
    op->started = true;
    op->start_ps = t;
    switch (op->kind) {
    case HS_OP_PEER_COPY:
        if (op->bytes == 0) {
            heap_push(d, t, op, HS_EV_DONE);
        } else {
            hs_flow f = {.owner = HS_FLOW_PEER_COPY, .op = op};
            uint32_t src = op->from_peer ? op->peer : op->gpu, dst = op->from_peer ? op->gpu : op->peer;
            hs_loop_start_flow(d, &f, src, dst, op->bytes, t);
        }
        break;
    case HS_OP_COLLECTIVE: hs_coll_reached(d, op, 0, t); break;
    default: heap_push(d, t > HS_TIME_INF - op->dur_ps ? HS_TIME_INF : t + op->dur_ps, op, HS_EV_DONE); break;
    }
}

void hs_tl_process_one(hs_daemon *d)
{
    hs_heap_ev ev = heap_pop(d);
    d->processed_ps = hs_max_u64(d->processed_ps, ev.time);
    if (ev.type == HS_EV_START)
        op_start(d, ev.op, ev.time);
    else if (ev.type == HS_EV_LOCAL_COPY)
        hs_coll_flow_done(d, ev.coll, 0, 0, ev.time);
    else if (ev.type == HS_EV_COLL_FLOW)
        hs_coll_flow_done(d, ev.coll, ev.step, ev.rank, ev.time);
    else
        hs_tl_op_complete(d, ev.op, ev.time);
    hs_op_unref(ev.op);
    d->steps++;
}

void hs_tl_free(hs_daemon *d)
{
    for (size_t i = 0; i < d->heaplen; i++)
        hs_op_unref(d->heap[i].op);
    free(d->heap);
    d->heap = NULL;
    d->heaplen = d->heapcap = 0;
}
