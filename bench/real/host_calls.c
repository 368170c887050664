/*
 * host_calls.so: how long a real program's CUDA, cuBLAS and NCCL calls take
 * on the host, call by call, while the program runs as it always does on
 * real GPUs (LD_PRELOAD; bench/real/host_calls_real.sh builds and runs it).
 *
 * hysim's `host_time: calls` charges every intercepted call a fixed cost
 * measured in isolation (bench/real/api_cost.cu: a call repeated on an idle
 * GPU). A training step issues calls in another context: two devices from
 * one thread, long queues, TF32 GEMMs whose kernels take TMA descriptors,
 * groups of send and receive. This library times each call the program
 * makes there, entry to return (only the outermost call of a thread: cuBLAS
 * and NCCL call the runtime themselves), and at exit prints per call its
 * count, median, mean, 90th percentile and the sum, plus the process's wall
 * time, so that a step's host time can be summed call by call and set
 * beside what hysim charges.
 *
 * Blocking calls (synchronizes) are listed too; their time is mostly the
 * GPU's, not the host's, and is shown apart from the others' sum.
 */
#define _GNU_SOURCE
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <errno.h>
#include <nccl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_SAMPLES = 1 << 20 };

typedef struct call_stats {
    const char *name;
    int blocking; /* waits for the GPU: its time is not host work */
    uint32_t *ns; /* durations, nanoseconds (saturated at 4.29 s) */
    size_t count, kept;
    double sum_ns;
} call_stats;

/* One X-macro list, not code to wrap. */
/* clang-format off */
#define CALLS(X) \
    X(cudaLaunchKernel, 0) X(__cudaLaunchKernel, 0) X(cudaMemcpyAsync, 0) X(cudaMemsetAsync, 0) \
    X(cudaEventRecord, 0) X(cudaStreamWaitEvent, 0) X(cudaSetDevice, 0) X(cudaGetLastError, 0) \
    X(cudaEventElapsedTime, 0) X(cudaStreamSynchronize, 1) X(cudaEventSynchronize, 1) \
    X(cudaDeviceSynchronize, 1) X(cublasGemmEx, 0) X(cublasGemmStridedBatchedEx, 0) X(cublasSgemm_v2, 0) \
    X(ncclGroupStart, 0) X(ncclGroupEnd, 0) X(ncclSend, 0) X(ncclRecv, 0) X(ncclAllReduce, 0) \
    X(ncclAllGather, 0) X(ncclReduceScatter, 0) X(ncclAlltoAll, 0)
/* clang-format on */

#define CALL_ENUM(name, blocking) CALL_##name,
enum { CALLS(CALL_ENUM) CALL_COUNT };
#define CALL_ENTRY(name, blocking) {#name, blocking, NULL, 0, 0, 0},
static call_stats g_calls[CALL_COUNT] = {CALLS(CALL_ENTRY)};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int t_depth; /* > 0 inside a timed call: nested calls are its own */
static uint64_t g_start_ns;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *next_symbol(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "host_calls: %s not found after this library\n", name);
        abort();
    }
    return f;
}

static void record(int call, uint64_t ns)
{
    call_stats *c = &g_calls[call];
    pthread_mutex_lock(&g_lock);
    if (!c->ns)
        c->ns = malloc(sizeof *c->ns * MAX_SAMPLES);
    if (c->ns && c->kept < MAX_SAMPLES)
        c->ns[c->kept++] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
    c->count++;
    c->sum_ns += (double)ns;
    pthread_mutex_unlock(&g_lock);
}

/* One wrapper: resolve the next definition once, time the outermost call. */
#define WRAP(ret, name, params, args)                 \
    ret name params                                   \
    {                                                 \
        static ret(*real) params;                     \
        if (!real)                                    \
            real = (ret(*) params)next_symbol(#name); \
        if (t_depth++)                                \
            return t_depth--, real args;              \
        uint64_t t0 = now_ns();                       \
        ret r = real args;                            \
        record(CALL_##name, now_ns() - t0);           \
        t_depth--;                                    \
        return r;                                     \
    }

WRAP(cudaError_t, cudaLaunchKernel, (const void *f, dim3 g, dim3 b, void **a, size_t sh, cudaStream_t s),
     (f, g, b, a, sh, s))
/* what nvcc 13's <<<...>>> calls */
WRAP(cudaError_t, __cudaLaunchKernel, (cudaKernel_t k, dim3 g, dim3 b, void **a, size_t sh, cudaStream_t s),
     (k, g, b, a, sh, s))
WRAP(cudaError_t, cudaMemcpyAsync, (void *d, const void *s, size_t n, enum cudaMemcpyKind k, cudaStream_t st),
     (d, s, n, k, st))
WRAP(cudaError_t, cudaMemsetAsync, (void *d, int v, size_t n, cudaStream_t s), (d, v, n, s))
WRAP(cudaError_t, cudaEventRecord, (cudaEvent_t e, cudaStream_t s), (e, s))
WRAP(cudaError_t, cudaStreamWaitEvent, (cudaStream_t s, cudaEvent_t e, unsigned int f), (s, e, f))
WRAP(cudaError_t, cudaSetDevice, (int d), (d))
WRAP(cudaError_t, cudaGetLastError, (void), ())
WRAP(cudaError_t, cudaEventElapsedTime, (float *ms, cudaEvent_t a, cudaEvent_t b), (ms, a, b))
WRAP(cudaError_t, cudaStreamSynchronize, (cudaStream_t s), (s))
WRAP(cudaError_t, cudaEventSynchronize, (cudaEvent_t e), (e))
WRAP(cudaError_t, cudaDeviceSynchronize, (void), ())
WRAP(cublasStatus_t, cublasGemmEx,
     (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void *al, const void *A,
      cudaDataType at, int lda, const void *B, cudaDataType bt, int ldb, const void *be, void *C, cudaDataType ct,
      int ldc, cublasComputeType_t cmp, cublasGemmAlgo_t algo),
     (h, ta, tb, m, n, k, al, A, at, lda, B, bt, ldb, be, C, ct, ldc, cmp, algo))
WRAP(cublasStatus_t, cublasGemmStridedBatchedEx,
     (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void *al, const void *A,
      cudaDataType at, int lda, long long sa, const void *B, cudaDataType bt, int ldb, long long sb, const void *be,
      void *C, cudaDataType ct, int ldc, long long sc, int batch, cublasComputeType_t cmp, cublasGemmAlgo_t algo),
     (h, ta, tb, m, n, k, al, A, at, lda, sa, B, bt, ldb, sb, be, C, ct, ldc, sc, batch, cmp, algo))
WRAP(cublasStatus_t, cublasSgemm_v2,
     (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const float *al,
      const float *A, int lda, const float *B, int ldb, const float *be, float *C, int ldc),
     (h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc))
WRAP(ncclResult_t, ncclGroupStart, (void), ())
WRAP(ncclResult_t, ncclGroupEnd, (void), ())
WRAP(ncclResult_t, ncclSend, (const void *b, size_t n, ncclDataType_t t, int p, ncclComm_t c, cudaStream_t s),
     (b, n, t, p, c, s))
WRAP(ncclResult_t, ncclRecv, (void *b, size_t n, ncclDataType_t t, int p, ncclComm_t c, cudaStream_t s),
     (b, n, t, p, c, s))
WRAP(ncclResult_t, ncclAllReduce,
     (const void *sb, void *rb, size_t n, ncclDataType_t t, ncclRedOp_t op, ncclComm_t c, cudaStream_t s),
     (sb, rb, n, t, op, c, s))
WRAP(ncclResult_t, ncclAllGather, (const void *sb, void *rb, size_t n, ncclDataType_t t, ncclComm_t c, cudaStream_t s),
     (sb, rb, n, t, c, s))
WRAP(ncclResult_t, ncclReduceScatter,
     (const void *sb, void *rb, size_t n, ncclDataType_t t, ncclRedOp_t op, ncclComm_t c, cudaStream_t s),
     (sb, rb, n, t, op, c, s))
WRAP(ncclResult_t, ncclAlltoAll, (const void *sb, void *rb, size_t n, ncclDataType_t t, ncclComm_t c, cudaStream_t s),
     (sb, rb, n, t, c, s))

static int by_value(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

__attribute__((constructor)) static void host_calls_start(void) { g_start_ns = now_ns(); }

__attribute__((destructor)) static void host_calls_report(void)
{
    double wall_us = (double)(now_ns() - g_start_ns) / 1e3, host_us = 0;
    FILE *out = stderr;
    const char *path = getenv("HOST_CALLS_OUT");
    if (path && *path && !(out = fopen(path, "a")))
        out = stderr;
    fprintf(out, "# host_calls: %s, wall %.0f us\n", program_invocation_short_name, wall_us);
    fprintf(out, "%-28s %9s %9s %9s %9s %12s\n", "call", "count", "median", "mean", "p90", "sum(us)");
    for (int i = 0; i < CALL_COUNT; i++) {
        call_stats *c = &g_calls[i];
        if (!c->count)
            continue;
        double med = 0, p90 = 0;
        if (c->kept) {
            qsort(c->ns, c->kept, sizeof *c->ns, by_value);
            med = c->ns[c->kept / 2] / 1e3;
            p90 = c->ns[c->kept * 9 / 10] / 1e3;
        }
        fprintf(out, "%-28s %9zu %9.3f %9.3f %9.3f %12.1f%s\n", c->name, c->count, med, c->sum_ns / 1e3 / c->count, p90,
                c->sum_ns / 1e3, c->blocking ? "  (blocking)" : "");
        if (!c->blocking)
            host_us += c->sum_ns / 1e3;
    }
    fprintf(out, "# non-blocking calls: %.0f us in all (%.1f %% of the wall time)\n", host_us, 100 * host_us / wall_us);
    if (out != stderr)
        fclose(out);
}
