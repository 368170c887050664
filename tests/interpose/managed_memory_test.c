/*
 * Managed memory under hysim (interpose/cudart/cudart_managed.c, managed_memory.c):
 * an ordinary C program built against the CUDA 13 and NCCL headers, linked
 * to the replacement libraries, run by `hysim run managed_memory.yaml`
 * (2 GPUs, zero host time). It checks that a managed allocation is host
 * memory the program reads and writes, that it is charged to its device's
 * capacity and given back by cudaFree, what cudaPointerGetAttributes says of
 * it, that copies (captured ones when their graph runs) move its data,
 * that a prefetch to the device and back takes exactly the time of a
 * cudaMemcpyAsync of the same bytes each way, what advice and prefetches
 * leave in the range attributes, and that NCCL takes managed buffers of the
 * communicator's GPU.
 * Prints "managed memory: ok" when every check passed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

static int failures;

#define HS_CHECK_COUNTS
#include "test_check.h"
#include "cuda_test_check.h"

#define CHECK_NCCL(call, want)                                                    \
    do {                                                                          \
        ncclResult_t got_ = (call);                                               \
        CHECK(got_ == (want), "%s returned %s", #call, ncclGetErrorString(got_)); \
    } while (0)

#define N (4u << 20) /* bytes: a multiple of the allocation granule, so the accounting is exact */

static size_t free_bytes(void)
{
    size_t f = 0, t = 0;
    CHECK_CUDA(cudaMemGetInfo(&f, &t), cudaSuccess);
    return f;
}

static struct cudaMemLocation device_loc(int d) { return (struct cudaMemLocation){cudaMemLocationTypeDevice, d}; }
static struct cudaMemLocation host_loc(void) { return (struct cudaMemLocation){cudaMemLocationTypeHost, 0}; }

static int range_int(enum cudaMemRangeAttribute a, const void *p)
{
    int v = -100;
    CHECK_CUDA(cudaMemRangeGetAttribute(&v, sizeof v, a, p, 64), cudaSuccess);
    return v;
}

/* Allocation, host access, pointer attributes and accounting. */
static void test_allocation(void)
{
    int attr = 0;
    CHECK_CUDA(cudaDeviceGetAttribute(&attr, cudaDevAttrManagedMemory, 0), cudaSuccess);
    CHECK(attr == 1, "cudaDevAttrManagedMemory %d", attr);
    CHECK_CUDA(cudaSetDevice(1), cudaSuccess);
    size_t before = free_bytes(), total = 0, f = 0;
    uint32_t *p = NULL;
    CHECK_CUDA(cudaMallocManaged((void **)&p, N, cudaMemAttachGlobal), cudaSuccess);
    CHECK(free_bytes() == before - N, "free %zu after a %u-byte allocation, %zu before", free_bytes(), N, before);
    for (uint32_t i = 0; i < N / 4; i++)
        p[i] = i * 2654435761u;
    uint32_t bad = 0;
    for (uint32_t i = 0; i < N / 4; i++)
        bad += p[i] != i * 2654435761u;
    CHECK(bad == 0, "%u words read back wrong", bad);

    struct cudaPointerAttributes a;
    CHECK_CUDA(cudaPointerGetAttributes(&a, p + 1000), cudaSuccess);
    CHECK(a.type == cudaMemoryTypeManaged && a.device == 1 && a.devicePointer == (void *)(p + 1000) &&
              a.hostPointer == (void *)(p + 1000),
          "type %d device %d", (int)a.type, a.device);

    void *q = NULL;
    CHECK_CUDA(cudaMallocManaged(&q, N, cudaMemAttachSingle), cudaErrorInvalidValue);
    CHECK_CUDA(cudaMallocManaged(&q, 0, cudaMemAttachGlobal), cudaErrorInvalidValue);
    CHECK_CUDA(cudaMemGetInfo(&f, &total), cudaSuccess);
    CHECK_CUDA(cudaMallocManaged(&q, f + 4096, cudaMemAttachHost), cudaErrorMemoryAllocation);
    CHECK(cudaGetLastError() == cudaErrorMemoryAllocation, "the failure is the last error");
    CHECK(free_bytes() == f, "a failed allocation changed free memory");
    CHECK_CUDA(cudaMallocManaged(&q, N, cudaMemAttachHost), cudaSuccess); /* fits: free memory covers it */
    CHECK(free_bytes() == before - 2 * N, "two allocations");

    CHECK_CUDA(cudaFree(p + 1), cudaErrorInvalidValue); /* not an allocation's start */
    CHECK_CUDA(cudaFree(p), cudaSuccess);
    CHECK_CUDA(cudaFree(q), cudaSuccess);
    CHECK(free_bytes() == before, "free %zu after cudaFree, %zu before", free_bytes(), before);
    CHECK_CUDA(cudaPointerGetAttributes(&a, p), cudaSuccess);
    CHECK(a.type == cudaMemoryTypeUnregistered, "a freed managed pointer is type %d", (int)a.type);
    CHECK_CUDA(cudaSetDevice(0), cudaSuccess);
}

/* Copies and memsets: managed data moves, plain device memory reads as zeros. */
static void test_copies(void)
{
    uint8_t *m1, *m2, *dev, host[256];
    CHECK_CUDA(cudaMallocManaged((void **)&m1, 4096, cudaMemAttachGlobal), cudaSuccess);
    CHECK_CUDA(cudaMallocManaged((void **)&m2, 4096, cudaMemAttachGlobal), cudaSuccess);
    CHECK_CUDA(cudaMalloc((void **)&dev, 4096), cudaSuccess);
    for (int i = 0; i < 256; i++)
        host[i] = (uint8_t)(i ^ 0x5a);
    CHECK_CUDA(cudaMemcpy(m1 + 100, host, 256, cudaMemcpyDefault), cudaSuccess);
    CHECK(memcmp(m1 + 100, host, 256) == 0, "host → managed");
    CHECK_CUDA(cudaMemcpy(m2, m1 + 100, 256, cudaMemcpyDefault), cudaSuccess);
    CHECK(memcmp(m2, host, 256) == 0, "managed → managed");
    uint8_t back[256] = {0};
    CHECK_CUDA(cudaMemcpy(back, m2, 256, cudaMemcpyDeviceToHost), cudaSuccess);
    CHECK(memcmp(back, host, 256) == 0, "managed → host");
    CHECK_CUDA(cudaMemcpy(dev, m2, 256, cudaMemcpyDefault), cudaSuccess);
    CHECK_CUDA(cudaMemcpy(m2, dev, 256, cudaMemcpyDefault), cudaSuccess);
    CHECK(m2[0] == 0 && m2[255] == 0, "device → managed reads zeros");
    CHECK_CUDA(cudaMemset(m1, 0x7f, 64), cudaSuccess);
    CHECK(m1[0] == 0x7f && m1[63] == 0x7f && m1[64] == 0, "cudaMemset on managed memory");
    CHECK_CUDA(cudaMemcpy(m1 + 4000, host, 256, cudaMemcpyDefault), cudaErrorInvalidValue); /* past its end */

    /* A captured copy moves the data when its graph runs, not when it is captured. */
    cudaStream_t s;
    cudaGraph_t g;
    cudaGraphExec_t x;
    CHECK_CUDA(cudaStreamCreate(&s), cudaSuccess);
    CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    CHECK_CUDA(cudaMemcpyAsync(m2, host, 256, cudaMemcpyDefault, s), cudaSuccess);
    CHECK_CUDA(cudaStreamEndCapture(s, &g), cudaSuccess);
    CHECK(m2[1] == 0, "a captured copy moved data");
    CHECK_CUDA(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
    CHECK_CUDA(cudaGraphLaunch(x, s), cudaSuccess);
    CHECK_CUDA(cudaStreamSynchronize(s), cudaSuccess);
    CHECK(memcmp(m2, host, 256) == 0, "the graph's copy did not move the data");
    CHECK_CUDA(cudaGraphExecDestroy(x), cudaSuccess);
    CHECK_CUDA(cudaGraphDestroy(g), cudaSuccess);
    CHECK_CUDA(cudaStreamDestroy(s), cudaSuccess);
    CHECK_CUDA(cudaFree(dev), cudaSuccess);
    CHECK_CUDA(cudaFree(m2), cudaSuccess);
    CHECK_CUDA(cudaFree(m1), cudaSuccess);
}

static float elapsed(cudaEvent_t a, cudaEvent_t b)
{
    float ms = -1;
    CHECK_CUDA(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
    return ms;
}

/* A prefetch there and back takes what a cudaMemcpyAsync of the same bytes each way takes. */
static void test_prefetch(void)
{
    cudaStream_t s;
    cudaEvent_t ev[6];
    CHECK_CUDA(cudaStreamCreate(&s), cudaSuccess);
    for (int i = 0; i < 6; i++)
        CHECK_CUDA(cudaEventCreate(&ev[i]), cudaSuccess);
    uint32_t *m, *dev, *pinned;
    CHECK_CUDA(cudaMallocManaged((void **)&m, N, cudaMemAttachGlobal), cudaSuccess);
    CHECK_CUDA(cudaMalloc((void **)&dev, N), cudaSuccess);
    CHECK_CUDA(cudaMallocHost((void **)&pinned, N), cudaSuccess);
    for (uint32_t i = 0; i < N / 4; i++)
        m[i] = i + 7;

    CHECK(range_int(cudaMemRangeAttributeLastPrefetchLocation, m) == cudaInvalidDeviceId, "never prefetched");
    CHECK_CUDA(cudaEventRecord(ev[0], s), cudaSuccess);
    CHECK_CUDA(cudaMemPrefetchAsync(m, N, device_loc(0), 0, s), cudaSuccess);
    CHECK_CUDA(cudaEventRecord(ev[1], s), cudaSuccess);
    CHECK(range_int(cudaMemRangeAttributeLastPrefetchLocation, m + 10) == 0, "prefetched to device 0");
    CHECK_CUDA(cudaMemPrefetchAsync(m, N, host_loc(), 0, s), cudaSuccess);
    CHECK_CUDA(cudaEventRecord(ev[2], s), cudaSuccess);
    CHECK_CUDA(cudaStreamSynchronize(s), cudaSuccess);
    CHECK(range_int(cudaMemRangeAttributeLastPrefetchLocation, m) == cudaCpuDeviceId, "prefetched to the host");
    CHECK(range_int(cudaMemRangeAttributeLastPrefetchLocationType, m) == cudaMemLocationTypeHost, "type host");
    uint32_t bad = 0;
    for (uint32_t i = 0; i < N / 4; i++)
        bad += m[i] != i + 7;
    CHECK(bad == 0, "%u words changed by the prefetches", bad);

    CHECK_CUDA(cudaEventRecord(ev[3], s), cudaSuccess);
    CHECK_CUDA(cudaMemcpyAsync(dev, pinned, N, cudaMemcpyHostToDevice, s), cudaSuccess);
    CHECK_CUDA(cudaEventRecord(ev[4], s), cudaSuccess);
    CHECK_CUDA(cudaMemcpyAsync(pinned, dev, N, cudaMemcpyDeviceToHost, s), cudaSuccess);
    CHECK_CUDA(cudaEventRecord(ev[5], s), cudaSuccess);
    CHECK_CUDA(cudaStreamSynchronize(s), cudaSuccess);
    float to_dev = elapsed(ev[0], ev[1]), to_host = elapsed(ev[1], ev[2]);
    float h2d = elapsed(ev[3], ev[4]), d2h = elapsed(ev[4], ev[5]);
    printf("prefetch %u bytes: to the device %.6f ms (H2D copy %.6f), to the host %.6f ms (D2H copy %.6f)\n", N,
           (double)to_dev, (double)h2d, (double)to_host, (double)d2h);
    CHECK(to_dev > 0 && to_dev == h2d, "to the device %.6f ms, H2D copy %.6f ms", (double)to_dev, (double)h2d);
    CHECK(to_host > 0 && to_host == d2h, "to the host %.6f ms, D2H copy %.6f ms", (double)to_host, (double)d2h);

    /* A batch of two: the first half to device 0, the second to the host; the time of both prefetches. */
    void *ptrs[2] = {m, (uint8_t *)m + N / 2};
    size_t sizes[2] = {N / 2, N / 2};
    struct cudaMemLocation locs[2] = {device_loc(0), host_loc()};
    size_t idxs[2] = {0, 1};
    CHECK_CUDA(cudaMemPrefetchBatchAsync(ptrs, sizes, 2, locs, idxs, 2, 0, s), cudaSuccess);
    CHECK_CUDA(cudaMemPrefetchBatchAsync(ptrs, sizes, 2, locs, idxs, 2, 0, NULL), cudaErrorInvalidValue);

    /* What a prefetch refuses. */
    CHECK_CUDA(cudaMemPrefetchAsync(dev, N, device_loc(0), 0, s), cudaErrorInvalidValue); /* not managed */
    CHECK_CUDA(cudaMemPrefetchAsync(m, N + 1, device_loc(0), 0, s), cudaErrorInvalidValue);
    CHECK_CUDA(cudaMemPrefetchAsync(m, N, device_loc(7), 0, s), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaMemPrefetchAsync(m, N, device_loc(0), 1, s), cudaErrorInvalidValue);

    /* Advice: recorded, answered by the range attributes. */
    CHECK(range_int(cudaMemRangeAttributePreferredLocation, m) == cudaInvalidDeviceId, "no preferred location");
    CHECK_CUDA(cudaMemAdvise(m, N, cudaMemAdviseSetPreferredLocation, device_loc(1)), cudaSuccess);
    CHECK_CUDA(cudaMemAdvise(m, N, cudaMemAdviseSetReadMostly, device_loc(0)), cudaSuccess);
    CHECK_CUDA(cudaMemAdvise(m, N, cudaMemAdviseSetAccessedBy, device_loc(1)), cudaSuccess);
    CHECK_CUDA(cudaMemAdvise(m, N, cudaMemAdviseSetAccessedBy, host_loc()), cudaSuccess);
    CHECK_CUDA(cudaMemAdvise(m, N, (enum cudaMemoryAdvise)42, device_loc(0)), cudaErrorInvalidValue);
    CHECK_CUDA(cudaMemAdvise(dev, N, cudaMemAdviseSetReadMostly, device_loc(0)), cudaErrorInvalidValue);
    CHECK(range_int(cudaMemRangeAttributePreferredLocation, m) == 1, "preferred device 1");
    CHECK(range_int(cudaMemRangeAttributePreferredLocationType, m) == cudaMemLocationTypeDevice, "preferred type");
    CHECK(range_int(cudaMemRangeAttributeReadMostly, m) == 1, "read mostly");
    int by[3] = {0, 0, 0};
    void *data[2] = {by, NULL};
    int rm = -1;
    data[1] = &rm;
    size_t dsizes[2] = {sizeof by, sizeof rm};
    enum cudaMemRangeAttribute attrs[2] = {cudaMemRangeAttributeAccessedBy, cudaMemRangeAttributeReadMostly};
    CHECK_CUDA(cudaMemAdvise(m, N, cudaMemAdviseUnsetReadMostly, device_loc(0)), cudaSuccess);
    CHECK_CUDA(cudaMemRangeGetAttributes(data, dsizes, attrs, 2, m, N), cudaSuccess);
    CHECK(by[0] == 1 && by[1] == cudaCpuDeviceId && by[2] == cudaInvalidDeviceId && rm == 0,
          "accessed by %d %d %d, read mostly %d", by[0], by[1], by[2], rm);
    CHECK_CUDA(cudaStreamAttachMemAsync(s, m, 0, cudaMemAttachSingle), cudaSuccess);
    CHECK_CUDA(cudaStreamAttachMemAsync(s, m, 16, cudaMemAttachSingle), cudaErrorInvalidValue);

    CHECK_CUDA(cudaStreamSynchronize(s), cudaSuccess);
    CHECK_CUDA(cudaFreeHost(pinned), cudaSuccess);
    CHECK_CUDA(cudaFree(dev), cudaSuccess);
    CHECK_CUDA(cudaFree(m), cudaSuccess);
    for (int i = 0; i < 6; i++)
        CHECK_CUDA(cudaEventDestroy(ev[i]), cudaSuccess);
    CHECK_CUDA(cudaStreamDestroy(s), cudaSuccess);
}

/* A 2-GPU all-reduce on managed buffers, each of its communicator's GPU; another GPU's is refused. */
static void test_nccl(void)
{
    enum { COUNT = 1 << 20 };
    ncclComm_t comm[2];
    cudaStream_t s[2];
    cudaEvent_t start, stop;
    float *buf[2];
    CHECK_NCCL(ncclCommInitAll(comm, 2, NULL), ncclSuccess);
    for (int d = 0; d < 2; d++) {
        CHECK_CUDA(cudaSetDevice(d), cudaSuccess);
        CHECK_CUDA(cudaStreamCreate(&s[d]), cudaSuccess);
        CHECK_CUDA(cudaMallocManaged((void **)&buf[d], COUNT * sizeof(float), cudaMemAttachGlobal), cudaSuccess);
    }
    CHECK_CUDA(cudaSetDevice(0), cudaSuccess);
    CHECK_CUDA(cudaEventCreate(&start), cudaSuccess);
    CHECK_CUDA(cudaEventCreate(&stop), cudaSuccess);
    CHECK_CUDA(cudaEventRecord(start, s[0]), cudaSuccess);
    CHECK_NCCL(ncclGroupStart(), ncclSuccess);
    for (int d = 0; d < 2; d++)
        CHECK_NCCL(ncclAllReduce(buf[d] + 16, buf[d] + 16, COUNT - 16, ncclFloat, ncclSum, comm[d], s[d]), ncclSuccess);
    CHECK_NCCL(ncclGroupEnd(), ncclSuccess);
    CHECK_CUDA(cudaEventRecord(stop, s[0]), cudaSuccess);
    for (int d = 0; d < 2; d++)
        CHECK_CUDA(cudaStreamSynchronize(s[d]), cudaSuccess);
    float ms = elapsed(start, stop);
    printf("all-reduce of %zu bytes on managed buffers: %.6f ms\n", (size_t)COUNT * sizeof(float), (double)ms);
    CHECK(ms > 0, "the all-reduce took %.6f ms", (double)ms);
    CHECK_NCCL(ncclAllReduce(buf[1], buf[1], COUNT, ncclFloat, ncclSum, comm[0], s[0]), ncclInvalidArgument);
    for (int d = 0; d < 2; d++) {
        CHECK_NCCL(ncclCommDestroy(comm[d]), ncclSuccess);
        CHECK_CUDA(cudaFree(buf[d]), cudaSuccess);
        CHECK_CUDA(cudaStreamDestroy(s[d]), cudaSuccess);
    }
}

/* Peak resident memory of this process, KiB (/proc/self/status VmHWM), or 0. */
static long peak_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}

/*
 * A prefetch to the host writes nothing on the host: 1 GiB of managed memory,
 * never touched, prefetched to the device and back, leaves the process's peak
 * resident memory where it was (a scratch buffer the copy zeroed would add 1 GiB).
 */
static void test_prefetch_leaves_host_alone(void)
{
    const size_t big = (size_t)1 << 30;
    char *m;
    CHECK_CUDA(cudaMallocManaged((void **)&m, big, cudaMemAttachGlobal), cudaSuccess);
    long before = peak_kib();
    CHECK_CUDA(cudaMemPrefetchAsync(m, big, device_loc(0), 0, NULL), cudaSuccess);
    CHECK_CUDA(cudaMemPrefetchAsync(m, big, host_loc(), 0, NULL), cudaSuccess);
    CHECK_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    long after = peak_kib();
    CHECK(before > 0 && after - before < 64 * 1024,
          "a 1 GiB prefetch and back raised the peak resident memory by %ld KiB", after - before);
    CHECK_CUDA(cudaFree(m), cudaSuccess);
}

int main(void)
{
    test_allocation();
    test_copies();
    test_prefetch();
    test_prefetch_leaves_host_alone();
    test_nccl();
    if (failures)
        return 1;
    printf("managed memory: ok\n");
    return 0;
}
