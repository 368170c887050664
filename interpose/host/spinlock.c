/*
 * pthread_spin_lock and pthread_spin_unlock, wrapped: a thread that issued
 * GPU work and waits for a spin lock counts as waiting, as one blocked on a
 * mutex does (mutex.c says why: a holder that synchronises a stream or
 * sleeps while others wait for the lock would otherwise stall the run; a
 * spinning thread also burns the host's CPU the simulation needs).
 *
 * As mutex.c: a lock tries first (pthread_spin_trylock) and, when that
 * fails, blocks listed on the lock's address (core/host_waits.c,
 * hs_client_block_on_lock) instead of spinning; an unlock releases one
 * blocked thread after libc's unlock, while some thread is in that slow
 * path (g_contended, paired as mutex.c's). So under hysim a contended spin
 * lock sleeps instead of spinning; its semantics are the same.
 *
 * glibc keeps no trace of pthread_spin_init's pshared argument (a spin lock
 * is an int), so the locks initialised PTHREAD_PROCESS_SHARED are kept in
 * a map (a thread of another process may let them go unseen) and passed
 * straight through, as is everything without HYSIM_ENDPOINT.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include "host_sync.h"
#include "internal.h"
#include "threads.h"

typedef int (*spin_fn)(pthread_spinlock_t *);
typedef int (*spin_init_fn)(pthread_spinlock_t *, int);

static struct {
    spin_init_fn init;
    spin_fn destroy, lock, trylock, unlock;
} real; /* each read and written with atomics */

/* Threads in the slow path of a lock: an unlock looks for listed threads only when some are. */
static _Atomic unsigned g_contended;

static pthread_mutex_t g_shared_lock = PTHREAD_MUTEX_INITIALIZER;
static hs_ptrmap g_shared; /* pthread_spinlock_t * → 1: initialised PTHREAD_PROCESS_SHARED */
static _Atomic int g_any_shared;

#define STORE(field, type, name) __atomic_store_n(&real.field, (type)hs_next_symbol(name, NULL), __ATOMIC_RELEASE)

static void resolve(void)
{
    if (__atomic_load_n(&real.unlock, __ATOMIC_ACQUIRE))
        return;
    STORE(init, spin_init_fn, "pthread_spin_init");
    STORE(destroy, spin_fn, "pthread_spin_destroy");
    STORE(lock, spin_fn, "pthread_spin_lock");
    STORE(trylock, spin_fn, "pthread_spin_trylock");
    STORE(unlock, spin_fn, "pthread_spin_unlock"); /* last: resolve's test */
}

#define REAL(field) (resolve(), __atomic_load_n(&real.field, __ATOMIC_ACQUIRE))

static int shared_spin(pthread_spinlock_t *lock)
{
    if (!atomic_load(&g_any_shared))
        return 0;
    pthread_mutex_lock(&g_shared_lock);
    int shared = hs_ptrmap_get(&g_shared, (uintptr_t)lock) != 0;
    pthread_mutex_unlock(&g_shared_lock);
    return shared;
}

HS_API int pthread_spin_init(pthread_spinlock_t *lock, int pshared)
{
    int rc = REAL(init)(lock, pshared);
    if (rc == 0 && hs_clock_simulated()) {
        pthread_mutex_lock(&g_shared_lock);
        if (pshared == PTHREAD_PROCESS_SHARED) {
            hs_ptrmap_put(&g_shared, (uintptr_t)lock, 1);
            atomic_store(&g_any_shared, 1);
        } else {
            hs_ptrmap_del(&g_shared, (uintptr_t)lock);
        }
        pthread_mutex_unlock(&g_shared_lock);
    }
    return rc;
}

HS_API int pthread_spin_destroy(pthread_spinlock_t *lock)
{
    if (hs_clock_simulated() && atomic_load(&g_any_shared)) {
        pthread_mutex_lock(&g_shared_lock);
        hs_ptrmap_del(&g_shared, (uintptr_t)lock);
        pthread_mutex_unlock(&g_shared_lock);
    }
    return REAL(destroy)(lock);
}

/* The lock's address as the key its blocked threads are listed by (a spin lock is a volatile int). */
static void *key_of(pthread_spinlock_t *lock) { return (void *)(uintptr_t)lock; }

/* hs_client_block_on_lock's take: the lock, tried under the lock an unlock's release takes. */
static int try_under_lock(void *lock) { return REAL(trylock)((pthread_spinlock_t *)lock) == 0; }

HS_API int pthread_spin_lock(pthread_spinlock_t *lock)
{
    if (!hs_clock_simulated() || shared_spin(lock))
        return REAL(lock)(lock);
    if (REAL(trylock)(lock) == 0)
        return 0;
    atomic_fetch_add(&g_contended, 1); /* before the try under the lock: an unlock after it sees this */
    int blocked = hs_client_block_on_lock(key_of(lock), NULL, try_under_lock, key_of(lock));
    atomic_fetch_sub(&g_contended, 1);
    return blocked ? 0 : REAL(lock)(lock);
}

HS_API int pthread_spin_unlock(pthread_spinlock_t *lock)
{
    if (!hs_clock_simulated())
        return REAL(unlock)(lock);
    int counts = !shared_spin(lock); /* read while held: once let go it may be freed */
    int rc = REAL(unlock)(lock);
    if (hs_lock_release_due(rc, counts, &g_contended))
        hs_client_release(key_of(lock), 1);
    return rc;
}

/* A child forked while another thread held g_shared_lock would hang in its first spin lock call. */
static void atfork_prepare(void) { pthread_mutex_lock(&g_shared_lock); }
static void atfork_release(void) { pthread_mutex_unlock(&g_shared_lock); }

__attribute__((constructor)) static void spinlock_init(void)
{
    resolve();
    pthread_atfork(atfork_prepare, atfork_release, atfork_release);
}
