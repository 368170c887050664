/*
 * The program's threads as the client core sees them (threads.c): libhysim.so
 * wraps pthread_create, pthread_join, pthread_timedjoin_np and
 * pthread_clockjoin_np, so that a thread that issued GPU work and blocks in a
 * join of another such thread waits in hysimd (a THREAD_EXIT Wait) instead
 * of counting as running, and a timed join's deadline is read in simulated
 * time. A join hysimd is not told of, and host_sync.c's condition variable,
 * barrier and semaphore waits, block "outside CUDA" (hs_parked). Private to
 * libhysim.so; nothing here is exported.
 */
#ifndef HYSIM_INTERPOSE_THREADS_H
#define HYSIM_INTERPOSE_THREADS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "internal.h"

/*
 * A thread started by pthread_create while the process runs under hysim.
 * Lives until its thread has exited and no pthread_join holds it.
 */
typedef struct hs_thread {
    /* threads.c, under its own lock */
    pthread_t self;
    void *(*start)(void *);
    void *arg;
    int refs;         /* its creator until listed, its thread until it exits, each join in progress */
    int listed, gone; /* findable by pthread_t; exited (never listed again) */
    uint64_t exit_ns; /* once gone: the host clock (hs_clock_now) when it exited */
    struct hs_thread *next;
    /* core/host_waits.c, under the client lock */
    uint64_t id;                 /* Wait.thread / Threads.exited: unique in the process, never 0 */
    int worked;                  /* it issued work (an op or a Wait) */
    int fresh;                   /* created by a thread that had issued work; has issued none yet */
    uint64_t born;               /* its place among the quiet starts (core/client.c: g_quiet_starts) */
    int exited;                  /* it exited */
    int joiner;                  /* a thread that issued work blocks in pthread_join of it */
    void *join_wait;             /* the joiner's THREAD_EXIT Wait, once sent (core/host_waits.c's reply slot) */
    struct hs_thread *next_join; /* joins whose Wait is not sent yet */
    int leaving;                 /* its exit began: its joiners were released, later ones do not block in the books */
} hs_thread;

/*
 * A thread blocked in a call that host_sync.c or threads.c wraps (a
 * condition variable, a barrier, a semaphore, a join), on the blocking
 * thread's stack from hs_client_park to hs_client_unpark. hysimd counts a
 * blocked thread that issued work as waiting, but only while no thread that
 * issued no work runs: such a thread, unseen by hysimd, might release it
 * (core/host_waits.c says why and how).
 */
typedef struct hs_parked {
    const void *key;   /* what it blocks on: the object's address */
    int works;         /* the thread issued work */
    int listed;        /* in core/host_waits.c's list of blocked threads */
    int released;      /* a releaser counted it as running again; it has not returned yet */
    int sleeps;        /* it sleeps on released (a lock's, hs_client_block_on_lock): a release wakes it */
    int handover;      /* its release came before libc lets the mutex go (hs_client_park_handing) */
    const void *hands; /* a mutex libc lets go inside the wait it blocks in (hs_client_park_handing) */
    int hands_tid;     /* its thread id: the mutex's owner until then */
    struct hs_parked *next;
} hs_parked;

/* The calling thread's record, or NULL (the main thread, threads started before hysim knew). */
HS_HIDDEN hs_thread *hs_thread_self(void);

/* libc's pthread_create, for the client core's own threads (not wrapped, not counted). */
HS_HIDDEN int hs_thread_create_untracked(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                                         void *arg);

/* ---- core/host_waits.c, called by threads.c ---- */

/* t is about to be started by the calling thread. */
HS_HIDDEN void hs_client_thread_created(hs_thread *t);
/* t exits (called by t as its thread-specific data is destroyed), or failed to start (by its creator). */
HS_HIDDEN void hs_client_thread_exit(hs_thread *t);
/*
 * The calling thread is about to block in a join of t (pthread_join, or a
 * timed join waiting for t's exit): 1 when hysimd is told (a thread that
 * issued work joins one that has not exited): then hs_client_join_end must
 * follow once t has exited.
 */
HS_HIDDEN int hs_client_join_begin(hs_thread *t);
/* After t has exited (the real pthread_join returned): awaits the THREAD_EXIT Wait's answer, if one was sent. */
HS_HIDDEN void hs_client_join_end(hs_thread *t);
/* t is about to exit (it runs): releases the threads blocked in a join of it (before it is counted out). */
HS_HIDDEN void hs_client_thread_leaving(hs_thread *t);

/* ---- core/host_waits.c, called by host_sync.c: timed condition variable waits ---- */

/*
 * A timed wait on key (a condition variable) until the host clock reads
 * until_ns, in hysimd: 1 with *rc (0 woken, ETIMEDOUT), mutex let go while
 * it waits and held again on return; 0 where hysimd cannot time it (the
 * caller waits in real time): as sleeps (sleep.c).
 */
HS_HIDDEN int hs_client_cond_timedwait(const void *key, pthread_mutex_t *mutex, uint64_t until_ns, int *rc);
/*
 * A timed join of t (its record) until the host clock reads until_ns, in
 * hysimd: 1 with *exited (t exited by then; its exit wakes the wait), where
 * the caller and t both issued work; 0 otherwise (threads.c's own way).
 */
HS_HIDDEN int hs_client_join_until(hs_thread *t, uint64_t until_ns, int *exited);
/*
 * sem_timedwait / sem_clockwait on key (a semaphore) until the host clock
 * reads until_ns, in hysimd, where it can time it (as a condition
 * variable's): take(arg) (a sem_trywait: non-zero when it took a token) is
 * tried under the lock a post takes, and until it succeeds the caller waits
 * until the deadline or a post's Wake. 1 with *rc (0, or ETIMEDOUT); 0
 * where the caller is to wait in real time.
 */
HS_HIDDEN int hs_client_sem_timedwait(const void *key, uint64_t until_ns, int (*take)(void *), void *arg, int *rc);
/* A signal (max 1) or broadcast (max 0) of key: answers the timed waits on it hysimd times, now. */
HS_HIDDEN void hs_client_wake_timed(const void *key, unsigned max);

/* ---- core/host_waits.c, called by host_sync.c and threads.c: threads blocked outside CUDA ---- */

/*
 * The calling thread is about to block on key. release_at > 0 (a barrier of
 * that many): when release_at - 1 threads are blocked on key, the caller is
 * the last to arrive: it releases them and does not block (returns 0).
 * ready, when not NULL, is called first under the lock that releases take:
 * non-zero (a semaphore's trywait took it) means the caller need not block
 * (returns 0). Otherwise it is listed as blocked (1). Either way
 * hs_client_unpark(p) follows (once the real call returned, if it blocks).
 */
HS_HIDDEN int hs_client_park(hs_parked *p, const void *key, unsigned release_at, int (*ready)(void *), void *arg);
/*
 * The calling thread is about to block in I/O (host_io.c): listed as
 * blocked (1), or not for a thread hysim does not count or before the
 * process's first work (0). hs_client_io_unblock(p) follows a 1, once the
 * call returned: the process joins the simulation again there.
 */
HS_HIDDEN int hs_client_io_block(hs_parked *p);
HS_HIDDEN void hs_client_io_unblock(hs_parked *p);
/*
 * hs_client_park for a wait in real time of a thread that issued no work (a
 * watchdog's timed wait): it cannot issue its first work while it waits.
 * 0 (not listed) for a thread that issued work, which counts as running.
 */
HS_HIDDEN int hs_client_park_quiet(hs_parked *p);
/* hs_client_park for a pthread_join of t; 0 (not listed) once t's exit began. */
HS_HIDDEN int hs_client_park_join(hs_parked *p, hs_thread *t);
/*
 * The calling thread (running) releases up to max threads blocked on key
 * (max 0: all): they count as running again, and hysimd knows it before
 * this returns. Returns how many.
 */
HS_HIDDEN unsigned hs_client_release(const void *key, unsigned max);
/*
 * After a lock's real unlock (its result rc) in mutex.c, rwlock.c and
 * spinlock.c: whether the threads blocked on it must be released, that is
 * the unlock succeeded, the lock counts (counts: not shared between
 * processes, not still held) and some thread is in its slow path
 * (contended). The fence pairs with the locker's count, as in Dekker's
 * algorithm (mutex.c says why).
 */
static inline int hs_lock_release_due(int rc, int counts, _Atomic unsigned *contended)
{
    atomic_thread_fence(memory_order_seq_cst);
    return rc == 0 && counts && atomic_load(contended) > 0;
}
/* Whether any thread is listed as blocked (a hint without the lock: a releaser that sees 0 has none to release). */
HS_HIDDEN int hs_client_any_parked(void);
/* The blocking call returned (or the thread is cancelled in it): p runs again. */
HS_HIDDEN void hs_client_unpark(hs_parked *p);
/*
 * A lock the caller found taken (mutex.c: a mutex; rwlock.c, spinlock.c: a
 * rwlock, a spin lock, mutex NULL): tries take(arg) under the lock releases take, and until it succeeds
 * blocks listed on key, sleeping until a release (or a short while: a mutex
 * let go inside libc wakes no one); a thread released that loses the lock
 * again blocks listed again. Returns running, the lock taken (or take's
 * error): 2 when it slept on the mutex's lock word (the caller, owning it,
 * marks the word as libc's own lock does after such a sleep, so that the
 * next unlock wakes the sleepers it may have taken a wake from), else 1; 0
 * at once where the caller is inside the client core (a signal handler): it
 * waits in libc then.
 */
HS_HIDDEN int hs_client_block_on_lock(const void *key, pthread_mutex_t *mutex, int (*take)(void *), void *arg);
/*
 * hs_client_park for a condition variable's wait (key) in which libc lets
 * mutex go, held by the caller, where no wrapper sees it: one thread blocked
 * on mutex is released as a handover, and one that blocks on it until libc
 * has let it go finds the caller listed and counts as running too; both
 * keep trying the mutex until it is free (mutex.c says why). Returns 1.
 */
HS_HIDDEN int hs_client_park_handing(hs_parked *p, const void *key, const void *mutex);
/* hs_client_unpark as a pthread_cleanup_push handler (p: the hs_parked): a thread cancelled while blocked. */
HS_HIDDEN void hs_client_unpark_cancelled(void *p);
/*
 * hs_client_release, then post(arg) under the same lock, so that a thread
 * deciding whether to block (hs_client_park's ready) sees both or neither;
 * a post that succeeded also wakes up to max timed waits on key.
 */
HS_HIDDEN int hs_client_release_and(const void *key, unsigned max, int (*post)(void *), void *arg);

#endif
