/*
 * pthread_mutex_lock, trylock, timedlock and clocklock, and
 * pthread_mutex_unlock: a thread that issued GPU work and blocks on a mutex
 * counts as blocked while the holder waits on the GPU (docs/client.md,
 * "Mutexes").
 */
#undef pthread_mutex_lock
#undef pthread_mutex_unlock

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host_sync.h"
#include "threads.h"

typedef int (*mutex_fn)(pthread_mutex_t *);

static struct {
    mutex_fn lock, trylock, unlock;
} real; /* each read and written with atomics */

/* Threads in the slow path of pthread_mutex_lock: an unlock looks for listed threads only when some are. */
static _Atomic unsigned g_contended;

static void resolve(void)
{
    if (__atomic_load_n(&real.unlock, __ATOMIC_ACQUIRE))
        return;
    __atomic_store_n(&real.lock, (mutex_fn)hs_next_symbol("pthread_mutex_lock", NULL), __ATOMIC_RELEASE);
    __atomic_store_n(&real.trylock, (mutex_fn)hs_next_symbol("pthread_mutex_trylock", NULL), __ATOMIC_RELEASE);
    __atomic_store_n(&real.unlock, (mutex_fn)hs_next_symbol("pthread_mutex_unlock", NULL), __ATOMIC_RELEASE);
}

#define REAL(field) (resolve(), __atomic_load_n(&real.field, __ATOMIC_ACQUIRE))

HS_API int hs_client_own_mutex_lock(pthread_mutex_t *mutex) { return REAL(lock)(mutex); }
HS_API int hs_client_own_mutex_unlock(pthread_mutex_t *mutex) { return REAL(unlock)(mutex); }

/*
 * What glibc keeps in a mutex (nptl's pthreadP.h, glibc 2.34 on): __kind's
 * bit 7 marks one shared between processes (PTHREAD_MUTEX_PSHARED_BIT), its
 * two low bits the type (1: recursive); __owner holds the owner's thread id
 * (below bit 30 for robust and priority-inheritance mutexes, whose upper
 * bits are flags); __count a recursive mutex's depth.
 */
#define MUTEX_PSHARED_BIT       128
#define MUTEX_TYPE_MASK         3
#define MUTEX_ROBUST_PI_PP_BITS (16 | 32 | 64)
#define MUTEX_OWNER_TID_MASK    0x3fffffff

static int shared_mutex(const pthread_mutex_t *m)
{
    return (__atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED) & MUTEX_PSHARED_BIT) != 0;
}

/* Whether the calling thread holds m (read by its owner, the field is stable). */
static int owned_by_caller(const pthread_mutex_t *m)
{
    int owner = __atomic_load_n(&m->__data.__owner, __ATOMIC_RELAXED) & MUTEX_OWNER_TID_MASK;
    return owner != 0 && owner == (int)syscall(SYS_gettid);
}

/* A robust or priority mutex (__kind bits 4, 5, 6): the kernel hands it over (an owner's death, inheritance). */
static int robust_or_priority(const pthread_mutex_t *m)
{
    return (__atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED) & MUTEX_ROBUST_PI_PP_BITS) != 0;
}

/* An unlock by the owner that leaves a recursive mutex held (read before it lets the mutex go). */
static int stays_held(const pthread_mutex_t *m)
{
    return (__atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED) & MUTEX_TYPE_MASK) == PTHREAD_MUTEX_RECURSIVE &&
           __atomic_load_n(&m->__data.__count, __ATOMIC_RELAXED) > 1;
}

typedef struct attempt {
    pthread_mutex_t *mutex;
    int rc; /* the try's result */
} attempt;

/* hs_client_block_on_lock's take: the mutex, tried under the lock an unlock's release takes. */
static int try_under_lock(void *arg)
{
    attempt *a = arg;
    a->rc = REAL(trylock)(a->mutex);
    return a->rc != EBUSY;
}

/* The mutex is taken: blocks listed on it (core/host_waits.c) until the caller takes it. */
static int lock_contended(pthread_mutex_t *mutex)
{
    atomic_fetch_add(&g_contended, 1); /* before the try under the lock: an unlock after it sees this */
    attempt a = {mutex, EBUSY};
    int blocked = hs_client_block_on_lock(mutex, mutex, try_under_lock, &a);
    if (blocked == 2 && a.rc == 0) /* 2: taken, with sleepers: the next unlock wakes one (libc's lock does the same) */
        __atomic_store_n(&mutex->__data.__lock, 2, __ATOMIC_RELAXED);
    atomic_fetch_sub(&g_contended, 1);
    return blocked ? a.rc : REAL(lock)(mutex);
}

int hs_sync_mutex_lock(pthread_mutex_t *mutex)
{
    if (!hs_clock_simulated() || shared_mutex(mutex))
        return REAL(lock)(mutex);
    int rc = REAL(trylock)(mutex);
    if (rc != EBUSY) /* 0, or what libc's lock would say: a robust mutex's EOWNERDEAD, ... */
        return rc;
    if (owned_by_caller(mutex) || robust_or_priority(mutex)) /* libc's own answer, or its own wait */
        return REAL(lock)(mutex);
    return lock_contended(mutex);
}

/*
 * libc's unlock of mutex, held by the caller, under hysim: its result, and
 * in *release whether a thread blocked on it is to be released.
 */
static int unlock_seen(pthread_mutex_t *mutex, int *release)
{
    int counts = !shared_mutex(mutex) && !stays_held(mutex); /* read while held: once let go it may be freed */
    int rc = REAL(unlock)(mutex);
    *release = hs_lock_release_due(rc, counts, &g_contended); /* libc's unlock may be a release store */
    return rc;
}

static int unlock_program_mutex(pthread_mutex_t *mutex)
{
    if (!hs_clock_simulated())
        return REAL(unlock)(mutex);
    int release;
    int rc = unlock_seen(mutex, &release);
    if (release)
        hs_client_release(mutex, 1); /* the address only: once let go, mutex may be freed */
    return rc;
}

int hs_sync_mutex_let_go(pthread_mutex_t *mutex)
{ /* only in a wait in hysimd: the process runs under hysim */
    int release;
    unlock_seen(mutex, &release);
    return release;
}

HS_API int pthread_mutex_lock(pthread_mutex_t *mutex) { return hs_sync_mutex_lock(mutex); }
HS_API int pthread_mutex_unlock(pthread_mutex_t *mutex) { return unlock_program_mutex(mutex); }

__attribute__((constructor)) static void mutex_init(void) { resolve(); }
