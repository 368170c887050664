/*
 * ncclCommSplit under hysim, checked by the program itself (exit 0 = ok):
 *   1. 4 ranks of one ncclCommInitAll split inside a group, color = rank % 2,
 *      key = −rank: each new communicator has 2 ranks in reverse parent order.
 *   2. the same parent split again from one thread per rank (blocking calls),
 *      rank 3 with NCCL_SPLIT_NOCOLOR: ranks 0..2 in one communicator, rank 3
 *      gets NULL.
 *   3. an all-reduce on every new communicator completes, and a Send/Recv
 *      between the two ranks of a split communicator.
 * (Splits across processes: comm_split_mp.c.) Prints "split ok" at the end.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include "test_check.h"

#define N 4

static ncclComm_t parent[N], third[N];

static void *split_thread(void *arg)
{
    int r = (int)(long)arg;
    ncclResult_t e = ncclCommSplit(parent[r], r == 3 ? NCCL_SPLIT_NOCOLOR : 7, r, &third[r], NULL);
    return (void *)(long)e;
}

static void expect_comm(ncclComm_t c, int nranks, int rank, int dev, const char *what)
{
    int n = -1, rk = -1, d = -1;
    CHECK(c, "%s: NULL communicator", what);
    CHECK(ncclCommCount(c, &n) == ncclSuccess && n == nranks, "%s: %d ranks, expected %d", what, n, nranks);
    CHECK(ncclCommUserRank(c, &rk) == ncclSuccess && rk == rank, "%s: rank %d, expected %d", what, rk, rank);
    CHECK(ncclCommCuDevice(c, &d) == ncclSuccess && d == dev, "%s: device %d, expected %d", what, d, dev);
}

int main(void)
{
    int devs[N] = {0, 1, 2, 3};
    CHECK(ncclCommInitAll(parent, N, devs) == ncclSuccess, "ncclCommInitAll failed");

    ncclComm_t half[N];
    CHECK(ncclGroupStart() == ncclSuccess, "group start");
    for (int r = 0; r < N; r++)
        CHECK(ncclCommSplit(parent[r], r % 2, -r, &half[r], NULL) == ncclSuccess, "split of rank %d", r);
    CHECK(ncclGroupEnd() == ncclSuccess, "group end");
    /* color 0: ranks 2, 0 (keys −2 < 0); color 1: ranks 3, 1 */
    expect_comm(half[0], 2, 1, 0, "color 0, parent rank 0");
    expect_comm(half[2], 2, 0, 2, "color 0, parent rank 2");
    expect_comm(half[1], 2, 1, 1, "color 1, parent rank 1");
    expect_comm(half[3], 2, 0, 3, "color 1, parent rank 3");

    pthread_t th[N];
    for (long r = 0; r < N; r++)
        CHECK(pthread_create(&th[r], NULL, split_thread, (void *)r) == 0, "pthread_create");
    for (int r = 0; r < N; r++) {
        void *res;
        pthread_join(th[r], &res);
        CHECK((ncclResult_t)(long)res == ncclSuccess, "threaded split of rank %d failed", r);
    }
    for (int r = 0; r < 3; r++)
        expect_comm(third[r], 3, r, r, "threaded split");
    CHECK(third[3] == NULL, "NCCL_SPLIT_NOCOLOR gave a communicator");

    float *buf[N];
    cudaStream_t st[N];
    for (int r = 0; r < N; r++) {
        cudaSetDevice(r);
        CHECK(cudaMalloc((void **)&buf[r], 1 << 20) == cudaSuccess, "cudaMalloc");
        cudaStreamCreate(&st[r]);
    }
    CHECK(ncclGroupStart() == ncclSuccess, "group start");
    for (int r = 0; r < N; r++)
        CHECK(ncclAllReduce(buf[r], buf[r], 1 << 18, ncclFloat, ncclSum, half[r], st[r]) == ncclSuccess, "allreduce");
    for (int r = 0; r < 3; r++)
        CHECK(ncclAllReduce(buf[r], buf[r], 1 << 18, ncclFloat, ncclSum, third[r], st[r]) == ncclSuccess, "allreduce");
    CHECK(ncclSend(buf[0], 1024, ncclFloat, 0, half[0], st[0]) == ncclSuccess, "send"); /* parent 0 → 2 */
    CHECK(ncclRecv(buf[2], 1024, ncclFloat, 1, half[2], st[2]) == ncclSuccess, "recv");
    CHECK(ncclGroupEnd() == ncclSuccess, "group end");
    for (int r = 0; r < N; r++) {
        cudaSetDevice(r);
        CHECK(cudaStreamSynchronize(st[r]) == cudaSuccess, "sync of GPU %d", r);
    }

    for (int r = 0; r < N; r++) {
        ncclCommDestroy(half[r]);
        if (third[r])
            ncclCommDestroy(third[r]);
        ncclCommDestroy(parent[r]);
    }
    printf("split ok\n");
    return 0;
}
