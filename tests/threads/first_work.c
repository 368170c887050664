/*
 * Threads whose first GPU work comes after another thread already waits on
 * its GPU (interpose/core/ops.c, await_first_work_locked), on barrier_gpus.yaml:
 * every kernel K_NS long, host time zero, so a thread's first work comes at
 * host time 0 however late the machine runs it, and every time below is
 * exact. hysimd learns of a thread only from its first work: the others'
 * Waits give a just-started thread time to issue it before the simulation
 * passes its host time. Without that, a late thread started when the others
 * had finished (its GPU's work ending ITERS x BATCH x K_NS after theirs), or
 * the run failed ("host time went backwards").
 *
 *   first_work together   the main thread, which issues no GPU work, starts
 *                         NGPU threads at once; each runs ITERS x (BATCH
 *                         kernels, cudaStreamSynchronize) on its own GPU:
 *                         every thread ends at ITERS x BATCH x K_NS
 *   first_work staggered  the same, thread g issuing its first work g x 30 ms
 *                         of real time late: the same times
 *   first_work creator    the main thread launches BATCH kernels, starts
 *                         NGPU - 1 threads (GPUs 1..), each 30 ms of real time
 *                         late, and synchronises at once: it ends at
 *                         BATCH x K_NS, the threads as in "together"
 *   first_work joined     the main thread issues GPU work, starts a thread
 *                         that never issues any and blocks in a real read
 *                         (a logger), then NGPU - 1 threads (GPUs 1..), and
 *                         joins those: they end as in "together" (a join
 *                         waited for every thread its creator started to
 *                         issue work, the logger too: the joiner counted as
 *                         running and the run stalled)
 *   first_work released   the main thread issues GPU work, locks a mutex,
 *                         starts a thread (GPU 1) that blocks on it before
 *                         any work of its own, runs BATCH kernels and a sync,
 *                         unlocks, and runs BATCH more and a sync; the thread,
 *                         once it has the mutex, issues its first work 30 ms
 *                         of real time later: BATCH kernels and a sync, which
 *                         end with the main thread's second batch, at
 *                         2 x BATCH x K_NS (a thread let go from a lock may
 *                         issue its first work at its releaser's time)
 *   first_work helper     a thread that never issues GPU work and blocks in a
 *                         real read (hysimd cannot see it wait) lives while
 *                         the main thread syncs HELPER_SYNCS times: every
 *                         sync ends where it should, and the run takes well
 *                         under HELPER_SYNCS x the grace of real time (the
 *                         helper is given time to start once, not per sync)
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "test_check.h"
#include "gpu_thread_kit.h"
#include "real_sleep.h"

#define NGPU                 4
#define ITERS                5
#define BATCH                10
#define K_NS                 1000000ll /* barrier_gpus.yaml: compute.default_kernel_us */
#define LATE_US              30000ull
#define HELPER_SYNCS         40
#define HELPER_REAL_LIMIT_NS 5000000000ll /* 40 graces would be 10 s */

static long long g_start_ns;
static unsigned long long g_late_us[NGPU]; /* real time before a thread's first work */
static long long g_end_ns[NGPU];

/* ITERS x (BATCH kernels, sync) on GPU g; its end, relative to the start. */
static void *gpu_thread(void *arg)
{
    int g = (int)(long)arg;
    real_sleep_us(g_late_us[g]);
    CHECK(cudaSetDevice(g) == cudaSuccess, "cudaSetDevice(%d)", g);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s) == cudaSuccess, "stream of GPU %d", g);
    for (int i = 0; i < ITERS; i++) {
        launch(s, BATCH);
        CHECK(cudaStreamSynchronize(s) == cudaSuccess, "sync %d of GPU %d", i, g);
    }
    g_end_ns[g] = now_ns() - g_start_ns;
    return NULL;
}

/* Starts the threads of GPUs first..NGPU-1 and joins them; each must end at ITERS x BATCH x K_NS. */
static void run_threads(int first, void (*meanwhile)(void))
{
    pthread_t t[NGPU];
    for (int g = first; g < NGPU; g++)
        CHECK(pthread_create(&t[g], NULL, gpu_thread, (void *)(long)g) == 0, "thread %d", g);
    if (meanwhile)
        meanwhile();
    for (int g = first; g < NGPU; g++)
        CHECK(pthread_join(t[g], NULL) == 0, "join %d", g);
    for (int g = first; g < NGPU; g++) {
        printf("GPU %d ends at %lld ns\n", g, g_end_ns[g]);
        CHECK(g_end_ns[g] == ITERS * BATCH * K_NS, "GPU %d's thread ended at %lld ns, not %lld: it started late", g,
              g_end_ns[g], ITERS * BATCH * K_NS);
    }
}

static cudaStream_t g_main_stream;

/* The creator's own sync, issued as soon as its threads are started. */
static void creator_sync(void)
{
    CHECK(cudaStreamSynchronize(g_main_stream) == cudaSuccess, "the main thread's sync");
    long long end = now_ns() - g_start_ns;
    printf("main thread ends at %lld ns\n", end);
    CHECK(end == BATCH * K_NS, "the main thread's sync ended at %lld ns, not %lld", end, BATCH * K_NS);
}

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

/* released: takes the mutex before any GPU work, then works 30 ms of real time later. */
static void *released_thread(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&g_mu);
    real_sleep_us(LATE_US);
    cudaStream_t s;
    CHECK(cudaSetDevice(1) == cudaSuccess && cudaStreamCreate(&s) == cudaSuccess, "stream of GPU 1");
    launch(s, BATCH);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess, "sync of GPU 1");
    g_end_ns[1] = now_ns() - g_start_ns;
    pthread_mutex_unlock(&g_mu);
    return NULL;
}

static void released(void)
{
    cudaStream_t s;
    CHECK(cudaSetDevice(0) == cudaSuccess && cudaStreamCreate(&s) == cudaSuccess, "stream of GPU 0");
    pthread_mutex_lock(&g_mu);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, released_thread, NULL) == 0, "thread");
    launch(s, BATCH);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess, "first sync");
    pthread_mutex_unlock(&g_mu);
    launch(s, BATCH);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess, "second sync");
    g_end_ns[0] = now_ns() - g_start_ns;
    CHECK(pthread_join(t, NULL) == 0, "join");
    for (int g = 0; g < 2; g++) {
        printf("GPU %d ends at %lld ns\n", g, g_end_ns[g]);
        CHECK(g_end_ns[g] == 2 * BATCH * K_NS, "GPU %d ended at %lld ns, not %lld", g, g_end_ns[g], 2 * BATCH * K_NS);
    }
}

static int g_pipe[2];

/* Never issues GPU work: blocks in a real read until the main thread closes the pipe. */
static void *helper_thread(void *arg)
{
    (void)arg;
    char c;
    while (read(g_pipe[0], &c, 1) > 0) {}
    return NULL;
}

static long long real_now_ns(void)
{
    struct timespec t;
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t); /* the machine's clock, not the simulated one */
    return t.tv_sec * 1000000000ll + t.tv_nsec;
}

/* Starts a thread that never issues GPU work, blocked in a real read until stop_helper. */
static void start_helper(pthread_t *t)
{
    CHECK(pipe(g_pipe) == 0, "pipe");
    CHECK(pthread_create(t, NULL, helper_thread, NULL) == 0, "helper thread");
}

static void stop_helper(pthread_t t)
{
    close(g_pipe[1]);
    CHECK(pthread_join(t, NULL) == 0, "join of the helper");
}

static void helper(void)
{
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s) == cudaSuccess, "stream");
    long long real_start = real_now_ns();
    pthread_t t;
    start_helper(&t);
    for (int i = 1; i <= HELPER_SYNCS; i++) {
        launch(s, 1);
        CHECK(cudaStreamSynchronize(s) == cudaSuccess, "sync %d", i);
        CHECK(now_ns() - g_start_ns == i * K_NS, "sync %d ended at %lld ns", i, now_ns() - g_start_ns);
    }
    long long real = real_now_ns() - real_start;
    stop_helper(t);
    printf("%d syncs end at %lld ns\n", HELPER_SYNCS, now_ns() - g_start_ns);
    CHECK(real < HELPER_REAL_LIMIT_NS, "%d syncs took %.2f s of real time: the helper was awaited at every sync",
          HELPER_SYNCS, (double)real / 1e9);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    register_kernel();
    g_start_ns = now_ns();
    if (!strcmp(mode, "together")) {
        run_threads(0, NULL);
    } else if (!strcmp(mode, "staggered")) {
        for (int g = 0; g < NGPU; g++)
            g_late_us[g] = (unsigned long long)g * LATE_US;
        run_threads(0, NULL);
    } else if (!strcmp(mode, "creator")) {
        CHECK(cudaSetDevice(0) == cudaSuccess && cudaStreamCreate(&g_main_stream) == cudaSuccess, "main stream");
        launch(g_main_stream, BATCH);
        for (int g = 1; g < NGPU; g++)
            g_late_us[g] = LATE_US;
        run_threads(1, creator_sync);
    } else if (!strcmp(mode, "joined")) {
        CHECK(cudaSetDevice(0) == cudaSuccess && cudaStreamCreate(&g_main_stream) == cudaSuccess, "main stream");
        pthread_t logger;
        start_helper(&logger);
        run_threads(1, NULL);
        stop_helper(logger);
    } else if (!strcmp(mode, "released")) {
        released();
    } else if (!strcmp(mode, "helper")) {
        helper();
    } else {
        fprintf(stderr, "usage: first_work together|staggered|creator|joined|released|helper\n");
        return 2;
    }
    printf("first_work %s done\n", mode);
    return 0;
}
