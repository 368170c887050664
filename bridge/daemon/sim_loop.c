/*
 * The simulation loop (hs_loop_*): the global safe time, stepping the
 * timeline and the fabric, and the answers to Wait in exact mode:
 * docs/time.md, "The loop in detail".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_internal.h"
#include "background.h"
#include "run_stats.h"
#include "stats_output.h"

/* Drain the sockets every this many events while simulating. */
#define HS_DRAIN_EVERY 1024

void hs_loop_saw(hs_daemon *d, uint64_t t_ps)
{
    if (t_ps != HS_TIME_INF && t_ps > d->sum.sim_end_ps)
        d->sum.sim_end_ps = t_ps;
}

/* ------------------------------------------------------------- flows */

int hs_loop_start_flow(hs_daemon *d, const hs_flow *owner, uint32_t src, uint32_t dst, uint64_t bytes,
                       uint64_t start_ps)
{
    uint64_t id = d->next_flow_id++;
    hs_grow((void **)&d->flows, &d->flowcap, (size_t)id + 1, sizeof(*d->flows));
    d->flows[id] = *owner;
    if (owner->op)
        hs_op_ref(owner->op);
    char err[512] = "";
    if (start_ps < hs_fspec_now(d)) { /* ahead of a speculating fabric's time is fine: it rolls back */
        /* Host clocks read from the real CPU (docs/time.md, "Late flows"): a process's threads share one clock
         * whose stamps may lag, so its work can reach a fabric that moved on; it starts where the fabric is. */
        enum hs_host_time ht = d->sc.run.host_time;
        if (ht != HS_HOST_TIME_REAL && ht != HS_HOST_TIME_SCALED) {
            hs_daemon_fail(d,
                           "hysim: internal error: flow %llu would start at %llu ps, before the fabric's time %llu ps",
                           (unsigned long long)id, (unsigned long long)start_ps, (unsigned long long)hs_fspec_now(d));
            return -1;
        }
        d->sum.late_flows++;
        d->sum.late_flow_max_ps = hs_max_u64(d->sum.late_flow_max_ps, hs_fspec_now(d) - start_ps);
        start_ps = hs_fspec_now(d);
    }
    hs_stats_flow_started(d, start_ps);
    hs_statsout_flow_started(d, id, owner->owner == HS_FLOW_PEER_COPY ? HS_FLOWKIND_COPY : HS_FLOWKIND_COLLECTIVE, src,
                             dst, bytes, start_ps);
    if (hs_fspec_add_flow(d, id, src, dst, bytes, start_ps, err, sizeof(err)) < 0) {
        hs_daemon_fail(d, "hysim: the fabric refused flow %llu (GPU %u → GPU %u, %llu bytes at %llu ps): %s",
                       (unsigned long long)id, src, dst, (unsigned long long)bytes, (unsigned long long)start_ps, err);
        return -1;
    }
    return 0;
}

static void flow_completed(hs_daemon *d, const hs_flow_done *done)
{
    uint64_t id = done->flow_id;
    if (hs_bg_is_flow(id)) {
        hs_bg_flow_done(d, done); /* nothing waits for it */
        return;
    }
    if (id >= d->next_flow_id || d->flows[id].owner == 0) {
        hs_daemon_fail(d, "hysim: internal error: the fabric reported flow %llu, which is not running",
                       (unsigned long long)id);
        return;
    }
    hs_flow f = d->flows[id];
    memset(&d->flows[id], 0, sizeof(d->flows[id]));
    d->sum.flows++;
    hs_loop_saw(d, done->finish_ps);
    hs_stats_flow_done(d, done->finish_ps);
    hs_statsout_flow_done(d, id, done->finish_ps);
    if (f.owner == HS_FLOW_PEER_COPY) {
        hs_tl_op_complete(d, f.op, done->finish_ps);
        hs_op_unref(f.op);
    } else {
        hs_coll_flow_done(d, f.coll, f.step, f.rank, done->finish_ps);
    }
}

/* The program's flows in the fabric: background flows never hold anything up. */
static uint64_t program_flows(const hs_daemon *d) { return hs_fspec_in_flight(d) - hs_bg_in_flight(d); }

/* ------------------------------------------------------------- bound */

static uint64_t running_bound(const hs_daemon *d)
{
    uint64_t b = HS_TIME_INF;
    if (d->spec_child)
        return b; /* a speculation: as if no process will issue more work */
    for (size_t i = 0; i < d->nsessions; i++) {
        const hs_session *s = d->sessions[i];
        if (hs_session_bounds(s))
            b = hs_min_u64(b, hs_ns_to_ps(s->host_ns));
    }
    for (int i = 0; i < d->nchildren; i++)
        if (!d->children[i].exited && !d->children[i].registered && !d->children[i].launcher)
            return 0;
    if (d->ranks_seen < d->world_size || d->remote_missing > 0)
        return 0; /* a rank of the job, or a server started elsewhere, has yet to register */
    return b;
}

/* ------------------------------------------------------------- waits */

/* Whether the condition holds by what has been simulated, and since when. */
static bool wait_cond(const hs_session *s, const hs_wait *w, uint64_t *t_ps)
{
    switch (w->cond) {
    case HS_WAIT_STREAM_IDLE:
    case HS_WAIT_EVENT_DONE:
        if (!w->target) {
            *t_ps = 0;
            return true;
        }
        *t_ps = w->target->done_ps;
        return w->target->done;
    case HS_WAIT_DEVICE_IDLE: {
        const hs_sgpu *sg = &s->gpus[w->gpu - s->first_gpu];
        *t_ps = sg->last_done_ps;
        return sg->pending == 0;
    }
    case HS_WAIT_THREAD_EXIT: /* final once the exit arrived: it needs no simulation */
        *t_ps = hs_ns_to_ps(w->exit_ns);
        return w->exited;
    case HS_WAIT_UNTIL: /* a sleep: its end is known from the start (woken: not done) */
        *t_ps = hs_ns_to_ps(w->until_ns);
        return true;
    case HS_WAIT_COLL_VALUES: { /* no simulation: once every rank's part came, from the last's issue */
        bool ready;
        size_t len;
        uint64_t last_ps;
        hs_cvals_get(s->d, w->comm_key, w->coll_seq, w->coll_rank, w->coll_peer, &ready, &last_ps, &len);
        *t_ps = hs_max_u64(hs_ns_to_ps(w->host_ns), last_ps);
        return ready;
    }
    default: /* PROCESS_IDLE */ *t_ps = s->last_done_ps; return s->pending == 0;
    }
}

/* A timed wait that another thread woke before its deadline (a Wake at or after it comes too late). */
static bool woken_first(const hs_wait *w) { return w->woken && w->wake_ns < w->until_ns; }

/* The host time the answer will carry, once known. */
static bool wait_wake_ns(const hs_session *s, const hs_wait *w, uint64_t *n_ns)
{
    uint64_t t;
    if (w->query) {
        *n_ns = w->host_ns;
        return true;
    }
    if (woken_first(w)) { /* a timed wait another thread signalled, which ran then: nothing to simulate */
        *n_ns = hs_max_u64(w->host_ns, w->wake_ns);
        return true;
    }
    if (!wait_cond(s, w, &t))
        return false;
    *n_ns = hs_max_u64(w->host_ns, hs_ps_to_ns_ceil(t));
    return true;
}

/* Whether everything the answer would say is final already. */
static bool wait_final(const hs_session *s, const hs_wait *w)
{
    uint64_t t;
    /* A sleep's end is known at once, but answered early it would move the process's one host clock
     * ahead of its other threads: it waits until the simulation gets there (optimistic mode, where only
     * one thread of a process waits at a time, need not). */
    if (w->cond == HS_WAIT_UNTIL)
        return woken_first(w) || s->d->sc.run.mode == HS_MODE_OPTIMISTIC;
    if (w->query && !wait_cond(s, w, &t))
        return false; /* may still become true by N */
    for (size_t i = 0; i < w->ntimed; i++) {
        const hs_op *rec = hs_u64map_get(&s->events, w->timed[i]);
        if (rec && !rec->done)
            return false;
    }
    return true;
}

static void answer(hs_daemon *d, hs_session *s, size_t wi, uint64_t n_ns)
{
    hs_wait *w = hs_session_wait(s, wi);
    uint64_t now_ps = hs_ns_to_ps(n_ns), t = 0;
    hs_answer r = {.now_ns = n_ns, .done = wait_cond(s, w, &t) && t <= now_ps, .id = w->id};
    hs_event_time *et = w->ntimed ? hs_xcalloc(w->ntimed, sizeof(*et)) : NULL; /* most Waits time no events */
    for (size_t i = 0; i < w->ntimed; i++) {
        const hs_op *rec = hs_u64map_get(&s->events, w->timed[i]);
        et[i].event = w->timed[i];
        et[i].recorded = rec != NULL;
        et[i].done = rec && rec->done && rec->done_ps <= now_ps;
        et[i].time_ps = et[i].done ? rec->done_ps : 0;
    }
    r.event_times = et;
    r.nevent_times = w->ntimed;
    if (w->cond == HS_WAIT_COLL_VALUES) {
        bool ready;
        uint64_t last_ps;
        r.values =
            hs_cvals_get(d, w->comm_key, w->coll_seq, w->coll_rank, w->coll_peer, &ready, &last_ps, &r.values_len);
        r.has_values = r.values != NULL;
    }
    if (d->spec_child)
        hs_spec_child_answered(d, s, &r); /* a speculation keeps its target's answer */
    hs_session_reply(s, &r);
    free(et);

    char what[128];
    /* A join's wait is left out of the trace: whether one is sent at all depends on
     * whether the joined thread had exited already in wall time. */
    if (w->cond != HS_WAIT_THREAD_EXIT)
        hs_stats_wait_answered(d, s, hs_wait_describe(w, what, sizeof(what)), w->host_ns, n_ns);
    hs_session_wait_answered(s, wi, n_ns);
    hs_loop_saw(d, now_ps);
}

/*
 * Answers the earliest wait whose answer is final, over every session: 1, or
 * 0 when none is. For the others whose time N is known, lowers *cap_tl to
 * N ns + 1 ps and *cap_fabric to N ns. One answer a pass: the session it
 * answers may run again from there, which lowers the bound for every other
 * session's waits (answering a later session in the same pass, against the
 * bound from before, let one process's watchdog wake past another's present).
 */
static int answer_ready(hs_daemon *d, uint64_t bound, uint64_t *cap_tl, uint64_t *cap_fabric)
{
    uint64_t next = hs_tl_next_time(d);
    bool fabric_busy = program_flows(d) > 0;
    uint64_t fabric_now = hs_fspec_now(d);
    hs_session *best = NULL;
    size_t best_wi = 0;
    uint64_t best_ns = 0;
    for (size_t i = 0; i < d->nsessions; i++) {
        hs_session *s = d->sessions[i];
        if (s->state != HS_SESS_WAITING && s->state != HS_SESS_RUNNING)
            continue;
        for (size_t wi = 0; wi < s->nwaits; wi++) {
            const hs_wait *w = hs_session_wait(s, wi);
            uint64_t n_ns;
            if (!wait_wake_ns(s, w, &n_ns))
                continue;
            uint64_t c = hs_ns_to_ps(n_ns);
            if (c == HS_TIME_INF) {
                hs_daemon_fail(d, "hysim: simulated time ran out of range (a Wait at %llu ns)",
                               (unsigned long long)n_ns);
                return 0;
            }
            if (wait_final(s, w) || (bound > c && next > c && (!fabric_busy || fabric_now >= c))) {
                if (!best || n_ns < best_ns) { /* the process has one host clock: its earliest answer first */
                    best = s;
                    best_wi = wi;
                    best_ns = n_ns;
                }
                continue;
            }
            *cap_tl = hs_min_u64(*cap_tl, c + 1);
            *cap_fabric = hs_min_u64(*cap_fabric, c);
        }
    }
    if (!best)
        return 0;
    answer(d, best, best_wi, best_ns);
    return 1;
}

/* ------------------------------------------------------------- stepping */

void hs_loop_advance(hs_daemon *d)
{
    uint64_t since_drain = 0;
    while (!hs_daemon_interrupted(d)) { /* failed, or a stop signal or a dead child (hysimd.c) */
        uint64_t bound = running_bound(d), cap_tl = HS_TIME_INF, cap_fabric = HS_TIME_INF;
        if (answer_ready(d, bound, &cap_tl, &cap_fabric) > 0)
            continue; /* those sessions run again: the bound moved */
        uint64_t next = hs_tl_next_time(d);
        /* the fabric first, up to the next timeline event: at equal times the
         * timeline's events come first, and may start flows at that time */
        uint64_t flim = hs_min_u64(hs_min_u64(bound, cap_fabric), next);
        if (program_flows(d) > 0 && flim > hs_fspec_now(d)) {
            uint64_t next_bg;
            if (hs_bg_inject(d, &next_bg) < 0)
                break;
            flim = hs_min_u64(flim, next_bg); /* not past a background start not handed over yet */
            hs_flow_done done;
            int got = hs_fspec_next_completion(d, flim, &done);
            d->processed_ps = hs_max_u64(d->processed_ps, hs_fspec_now(d));
            if (got == 1)
                flow_completed(d, &done);
            else if (hs_fspec_now(d) < flim && !d->failed)
                hs_daemon_fail(d, "hysim: internal error: the fabric stopped at %llu ps, short of %llu ps",
                               (unsigned long long)hs_fspec_now(d), (unsigned long long)flim);
            continue; /* a completion, or the fabric reached flim: waits may be answerable */
        }
        if (next >= hs_min_u64(bound, cap_tl)) {
            if (hs_spec_step(d) > 0)
                continue;          /* optimistic answers: those sessions run again */
            hs_fspec_run_ahead(d); /* one bounded step; the poll loop comes back while there is more */
            break;
        }
        hs_tl_process_one(d);
        if (++since_drain % HS_DRAIN_EVERY == 0)
            hs_daemon_drain_all(d);
    }
}

/* ------------------------------------------------------------- deadlock */

const char *hs_wait_describe(const hs_wait *w, char *buf, size_t len)
{
    switch (w->cond) {
    case HS_WAIT_STREAM_IDLE:
        snprintf(buf, len, "stream %llu of GPU %u to go idle", (unsigned long long)w->stream_id, w->gpu);
        break;
    case HS_WAIT_EVENT_DONE: snprintf(buf, len, "event %llu", (unsigned long long)w->event_id); break;
    case HS_WAIT_DEVICE_IDLE: snprintf(buf, len, "GPU %u to go idle", w->gpu); break;
    case HS_WAIT_THREAD_EXIT: snprintf(buf, len, "one of its threads to exit (pthread_join)"); break;
    case HS_WAIT_UNTIL:
        snprintf(buf, len, "a sleep or timed wait to end at %llu ns", (unsigned long long)w->until_ns);
        break;
    case HS_WAIT_COLL_VALUES:
        if (w->coll_peer >= 0)
            snprintf(buf, len, "the Send #%llu from rank %d to rank %u on comm 0x%llx (its values)",
                     (unsigned long long)w->coll_seq, w->coll_peer, w->coll_rank, (unsigned long long)w->comm_key);
        else
            snprintf(buf, len, "the other ranks' parts of collective seq %llu on comm 0x%llx (its values)",
                     (unsigned long long)w->coll_seq, (unsigned long long)w->comm_key);
        break;
    default: snprintf(buf, len, "all its GPU work to finish"); break;
    }
    return buf;
}

bool hs_loop_check_deadlock(hs_daemon *d)
{
    if (d->failed)
        return false;
    size_t waiting = 0;
    for (size_t i = 0; i < d->nsessions; i++) {
        enum hs_sess_state st = d->sessions[i]->state;
        if (st == HS_SESS_NEW || st == HS_SESS_RUNNING || d->sessions[i]->threaded || d->sessions[i]->outside)
            return false; /* a process with several threads may start another: the stall watchdog decides */
        waiting += st == HS_SESS_WAITING;
    }
    for (int i = 0; i < d->nchildren; i++)
        if (!d->children[i].exited && !d->children[i].registered)
            return false;
    if (d->ranks_seen < d->world_size || d->remote_missing > 0)
        return false;
    if (!waiting || !hs_tl_empty(d) || program_flows(d) > 0)
        return false;

    char msg[sizeof(d->error)];
    size_t at = (size_t)snprintf(msg, sizeof(msg), "hysim: deadlock: every process waits and no GPU work is left:");
    for (size_t i = 0; i < d->nsessions && at < sizeof(msg); i++) {
        const hs_session *s = d->sessions[i];
        if (s->state != HS_SESS_WAITING)
            continue;
        char who[256], what[128];
        at += (size_t)snprintf(msg + at, sizeof(msg) - at, "\n  %s waits for %s (since host time %llu ns)",
                               hs_session_name(s, who, sizeof(who)), hs_wait_describe(&s->wait, what, sizeof(what)),
                               (unsigned long long)s->wait.host_ns);
    }
    if (at < sizeof(msg))
        hs_coll_describe_unfinished(d, msg, sizeof(msg));
    hs_daemon_fail(d, "%s", msg);
    return true;
}
