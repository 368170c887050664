/*
 * ncclCommSplit across processes under hysim, checked by the program itself
 * (exit 0 = ok). `hysim run` starts it once per server (HYSIM_SERVER is its
 * index) on 2 servers × 2 GPUs; process 0 hands the unique id to the other
 * through the file argv[1]. The parent has ranks 0, 1 (process 0) and 2, 3
 * (process 1).
 *   1. a split inside a group, color = rank % 2, key = rank: {0, 2} and
 *      {1, 3}, each across both processes; an all-reduce on each completes.
 *   2. a split from one thread per rank (blocking calls), key = −rank, rank 3
 *      with NCCL_SPLIT_NOCOLOR: ranks 2, 1, 0 in that order, rank 3 NULL; an
 *      all-reduce on it completes.
 * With argv[2] = "skip", process 1 never calls the split (it sleeps): the
 * run must be stopped by the stall watchdog naming the split.
 * Prints "split mp ok" at the end.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include "test_check.h"
#include "real_sleep.h"

#define LOCAL  2
#define NRANKS 4

static int g_proc;
static ncclComm_t parent[LOCAL], third[LOCAL];

/* Process 0 publishes the id (write and rename); the other waits for it. */
static ncclUniqueId exchange_id(const char *path)
{
    ncclUniqueId id;
    if (g_proc == 0) {
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        CHECK(ncclGetUniqueId(&id) == ncclSuccess, "ncclGetUniqueId");
        FILE *f = fopen(tmp, "wb");
        CHECK(f && fwrite(&id, sizeof id, 1, f) == 1 && fclose(f) == 0 && rename(tmp, path) == 0, "writing %s", path);
        return id;
    }
    for (int tries = 0; tries < 60000; tries++) {
        FILE *f = fopen(path, "rb");
        if (f) {
            size_t got = fread(&id, sizeof id, 1, f);
            fclose(f);
            if (got == 1)
                return id;
        }
        real_sleep_us(1000);
    }
    CHECK(0, "no unique id in %s", path);
    return id;
}

static void expect_comm(ncclComm_t c, int nranks, int rank, const char *what)
{
    int n = -1, rk = -1;
    CHECK(c, "%s: NULL communicator", what);
    CHECK(ncclCommCount(c, &n) == ncclSuccess && n == nranks, "%s: %d ranks, expected %d", what, n, nranks);
    CHECK(ncclCommUserRank(c, &rk) == ncclSuccess && rk == rank, "%s: rank %d, expected %d", what, rk, rank);
}

static void *split_thread(void *arg)
{
    int g = (int)(long)arg, r = g_proc * LOCAL + g;
    cudaSetDevice(g);
    ncclResult_t e = ncclCommSplit(parent[g], r == 3 ? NCCL_SPLIT_NOCOLOR : 5, -r, &third[g], NULL);
    return (void *)(long)e;
}

/* An all-reduce of 1 MiB on each non-NULL communicator of this process, grouped; then each GPU synchronised. */
static void allreduce(ncclComm_t *comms, const char *what)
{
    static float *buf[LOCAL];
    for (int g = 0; g < LOCAL; g++)
        if (!buf[g]) {
            cudaSetDevice(g);
            CHECK(cudaMalloc((void **)&buf[g], 1 << 20) == cudaSuccess, "cudaMalloc");
        }
    CHECK(ncclGroupStart() == ncclSuccess, "group start");
    for (int g = 0; g < LOCAL; g++)
        if (comms[g])
            CHECK(ncclAllReduce(buf[g], buf[g], 1 << 18, ncclFloat, ncclSum, comms[g], NULL) == ncclSuccess,
                  "%s: all-reduce", what);
    CHECK(ncclGroupEnd() == ncclSuccess, "group end");
    for (int g = 0; g < LOCAL; g++) {
        cudaSetDevice(g);
        CHECK(cudaDeviceSynchronize() == cudaSuccess, "%s: sync of GPU %d", what, g);
    }
}

int main(int argc, char **argv)
{
    CHECK(argc >= 2, "usage: comm_split_mp IDFILE [skip]");
    const char *server = getenv("HYSIM_SERVER");
    g_proc = server ? atoi(server) : 0;
    int n = 0;
    CHECK(cudaGetDeviceCount(&n) == cudaSuccess && n == LOCAL, "expected %d GPUs per process, got %d", LOCAL, n);
    ncclUniqueId id = exchange_id(argv[1]);
    CHECK(ncclGroupStart() == ncclSuccess, "group start");
    for (int g = 0; g < LOCAL; g++) {
        cudaSetDevice(g);
        CHECK(ncclCommInitRank(&parent[g], NRANKS, id, g_proc * LOCAL + g) == ncclSuccess, "init");
    }
    CHECK(ncclGroupEnd() == ncclSuccess, "group end");

    if (argc > 2 && !strcmp(argv[2], "skip") && g_proc == 1) {
        real_sleep_us(120000000); /* never calls the split: the stall watchdog must stop the run first */
        return 1;
    }

    ncclComm_t half[LOCAL];
    CHECK(ncclGroupStart() == ncclSuccess, "group start");
    for (int g = 0; g < LOCAL; g++) {
        int r = g_proc * LOCAL + g;
        CHECK(ncclCommSplit(parent[g], r % 2, r, &half[g], NULL) == ncclSuccess, "split of rank %d", r);
    }
    CHECK(ncclGroupEnd() == ncclSuccess, "group end");
    if (g_proc == 0)
        unlink(argv[1]); /* every rank has called the split, so every process has read the id */
    for (int g = 0; g < LOCAL; g++) {
        int r = g_proc * LOCAL + g;
        expect_comm(half[g], 2, r / 2, "split by rank % 2");
    }
    allreduce(half, "split by rank % 2");

    pthread_t th[LOCAL];
    for (long g = 0; g < LOCAL; g++)
        CHECK(pthread_create(&th[g], NULL, split_thread, (void *)g) == 0, "pthread_create");
    for (int g = 0; g < LOCAL; g++) {
        void *res;
        pthread_join(th[g], &res);
        CHECK((ncclResult_t)(long)res == ncclSuccess, "threaded split of local GPU %d failed", g);
    }
    for (int g = 0; g < LOCAL; g++) {
        int r = g_proc * LOCAL + g;
        if (r == 3)
            CHECK(third[g] == NULL, "NCCL_SPLIT_NOCOLOR gave a communicator");
        else
            expect_comm(third[g], 3, 2 - r, "threaded split with key -rank");
    }
    allreduce(third, "threaded split");

    for (int g = 0; g < LOCAL; g++) {
        ncclCommDestroy(half[g]);
        if (third[g])
            ncclCommDestroy(third[g]);
        ncclCommDestroy(parent[g]);
    }
    printf("split mp ok (process %d)\n", g_proc);
    return 0;
}
