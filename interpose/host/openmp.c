/*
 * libgomp's team barriers and its pool threads between parallel regions, for
 * OpenMP threads that each drive a GPU: docs/client.md, "OpenMP".
 */
/* the program's pthread_mutex_lock / _unlock (mutex.c's), not libc's (interpose/CMakeLists.txt renames them) */
#undef pthread_mutex_lock
#undef pthread_mutex_unlock

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"
#include "threads.h"

typedef void (*region_fn)(void *);
typedef int (*team_size_fn)(void);
typedef int (*thread_num_fn)(void);
typedef void (*void_fn)(void);
typedef void (*critical_name_fn)(void **);
typedef void (*parallel_fn)(region_fn, void *, unsigned, unsigned);
typedef void (*parallel_sections_fn)(region_fn, void *, unsigned, unsigned, unsigned);
typedef void (*parallel_loop_fn)(region_fn, void *, unsigned, long, long, long, long, unsigned);
typedef void (*parallel_loop_runtime_fn)(region_fn, void *, unsigned, long, long, long, unsigned);

/* A parallel region that began through the entries below: its team's threads block on its address. */
typedef struct omp_region {
    region_fn fn;
    void *data;
} omp_region;

static __thread omp_region *t_region; /* the innermost such region the calling thread runs in */

/* libgomp's function `name` (default version), looked up once into *cache; NULL if the program has no libgomp. */
static void *gomp_cached(void **cache, const char *name)
{
    void *p = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (!p) {
        p = hs_next_symbol(name, NULL);
        __atomic_store_n(cache, p, __ATOMIC_RELEASE);
    }
    return p;
}
/* Declares `type var`, libgomp's function name, looked up once per call site. */
#define GOMP_FN(type, var, name) \
    static void *var##_cache;    \
    type var = (type)gomp_cached(&var##_cache, name)

/* The calling thread's team size (omp_get_num_threads; 1 outside a region). */
static unsigned team_size(void)
{
    GOMP_FN(team_size_fn, size, "omp_get_num_threads");
    int n = size ? size() : 1;
    return n > 0 ? (unsigned)n : 1;
}

/* One team barrier of region r: listed as blocked on r until the last of the team arrives, then `real`. */
static void team_barrier(omp_region *r, void (*real)(void))
{
    hs_parked p;
    hs_client_park(&p, r, team_size(), NULL, NULL); /* the last to arrive releases the others instead */
    real();
    hs_client_unpark(&p);
}

static void real_barrier(void)
{
    GOMP_FN(void_fn, f, "GOMP_barrier");
    if (f)
        f();
}

/*
 * What each thread of a wrapped region runs: the region's function, then the
 * region's end barrier. A thread of the team other than the one that began
 * the region was idle in libgomp's pool until now (spinning, then blocked),
 * not computing.
 */
/*
 * Between regions libgomp keeps its pool's threads docked in a futex wait of
 * its own, which nothing sees: such a thread is listed as blocked on the
 * dock once its region ends (a pool thread never issues work outside one),
 * and the thread that begins the next region counts as many as its team
 * needs in as running before libgomp wakes them.
 */
static char g_dock;
static __thread hs_parked t_docked;
static __thread int t_is_docked;

static void run_region(void *arg)
{
    omp_region *r = arg;
    GOMP_FN(thread_num_fn, thread_num, "omp_get_thread_num");
    int worker = thread_num && thread_num() != 0;
    if (t_is_docked) {
        hs_client_unpark(&t_docked);
        t_is_docked = 0;
    }
    if (worker)
        hs_clock_thread_was_idle();
    omp_region *outer = t_region;
    t_region = r;
    r->fn(r->data);
    team_barrier(r, real_barrier);
    t_region = outer;
    if (worker && !outer)
        t_is_docked = hs_client_park(&t_docked, &g_dock, 0, NULL, NULL);
}

/* The thread that begins a region of num_threads (0: the default) counts its docked workers in. */
static void undock_team(unsigned num_threads)
{
    GOMP_FN(team_size_fn, max_threads, "omp_get_max_threads");
    unsigned team = num_threads ? num_threads : max_threads ? (unsigned)max_threads() : 1;
    if (team > 1)
        hs_client_release(&g_dock, team - 1);
}

/* Whether these entries do hysim's part (under hysim), or only call libgomp's. */
static bool wraps(void) { return hs_clock_simulated(); }

#define REAL_OR_RETURN(type, name, ...) \
    GOMP_FN(type, real_, name);         \
    if (!real_)                         \
        return;                         \
    if (!wraps()) {                     \
        real_(__VA_ARGS__);             \
        return;                         \
    }

HS_API void GOMP_parallel(region_fn fn, void *data, unsigned num_threads, unsigned flags)
{
    REAL_OR_RETURN(parallel_fn, "GOMP_parallel", fn, data, num_threads, flags)
    omp_region r = {fn, data};
    undock_team(num_threads);
    real_(run_region, &r, num_threads, flags);
}

HS_API void GOMP_parallel_sections(region_fn fn, void *data, unsigned num_threads, unsigned count, unsigned flags)
{
    REAL_OR_RETURN(parallel_sections_fn, "GOMP_parallel_sections", fn, data, num_threads, count, flags)
    omp_region r = {fn, data};
    undock_team(num_threads);
    real_(run_region, &r, num_threads, count, flags);
}

/* The combined `parallel for` entries with a chunk size: one per schedule. */
#define PARALLEL_LOOP(name)                                                                                            \
    HS_API void name(region_fn fn, void *data, unsigned num_threads, long start, long end, long incr, long chunk_size, \
                     unsigned flags)                                                                                   \
    {                                                                                                                  \
        REAL_OR_RETURN(parallel_loop_fn, #name, fn, data, num_threads, start, end, incr, chunk_size, flags)            \
        omp_region r = {fn, data};                                                                                     \
        undock_team(num_threads);                                                                                      \
        real_(run_region, &r, num_threads, start, end, incr, chunk_size, flags);                                       \
    }
PARALLEL_LOOP(GOMP_parallel_loop_static)
PARALLEL_LOOP(GOMP_parallel_loop_dynamic)
PARALLEL_LOOP(GOMP_parallel_loop_guided)

HS_API void GOMP_parallel_loop_runtime(region_fn fn, void *data, unsigned num_threads, long start, long end, long incr,
                                       unsigned flags)
{
    REAL_OR_RETURN(parallel_loop_runtime_fn, "GOMP_parallel_loop_runtime", fn, data, num_threads, start, end, incr,
                   flags)
    omp_region r = {fn, data};
    undock_team(num_threads);
    real_(run_region, &r, num_threads, start, end, incr, flags);
}

/* The barriers inside a region: GOMP_barrier, and those ending a loop or sections construct. */
#define TEAM_BARRIER(name)                 \
    HS_API void name(void)                 \
    {                                      \
        GOMP_FN(void_fn, real_, #name);    \
        if (!real_)                        \
            return;                        \
        if (!wraps() || !t_region)         \
            real_();                       \
        else                               \
            team_barrier(t_region, real_); \
    }
TEAM_BARRIER(GOMP_barrier)
TEAM_BARRIER(GOMP_loop_end)
TEAM_BARRIER(GOMP_sections_end)

/* ---- critical sections ---- */

static pthread_mutex_t g_critical = PTHREAD_MUTEX_INITIALIZER; /* the unnamed critical section's */

/* A named critical section's mutex, made on first use in the slot the compiler gives the name. */
static pthread_mutex_t *named_critical(void **slot)
{
    pthread_mutex_t *m = __atomic_load_n((pthread_mutex_t **)slot, __ATOMIC_ACQUIRE);
    if (m)
        return m;
    pthread_mutex_t *made = malloc(sizeof *made);
    if (!made)
        abort();
    pthread_mutex_init(made, NULL);
    void *none = NULL;
    if (__atomic_compare_exchange_n(slot, &none, made, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return made;
    pthread_mutex_destroy(made); /* another thread made it first */
    free(made);
    return none;
}

HS_API void GOMP_critical_start(void)
{
    if (wraps()) {
        pthread_mutex_lock(&g_critical);
        return;
    }
    GOMP_FN(void_fn, real_, "GOMP_critical_start");
    if (real_)
        real_();
}

HS_API void GOMP_critical_end(void)
{
    if (wraps()) {
        pthread_mutex_unlock(&g_critical);
        return;
    }
    GOMP_FN(void_fn, real_, "GOMP_critical_end");
    if (real_)
        real_();
}

HS_API void GOMP_critical_name_start(void **slot)
{
    if (wraps()) {
        pthread_mutex_lock(named_critical(slot));
        return;
    }
    GOMP_FN(critical_name_fn, real_, "GOMP_critical_name_start");
    if (real_)
        real_(slot);
}

HS_API void GOMP_critical_name_end(void **slot)
{
    if (wraps()) {
        pthread_mutex_unlock(named_critical(slot));
        return;
    }
    GOMP_FN(critical_name_fn, real_, "GOMP_critical_name_end");
    if (real_)
        real_(slot);
}

/* ---- locks (omp_lock_t, omp_nest_lock_t) ---- */

/*
 * An OpenMP lock under hysim: libgomp's is a futex word in the program's
 * omp_lock_t (4 bytes, too small for a mutex), so each lock gets a mutex of
 * its own, found by the lock's address, locked through mutex.c as critical
 * sections are. A nestable lock counts its owner's nesting itself.
 */
typedef struct omp_lock_state {
    pthread_mutex_t mutex;
    pthread_t owner; /* nestable: the thread that holds it, while depth > 0 */
    int depth;       /* nestable: how many times its owner has set it */
} omp_lock_state;

static pthread_mutex_t g_locks_lock = PTHREAD_MUTEX_INITIALIZER; /* hysim's own: locked with libc's calls */
static hs_ptrmap g_locks;                                        /* omp_lock_t * → omp_lock_state * */

/* The state of the lock at `lock`, made on first use if the program did not initialise it here. */
static omp_lock_state *lock_state(void *lock)
{
    hs_client_own_mutex_lock(&g_locks_lock);
    omp_lock_state *s = (omp_lock_state *)hs_ptrmap_get(&g_locks, (uintptr_t)lock);
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s)
            abort();
        pthread_mutex_init(&s->mutex, NULL);
        hs_ptrmap_put(&g_locks, (uintptr_t)lock, (uintptr_t)s);
    }
    hs_client_own_mutex_unlock(&g_locks_lock);
    return s;
}

static void forget_lock(void *lock)
{
    hs_client_own_mutex_lock(&g_locks_lock);
    omp_lock_state *s = (omp_lock_state *)hs_ptrmap_del(&g_locks, (uintptr_t)lock);
    hs_client_own_mutex_unlock(&g_locks_lock);
    if (s) {
        pthread_mutex_destroy(&s->mutex);
        free(s);
    }
}

typedef void (*lock_fn)(void *);
typedef int (*test_lock_fn)(void *);
typedef void (*init_hint_fn)(void *, int);

/* A lock routine: ours under hysim, else libgomp's. */
#define LOCK_ROUTINE(name, ours)        \
    HS_API void name(void *lock)        \
    {                                   \
        if (wraps()) {                  \
            ours;                       \
            return;                     \
        }                               \
        GOMP_FN(lock_fn, real_, #name); \
        if (real_)                      \
            real_(lock);                \
    }
LOCK_ROUTINE(omp_init_lock, forget_lock(lock); lock_state(lock))
LOCK_ROUTINE(omp_init_nest_lock, forget_lock(lock); lock_state(lock))
LOCK_ROUTINE(omp_destroy_lock, forget_lock(lock))
LOCK_ROUTINE(omp_destroy_nest_lock, forget_lock(lock))
LOCK_ROUTINE(omp_set_lock, pthread_mutex_lock(&lock_state(lock)->mutex))
LOCK_ROUTINE(omp_unset_lock, pthread_mutex_unlock(&lock_state(lock)->mutex))

/* Whether the calling thread holds nestable lock s (only its owner can find itself there). */
static bool holds_nest(omp_lock_state *s)
{
    return __atomic_load_n(&s->depth, __ATOMIC_RELAXED) > 0 &&
           pthread_equal(__atomic_load_n(&s->owner, __ATOMIC_RELAXED), pthread_self());
}

/* s just taken by the calling thread, once. */
static int own_nest(omp_lock_state *s)
{
    __atomic_store_n(&s->owner, pthread_self(), __ATOMIC_RELAXED);
    __atomic_store_n(&s->depth, 1, __ATOMIC_RELAXED);
    return 1;
}

static void set_nest(omp_lock_state *s)
{
    if (holds_nest(s)) {
        __atomic_store_n(&s->depth, s->depth + 1, __ATOMIC_RELAXED);
        return;
    }
    pthread_mutex_lock(&s->mutex);
    own_nest(s);
}

static void unset_nest(omp_lock_state *s)
{
    int depth = s->depth - 1;
    __atomic_store_n(&s->depth, depth, __ATOMIC_RELAXED);
    if (depth == 0)
        pthread_mutex_unlock(&s->mutex);
}

LOCK_ROUTINE(omp_set_nest_lock, set_nest(lock_state(lock)))
LOCK_ROUTINE(omp_unset_nest_lock, unset_nest(lock_state(lock)))

HS_API int omp_test_lock(void *lock)
{
    if (wraps())
        return pthread_mutex_trylock(&lock_state(lock)->mutex) == 0;
    GOMP_FN(test_lock_fn, real_, "omp_test_lock");
    return real_ ? real_(lock) : 0;
}

HS_API int omp_test_nest_lock(void *lock)
{
    if (wraps()) {
        omp_lock_state *s = lock_state(lock);
        if (holds_nest(s)) {
            __atomic_store_n(&s->depth, s->depth + 1, __ATOMIC_RELAXED);
            return s->depth;
        }
        return pthread_mutex_trylock(&s->mutex) == 0 ? own_nest(s) : 0;
    }
    GOMP_FN(test_lock_fn, real_, "omp_test_nest_lock");
    return real_ ? real_(lock) : 0;
}

/* OpenMP 4.5's initialisers with a hint: the hint changes nothing here. */
#define INIT_WITH_HINT(name)                 \
    HS_API void name(void *lock, int hint)   \
    {                                        \
        if (wraps()) {                       \
            forget_lock(lock);               \
            lock_state(lock);                \
            return;                          \
        }                                    \
        GOMP_FN(init_hint_fn, real_, #name); \
        if (real_)                           \
            real_(lock, hint);               \
    }
INIT_WITH_HINT(omp_init_lock_with_hint)
INIT_WITH_HINT(omp_init_nest_lock_with_hint)
