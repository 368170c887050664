/*
 * Timed condition-variable waits and other deadlines on the simulated clock:
 * which clock a deadline is on, and when a timed wait waits in hysimd or in
 * real time (docs/client.md, "Timed waits").
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <time.h>

#include "host_sync.h"
#include "internal.h"
#include "threads.h"

#define NS_PER_S 1000000000ull

typedef int (*cond_timedwait_fn)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
typedef int (*cond_clockwait_fn)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);
typedef int (*sem_timedwait_fn)(sem_t *, const struct timespec *);
typedef int (*sem_clockwait_fn)(sem_t *, clockid_t, const struct timespec *);
typedef int (*mutex_timedlock_fn)(pthread_mutex_t *, const struct timespec *);
typedef int (*mutex_clocklock_fn)(pthread_mutex_t *, clockid_t, const struct timespec *);
typedef int (*rwlock_timed_fn)(pthread_rwlock_t *, const struct timespec *);
typedef int (*rwlock_clock_fn)(pthread_rwlock_t *, clockid_t, const struct timespec *);

static struct {
    cond_timedwait_fn cond_timedwait;
    cond_clockwait_fn cond_clockwait;
    sem_timedwait_fn sem_timedwait;
    sem_clockwait_fn sem_clockwait;
    mutex_timedlock_fn mutex_timedlock;
    mutex_clocklock_fn mutex_clocklock;
    rwlock_timed_fn rwlock_timedrdlock, rwlock_timedwrlock;
    rwlock_clock_fn rwlock_clockrdlock, rwlock_clockwrlock;
} real; /* each read and written with atomics */

#define STORE(field, name, version) \
    __atomic_store_n(&real.field, (__typeof__(real.field))hs_next_symbol(name, version), __ATOMIC_RELEASE)

static void resolve(void)
{
    if (__atomic_load_n(&real.cond_timedwait, __ATOMIC_ACQUIRE))
        return;
    STORE(cond_clockwait, "pthread_cond_clockwait", NULL);
    STORE(sem_timedwait, "sem_timedwait", NULL);
    STORE(sem_clockwait, "sem_clockwait", NULL);
    STORE(mutex_timedlock, "pthread_mutex_timedlock", NULL);
    STORE(mutex_clocklock, "pthread_mutex_clocklock", NULL);
    STORE(rwlock_timedrdlock, "pthread_rwlock_timedrdlock", NULL);
    STORE(rwlock_timedwrlock, "pthread_rwlock_timedwrlock", NULL);
    STORE(rwlock_clockrdlock, "pthread_rwlock_clockrdlock", NULL);
    STORE(rwlock_clockwrlock, "pthread_rwlock_clockwrlock", NULL);
    STORE(cond_timedwait, "pthread_cond_timedwait", "GLIBC_2.3.2"); /* last: resolve's test */
}

#define REAL(field) (resolve(), __atomic_load_n(&real.field, __ATOMIC_ACQUIRE))

int hs_real_cond_clockwait(pthread_cond_t *cond, pthread_mutex_t *mutex, clockid_t clock,
                           const struct timespec *abstime)
{
    return REAL(cond_clockwait)(cond, mutex, clock, abstime);
}

/*
 * abstime on `clock`, read on the simulated clock, as the same moment on the
 * machine's clock, in *out; abstime itself where it passes through.
 */
static const struct timespec *on_real_clock(clockid_t clock, const struct timespec *abstime, struct timespec *out)
{
    if (!abstime || abstime->tv_nsec < 0 || abstime->tv_nsec >= (long)NS_PER_S || !hs_clock_reads_simulated(clock))
        return abstime;
    uint64_t deadline = hs_clock_host_deadline(clock, abstime), now = hs_clock_now();
    if (deadline == UINT64_MAX)
        return abstime; /* beyond any clock's reach on either */
    uint64_t left = deadline > now ? deadline - now : 0, at = hs_clock_real_ns(clock);
    at = at > UINT64_MAX - left ? UINT64_MAX : at + left;
    *out = (struct timespec){(time_t)(at / NS_PER_S), (long)(at % NS_PER_S)};
    return out;
}

/* A real-time wait parked by hs_client_park_quiet ends: counted as running again, errno kept. */
static void quiet_end(hs_parked *p, int parked)
{
    int e = errno;
    if (parked)
        hs_client_unpark(p);
    errno = e;
}

/* The clock a condition variable's deadlines are on (the file comment says how it is read). */
static clockid_t cond_clock(const pthread_cond_t *cond)
{
    return (__atomic_load_n(&cond->__data.__wrefs, __ATOMIC_RELAXED) & 2u) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

HS_API int pthread_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *mutex, const struct timespec *abstime)
{
    struct timespec t;
    int rc;
    if (hs_sync_cond_timedwait(cond, mutex, cond_clock(cond), abstime, &rc))
        return rc;
    hs_parked p;
    int parked = hs_client_park_quiet(&p); /* it cannot issue work meanwhile */
    rc = REAL(cond_timedwait)(cond, mutex, on_real_clock(cond_clock(cond), abstime, &t));
    quiet_end(&p, parked);
    return rc;
}

HS_API int pthread_cond_clockwait(pthread_cond_t *cond, pthread_mutex_t *mutex, clockid_t clock,
                                  const struct timespec *abstime)
{
    struct timespec t;
    int rc;
    if (hs_sync_cond_timedwait(cond, mutex, clock, abstime, &rc))
        return rc;
    hs_parked p;
    int parked = hs_client_park_quiet(&p); /* it cannot issue work meanwhile */
    rc = REAL(cond_clockwait)(cond, mutex, clock, on_real_clock(clock, abstime, &t));
    quiet_end(&p, parked);
    return rc;
}

/* sem_timedwait's result: 0, or -1 with errno. */
static int sem_result(int rc)
{
    if (rc == 0)
        return 0;
    errno = rc;
    return -1;
}

HS_API int sem_timedwait(sem_t *sem, const struct timespec *abstime)
{
    int rc;
    if (hs_sync_sem_timedwait(sem, CLOCK_REALTIME, abstime, &rc))
        return sem_result(rc);
    struct timespec t;
    hs_parked p;
    int parked = hs_client_park_quiet(&p); /* it cannot issue work meanwhile */
    rc = REAL(sem_timedwait)(sem, on_real_clock(CLOCK_REALTIME, abstime, &t));
    quiet_end(&p, parked);
    return rc;
}

HS_API int sem_clockwait(sem_t *sem, clockid_t clock, const struct timespec *abstime)
{
    int rc;
    if ((clock == CLOCK_REALTIME || clock == CLOCK_MONOTONIC) && hs_sync_sem_timedwait(sem, clock, abstime, &rc))
        return sem_result(rc);
    struct timespec t;
    hs_parked p;
    int parked = hs_client_park_quiet(&p); /* it cannot issue work meanwhile */
    rc = REAL(sem_clockwait)(sem, clock, on_real_clock(clock, abstime, &t));
    quiet_end(&p, parked);
    return rc;
}

HS_API int pthread_mutex_timedlock(pthread_mutex_t *mutex, const struct timespec *abstime)
{
    struct timespec t;
    return REAL(mutex_timedlock)(mutex, on_real_clock(CLOCK_REALTIME, abstime, &t));
}

HS_API int pthread_mutex_clocklock(pthread_mutex_t *mutex, clockid_t clock, const struct timespec *abstime)
{
    struct timespec t;
    return REAL(mutex_clocklock)(mutex, clock, on_real_clock(clock, abstime, &t));
}

HS_API int pthread_rwlock_timedrdlock(pthread_rwlock_t *lock, const struct timespec *abstime)
{
    struct timespec t;
    return REAL(rwlock_timedrdlock)(lock, on_real_clock(CLOCK_REALTIME, abstime, &t));
}

HS_API int pthread_rwlock_timedwrlock(pthread_rwlock_t *lock, const struct timespec *abstime)
{
    struct timespec t;
    return REAL(rwlock_timedwrlock)(lock, on_real_clock(CLOCK_REALTIME, abstime, &t));
}

HS_API int pthread_rwlock_clockrdlock(pthread_rwlock_t *lock, clockid_t clock, const struct timespec *abstime)
{
    struct timespec t;
    return REAL(rwlock_clockrdlock)(lock, clock, on_real_clock(clock, abstime, &t));
}

HS_API int pthread_rwlock_clockwrlock(pthread_rwlock_t *lock, clockid_t clock, const struct timespec *abstime)
{
    struct timespec t;
    return REAL(rwlock_clockwrlock)(lock, clock, on_real_clock(clock, abstime, &t));
}

/* libc's calls are looked up here, not lazily: dlsym may allocate, which a sanitizer's own threads must not see. */
__attribute__((constructor)) static void timed_waits_init(void) { resolve(); }
