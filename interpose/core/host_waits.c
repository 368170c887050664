/*
 * The client side of waits on the host (docs/client.md, "Threads"):
 * pthread_join of a thread that issued work, simulated sleeps, timed
 * condition-variable waits, and threads blocked outside CUDA (host_sync.c,
 * mutex.c, threads.c, host_io.c list them here).
 */
#include "client_internal.h"

static unsigned release_locked(const void *key, unsigned max);

/* The joiner of t waits for t's exit; the Reply goes to t->join_wait, which the joiner awaits. */
static void send_join_wait_locked(hs_thread *t)
{
    flush_locked();
    reply_slot *slot = xcalloc(1, sizeof *slot);
    Hysim__Wait w = HYSIM__WAIT__INIT;
    w.id = g_next_wait_id++;
    w.threads = g_said = counted_threads_locked(); /* the joiner's and t's at least: hysimd keeps the count from here */
    w.host_ns = hs_clock_now();
    w.cond = HYSIM__WAIT__COND__THREAD_EXIT;
    w.thread = t->id;
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_WAIT;
    m.wait = &w;
    expect_reply_locked(slot, w.id);
    send_locked(&m);
    t->join_wait = slot;
    g_threads_said = 1;
}

/*
 * The fresh threads started so far no longer hold joins up: those that have
 * not issued work after a whole grace (await_first_work_locked) are helpers
 * that may never, and a join held for them would count its joiner as
 * running for their whole life (the simulation stalls if the joined threads
 * wait on their GPUs meanwhile).
 */
void expire_fresh_locked(void)
{
    g_fresh_expired = g_quiet_starts;
    if (g_fresh == 0)
        return;
    g_fresh = 0;
    send_ready_joins_locked();
}

/* Sends the Waits of the joins that are ready: the joined thread issued work, no fresh thread is left. */
void send_ready_joins_locked(void)
{
    if (g_fresh > 0 || atomic_load(&g_state) != ST_READY)
        return;
    for (hs_thread **pp = &g_joins; *pp;) {
        hs_thread *t = *pp;
        if (t->worked && !t->exited) {
            *pp = t->next_join;
            t->next_join = NULL;
            send_join_wait_locked(t);
        } else {
            pp = &t->next_join;
        }
    }
}

int hs_client_join_begin(hs_thread *t)
{
    if (!t_works || t_joining || atomic_load(&g_state) != ST_READY)
        return 0;      /* a thread that never issued work bounds nothing: its join costs nothing */
    hs_client_enter(); /* the join is an intercepted call: left in hs_client_join_end */
    LOCK();
    int told = !t->exited && !t->joiner;
    if (told) {
        t->joiner = 1;
        t->next_join = g_joins;
        g_joins = t;
        send_ready_joins_locked();
    }
    UNLOCK();
    if (!told)
        hs_client_leave();
    t_joining = told;
    return told;
}

void hs_client_join_end(hs_thread *t)
{
    LOCK();
    for (hs_thread **pp = &g_joins; *pp; pp = &(*pp)->next_join)
        if (*pp == t) { /* never sent: t exited first, or never issued work */
            *pp = t->next_join;
            break;
        }
    reply_slot *slot = t->join_wait;
    t->join_wait = NULL;
    t->joiner = 0;
    UNLOCK();
    if (slot) { /* answered at t's exit, which came before the real join returned */
        Hysim__Reply *r = await_reply(slot);
        if (r->error && r->error[0])
            print_daemon_error(r->error);
        hysim__reply__free_unpacked(r, NULL);
        free(slot);
    }
    t_joining = 0;
    hs_client_leave();
}

/* ---- sleeps (sleep.c) ---- */

/*
 * Blocks the calling thread until the host clock reads until_ns, in hysimd
 * (an UNTIL Wait), once the process has issued GPU work, where the thread
 * issued work or can start to: no other thread that issued work runs or
 * waits there, and every other thread that issued none is blocked (sleep.c
 * says why). HS_SLEEP_REAL otherwise: the caller sleeps in real time.
 * Inside an intercepted call.
 */
/* Whether the calling thread may wait in hysimd until a time (sleep.c says when). */
static int until_wait_ok_locked(void)
{
    return atomic_load(&g_state) == ST_READY && g_any_work &&
           (t_works || (g_threads <= g_work_parked && g_quiet_live - g_quiet_parked <= 1 && g_fresh == 0));
}

enum hs_sleep hs_client_sleep_until(uint64_t until_ns)
{
    uint64_t from = hs_clock_now();
    if (until_ns <= from)
        return HS_SLEEP_DONE;
    if (t_holds_lock || t_awaiting)
        return HS_SLEEP_REAL; /* a signal handler's sleep on a thread inside the core: it may hold its locks */
    LOCK();
    if (!until_wait_ok_locked()) {
        UNLOCK();
        return HS_SLEEP_REAL;
    }
    await_first_work_locked(until_ns - from, NULL);
    Hysim__Wait w = HYSIM__WAIT__INIT;
    w.cond = HYSIM__WAIT__COND__UNTIL;
    w.until_ns = until_ns;
    send_wait_locked(&w, NULL); /* an error was printed; the clock moved either way */
    UNLOCK();
    return HS_SLEEP_DONE;
}

/* ---- timed condition variable waits (host_sync.c) ---- */

/* A thread in a timed wait that hysimd times: the UNTIL Wait id (0: not sent yet), which a signal of key answers
 * early. */
typedef struct timed_waiter {
    const void *key;
    uint64_t id;
    int woken;
    struct timed_waiter *next;
} timed_waiter;

static timed_waiter *g_timed; /* on their threads' stacks */
static _Atomic int g_ntimed;  /* how many: a signal looks at the list only when there are some */

/*
 * Waits in hysimd until the host clock reads until_ns (> now) or a Wake of
 * key comes first: 1 when the deadline came (done), 0 when woken. The
 * waiter is listed under the client lock before mutex (when given) is let
 * go, so a signaller that takes mutex next finds it listed (it takes the
 * client lock to wake it); mutex is not taken again here. Then the threads
 * the caller let run (await_first_work_locked: the signaller may be one,
 * blocked on mutex until now) get their grace, and a wake then answers the
 * wait before it is sent: a helper thread's signal in real time is not
 * outrun by hysimd reaching the deadline in simulated time (PyTorch's
 * autograd engine waits 10 s for its device threads at exit).
 */
static int timed_wait_locked(const void *key, uint64_t until_ns, pthread_mutex_t *mutex)
{
    timed_waiter self = {key, 0, 0, g_timed};
    g_timed = &self;
    atomic_fetch_add(&g_ntimed, 1);
    if (mutex && hs_sync_mutex_let_go(mutex)) /* before the Wait: this thread still runs */
        release_locked(mutex, 1);
    uint64_t now = hs_clock_now();
    if (until_ns > now)
        await_first_work_locked(until_ns - now, &self.woken);
    int done = !self.woken;
    if (!self.woken && until_ns > hs_clock_now()) {
        Hysim__Wait w = HYSIM__WAIT__INIT;
        w.cond = HYSIM__WAIT__COND__UNTIL;
        w.until_ns = until_ns;
        reply_slot slot;
        send_wait_begin_locked(&w, &slot);
        self.id = w.id;
        UNLOCK();
        Hysim__Reply *r = await_reply(&slot);
        LOCK();
        Hysim__Reply *got;
        if (send_wait_end_locked(&w, r, &got) == cudaSuccess) {
            done = got->done; /* not done: a Wake came first */
            hysim__reply__free_unpacked(got, NULL);
        }
    }
    timed_waiter **pp = &g_timed;
    while (*pp != &self)
        pp = &(*pp)->next;
    *pp = self.next;
    atomic_fetch_sub(&g_ntimed, 1);
    return done;
}

/*
 * Enters the client core, the lock held, for a timed wait in hysimd: 1; 0
 * (nothing held) where hysimd cannot time the calling thread's wait.
 */
static int begin_timed_wait(void)
{
    if (t_holds_lock || t_awaiting)
        return 0;
    hs_client_enter();
    LOCK();
    if (until_wait_ok_locked())
        return 1;
    UNLOCK();
    hs_client_leave();
    return 0;
}

int hs_client_cond_timedwait(const void *key, pthread_mutex_t *mutex, uint64_t until_ns, int *rc)
{
    if (!begin_timed_wait())
        return 0;
    if (until_ns <= hs_clock_now()) { /* the deadline has passed on the host clock */
        UNLOCK();
        hs_client_leave();
        *rc = ETIMEDOUT;
        return 1;
    }
    int done = timed_wait_locked(key, until_ns, mutex); /* gives the threads it lets run their grace */
    UNLOCK();
    hs_client_leave();
    hs_sync_mutex_lock(mutex);
    *rc = done ? ETIMEDOUT : 0;
    return 1;
}

int hs_client_sem_timedwait(const void *key, uint64_t until_ns, int (*take)(void *), void *arg, int *rc)
{
    if (!begin_timed_wait())
        return 0;
    if (until_ns > hs_clock_now())
        await_first_work_locked(until_ns - hs_clock_now(), NULL); /* before the first try: it lets the lock go */
    *rc = ETIMEDOUT;
    for (;;) { /* a post takes the lock to post and wake: tried and listed under it, none is missed */
        if (take(arg)) {
            *rc = 0;
            break;
        }
        if (until_ns <= hs_clock_now() || timed_wait_locked(key, until_ns, NULL)) { /* the deadline came */
            if (take(arg))                                                          /* posted at the deadline */
                *rc = 0;
            break;
        }
    }
    UNLOCK();
    hs_client_leave();
    return 1;
}

int hs_client_join_until(hs_thread *t, uint64_t until_ns, int *exited)
{
    if (t_holds_lock || t_awaiting)
        return 0;
    hs_client_enter();
    LOCK();
    /* just started: it may issue its first work at this host time, and only then can the join wait in
     * hysimd (the other way cannot time out in simulated time): up to HS_FIRST_WORK_GRACE_NS of real time */
    for (uint64_t waited = 0; t->fresh && t->born > g_fresh_expired && !t->exited && waited < HS_FIRST_WORK_GRACE_NS;
         waited += 1000000) {
        UNLOCK();
        hs_client_real_sleep_ns(1000000);
        LOCK();
    }
    /* t issued work: it counts as running until it exits, so its exit's Wake cannot come too late */
    int handled = t_works && t->worked && until_wait_ok_locked();
    if (handled) {
        if (!t->exited && until_ns > hs_clock_now())
            await_first_work_locked(until_ns - hs_clock_now(), NULL); /* lets the lock go: t may exit meanwhile */
        if (t->exited)
            *exited = 1;
        else
            *exited = until_ns > hs_clock_now() && !timed_wait_locked(t, until_ns, NULL);
    }
    UNLOCK();
    hs_client_leave();
    return handled;
}

/* Wakes up to max (0: all) timed waits on key, at the host clock's reading. */
void wake_timed_locked(const void *key, unsigned max)
{
    unsigned n = 0;
    for (timed_waiter *t = g_timed; t && (max == 0 || n < max); t = t->next) {
        if (t->key != key || t->woken)
            continue;
        t->woken = 1;
        n++;
        if (t->id == 0)
            continue; /* not sent yet: it will not be */
        flush_locked();
        Hysim__Wake k = HYSIM__WAKE__INIT;
        k.host_ns = hs_clock_now();
        k.id = t->id;
        Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
        m.msg_case = HYSIM__CLIENT_MSG__MSG_WAKE;
        m.wake = &k;
        send_locked(&m);
    }
}

void hs_client_wake_timed(const void *key, unsigned max)
{
    if (atomic_load(&g_ntimed) == 0)
        return;
    LOCK();
    wake_timed_locked(key, max);
    UNLOCK();
}

/* ---- threads blocked outside CUDA (host_sync.c, threads.c; docs/client.md, "Threads") ---- */

/*
 * Tells hysimd the count when it differs from the one it holds, or that
 * every thread now blocks outside it; the caller runs (or blocks next). A
 * process back from outside joins first: the simulation may have passed it.
 */
void tell_counted_locked(void)
{
    if (atomic_load(&g_state) != ST_READY)
        return;
    uint32_t n = counted_threads_locked();
    int outside = all_outside_locked();
    if (g_said_outside && !outside && g_any_work)
        join_locked(); /* before its first work a process joins with that work (note_work_locked) */
    if ((n ? n : 1) != (g_said ? g_said : 1) || outside != g_said_outside)
        send_threads_locked(0);
}

void count_parked_locked(const hs_parked *p, int delta)
{
    if (p->works) {
        g_work_parked += (uint32_t)delta;
        return;
    }
    g_quiet_parked += (uint32_t)delta;
    if (delta < 0) { /* it runs again and may issue its first work: as a start (await_first_work_locked) */
        g_quiet_starts++;
        g_start_grace_given = 0;
    }
}

static void unlist_locked(hs_parked *p)
{
    hs_parked **pp = &g_parked;
    while (*pp != p)
        pp = &(*pp)->next;
    *pp = p->next;
    p->listed = 0;
    atomic_fetch_sub(&g_nlisted, 1);
}

/*
 * Counts up to max (0: all) threads blocked on key as running again; returns
 * how many. A mutex's blocked thread sleeps on its own release, and is woken;
 * handover says the mutex is let go inside libc just after (its thread keeps
 * trying a while, hs_client_block_on_lock).
 */
static unsigned release_handover_locked(const void *key, unsigned max, int handover)
{
    unsigned n = 0;
    for (hs_parked *p = g_parked; p && (max == 0 || n < max); p = p->next)
        if (p->key == key && !p->released) {
            p->handover = handover;
            __atomic_store_n(&p->released, 1, __ATOMIC_RELEASE);
            if (p->sleeps)
                syscall(SYS_futex, &p->released, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
            count_parked_locked(p, -1);
            n++;
        }
    if (n)
        tell_counted_locked();
    return n;
}

static unsigned release_locked(const void *key, unsigned max) { return release_handover_locked(key, max, 0); }

/* Lists p as blocked (the lock held). */
static void list_locked(hs_parked *p)
{
    p->listed = 1;
    p->next = g_parked;
    g_parked = p;
    atomic_fetch_add(&g_nlisted, 1);
    count_parked_locked(p, 1);
    tell_counted_locked(); /* the simulation may pass this thread's clock now */
}

static void park_init(hs_parked *p, const void *key)
{
    memset(p, 0, sizeof *p);
    p->key = key;
    p->works = t_works;
    if (p->works)
        hs_client_enter(); /* the blocking call is an intercepted call: left in hs_client_unpark */
}

int hs_client_park(hs_parked *p, const void *key, unsigned release_at, int (*ready)(void *), void *arg)
{
    park_init(p, key);
    LOCK();
    int blocks = !ready || !ready(arg);
    if (blocks && release_at > 0) {
        unsigned waiting = 0;
        for (const hs_parked *q = g_parked; q; q = q->next)
            waiting += q->key == key && !q->released;
        if (waiting + 1 >= release_at) { /* the last to arrive */
            release_locked(key, 0);
            blocks = 0;
        }
    }
    if (blocks)
        list_locked(p);
    UNLOCK();
    return blocks;
}

int hs_client_park_quiet(hs_parked *p)
{
    if (t_works || t_holds_lock || t_awaiting || atomic_load(&g_state) != ST_READY)
        return 0;
    return hs_client_park(p, p, 0, NULL, NULL);
}

int hs_client_park_join(hs_parked *p, hs_thread *t)
{
    park_init(p, t);
    LOCK();
    int blocks = !t->leaving;
    if (blocks)
        list_locked(p);
    UNLOCK();
    return blocks;
}

void hs_client_thread_leaving(hs_thread *t)
{
    LOCK();
    t->leaving = 1;
    release_locked(t, 0);
    UNLOCK();
}

int hs_client_any_parked(void) { return atomic_load(&g_nlisted) > 0; }

unsigned hs_client_release(const void *key, unsigned max)
{
    if (t_holds_lock) /* a signal handler on a thread inside the core: the thread it wakes counts itself in */
        return 0;
    LOCK();
    unsigned n = release_locked(key, max);
    UNLOCK();
    return n;
}

int hs_client_park_handing(hs_parked *p, const void *key, const void *mutex)
{
    park_init(p, key);
    p->hands = mutex;
    p->hands_tid = (int)syscall(SYS_gettid);
    LOCK();
    release_handover_locked(mutex, 1, 1); /* while this thread runs */
    list_locked(p);
    UNLOCK();
    return 1;
}

int hs_client_release_and(const void *key, unsigned max, int (*post)(void *), void *arg)
{
    if (t_holds_lock) /* a signal handler on a thread inside the core: the thread it wakes counts itself in */
        return post(arg);
    LOCK();
    release_locked(key, max);
    int rc = post(arg);
    if (rc == 0 && atomic_load(&g_ntimed) > 0)
        wake_timed_locked(key, max); /* and as many timed waits on key (hs_client_sem_timedwait) */
    UNLOCK();
    return rc;
}

/* p runs again (the lock held): unlisted, counted in by its release or by taking another's. */
static void unpark_locked(hs_parked *p)
{
    if (p->listed) {
        if (!p->released) { /* woken without a release of its own: take another's, still blocked */
            hs_parked *q = g_parked;
            while (q && (q == p || q->key != p->key || !q->released))
                q = q->next;
            count_parked_locked(p, -1);
            if (q) {
                q->released = 0;
                count_parked_locked(q, 1);
            }
            tell_counted_locked(); /* none to take: it counts itself in (a signal's interruption) */
        }
        unlist_locked(p);
    }
}

void hs_client_unpark(hs_parked *p)
{
    LOCK();
    unpark_locked(p);
    UNLOCK();
    if (p->works)
        hs_client_leave();
}

__thread int t_spin_outside;

void hs_client_spin_outside(void)
{
    if (t_spin_outside || t_holds_lock || t_awaiting || atomic_load(&g_state) != ST_READY)
        return;
    LOCK();
    t_spin_outside = 1;
    g_spin_outside++;
    g_spin_works += t_works != 0;
    tell_counted_locked(); /* outside, when every thread that issued work waits or spins */
    UNLOCK();
}

void hs_client_spin_return(void)
{
    LOCK();
    t_spin_outside = 0;
    g_spin_outside--;
    g_spin_works -= t_works != 0;
    if (!g_said_outside && g_any_work)
        join_locked();     /* the others may all have waited in hysimd, and the simulation passed this thread */
    tell_counted_locked(); /* joins if the whole process was outside */
    UNLOCK();
}

int hs_client_io_block(hs_parked *p)
{
    if (t_holds_lock || t_awaiting || atomic_load(&g_state) != ST_READY)
        return 0;
    if (!t_works && !hs_thread_self() && getpid() != (pid_t)syscall(SYS_gettid))
        return 0; /* a thread hysim does not count (the client core's own) */
    park_init(p, p);
    LOCK();
    g_nlisted_io++;
    list_locked(p);
    UNLOCK();
    return 1;
}

void hs_client_io_unblock(hs_parked *p)
{
    LOCK();
    g_nlisted_io--;
    if (!g_said_outside && g_any_work)
        join_locked(); /* the others may all have waited in hysimd, and the simulation passed this thread */
    unpark_locked(p);  /* joins if the whole process was outside */
    UNLOCK();
    if (p->works)
        hs_client_leave();
}

/*
 * How long a thread released by a handover (hs_client_park_handing)
 * keeps trying the mutex, real time: the holder lets it go inside libc just
 * after, in a condition variable's wait, and the released thread must not
 * count as blocked meanwhile. A thread that loses it to another blocks
 * listed again at once, and one that has not got it by then (its holder
 * kept from running that long, or holding it again after its wait) too:
 * the holder runs, and its unlock releases one again.
 */
#define HS_MUTEX_HANDOVER_NS 50000000
/*
 * How long a blocked thread sleeps at most before it tries the mutex again
 * (real time): a timed condition-variable wait that runs in real time
 * (timed_waits.c) lets its mutex go inside libc and wakes no one.
 */
#define HS_MUTEX_RECHECK_NS 10000000

/*
 * Waits until the mutex is free (1), or taken by another than holder or
 * HS_MUTEX_HANDOVER_NS have passed (0). It sleeps on the mutex's lock word
 * as libc's own lock does (0 free, 1 taken, 2 taken with sleepers): marked
 * 2, the word makes libc's unlock, which no wrapper sees, wake a sleeper.
 */
static int await_handover(int *word, const int *owner, int holder)
{
    uint64_t until = hs_clock_real_ns(CLOCK_MONOTONIC) + HS_MUTEX_HANDOVER_NS;
    for (;;) {
        int v = __atomic_load_n(word, __ATOMIC_ACQUIRE);
        if (v == 0)
            return 1;
        if (__atomic_load_n(owner, __ATOMIC_RELAXED) != holder || hs_clock_real_ns(CLOCK_MONOTONIC) >= until)
            return 0;
        if (v == 1 && !__atomic_compare_exchange_n(word, &v, 2, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            continue;                       /* it changed: look again */
        struct timespec nap = {0, 1000000}; /* and the owner again, now and then */
        syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 2, &nap, NULL, 0);
    }
}

/* Counts p, listed, as running (released 1) or blocked (0), and tells hysimd when that changes the count. */
static void set_released_locked(hs_parked *p, int released)
{
    if (p->released == released)
        return;
    p->released = released;
    count_parked_locked(p, released ? -1 : 1);
    tell_counted_locked();
}

/* Whether holder, a thread that holds the mutex key, is blocked in a wait in which libc lets it go. */
static int handed_over_locked(const void *key, int holder)
{
    for (const hs_parked *q = g_parked; q && holder; q = q->next)
        if (q->hands == key && q->hands_tid == holder)
            return 1;
    return 0;
}

int hs_client_block_on_lock(const void *key, pthread_mutex_t *mutex, int (*take)(void *), void *arg)
{
    if (t_holds_lock || t_awaiting) /* a signal handler on a thread inside the core: libc's wait, unlisted */
        return 0;
    int on_word = 0; /* slept on the mutex's word: may have taken a wake meant for a sleeper of libc's */
    hs_parked p;
    park_init(&p, key);
    p.sleeps = 1;
    LOCK();
    while (!take(arg)) {
        int holder = mutex ? __atomic_load_n(&mutex->__data.__owner, __ATOMIC_RELAXED) : 0;
        int handover = p.released && p.handover; /* libc lets it go just after: keep trying */
        p.handover = 0;
        if (!handover && mutex && handed_over_locked(key, holder)) { /* its holder lets it go inside libc */
            handover = 1;
            if (p.listed)
                set_released_locked(&p, 1);
        }
        if (!handover && !p.listed)
            list_locked(&p);
        else if (!handover)
            set_released_locked(&p, 0); /* lost it, if released: blocked again */
        UNLOCK();
        if (handover) {
            await_handover(&mutex->__data.__lock, &mutex->__data.__owner, holder);
            on_word = 1;
        } else {
            struct timespec nap = {0, HS_MUTEX_RECHECK_NS};
            while (!__atomic_load_n(&p.released, __ATOMIC_ACQUIRE) &&
                   syscall(SYS_futex, &p.released, FUTEX_WAIT_PRIVATE, 0, &nap, NULL, 0) == -1 && errno == EINTR) {}
        }
        LOCK();
    }
    unpark_locked(&p);
    UNLOCK();
    if (p.works)
        hs_client_leave();
    return 1 + on_word;
}

void hs_client_unpark_cancelled(void *p) { hs_client_unpark(p); }
