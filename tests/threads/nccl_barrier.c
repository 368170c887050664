/*
 * nccl-tests `-t` as it drives NGPU GPUs from one process: one thread per
 * GPU, each ncclCommInitRank's its rank of one communicator with a shared
 * unique id, then ITERS times an all-reduce on its own stream, an event
 * recorded after it, cudaStreamSynchronize, and nccl-tests' Barrier(): a
 * mutex + condition variable pair per epoch (two, alternating), a counter,
 * a broadcast by the thread that completes it and by the last thread once
 * it has reset it, the others waiting in while loops on pthread_cond_wait
 * (so most of them are woken once for nothing and wait again).
 *
 *   nccl_barrier threads   the above
 *   nccl_barrier serial    the same work from the main thread alone
 *                          (ncclCommInitAll, one group per iteration, then a
 *                          sync of every stream)
 *
 * Prints, per iteration, every GPU's all-reduce end (its event, from GPU 0's
 * first event) and the host clock once every GPU's sync returned (threads:
 * as each thread leaves the barrier; they must agree), from the clock as
 * the first iteration is issued. Both modes must print the same lines
 * (check_nccl_barrier.sh compares them): a thread blocked in the barrier
 * waits, so the others' syncs end when their all-reduce does.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include "test_check.h"
#include "gpu_thread_kit.h" /* now_ns */

#define NGPU   8
#define ITERS  20
#define FLOATS (1u << 20) /* 4 MiB per all-reduce */

static ncclUniqueId g_id;
static ncclComm_t g_comm[NGPU];
static cudaStream_t g_stream[NGPU];
static float *g_buf[NGPU];
static cudaEvent_t g_start[NGPU], g_done[NGPU][ITERS];
static long long g_start_ns[NGPU];      /* each thread's clock as it issues its first all-reduce */
static long long g_met_ns[NGPU][ITERS]; /* as it leaves the barrier after iteration k */

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

/* nccl-tests' Barrier() (src/common.cu), thread `thread` of NGPU. */
static void barrier(int thread)
{
    static __thread int epoch;
    static pthread_mutex_t lock[2] = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER};
    static pthread_cond_t cond[2] = {PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER};
    static int counter[2];

    pthread_mutex_lock(&lock[epoch]);
    if (++counter[epoch] == NGPU)
        pthread_cond_broadcast(&cond[epoch]);
    if (thread + 1 == NGPU) {
        while (counter[epoch] != NGPU)
            pthread_cond_wait(&cond[epoch], &lock[epoch]);
        counter[epoch] = 0;
        pthread_cond_broadcast(&cond[epoch]);
    } else {
        while (counter[epoch] != 0)
            pthread_cond_wait(&cond[epoch], &lock[epoch]);
    }
    pthread_mutex_unlock(&lock[epoch]);
    epoch = 1 - epoch;
}

static void *worker(void *arg)
{
    int g = (int)(long)arg;
    setup_gpu(g);
    CHECK(ncclCommInitRank(&g_comm[g], NGPU, g_id, g) == ncclSuccess, "init of rank %d", g);
    barrier(g); /* as nccl-tests does before it times anything */
    CHECK(cudaEventRecord(g_start[g], g_stream[g]) == cudaSuccess, "start record of GPU %d", g);
    g_start_ns[g] = now_ns();
    for (int k = 0; k < ITERS; k++) {
        all_reduce(g);
        CHECK(cudaEventRecord(g_done[g][k], g_stream[g]) == cudaSuccess, "record of GPU %d", g);
        CHECK(cudaStreamSynchronize(g_stream[g]) == cudaSuccess, "sync of GPU %d, iteration %d", g, k);
        barrier(g);
        g_met_ns[g][k] = now_ns();
    }
    return NULL;
}

static void run_threads(void)
{
    pthread_t w[NGPU];
    for (long g = 0; g < NGPU; g++)
        CHECK(pthread_create(&w[g], NULL, worker, (void *)g) == 0, "worker %ld", g);
    for (int g = 0; g < NGPU; g++)
        CHECK(pthread_join(w[g], NULL) == 0, "join of worker %d", g);
    for (int g = 1; g < NGPU; g++)
        CHECK(g_start_ns[g] == g_start_ns[0], "thread %d started at %lld ns, thread 0 at %lld ns", g, g_start_ns[g],
              g_start_ns[0]);
    for (int k = 0; k < ITERS; k++)
        for (int g = 1; g < NGPU; g++)
            CHECK(g_met_ns[g][k] == g_met_ns[0][k],
                  "iteration %d: thread %d left the barrier at %lld ns, thread 0 at %lld", k, g, g_met_ns[g][k],
                  g_met_ns[0][k]);
}

static void run_serial(void)
{
    for (int g = 0; g < NGPU; g++)
        setup_gpu(g);
    int devs[NGPU];
    for (int g = 0; g < NGPU; g++)
        devs[g] = g;
    CHECK(ncclCommInitAll(g_comm, NGPU, devs) == ncclSuccess, "ncclCommInitAll");
    for (int g = 0; g < NGPU; g++)
        CHECK(cudaEventRecord(g_start[g], g_stream[g]) == cudaSuccess, "start record of GPU %d", g);
    g_start_ns[0] = now_ns();
    for (int k = 0; k < ITERS; k++) {
        CHECK(ncclGroupStart() == ncclSuccess, "group start");
        for (int g = 0; g < NGPU; g++)
            all_reduce(g);
        CHECK(ncclGroupEnd() == ncclSuccess, "group end");
        for (int g = 0; g < NGPU; g++)
            CHECK(cudaEventRecord(g_done[g][k], g_stream[g]) == cudaSuccess, "record of GPU %d", g);
        for (int g = 0; g < NGPU; g++)
            CHECK(cudaStreamSynchronize(g_stream[g]) == cudaSuccess, "sync of GPU %d, iteration %d", g, k);
        g_met_ns[0][k] = now_ns();
    }
}

int main(int argc, char **argv)
{
    CHECK(argc == 2 && (!strcmp(argv[1], "threads") || !strcmp(argv[1], "serial")), "usage: %s threads|serial",
          argv[0]);
    int n = 0;
    CHECK(cudaGetDeviceCount(&n) == cudaSuccess && n >= NGPU, "needs %d GPUs, has %d", NGPU, n);
    CHECK(ncclGetUniqueId(&g_id) == ncclSuccess, "ncclGetUniqueId");
    if (!strcmp(argv[1], "threads"))
        run_threads();
    else
        run_serial();
    for (int k = 0; k < ITERS; k++) {
        for (int g = 0; g < NGPU; g++) {
            float ms = -1;
            CHECK(cudaEventElapsedTime(&ms, g_start[0], g_done[g][k]) == cudaSuccess, "elapsed %d %d", g, k);
            printf("iteration %d gpu %d: all-reduce done at %.6f ms\n", k, g, ms);
        }
        printf("iteration %d: every sync returned by +%lld ns\n", k, g_met_ns[0][k] - g_start_ns[0]);
    }
    for (int g = 0; g < NGPU; g++)
        ncclCommDestroy(g_comm[g]);
    printf("nccl_barrier %s done\n", argv[1]);
    return 0;
}
