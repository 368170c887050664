/*
 * hysimd sessions: one per connection. Decodes ClientMsg frames, turns them
 * into the daemon's own requests (session_wire.c) and hands them on:
 * Register → setup, Batch → timeline, Wait → the loop (hs_loop_advance
 * answers), Threads and Wake → the waits that block it, CommSplit →
 * comm_split.c, Bye → closed cleanly. When a process's threads bound the
 * safe time and how late ones are taken: docs/time.md; what an unregistered
 * connection may do: docs/architecture.md, "Connections". A protocol
 * violation fails the run with a message naming the process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon_internal.h"
#include "run_stats.h"
#include "session_wire.h"

hs_session *hs_session_new(hs_daemon *d, int fd)
{
    hs_session *s = hs_xcalloc(1, sizeof(*s));
    s->d = d;
    s->fd = fd;
    s->index = d->connections++;
    s->state = HS_SESS_NEW;
    s->connected_ms = hs_daemon_now_ms();
    hs_frame_reader_init(&s->rd);
    hs_frame_reader_set_limit(&s->rd, HS_UNREGISTERED_FRAME_MAX); /* until it registers */
    hs_grow((void **)&d->sessions, &d->capsessions, d->nsessions + 1, sizeof(*d->sessions));
    d->sessions[d->nsessions++] = s;
    return s;
}

const char *hs_session_name(const hs_session *s, char *buf, size_t len)
{
    if (s->registered && s->world_size)
        snprintf(buf, len, "process %u (server %u, rank %u of %u, %s)", s->pid, s->server, s->rank, s->world_size,
                 s->program);
    else if (s->registered)
        snprintf(buf, len, "process %u (server %u, %s)", s->pid, s->server, s->program);
    else
        snprintf(buf, len, "unregistered connection #%u", s->index);
    return buf;
}

int hs_session_cmp(const hs_session *a, const hs_session *b)
{
#define CMP(f)        \
    if (a->f != b->f) \
        return a->f < b->f ? -1 : 1;
    CMP(server)
    CMP(first_gpu)
    CMP(pid)
    CMP(index)
#undef CMP
    return 0;
}

/* ------------------------------------------------------------- input */

void hs_session_drain(hs_session *s)
{
    while (s->fd >= 0 && !s->eof && !s->io_error) {
        long r = hs_frame_reader_fill(&s->rd, s->fd);
        if (r > 0)
            continue;
        if (r == 0)
            s->eof = true;
        else if (r != -1)
            s->io_error = true;
        break;
    }
}

void hs_session_close(hs_session *s)
{
    if (s->fd >= 0) {
        close(s->fd);
        s->fd = -1;
    }
    s->state = HS_SESS_CLOSED;
}

static void violation(hs_session *s, const char *what)
{
    char who[256];
    hs_daemon_fail(s->d, "hysim: %s: protocol violation: %s", hs_session_name(s, who, sizeof(who)), what);
}

/* host times sent by one process never decrease */
static bool host_ok(hs_session *s, uint64_t host_ns, const char *msg)
{
    if (host_ns >= s->host_ns)
        return true;
    char what[384];
    /* Within one process the clock only moves forward: this is almost always a thread whose first CUDA
     * work came after the others had all waited and the simulation had passed the process's time. */
    snprintf(what, sizeof(what),
             "host time went backwards (%s at %llu ns after %llu ns); if one of its threads made its first CUDA "
             "call after the others waited, have every thread issue GPU work before any waits (README, Threads)",
             msg, (unsigned long long)host_ns, (unsigned long long)s->host_ns);
    violation(s, what);
    return false;
}

/* Refuses an unregistered connection without failing the run; *counter says why. */
static void reject(hs_session *s, uint64_t *counter, const char *why)
{
    (*counter)++;
    if (why) {
        Hysim__Reply r = HYSIM__REPLY__INIT;
        r.error = (char *)why;
        hs_session_send(s, &r);
    }
    hs_session_close(s);
}

/* Constant-time comparison: the answer's timing tells nothing about the token. */
static bool token_ok(const char *want, const char *got)
{
    size_t lw = strlen(want), lg = got ? strlen(got) : 0;
    unsigned diff = (unsigned)(lw != lg);
    for (size_t i = 0; i < lw; i++)
        diff |= (unsigned char)want[i] ^ (unsigned char)(i < lg ? got[i] : 0);
    return diff == 0;
}

/* What has been simulated for good, in ps: not where a speculating fabric runs ahead. A process entering
 * the simulation (Register, Join) or a thread's late first work starts no earlier. */
static uint64_t simulated_ps(const hs_daemon *d) { return hs_max_u64(d->processed_ps, hs_fspec_now(d)); }

/* Its ancestors that registered or that hysim run started, and have issued no work, are launchers. */
static void mark_launchers(hs_daemon *d, const hs_session *s)
{
    for (size_t a = 0; a < s->nancestors; a++) {
        for (size_t i = 0; i < d->nsessions; i++) {
            hs_session *o = d->sessions[i];
            if (o != s && o->registered && o->pid == s->ancestors[a] && !o->active)
                o->launcher = true;
        }
        for (int i = 0; i < d->nchildren; i++)
            if ((uint32_t)d->children[i].pid == s->ancestors[a])
                d->children[i].launcher = true;
    }
    /* A launcher that registers after its descendant did. */
    for (size_t i = 0; i < d->nsessions && !s->active; i++) {
        const hs_session *o = d->sessions[i];
        for (size_t a = 0; o != s && o->registered && a < o->nancestors; a++)
            if (o->ancestors[a] == s->pid)
                ((hs_session *)s)->launcher = true;
    }
}

/* Register.rank / world_size: the ranks of the job the session is one of. */
static void note_rank(hs_daemon *d, hs_session *s, uint32_t rank, uint32_t world_size)
{
    if (world_size == 0 || rank >= world_size)
        return;
    if (d->world_size == 0) {
        d->world_size = world_size;
        d->rank_seen = hs_xcalloc(world_size, 1);
    }
    if (world_size != d->world_size) {
        char who[256];
        fprintf(stderr,
                "hysimd: note: %s says WORLD_SIZE=%u, another process %u; only the first job's ranks are awaited\n",
                hs_session_name(s, who, sizeof(who)), world_size, d->world_size);
        return;
    }
    if (!d->rank_seen[rank]) {
        d->rank_seen[rank] = 1;
        d->ranks_seen++;
    }
}

static void on_register(hs_session *s, const Hysim__Register *m)
{
    hs_daemon *d = s->d;
    char what[256];
    if (s->registered) {
        violation(s, "a second Register");
        return;
    }
    if (d->token[0] && !token_ok(d->token, m->token)) {
        fprintf(stderr, "hysimd: refused a session of pid %u: %s HYSIM_TOKEN\n", m->pid,
                m->token && m->token[0] ? "wrong" : "no");
        reject(s, &d->sum.rejected_token,
               "hysimd refused the session: its HYSIM_TOKEN is not this run's (run the program under `hysim run`)");
        return;
    }
    uint32_t per = (uint32_t)d->sc.servers.gpus_per_server;
    /* no GPU count: the whole server, which a process started without the scenario (hysim join) cannot know */
    uint32_t first_gpu = m->gpu_count ? m->first_gpu : m->server * per, gpu_count = m->gpu_count ? m->gpu_count : per;
    if (first_gpu >= d->total_gpus || gpu_count > d->total_gpus - first_gpu ||
        m->server >= (uint32_t)d->sc.servers.count) {
        snprintf(what, sizeof(what),
                 "Register of server %u, GPUs %u..%u (%u GPUs), but the scenario has %d servers and %u GPUs", m->server,
                 m->first_gpu, m->first_gpu + m->gpu_count - 1, m->gpu_count, d->sc.servers.count, d->total_gpus);
        violation(s, what);
        return;
    }
    s->registered = true;
    hs_frame_reader_set_limit(&s->rd, 0);
    s->server = m->server;
    s->pid = m->pid;
    s->first_gpu = first_gpu;
    s->gpu_count = gpu_count;
    snprintf(s->program, sizeof(s->program), "%s", m->program && m->program[0] ? m->program : "?");
    s->nancestors = hs_min_u64(m->n_ancestors, HS_MAX_ANCESTORS);
    if (s->nancestors)
        memcpy(s->ancestors, m->ancestors, s->nancestors * sizeof(*s->ancestors));
    mark_launchers(d, s);
    note_rank(d, s, m->rank, m->world_size);
    if (d->remote_pending && d->remote_pending[m->server]) { /* its server, started elsewhere, has joined */
        d->remote_pending[m->server] = 0;
        d->remote_missing--;
    }
    if (m->world_size && m->rank < m->world_size) {
        s->rank = m->rank;
        s->world_size = m->world_size;
    }
    /* A process that is none of the children may register after the simulation
     * has moved on: its clock starts where the simulation is, not in its past. */
    s->host_ns = hs_max_u64(m->host_ns, hs_ps_to_ns_ceil(simulated_ps(d)));
    s->state = HS_SESS_RUNNING;
    hs_tl_session_init(s);
    for (int i = 0; i < d->nchildren; i++)
        if ((uint32_t)d->children[i].pid == m->pid)
            d->children[i].registered = true;
    d->sum.sessions++;
    hs_loop_saw(d, hs_ns_to_ps(s->host_ns));

    const hs_scenario *sc = &d->sc;
    Hysim__Setup setup = HYSIM__SETUP__INIT;
    setup.gpu_model = (char *)sc->gpu.model;
    setup.gpu_memory_bytes = sc->gpu.memory_bytes;
    setup.sm_count = (uint32_t)sc->gpu.sm_count;
    setup.cc_major = (uint32_t)sc->gpu.cc_major;
    setup.cc_minor = (uint32_t)sc->gpu.cc_minor;
    setup.gpus_per_server = (uint32_t)sc->servers.gpus_per_server;
    setup.host_time = (uint32_t)sc->run.host_time;
    setup.host_time_scale = sc->run.host_time_scale;
    setup.host_time_fixed_ns = sc->run.host_time_fixed_ns;
    setup.epoch_ns = d->epoch_ns;
    setup.total_gpus = d->total_gpus;
    setup.nvlink_gbps_per_gpu = sc->nvlink.gbps_per_gpu;
    setup.routing = (uint32_t)sc->values.routing;
    setup.routing_zipf_s = sc->values.routing_zipf_s;
    setup.seed = sc->run.seed;
    Hysim__Reply r = HYSIM__REPLY__INIT;
    r.now_ns = s->host_ns;
    r.done = true;
    r.setup = &setup;
    hs_session_send(s, &r);
}

hs_wait *hs_session_wait(hs_session *s, size_t i) { return i == 0 ? &s->wait : &s->more_waits[i - 1]; }

/* WAITING once every thread that issued work waits. */
static void settle(hs_session *s)
{
    uint32_t threads = s->threads ? s->threads : 1;
    if (s->state == HS_SESS_RUNNING || s->state == HS_SESS_WAITING)
        s->state = s->nwaits > 0 && s->nwaits >= threads ? HS_SESS_WAITING : HS_SESS_RUNNING;
}

static hs_wait *push_wait(hs_session *s)
{
    if (s->nwaits > 0)
        hs_grow((void **)&s->more_waits, &s->capwaits, s->nwaits, sizeof(*s->more_waits));
    hs_wait *w = hs_session_wait(s, s->nwaits++);
    memset(w, 0, sizeof(*w));
    return w;
}

void hs_session_wait_answered(hs_session *s, size_t i, uint64_t n_ns)
{
    bool all_waited = s->state == HS_SESS_WAITING;
    hs_wait *w = hs_session_wait(s, i);
    hs_op_unref(w->target);
    free(w->timed);
    if (i == 0 && s->nwaits > 1)
        s->wait = s->more_waits[0];
    size_t from = i == 0 ? 1 : i; /* more_waits[from..] move down by one */
    if (s->nwaits > 1 && from < s->nwaits - 1)
        memmove(&s->more_waits[from - 1], &s->more_waits[from], (s->nwaits - 1 - from) * sizeof(*s->more_waits));
    s->nwaits--;
    memset(hs_session_wait(s, s->nwaits), 0, sizeof(hs_wait));
    /* Its thread runs from n_ns. Other threads that ran may have sent work
     * stamped earlier, which must still be accepted: only a session whose
     * threads all waited moves on to n_ns. */
    if (all_waited)
        s->host_ns = hs_max_u64(s->host_ns, n_ns);
    settle(s);
}

/*
 * A stamp of a process of several threads, taken where the process is: the answer to another thread's Wait may
 * have been on its way when it was taken, moving the one clock past it (Waits, Wakes, Bye).
 */
static uint64_t taken_at(const hs_session *s, uint64_t host_ns)
{
    return s->threaded ? hs_max_u64(host_ns, s->host_ns) : host_ns;
}

static void on_wait(hs_session *s, const Hysim__Wait *m)
{
    char what[256];
    uint64_t host_ns = taken_at(s, m->host_ns);
    if (!host_ok(s, host_ns, "Wait"))
        return;
    bool per_gpu = m->cond == HYSIM__WAIT__COND__STREAM_IDLE || m->cond == HYSIM__WAIT__COND__DEVICE_IDLE;
    if ((unsigned)m->cond > HYSIM__WAIT__COND__COLL_VALUES) {
        snprintf(what, sizeof(what), "Wait with unknown condition %d", (int)m->cond);
        violation(s, what);
        return;
    }
    if (m->cond == HYSIM__WAIT__COND__THREAD_EXIT && (m->thread == 0 || m->query || m->id == 0)) {
        violation(s, "a THREAD_EXIT Wait needs a thread and an id, and cannot be a query");
        return;
    }
    if (m->cond == HYSIM__WAIT__COND__UNTIL && (m->query || m->n_timed_events)) {
        violation(s, "an UNTIL Wait (a sleep) cannot be a query or time events");
        return;
    }
    if (m->cond == HYSIM__WAIT__COND__COLL_VALUES && (m->query || m->n_timed_events)) {
        violation(s, "a COLL_VALUES Wait cannot be a query or time events");
        return;
    }
    if (per_gpu && (m->gpu < s->first_gpu || m->gpu - s->first_gpu >= s->gpu_count)) {
        snprintf(what, sizeof(what), "Wait on GPU %u, outside its GPUs %u..%u", m->gpu, s->first_gpu,
                 s->first_gpu + s->gpu_count - 1);
        violation(s, what);
        return;
    }
    if (s->nwaits > 0 && s->d->sc.run.mode == HS_MODE_OPTIMISTIC) {
        hs_daemon_fail(s->d, "hysim: run.mode: optimistic does not support several threads of one process "
                             "waiting at once (use the exact mode)");
        return;
    }
    hs_wait *w = push_wait(s);
    if (m->cond == HYSIM__WAIT__COND__STREAM_IDLE) {
        hs_stream *st = hs_tl_stream(s, m->gpu, m->stream);
        if (!st) {
            snprintf(what, sizeof(what), "Wait on stream %llu of GPU %u, which does not exist",
                     (unsigned long long)m->stream, m->gpu);
            violation(s, what);
            return;
        }
        w->target = st->tail;
    } else if (m->cond == HYSIM__WAIT__COND__EVENT_DONE) {
        w->target = hs_u64map_get(&s->events, m->event);
    }
    if (w->target)
        hs_op_ref(w->target);
    w->cond = hs_wire_wait_cond(m->cond);
    w->query = m->query;
    w->host_ns = host_ns;
    w->gpu = m->gpu;
    w->stream_id = m->stream;
    w->event_id = m->event;
    w->id = m->id;
    w->thread_id = m->cond == HYSIM__WAIT__COND__THREAD_EXIT ? m->thread : 0;
    w->until_ns = m->cond == HYSIM__WAIT__COND__UNTIL ? m->until_ns : 0;
    if (m->cond == HYSIM__WAIT__COND__COLL_VALUES) {
        w->comm_key = m->comm_key;
        w->coll_seq = m->coll_seq;
        w->coll_rank = m->coll_rank;
        w->coll_peer = m->coll_peer ? (int32_t)(m->coll_peer - 1) : -1;
    }
    if (m->n_timed_events) {
        w->timed = hs_xcalloc(m->n_timed_events, sizeof(*w->timed));
        memcpy(w->timed, m->timed_events, m->n_timed_events * sizeof(*w->timed));
        w->ntimed = m->n_timed_events;
    }
    s->host_ns = host_ns;
    if (m->threads)
        s->threads = m->threads;
    s->threaded |= s->threads > 1;
    settle(s);
    hs_loop_saw(s->d, hs_ns_to_ps(host_ns));
}

/* A thread that a THREAD_EXIT Wait waits for exited at host time exit_ns: that Wait can be answered. */
static bool thread_exited(hs_session *s, uint64_t thread, uint64_t exit_ns)
{
    for (size_t i = 0; i < s->nwaits; i++) {
        hs_wait *w = hs_session_wait(s, i);
        if (w->cond == HS_WAIT_THREAD_EXIT && w->thread_id == thread && !w->exited) {
            w->exited = true;
            w->exit_ns = exit_ns;
            return true;
        }
    }
    char what[128];
    snprintf(what, sizeof(what), "Threads says thread %llu exited, which no Wait waits for",
             (unsigned long long)thread);
    violation(s, what);
    return false;
}

static void on_threads(hs_session *s, const Hysim__Threads *m)
{
    /* A count only: a thread that does not wait in hysimd (one blocking in a real-time wait) may send it
     * stamped before the answer to another's Wait, still on its way, moved the process's clock. */
    bool stale = !m->exited && m->host_ns < s->host_ns && s->nwaits < s->threads;
    if (!stale) {
        if (!host_ok(s, m->host_ns, "Threads"))
            return;
        if (m->exited && !thread_exited(s, m->exited, m->host_ns))
            return;
        s->host_ns = m->host_ns;
        hs_loop_saw(s->d, hs_ns_to_ps(m->host_ns));
    }
    s->outside = m->outside;
    s->threads = m->threads;
    s->threaded |= s->threads > 1;
    settle(s);
}

/* A timed wait's Wait woken by another thread's signal: answered at the Wake's host time. */
static void on_wake(hs_session *s, const Hysim__Wake *m)
{
    hs_wait *w = NULL;
    for (size_t i = 0; i < s->nwaits && !w; i++) {
        hs_wait *x = hs_session_wait(s, i);
        if (x->id == m->id && x->cond == HS_WAIT_UNTIL && !x->woken)
            w = x;
    }
    /* Answered already (its deadline came first): the signal came too late to matter, whatever its stamp
     * (the answer may have moved the process's clock past it on its way). */
    if (!w)
        return;
    uint64_t host_ns = taken_at(s, m->host_ns);
    if (!host_ok(s, host_ns, "Wake"))
        return;
    w->woken = true;
    w->wake_ns = host_ns;
    s->host_ns = host_ns;
    hs_loop_saw(s->d, hs_ns_to_ps(host_ns));
}

/* The host time a message was sent at (a batch: its first op's); NULL when it carries none. */
static uint64_t *stamp_of(const Hysim__ClientMsg *m)
{
    switch (m->msg_case) {
    case HYSIM__CLIENT_MSG__MSG_BATCH: return m->batch->n_ops ? &m->batch->ops[0]->host_ns : NULL;
    case HYSIM__CLIENT_MSG__MSG_WAIT: return &m->wait->host_ns;
    case HYSIM__CLIENT_MSG__MSG_BYE: return &m->bye->host_ns;
    case HYSIM__CLIENT_MSG__MSG_COMM_SPLIT: return &m->comm_split->host_ns;
    case HYSIM__CLIENT_MSG__MSG_THREADS: return &m->threads->host_ns;
    case HYSIM__CLIENT_MSG__MSG_WAKE: return &m->wake->host_ns;
    case HYSIM__CLIENT_MSG__MSG_JOIN: return &m->join->host_ns;
    default: return NULL;
    }
}

/*
 * A message while every thread that issued work waits: a thread new to the
 * simulator (or one leaving). If the simulation has gone past it, its work
 * cannot start where its clock says: the process's ops start no earlier
 * than where the simulation was (floor_ns) until its clock catches up, as
 * if that thread had been slower, and the run's report counts it when the
 * message carried work or a wake (a thread count or a Bye moves nothing
 * simulated: counted, the figure varied with the machine's scheduling).
 */
static void late_thread(hs_session *s, const Hysim__ClientMsg *m)
{
    uint64_t done_ps = simulated_ps(s->d);
    const uint64_t *t = stamp_of(m);
    if (!t || hs_ns_to_ps(*t) >= done_ps)
        return;
    s->floor_ns = hs_max_u64(s->floor_ns, hs_ps_to_ns_ceil(done_ps));
    if (m->msg_case == HYSIM__CLIENT_MSG__MSG_BATCH || m->msg_case == HYSIM__CLIENT_MSG__MSG_WAIT ||
        m->msg_case == HYSIM__CLIENT_MSG__MSG_WAKE || m->msg_case == HYSIM__CLIENT_MSG__MSG_COMM_SPLIT)
        s->d->sum.late_threads++;
}

/* Its first work, or a thread back from blocking outside: it holds the safe time back from here, where the
 * simulation has not passed. */
static void on_join(hs_session *s, const Hysim__Join *m)
{
    s->active = true;
    s->launcher = false;
    s->outside = false;
    s->host_ns = hs_max_u64(hs_max_u64(s->host_ns, m->host_ns), hs_ps_to_ns_ceil(simulated_ps(s->d)));
    hs_loop_saw(s->d, hs_ns_to_ps(s->host_ns));
    Hysim__Reply r = HYSIM__REPLY__INIT;
    r.id = m->id;
    r.now_ns = s->host_ns;
    r.done = true;
    hs_session_send(s, &r);
}

static void on_bye(hs_session *s, const Hysim__Bye *m)
{
    uint64_t host_ns = taken_at(s, m->host_ns); /* its other threads may still wait (a watchdog's, at exit) */
    if (!host_ok(s, host_ns, "Bye"))
        return;
    s->host_ns = host_ns;
    hs_loop_saw(s->d, hs_ns_to_ps(host_ns));
    for (size_t i = 0; i < m->n_peak_memory_bytes; i++) {
        s->d->sum.peak_memory_bytes_max = hs_max_u64(s->d->sum.peak_memory_bytes_max, m->peak_memory_bytes[i]);
        if (i < s->gpu_count)
            hs_stats_peak_memory(s->d, s->first_gpu + (uint32_t)i, m->peak_memory_bytes[i]);
    }
    s->said_bye = true;
    hs_session_close(s);
}

static void handle(hs_session *s, const Hysim__ClientMsg *m)
{
    if (!s->registered && m->msg_case != HYSIM__CLIENT_MSG__MSG_REGISTER) {
        reject(s, &s->d->sum.rejected_unknown, NULL); /* a stranger, not a part of the program */
        return;
    }
    if (m->msg_case == HYSIM__CLIENT_MSG__MSG__NOT_SET || !m->batch) {
        violation(s, "empty ClientMsg");
        return;
    }
    if (s->nwaits > 0 && s->wait.id == 0) {
        violation(s, "a message while its Wait is unanswered");
        return;
    }
    /* a session that did not hold the safe time back: whatever it sends may come after the simulation passed it */
    if (!hs_session_bounds(s) && s->registered && m->msg_case != HYSIM__CLIENT_MSG__MSG_JOIN &&
        m->msg_case != HYSIM__CLIENT_MSG__MSG_REGISTER)
        late_thread(s, m);
    /* Until the process's clock catches up with a late thread's floor, its Waits and other messages are
     * taken there too, as its ops are (below): they come after those ops. */
    uint64_t *stamp = stamp_of(m);
    if (stamp && m->msg_case != HYSIM__CLIENT_MSG__MSG_BATCH && *stamp < s->floor_ns)
        *stamp = s->floor_ns;
    if (s->split_waiting) {
        violation(s, "a message while its CommSplit is unanswered");
        return;
    }
    if (m->msg_case == HYSIM__CLIENT_MSG__MSG_REGISTER) {
        on_register(s, m->register_);
        return;
    }
    if (!s->active && (m->msg_case == HYSIM__CLIENT_MSG__MSG_BATCH || m->msg_case == HYSIM__CLIENT_MSG__MSG_WAIT)) {
        s->active = true; /* work without a Join: its host time is checked as it comes */
        s->launcher = false;
    }
    switch (m->msg_case) {
    case HYSIM__CLIENT_MSG__MSG_JOIN: on_join(s, m->join); break;
    case HYSIM__CLIENT_MSG__MSG_BATCH:
        for (size_t i = 0; i < m->batch->n_ops && !s->d->failed; i++) {
            hs_issued_op op;
            hs_wire_op(m->batch->ops[i], &op);
            /* late_thread; and in a process of several threads, as for a Wait (on_wait) */
            uint64_t floor = taken_at(s, s->floor_ns);
            if (op.host_ns < floor)
                op.host_ns = floor;
            hs_tl_ingest(s->d, s, &op);
        }
        break;
    case HYSIM__CLIENT_MSG__MSG_WAIT: on_wait(s, m->wait); break;
    case HYSIM__CLIENT_MSG__MSG_BYE: on_bye(s, m->bye); break;
    case HYSIM__CLIENT_MSG__MSG_THREADS: on_threads(s, m->threads); break;
    case HYSIM__CLIENT_MSG__MSG_WAKE: on_wake(s, m->wake); break;
    case HYSIM__CLIENT_MSG__MSG_COMM_SPLIT:
        if (host_ok(s, m->comm_split->host_ns, "CommSplit")) {
            hs_split_request r;
            hs_split_rank_call *calls;
            hs_wire_split(m->comm_split, &r, &calls);
            hs_split_call(s->d, s, &r); /* answered once every parent rank has called */
            free(calls);
        }
        break;
    default: violation(s, "unknown ClientMsg"); break;
    }
}

void hs_session_process(hs_session *s)
{
    hs_daemon *d = s->d;
    hs_session_drain(s);
    while (s->fd >= 0 && !d->failed) {
        const uint8_t *body;
        size_t len;
        int r = hs_frame_reader_next(&s->rd, &body, &len);
        if (r == 1)
            break;
        char err[512] = "";
        if (r == HS_FRAME_TOO_LARGE)
            d->sum.rejected_oversize++;
        if (r != HS_FRAME_OK && !s->registered) {
            hs_session_close(s);
            return;
        }
        if (r != HS_FRAME_OK) {
            snprintf(err, sizeof(err), "bad frame (%s)", hs_frame_status_name(r));
            violation(s, err);
            return;
        }
        Hysim__ClientMsg *m = hs_frame_decode_client_msg(body, len, err, sizeof(err));
        if (!m && !s->registered) {
            reject(s, &d->sum.rejected_unknown, NULL);
            return;
        }
        if (!m) {
            char what[600];
            snprintf(what, sizeof(what), "undecodable frame: %s", err);
            violation(s, what);
            return;
        }
        handle(s, m);
        hysim__client_msg__free_unpacked(m, NULL);
    }
    if (s->fd < 0 || d->failed || !(s->eof || s->io_error))
        return;
    if (!s->registered && s->state != HS_SESS_CLOSED && (s->rd.len > 0 || s->io_error)) {
        reject(s, &d->sum.rejected_unknown, NULL); /* left inside its first frame: not the program */
        return;
    }
    /* the peer is gone and every complete frame has been handled */
    if (s->said_bye)
        hs_session_close(s);
    else if (!s->registered && s->rd.len == 0 && !s->io_error)
        hs_session_close(s); /* connected and left without a word: not an application */
    else if (hs_frame_reader_at_eof(&s->rd) == HS_FRAME_TRUNCATED)
        hs_daemon_session_lost(d, s, "closed its connection inside a frame");
    else
        hs_daemon_session_lost(d, s, "closed its connection without Bye");
}

void hs_session_free(hs_session *s)
{
    if (s->fd >= 0)
        close(s->fd);
    while (s->nwaits > 0) {
        hs_wait *w = hs_session_wait(s, --s->nwaits);
        hs_op_unref(w->target);
        free(w->timed);
    }
    free(s->more_waits);
    hs_tl_session_free(s);
    hs_frame_reader_free(&s->rd);
    free(s);
}
