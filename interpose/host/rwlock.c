/*
 * pthread_rwlock_rdlock, pthread_rwlock_wrlock and pthread_rwlock_unlock,
 * wrapped (and so C++ std::shared_mutex): a thread blocked on a rwlock
 * counts as waiting, as one blocked on a mutex does (mutex.c says why: a
 * holder that synchronises a stream or sleeps while others wait for the
 * lock would otherwise stall the run).
 *
 * As mutex.c: a lock tries first (tryrdlock, trywrlock) and blocks listed
 * on the rwlock's address only when that fails (core/host_waits.c,
 * hs_client_block_on_lock); an unlock releases after libc's, while some
 * thread is in that slow path (g_contended, paired as mutex.c's). An unlock
 * releases every thread blocked on the rwlock, not one: a writer's unlock
 * may let all the waiting readers in at once; those that lose block listed
 * again. No rwlock is let go inside libc, so none is handed over.
 *
 * Left to libc as they are: a rwlock shared between processes, a lock by
 * the thread that holds it for writing (libc's EDEADLK), the timed locks
 * (timed_waits.c: real time), and everything without HYSIM_ENDPOINT.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host_sync.h"
#include "threads.h"

typedef int (*rwlock_fn)(pthread_rwlock_t *);

static struct {
    rwlock_fn rdlock, wrlock, tryrdlock, trywrlock, unlock;
} real; /* each read and written with atomics */

/* Threads in the slow path of a lock: an unlock looks for listed threads only when some are. */
static _Atomic unsigned g_contended;

#define STORE(field, name) __atomic_store_n(&real.field, (rwlock_fn)hs_next_symbol(name, NULL), __ATOMIC_RELEASE)

static void resolve(void)
{
    if (__atomic_load_n(&real.unlock, __ATOMIC_ACQUIRE))
        return;
    STORE(rdlock, "pthread_rwlock_rdlock");
    STORE(wrlock, "pthread_rwlock_wrlock");
    STORE(tryrdlock, "pthread_rwlock_tryrdlock");
    STORE(trywrlock, "pthread_rwlock_trywrlock");
    STORE(unlock, "pthread_rwlock_unlock"); /* last: resolve's test */
}

#define REAL(field) (resolve(), __atomic_load_n(&real.field, __ATOMIC_ACQUIRE))

/* glibc's rwlock (bits/struct_rwlock.h): __shared marks one shared between processes, __cur_writer its writer. */
static int shared_rwlock(const pthread_rwlock_t *rw)
{
    return __atomic_load_n(&rw->__data.__shared, __ATOMIC_RELAXED) != 0;
}

static int written_by_caller(const pthread_rwlock_t *rw)
{
    return __atomic_load_n(&rw->__data.__cur_writer, __ATOMIC_RELAXED) == (int)syscall(SYS_gettid);
}

typedef struct attempt {
    pthread_rwlock_t *rwlock;
    rwlock_fn try_lock;
    int rc; /* the try's result */
} attempt;

/* hs_client_block_on_lock's take: the rwlock, tried under the lock an unlock's release takes. */
static int try_under_lock(void *arg)
{
    attempt *a = arg;
    a->rc = a->try_lock(a->rwlock);
    return a->rc != EBUSY;
}

/* A read (write 0) or write lock: libc's own, or blocked listed on the rwlock when it is taken. */
static int lock(pthread_rwlock_t *rw, int write)
{
    rwlock_fn blocking = write ? REAL(wrlock) : REAL(rdlock);
    if (!hs_clock_simulated() || shared_rwlock(rw))
        return blocking(rw);
    attempt a = {rw, write ? REAL(trywrlock) : REAL(tryrdlock), EBUSY};
    int rc = a.try_lock(rw);
    if (rc != EBUSY) /* 0, or what libc's lock would say (EAGAIN: too many readers, ...) */
        return rc;
    if (written_by_caller(rw)) /* libc's EDEADLK, at once */
        return blocking(rw);
    atomic_fetch_add(&g_contended, 1); /* before the try under the lock: an unlock after it sees this */
    int blocked = hs_client_block_on_lock(rw, NULL, try_under_lock, &a);
    atomic_fetch_sub(&g_contended, 1);
    return blocked ? a.rc : blocking(rw);
}

HS_API int pthread_rwlock_rdlock(pthread_rwlock_t *rwlock) { return lock(rwlock, 0); }
HS_API int pthread_rwlock_wrlock(pthread_rwlock_t *rwlock) { return lock(rwlock, 1); }

HS_API int pthread_rwlock_unlock(pthread_rwlock_t *rwlock)
{
    if (!hs_clock_simulated())
        return REAL(unlock)(rwlock);
    int counts = !shared_rwlock(rwlock); /* read while held: once let go it may be freed */
    int rc = REAL(unlock)(rwlock);
    if (hs_lock_release_due(rc, counts, &g_contended))
        hs_client_release(rwlock, 0); /* all: the readers may all get in; the address only */
    return rc;
}

__attribute__((constructor)) static void rwlock_init(void) { resolve(); }
