/*
 * pthread_create, pthread_join, pthread_timedjoin_np and
 * pthread_clockjoin_np: the threads hysim tracks, and joins that wait in
 * simulated time (docs/client.md, "Threads and joins").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "host_sync.h"
#include "threads.h"

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef int (*join_fn)(pthread_t, void **);
typedef int (*timedjoin_fn)(pthread_t, void **, const struct timespec *);
typedef int (*clockjoin_fn)(pthread_t, void **, clockid_t, const struct timespec *);

static create_fn real_create; /* read and written with atomics; real_join last */
static join_fn real_join;
static timedjoin_fn real_timedjoin;
static clockjoin_fn real_clockjoin; /* NULL before glibc 2.31, which has no pthread_clockjoin_np */

#define NS_PER_S 1000000000ull
/* How often, in real time, a timed join looks whether the host clock has passed its deadline. */
#define HS_DEADLINE_POLL_NS 1000000u

static pthread_mutex_t g_tlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_gone_cv = PTHREAD_COND_INITIALIZER; /* a thread is gone (timed joins wait on it) */
static hs_thread *g_live;                                   /* records of live threads, newest first */
static uint64_t g_next_id = 1;
static pthread_key_t g_exit_key;
static int g_exit_key_ok;
static __thread hs_thread *t_self;

static void resolve(void)
{
    if (__atomic_load_n(&real_join, __ATOMIC_ACQUIRE))
        return;
    __atomic_store_n(&real_create, (create_fn)hs_next_symbol("pthread_create", NULL), __ATOMIC_RELEASE);
    __atomic_store_n(&real_timedjoin, (timedjoin_fn)hs_next_symbol("pthread_timedjoin_np", NULL), __ATOMIC_RELEASE);
    __atomic_store_n(&real_clockjoin, (clockjoin_fn)hs_next_symbol("pthread_clockjoin_np", NULL), __ATOMIC_RELEASE);
    __atomic_store_n(&real_join, (join_fn)hs_next_symbol("pthread_join", NULL), __ATOMIC_RELEASE);
}

/* Drops n references. */
static void unref_locked(hs_thread *t, int n)
{
    t->refs -= n;
    if (t->refs == 0)
        free(t);
}

static void list_locked(hs_thread *t)
{
    if (t->listed || t->gone)
        return;
    t->listed = 1;
    t->refs++;
    t->next = g_live;
    g_live = t;
}

/* Its thread is gone: never findable again. Drops the thread's reference and the list's. */
static void gone_locked(hs_thread *t)
{
    int n = 1;
    t->gone = 1;
    if (t->listed) {
        hs_thread **pp = &g_live;
        while (*pp != t)
            pp = &(*pp)->next;
        *pp = t->next;
        t->listed = 0;
        n++;
    }
    unref_locked(t, n);
}

hs_thread *hs_thread_self(void) { return t_self; }

/* The thread-specific destructor: the thread exits. */
static void thread_exit(void *arg)
{
    hs_thread *t = arg;
    hs_client_thread_leaving(t); /* while it still counts as running: its joiners run from here */
    hs_client_thread_exit(t);
    t_self = NULL;
    pthread_mutex_lock(&g_tlock);
    t->exit_ns = hs_clock_now(); /* under the lock: a timed join that saw it running read the clock before */
    gone_locked(t);
    hs_real_cond_broadcast(&g_gone_cv); /* libhysim's own: never listed */
    pthread_mutex_unlock(&g_tlock);
}

static void *trampoline(void *arg)
{
    hs_thread *t = arg;
    void *(*start)(void *) = t->start;
    void *start_arg = t->arg;
    pthread_mutex_lock(&g_tlock);
    t->self = pthread_self();
    list_locked(t); /* before its creator may have: a join may come first */
    pthread_mutex_unlock(&g_tlock);
    t_self = t;
    if (pthread_setspecific(g_exit_key, t) != 0) { /* cannot happen with a valid key; never tell of it then */
        t_self = NULL;
        pthread_mutex_lock(&g_tlock);
        gone_locked(t);
        pthread_mutex_unlock(&g_tlock);
    }
    return start(start_arg);
}

int hs_thread_create_untracked(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
    resolve();
    return real_create(thread, attr, start, arg);
}

HS_API int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
    resolve();
    hs_thread *t = hs_clock_simulated() && g_exit_key_ok ? calloc(1, sizeof *t) : NULL;
    if (!t)
        return real_create(thread, attr, start, arg);
    t->start = start;
    t->arg = arg;
    t->refs = 2; /* its creator's, its thread's */
    pthread_mutex_lock(&g_tlock);
    t->id = g_next_id++;
    pthread_mutex_unlock(&g_tlock);
    hs_client_thread_created(t);
    int rc = real_create(thread, attr, trampoline, t);
    if (rc != 0) {
        hs_client_thread_exit(t);
        free(t);
        return rc;
    }
    pthread_mutex_lock(&g_tlock);
    t->self = *thread;
    list_locked(t);
    unref_locked(t, 1); /* the creator's */
    pthread_mutex_unlock(&g_tlock);
    return rc;
}

/* The live record of thread th, with a reference taken, or NULL. */
static hs_thread *find(pthread_t th)
{
    pthread_mutex_lock(&g_tlock);
    hs_thread *t = g_live;
    while (t && !pthread_equal(t->self, th))
        t = t->next;
    if (t)
        t->refs++;
    pthread_mutex_unlock(&g_tlock);
    return t;
}

/* A join that will return at once (an error) must not wait for the thread's exit. */
static int joinable(pthread_t th)
{
    if (pthread_equal(th, pthread_self()))
        return 0;
    pthread_attr_t a;
    int state = PTHREAD_CREATE_DETACHED;
    if (pthread_getattr_np(th, &a) == 0) {
        pthread_attr_getdetachstate(&a, &state);
        pthread_attr_destroy(&a);
    }
    return state == PTHREAD_CREATE_JOINABLE;
}

/* A join hysimd is not told of (its joiner issued no work, say) blocks outside CUDA: host_sync.c's way. */
static int join_parked(hs_thread *t, pthread_t th, void **ret)
{
    hs_parked p;
    if (!hs_client_park_join(&p, t))
        return real_join(th, ret);
    int rc;
    pthread_cleanup_push(hs_client_unpark_cancelled, &p);
    rc = real_join(th, ret);
    pthread_cleanup_pop(0);
    hs_client_unpark(&p);
    return rc;
}

HS_API int pthread_join(pthread_t th, void **ret)
{
    resolve();
    hs_thread *t = hs_clock_simulated() ? find(th) : NULL;
    int ok = t && joinable(th);
    int told = ok && hs_client_join_begin(t);
    int rc = ok && !told ? join_parked(t, th, ret) : real_join(th, ret);
    if (told)
        hs_client_join_end(t);
    if (t) {
        pthread_mutex_lock(&g_tlock);
        unref_locked(t, 1);
        pthread_mutex_unlock(&g_tlock);
    }
    return rc;
}

/* ---- timed joins (the file comment says how they decide) ---- */

static int valid_join_clock(clockid_t clock) { return clock == CLOCK_REALTIME || clock == CLOCK_MONOTONIC; }

__attribute__((noreturn)) static void timed_out_running(const char *name, uint64_t deadline)
{
    fprintf(stderr,
            "hysim: %s timing out on a running thread is not supported yet (it had not exited by its "
            "deadline, %" PRIu64 " ns of simulated host time)\n",
            name, deadline);
    fflush(NULL);
    _exit(1);
}

/* Waits until t is gone (1) or the host clock has passed deadline with t still running (0). */
static int await_exit(hs_thread *t, uint64_t deadline)
{
    int cancel;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel); /* a reference and hysimd's Wait must not be left behind */
    pthread_mutex_lock(&g_tlock);
    while (!t->gone && hs_clock_now() <= deadline) { /* the clock moves without telling: look now and then */
        struct timespec until;
        syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &until); /* real time: not ours, which is simulated */
        until.tv_nsec += HS_DEADLINE_POLL_NS;
        if (until.tv_nsec >= (long)NS_PER_S) {
            until.tv_sec++;
            until.tv_nsec -= (long)NS_PER_S;
        }
        hs_real_cond_clockwait(&g_gone_cv, &g_tlock, CLOCK_MONOTONIC, &until);
    }
    int gone = t->gone;
    pthread_mutex_unlock(&g_tlock);
    pthread_setcancelstate(cancel, NULL);
    return gone;
}

/* A timed join of t, th's live record (a reference held), with the deadline on the host clock. */
static int timed_join_tracked(const char *name, hs_thread *t, pthread_t th, void **ret, uint64_t deadline)
{
    if (!joinable(th)) { /* the error of a join of itself or of a detached thread, at once */
        static const struct timespec past = {0, 0};
        return real_timedjoin(th, ret, &past);
    }
    pthread_mutex_lock(&g_tlock);
    int gone = t->gone;
    pthread_mutex_unlock(&g_tlock);
    if (gone)
        return real_join(th, ret); /* exited before this call: nothing to time */
    if (deadline <= hs_clock_now())
        return ETIMEDOUT;
    int exited;
    if (hs_client_join_until(t, deadline, &exited)) /* in simulated time: t's exit or the deadline, first */
        return exited ? real_join(th, ret) : ETIMEDOUT;
    int told = hs_client_join_begin(t);
    if (!await_exit(t, deadline))
        timed_out_running(name, deadline); /* hysimd's Wait for t's exit stays unanswered: it ends here */
    if (told)
        hs_client_join_end(t);
    if (t->exit_ns > deadline) /* gone: written once, before */
        timed_out_running(name, deadline);
    return real_join(th, ret);
}

static int timed_join(const char *name, pthread_t th, void **ret, clockid_t clock, const struct timespec *abstime)
{
    if (!abstime)
        return pthread_join(th, ret);
    if (abstime->tv_nsec < 0 || abstime->tv_nsec >= (long)NS_PER_S)
        return EINVAL;
    hs_thread *t = find(th);
    if (!t) /* exited before this call (or never known): pthread_join's answer, at once */
        return real_join(th, ret);
    int rc = timed_join_tracked(name, t, th, ret, hs_clock_host_deadline(clock, abstime));
    pthread_mutex_lock(&g_tlock);
    unref_locked(t, 1);
    pthread_mutex_unlock(&g_tlock);
    return rc;
}

HS_API int pthread_timedjoin_np(pthread_t th, void **ret, const struct timespec *abstime)
{
    resolve();
    if (!hs_clock_simulated())
        return real_timedjoin(th, ret, abstime);
    return timed_join("pthread_timedjoin_np", th, ret, CLOCK_REALTIME, abstime);
}

HS_API int pthread_clockjoin_np(pthread_t th, void **ret, clockid_t clock, const struct timespec *abstime)
{
    resolve();
    if (!valid_join_clock(clock))
        return EINVAL;
    if (!hs_clock_simulated())
        return real_clockjoin ? real_clockjoin(th, ret, clock, abstime) : ENOSYS;
    return timed_join("pthread_clockjoin_np", th, ret, clock, abstime);
}

static void atfork_prepare(void) { pthread_mutex_lock(&g_tlock); }
static void atfork_parent(void) { pthread_mutex_unlock(&g_tlock); }
static void atfork_child(void) { pthread_mutex_unlock(&g_tlock); }

__attribute__((constructor)) static void threads_init(void)
{
    resolve(); /* not lazily: dlsym may allocate, which a sanitizer's own thread start must not see */
    g_exit_key_ok = pthread_key_create(&g_exit_key, thread_exit) == 0;
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}
