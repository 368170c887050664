/*
 * Ops and Waits: the batch of pending ops, Join, the thread count hysimd
 * holds (Threads), and Waits sent under the lock and answered without it
 * (docs/client.md, "Ops and waits").
 */
#include "client_internal.h"

uint32_t global_gpu(int dev) { return g_info.first_gpu + (uint32_t)dev; }

/* The threads hysimd counts: those that issued work, less those blocked outside CUDA where that is sound. */
uint32_t counted_threads_locked(void)
{
    if (g_quiet_parked != g_quiet_live || g_work_parked > g_threads)
        return g_threads;
    return g_threads - g_work_parked;
}

/*
 * Every thread hysim counts blocks outside hysimd: none can issue work until
 * one returns (from a socket or poll, host_io.c, or a wait in real time),
 * whatever the simulation does meanwhile. Also before the process's first
 * work: a rank that waits for another's message before it starts (an NCCL
 * id through the TCP store) must not hold the simulation where it registered.
 */
int all_outside_locked(void)
{
    /* a spinning thread (sleep.c, sched_yield) waits for another process: with every thread that issued work
     * parked or spinning, the process waits on the host whatever its quiet helper threads do */
    if (g_any_work && g_spin_outside > 0 && g_work_parked + g_spin_works >= g_threads)
        return 1;
    return g_quiet_parked == g_quiet_live && g_work_parked >= g_threads && g_nlisted_io > 0;
}

/* exited: the id of a thread a THREAD_EXIT Wait waits for, which exits; 0 for none. */
void send_threads_locked(uint64_t exited)
{
    flush_locked();
    Hysim__Threads t = HYSIM__THREADS__INIT;
    t.host_ns = hs_clock_now();
    t.threads = g_said = counted_threads_locked();
    t.exited = exited;
    t.outside = g_said_outside = all_outside_locked();
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_THREADS;
    m.threads = &t;
    send_locked(&m);
    g_threads_said = 1;
}

/* t issued its first work or exits: it no longer holds joins up. */
static void no_longer_fresh_locked(hs_thread *t)
{
    if (t->fresh) {
        t->fresh = 0;
        if (t->born > g_fresh_expired)
            g_fresh--;
    }
}

/*
 * The process (re)enters the simulation: before its first work, and when a
 * thread returns from blocking outside hysimd (docs/time.md, "Join").
 * hysimd counts it in the safe time from here and says where its clock goes
 * on, which may be later: the simulation may have passed it meanwhile.
 */
void join_locked(void)
{
    flush_locked(); /* ops issued before are stamped before it */
    Hysim__Join a = HYSIM__JOIN__INIT;
    a.host_ns = hs_clock_now();
    a.id = g_next_wait_id++;
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_JOIN;
    m.join = &a;
    reply_slot slot;
    expect_reply_locked(&slot, a.id);
    send_locked(&m);
    Hysim__Reply *r = await_reply(&slot); /* moves the clock */
    if (r->error && r->error[0])
        print_daemon_error(r->error);
    hysim__reply__free_unpacked(r, NULL);
}

/* The calling thread issues work: counted from its first op or Wait until it exits. */
static void note_work_locked(void)
{
    if (t_works)
        return;
    t_works = 1;
    if (!g_any_work)
        join_locked();
    g_any_work = 1;
    hs_thread *self = hs_thread_self();
    if (self) {
        self->worked = 1; /* counted out by hs_client_thread_exit */
        no_longer_fresh_locked(self);
    } else {
        pthread_setspecific(g_works_key, (void *)1);
    }
    if (self || getpid() == (pid_t)syscall(SYS_gettid))
        g_quiet_live--;  /* a thread counted as one that issued no work */
    if (++g_threads > 1) /* hysimd must not simulate past this thread's work while the others wait */
        send_threads_locked(0);
    if (self)
        send_ready_joins_locked();
}

/* A thread that issued work exits; exited as for send_threads_locked. */
static void count_out_locked(uint64_t exited)
{
    if (g_threads > 0)
        g_threads--;
    if (atomic_load(&g_state) == ST_READY && ((g_threads_said && g_threads > 0) || exited))
        send_threads_locked(exited); /* the others may all wait now */
}

void thread_left(void *unused)
{
    (void)unused;
    LOCK();
    count_out_locked(0);
    UNLOCK();
}

void hs_client_thread_created(hs_thread *t)
{
    LOCK();
    g_quiet_live++; /* it runs, unseen by hysimd: blocked threads count as running while it does */
    t->born = ++g_quiet_starts;
    g_start_grace_given = 0; /* a new start: a whole grace again */
    if (t_works) {           /* a thread that never issued work holds no join up: neither do its threads */
        t->fresh = 1;
        g_fresh++;
    }
    tell_counted_locked();
    UNLOCK();
}

void hs_client_thread_exit(hs_thread *t)
{
    int worked = t->worked; /* set by t itself; fresh too, but for its creator before t started */
    if (worked)
        hs_client_enter(); /* its host time until now precedes the exit */
    LOCK();
    if (!worked) {
        g_quiet_live--;
        tell_counted_locked();
    }
    int was_fresh = t->fresh;
    no_longer_fresh_locked(t);
    if (worked && !t->exited) {
        wake_timed_locked(t, 0); /* timed joins of it (hs_client_join_until), before it is counted out */
        count_out_locked(t->join_wait ? t->id : 0);
    }
    t->exited = 1;
    if (was_fresh)
        send_ready_joins_locked();
    UNLOCK();
    if (worked)
        hs_client_leave();
}

/* A new op on (dev, stream) stamped with the host clock; the caller fills the kind, then commits. */
pending_op *append_locked(int dev, uint64_t stream)
{
    note_work_locked();
    bind_primary();
    note_primary_active(dev);
    pending_op *p = &g_ops[g_nops];
    hysim__op__init(&p->op);
    p->op.host_ns = hs_clock_now();
    p->op.reach_ns = hs_clock_reach_ns();
    p->op.gpu = global_gpu(dev);
    p->op.stream = stream;
    return p;
}

void commit_locked(void)
{
    __atomic_fetch_add(&g_issued, 1, __ATOMIC_RELAXED);
    g_op_ptrs[g_nops] = &g_ops[g_nops].op;
    if (++g_nops == HS_BATCH_MAX)
        flush_locked();
}

/* Sends the Wait w (its condition filled in) after the pending ops; its Reply will come to slot. */
void send_wait_begin_locked(Hysim__Wait *w, reply_slot *slot)
{
    note_work_locked();
    flush_locked();
    w->id = g_next_wait_id++;
    w->threads = g_said = counted_threads_locked();
    w->host_ns = hs_clock_now();
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_WAIT;
    m.wait = w;
    expect_reply_locked(slot, w->id);
    send_locked(&m);
}

/* w's Reply r arrived: into *out (the caller frees it), or freed. cudaErrorUnknown when it carried an error. */
cudaError_t send_wait_end_locked(const Hysim__Wait *w, Hysim__Reply *r, Hysim__Reply **out)
{
    if (r->error && r->error[0]) {
        print_daemon_error(r->error);
        hysim__reply__free_unpacked(r, NULL);
        return cudaErrorUnknown;
    }
    t_wait_blocked = !w->query && r->now_ns > w->host_ns;
    if (t_wait_blocked)
        hs_clock_woke(r->now_ns); /* it blocked: the host sees the answer a wake-up later */
    if (out)
        *out = r;
    else
        hysim__reply__free_unpacked(r, NULL);
    return cudaSuccess;
}

/*
 * Sends the Wait w (its condition filled in) after the pending ops and
 * returns hysimd's Reply in *out (the caller frees it) or frees it when out
 * is NULL. cudaErrorUnknown when the Reply carried an error (printed).
 * Called and returns with g_lock held, but releases it while the answer is
 * awaited: other threads run meanwhile.
 */
cudaError_t send_wait_locked(Hysim__Wait *w, Hysim__Reply **out)
{
    reply_slot slot;
    send_wait_begin_locked(w, &slot);
    UNLOCK();
    Hysim__Reply *r = await_reply(&slot);
    LOCK();
    return send_wait_end_locked(w, r, out);
}

/*
 * A thread that has issued no work yet and runs (one just started, or one
 * a release let go from a lock, a barrier, a condition variable) may issue
 * its first work at the process's present host time, which hysimd must not
 * pass before that work arrives: it would refuse the work ("host time went
 * backwards"), or, had the work come after the answer, the thread would
 * start late in simulated time, by as much as real scheduling let the
 * others run ahead. hysimd cannot know of a thread before its first work,
 * so a Wait that may let it pass that time first gives such threads, once
 * per batch of starts (g_quiet_starts), up to length_ns of real time
 * (HS_FIRST_WORK_GRACE_NS in all, over the Waits of a sleep's length that
 * may come first) to issue it, block or exit: the workers a thread-per-GPU
 * program starts all begin at the same host time, however the machine
 * scheduled them, and so does a thread that takes a lock as its first act.
 * A helper thread that never issues work costs one grace per batch, not one
 * per Wait; none while every thread that issued no work is blocked. With
 * woken (a timed wait's, host_waits.c), the grace ends once *woken is set:
 * the threads still running get what is left of it at the next Wait.
 */
void await_first_work_locked(uint64_t length_ns, const int *woken)
{
    if (g_quiet_starts == g_quiet_starts_awaited)
        return;
    uint64_t left = HS_FIRST_WORK_GRACE_NS - g_start_grace_given, waited = 0;
    uint64_t grace = length_ns < left ? length_ns : left;
    for (; g_quiet_parked < g_quiet_live && waited < grace && !(woken && *woken); waited += 1000000) {
        UNLOCK();
        hs_client_real_sleep_ns(1000000);
        LOCK();
    }
    g_start_grace_given += waited;
    if (woken && *woken)
        return;
    if (waited < grace || g_start_grace_given >= HS_FIRST_WORK_GRACE_NS) { /* no need, or the whole grace */
        g_quiet_starts_awaited = g_quiet_starts;
        expire_fresh_locked(); /* they hold no join up either */
    }
}

/* A Wait on a GPU's work; see send_wait_locked. */
cudaError_t wait_locked(Hysim__Wait__Cond cond, int dev, uint64_t stream, uint64_t event, int query, uint64_t *timed,
                        size_t ntimed, Hysim__Reply **out)
{
    if (!query) /* it may block: hysimd may then pass this host time */
        await_first_work_locked(HS_FIRST_WORK_GRACE_NS, NULL);
    Hysim__Wait w = HYSIM__WAIT__INIT;
    w.cond = cond;
    w.gpu = global_gpu(dev);
    w.stream = stream;
    w.event = event;
    w.query = query != 0;
    w.n_timed_events = ntimed;
    w.timed_events = timed;
    return send_wait_locked(&w, out);
}

/*
 * The queries the calling thread found not met since its process's host
 * clock last moved or the process last issued anything (query_locked).
 */
#define HS_UNMET_MAX 8
typedef struct unmet_query {
    Hysim__Wait__Cond cond;
    int dev;
    uint64_t stream, event;
} unmet_query;
static int same_query(const unmet_query *a, const unmet_query *b)
{
    return a->cond == b->cond && a->dev == b->dev && a->stream == b->stream && a->event == b->event;
}
static __thread struct {
    unmet_query q[HS_UNMET_MAX];
    int n;
    hs_quiet_mark mark; /* after the last of them */
} t_unmet;

/*
 * A query Wait: cudaSuccess when the condition holds now, cudaErrorNotReady
 * when not. A thread that asks again what it was told is not met, its
 * process's host clock where it was and nothing issued since (a loop on
 * cudaStreamQuery or cudaEventQuery, of one stream or several in turn,
 * under host_time zero, where polls cost nothing), would spin forever at
 * that time: the simulation cannot pass it while the thread runs. That
 * query waits instead, as a synchronisation would, and reports the
 * condition met: the loop ends when the work does, as a real spin would
 * (within a poll).
 */
cudaError_t query_locked(Hysim__Wait__Cond cond, int dev, uint64_t stream, uint64_t event)
{
    unmet_query me = {cond, dev, stream, event};
    if (!hs_quiet_since(&t_unmet.mark))
        t_unmet.n = 0; /* time passed, or something was issued: the thread is not spinning */
    for (int i = 0; i < t_unmet.n; i++)
        if (same_query(&t_unmet.q[i], &me)) {
            t_unmet.n = 0;
            return wait_locked(cond, dev, stream, event, 0, NULL, 0, NULL);
        }
    Hysim__Reply *r;
    cudaError_t e = wait_locked(cond, dev, stream, event, 1, NULL, 0, &r);
    if (e != cudaSuccess)
        return e;
    e = r->done ? cudaSuccess : cudaErrorNotReady;
    hysim__reply__free_unpacked(r, NULL);
    if (e == cudaErrorNotReady && t_unmet.n < HS_UNMET_MAX)
        t_unmet.q[t_unmet.n++] = me;
    hs_quiet_mark_take(&t_unmet.mark);
    return e;
}
