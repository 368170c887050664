/*
 * Threads that issued GPU work blocking in pthread_mutex_lock (and so C++
 * std::mutex::lock) under hysim (interpose/host/mutex.c), and on rwlocks
 * (rwlock.c): NT threads, one GPU each, every kernel K_NS long
 * (barrier_gpus.yaml, host time zero).
 *
 *   mutexes held    each thread, ITERS times, takes one mutex, launches
 *                   g + 1 kernels on its GPU, synchronises its stream and
 *                   lets the mutex go: the thread that holds it waits in the
 *                   simulator while the others block on it. Which thread
 *                   takes it when is up to the machine's scheduler, so the
 *                   checks are what holds in any order: every critical
 *                   section lasts its own kernels, no two overlap, and the
 *                   last ends once every kernel has run, the sum of them all.
 *                   Before the wrapping, the blocked threads counted as
 *                   running and held the simulation at the host clock, and
 *                   the stall watchdog ended the run.
 *   mutexes sleeping as held, but the holder sleeps its g + 1 kernels' time
 *                   (usleep, simulated) instead of running kernels: before,
 *                   the blocked threads held the simulation back from the
 *                   sleep's end as they held it from the kernels'.
 *   mutexes handover thread A holds a mutex and waits on a condition variable
 *                   with it (libc lets the mutex go inside the wait, where
 *                   no wrapper sees it) while thread B is blocked on the
 *                   mutex, and thread C starts five kernels and waits for
 *                   them as A begins to wait: B must take the mutex at the
 *                   simulated time A began to wait, not once C's kernels
 *                   are done.
 *   mutexes spin     as held, on a pthread spin lock (whose waiters spun,
 *                   counted as running, and stalled the run).
 *   mutexes rwlock   as held, on a rwlock (so std::shared_mutex): GPUs 0 and 1
 *                   take it for reading, GPU 2 for writing; every section
 *                   lasts its kernels and no writer's overlaps another
 *                   section (readers' may overlap each other).
 *   mutexes quiet   a thread that never touches the GPU holds the mutex for
 *                   50 ms of real time while the main thread, which has
 *                   issued work, blocks on it: the holder runs, so the main
 *                   thread counts as running too, and its clock has not
 *                   moved when it takes the mutex.
 *   mutexes kinds   recursive, error-checking and robust mutexes keep their
 *                   errors under contention: EDEADLK for an error-checking
 *                   mutex locked again by its owner, EOWNERDEAD for a robust
 *                   one whose owner died holding it while this thread
 *                   waited, a recursive one taken twice while another
 *                   thread waits for it.
 * Each prints "mutexes MODE done".
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "test_check.h"
#include "gpu_thread_kit.h"
#include "real_sleep.h"

#define NT    3
#define ITERS 4
#define K_NS  1000000ll /* barrier_gpus.yaml's kernel */

static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static int g_sleep; /* held sleeping: the holder sleeps its section instead of running kernels */
static pthread_barrier_t g_start;

typedef struct section {
    long long from, to; /* host clock when the mutex was taken, when the sync returned */
    int gpu;
} section;
static section g_sections[NT * ITERS];
static int g_nsections;

/* A stream of the current GPU on which one kernel has run: the calling thread has issued GPU work. */
static cudaStream_t worked_stream(void)
{
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s) == cudaSuccess, "cudaStreamCreate");
    launch(s, 1);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
    return s;
}

/* GPU g's thread: one kernel issued before any thread waits (at barrier), and run once all have arrived. */
static cudaStream_t met_stream(int g, pthread_barrier_t *barrier)
{
    cudaStream_t s;
    CHECK(cudaSetDevice(g) == cudaSuccess, "cudaSetDevice");
    CHECK(cudaStreamCreate(&s) == cudaSuccess, "cudaStreamCreate");
    launch(s, 1);
    pthread_barrier_wait(barrier);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
    return s;
}

static pthread_rwlock_t g_rwlock = PTHREAD_RWLOCK_INITIALIZER;
static int g_rw; /* held on g_rwlock: GPU NT - 1 writes, the others read */
static pthread_spinlock_t g_spinlock;
static int g_spin; /* held on g_spinlock */

static void take(int g)
{
    if (g_spin)
        CHECK(pthread_spin_lock(&g_spinlock) == 0, "pthread_spin_lock");
    else if (!g_rw)
        CHECK(pthread_mutex_lock(&g_mutex) == 0, "pthread_mutex_lock");
    else if (g == NT - 1)
        CHECK(pthread_rwlock_wrlock(&g_rwlock) == 0, "pthread_rwlock_wrlock");
    else
        CHECK(pthread_rwlock_rdlock(&g_rwlock) == 0, "pthread_rwlock_rdlock");
}

static void let_go(void)
{
    if (g_spin)
        CHECK(pthread_spin_unlock(&g_spinlock) == 0, "pthread_spin_unlock");
    else if (g_rw)
        CHECK(pthread_rwlock_unlock(&g_rwlock) == 0, "pthread_rwlock_unlock");
    else
        CHECK(pthread_mutex_unlock(&g_mutex) == 0, "pthread_mutex_unlock");
}

static void *held_worker(void *arg)
{
    int g = (int)(long)arg;
    cudaStream_t s = met_stream(g, &g_start);
    for (int i = 0; i < ITERS; i++) {
        take(g);
        long long from = now_ns();
        if (g_sleep) {
            CHECK(usleep((useconds_t)(g + 1) * K_NS / 1000) == 0, "usleep");
        } else {
            launch(s, g + 1);
            CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
        }
        section *sec = &g_sections[__atomic_fetch_add(&g_nsections, 1, __ATOMIC_RELAXED)]; /* readers share */
        sec->from = from;
        sec->to = now_ns();
        sec->gpu = g;
        let_go();
    }
    CHECK(cudaStreamDestroy(s) == cudaSuccess, "cudaStreamDestroy");
    return NULL;
}

static int by_start(const void *a, const void *b)
{
    const section *x = a, *y = b;
    return (x->from > y->from) - (x->from < y->from);
}

static void run_held(void)
{
    pthread_t t[NT];
    CHECK(pthread_barrier_init(&g_start, NULL, NT) == 0, "pthread_barrier_init");
    long long t0 = now_ns() + K_NS; /* after every thread's first kernel */
    for (long g = 0; g < NT; g++)
        CHECK(pthread_create(&t[g], NULL, held_worker, (void *)g) == 0, "pthread_create");
    for (int g = 0; g < NT; g++)
        CHECK(pthread_join(t[g], NULL) == 0, "pthread_join");
    CHECK(g_nsections == NT * ITERS, "%d sections", g_nsections);
    qsort(g_sections, NT * ITERS, sizeof *g_sections, by_start);
    long long end = t0;
    for (int i = 0; i < NT * ITERS; i++) {
        section *sec = &g_sections[i];
        CHECK(sec->to - sec->from == (sec->gpu + 1) * K_NS, "gpu %d's section lasted %lld ns, not %lld", sec->gpu,
              sec->to - sec->from, (sec->gpu + 1) * K_NS);
        for (int j = 0; g_rw && j < NT * ITERS; j++) { /* a writer's section overlaps none */
            section *o = &g_sections[j];
            int writer = sec->gpu == NT - 1 || o->gpu == NT - 1;
            CHECK(j == i || !writer || o->to <= sec->from || o->from >= sec->to,
                  "gpu %d's section [+%lld, +%lld] overlaps gpu %d's [+%lld, +%lld]", sec->gpu, sec->from - t0,
                  sec->to - t0, o->gpu, o->from - t0, o->to - t0);
        }
        if (g_rw) {
            end = sec->to > end ? sec->to : end;
            continue;
        }
        CHECK(sec->from >= end, "a section began at +%lld ns, before the one before ended (+%lld)", sec->from - t0,
              end - t0);
        end = sec->to;
    }
    if (g_rw) { /* which readers overlap is the scheduler's choice: no total to check */
        printf("rwlock: %d sections, no writer's overlapping another\n", NT * ITERS);
        CHECK(pthread_barrier_destroy(&g_start) == 0, "pthread_barrier_destroy");
        return;
    }
    long long all = (long long)ITERS * NT * (NT + 1) / 2 * K_NS;
    printf("%s: %d sections, the last ended at +%lld ns (all of them: %lld)\n",
           g_sleep  ? "sleeping"
           : g_spin ? "spin"
                    : "held",
           NT * ITERS, end - t0, all);
    CHECK(end - t0 == all, "the sections ended at +%lld ns, not +%lld", end - t0, all);
    CHECK(pthread_barrier_destroy(&g_start) == 0, "pthread_barrier_destroy");
}

static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t g_three;
static sem_t g_a_holds, g_c_go;
static int g_flag;
static long long g_a_waits, g_b_takes, g_c_done;

static void *handover_worker(void *arg)
{
    int g = (int)(long)arg;
    cudaStream_t s = met_stream(g, &g_three);
    if (g == 0) { /* A */
        CHECK(pthread_mutex_lock(&g_mutex) == 0, "pthread_mutex_lock");
        CHECK(sem_post(&g_a_holds) == 0, "sem_post");
        real_sleep_us(20000); /* B blocks on the mutex meanwhile */
        g_a_waits = now_ns();
        CHECK(sem_post(&g_c_go) == 0, "sem_post"); /* C's kernels begin as A waits */
        while (!g_flag)
            CHECK(pthread_cond_wait(&g_cv, &g_mutex) == 0, "pthread_cond_wait");
        CHECK(pthread_mutex_unlock(&g_mutex) == 0, "pthread_mutex_unlock");
    } else if (g == 1) {                  /* B */
        while (sem_wait(&g_a_holds) != 0) /* a wait hysim sees: a poll would hold the simulation at B's clock */
            CHECK(errno == EINTR, "sem_wait");
        CHECK(pthread_mutex_lock(&g_mutex) == 0, "pthread_mutex_lock");
        g_b_takes = now_ns();
        g_flag = 1;
        CHECK(pthread_cond_signal(&g_cv) == 0, "pthread_cond_signal");
        CHECK(pthread_mutex_unlock(&g_mutex) == 0, "pthread_mutex_unlock");
    } else { /* C */
        while (sem_wait(&g_c_go) != 0)
            CHECK(errno == EINTR, "sem_wait");
        launch(s, 5);
        CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
        g_c_done = now_ns();
    }
    CHECK(cudaStreamDestroy(s) == cudaSuccess, "cudaStreamDestroy");
    return NULL;
}

static void run_handover(void)
{
    pthread_t t[3];
    CHECK(pthread_barrier_init(&g_three, NULL, 3) == 0 && sem_init(&g_a_holds, 0, 0) == 0 &&
              sem_init(&g_c_go, 0, 0) == 0,
          "init");
    for (long g = 0; g < 3; g++)
        CHECK(pthread_create(&t[g], NULL, handover_worker, (void *)g) == 0, "pthread_create");
    for (int g = 0; g < 3; g++)
        CHECK(pthread_join(t[g], NULL) == 0, "pthread_join");
    printf("handover: A waited at +%lld ns, B took the mutex at +%lld ns, C's kernels ended at +%lld ns\n",
           g_a_waits - K_NS, g_b_takes - K_NS, g_c_done - K_NS);
    CHECK(g_b_takes == g_a_waits, "B took the mutex %lld ns after A began to wait", g_b_takes - g_a_waits);
    CHECK(g_c_done - g_a_waits == 5 * K_NS, "C's kernels");
}

static volatile int g_quiet_holds;

static void *quiet_holder(void *arg)
{
    (void)arg;
    CHECK(pthread_mutex_lock(&g_mutex) == 0, "pthread_mutex_lock");
    __atomic_store_n(&g_quiet_holds, 1, __ATOMIC_RELEASE);
    real_sleep_us(50000);
    CHECK(pthread_mutex_unlock(&g_mutex) == 0, "pthread_mutex_unlock");
    return NULL;
}

static void run_quiet(void)
{
    cudaStream_t s = worked_stream();
    long long before = now_ns();
    pthread_t t;
    CHECK(pthread_create(&t, NULL, quiet_holder, NULL) == 0, "pthread_create");
    while (!__atomic_load_n(&g_quiet_holds, __ATOMIC_ACQUIRE))
        real_sleep_us(1000);
    CHECK(pthread_mutex_lock(&g_mutex) == 0, "pthread_mutex_lock");
    long long after = now_ns();
    CHECK(pthread_mutex_unlock(&g_mutex) == 0, "pthread_mutex_unlock");
    CHECK(pthread_join(t, NULL) == 0, "pthread_join");
    printf("quiet: the clock moved %lld ns while the main thread waited\n", after - before);
    CHECK(after == before, "the clock moved while a thread without GPU work held the mutex");
    launch(s, 1);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
    CHECK(now_ns() - after == K_NS, "a kernel afterwards");
    CHECK(cudaStreamDestroy(s) == cudaSuccess, "cudaStreamDestroy");
}

static pthread_mutex_t g_kind;
static volatile int g_kind_step;

/* Takes g_kind, waits for the main thread to block on it, then lets it go (or dies holding it: die != 0). */
static void *kind_holder(void *arg)
{
    int die = (int)(long)arg;
    CHECK(pthread_mutex_lock(&g_kind) == 0, "pthread_mutex_lock");
    __atomic_store_n(&g_kind_step, 1, __ATOMIC_RELEASE);
    real_sleep_us(20000); /* the main thread blocks meanwhile */
    if (!die)
        CHECK(pthread_mutex_unlock(&g_kind) == 0, "pthread_mutex_unlock");
    return NULL;
}

/* The main thread blocks on g_kind (of type type, robust or not) while kind_holder holds it; returns the lock's result. */
static int contended_lock(int type, int robust, int die)
{
    pthread_mutexattr_t a;
    CHECK(pthread_mutexattr_init(&a) == 0, "pthread_mutexattr_init");
    CHECK(pthread_mutexattr_settype(&a, type) == 0, "pthread_mutexattr_settype");
    if (robust)
        CHECK(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST) == 0, "pthread_mutexattr_setrobust");
    CHECK(pthread_mutex_init(&g_kind, &a) == 0, "pthread_mutex_init");
    pthread_mutexattr_destroy(&a);
    g_kind_step = 0;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, kind_holder, (void *)(long)die) == 0, "pthread_create");
    while (!__atomic_load_n(&g_kind_step, __ATOMIC_ACQUIRE))
        real_sleep_us(1000);
    int rc = pthread_mutex_lock(&g_kind);
    CHECK(pthread_join(t, NULL) == 0, "pthread_join");
    return rc;
}

static void run_kinds(void)
{
    cudaStream_t s = worked_stream();
    /* error-checking: taken after the wait, then EDEADLK for its owner */
    CHECK(contended_lock(PTHREAD_MUTEX_ERRORCHECK, 0, 0) == 0, "an error-checking mutex after a wait");
    CHECK(pthread_mutex_lock(&g_kind) == EDEADLK, "an error-checking mutex locked again by its owner");
    CHECK(pthread_mutex_unlock(&g_kind) == 0 && pthread_mutex_unlock(&g_kind) == EPERM, "unlocking it");
    CHECK(pthread_mutex_destroy(&g_kind) == 0, "pthread_mutex_destroy");
    /* recursive: taken after the wait, then again by its owner */
    CHECK(contended_lock(PTHREAD_MUTEX_RECURSIVE, 0, 0) == 0, "a recursive mutex after a wait");
    CHECK(pthread_mutex_lock(&g_kind) == 0, "a recursive mutex locked again by its owner");
    CHECK(pthread_mutex_unlock(&g_kind) == 0 && pthread_mutex_unlock(&g_kind) == 0, "unlocking it twice");
    CHECK(pthread_mutex_destroy(&g_kind) == 0, "pthread_mutex_destroy");
    /* robust: its owner exits holding it while this thread waits */
    CHECK(contended_lock(PTHREAD_MUTEX_NORMAL, 1, 1) == EOWNERDEAD, "a robust mutex whose owner died");
    CHECK(pthread_mutex_consistent(&g_kind) == 0 && pthread_mutex_unlock(&g_kind) == 0, "making it consistent");
    CHECK(pthread_mutex_destroy(&g_kind) == 0, "pthread_mutex_destroy");
    launch(s, 1);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
    CHECK(cudaStreamDestroy(s) == cudaSuccess, "cudaStreamDestroy");
    printf("kinds: EDEADLK, recursion and EOWNERDEAD as without hysim\n");
}

int main(int argc, char **argv)
{
    register_kernel();
    const char *mode = argc == 2 ? argv[1] : "";
    if (!strcmp(mode, "held") || !strcmp(mode, "sleeping") || !strcmp(mode, "rwlock") || !strcmp(mode, "spin")) {
        g_sleep = !strcmp(mode, "sleeping");
        g_rw = !strcmp(mode, "rwlock");
        g_spin = !strcmp(mode, "spin");
        CHECK(pthread_spin_init(&g_spinlock, PTHREAD_PROCESS_PRIVATE) == 0, "pthread_spin_init");
        run_held();
    } else if (!strcmp(mode, "handover"))
        run_handover();
    else if (!strcmp(mode, "quiet"))
        run_quiet();
    else if (!strcmp(mode, "kinds"))
        run_kinds();
    else
        CHECK(0, "usage: %s held | sleeping | spin | rwlock | handover | quiet | kinds", argv[0]);
    printf("mutexes %s done\n", mode);
    return 0;
}
