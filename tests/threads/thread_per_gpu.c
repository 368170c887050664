/*
 * One process, 4 GPUs, one thread per GPU, each as a data-parallel worker
 * would: ncclCommInitRank with a shared unique id, then ITERS times an
 * all-reduce on its own stream, an event recorded after it, and
 * cudaStreamSynchronize of that stream. Thread g starts g × 5 ms late and,
 * after creating its stream, calls ncclCommInitRank g × 5 ms late again: GPU
 * 0's thread waits for its all-reduce while the others have not issued
 * theirs. A fifth thread waits in cudaEventSynchronize on GPU 0's event of
 * each iteration as GPU 0's thread records it.
 *
 * hysimd cannot know of a thread before it issues work: every thread issues
 * some (a stream, a query) before any thread blocks, or a thread new to the
 * simulator could arrive after the simulation moved past its clock (a clear
 * failure; bridge/daemon/sim_loop.c). The main thread issues none until the end.
 *
 *   thread_per_gpu threads   the above
 *   thread_per_gpu serial    the same work from the main thread alone
 *                            (ncclCommInitAll, one group per iteration)
 *
 * Prints the simulated time of every event from GPU 0's start event, and the
 * process's host clock at the end: both modes must print the same lines
 * (check_thread_per_gpu.sh compares them).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include "test_check.h"
#include "real_sleep.h"

#define NGPU   4
#define ITERS  3
#define FLOATS (16u << 20) /* 64 MiB per all-reduce */

static ncclUniqueId g_id;
static ncclComm_t g_comm[NGPU];
static cudaStream_t g_stream[NGPU];
static float *g_buf[NGPU];
static cudaEvent_t g_start[NGPU], g_done[NGPU][ITERS];

/* GPU 0's thread hands each iteration's event to the event thread. */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_recorded; /* iterations whose GPU 0 event is recorded */
static int g_event_ready;
static pthread_barrier_t g_started; /* every worker has issued work */

static void setup_gpu(int g)
{
    CHECK(cudaSetDevice(g) == cudaSuccess, "cudaSetDevice(%d)", g);
    CHECK(cudaStreamCreate(&g_stream[g]) == cudaSuccess, "stream of GPU %d", g);
    CHECK(cudaMalloc((void **)&g_buf[g], FLOATS * sizeof(float)) == cudaSuccess, "buffer of GPU %d", g);
    CHECK(cudaEventCreate(&g_start[g]) == cudaSuccess, "start event of GPU %d", g);
    for (int k = 0; k < ITERS; k++)
        CHECK(cudaEventCreate(&g_done[g][k]) == cudaSuccess, "event of GPU %d", g);
}

static void all_reduce(int g)
{
    CHECK(ncclAllReduce(g_buf[g], g_buf[g], FLOATS, ncclFloat, ncclSum, g_comm[g], g_stream[g]) == ncclSuccess,
          "all-reduce of GPU %d", g);
}

/* Counts this thread in (a query) before the workers start, then waits on GPU 0's events. */
static void *event_thread(void *arg)
{
    (void)arg;
    CHECK(cudaSetDevice(0) == cudaSuccess && cudaStreamQuery(NULL) == cudaSuccess, "event thread's query");
    pthread_mutex_lock(&g_mu);
    g_event_ready = 1;
    pthread_cond_broadcast(&g_cv);
    for (int k = 0; k < ITERS; k++) {
        while (g_recorded <= k)
            pthread_cond_wait(&g_cv, &g_mu);
        pthread_mutex_unlock(&g_mu);
        CHECK(cudaEventSynchronize(g_done[0][k]) == cudaSuccess, "cudaEventSynchronize of iteration %d", k);
        pthread_mutex_lock(&g_mu);
    }
    pthread_mutex_unlock(&g_mu);
    return NULL;
}

static void *worker(void *arg)
{
    int g = (int)(long)arg;
    real_sleep_us((unsigned)g * 5000);
    setup_gpu(g);
    pthread_barrier_wait(&g_started);
    real_sleep_us((unsigned)g * 5000);
    CHECK(ncclCommInitRank(&g_comm[g], NGPU, g_id, g) == ncclSuccess, "init of rank %d", g);
    CHECK(cudaEventRecord(g_start[g], g_stream[g]) == cudaSuccess, "start record of GPU %d", g);
    for (int k = 0; k < ITERS; k++) {
        all_reduce(g);
        CHECK(cudaEventRecord(g_done[g][k], g_stream[g]) == cudaSuccess, "record of GPU %d", g);
        if (g == 0) {
            pthread_mutex_lock(&g_mu);
            g_recorded = k + 1;
            pthread_cond_broadcast(&g_cv);
            pthread_mutex_unlock(&g_mu);
        }
        CHECK(cudaStreamSynchronize(g_stream[g]) == cudaSuccess, "sync of GPU %d, iteration %d", g, k);
    }
    return NULL;
}

static void run_threads(void)
{
    pthread_t ev, w[NGPU];
    CHECK(pthread_barrier_init(&g_started, NULL, NGPU) == 0, "barrier");
    CHECK(pthread_create(&ev, NULL, event_thread, NULL) == 0, "event thread");
    pthread_mutex_lock(&g_mu);
    while (!g_event_ready)
        pthread_cond_wait(&g_cv, &g_mu);
    pthread_mutex_unlock(&g_mu);
    for (long g = 0; g < NGPU; g++)
        CHECK(pthread_create(&w[g], NULL, worker, (void *)g) == 0, "worker %ld", g);
    for (int g = 0; g < NGPU; g++)
        pthread_join(w[g], NULL);
    pthread_join(ev, NULL);
}

static void run_serial(void)
{
    CHECK(cudaSetDevice(0) == cudaSuccess && cudaStreamQuery(NULL) == cudaSuccess, "query");
    for (int g = 0; g < NGPU; g++)
        setup_gpu(g);
    int devs[NGPU] = {0, 1, 2, 3};
    CHECK(ncclCommInitAll(g_comm, NGPU, devs) == ncclSuccess, "ncclCommInitAll");
    for (int g = 0; g < NGPU; g++)
        CHECK(cudaEventRecord(g_start[g], g_stream[g]) == cudaSuccess, "start record of GPU %d", g);
    for (int k = 0; k < ITERS; k++) {
        CHECK(ncclGroupStart() == ncclSuccess, "group start");
        for (int g = 0; g < NGPU; g++)
            all_reduce(g);
        CHECK(ncclGroupEnd() == ncclSuccess, "group end");
        for (int g = 0; g < NGPU; g++)
            CHECK(cudaEventRecord(g_done[g][k], g_stream[g]) == cudaSuccess, "record of GPU %d", g);
        for (int g = 0; g < NGPU; g++)
            CHECK(cudaStreamSynchronize(g_stream[g]) == cudaSuccess, "sync of GPU %d, iteration %d", g, k);
        CHECK(cudaEventSynchronize(g_done[0][k]) == cudaSuccess, "cudaEventSynchronize of iteration %d", k);
    }
}

int main(int argc, char **argv)
{
    CHECK(argc == 2 && (!strcmp(argv[1], "threads") || !strcmp(argv[1], "serial")), "usage: %s threads|serial",
          argv[0]);
    int n = 0;
    CHECK(cudaGetDeviceCount(&n) == cudaSuccess && n >= NGPU, "needs %d GPUs, has %d", NGPU, n);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK(ncclGetUniqueId(&g_id) == ncclSuccess, "ncclGetUniqueId");
    if (!strcmp(argv[1], "threads"))
        run_threads();
    else
        run_serial();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long long host_ns = (t1.tv_sec - t0.tv_sec) * 1000000000ll + (t1.tv_nsec - t0.tv_nsec);
    for (int k = 0; k < ITERS; k++)
        for (int g = 0; g < NGPU; g++) {
            float ms = -1;
            CHECK(cudaEventElapsedTime(&ms, g_start[0], g_done[g][k]) == cudaSuccess, "elapsed %d %d", g, k);
            printf("iteration %d gpu %d done at %.6f ms\n", k, g, ms);
        }
    printf("host clock after the work: %lld ns\n", host_ns);
    for (int g = 0; g < NGPU; g++)
        ncclCommDestroy(g_comm[g]);
    printf("thread_per_gpu %s done\n", argv[1]);
    return 0;
}
