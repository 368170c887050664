/*
 * An ordinary CUDA + NCCL program (built by gcc against the CUDA headers) for
 * the reliability tests, run under `hysim run`:
 *
 *   reliability_prog busy SECONDS DIR   initialises CUDA, writes DIR/pid.SERVER,
 *                                       then computes on the host for SECONDS of
 *                                       real time without another CUDA call
 *   reliability_prog stall              2 ranks, one per server: rank 0 runs an
 *                                       all-reduce and waits for it; rank 1
 *                                       never joins it and sleeps for 60 s
 *   reliability_prog deadlock           2 GPUs of one process (ncclCommInitAll):
 *                                       GPU 0 runs an all-reduce and waits for
 *                                       it; GPU 1's rank never joins (a deadlock)
 *   reliability_prog long MIB DIR       one all-reduce of MIB MiB over every GPU
 *                                       it sees (ncclCommInitAll), issued, then
 *                                       DIR/pid.SERVER written, then waited for:
 *                                       one long stretch of simulation
 *
 * Real time comes from the system call: the program's clocks read simulated time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <nccl.h>
#include "real_sleep.h"

static double real_seconds(void)
{
    struct timespec ts;
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int server(void)
{
    const char *s = getenv("HYSIM_SERVER");
    return s ? atoi(s) : 0;
}

#define CUDA_OK(call)                                                                     \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) {                                                          \
            fprintf(stderr, "reliability_prog: %s: %s\n", #call, cudaGetErrorString(e_)); \
            return 1;                                                                     \
        }                                                                                 \
    } while (0)

#define NCCL_OK(call)                                                                     \
    do {                                                                                  \
        ncclResult_t r_ = (call);                                                         \
        if (r_ != ncclSuccess) {                                                          \
            fprintf(stderr, "reliability_prog: %s: %s\n", #call, ncclGetErrorString(r_)); \
            return 1;                                                                     \
        }                                                                                 \
    } while (0)

static int busy(double seconds, const char *dir)
{
    void *p;
    CUDA_OK(cudaSetDevice(0));
    CUDA_OK(cudaMalloc(&p, 1 << 20));
    CUDA_OK(cudaDeviceSynchronize());
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/pid.%d", dir, server());
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
        perror(path);
        return 1;
    }
    volatile unsigned long spin = 0;
    double end = real_seconds() + seconds;
    while (real_seconds() < end)
        for (int i = 0; i < 100000; i++)
            spin = spin + (unsigned long)i;
    CUDA_OK(cudaFree(p));
    return 0;
}

static int stall(void)
{
    ncclUniqueId id;
    memset(&id, 0x5a, sizeof id); /* both ranks use the same id, as if it had been broadcast */
    int rank = server();
    ncclComm_t comm;
    float *buf;
    CUDA_OK(cudaSetDevice(0));
    CUDA_OK(cudaMalloc((void **)&buf, 1 << 20));
    NCCL_OK(ncclCommInitRank(&comm, 2, id, rank));
    if (rank == 0) {
        NCCL_OK(ncclAllReduce(buf, buf, 1 << 18, ncclFloat, ncclSum, comm, 0));
        CUDA_OK(cudaStreamSynchronize(0));
        fprintf(stderr, "reliability_prog: rank 0's all-reduce completed without rank 1\n");
        return 1;
    }
    double end = real_seconds() + 60;
    while (real_seconds() < end)
        real_sleep_us(10000);
    return 0;
}

static int deadlock(void)
{
    ncclComm_t comms[2];
    int devs[2] = {0, 1};
    float *buf;
    NCCL_OK(ncclCommInitAll(comms, 2, devs));
    CUDA_OK(cudaSetDevice(0));
    CUDA_OK(cudaMalloc((void **)&buf, 1 << 20));
    NCCL_OK(ncclAllReduce(buf, buf, 1 << 18, ncclFloat, ncclSum, comms[0], 0));
    CUDA_OK(cudaStreamSynchronize(0));
    fprintf(stderr, "reliability_prog: GPU 0's all-reduce completed without GPU 1's rank\n");
    return 1;
}

static int long_allreduce(double mib, const char *dir)
{
    int n;
    CUDA_OK(cudaGetDeviceCount(&n));
    ncclComm_t *comms = calloc((size_t)n, sizeof *comms);
    float **bufs = calloc((size_t)n, sizeof *bufs);
    size_t count = (size_t)(mib * 1048576.0) / sizeof(float);
    if (!comms || !bufs || count == 0) {
        fprintf(stderr, "reliability_prog: out of memory or an empty all-reduce\n");
        return 1;
    }
    NCCL_OK(ncclCommInitAll(comms, n, NULL));
    for (int d = 0; d < n; d++) {
        CUDA_OK(cudaSetDevice(d));
        CUDA_OK(cudaMalloc((void **)&bufs[d], count * sizeof(float)));
    }
    NCCL_OK(ncclGroupStart());
    for (int d = 0; d < n; d++)
        NCCL_OK(ncclAllReduce(bufs[d], bufs[d], count, ncclFloat, ncclSum, comms[d], 0));
    NCCL_OK(ncclGroupEnd());
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/pid.%d", dir, server());
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
        perror(path);
        return 1;
    }
    for (int d = 0; d < n; d++) {
        CUDA_OK(cudaSetDevice(d));
        CUDA_OK(cudaDeviceSynchronize());
    }
    fprintf(stderr, "reliability_prog: the all-reduce of %.0f MiB over %d GPUs completed\n", mib, n);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "busy"))
        return busy(atof(argv[2]), argv[3]);
    if (argc == 2 && !strcmp(argv[1], "stall"))
        return stall();
    if (argc == 2 && !strcmp(argv[1], "deadlock"))
        return deadlock();
    if (argc == 4 && !strcmp(argv[1], "long"))
        return long_allreduce(atof(argv[2]), argv[3]);
    fprintf(stderr, "usage: reliability_prog busy SECONDS DIR | stall | deadlock | long MIB DIR\n");
    return 2;
}
