/*
 * Condition variables, barriers and semaphores: a thread blocked in one is
 * listed as blocked, and its releaser counts it in again (docs/client.md,
 * "Condition variables, barriers and semaphores").
 */
#include <semaphore.h>
#include <stdint.h>
#include <string.h>

#include "host_sync.h"
#include "threads.h"

typedef int (*cond_wait_fn)(pthread_cond_t *, pthread_mutex_t *);
typedef int (*cond_fn)(pthread_cond_t *);
typedef int (*barrier_init_fn)(pthread_barrier_t *, const pthread_barrierattr_t *, unsigned);
typedef int (*barrier_fn)(pthread_barrier_t *);
typedef int (*sem_fn)(sem_t *);

static struct {
    cond_wait_fn cond_wait;
    cond_fn cond_signal, cond_broadcast;
    barrier_init_fn barrier_init;
    barrier_fn barrier_destroy, barrier_wait;
    sem_fn sem_wait, sem_trywait, sem_post;
} real; /* each read and written with atomics */

static pthread_mutex_t g_barriers_lock = PTHREAD_MUTEX_INITIALIZER;
static hs_ptrmap g_barriers; /* pthread_barrier_t * → its count */

#define STORE(field, name, version) \
    __atomic_store_n(&real.field, (__typeof__(real.field))hs_next_symbol(name, version), __ATOMIC_RELEASE)

static void resolve(void)
{
    if (__atomic_load_n(&real.sem_post, __ATOMIC_ACQUIRE))
        return;
    STORE(cond_wait, "pthread_cond_wait", "GLIBC_2.3.2");
    STORE(cond_signal, "pthread_cond_signal", "GLIBC_2.3.2");
    STORE(cond_broadcast, "pthread_cond_broadcast", "GLIBC_2.3.2");
    STORE(barrier_init, "pthread_barrier_init", NULL);
    STORE(barrier_destroy, "pthread_barrier_destroy", NULL);
    STORE(barrier_wait, "pthread_barrier_wait", NULL);
    STORE(sem_wait, "sem_wait", NULL);
    STORE(sem_trywait, "sem_trywait", NULL);
    STORE(sem_post, "sem_post", NULL); /* last: resolve's test */
}

#define REAL(field) (resolve(), __atomic_load_n(&real.field, __ATOMIC_ACQUIRE))

int hs_real_cond_wait(pthread_cond_t *cond, pthread_mutex_t *mutex) { return REAL(cond_wait)(cond, mutex); }
int hs_real_cond_broadcast(pthread_cond_t *cond) { return REAL(cond_broadcast)(cond); }

/*
 * Whether a condition variable or a semaphore is shared between processes.
 * No public call says so: glibc's pthread_cond_init marks a shared one in
 * bit 0 of __data.__wrefs (__PTHREAD_COND_SHARED_MASK, glibc 2.25 on), and
 * sem_init and sem_open store a shared one's futex flag (FUTEX_SHARED, 128;
 * a private one's is 0) in the int after its 64-bit value (struct new_sem,
 * glibc 2.21 on, 64-bit targets).
 */
static int shared_cond(const pthread_cond_t *cond)
{
    return (__atomic_load_n(&cond->__data.__wrefs, __ATOMIC_RELAXED) & 1u) != 0; /* its waiters count in the rest */
}
static int shared_sem(const sem_t *sem)
{
    _Static_assert(sizeof(sem_t) >= sizeof(uint64_t) + sizeof(int), "glibc's struct new_sem");
    int flag;
    memcpy(&flag, (const char *)sem + sizeof(uint64_t), sizeof flag);
    return flag != 0;
}

/* ---- condition variables ---- */

HS_API int pthread_cond_wait(pthread_cond_t *cond, pthread_mutex_t *mutex)
{
    cond_wait_fn wait = REAL(cond_wait);
    if (!hs_clock_simulated() || shared_cond(cond))
        return wait(cond, mutex);
    hs_parked p;
    hs_client_park_handing(&p, cond, mutex); /* libc lets mutex go inside the wait */
    int rc;
    pthread_cleanup_push(hs_client_unpark_cancelled, &p); /* cond_wait, sem_wait: cancellation points */
    rc = wait(cond, mutex);
    pthread_cleanup_pop(0);
    hs_client_unpark(&p);
    return rc;
}

/*
 * The waiter lists itself holding the mutex, before the real wait releases
 * it; a signaller that changed the condition under that mutex sees it
 * listed, so the unlocked hint is enough to skip the lock when none is.
 */
HS_API int pthread_cond_signal(pthread_cond_t *cond)
{
    if (hs_clock_simulated() && hs_client_any_parked())
        hs_client_release(cond, 1);
    if (hs_clock_simulated())
        hs_client_wake_timed(cond, 1); /* one timed waiter too: a wakeup more than asked is allowed */
    return REAL(cond_signal)(cond);
}

HS_API int pthread_cond_broadcast(pthread_cond_t *cond)
{
    if (hs_clock_simulated() && hs_client_any_parked())
        hs_client_release(cond, 0);
    if (hs_clock_simulated())
        hs_client_wake_timed(cond, 0);
    return REAL(cond_broadcast)(cond);
}

/* Whether a timed wait until abstime on clock may wait in hysimd: a deadline libc takes, on a simulated clock. */
static int simulated_deadline(clockid_t clock, const struct timespec *abstime)
{
    return abstime && abstime->tv_nsec >= 0 && abstime->tv_nsec < 1000000000 && hs_clock_reads_simulated(clock);
}

int hs_sync_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *mutex, clockid_t clock,
                           const struct timespec *abstime, int *rc)
{
    if (!simulated_deadline(clock, abstime) || shared_cond(cond))
        return 0;
    pthread_testcancel(); /* a cancellation point, as libc's: before, as the wait in hysimd is none */
    return hs_client_cond_timedwait(cond, mutex, hs_clock_host_deadline(clock, abstime), rc);
}

/* hs_client_sem_timedwait's take: a token, if there is one. */
static int sem_took(void *sem) { return REAL(sem_trywait)(sem) == 0; }

int hs_sync_sem_timedwait(sem_t *sem, clockid_t clock, const struct timespec *abstime, int *rc)
{
    if (!simulated_deadline(clock, abstime) || shared_sem(sem))
        return 0;
    pthread_testcancel(); /* a cancellation point, as libc's: before, as the wait in hysimd is none */
    return hs_client_sem_timedwait(sem, hs_clock_host_deadline(clock, abstime), sem_took, sem, rc);
}

/* ---- barriers ---- */

HS_API int pthread_barrier_init(pthread_barrier_t *barrier, const pthread_barrierattr_t *attr, unsigned count)
{
    int rc = REAL(barrier_init)(barrier, attr, count);
    int pshared = PTHREAD_PROCESS_PRIVATE;
    if (attr)
        pthread_barrierattr_getpshared(attr, &pshared);
    if (rc == 0 && hs_clock_simulated()) {
        pthread_mutex_lock(&g_barriers_lock);
        if (pshared == PTHREAD_PROCESS_PRIVATE)
            hs_ptrmap_put(&g_barriers, (uintptr_t)barrier, count);
        else /* passed through: not in the map, even where a private one was left undestroyed */
            hs_ptrmap_del(&g_barriers, (uintptr_t)barrier);
        pthread_mutex_unlock(&g_barriers_lock);
    }
    return rc;
}

HS_API int pthread_barrier_destroy(pthread_barrier_t *barrier)
{
    int rc = REAL(barrier_destroy)(barrier);
    if (rc == 0 && hs_clock_simulated()) {
        pthread_mutex_lock(&g_barriers_lock);
        hs_ptrmap_del(&g_barriers, (uintptr_t)barrier);
        pthread_mutex_unlock(&g_barriers_lock);
    }
    return rc;
}

HS_API int pthread_barrier_wait(pthread_barrier_t *barrier)
{
    barrier_fn wait = REAL(barrier_wait);
    if (!hs_clock_simulated())
        return wait(barrier);
    pthread_mutex_lock(&g_barriers_lock);
    unsigned count = (unsigned)hs_ptrmap_get(&g_barriers, (uintptr_t)barrier);
    pthread_mutex_unlock(&g_barriers_lock);
    if (count == 0) /* not seen initialised: its size is unknown */
        return wait(barrier);
    hs_parked p;
    hs_client_park(&p, barrier, count, NULL, NULL); /* the last to arrive releases the others instead */
    int rc = wait(barrier);                         /* not a cancellation point */
    hs_client_unpark(&p);
    return rc;
}

/* ---- semaphores ---- */

static int sem_taken(void *sem) { return REAL(sem_trywait)(sem) == 0; }
static int sem_post_real(void *sem) { return REAL(sem_post)(sem); }

HS_API int sem_wait(sem_t *sem)
{
    sem_fn wait = REAL(sem_wait);
    if (!hs_clock_simulated() || shared_sem(sem))
        return wait(sem);
    hs_parked p;
    if (!hs_client_park(&p, sem, 0, sem_taken, sem)) {
        hs_client_unpark(&p);
        return 0;
    }
    int rc;
    pthread_cleanup_push(hs_client_unpark_cancelled, &p);
    rc = wait(sem);
    pthread_cleanup_pop(0);
    hs_client_unpark(&p);
    return rc;
}

HS_API int sem_post(sem_t *sem)
{
    if (!hs_clock_simulated() || shared_sem(sem)) /* none of this process's waits on a shared one is listed */
        return REAL(sem_post)(sem);
    return hs_client_release_and(sem, 1, sem_post_real, sem);
}

/* A child forked while another thread held g_barriers_lock would hang in its first barrier call. */
static void atfork_prepare(void) { pthread_mutex_lock(&g_barriers_lock); }
static void atfork_release(void) { pthread_mutex_unlock(&g_barriers_lock); }

__attribute__((constructor)) static void host_sync_init(void)
{
    resolve();
    pthread_atfork(atfork_prepare, atfork_release, atfork_release);
}
