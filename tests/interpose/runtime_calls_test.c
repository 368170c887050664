/*
 * The runtime calls beyond launches, copies, streams and events
 * (interpose/cudart_{mem_pools,memory,devices,streams,functions,per_thread}.c)
 * against the fake hysimd: an ordinary C program linked to the replacement
 * libraries, run by run_with_daemon.sh with HYSIM_HOST_TIME=zero (so a Wait
 * moves the host clock by exactly the fake daemon's 5 ms and nothing else
 * does). Exit status 0 when every check passed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#define WAIT_NS ((uint64_t)5000000) /* the fake daemon's answer to a Wait */
#define GIB     ((size_t)1 << 30)
#define MEMORY  (80 * GIB) /* the fake daemon's GPUs */

void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaUnregisterFatBinary(void **fatCubinHandle);
void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress, const char *deviceName, int ext,
                       size_t size, int constant, int global);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize);
/* The per-thread default stream entry points (declared only with CUDA_API_PER_THREAD_DEFAULT_STREAM). */
cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream);
cudaError_t cudaStreamGetFlags_ptsz(cudaStream_t hStream, unsigned int *flags);

static int failures;

#define HS_CHECK_COUNTS
#include "test_check.h"
#include "cuda_test_check.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The fake daemon's log: the lines containing needle, counted. */
static int log_count(const char *needle)
{
    const char *path = getenv("HYSIM_TEST_LOG");
    FILE *f = path ? fopen(path, "r") : NULL;
    char line[1024];
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        n += strstr(line, needle) != NULL;
    if (f)
        fclose(f);
    return n;
}

static void kernel_stub(void) {}
static void unregistered_stub(void) {}

static uint64_t pool_u64(cudaMemPool_t pool, enum cudaMemPoolAttr attr)
{
    uint64_t v = UINT64_MAX;
    CHECK_CUDA(cudaMemPoolGetAttribute(pool, attr, &v), cudaSuccess);
    return v;
}

static void test_pools(void)
{
    cudaMemPool_t pool0, pool1, cur, mine;
    CHECK_CUDA(cudaDeviceGetDefaultMemPool(&pool0, 0), cudaSuccess);
    CHECK_CUDA(cudaDeviceGetDefaultMemPool(&pool1, 1), cudaSuccess);
    CHECK_CUDA(cudaDeviceGetMemPool(&cur, 0), cudaSuccess);
    CHECK(cur == pool0 && pool0 != pool1, "current %p, default pools %p %p", (void *)cur, (void *)pool0, (void *)pool1);
    CHECK_CUDA(cudaDeviceGetDefaultMemPool(&cur, 2), cudaErrorInvalidDevice);

    CHECK(pool_u64(pool0, cudaMemPoolAttrReleaseThreshold) == 0, "default release threshold");
    uint64_t threshold = GIB;
    CHECK_CUDA(cudaMemPoolSetAttribute(pool0, cudaMemPoolAttrReleaseThreshold, &threshold), cudaSuccess);
    CHECK(pool_u64(pool0, cudaMemPoolAttrReleaseThreshold) == GIB, "release threshold after setting it");
    int reuse = 0;
    CHECK_CUDA(cudaMemPoolSetAttribute(pool0, cudaMemPoolReuseAllowOpportunistic, &reuse), cudaSuccess);
    reuse = 7;
    CHECK_CUDA(cudaMemPoolGetAttribute(pool0, cudaMemPoolReuseAllowOpportunistic, &reuse), cudaSuccess);
    CHECK(reuse == 0, "reuse attribute %d", reuse);

    /* Pools allocate from the device's capacity, which cudaMalloc shares. */
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreate(&s), cudaSuccess);
    void *a, *big = (void *)1, *plain;
    CHECK_CUDA(cudaMallocAsync(&a, 1000, s), cudaSuccess);
    CHECK(pool_u64(pool0, cudaMemPoolAttrUsedMemCurrent) == 1024, "used after 1000 B");
    CHECK(pool_u64(pool0, cudaMemPoolAttrReservedMemCurrent) == 1024, "reserved after 1000 B");
    CHECK_CUDA(cudaMalloc(&plain, GIB), cudaSuccess);
    size_t free_b, total;
    CHECK_CUDA(cudaMemGetInfo(&free_b, &total), cudaSuccess);
    CHECK(free_b == MEMORY - GIB - 1024, "free %zu", free_b);
    CHECK_CUDA(cudaMallocAsync(&big, 79 * GIB, s), cudaErrorMemoryAllocation);
    CHECK(big == NULL, "pointer after a failed cudaMallocAsync %p", big);
    CHECK_CUDA(cudaFreeAsync(a, s), cudaSuccess);
    CHECK_CUDA(cudaFreeAsync(a, s), cudaErrorInvalidValue);
    CHECK(pool_u64(pool0, cudaMemPoolAttrUsedMemCurrent) == 0, "used after cudaFreeAsync");
    CHECK(pool_u64(pool0, cudaMemPoolAttrUsedMemHigh) == 1024, "used high");
    uint64_t zero = 0, five = 5;
    CHECK_CUDA(cudaMemPoolSetAttribute(pool0, cudaMemPoolAttrUsedMemHigh, &five), cudaErrorInvalidValue);
    CHECK_CUDA(cudaMemPoolSetAttribute(pool0, cudaMemPoolAttrUsedMemCurrent, &zero), cudaErrorInvalidValue);
    CHECK_CUDA(cudaMemPoolSetAttribute(pool0, cudaMemPoolAttrUsedMemHigh, &zero), cudaSuccess);
    CHECK(pool_u64(pool0, cudaMemPoolAttrUsedMemHigh) == 0, "used high after a reset");
    CHECK_CUDA(cudaFree(plain), cudaSuccess);

    /* A pool of device 1, made current there, and cudaFree of a pool's allocation. */
    struct cudaMemPoolProps props = {0};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 1;
    CHECK_CUDA(cudaMemPoolCreate(&mine, &props), cudaSuccess);
    void *c;
    CHECK_CUDA(cudaMallocFromPoolAsync(&c, 512, mine, s), cudaSuccess);
    struct cudaPointerAttributes pa;
    CHECK_CUDA(cudaPointerGetAttributes(&pa, c), cudaSuccess);
    CHECK(pa.type == cudaMemoryTypeDevice && pa.device == 1, "pool allocation on device %d", pa.device);
    CHECK_CUDA(cudaDeviceSetMemPool(0, mine), cudaErrorInvalidValue);
    CHECK_CUDA(cudaDeviceSetMemPool(1, mine), cudaSuccess);
    CHECK_CUDA(cudaDeviceGetMemPool(&cur, 1), cudaSuccess);
    CHECK(cur == mine, "device 1's current pool");
    CHECK_CUDA(cudaMemPoolDestroy(mine), cudaSuccess); /* c outlives it */
    CHECK_CUDA(cudaDeviceGetMemPool(&cur, 1), cudaSuccess);
    CHECK(cur == pool1, "device 1's current pool after its destruction");
    CHECK_CUDA(cudaMemPoolGetAttribute(mine, cudaMemPoolAttrUsedMemCurrent, &five), cudaErrorInvalidValue);
    CHECK_CUDA(cudaFree(c), cudaSuccess);
    CHECK_CUDA(cudaMemPoolDestroy(pool0), cudaErrorInvalidValue);

    CHECK_CUDA(cudaSetDevice(1), cudaSuccess);
    cudaStream_t s1;
    CHECK_CUDA(cudaStreamCreate(&s1), cudaSuccess);
    CHECK_CUDA(cudaSetDevice(0), cudaSuccess);
    CHECK_CUDA(cudaMallocAsync(&a, 4096, s1), cudaSuccess); /* the stream's device, not the current one */
    CHECK(pool_u64(pool1, cudaMemPoolAttrUsedMemCurrent) == 4096, "device 1's pool");
    CHECK_CUDA(cudaFree(a), cudaSuccess);
    CHECK(pool_u64(pool1, cudaMemPoolAttrUsedMemCurrent) == 0, "device 1's pool after cudaFree");
    CHECK_CUDA(cudaStreamDestroy(s1), cudaSuccess);
    CHECK_CUDA(cudaStreamDestroy(s), cudaSuccess);
}

static void test_peers_and_pointers(void)
{
    int can = -1;
    CHECK_CUDA(cudaDeviceCanAccessPeer(&can, 0, 1), cudaSuccess);
    CHECK(can == 1, "0 → 1: %d", can);
    CHECK_CUDA(cudaDeviceCanAccessPeer(&can, 1, 1), cudaSuccess);
    CHECK(can == 0, "1 → 1: %d", can);
    CHECK_CUDA(cudaDeviceCanAccessPeer(&can, 0, 2), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaDeviceEnablePeerAccess(1, 0), cudaSuccess);
    CHECK_CUDA(cudaDeviceEnablePeerAccess(1, 0), cudaErrorPeerAccessAlreadyEnabled);
    CHECK_CUDA(cudaDeviceEnablePeerAccess(0, 0), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaDeviceEnablePeerAccess(1, 1), cudaErrorInvalidValue);
    CHECK_CUDA(cudaDeviceDisablePeerAccess(1), cudaSuccess);
    CHECK_CUDA(cudaDeviceDisablePeerAccess(1), cudaErrorPeerAccessNotEnabled);

    void *d0, *d1;
    CHECK_CUDA(cudaMalloc(&d0, 8 << 20), cudaSuccess);
    CHECK_CUDA(cudaSetDevice(1), cudaSuccess);
    CHECK_CUDA(cudaMalloc(&d1, 8 << 20), cudaSuccess);
    CHECK_CUDA(cudaSetDevice(0), cudaSuccess);
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreate(&s), cudaSuccess);
    CHECK_CUDA(cudaMemcpyPeer(d1, 1, d0, 0, 1 << 20), cudaSuccess);
    CHECK_CUDA(cudaMemcpyPeerAsync(d0, 0, d1, 1, 2 << 20, s), cudaSuccess);
    CHECK_CUDA(cudaMemcpyPeer(d1, 0, d0, 0, 1 << 20), cudaErrorInvalidValue);
    CHECK_CUDA(cudaMemcpyPeer(d1, 5, d0, 0, 1 << 20), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaStreamSynchronize(s), cudaSuccess);
    CHECK(log_count("copy kind=D2D bytes=1048576 ") == 1, "the peer copy");
    CHECK(log_count("copy kind=D2D bytes=2097152 ") == 1, "the asynchronous peer copy");

    struct cudaPointerAttributes pa;
    CHECK_CUDA(cudaPointerGetAttributes(&pa, (char *)d1 + 100), cudaSuccess);
    CHECK(pa.type == cudaMemoryTypeDevice && pa.device == 1 && pa.devicePointer == (char *)d1 + 100 &&
              pa.hostPointer == NULL,
          "device pointer: type %d device %d", pa.type, pa.device);
    char *pinned;
    CHECK_CUDA(cudaMallocHost((void **)&pinned, 8192), cudaSuccess);
    CHECK_CUDA(cudaPointerGetAttributes(&pa, pinned + 4000), cudaSuccess);
    CHECK(pa.type == cudaMemoryTypeHost && pa.hostPointer == pinned + 4000 && pa.devicePointer == pinned + 4000,
          "pinned pointer: type %d", pa.type);
    CHECK_CUDA(cudaFreeHost(pinned), cudaSuccess);
    int local;
    CHECK_CUDA(cudaPointerGetAttributes(&pa, &local), cudaSuccess);
    CHECK(pa.type == cudaMemoryTypeUnregistered && pa.device == -2 && pa.hostPointer == &local &&
              pa.devicePointer == NULL,
          "host pointer: type %d device %d", pa.type, pa.device);
    CHECK_CUDA(cudaPointerGetAttributes(NULL, &local), cudaErrorInvalidValue);
    CHECK_CUDA(cudaStreamDestroy(s), cudaSuccess);
    CHECK_CUDA(cudaFree(d0), cudaSuccess);
    CHECK_CUDA(cudaFree(d1), cudaSuccess);
}

static void host_fn(void *arg) { *(uint64_t *)arg = now_ns(); }

static cudaStream_t cb_stream;
static cudaError_t cb_status = cudaErrorUnknown;
static void CUDART_CB callback(cudaStream_t stream, cudaError_t status, void *arg)
{
    cb_stream = stream;
    cb_status = status;
    *(uint64_t *)arg = now_ns();
}

static void test_streams(void)
{
    int least = 1, greatest = 1, p = 1, dev = -1;
    unsigned flags = 9;
    CHECK_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest), cudaSuccess);
    CHECK(least == 0 && greatest == -5, "range %d..%d", least, greatest);
    cudaStream_t s, t;
    CHECK_CUDA(cudaSetDevice(1), cudaSuccess);
    CHECK_CUDA(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, -3), cudaSuccess);
    CHECK_CUDA(cudaSetDevice(0), cudaSuccess);
    CHECK_CUDA(cudaStreamCreateWithPriority(&t, cudaStreamDefault, -10), cudaSuccess);
    CHECK_CUDA(cudaStreamGetPriority(s, &p), cudaSuccess);
    CHECK(p == -3, "priority %d", p);
    CHECK_CUDA(cudaStreamGetPriority(t, &p), cudaSuccess);
    CHECK(p == -5, "clamped priority %d", p);
    CHECK_CUDA(cudaStreamGetFlags(s, &flags), cudaSuccess);
    CHECK(flags == cudaStreamNonBlocking, "flags %u", flags);
    CHECK_CUDA(cudaStreamGetDevice(s, &dev), cudaSuccess);
    CHECK(dev == 1, "device %d", dev);
    CHECK_CUDA(cudaStreamGetDevice(NULL, &dev), cudaSuccess);
    CHECK(dev == 0, "legacy stream's device %d", dev);
    CHECK_CUDA(cudaStreamGetFlags_ptsz(NULL, &flags), cudaSuccess);
    CHECK(flags == cudaStreamDefault, "per-thread stream's flags %u", flags);
    CHECK_CUDA(cudaStreamGetPriority((cudaStream_t)&p, &p), cudaErrorInvalidResourceHandle);

    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusActive;
    CHECK_CUDA(cudaStreamIsCapturing(s, &cs), cudaSuccess);
    CHECK(cs == cudaStreamCaptureStatusNone, "capture status %d", cs);
    unsigned long long id = 99;
    cs = cudaStreamCaptureStatusActive;
    CHECK_CUDA(cudaStreamGetCaptureInfo(t, &cs, &id, NULL, NULL, NULL, NULL), cudaSuccess);
    CHECK(cs == cudaStreamCaptureStatusNone && id == 0, "capture info %d %llu", cs, id);
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    CHECK_CUDA(cudaThreadExchangeStreamCaptureMode(&mode), cudaSuccess);
    CHECK(mode == cudaStreamCaptureModeGlobal, "previous mode %d", mode);
    CHECK_CUDA(cudaThreadExchangeStreamCaptureMode(&mode), cudaSuccess);
    CHECK(mode == cudaStreamCaptureModeRelaxed, "exchanged mode %d", mode);

    /* A host function runs once the stream drained: one stream Wait, 5 ms of simulated time. */
    int waits = log_count("cond=stream_idle");
    uint64_t t0 = now_ns(), ran = 0;
    CHECK_CUDA(cudaLaunchHostFunc(t, host_fn, &ran), cudaSuccess);
    CHECK(ran == t0 + WAIT_NS, "host function ran at %" PRIu64 ", expected %" PRIu64, ran, t0 + WAIT_NS);
    CHECK_CUDA(cudaLaunchHostFunc(t, NULL, NULL), cudaErrorInvalidValue);
    ran = 0;
    CHECK_CUDA(cudaStreamAddCallback(s, callback, &ran, 0), cudaSuccess);
    CHECK(ran == t0 + 2 * WAIT_NS && cb_stream == s && cb_status == cudaSuccess, "callback at %" PRIu64, ran);
    CHECK_CUDA(cudaStreamAddCallback(s, callback, &ran, 1), cudaErrorInvalidValue);
    CHECK(log_count("cond=stream_idle") == waits + 2, "stream waits %d, expected %d", log_count("cond=stream_idle"),
          waits + 2);

    /* The per-thread default stream is its own stream, not the legacy one (stream 0). */
    void *d;
    CHECK_CUDA(cudaMalloc(&d, 4096), cudaSuccess);
    CHECK_CUDA(cudaMemsetAsync_ptsz(d, 0, 777, NULL), cudaSuccess);
    CHECK_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    CHECK(log_count("memset bytes=777") == 1 && log_count("stream=0 memset bytes=777") == 0,
          "memset on the per-thread stream");
    CHECK_CUDA(cudaFree(d), cudaSuccess);
    CHECK_CUDA(cudaStreamDestroy(s), cudaSuccess);
    CHECK_CUDA(cudaStreamDestroy(t), cudaSuccess);
}

static void test_functions(void)
{
    static char fatbin[64];
    static void **module; /* kept: the module stays registered */
    module = __cudaRegisterFatBinary(fatbin);
    __cudaRegisterFunction(module, (const char *)kernel_stub, "_Z1kv", "_Z1kv", -1, NULL, NULL, NULL, NULL, NULL);
    const void *k = (const void *)kernel_stub;
    struct cudaFuncAttributes fa;
    CHECK_CUDA(cudaFuncGetAttributes(&fa, k), cudaSuccess);
    CHECK(fa.maxThreadsPerBlock == 1024 && fa.numRegs == 32 && fa.maxDynamicSharedSizeBytes == 49152 &&
              fa.binaryVersion == 90 && fa.sharedSizeBytes == 0,
          "attributes: %d threads, %d regs, %d dynamic shared, version %d", fa.maxThreadsPerBlock, fa.numRegs,
          fa.maxDynamicSharedSizeBytes, fa.binaryVersion);
    CHECK_CUDA(cudaFuncGetAttributes(&fa, (const void *)unregistered_stub), cudaErrorInvalidDeviceFunction);

    /* Hopper: 64 warps, 32 blocks and 228 KiB of shared memory per SM; 1 KiB reserved per block;
       more than 48 KiB of dynamic shared memory only after opting in. */
    static const struct {
        int block;
        size_t shared;
        int want;
    } occ[] = {{256, 0, 8},  {1024, 0, 2},    {32, 0, 32},     {96, 0, 21},
               {2048, 0, 0}, {128, 40000, 5}, {128, 60000, 0}, {128, 100000, 0}};
    for (size_t i = 0; i < sizeof occ / sizeof occ[0]; i++) {
        int n = -1;
        CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, occ[i].block, occ[i].shared), cudaSuccess);
        CHECK(n == occ[i].want, "block %d, shared %zu: %d blocks, expected %d", occ[i].block, occ[i].shared, n,
              occ[i].want);
    }
    CHECK_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 100000), cudaSuccess);
    CHECK_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 300000), cudaErrorInvalidValue);
    CHECK_CUDA(
        cudaFuncSetAttribute((const void *)unregistered_stub, cudaFuncAttributePreferredSharedMemoryCarveout, 50),
        cudaErrorInvalidDeviceFunction);
    int n = -1;
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&n, k, 128, 100000, cudaOccupancyDefault),
               cudaSuccess);
    CHECK(n == 2, "128 threads, 100000 B after raising the limit: %d", n);
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&n, k, 128, 0, 2), cudaErrorInvalidValue);
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, 0, 0), cudaErrorInvalidValue);
    CHECK_CUDA(cudaFuncGetAttributes(&fa, k), cudaSuccess);
    CHECK(fa.maxDynamicSharedSizeBytes == 100000, "dynamic shared after setting it: %d", fa.maxDynamicSharedSizeBytes);
}

static void test_devices(void)
{
    char id[32];
    int dev = -1, bus = -1;
    CHECK_CUDA(cudaDeviceGetPCIBusId(id, sizeof id, 1), cudaSuccess);
    CHECK(!strcmp(id, "0000:01:00.0"), "bus id %s", id);
    CHECK_CUDA(cudaDeviceGetAttribute(&bus, cudaDevAttrPciBusId, 1), cudaSuccess);
    CHECK(bus == 1, "cudaDevAttrPciBusId %d", bus);
    CHECK_CUDA(cudaDeviceGetByPCIBusId(&dev, id), cudaSuccess);
    CHECK(dev == 1, "device of %s: %d", id, dev);
    dev = -1;
    CHECK_CUDA(cudaDeviceGetByPCIBusId(&dev, "00:00.0"), cudaSuccess);
    CHECK(dev == 0, "device of 00:00.0: %d", dev);
    CHECK_CUDA(cudaDeviceGetByPCIBusId(&dev, "0000:02:00.0"), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaDeviceGetByPCIBusId(&dev, "bus one"), cudaErrorInvalidValue);
    CHECK_CUDA(cudaDeviceGetPCIBusId(id, sizeof id, 2), cudaErrorInvalidDevice);

    unsigned flags = 99;
    CHECK_CUDA(cudaGetDeviceFlags(&flags), cudaSuccess);
    CHECK(flags == 0, "initial flags %u", flags);
    CHECK_CUDA(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync | cudaDeviceMapHost), cudaSuccess);
    CHECK_CUDA(cudaGetDeviceFlags(&flags), cudaSuccess);
    CHECK(flags == (cudaDeviceScheduleBlockingSync | cudaDeviceMapHost), "flags %u", flags);
    CHECK_CUDA(cudaSetDeviceFlags(3), cudaErrorInvalidValue);
    CHECK_CUDA(cudaSetDeviceFlags(0x100), cudaErrorInvalidValue);
    CHECK_CUDA(cudaSetDevice(1), cudaSuccess);
    CHECK_CUDA(cudaGetDeviceFlags(&flags), cudaSuccess);
    CHECK(flags == 0, "device 1's flags %u", flags);
    CHECK_CUDA(cudaSetDevice(0), cudaSuccess);

    CHECK_CUDA(cudaProfilerStart(), cudaSuccess);
    CHECK_CUDA(cudaProfilerStop(), cudaSuccess);
    cudaIpcMemHandle_t handle; /* another process's view of this memory: not simulated */
    void *shared = NULL;
    CHECK_CUDA(cudaMalloc(&shared, 256), cudaSuccess);
    CHECK_CUDA(cudaIpcGetMemHandle(&handle, shared), cudaErrorNotSupported);
    CHECK_CUDA(cudaGetLastError(), cudaErrorNotSupported);
    CHECK_CUDA(cudaFree(shared), cudaSuccess);
}

/* A 256-byte __device__ variable, registered as nvcc's start-up code does. */
static char shadow[256];

static void test_symbols(void)
{
    static char fatbin[64];
    void **module = __cudaRegisterFatBinary(fatbin);
    __cudaRegisterVar(module, shadow, "v", "v", 0, sizeof shadow, 0, 0);
    size_t size = 0, free0, free1, total;
    CHECK_CUDA(cudaGetSymbolSize(&size, shadow), cudaSuccess);
    CHECK(size == 256, "symbol size %zu", size);
    CHECK_CUDA(cudaMemGetInfo(&free0, &total), cudaSuccess);
    void *a0, *a0again, *a1;
    CHECK_CUDA(cudaGetSymbolAddress(&a0, shadow), cudaSuccess);
    CHECK_CUDA(cudaGetSymbolAddress(&a0again, shadow), cudaSuccess);
    CHECK_CUDA(cudaMemGetInfo(&free1, &total), cudaSuccess);
    CHECK(a0 == a0again && free0 - free1 == 256, "one 256-byte allocation on first use: %zu bytes", free0 - free1);
    CHECK_CUDA(cudaSetDevice(1), cudaSuccess);
    CHECK_CUDA(cudaGetSymbolAddress(&a1, shadow), cudaSuccess);
    CHECK_CUDA(cudaSetDevice(0), cudaSuccess);
    struct cudaPointerAttributes pa;
    CHECK_CUDA(cudaPointerGetAttributes(&pa, a1), cudaSuccess);
    CHECK(a1 != a0 && pa.type == cudaMemoryTypeDevice && pa.device == 1, "device 1's copy on device %d", pa.device);

    char host[64];
    memset(host, 0x5a, sizeof host);
    CHECK_CUDA(cudaMemcpyToSymbol(shadow, host, 48, 16, cudaMemcpyHostToDevice), cudaSuccess);
    CHECK_CUDA(cudaMemcpyToSymbol(shadow, host, 48, 240, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    CHECK_CUDA(cudaMemcpyFromSymbol(host, shadow, 40, 0, cudaMemcpyDeviceToHost), cudaSuccess);
    CHECK(host[0] == 0 && host[15] == 0 && host[16] == 0x5a && host[39] == 0x5a && host[40] == 0x5a,
          "device-to-host from a symbol reads what the host copy put there, zeros before it");
    CHECK_CUDA(cudaMemcpyFromSymbol(host, shadow, 40, 0, cudaMemcpyHostToDevice), cudaErrorInvalidMemcpyDirection);
    CHECK_CUDA(cudaMemcpyToSymbol(host, host, 4, 0, cudaMemcpyHostToDevice), cudaErrorInvalidSymbol);
    CHECK(log_count("copy kind=H2D bytes=48 ") == 1 && log_count("copy kind=D2H bytes=40 ") == 1, "one copy each way");
    __cudaUnregisterFatBinary(module); /* as nvcc's exit-time code does */
}

int main(void)
{
    test_pools();
    test_peers_and_pointers();
    test_streams();
    test_functions();
    test_devices();
    test_symbols();
    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("runtime calls: ok\n");
    return 0;
}
