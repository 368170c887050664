/*
 * OpenMP's team barriers (GCC's libgomp), seen by hysim: a parallel
 * region's explicit barriers (GOMP_barrier), the barriers that end a
 * worksharing loop or sections construct (GOMP_loop_end, GOMP_sections_end)
 * and the implicit barrier at the region's end.
 *
 * libgomp blocks its threads on futexes it calls itself, which nothing
 * interposes: a thread that issued GPU work and waited in a team barrier
 * counted as running, so hysimd could not pass the process's host time, and
 * one thread per GPU that synchronised its stream and then met the others
 * at a barrier (the thread that finished first waiting for the others'
 * GPUs) stalled every time. As host_sync.c does for pthread barriers, each
 * arrival is listed as blocked on the region (a key of its own per region),
 * the last of the team to arrive releases the others, and then libgomp's
 * own barrier runs as ever. The region's end barrier is one more such
 * barrier that the region's function runs before it returns to libgomp
 * (GOMP_parallel and the combined parallel loop and sections entries wrap
 * the function); libgomp's own end barrier then finds its team already
 * there.
 *
 * Critical sections (GOMP_critical_start / _end, and the named ones) are
 * taken over: under hysim they lock a pthread mutex of their own, through
 * mutex.c's pthread_mutex_lock, so that a thread that holds one across a
 * GPU wait while others wait to enter does not hold the simulation back
 * (libgomp's own lock is never used then; only compiled programs call these).
 *
 * Exported unversioned, so that with LD_PRELOAD=libhysim.so they satisfy
 * the program's versioned references (GOMP_parallel@GOMP_4.0, ...); libgomp's
 * own are found by dlsym once a program calls them (libhysim.so does not
 * link libgomp: a program without OpenMP never calls these). Without
 * HYSIM_ENDPOINT, outside a region that began through these entries, and for
 * the entries not wrapped (omp_set_lock and the other lock routines, atomic
 * sections, the cancellable barriers, tasks, the pre-4.0
 * GOMP_parallel_start / _end), libgomp's calls run as they are: their
 * threads count as running while they wait.
 */
/* the program's pthread_mutex_lock / _unlock (mutex.c's), not libc's (interpose/CMakeLists.txt renames them) */
#undef pthread_mutex_lock
#undef pthread_mutex_unlock

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
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
static void *gomp_cached(void **cache, const char *name) {
    void *p = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (!p) {
        p = hs_next_symbol(name, NULL);
        __atomic_store_n(cache, p, __ATOMIC_RELEASE);
    }
    return p;
}
/* Declares `type var`, libgomp's function name, looked up once per call site. */
#define GOMP_FN(type, var, name)                                                                             \
    static void *var##_cache;                                                                                \
    type var = (type)gomp_cached(&var##_cache, name)

/* The calling thread's team size (omp_get_num_threads; 1 outside a region). */
static unsigned team_size(void) {
    GOMP_FN(team_size_fn, size, "omp_get_num_threads");
    int n = size ? size() : 1;
    return n > 0 ? (unsigned)n : 1;
}

/* One team barrier of region r: listed as blocked on r until the last of the team arrives, then `real`. */
static void team_barrier(omp_region *r, void (*real)(void)) {
    hs_parked p;
    hs_client_park(&p, r, team_size(), NULL, NULL); /* the last to arrive releases the others instead */
    real();
    hs_client_unpark(&p);
}

static void real_barrier(void) {
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
static void run_region(void *arg) {
    omp_region *r = arg;
    GOMP_FN(thread_num_fn, thread_num, "omp_get_thread_num");
    if (thread_num && thread_num() != 0)
        hs_clock_thread_was_idle();
    omp_region *outer = t_region;
    t_region = r;
    r->fn(r->data);
    team_barrier(r, real_barrier);
    t_region = outer;
}

/* Whether the calls of a region should be seen: under hysim, with libgomp there. */
static bool wraps(void) { return hs_clock_simulated(); }

#define REAL_OR_RETURN(type, name, ...)                                                                     \
    GOMP_FN(type, real_, name);                                                                             \
    if (!real_)                                                                                             \
        return;                                                                                             \
    if (!wraps()) {                                                                                         \
        real_(__VA_ARGS__);                                                                                 \
        return;                                                                                             \
    }

HS_API void GOMP_parallel(region_fn fn, void *data, unsigned num_threads, unsigned flags) {
    REAL_OR_RETURN(parallel_fn, "GOMP_parallel", fn, data, num_threads, flags)
    omp_region r = {fn, data};
    real_(run_region, &r, num_threads, flags);
}

HS_API void GOMP_parallel_sections(region_fn fn, void *data, unsigned num_threads, unsigned count,
                                   unsigned flags) {
    REAL_OR_RETURN(parallel_sections_fn, "GOMP_parallel_sections", fn, data, num_threads, count, flags)
    omp_region r = {fn, data};
    real_(run_region, &r, num_threads, count, flags);
}

/* The combined `parallel for` entries with a chunk size: one per schedule. */
#define PARALLEL_LOOP(name)                                                                                  \
    HS_API void name(region_fn fn, void *data, unsigned num_threads, long start, long end, long incr,         \
                     long chunk_size, unsigned flags) {                                                      \
        REAL_OR_RETURN(parallel_loop_fn, #name, fn, data, num_threads, start, end, incr, chunk_size, flags)  \
        omp_region r = {fn, data};                                                                     \
        real_(run_region, &r, num_threads, start, end, incr, chunk_size, flags);                             \
    }
PARALLEL_LOOP(GOMP_parallel_loop_static)
PARALLEL_LOOP(GOMP_parallel_loop_dynamic)
PARALLEL_LOOP(GOMP_parallel_loop_guided)

HS_API void GOMP_parallel_loop_runtime(region_fn fn, void *data, unsigned num_threads, long start, long end,
                                       long incr, unsigned flags) {
    REAL_OR_RETURN(parallel_loop_runtime_fn, "GOMP_parallel_loop_runtime", fn, data, num_threads, start, end, incr,
                   flags)
    omp_region r = {fn, data};
    real_(run_region, &r, num_threads, start, end, incr, flags);
}

/* The barriers inside a region: GOMP_barrier, and those ending a loop or sections construct. */
#define TEAM_BARRIER(name)                                                                                   \
    HS_API void name(void) {                                                                                 \
        GOMP_FN(void_fn, real_, #name);                                                                   \
        if (!real_)                                                                                          \
            return;                                                                                          \
        if (!wraps() || !t_region)                                                                           \
            real_();                                                                                         \
        else                                                                                                 \
            team_barrier(t_region, real_);                                                                   \
    }
TEAM_BARRIER(GOMP_barrier)
TEAM_BARRIER(GOMP_loop_end)
TEAM_BARRIER(GOMP_sections_end)

/* ---- critical sections ---- */

static pthread_mutex_t g_critical = PTHREAD_MUTEX_INITIALIZER; /* the unnamed critical section's */

/* A named critical section's mutex, made on first use in the slot the compiler gives the name. */
static pthread_mutex_t *named_critical(void **slot) {
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

HS_API void GOMP_critical_start(void) {
    if (wraps()) {
        pthread_mutex_lock(&g_critical);
        return;
    }
    GOMP_FN(void_fn, real_, "GOMP_critical_start");
    if (real_)
        real_();
}

HS_API void GOMP_critical_end(void) {
    if (wraps()) {
        pthread_mutex_unlock(&g_critical);
        return;
    }
    GOMP_FN(void_fn, real_, "GOMP_critical_end");
    if (real_)
        real_();
}

HS_API void GOMP_critical_name_start(void **slot) {
    if (wraps()) {
        pthread_mutex_lock(named_critical(slot));
        return;
    }
    GOMP_FN(critical_name_fn, real_, "GOMP_critical_name_start");
    if (real_)
        real_(slot);
}

HS_API void GOMP_critical_name_end(void **slot) {
    if (wraps()) {
        pthread_mutex_unlock(named_critical(slot));
        return;
    }
    GOMP_FN(critical_name_fn, real_, "GOMP_critical_name_end");
    if (real_)
        real_(slot);
}
