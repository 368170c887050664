/*
 * An ordinary C program against the CUDA 13 / NCCL 2.28 headers, linked to
 * the replacement libraries and run by run_with_daemon.sh under the fake
 * hysimd (fake_daemon.c), whose log ($HYSIM_TEST_LOG) it reads back to check
 * what went over the wire. `client_test CASE`; exit status 0 when every check
 * of the case passed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

/* The fake daemon's defaults (fake_daemon.c). */
#define WAIT_NS ((uint64_t)5000000)
#define GIB     ((size_t)1 << 30)
#define MEMORY  (80 * GIB)

/* nvcc's registration hooks (crt/host_runtime.h is C++ only). */
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
void __cudaUnregisterFatBinary(void **fatCubinHandle);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, cudaStream_t stream);
cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                               cudaStream_t stream);

static int failures, checks;

#define CHECK(cond, ...)                                                             \
    do {                                                                             \
        checks++;                                                                    \
        if (!(cond)) {                                                               \
            failures++;                                                              \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                     \
        }                                                                            \
    } while (0)

#include "cuda_test_check.h" /* CHECK_CUDA, on this file's CHECK */
#include "real_sleep.h"

#define CHECK_NCCL(call, want)                                                               \
    do {                                                                                     \
        ncclResult_t got_ = (call);                                                          \
        CHECK(got_ == (want), "%s returned %d, expected %d", #call, (int)got_, (int)(want)); \
    } while (0)

static dim3 d3(unsigned x, unsigned y, unsigned z)
{
    dim3 d = {x, y, z};
    return d;
}

static uint64_t ns_of(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* libc's clock, bypassing any interposed clock_gettime. */
static uint64_t raw_ns(clockid_t id)
{
    struct timespec ts;
    syscall(SYS_clock_gettime, id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void burn_cpu(uint64_t ns)
{
    uint64_t end = raw_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
    volatile uint64_t x = 0;
    while (raw_ns(CLOCK_THREAD_CPUTIME_ID) < end)
        for (int i = 0; i < 1000; i++)
            x += (uint64_t)i;
}

/* ---- the fake daemon's log ---- */

static char *read_log(void)
{
    const char *path = getenv("HYSIM_TEST_LOG");
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f)
        return strdup("");
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (len + 1 == cap)
            buf = realloc(buf, cap *= 2);
    }
    buf[len] = 0;
    fclose(f);
    return buf;
}

static int count_lines(const char *log, const char *needle)
{
    int n = 0;
    for (const char *line = log; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char *l = strndup(line, len);
        if (strstr(l, needle))
            n++;
        free(l);
        line += len + (end ? 1 : 0);
    }
    return n;
}

/* Value of `key` (a number) after needle on the last line containing it; -1 if none. */
static int64_t last_value(const char *log, const char *needle, const char *key)
{
    int64_t v = -1;
    for (const char *line = log; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char *l = strndup(line, len);
        char *at = strstr(l, needle), *k;
        if (at && (k = strstr(at, key)))
            v = strtoll(k + strlen(key), NULL, 0);
        free(l);
        line += len + (end ? 1 : 0);
    }
    return v;
}

/* ---- a registered "kernel" ---- */

static void kernel_stub(float *x) { (void)x; }
static void other_stub(void) {}
static char fatbin[64];
static void **module;

static void register_kernel(void)
{
    module = __cudaRegisterFatBinary(fatbin);
    __cudaRegisterFunction(module, (const char *)kernel_stub, "_Z6kernelPf", "_Z6kernelPf", -1, NULL, NULL, NULL, NULL,
                           NULL);
    __cudaRegisterFatBinaryEnd(module);
}

static cudaError_t launch(cudaStream_t s, unsigned grid, unsigned block)
{
    float *arg = NULL;
    void *args[] = {&arg};
    return cudaLaunchKernel((const void *)kernel_stub, d3(grid, 1, 1), d3(block, 1, 1), args, 0, s);
}

/* ---- cases ---- */

static void case_props(void)
{
    int v = 0;
    CHECK_CUDA(cudaRuntimeGetVersion(&v), cudaSuccess);
    CHECK(v == 13000, "runtime version %d", v);
    CHECK_CUDA(cudaDriverGetVersion(&v), cudaSuccess);
    CHECK(v == 13000, "driver version %d", v);
    int n = -1;
    CHECK_CUDA(cudaGetDeviceCount(&n), cudaSuccess);
    CHECK(n == 2, "device count %d (HYSIM_GPUS=2)", n);

    struct cudaDeviceProp p;
    CHECK_CUDA(cudaGetDeviceProperties(&p, 1), cudaSuccess);
    CHECK(!strcmp(p.name, "NVIDIA H200"), "name %s", p.name);
    CHECK(p.totalGlobalMem == MEMORY, "totalGlobalMem %zu", p.totalGlobalMem);
    CHECK(p.multiProcessorCount == 132 && p.major == 9 && p.minor == 0, "sm %d cc %d.%d", p.multiProcessorCount,
          p.major, p.minor);
    CHECK(p.warpSize == 32 && p.maxThreadsPerBlock == 1024 && p.sharedMemPerBlockOptin == 232448 &&
              p.l2CacheSize == 52428800 && p.pciBusID == 1,
          "Hopper constants");
    CHECK_CUDA(cudaGetDeviceProperties(&p, 2), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);

    CHECK_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
    CHECK(v == 132, "SM count attribute %d", v);
    CHECK_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, 1), cudaSuccess);
    CHECK(v == 9, "cc major attribute %d", v);
    CHECK_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0), cudaSuccess);
    CHECK(v == 232448, "opt-in shared memory %d", v);
    CHECK_CUDA(cudaDeviceGetAttribute(&v, (enum cudaDeviceAttr)9999, 0), cudaErrorInvalidValue);
    CHECK_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 5), cudaErrorInvalidDevice);

    CHECK_CUDA(cudaSetDevice(1), cudaSuccess);
    CHECK_CUDA(cudaGetDevice(&v), cudaSuccess);
    CHECK(v == 1, "current device %d", v);
    CHECK_CUDA(cudaSetDevice(2), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaGetDevice(&v), cudaSuccess);
    CHECK(v == 1, "current device after a bad cudaSetDevice %d", v);

    CHECK(!strcmp(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation"), "name");
    CHECK(!strcmp(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory"), "string");
    CHECK(!strcmp(cudaGetErrorString((cudaError_t)4242), "unrecognized error code"), "unknown");

    /* The driver API's device queries: the runtime, which started above, initialized the driver. */
    CUdevice d;
    CHECK(cuDeviceGet(&d, 0) == CUDA_SUCCESS && d == 0, "cuDeviceGet after the runtime started, without cuInit");
    CHECK(cuInit(0) == CUDA_SUCCESS, "cuInit");
    CHECK(cuDeviceGetCount(&n) == CUDA_SUCCESS && n == 2, "cuDeviceGetCount %d", n);
    CHECK(cuDeviceGet(&d, 1) == CUDA_SUCCESS && d == 1, "cuDeviceGet");
    CHECK(cuDeviceGet(&d, 2) == CUDA_ERROR_INVALID_DEVICE, "cuDeviceGet 2");
    char name[64];
    CHECK(cuDeviceGetName(name, sizeof name, 0) == CUDA_SUCCESS && !strcmp(name, "NVIDIA H200"), "cuDeviceGetName");
    size_t total = 0;
    CHECK(cuDeviceTotalMem(&total, 0) == CUDA_SUCCESS && total == MEMORY, "cuDeviceTotalMem %zu", total);
    CUuuid uuid;
    struct cudaDeviceProp props1;
    CHECK_CUDA(cudaGetDeviceProperties(&props1, 1), cudaSuccess);
    CHECK(cuDeviceGetUuid(&uuid, 1) == CUDA_SUCCESS && !memcmp(uuid.bytes, props1.uuid.bytes, 16) &&
              uuid.bytes[15] == 1,
          "cuDeviceGetUuid(1): the runtime's UUID of device 1");
    CHECK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0) == CUDA_SUCCESS && v == 132,
          "cuDeviceGetAttribute %d", v);
    const char *s = NULL;
    CHECK(cuGetErrorName(CUDA_ERROR_OUT_OF_MEMORY, &s) == CUDA_SUCCESS && !strcmp(s, "CUDA_ERROR_OUT_OF_MEMORY"),
          "cuGetErrorName");
    CHECK(cuGetErrorString((CUresult)77777, &s) == CUDA_ERROR_INVALID_VALUE && s == NULL, "cuGetErrorString");

    /* The same entry points by name (a library that resolves the driver at run time); others are not there. */
    void *fn = NULL;
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CHECK(cuGetProcAddress("cuDeviceGetCount", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &found) == CUDA_SUCCESS &&
              found == CU_GET_PROC_ADDRESS_SUCCESS && fn,
          "cuGetProcAddress cuDeviceGetCount");
    n = 0;
    CHECK(fn && ((CUresult(*)(int *))fn)(&n) == CUDA_SUCCESS && n == 2, "cuDeviceGetCount by address %d", n);
    CHECK(cuGetProcAddress("cuDeviceTotalMem", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &found) == CUDA_SUCCESS && fn &&
              ((CUresult(*)(size_t *, CUdevice))fn)(&total, 1) == CUDA_SUCCESS && total == MEMORY,
          "cuDeviceTotalMem by address");
    for (int i = 0; i < 2; i++) { /* named on stderr once */
        fn = (void *)1;
        CHECK(cuGetProcAddress("cuArrayCreate", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &found) ==
                      CUDA_ERROR_NOT_FOUND &&
                  fn == NULL && found == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND,
              "cuGetProcAddress cuArrayCreate");
    }
    CHECK(cuGetProcAddress(NULL, &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, NULL) == CUDA_ERROR_INVALID_VALUE,
          "cuGetProcAddress NULL");
    /* Contexts: one primary context per device; the thread's current one is the runtime's device. */
    CUcontext c1 = NULL, c0 = NULL, c = NULL;
    CHECK(cuCtxGetCurrent(&c1) == CUDA_SUCCESS && c1, "cuCtxGetCurrent after cudaSetDevice(1)");
    CHECK(cuCtxGetDevice(&d) == CUDA_SUCCESS && d == 1, "cuCtxGetDevice %d", d);
    CHECK(cuDevicePrimaryCtxRetain(&c0, 0) == CUDA_SUCCESS && c0 && c0 != c1, "cuDevicePrimaryCtxRetain(0)");
    CHECK(cuCtxGetDevice_v2(&d, c0) == CUDA_SUCCESS && d == 0, "cuCtxGetDevice_v2 of device 0's context %d", d);
    CHECK(cuCtxSetCurrent(c0) == CUDA_SUCCESS, "cuCtxSetCurrent(device 0)");
    CHECK_CUDA(cudaGetDevice(&v), cudaSuccess);
    CHECK(v == 0, "runtime's device after cuCtxSetCurrent(device 0): %d", v);
    CHECK(cuCtxPushCurrent(c1) == CUDA_SUCCESS, "cuCtxPushCurrent(device 1)");
    CHECK_CUDA(cudaGetDevice(&v), cudaSuccess);
    CHECK(v == 1, "runtime's device after pushing device 1: %d", v);
    CHECK(cuCtxPopCurrent(&c) == CUDA_SUCCESS && c == c1, "cuCtxPopCurrent");
    CHECK_CUDA(cudaGetDevice(&v), cudaSuccess);
    CHECK(v == 0, "runtime's device after the pop: %d", v);
    CHECK(cuCtxSetCurrent((CUcontext)&v) == CUDA_ERROR_INVALID_CONTEXT, "cuCtxSetCurrent of no context");
    unsigned flags = 7;
    int active = 0;
    CHECK(cuDevicePrimaryCtxSetFlags(1, CU_CTX_SCHED_BLOCKING_SYNC) == CUDA_SUCCESS, "cuDevicePrimaryCtxSetFlags");
    CHECK(cuDevicePrimaryCtxGetState(1, &flags, &active) == CUDA_SUCCESS && flags == CU_CTX_SCHED_BLOCKING_SYNC &&
              active == 1,
          "cuDevicePrimaryCtxGetState(1): flags %u, active %d", flags, active);
    CHECK(cuDevicePrimaryCtxReset(1) == CUDA_SUCCESS &&
              cuDevicePrimaryCtxGetState(1, &flags, &active) == CUDA_SUCCESS && flags == 0 && active == 0,
          "after cuDevicePrimaryCtxReset(1): flags %u, active %d", flags, active);
    CHECK(cuDevicePrimaryCtxSetFlags(0, 0x100) == CUDA_ERROR_INVALID_VALUE, "cuDevicePrimaryCtxSetFlags(bad flags)");
    CHECK(cuDevicePrimaryCtxGetState(2, &flags, &active) == CUDA_ERROR_INVALID_DEVICE, "cuDevicePrimaryCtxGetState(2)");
    /* and through the runtime by name (as PyTorch fetches them): every cuda.h name is found, stubs too */
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    CHECK_CUDA(cudaGetDriverEntryPointByVersion("cuCtxPushCurrent", &fn, 13000, cudaEnableDefault, &q), cudaSuccess);
    CHECK(fn == (void *)cuCtxPushCurrent_v2 && q == cudaDriverEntryPointSuccess, "entry point cuCtxPushCurrent");
    CHECK_CUDA(cudaGetDriverEntryPointByVersion("cuCtxGetDevice", &fn, 12000, cudaEnableDefault, &q), cudaSuccess);
    CHECK(fn == (void *)cuCtxGetDevice, "entry point cuCtxGetDevice for CUDA 12: the one-argument call");
    CHECK_CUDA(cudaGetDriverEntryPointByVersion("cuArrayCreate", &fn, 13000, cudaEnablePerThreadDefaultStream, &q),
               cudaSuccess);
    CHECK(fn == (void *)cuArrayCreate_v2 && q == cudaDriverEntryPointSuccess, "entry point cuArrayCreate (a stub)");
    CHECK_CUDA(cudaGetDriverEntryPointByVersion("cuMemcpyAsync", &fn, 13000, cudaEnablePerThreadDefaultStream, &q),
               cudaSuccess);
    CHECK(fn && fn == dlsym(RTLD_DEFAULT, "cuMemcpyAsync_ptsz"), "entry point cuMemcpyAsync, per-thread stream");
    CHECK_CUDA(cudaGetDriverEntryPointByVersion("cuNoSuchCall", &fn, 13000, cudaEnableDefault, &q), cudaSuccess);
    CHECK(fn == NULL && q == cudaDriverEntryPointSymbolNotFound, "entry point of no driver function");
    CHECK_CUDA(cudaGetDriverEntryPointByVersion("cuInit", &fn, 13000, 7, &q), cudaErrorInvalidValue);
    /* the rest of the driver API: a stub that says so once, naming itself and its caller */
    CUarray array = NULL;
    CUDA_ARRAY_DESCRIPTOR desc = {16, 1, CU_AD_FORMAT_FLOAT, 1};
    for (int i = 0; i < 2; i++)
        CHECK(cuArrayCreate(&array, &desc) == CUDA_ERROR_NOT_SUPPORTED && array == NULL,
              "cuArrayCreate of the driver API");
}

static void case_memory(void)
{
    size_t free0, total;
    CHECK_CUDA(cudaMemGetInfo(&free0, &total), cudaSuccess);
    CHECK(total == MEMORY && free0 == MEMORY, "free %zu total %zu", free0, total);

    char *a, *b, *c, *oom = (char *)1;
    CHECK_CUDA(cudaMalloc((void **)&a, 1000), cudaSuccess);
    CHECK((uintptr_t)a % 256 == 0, "alignment of %p", (void *)a);
    CHECK_CUDA(cudaMalloc((void **)&b, GIB), cudaSuccess);
    size_t f;
    CHECK_CUDA(cudaMemGetInfo(&f, &total), cudaSuccess);
    CHECK(f == MEMORY - 1024 - GIB, "free after 1000 B + 1 GiB: %zu", f);
    CHECK_CUDA(cudaFree(a), cudaSuccess);
    CHECK_CUDA(cudaMalloc((void **)&c, 512), cudaSuccess);
    CHECK(c == a, "first fit reuses the freed block: %p vs %p", (void *)c, (void *)a);

    /* Out of memory, as a real GPU. */
    CHECK_CUDA(cudaMalloc((void **)&oom, 79 * GIB), cudaErrorMemoryAllocation);
    CHECK(oom == NULL, "pointer after a failed cudaMalloc %p", (void *)oom);
    CHECK_CUDA(cudaPeekAtLastError(), cudaErrorMemoryAllocation);
    CHECK_CUDA(cudaGetLastError(), cudaErrorMemoryAllocation);
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);
    char *big;
    CHECK_CUDA(cudaMalloc((void **)&big, 78 * GIB), cudaSuccess); /* peak: 79 GiB + 512 */
    CHECK_CUDA(cudaFree(big), cudaSuccess);

    /* Device 1 has its own memory. */
    CHECK_CUDA(cudaSetDevice(1), cudaSuccess);
    char *d1;
    CHECK_CUDA(cudaMalloc((void **)&d1, 50 * GIB), cudaSuccess);
    CHECK_CUDA(cudaMemGetInfo(&f, &total), cudaSuccess);
    CHECK(f == MEMORY - 50 * GIB, "device 1 free %zu", f);
    CHECK_CUDA(cudaFree(d1), cudaSuccess);
    CHECK_CUDA(cudaSetDevice(0), cudaSuccess);

    int local;
    CHECK_CUDA(cudaFree(b + 256), cudaErrorInvalidValue);
    CHECK_CUDA(cudaFree(&local), cudaErrorInvalidValue);
    CHECK_CUDA(cudaFree(NULL), cudaSuccess);

    /* Device→host copies write zeros; host→host copies copy. */
    char host[4096], host2[4096];
    memset(host, 0xab, sizeof host);
    CHECK_CUDA(cudaMemcpy(host, b, sizeof host, cudaMemcpyDeviceToHost), cudaSuccess);
    int zeros = 1;
    for (size_t i = 0; i < sizeof host; i++)
        zeros &= host[i] == 0;
    CHECK(zeros, "device-to-host copy did not zero the host buffer");
    memset(host, 0xcd, sizeof host);
    CHECK_CUDA(cudaMemcpy(host, b + 4096, sizeof host, cudaMemcpyDefault), cudaSuccess);
    CHECK(host[0] == 0 && host[4095] == 0, "cudaMemcpyDefault device-to-host");
    CHECK_CUDA(cudaMemcpy(b, host, sizeof host, cudaMemcpyHostToDevice), cudaSuccess);
    CHECK_CUDA(cudaMemcpy(b + 8192, b, 100, cudaMemcpyDefault), cudaSuccess);
    strcpy(host, "hello, simulated world");
    CHECK_CUDA(cudaMemcpy(host2, host, 64, cudaMemcpyHostToHost), cudaSuccess);
    CHECK(!strcmp(host2, "hello, simulated world"), "host-to-host copy: %s", host2);
    CHECK_CUDA(cudaMemcpy(host2, host, 64, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    CHECK_CUDA(cudaMemcpy(host2, b, 64, (enum cudaMemcpyKind)7), cudaErrorInvalidMemcpyDirection);
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreate(&s), cudaSuccess);
    memset(host, 0xef, 64);
    CHECK_CUDA(cudaMemcpyAsync(host, b, 64, cudaMemcpyDeviceToHost, s), cudaSuccess);
    CHECK(host[0] == 0 && host[63] == 0, "asynchronous device-to-host copy");
    CHECK_CUDA(cudaMemset(b, 1, 1 << 20), cudaSuccess);
    CHECK_CUDA(cudaMemsetAsync(b, 1, 4096, s), cudaSuccess);
    CHECK_CUDA(cudaMemset(host, 1, 16), cudaErrorInvalidValue);

    /* Pinned host memory is real. */
    char *pinned;
    CHECK_CUDA(cudaMallocHost((void **)&pinned, 1 << 20), cudaSuccess);
    memset(pinned, 7, 1 << 20);
    CHECK_CUDA(cudaMemcpy(b, pinned, 1 << 20, cudaMemcpyDefault), cudaSuccess);
    CHECK_CUDA(cudaFreeHost(pinned), cudaSuccess);
    CHECK_CUDA(cudaFreeHost(pinned), cudaErrorInvalidValue);
    CHECK_CUDA(cudaHostAlloc((void **)&pinned, 4096, cudaHostAllocMapped), cudaSuccess);
    CHECK_CUDA(cudaFreeHost(pinned), cudaSuccess);
    CHECK_CUDA(cudaHostAlloc((void **)&pinned, 4096, 0x100), cudaErrorInvalidValue);

    /* Registered host memory counts as pinned until unregistered; its device pointer is itself. */
    static char registered[8192];
    void *mapped = NULL;
    CHECK_CUDA(cudaHostGetDevicePointer(&mapped, registered, 0), cudaErrorInvalidValue);
    CHECK_CUDA(cudaHostRegister(registered, sizeof registered, cudaHostRegisterDefault), cudaSuccess);
    CHECK_CUDA(cudaHostRegister(registered + 4096, 16, cudaHostRegisterDefault), cudaErrorHostMemoryAlreadyRegistered);
    CHECK_CUDA(cudaHostGetDevicePointer(&mapped, registered + 100, 0), cudaSuccess);
    CHECK(mapped == registered + 100, "device pointer of registered memory %p", mapped);
    CHECK_CUDA(cudaMemcpyAsync(b, registered, 8192, cudaMemcpyHostToDevice, s), cudaSuccess); /* does not wait */
    CHECK_CUDA(cudaHostUnregister(registered + 1), cudaErrorHostMemoryNotRegistered);
    CHECK_CUDA(cudaHostUnregister(registered), cudaSuccess);
    CHECK_CUDA(cudaHostUnregister(registered), cudaErrorHostMemoryNotRegistered);
    CHECK_CUDA(cudaMemcpy(b, registered, 8192, cudaMemcpyHostToDevice), cudaSuccess); /* pageable again */
    CHECK_CUDA(cudaHostRegister(NULL, 16, 0), cudaErrorInvalidValue);
    CHECK_CUDA(cudaHostRegister(registered, 16, 0x100), cudaErrorInvalidValue);

    /* Pitched memory: rows padded to 512 bytes; a 2D copy writes the host's rows and nothing between them. */
    char *pitched;
    size_t pitch = 0;
    CHECK_CUDA(cudaMallocPitch((void **)&pitched, &pitch, 100, 8), cudaSuccess);
    struct cudaPointerAttributes where;
    CHECK(pitch == 512 && cudaPointerGetAttributes(&where, pitched) == cudaSuccess &&
              where.type == cudaMemoryTypeDevice,
          "pitch %zu", pitch);
    char rows[8][128];
    memset(rows, 0x5a, sizeof rows);
    CHECK_CUDA(cudaMemcpy2D(pitched, pitch, rows, 128, 100, 8, cudaMemcpyHostToDevice), cudaSuccess);
    CHECK_CUDA(cudaMemcpy2D(rows, 128, pitched, pitch, 100, 8, cudaMemcpyDeviceToHost), cudaSuccess);
    CHECK(rows[0][0] == 0 && rows[7][99] == 0 && rows[0][100] == 0x5a && rows[7][127] == 0x5a,
          "device rows read as zeros, the host's padding untouched");
    char packed[8][100];
    CHECK_CUDA(cudaMemcpy2D(packed, 100, rows, 128, 100, 8, cudaMemcpyHostToHost), cudaSuccess);
    CHECK(packed[3][99] == 0 && memcmp(packed[2], rows[2], 100) == 0, "host-to-host rows");
    CHECK_CUDA(cudaMemcpy2DAsync(pitched, pitch, rows, 128, 200, 8, cudaMemcpyHostToDevice, s),
               cudaErrorInvalidPitchValue);
    CHECK_CUDA(cudaMemset2DAsync(pitched, pitch, 1, 100, 8, s), cudaSuccess);
    CHECK_CUDA(cudaMemset2D(pitched, pitch, 1, 600, 8), cudaErrorInvalidValue);
    CHECK_CUDA(cudaMemset2D(rows, 128, 1, 100, 8), cudaErrorInvalidValue); /* not device memory */
    CHECK_CUDA(cudaFree(pitched), cudaSuccess);

    /* A host dereference of device memory faults loudly. */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        volatile char x = *(volatile char *)b;
        (void)x;
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "child status %#x, expected death by SIGSEGV", st);
    /* A child forked after CUDA started cannot use it (as with real CUDA), nor its parent's connection. */
    pid = fork();
    if (pid == 0) {
        void *p;
        _exit(cudaMalloc(&p, 16) == cudaErrorInitializationError ? 0 : 1);
    }
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "forked child's cudaMalloc: status %#x", st);

    CHECK_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    char *log = read_log();
    CHECK(count_lines(log, "copy kind=D2H bytes=4096") == 2, "two D2H copies of 4096 bytes");
    CHECK(count_lines(log, "copy kind=D2H bytes=64 peer=0 pageable") == 1, "one asynchronous D2H copy");
    CHECK(count_lines(log, "copy kind=H2D bytes=4096 peer=0 pageable") == 1, "one H2D copy");
    CHECK(count_lines(log, "copy kind=H2D bytes=1048576") == 1 &&
              count_lines(log, "bytes=1048576 peer=0 pageable") == 0,
          "one H2D copy from pinned memory");
    CHECK(count_lines(log, "copy kind=H2D bytes=8192 peer=0 pageable") == 1 &&
              count_lines(log, "copy kind=H2D bytes=8192") == 2,
          "copies from registered memory, then from the same memory unregistered");
    CHECK(count_lines(log, "copy kind=D2D bytes=100") == 1, "one D2D copy");
    CHECK(count_lines(log, "copy kind=H2H bytes=64") == 1, "one H2H copy");
    CHECK(count_lines(log, "memset bytes=1048576") == 1 && count_lines(log, "memset bytes=4096") == 1, "memsets");
    CHECK(count_lines(log, "copy kind=H2D bytes=800 peer=0 pageable rows=8") == 1 &&
              count_lines(log, "copy kind=D2H bytes=800 peer=0 pageable rows=8") == 1 &&
              count_lines(log, "copy kind=H2H bytes=800 peer=0 rows=8") == 1 &&
              count_lines(log, "memset bytes=800 rows=8") == 1,
          "2D copies and memset in rows");
    /* Synchronous copies (not D2D) wait for the legacy stream, and so does an asynchronous copy of
     * pageable memory for its stream; cudaFree waits for the device. */
    CHECK(count_lines(log, "cond=stream_idle gpu=0 stream=0 ") == 9, "legacy stream waits: %d",
          count_lines(log, "cond=stream_idle gpu=0 stream=0 "));
    CHECK(count_lines(log, "cond=stream_idle") == 10, "stream waits: %d", count_lines(log, "cond=stream_idle"));
    CHECK(count_lines(log, "cond=device_idle") == 5, "device waits: %d", count_lines(log, "cond=device_idle"));
    free(log);
    CHECK_CUDA(cudaStreamDestroy(s), cudaSuccess);
    CHECK_CUDA(cudaFree(b), cudaSuccess);
    CHECK_CUDA(cudaFree(c), cudaSuccess);
}

static void case_events(void)
{
    register_kernel();
    cudaStream_t s, s2;
    cudaEvent_t e1, e2, notime;
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    CHECK_CUDA(cudaStreamCreateWithPriority(&s2, 0, -3), cudaSuccess);
    CHECK_CUDA(cudaEventCreate(&e1), cudaSuccess);
    CHECK_CUDA(cudaEventCreateWithFlags(&e2, cudaEventBlockingSync), cudaSuccess);
    CHECK_CUDA(cudaEventCreateWithFlags(&notime, cudaEventDisableTiming), cudaSuccess);
    CHECK_CUDA(cudaEventCreateWithFlags(&notime, cudaEventInterprocess), cudaErrorInvalidValue);

    float ms = -1;
    CHECK_CUDA(cudaEventQuery(e1), cudaSuccess); /* never recorded: complete, as in CUDA */
    CHECK_CUDA(cudaEventSynchronize(e1), cudaSuccess);
    CHECK_CUDA(cudaEventElapsedTime(&ms, e1, e2), cudaErrorInvalidResourceHandle);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidResourceHandle);

    CHECK_CUDA(cudaEventRecord(e1, s), cudaSuccess);
    CHECK_CUDA(launch(s, 64, 256), cudaSuccess);
    CHECK_CUDA(cudaEventRecord(e2, s), cudaSuccess);
    CHECK_CUDA(cudaEventRecord(notime, s), cudaSuccess);
    /* The fake daemon finishes work 1 ms after issue; the host has moved 3 µs. */
    CHECK_CUDA(cudaEventElapsedTime(&ms, e1, e2), cudaErrorNotReady);
    CHECK_CUDA(cudaGetLastError(), cudaSuccess); /* not ready is an answer, not an error */
    CHECK_CUDA(cudaEventQuery(e2), cudaErrorNotReady);
    CHECK_CUDA(cudaStreamQuery(s), cudaErrorNotReady);
    uint64_t before = ns_of(CLOCK_MONOTONIC);
    CHECK_CUDA(cudaEventSynchronize(e2), cudaSuccess);
    uint64_t after = ns_of(CLOCK_MONOTONIC);
    CHECK(after - before == WAIT_NS + 2000, "a Wait moved the clock by %" PRIu64 " ns", after - before);
    CHECK_CUDA(cudaStreamQuery(s), cudaSuccess);
    CHECK_CUDA(cudaEventQuery(e2), cudaSuccess);
    CHECK_CUDA(cudaEventElapsedTime(&ms, e1, e2), cudaSuccess);
    CHECK_CUDA(cudaEventElapsedTime(&ms, e1, notime), cudaErrorInvalidResourceHandle);
    CHECK_CUDA(cudaEventElapsedTime(NULL, e1, e2), cudaErrorInvalidValue);

    /* Milliseconds from the reply's picoseconds: events recorded 2 µs apart (fixed:1000). */
    char *log = read_log();
    int64_t t1 = last_value(log, "[event=1 ", "time_ps="), t2 = last_value(log, "[event=2 ", "time_ps=");
    CHECK(t1 > 0 && t2 - t1 == 2000000, "event times %" PRId64 " and %" PRId64 " ps", t1, t2);
    float want = (float)((double)(t2 - t1) / 1e9);
    CHECK(ms == want && ms > 0.0019f && ms < 0.0021f, "elapsed %g ms, expected %g ms", ms, want);
    free(log);

    /* nvcc's launch path: configuration stack, kernel handle, launch. */
    CHECK(__cudaPushCallConfiguration(d3(4, 2, 1), d3(128, 1, 1), 1024, s2) == 0, "push");
    dim3 g, b;
    size_t shared;
    cudaStream_t cs;
    CHECK_CUDA(__cudaPopCallConfiguration(&g, &b, &shared, &cs), cudaSuccess);
    CHECK(g.x == 4 && g.y == 2 && b.x == 128 && shared == 1024 && cs == s2, "popped configuration");
    CHECK_CUDA(__cudaPopCallConfiguration(&g, &b, &shared, &cs), cudaErrorMissingConfiguration);
    cudaKernel_t k;
    CHECK_CUDA(__cudaGetKernel(&k, (const void *)kernel_stub), cudaSuccess);
    CHECK_CUDA(__cudaGetKernel(&k, (const void *)other_stub), cudaErrorInvalidDeviceFunction);
    CHECK_CUDA(__cudaGetKernel(&k, (const void *)kernel_stub), cudaSuccess);
    CHECK_CUDA(__cudaLaunchKernel(k, g, b, NULL, shared, cs), cudaSuccess);
    CHECK_CUDA(cudaLaunchKernel((const void *)other_stub, d3(1, 1, 1), d3(1, 1, 1), NULL, 0, s),
               cudaErrorInvalidDeviceFunction);
    CHECK_CUDA(launch(s, 1, 2048), cudaErrorInvalidConfiguration);
    CHECK_CUDA(launch(s, 0, 32), cudaErrorInvalidConfiguration);
    CHECK_CUDA(launch(cudaStreamPerThread, 8, 32), cudaSuccess);
    CHECK_CUDA(launch(NULL, 16, 32), cudaSuccess);
    CHECK_CUDA(cudaStreamWaitEvent(s2, e2, 0), cudaSuccess);
    CHECK_CUDA(cudaStreamWaitEvent(s2, (cudaEvent_t)&ms, 0), cudaErrorInvalidResourceHandle);
    CHECK_CUDA(cudaStreamSynchronize(s2), cudaSuccess);
    CHECK_CUDA(cudaStreamSynchronize(cudaStreamPerThread), cudaSuccess);
    CHECK_CUDA(cudaStreamDestroy(s2), cudaSuccess);
    CHECK_CUDA(cudaStreamDestroy(s2), cudaErrorInvalidResourceHandle);
    CHECK_CUDA(cudaStreamDestroy(NULL), cudaErrorInvalidResourceHandle);
    CHECK_CUDA(cudaEventDestroy(e1), cudaSuccess);
    CHECK_CUDA(cudaEventRecord(e1, s), cudaErrorInvalidResourceHandle);
    CHECK_CUDA(cudaDeviceSynchronize(), cudaSuccess);

    log = read_log();
    CHECK(count_lines(log, "kernel name=_Z6kernelPf grid=64,1,1 block=256,1,1 shared=0") == 1, "<<<64, 256>>>");
    CHECK(count_lines(log, "kernel name=_Z6kernelPf grid=4,2,1 block=128,1,1 shared=1024") == 1, "nvcc path");
    CHECK(count_lines(log, "stream=0 kernel name=_Z6kernelPf grid=16,1,1") == 1, "legacy stream launch");
    CHECK(count_lines(log, "stream_create nonblocking=1 priority=0") == 1, "non-blocking stream");
    CHECK(count_lines(log, "stream_create nonblocking=0 priority=-3") == 1, "priority stream");
    CHECK(count_lines(log, "stream_create nonblocking=0 priority=0") == 1, "per-thread default stream");
    CHECK(count_lines(log, "wait_event event=2") == 1, "stream waits for event 2");
    CHECK(count_lines(log, "stream_destroy") == 1, "stream destroyed");
    free(log);
    __cudaUnregisterFatBinary(module);
    CHECK_CUDA(launch(s, 1, 1), cudaErrorInvalidDeviceFunction);
}

static void case_clock_zero(void)
{
    uint64_t t0 = ns_of(CLOCK_MONOTONIC);
    CHECK(t0 == 0, "the clock starts at 0 and stands still in zero mode: %" PRIu64, t0);
    uint64_t cpu0 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
    burn_cpu(20000000);
    real_sleep_us(50000);
    CHECK(ns_of(CLOCK_MONOTONIC) == t0, "host work moved the clock in zero mode");
    CHECK(ns_of(CLOCK_PROCESS_CPUTIME_ID) - cpu0 >= 19000000, "CPU-time clocks pass through");
    CHECK_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    uint64_t t1 = ns_of(CLOCK_MONOTONIC);
    CHECK(t1 == t0 + WAIT_NS, "after a Wait: %" PRIu64 ", expected %" PRIu64, t1, t0 + WAIT_NS);
    CHECK(ns_of(CLOCK_MONOTONIC_RAW) == t1 && ns_of(CLOCK_MONOTONIC_COARSE) == t1 && ns_of(CLOCK_BOOTTIME) == t1,
          "monotonic clocks agree");
    const uint64_t epoch = 1700000000000000000ull;
    CHECK(ns_of(CLOCK_REALTIME) == epoch + t1, "realtime %" PRIu64, ns_of(CLOCK_REALTIME));
    struct timeval tv;
    gettimeofday(&tv, NULL);
    CHECK((uint64_t)tv.tv_sec == epoch / 1000000000 && tv.tv_usec == (suseconds_t)(t1 / 1000), "gettimeofday %ld.%06ld",
          (long)tv.tv_sec, (long)tv.tv_usec);
    CHECK(time(NULL) == (time_t)(epoch / 1000000000), "time() %ld", (long)time(NULL));
    struct timespec ts;
    CHECK(timespec_get(&ts, TIME_UTC) == TIME_UTC && (uint64_t)ts.tv_nsec == t1, "timespec_get");
}

static void *read_clock_thread(void *arg)
{
    uint64_t *out = arg;
    out[0] = ns_of(CLOCK_MONOTONIC);
    out[1] = ns_of(CLOCK_MONOTONIC);
    return NULL;
}

/*
 * fixed:1000: every intercepted call moves the clock exactly 1000 ns. In a
 * sanitizer build the sanitizer runtime reads the clock too (its allocator
 * does, now and then, on any thread), and those reads are intercepted calls
 * like any other: there the steps are whole multiples of 1000 ns.
 */
#ifdef __SANITIZE_ADDRESS__
#define FIXED_STEP_OK(d, n) ((d) >= (n)*1000 && (d) % 1000 == 0)
#else
#define FIXED_STEP_OK(d, n) ((d) == (n)*1000)
#endif

static void case_clock_fixed(void)
{
    uint64_t a = ns_of(CLOCK_MONOTONIC), b = ns_of(CLOCK_MONOTONIC);
    CHECK(FIXED_STEP_OK(b - a, 1), "two reads %" PRIu64 " ns apart, expected 1000", b - a);
    int n;
    CHECK_CUDA(cudaGetDeviceCount(&n), cudaSuccess);
    uint64_t c = ns_of(CLOCK_MONOTONIC);
    CHECK(FIXED_STEP_OK(c - b, 2), "a CUDA call between reads: %" PRIu64 " ns, expected 2000", c - b);
    pthread_t t;
    uint64_t r[2];
    pthread_create(&t, NULL, read_clock_thread, r);
    pthread_join(t, NULL);
    CHECK(FIXED_STEP_OK(r[0] - c, 1) && FIXED_STEP_OK(r[1] - r[0], 1), "another thread's reads %" PRIu64 " %" PRIu64,
          r[0] - c, r[1] - c);
    char *log = read_log();
    int64_t reg = last_value(log, "register", "host=");
    CHECK(reg > (int64_t)b && FIXED_STEP_OK((uint64_t)reg - b, 1), "Register carries the clock");
    free(log);
}

/* No HYSIM_HOST_TIME: the mode comes from Setup (fake daemon: fixed 500 ns). */
static void case_clock_setup(void)
{
    int n;
    CHECK_CUDA(cudaGetDeviceCount(&n), cudaSuccess);
    uint64_t a = ns_of(CLOCK_MONOTONIC), b = ns_of(CLOCK_MONOTONIC);
    CHECK(b - a == 500, "Setup's fixed:500: reads %" PRIu64 " ns apart", b - a);
}

/* real (factor 1) or scaled:F: the clock follows the thread's CPU time, not sleeps. */
static void case_clock_real(double factor)
{
    int n;
    CHECK_CUDA(cudaGetDeviceCount(&n), cudaSuccess);
    uint64_t a = ns_of(CLOCK_MONOTONIC);
    uint64_t cpu0 = raw_ns(CLOCK_THREAD_CPUTIME_ID);
    burn_cpu(30000000);
    uint64_t cpu = raw_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    uint64_t b = ns_of(CLOCK_MONOTONIC);
    double want = factor * (double)cpu;
    CHECK((double)(b - a) >= 0.95 * want && (double)(b - a) <= want + 5e6,
          "%.0f ms of CPU moved the clock %.3f ms (factor %g)", cpu / 1e6, (b - a) / 1e6, factor);
    real_sleep_us(200000);
    uint64_t c = ns_of(CLOCK_MONOTONIC);
    CHECK(c - b < 20000000 * factor, "200 ms off the CPU moved the clock %.3f ms", (c - b) / 1e6);
    usleep(200000); /* before the process's first GPU work: a real sleep (interpose/host/sleep.c) */
    uint64_t d = ns_of(CLOCK_MONOTONIC);
    CHECK(d - c < 20000000 * factor, "a 200 ms sleep before any work moved the clock %.3f ms", (d - c) / 1e6);
}

/*
 * real: a thread that shares its core with another process, and so is preempted between its calls, moves the
 * clock by its CPU time, not by the wall time its short gaps span (those are credited first and paid back).
 */
static void case_clock_preempted(void)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    CHECK(sched_setaffinity(0, sizeof one, &one) == 0, "sched_setaffinity: %s", strerror(errno));
    pid_t hog = fork();
    if (hog == 0) { /* the other process on the same core */
        for (volatile uint64_t x = 0;; x++) {}
    }
    int n;
    CHECK_CUDA(cudaGetDeviceCount(&n), cudaSuccess);
    uint64_t a = ns_of(CLOCK_MONOTONIC), cpu0 = raw_ns(CLOCK_THREAD_CPUTIME_ID), wall0 = raw_ns(CLOCK_MONOTONIC);
    while (raw_ns(CLOCK_MONOTONIC) - wall0 < 600000000ull) {
        burn_cpu(5000);
        (void)ns_of(CLOCK_MONOTONIC); /* an intercepted call after a short gap */
    }
    uint64_t b = ns_of(CLOCK_MONOTONIC), cpu = raw_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    uint64_t wall = raw_ns(CLOCK_MONOTONIC) - wall0;
    kill(hog, SIGKILL);
    waitpid(hog, NULL, 0);
    CHECK((double)(b - a) <= 1.15 * (double)cpu + 2e6 && (double)(b - a) >= 0.7 * (double)cpu,
          "%.0f ms of CPU in %.0f ms of wall time moved the clock %.1f ms", cpu / 1e6, wall / 1e6, (b - a) / 1e6);
}

#define THREADS  4
#define LAUNCHES 300

static void *launcher(void *arg)
{
    (void)arg;
    cudaStream_t s;
    cudaEvent_t e;
    CHECK_CUDA(cudaStreamCreate(&s), cudaSuccess);
    CHECK_CUDA(cudaEventCreate(&e), cudaSuccess);
    for (int i = 0; i < LAUNCHES; i++) {
        CHECK_CUDA(launch(s, 1 + (unsigned)i, 32), cudaSuccess);
        if (i % 50 == 0)
            CHECK_CUDA(cudaEventRecord(e, s), cudaSuccess);
    }
    CHECK_CUDA(cudaStreamSynchronize(s), cudaSuccess);
    return NULL;
}

static void case_order(void)
{
    register_kernel();
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, launcher, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    CHECK_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    char *log = read_log();
    CHECK(count_lines(log, "kernel name=_Z6kernelPf") == THREADS * LAUNCHES, "kernels %d",
          count_lines(log, "kernel name="));
    /* Ops arrive in order with non-decreasing host times; batches hold at most 256. */
    uint64_t last = 0;
    int ordered = 1, batches = 0, oversized = 0;
    for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n")) {
        uint64_t h;
        unsigned n;
        if (sscanf(line, "op host=%" SCNu64, &h) == 1 || sscanf(line, "wait host=%" SCNu64, &h) == 1) {
            ordered &= h >= last;
            last = h;
        } else if (sscanf(line, "batch n=%u", &n) == 1) {
            batches++;
            oversized += n > 256;
        }
    }
    CHECK(ordered, "host times decreased on the wire");
    CHECK(batches >= THREADS * LAUNCHES / 256 && !oversized, "%d batches, %d over 256 ops", batches, oversized);
    free(log);
}

static uint64_t fnv1a(const ncclUniqueId *id)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < sizeof id->internal; i++) {
        h ^= (uint8_t)id->internal[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static void case_nccl(void)
{
    int v;
    CHECK_NCCL(ncclGetVersion(&v), ncclSuccess);
    CHECK(v == NCCL_VERSION_CODE, "NCCL version %d", v);
    ncclComm_t comms[2];
    int devs[2] = {0, 1};
    CHECK_NCCL(ncclCommInitAll(comms, 2, devs), ncclSuccess);
    int dups[2] = {1, 1};
    ncclComm_t bad[2];
    CHECK_NCCL(ncclCommInitAll(bad, 2, dups), ncclInvalidUsage);
    float *send[2], *recv[2];
    cudaStream_t s[2];
    for (int i = 0; i < 2; i++) {
        int n = -1;
        CHECK_NCCL(ncclCommCount(comms[i], &n), ncclSuccess);
        CHECK(n == 2, "count %d", n);
        CHECK_NCCL(ncclCommCuDevice(comms[i], &n), ncclSuccess);
        CHECK(n == i, "device %d", n);
        CHECK_NCCL(ncclCommUserRank(comms[i], &n), ncclSuccess);
        CHECK(n == i, "rank %d", n);
        CHECK_CUDA(cudaSetDevice(i), cudaSuccess);
        CHECK_CUDA(cudaMalloc((void **)&send[i], 4096), cudaSuccess);
        CHECK_NCCL(ncclMemAlloc((void **)&recv[i], 4096), ncclSuccess);
        CHECK_CUDA(cudaStreamCreate(&s[i]), cudaSuccess);
    }
    for (int round = 0; round < 2; round++) {
        CHECK_NCCL(ncclGroupStart(), ncclSuccess);
        for (int i = 0; i < 2; i++)
            CHECK_NCCL(ncclAllReduce(send[i], recv[i], 1024, ncclFloat, ncclSum, comms[i], s[i]), ncclSuccess);
        CHECK_NCCL(ncclGroupEnd(), ncclSuccess);
    }
    CHECK_NCCL(ncclAllReduce(send[0], recv[0], 1024, ncclFloat, ncclSum, comms[0], s[1]), ncclInvalidArgument);
    char host[64];
    CHECK_NCCL(ncclAllReduce(host, recv[0], 16, ncclFloat, ncclSum, comms[0], s[0]), ncclInvalidArgument);
    CHECK_NCCL(ncclAllReduce(send[0], recv[0], 16, (ncclDataType_t)99, ncclSum, comms[0], s[0]), ncclInvalidArgument);
    CHECK_NCCL(ncclGroupEnd(), ncclInvalidUsage);
    ncclResult_t async = ncclInternalError;
    CHECK_NCCL(ncclCommGetAsyncError(comms[0], &async), ncclSuccess);
    CHECK(async == ncclSuccess, "async error %d", (int)async);

    /* Unsupported calls say so, once each, and fail. */
    CHECK_NCCL(ncclGather(send[0], recv[0], 16, ncclFloat, 0, comms[0], s[0]), ncclInvalidUsage);
    CHECK_NCCL(pncclGather(send[0], recv[0], 16, ncclFloat, 0, comms[0], s[0]), ncclInvalidUsage);
    CHECK(strstr(ncclGetLastError(comms[0]), "ncclGather") != NULL, "last error: %s", ncclGetLastError(NULL));
    CHECK_NCCL(ncclScatter(send[0], recv[0], 16, ncclFloat, 0, comms[0], s[0]), ncclInvalidUsage);

    /* The other collectives, in one group (the third): bytes as hysim.proto
     * defines them per kind; Sends and Recvs counted per peer, not in seq. */
    CHECK_NCCL(ncclGroupStart(), ncclSuccess);
    for (int i = 0; i < 2; i++) {
        CHECK_NCCL(ncclAllGather(send[i], recv[i], 16, ncclFloat, comms[i], s[i]), ncclSuccess);
        CHECK_NCCL(ncclReduceScatter(send[i], recv[i], 8, ncclInt64, ncclSum, comms[i], s[i]), ncclSuccess);
        CHECK_NCCL(ncclBroadcast(send[i], recv[i], 100, ncclUint8, 1, comms[i], s[i]), ncclSuccess);
        CHECK_NCCL(ncclReduce(send[i], recv[i], 10, ncclFloat16, ncclMax, 0, comms[i], s[i]), ncclSuccess);
        CHECK_NCCL(ncclAlltoAll(send[i], recv[i], 4, ncclFloat64, comms[i], s[i]), ncclSuccess);
        CHECK_NCCL(ncclRecv(recv[i], 3, ncclFloat, 1 - i, comms[i], s[i]), ncclSuccess);
        CHECK_NCCL(ncclSend(send[i], 3, ncclFloat, 1 - i, comms[i], s[i]), ncclSuccess);
        CHECK_NCCL(ncclSend(send[i], 3, ncclFloat, 1 - i, comms[i], s[i]), ncclSuccess);
    }
    CHECK_NCCL(ncclGroupEnd(), ncclSuccess);
    CHECK_NCCL(ncclBcast(send[0], 4, ncclFloat, 0, comms[0], s[0]), ncclSuccess);
    CHECK_NCCL(ncclBroadcast(send[0], recv[0], 4, ncclFloat, 2, comms[0], s[0]), ncclInvalidArgument);
    CHECK_NCCL(ncclSend(send[0], 4, ncclFloat, -1, comms[0], s[0]), ncclInvalidArgument);
    CHECK_NCCL(ncclReduce(send[0], host, 4, ncclFloat, ncclSum, 1, comms[0], s[0]),
               ncclSuccess); /* recvbuff: root's only */
    CHECK(!strcmp(ncclGetErrorString(ncclInvalidUsage), "invalid usage (run with NCCL_DEBUG=WARN for details)"),
          "error string");

    ncclUniqueId id;
    CHECK_NCCL(ncclGetUniqueId(&id), ncclSuccess);
    CHECK(!memcmp(id.internal, "hysimUID", 8), "unique id magic");
    ncclComm_t single;
    CHECK_CUDA(cudaSetDevice(1), cudaSuccess);
    CHECK_NCCL(ncclCommInitRank(&single, 1, id, 0), ncclSuccess);
    CHECK_NCCL(ncclCommInitRank(&single, 1, id, 1), ncclInvalidArgument);
    CHECK_NCCL(ncclCommFinalize(single), ncclSuccess);
    CHECK_NCCL(ncclCommDestroy(single), ncclSuccess);
    for (int i = 0; i < 2; i++) {
        CHECK_NCCL(ncclCommDestroy(comms[i]), ncclSuccess);
        CHECK_NCCL(ncclMemFree(recv[i]), ncclSuccess);
    }

    CHECK_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    char *log = read_log();
    int64_t key = last_value(log, "comm_init key=", "key=");
    char line[160];
    snprintf(line, sizeof line, "gpu=1 stream=0 comm_init key=%" PRIx64 " rank=0 nranks=1", fnv1a(&id));
    CHECK(count_lines(log, line) == 1, "%s", line);
    CHECK(count_lines(log, "gpu=0 stream=0 comm_init key=") == 1 &&
              count_lines(log, "gpu=1 stream=0 comm_init key=") == 2,
          "one CommInit per rank on its GPU");
    CHECK(count_lines(log, "nranks=2") == 2, "InitAll: two ranks of two");
    CHECK(count_lines(log, "rank=0 seq=0 kind=0 bytes=4096") == 1 &&
              count_lines(log, "rank=1 seq=0 kind=0 bytes=4096") == 1 &&
              count_lines(log, "rank=0 seq=1 kind=0 bytes=4096") == 1 &&
              count_lines(log, "rank=1 seq=1 kind=0 bytes=4096") == 1,
          "AllReduce parts with per-rank sequence numbers");
    for (int i = 0; i < 2; i++) {
        static const char *const want[] = {
            "seq=2 kind=1 bytes=64 root=0 group=3",  "seq=3 kind=2 bytes=64 root=0 group=3",
            "seq=4 kind=3 bytes=100 root=1 group=3", "seq=5 kind=4 bytes=20 root=0 group=3",
            "seq=6 kind=7 bytes=32 root=0 group=3",
        };
        for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
            snprintf(line, sizeof line, "rank=%d %s", i, want[w]);
            CHECK(count_lines(log, line) == 1, "%s", line);
        }
        const char *p2p[] = {"seq=0 kind=6 bytes=12", "seq=0 kind=5 bytes=12", "seq=1 kind=5 bytes=12"};
        for (size_t w = 0; w < 3; w++) {
            snprintf(line, sizeof line, "rank=%d %s root=%d group=3", i, p2p[w], 1 - i);
            CHECK(count_lines(log, line) == 1, "%s", line);
        }
    }
    CHECK(count_lines(log, "rank=0 seq=7 kind=3 bytes=16 root=0 group=0") == 1, "ncclBcast outside a group");
    CHECK(count_lines(log, "rank=0 seq=8 kind=4 bytes=16 root=1 group=0") == 1, "ncclReduce off the root");
    CHECK(count_lines(log, "comm_destroy") == 3, "one CommDestroy per rank (finalize + destroy send one)");
    (void)key;
    free(log);
}

/* Without HYSIM_ENDPOINT: clocks pass through; CUDA and NCCL fail with a message. */
static void case_no_endpoint(void)
{
    uint64_t a = ns_of(CLOCK_MONOTONIC), r = raw_ns(CLOCK_MONOTONIC);
    CHECK(r - a < 50000000, "CLOCK_MONOTONIC passes through (%" PRIu64 " vs %" PRIu64 ")", a, r);
    CHECK(llabs((long long)time(NULL) - (long long)(raw_ns(CLOCK_REALTIME) / 1000000000)) <= 1,
          "time() passes through");
    int n = 7;
    CHECK_CUDA(cudaGetDeviceCount(&n), cudaErrorNoDevice);
    CHECK(n == 0, "device count %d", n);
    void *p;
    CHECK_CUDA(cudaMalloc(&p, 16), cudaErrorNoDevice);
    CHECK_CUDA(cudaGetLastError(), cudaErrorNoDevice);
    ncclUniqueId id;
    CHECK_NCCL(ncclGetUniqueId(&id), ncclSystemError);
    ncclComm_t c;
    CHECK_NCCL(ncclCommInitAll(&c, 1, NULL), ncclSystemError);
    CHECK(cuInit(0) == CUDA_ERROR_NO_DEVICE, "cuInit");
    CHECK(!strcmp(cudaGetErrorString(cudaErrorNoDevice), "no CUDA-capable device is detected"), "string");
}

/* Synchronises until hysimd goes away: the process must end with status 1, not hang. */
static void case_lost(void)
{
    for (int i = 0; i < 10; i++) {
        void *p;
        CHECK_CUDA(cudaMalloc(&p, 16), cudaSuccess);
        CHECK_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    }
    printf("unreachable\n");
    exit(3);
}

static void case_reply_error(void)
{
    CHECK_CUDA(cudaDeviceSynchronize(), cudaErrorUnknown);
    CHECK_CUDA(cudaGetLastError(), cudaErrorUnknown);
    CHECK_CUDA(cudaStreamQuery(NULL), cudaSuccess); /* a query is still answered */
}

static void case_register_error(void)
{
    int n = 5;
    CHECK_CUDA(cudaGetDeviceCount(&n), cudaErrorNoDevice);
    CHECK_CUDA(cudaSetDevice(0), cudaErrorNoDevice);
}

/* Prints every cudaError value the library names, for the header comparison. */
static void case_error_names(void)
{
    for (int i = 0; i < 20000; i++) {
        const char *n = cudaGetErrorName((cudaError_t)i);
        if (strcmp(n, "unrecognized error code"))
            printf("%s %d\n", n, i);
    }
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    if (!strcmp(c, "props"))
        case_props();
    else if (!strcmp(c, "memory"))
        case_memory();
    else if (!strcmp(c, "events"))
        case_events();
    else if (!strcmp(c, "clock_zero"))
        case_clock_zero();
    else if (!strcmp(c, "clock_fixed"))
        case_clock_fixed();
    else if (!strcmp(c, "clock_setup"))
        case_clock_setup();
    else if (!strcmp(c, "clock_real"))
        case_clock_real(argc > 2 ? atof(argv[2]) : 1.0);
    else if (!strcmp(c, "clock_preempted"))
        case_clock_preempted();
    else if (!strcmp(c, "order"))
        case_order();
    else if (!strcmp(c, "nccl"))
        case_nccl();
    else if (!strcmp(c, "no_endpoint"))
        case_no_endpoint();
    else if (!strcmp(c, "lost"))
        case_lost();
    else if (!strcmp(c, "reply_error"))
        case_reply_error();
    else if (!strcmp(c, "register_error"))
        case_register_error();
    else if (!strcmp(c, "error_names")) {
        case_error_names();
        return 0;
    } else {
        fprintf(stderr, "usage: client_test CASE\n");
        return 2;
    }
    printf("%s: %d checks, %d failed\n", c, checks, failures);
    return failures ? 1 : 0;
}
