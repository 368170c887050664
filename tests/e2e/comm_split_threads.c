/*
 * ncclCommInitRank and ncclCommSplit from one thread per GPU, with no barrier
 * between the threads, checked by the program itself (exit 0 = ok). Thread g
 * starts g × 10 ms late, so the first threads reach their split before the
 * last ones have begun their init: the split must still gather all 8 ranks.
 * Then, from the main thread (a process's blocking waits hold its one
 * connection, so one thread drives every GPU), on each half (color = rank % 2,
 * key = rank: 4 ranks), Send/Recv of a rank to itself:
 *   1. AllToAll as one group of Sends and Recvs to every rank, itself
 *      included, completes;
 *   2. a Send and a Recv to itself alone in a group take, between two events
 *      on its stream, 2 × bytes at the GPU's HBM rate (a copy within the GPU:
 *      48 MB read and written at the H200's 4800 GB/s = 20 µs).
 * Prints "split threads ok" at the end.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include "test_check.h"
#include "real_sleep.h"

#define N            8
#define HALF         (N / 2)
#define A2A_FLOATS   (1 << 16)
#define SELF_BYTES   48000000ull
#define SELF_COPY_MS 0.020 /* 2 × 48 MB / 4800 GB/s */

static ncclUniqueId g_id;
static ncclComm_t g_parent[N], g_half[N];

static void *rank_thread(void *arg)
{
    int g = (int)(long)arg;
    real_sleep_us((unsigned)g * 10000);
    CHECK(cudaSetDevice(g) == cudaSuccess, "cudaSetDevice(%d)", g);
    CHECK(ncclCommInitRank(&g_parent[g], N, g_id, g) == ncclSuccess, "init of rank %d", g);
    CHECK(ncclCommSplit(g_parent[g], g % 2, g, &g_half[g], NULL) == ncclSuccess, "split of rank %d", g);
    int n = -1, me = -1;
    CHECK(g_half[g] && ncclCommCount(g_half[g], &n) == ncclSuccess && n == HALF, "rank %d: half of %d ranks", g, n);
    CHECK(ncclCommUserRank(g_half[g], &me) == ncclSuccess && me == g / 2, "rank %d: rank %d in its half", g, me);
    return NULL;
}

/* Every GPU's AllToAll on its half, itself included, in one group (one thread drives them all). */
static void alltoall_with_self(float **send, float **recv, cudaStream_t *st)
{
    CHECK(ncclGroupStart() == ncclSuccess, "group start");
    for (int g = 0; g < N; g++)
        for (int peer = 0; peer < HALF; peer++) {
            CHECK(ncclSend(send[g] + peer * A2A_FLOATS, A2A_FLOATS, ncclFloat, peer, g_half[g], st[g]) == ncclSuccess,
                  "GPU %d: Send to %d", g, peer);
            CHECK(ncclRecv(recv[g] + peer * A2A_FLOATS, A2A_FLOATS, ncclFloat, peer, g_half[g], st[g]) == ncclSuccess,
                  "GPU %d: Recv from %d", g, peer);
        }
    CHECK(ncclGroupEnd() == ncclSuccess, "group end");
    for (int g = 0; g < N; g++)
        CHECK(cudaStreamSynchronize(st[g]) == cudaSuccess, "GPU %d: AllToAll with itself included", g);
}

/* On every GPU, a Send and a Recv to itself in one group, timed by events around them on its stream. */
static void self_sendrecv_timed(float **a, float **b, cudaStream_t *st)
{
    cudaEvent_t e0[N], e1[N];
    for (int g = 0; g < N; g++) {
        CHECK(cudaSetDevice(g) == cudaSuccess, "cudaSetDevice");
        CHECK(cudaEventCreate(&e0[g]) == cudaSuccess && cudaEventCreate(&e1[g]) == cudaSuccess, "cudaEventCreate");
        CHECK(cudaEventRecord(e0[g], st[g]) == cudaSuccess, "record");
    }
    CHECK(ncclGroupStart() == ncclSuccess, "group start");
    for (int g = 0; g < N; g++) {
        CHECK(ncclSend(a[g], SELF_BYTES, ncclChar, g / 2, g_half[g], st[g]) == ncclSuccess, "GPU %d: Send to itself",
              g);
        CHECK(ncclRecv(b[g], SELF_BYTES, ncclChar, g / 2, g_half[g], st[g]) == ncclSuccess, "GPU %d: Recv", g);
    }
    CHECK(ncclGroupEnd() == ncclSuccess, "group end");
    for (int g = 0; g < N; g++) {
        CHECK(cudaEventRecord(e1[g], st[g]) == cudaSuccess, "record");
        CHECK(cudaEventSynchronize(e1[g]) == cudaSuccess, "GPU %d: Send/Recv to itself", g);
        float ms = -1;
        CHECK(cudaEventElapsedTime(&ms, e0[g], e1[g]) == cudaSuccess, "cudaEventElapsedTime");
        CHECK(ms > SELF_COPY_MS * 0.999 && ms < SELF_COPY_MS * 1.001,
              "GPU %d: Send/Recv to itself took %.6f ms, expected %.6f ms", g, ms, SELF_COPY_MS);
        cudaEventDestroy(e0[g]);
        cudaEventDestroy(e1[g]);
    }
}

int main(void)
{
    int n = 0;
    CHECK(cudaGetDeviceCount(&n) == cudaSuccess && n == N, "expected %d GPUs, got %d", N, n);
    CHECK(ncclGetUniqueId(&g_id) == ncclSuccess, "ncclGetUniqueId");
    pthread_t th[N];
    for (long g = 0; g < N; g++)
        CHECK(pthread_create(&th[g], NULL, rank_thread, (void *)g) == 0, "pthread_create");
    for (int g = 0; g < N; g++)
        pthread_join(th[g], NULL);

    cudaStream_t st[N];
    float *send[N], *recv[N];
    for (int g = 0; g < N; g++) {
        CHECK(cudaSetDevice(g) == cudaSuccess, "cudaSetDevice");
        CHECK(cudaStreamCreate(&st[g]) == cudaSuccess, "cudaStreamCreate");
        CHECK(cudaMalloc((void **)&send[g], SELF_BYTES) == cudaSuccess &&
                  cudaMalloc((void **)&recv[g], SELF_BYTES) == cudaSuccess,
              "cudaMalloc");
    }
    alltoall_with_self(send, recv, st);
    self_sendrecv_timed(send, recv, st);
    for (int g = 0; g < N; g++) {
        ncclCommDestroy(g_half[g]);
        ncclCommDestroy(g_parent[g]);
    }
    printf("split threads ok\n");
    return 0;
}
