/*
 * hysimd's stall watchdog. The deadlock check (sim_loop.c) catches the
 * certain case, every process waiting and no work left. When some process is
 * still alive but never comes back (a rank that skips a collective while it
 * computes forever, a receive whose send never comes), nothing is certain,
 * so after run.stall_timeout_s of wall time without progress while some
 * process, or some thread of one, waits, the run is stopped with what is
 * stuck.
 *
 * Progress is any change of a fingerprint of the simulation: the simulated
 * time reached by the timeline and the fabric, the counters of completed
 * work, and every registered session's state and latest host time (a
 * process that sends anything moves its host time). Connections that never
 * registered are not in it: they cannot put the watchdog off. It runs on
 * every turn of the daemon's loop and, inside a long stretch of simulation,
 * every HS_INTERRUPT_CHECK_MS (hysimd.c).
 */
#include <stdio.h>
#include <string.h>

#include "daemon_internal.h"

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

static uint64_t fingerprint(const hs_daemon *d)
{
    uint64_t h = mix(0, d->processed_ps);
    h = mix(h, hs_fabric_now_ps(d->fabric));
    h = mix(h, d->steps);
    h = mix(h, d->sum.kernels + d->sum.copies + d->sum.collectives + d->sum.flows);
    for (size_t i = 0; i < d->nsessions; i++) {
        const hs_session *s = d->sessions[i];
        if (!s->registered)
            continue; /* a stranger coming and going is no progress of the program's */
        h = mix(h, s->index);
        h = mix(h, ((uint64_t)s->state << 32) ^ s->host_ns);
        h = mix(h, s->next_seq);
    }
    return h;
}

void hs_stall_start(hs_daemon *d, int64_t now_ms)
{
    d->stall_mark = fingerprint(d);
    d->stall_since_ms = now_ms;
}

static void fail_stalled(hs_daemon *d, double waited_s)
{
    char msg[sizeof(d->error)];
    size_t at = (size_t)snprintf(msg, sizeof(msg),
                                 "hysim: stalled: no simulated progress for %.1f s of wall time "
                                 "(run.stall_timeout_s = %g) while processes wait:",
                                 waited_s, d->sc.run.stall_timeout_s);
    for (size_t i = 0; i < d->nsessions && at < sizeof(msg); i++) {
        const hs_session *s = d->sessions[i];
        char who[256], what[128];
        if (s->state == HS_SESS_WAITING)
            at += (size_t)snprintf(msg + at, sizeof(msg) - at, "\n  %s waits for %s (since host time %llu ns)",
                                   hs_session_name(s, who, sizeof(who)), hs_wait_describe(&s->wait, what, sizeof(what)),
                                   (unsigned long long)s->wait.host_ns);
        else if (s->state == HS_SESS_RUNNING && s->split_waiting)
            at += (size_t)snprintf(msg + at, sizeof(msg) - at, "\n  %s waits in ncclCommSplit",
                                   hs_session_name(s, who, sizeof(who)));
        else if (s->state == HS_SESS_RUNNING && s->nwaits > 0)
            at += (size_t)snprintf(
                msg + at, sizeof(msg) - at,
                "\n  %s: %zu of its threads wait (the first for %s), and another that issued "
                "work has sent nothing since host time %llu ns: it computes, or blocks where hysim "
                "does not see it (a robust or process-shared lock, an OpenMP task wait, a loop on a flag, "
                "a pipe or socket, a wait with a deadline on the machine's clock)",
                hs_session_name(s, who, sizeof(who)), s->nwaits, hs_wait_describe(&s->wait, what, sizeof(what)),
                (unsigned long long)s->host_ns);
        else if (s->state == HS_SESS_RUNNING && s->outside)
            at += (size_t)snprintf(msg + at, sizeof(msg) - at,
                                   "\n  %s blocks outside CUDA, every thread of it (a socket, a pipe, poll, or a "
                                   "wait in real time), since host time %llu ns",
                                   hs_session_name(s, who, sizeof(who)), (unsigned long long)s->host_ns);
        else if (s->state == HS_SESS_RUNNING && s->launcher)
            at += (size_t)snprintf(msg + at, sizeof(msg) - at,
                                   "\n  %s launched other processes and issued no GPU work: it does not hold the "
                                   "simulation back",
                                   hs_session_name(s, who, sizeof(who)));
        else if (s->state == HS_SESS_RUNNING)
            at += (size_t)snprintf(msg + at, sizeof(msg) - at,
                                   "\n  %s runs on the host and has sent nothing since host time %llu ns",
                                   hs_session_name(s, who, sizeof(who)), (unsigned long long)s->host_ns);
    }
    if (d->ranks_seen < d->world_size && at < sizeof(msg))
        at += (size_t)snprintf(msg + at, sizeof(msg) - at,
                               "\n  %u of the job's %u ranks (WORLD_SIZE) have registered: the simulation waits at "
                               "time 0 for the others' first CUDA call",
                               d->ranks_seen, d->world_size);
    for (int sv = 0; d->remote_pending && sv < d->sc.servers.count && at < sizeof(msg); sv++)
        if (d->remote_pending[sv])
            at += (size_t)snprintf(msg + at, sizeof(msg) - at,
                                   "\n  server %d is started elsewhere (hysim join) and none of its processes has "
                                   "registered",
                                   sv);
    if (at < sizeof(msg) && hs_coll_describe_unfinished(d, msg, sizeof(msg)) == 0)
        snprintf(msg + at, sizeof(msg) - at, "\n  (no collective is unfinished)");
    hs_daemon_fail(d, "%s", msg);
}

int hs_stall_check(hs_daemon *d, int64_t now_ms)
{
    double limit_s = d->sc.run.stall_timeout_s;
    if (d->failed || !(limit_s > 0))
        return -1;
    uint64_t mark = fingerprint(d);
    bool waiting = d->remote_missing > 0; /* a server started elsewhere that never joins holds the run */
    for (size_t i = 0; i < d->nsessions && !waiting; i++)
        waiting = d->sessions[i]->state == HS_SESS_WAITING || d->sessions[i]->split_waiting ||
                  d->sessions[i]->nwaits > 0; /* some of its threads wait for the others */
    if (mark != d->stall_mark || !waiting) {
        /* moving, or nobody blocked in the simulator: the processes compute on the host */
        d->stall_mark = mark;
        d->stall_since_ms = now_ms;
    }
    int64_t limit_ms = (int64_t)(limit_s * 1000.0 + 0.5);
    int64_t left = d->stall_since_ms + limit_ms - now_ms;
    if (left > 0)
        return left > 1000000000 ? 1000000000 : (int)left;
    fail_stalled(d, (double)(now_ms - d->stall_since_ms) / 1000.0);
    return -1;
}
