/*
 * The common shape of a one-process multi-GPU program: the main thread sets
 * up (streams, buffers, ncclCommInitAll: GPU work of its own), starts one
 * worker thread per GPU, and pthread_joins them. Each worker records a start
 * event, runs ITERS all-reduces on its stream, records a done event and
 * synchronises the stream. A fifth thread that never makes a CUDA call is
 * started first and joined first: such a thread costs the simulator nothing.
 *
 *   join_workers threads   the above
 *   join_workers nested    the main thread starts two threads, each records
 *                          the start events of two GPUs, starts and joins
 *                          the workers of those GPUs; the main thread joins the two
 *   join_workers serial    the same all-reduces from the main thread
 *                          (one group per iteration), then a sync of every stream
 *   join_workers condvar   as threads, but the main thread waits on a
 *                          condition variable the workers signal when done
 *                          before it joins them: blocked there, it counts
 *                          as waiting, and the wait returns when the last
 *                          worker's signal does, at the joins' time
 *
 * Prints the host clock before the workers start and after the joins (the
 * process's simulated host time: a join returns when the joined thread
 * exited, here right after its last synchronisation), and every GPU's done
 * event time from its start event. check_join_workers.sh compares them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include "test_check.h"

#define NGPU   4
#define ITERS  2
#define FLOATS (16u << 20) /* 64 MiB per all-reduce */

static ncclComm_t g_comm[NGPU];
static cudaStream_t g_stream[NGPU];
static float *g_buf[NGPU];
static cudaEvent_t g_start[NGPU], g_done[NGPU];

/* condvar mode: workers that finished */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_finished;

static long long host_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000ll + t.tv_nsec;
}

static void setup(void)
{
    for (int g = 0; g < NGPU; g++) {
        CHECK(cudaSetDevice(g) == cudaSuccess, "cudaSetDevice(%d)", g);
        CHECK(cudaStreamCreate(&g_stream[g]) == cudaSuccess, "stream of GPU %d", g);
        CHECK(cudaMalloc((void **)&g_buf[g], FLOATS * sizeof(float)) == cudaSuccess, "buffer of GPU %d", g);
        CHECK(cudaEventCreate(&g_start[g]) == cudaSuccess && cudaEventCreate(&g_done[g]) == cudaSuccess,
              "events of GPU %d", g);
    }
    int devs[NGPU] = {0, 1, 2, 3};
    CHECK(ncclCommInitAll(g_comm, NGPU, devs) == ncclSuccess, "ncclCommInitAll");
}

static void all_reduce(int g)
{
    CHECK(ncclAllReduce(g_buf[g], g_buf[g], FLOATS, ncclFloat, ncclSum, g_comm[g], g_stream[g]) == ncclSuccess,
          "all-reduce of GPU %d", g);
}

static void start_record(int g)
{
    CHECK(cudaEventRecord(g_start[g], g_stream[g]) == cudaSuccess, "start record of GPU %d", g);
}

/* arg: the GPU, plus NGPU when the start event is recorded already */
static void *worker(void *arg)
{
    int g = (int)(long)arg % NGPU;
    CHECK(cudaSetDevice(g) == cudaSuccess, "worker's cudaSetDevice(%d)", g);
    if ((long)arg < NGPU)
        start_record(g);
    for (int k = 0; k < ITERS; k++)
        all_reduce(g);
    CHECK(cudaEventRecord(g_done[g], g_stream[g]) == cudaSuccess, "done record of GPU %d", g);
    CHECK(cudaStreamSynchronize(g_stream[g]) == cudaSuccess, "sync of GPU %d", g);
    pthread_mutex_lock(&g_mu);
    g_finished++;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_mu);
    return NULL;
}

/* Host work only: never makes a CUDA call. */
static void *helper(void *arg)
{
    volatile unsigned long x = 0;
    for (unsigned long i = 0; i < 1000000; i++)
        x += i;
    *(unsigned long *)arg = x;
    return NULL;
}

/* nested mode: the pair of GPUs 2p, 2p + 1 */
static void *pair(void *arg)
{
    int p = (int)(long)arg;
    pthread_t w[2];
    for (int i = 0; i < 2; i++)
        start_record(2 * p + i);
    for (long i = 0; i < 2; i++)
        CHECK(pthread_create(&w[i], NULL, worker, (void *)(NGPU + 2 * p + i)) == 0, "worker of pair %d", p);
    for (int i = 0; i < 2; i++)
        CHECK(pthread_join(w[i], NULL) == 0, "join of pair %d's worker", p);
    return NULL;
}

static void run_nested(void)
{
    pthread_t p[NGPU / 2];
    for (long i = 0; i < NGPU / 2; i++)
        CHECK(pthread_create(&p[i], NULL, pair, (void *)i) == 0, "pair %ld", i);
    for (int i = 0; i < NGPU / 2; i++)
        CHECK(pthread_join(p[i], NULL) == 0, "join of pair %d", i);
}

static void run_threads(int condvar)
{
    pthread_t h, w[NGPU];
    unsigned long sum = 0;
    CHECK(pthread_create(&h, NULL, helper, &sum) == 0, "helper thread");
    for (long g = 0; g < NGPU; g++)
        CHECK(pthread_create(&w[g], NULL, worker, (void *)g) == 0, "worker %ld", g);
    CHECK(pthread_join(h, NULL) == 0 && sum == 499999500000ul, "helper's join");
    if (condvar) {
        pthread_mutex_lock(&g_mu);
        while (g_finished < NGPU)
            pthread_cond_wait(&g_cv, &g_mu);
        pthread_mutex_unlock(&g_mu);
    }
    for (int g = 0; g < NGPU; g++)
        CHECK(pthread_join(w[g], NULL) == 0, "join of worker %d", g);
}

static void run_serial(void)
{
    for (int g = 0; g < NGPU; g++)
        start_record(g);
    for (int k = 0; k < ITERS; k++) {
        CHECK(ncclGroupStart() == ncclSuccess, "group start");
        for (int g = 0; g < NGPU; g++)
            all_reduce(g);
        CHECK(ncclGroupEnd() == ncclSuccess, "group end");
    }
    for (int g = 0; g < NGPU; g++)
        CHECK(cudaEventRecord(g_done[g], g_stream[g]) == cudaSuccess, "done record of GPU %d", g);
    for (int g = 0; g < NGPU; g++)
        CHECK(cudaStreamSynchronize(g_stream[g]) == cudaSuccess, "sync of GPU %d", g);
}

int main(int argc, char **argv)
{
    const char *mode = argc == 2 ? argv[1] : "";
    CHECK(!strcmp(mode, "threads") || !strcmp(mode, "nested") || !strcmp(mode, "serial") || !strcmp(mode, "condvar"),
          "usage: %s threads|nested|serial|condvar", argv[0]);
    setup();
    long long before = host_ns();
    if (!strcmp(mode, "serial"))
        run_serial();
    else if (!strcmp(mode, "nested"))
        run_nested();
    else
        run_threads(!strcmp(mode, "condvar"));
    long long after = host_ns();
    printf("host clock before the work: %lld ns\n", before);
    printf("host clock after the work: %lld ns\n", after);
    for (int g = 0; g < NGPU; g++) {
        float ms = -1;
        CHECK(cudaEventElapsedTime(&ms, g_start[g], g_done[g]) == cudaSuccess, "elapsed of GPU %d", g);
        printf("gpu %d done after %.6f ms\n", g, ms);
    }
    for (int g = 0; g < NGPU; g++)
        ncclCommDestroy(g_comm[g]);
    printf("join_workers %s done\n", mode);
    return 0;
}
