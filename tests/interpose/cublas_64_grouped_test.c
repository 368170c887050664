/*
 * The 64-bit-index and grouped-batched GEMM entry points of libcublas.so.13
 * (interpose/blas/cublas.c), called as a C program built against the real
 * cublas_v2.h calls them.
 *
 * usage: cublas_64_grouped_test ops    (under the fake daemon, run_with_daemon.sh)
 *          each call's GEMM ops as the daemon logs them: how many, in what
 *          order, their shape, batch, type and leading dimensions (sizes past
 *          INT32_MAX reach it whole); a grouped call is one op per group;
 *          bad arguments return what the 32-bit twin returns
 *          (CUBLAS_STATUS_INVALID_VALUE) and send nothing.
 *        cublas_64_grouped_test time   (under hysim run, host_time: zero)
 *          a _64 call takes the simulated time of its 32-bit twin, and a
 *          grouped call of three groups the time of the three single calls.
 * Prints "cublas_64_grouped MODE: ok" or CHECK failures.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "test_check.h"

#include "cublas_hgemm.h" /* C has no __half: the Hgemm family as libcublas defines it */

#define CHECK_BLAS(call, want)                                                                 \
    do {                                                                                       \
        cublasStatus_t got_ = (call);                                                          \
        CHECK(got_ == (want), "%s returned %s, expected %s", #call, cublasGetStatusName(got_), \
              cublasGetStatusName(want));                                                      \
    } while (0)
#define CHECK_OK(call) CHECK_BLAS(call, CUBLAS_STATUS_SUCCESS)

#define NN  CUBLAS_OP_N, CUBLAS_OP_N
#define BIG 3000000000LL /* past INT32_MAX: a size only the _64 forms can carry */

static cublasHandle_t h;
static cudaStream_t s;
static void *d;             /* device memory: no call reads it */
static const void *ptrs[8]; /* the batched calls' pointer arrays */
static void *const *outs = (void *const *)ptrs;
static const float onef = 1;
static const double oned = 1;
static const cublasOperation_t ops_n[3] = {CUBLAS_OP_N, CUBLAS_OP_N, CUBLAS_OP_N};

/* ---- ops: the fake daemon's log ---- */

static int seen; /* GEMM ops of the log already checked */

/* The log's GEMM op lines, from "kernel name=" on; *n of them. */
static char **gemm_lines(int *n)
{
    const char *path = getenv("HYSIM_TEST_LOG");
    FILE *f = path ? fopen(path, "r") : NULL;
    CHECK(f, "cannot read the fake daemon's log (HYSIM_TEST_LOG=%s)", path ? path : "(unset)");
    char line[1024], **out = NULL;
    *n = 0;
    while (fgets(line, sizeof line, f)) {
        char *at = strstr(line, "kernel name=");
        if (!at || !strstr(at, " gemm="))
            continue;
        at[strcspn(at, "\n")] = '\0';
        out = realloc(out, (size_t)(*n + 1) * sizeof *out);
        out[(*n)++] = strdup(at);
    }
    fclose(f);
    return out;
}

/* The GEMM ops sent since the last expect(): exactly `want` (count lines), in order. */
static void expect(const char *what, int count, const char *const want[])
{
    CHECK(cudaStreamSynchronize(s) == cudaSuccess, "sync"); /* the daemon logs before it answers */
    int n;
    char **lines = gemm_lines(&n);
    CHECK(n - seen == count, "%s: %d GEMM ops, expected %d", what, n - seen, count);
    for (int i = 0; i < count; i++)
        CHECK(!strcmp(lines[seen + i], want[i]), "%s: op %d is\n  %s\nexpected\n  %s", what, i, lines[seen + i],
              want[i]);
    for (int i = 0; i < n; i++)
        free(lines[i]);
    free(lines);
    seen = n;
}

/* The log line of one GEMM op (into a rotating buffer). */
static const char *op(const char *name, long long m, long long n, long long k, long long batch, int dtype,
                      long long lda, long long ldb, long long ldc)
{
    static char buf[16][256];
    static int next;
    char *b = buf[next++ % 16];
    snprintf(b, sizeof buf[0],
             "kernel name=%s grid=1,1,1 block=1,1,1 shared=0 gemm=%lldx%lldx%lld batch=%lld dtype=%d ld=%lld,%lld,%lld",
             name, m, n, k, batch, dtype, lda, ldb, ldc);
    return b;
}

#define EXPECT1(what, line) expect(what, 1, (const char *const[]){line})

/* Every typed and mixed-type _64 form: one op each, its 64-bit sizes whole. */
static void ops_64(void)
{
    CHECK_OK(cublasSgemm_64(h, NN, BIG, 2, 4, &onef, d, BIG, d, 4, &onef, d, BIG)); /* cublas_v2.h: _v2_64 */
    EXPECT1("cublasSgemm_64", op("cublasSgemm_v2_64", BIG, 2, 4, 1, 0, BIG, 4, BIG));
    CHECK_OK(cublasDgemm_64(h, NN, 8, BIG, 16, &oned, d, 8, d, 16, &oned, d, 8));
    EXPECT1("cublasDgemm_64", op("cublasDgemm_v2_64", 8, BIG, 16, 1, 3, 8, 16, 8));
    CHECK_OK(cublasHgemm_64(h, NN, 16, 8, BIG, d, d, 16, d, BIG, d, d, 16));
    EXPECT1("cublasHgemm_64", op("cublasHgemm_64", 16, 8, BIG, 1, 1, 16, BIG, 16));

    CHECK_OK(cublasSgemmStridedBatched_64(h, NN, 32, 16, 8, &onef, d, 40, 0, d, 8, 0, &onef, d, 32, 0, BIG));
    EXPECT1("cublasSgemmStridedBatched_64", op("cublasSgemmStridedBatched_64", 32, 16, 8, BIG, 0, 40, 8, 32));
    CHECK_OK(cublasDgemmStridedBatched_64(h, NN, 24, 16, 8, &oned, d, 24, 0, d, 8, 0, &oned, d, 24, 0, 5));
    EXPECT1("cublasDgemmStridedBatched_64", op("cublasDgemmStridedBatched_64", 24, 16, 8, 5, 3, 24, 8, 24));
    CHECK_OK(cublasHgemmStridedBatched_64(h, NN, 64, 16, 8, d, d, 64, 0, d, 8, 0, d, d, 64, 0, 6));
    EXPECT1("cublasHgemmStridedBatched_64", op("cublasHgemmStridedBatched_64", 64, 16, 8, 6, 1, 64, 8, 64));

    CHECK_OK(cublasSgemmBatched_64(h, NN, 8, 8, 8, &onef, (const float *const *)ptrs, 8, (const float *const *)ptrs, 8,
                                   &onef, (float *const *)outs, 8, 7));
    EXPECT1("cublasSgemmBatched_64", op("cublasSgemmBatched_64", 8, 8, 8, 7, 0, 8, 8, 8));
    CHECK_OK(cublasDgemmBatched_64(h, NN, 8, 8, 16, &oned, (const double *const *)ptrs, 8, (const double *const *)ptrs,
                                   16, &oned, (double *const *)outs, 8, 2));
    EXPECT1("cublasDgemmBatched_64", op("cublasDgemmBatched_64", 8, 8, 16, 2, 3, 8, 16, 8));
    CHECK_OK(cublasHgemmBatched_64(h, NN, 8, 16, 8, d, ptrs, 8, ptrs, 8, d, outs, 8, 3));
    EXPECT1("cublasHgemmBatched_64", op("cublasHgemmBatched_64", 8, 16, 8, 3, 1, 8, 8, 8));

    CHECK_OK(cublasGemmEx_64(h, NN, BIG, 64, 32, &onef, d, CUDA_R_16BF, BIG, d, CUDA_R_16BF, 32, &onef, d, CUDA_R_16BF,
                             BIG, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    EXPECT1("cublasGemmEx_64", op("cublasGemmEx_64", BIG, 64, 32, 1, 2, BIG, 32, BIG));
    CHECK_OK(cublasGemmStridedBatchedEx_64(h, NN, 128, 64, 32, &onef, d, CUDA_R_32F, 128, 0, d, CUDA_R_32F, 32, 0,
                                           &onef, d, CUDA_R_32F, 128, 0, 4, CUBLAS_COMPUTE_32F_FAST_TF32,
                                           CUBLAS_GEMM_DEFAULT));
    EXPECT1("cublasGemmStridedBatchedEx_64", op("cublasGemmStridedBatchedEx_64", 128, 64, 32, 4, 4, 128, 32, 128));
    CHECK_OK(cublasGemmBatchedEx_64(h, NN, 64, 64, 64, &onef, ptrs, CUDA_R_16F, 64, ptrs, CUDA_R_16F, 64, &onef, outs,
                                    CUDA_R_16F, 64, 9, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    EXPECT1("cublasGemmBatchedEx_64", op("cublasGemmBatchedEx_64", 64, 64, 64, 9, 1, 64, 64, 64));

    /* the handle's math mode decides fp32 or tf32, as for cublasSgemm */
    CHECK_OK(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH));
    CHECK_OK(cublasSgemm_64(h, NN, 16, 16, 16, &onef, d, 16, d, 16, &onef, d, 16));
    EXPECT1("cublasSgemm_64 under TF32 math", op("cublasSgemm_v2_64", 16, 16, 16, 1, 4, 16, 16, 16));
    CHECK_OK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
}

/* Grouped calls: one op per group with work, in group order. */
static void ops_grouped(void)
{
    const int m[3] = {64, 128, 32}, n[3] = {16, 8, 24}, k[3] = {8, 32, 16};
    const int lda[3] = {64, 130, 32}, ldb[3] = {8, 32, 16}, ldc[3] = {64, 128, 40}, size[3] = {2, 1, 3};
    const float alphaf[3] = {1, 1, 1};
    const double alphad[3] = {1, 1, 1};
    CHECK_OK(cublasSgemmGroupedBatched(h, ops_n, ops_n, m, n, k, alphaf, (const float *const *)ptrs, lda,
                                       (const float *const *)ptrs, ldb, alphaf, (float *const *)outs, ldc, 3, size));
    expect("cublasSgemmGroupedBatched", 3,
           (const char *const[]){op("cublasSgemmGroupedBatched", 64, 16, 8, 2, 0, 64, 8, 64),
                                 op("cublasSgemmGroupedBatched", 128, 8, 32, 1, 0, 130, 32, 128),
                                 op("cublasSgemmGroupedBatched", 32, 24, 16, 3, 0, 32, 16, 40)});
    CHECK_OK(cublasDgemmGroupedBatched(h, ops_n, ops_n, m, n, k, alphad, (const double *const *)ptrs, lda,
                                       (const double *const *)ptrs, ldb, alphad, (double *const *)outs, ldc, 2, size));
    expect("cublasDgemmGroupedBatched", 2,
           (const char *const[]){op("cublasDgemmGroupedBatched", 64, 16, 8, 2, 3, 64, 8, 64),
                                 op("cublasDgemmGroupedBatched", 128, 8, 32, 1, 3, 130, 32, 128)});
    /* a group of no problems launches nothing */
    const int some[3] = {4, 0, 5};
    CHECK_OK(cublasGemmGroupedBatchedEx(h, ops_n, ops_n, m, n, k, alphaf, ptrs, CUDA_R_16BF, lda, ptrs, CUDA_R_16BF,
                                        ldb, alphaf, outs, CUDA_R_16BF, ldc, 3, some, CUBLAS_COMPUTE_32F));
    expect("cublasGemmGroupedBatchedEx", 2,
           (const char *const[]){op("cublasGemmGroupedBatchedEx", 64, 16, 8, 4, 2, 64, 8, 64),
                                 op("cublasGemmGroupedBatchedEx", 32, 24, 16, 5, 2, 32, 16, 40)});

    const int64_t m64[2] = {BIG, 16}, n64[2] = {8, BIG}, k64[2] = {16, 8}, ld64[2] = {BIG, 16}, size64[2] = {1, 2};
    CHECK_OK(cublasSgemmGroupedBatched_64(h, ops_n, ops_n, m64, n64, k64, alphaf, (const float *const *)ptrs, ld64,
                                          (const float *const *)ptrs, k64, alphaf, (float *const *)outs, ld64, 2,
                                          size64));
    expect("cublasSgemmGroupedBatched_64", 2,
           (const char *const[]){op("cublasSgemmGroupedBatched_64", BIG, 8, 16, 1, 0, BIG, 16, BIG),
                                 op("cublasSgemmGroupedBatched_64", 16, BIG, 8, 2, 0, 16, 8, 16)});
    CHECK_OK(cublasDgemmGroupedBatched_64(h, ops_n, ops_n, m64, n64, k64, alphad, (const double *const *)ptrs, ld64,
                                          (const double *const *)ptrs, k64, alphad, (double *const *)outs, ld64, 1,
                                          size64));
    EXPECT1("cublasDgemmGroupedBatched_64", op("cublasDgemmGroupedBatched_64", BIG, 8, 16, 1, 3, BIG, 16, BIG));
    CHECK_OK(cublasGemmGroupedBatchedEx_64(h, ops_n, ops_n, m64, n64, k64, alphaf, ptrs, CUDA_R_8F_E4M3, ld64, ptrs,
                                           CUDA_R_8F_E4M3, k64, alphaf, outs, CUDA_R_16BF, ld64, 2, size64,
                                           CUBLAS_COMPUTE_32F));
    expect("cublasGemmGroupedBatchedEx_64", 2,
           (const char *const[]){op("cublasGemmGroupedBatchedEx_64", BIG, 8, 16, 1, 5, BIG, 16, BIG),
                                 op("cublasGemmGroupedBatchedEx_64", 16, BIG, 8, 2, 5, 16, 8, 16)});

    /* no groups: nothing to check, nothing launched, even with no arrays */
    CHECK_OK(cublasSgemmGroupedBatched(h, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                       0, NULL));
    CHECK_OK(cublasGemmGroupedBatchedEx_64(h, NULL, NULL, NULL, NULL, NULL, NULL, NULL, CUDA_R_16BF, NULL, NULL,
                                           CUDA_R_16BF, NULL, NULL, NULL, CUDA_R_16BF, NULL, 0, NULL,
                                           CUBLAS_COMPUTE_32F));
    expect("group_count 0", 0, NULL);
}

/* Bad arguments: the _64 form answers as its 32-bit twin does, the grouped
 * calls as cuBLAS does, and nothing is sent (not even a valid group's GEMM). */
static void ops_errors(void)
{
    const cublasStatus_t INVALID = CUBLAS_STATUS_INVALID_VALUE;
    CHECK_BLAS(cublasGemmEx(h, NN, -1, 8, 8, &onef, d, CUDA_R_16BF, 8, d, CUDA_R_16BF, 8, &onef, d, CUDA_R_16BF, 8,
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               INVALID);
    CHECK_BLAS(cublasGemmEx_64(h, NN, -1, 8, 8, &onef, d, CUDA_R_16BF, 8, d, CUDA_R_16BF, 8, &onef, d, CUDA_R_16BF, 8,
                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               INVALID);
    CHECK_BLAS(cublasSgemm_64(h, NN, 8, 8, -BIG, &onef, d, 8, d, 8, &onef, d, 8), INVALID);
    CHECK_BLAS(cublasDgemmStridedBatched_64(h, NN, 8, 8, 8, &oned, d, 8, 0, d, 8, 0, &oned, d, 8, 0, -1), INVALID);
    CHECK_BLAS(cublasDgemmStridedBatched(h, NN, 8, 8, 8, &oned, d, 8, 0, d, 8, 0, &oned, d, 8, 0, -1), INVALID);
    CHECK_BLAS(cublasGemmBatchedEx_64(h, NN, 8, -2, 8, &onef, ptrs, CUDA_R_16F, 8, ptrs, CUDA_R_16F, 8, &onef, outs,
                                      CUDA_R_16F, 8, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               INVALID);
    /* a type hysim cannot time is refused alike */
    CHECK_BLAS(cublasGemmEx(h, NN, 8, 8, 8, &onef, d, CUDA_R_8I, 8, d, CUDA_R_8I, 8, &onef, d, CUDA_R_32I, 8,
                            CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT),
               CUBLAS_STATUS_NOT_SUPPORTED);
    CHECK_BLAS(cublasGemmEx_64(h, NN, 8, 8, 8, &onef, d, CUDA_R_8I, 8, d, CUDA_R_8I, 8, &onef, d, CUDA_R_32I, 8,
                               CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT),
               CUBLAS_STATUS_NOT_SUPPORTED);
    CHECK_BLAS(cublasHgemm_64(NULL, NN, 8, 8, 8, d, d, 8, d, 8, d, d, 8), CUBLAS_STATUS_NOT_INITIALIZED);

    const int m[2] = {8, 8}, n[2] = {8, -8}, k[2] = {8, 8}, ld[2] = {8, 8}, size[2] = {1, 1}, neg[2] = {1, -1};
    const float alpha[2] = {1, 1};
    const float *const *fa = (const float *const *)ptrs;
    float *const *fc = (float *const *)outs;
    CHECK_BLAS(cublasSgemmGroupedBatched(h, ops_n, ops_n, m, m, k, alpha, fa, ld, fa, ld, alpha, fc, ld, -1, size),
               INVALID);
    CHECK_BLAS(cublasSgemmGroupedBatched(h, ops_n, ops_n, m, n, k, alpha, fa, ld, fa, ld, alpha, fc, ld, 2, size),
               INVALID); /* group 1's n */
    CHECK_BLAS(cublasSgemmGroupedBatched(h, ops_n, ops_n, m, m, k, alpha, fa, ld, fa, ld, alpha, fc, ld, 2, neg),
               INVALID); /* group 1's size */
    CHECK_BLAS(cublasSgemmGroupedBatched(h, ops_n, ops_n, NULL, m, k, alpha, fa, ld, fa, ld, alpha, fc, ld, 2, size),
               INVALID);
    CHECK_BLAS(cublasSgemmGroupedBatched(h, ops_n, ops_n, m, m, k, alpha, fa, ld, fa, ld, alpha, fc, ld, 2, NULL),
               INVALID);
    CHECK_BLAS(cublasGemmGroupedBatchedEx(h, ops_n, ops_n, m, m, k, alpha, ptrs, CUDA_R_16BF, NULL, ptrs, CUDA_R_16BF,
                                          ld, alpha, outs, CUDA_R_16BF, ld, 2, size, CUBLAS_COMPUTE_32F),
               INVALID);
    CHECK_BLAS(cublasGemmGroupedBatchedEx(h, NULL, ops_n, m, m, k, alpha, ptrs, CUDA_R_16BF, ld, ptrs, CUDA_R_16BF, ld,
                                          alpha, outs, CUDA_R_16BF, ld, 2, size, CUBLAS_COMPUTE_32F),
               INVALID);
    const int64_t m64[2] = {8, 8}, k64[2] = {8, -BIG}, ld64[2] = {8, 8}, size64[2] = {1, 1};
    const double alphad[2] = {1, 1};
    CHECK_BLAS(cublasDgemmGroupedBatched_64(h, ops_n, ops_n, m64, m64, k64, alphad, (const double *const *)ptrs, ld64,
                                            (const double *const *)ptrs, ld64, alphad, (double *const *)outs, ld64, 2,
                                            size64),
               INVALID); /* group 1's k */
    CHECK_BLAS(cublasDgemmGroupedBatched_64(h, ops_n, ops_n, m64, m64, m64, alphad, (const double *const *)ptrs, ld64,
                                            (const double *const *)ptrs, ld64, alphad, (double *const *)outs, ld64,
                                            -BIG, size64),
               INVALID);
    CHECK_BLAS(cublasSgemmGroupedBatched_64(NULL, ops_n, ops_n, m64, m64, m64, alpha, fa, ld64, fa, ld64, alpha, fc,
                                            ld64, 1, size64),
               CUBLAS_STATUS_NOT_INITIALIZED);
    expect("refused calls", 0, NULL);
}

/* ---- time: hysimd's roofline ---- */

static cudaEvent_t ev_begin, ev_end;

static void begin(void) { CHECK(cudaEventRecord(ev_begin, s) == cudaSuccess, "record"); }

/* Simulated milliseconds since begin(). */
static float end_ms(void)
{
    float ms = -1;
    CHECK(cudaEventRecord(ev_end, s) == cudaSuccess && cudaEventSynchronize(ev_end) == cudaSuccess, "record/sync");
    CHECK(cudaEventElapsedTime(&ms, ev_begin, ev_end) == cudaSuccess, "elapsed");
    return ms;
}

#define TIMED(var, ...) \
    do {                \
        begin();        \
        __VA_ARGS__;    \
        var = end_ms(); \
    } while (0)

static void same_time(const char *what, float t32, float t64)
{
    printf("%-28s %.6f ms, _64 %.6f ms\n", what, t32, t64);
    CHECK(t32 > 0 && t64 == t32, "%s: 32-bit %.6f ms, _64 %.6f ms", what, t32, t64);
}

/* Each _64 form against its 32-bit twin, same arguments. */
static void time_64(void)
{
    const int M = 4096, N = 2048, K = 1024, B = 3;
    float a, b;
    TIMED(a, CHECK_OK(cublasSgemm(h, NN, M, N, K, &onef, d, M, d, K, &onef, d, M)));
    TIMED(b, CHECK_OK(cublasSgemm_64(h, NN, M, N, K, &onef, d, M, d, K, &onef, d, M)));
    same_time("cublasSgemm", a, b);
    TIMED(a, CHECK_OK(cublasDgemm(h, NN, M, N, K, &oned, d, M, d, K, &oned, d, M)));
    TIMED(b, CHECK_OK(cublasDgemm_64(h, NN, M, N, K, &oned, d, M, d, K, &oned, d, M)));
    same_time("cublasDgemm", a, b);
    TIMED(a, CHECK_OK(cublasHgemm(h, NN, M, N, K, d, d, M, d, K, d, d, M)));
    TIMED(b, CHECK_OK(cublasHgemm_64(h, NN, M, N, K, d, d, M, d, K, d, d, M)));
    same_time("cublasHgemm", a, b);
    TIMED(a, CHECK_OK(cublasSgemmStridedBatched(h, NN, M, N, K, &onef, d, M, 0, d, K, 0, &onef, d, M, 0, B)));
    TIMED(b, CHECK_OK(cublasSgemmStridedBatched_64(h, NN, M, N, K, &onef, d, M, 0, d, K, 0, &onef, d, M, 0, B)));
    same_time("cublasSgemmStridedBatched", a, b);
    TIMED(a, CHECK_OK(cublasDgemmBatched(h, NN, M, N, K, &oned, (const double *const *)ptrs, M,
                                         (const double *const *)ptrs, K, &oned, (double *const *)outs, M, B)));
    TIMED(b, CHECK_OK(cublasDgemmBatched_64(h, NN, M, N, K, &oned, (const double *const *)ptrs, M,
                                            (const double *const *)ptrs, K, &oned, (double *const *)outs, M, B)));
    same_time("cublasDgemmBatched", a, b);
    /* m = 1100 rows of bf16 are misaligned: the leading dimensions reach the model as they do for the 32-bit call */
    TIMED(a, CHECK_OK(cublasGemmEx(h, NN, 1100, N, K, &onef, d, CUDA_R_16BF, 1100, d, CUDA_R_16BF, K, &onef, d,
                                   CUDA_R_16BF, 1100, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)));
    TIMED(b, CHECK_OK(cublasGemmEx_64(h, NN, 1100, N, K, &onef, d, CUDA_R_16BF, 1100, d, CUDA_R_16BF, K, &onef, d,
                                      CUDA_R_16BF, 1100, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)));
    same_time("cublasGemmEx (m 1100)", a, b);
    TIMED(a, CHECK_OK(cublasGemmStridedBatchedEx(h, NN, M, N, K, &onef, d, CUDA_R_16F, M, 0, d, CUDA_R_16F, K, 0, &onef,
                                                 d, CUDA_R_16F, M, 0, B, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)));
    TIMED(b,
          CHECK_OK(cublasGemmStridedBatchedEx_64(h, NN, M, N, K, &onef, d, CUDA_R_16F, M, 0, d, CUDA_R_16F, K, 0, &onef,
                                                 d, CUDA_R_16F, M, 0, B, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)));
    same_time("cublasGemmStridedBatchedEx", a, b);
    TIMED(a, CHECK_OK(cublasGemmBatchedEx(h, NN, M, N, K, &onef, ptrs, CUDA_R_32F, M, ptrs, CUDA_R_32F, K, &onef, outs,
                                          CUDA_R_32F, M, B, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT)));
    TIMED(b,
          CHECK_OK(cublasGemmBatchedEx_64(h, NN, M, N, K, &onef, ptrs, CUDA_R_32F, M, ptrs, CUDA_R_32F, K, &onef, outs,
                                          CUDA_R_32F, M, B, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT)));
    same_time("cublasGemmBatchedEx", a, b);
}

/* A grouped call of three groups: the three single calls' time, whether
 * those are timed together or one by one; its _64 form the same. */
static void time_grouped(void)
{
    const int m[3] = {4096, 1100, 2048}, n[3] = {2048, 4096, 2048}, k[3] = {1024, 2048, 4096}, size[3] = {2, 1, 3};
    const int64_t m64[3] = {4096, 1100, 2048}, n64[3] = {2048, 4096, 2048}, k64[3] = {1024, 2048, 4096},
                  size64[3] = {2, 1, 3};
    float grouped, grouped64, together, one[3];
    TIMED(grouped,
          CHECK_OK(cublasGemmGroupedBatchedEx(h, ops_n, ops_n, m, n, k, &onef, ptrs, CUDA_R_16BF, m, ptrs, CUDA_R_16BF,
                                              k, &onef, outs, CUDA_R_16BF, m, 3, size, CUBLAS_COMPUTE_32F)));
    TIMED(grouped64, CHECK_OK(cublasGemmGroupedBatchedEx_64(h, ops_n, ops_n, m64, n64, k64, &onef, ptrs, CUDA_R_16BF,
                                                            m64, ptrs, CUDA_R_16BF, k64, &onef, outs, CUDA_R_16BF, m64,
                                                            3, size64, CUBLAS_COMPUTE_32F)));
#define GROUP_AS_STRIDED(i)                                                                                            \
    CHECK_OK(cublasGemmStridedBatchedEx(h, NN, m[i], n[i], k[i], &onef, d, CUDA_R_16BF, m[i], 0, d, CUDA_R_16BF, k[i], \
                                        0, &onef, d, CUDA_R_16BF, m[i], 0, size[i], CUBLAS_COMPUTE_32F,                \
                                        CUBLAS_GEMM_DEFAULT))
    TIMED(together, GROUP_AS_STRIDED(0); GROUP_AS_STRIDED(1); GROUP_AS_STRIDED(2));
    for (int i = 0; i < 3; i++)
        TIMED(one[i], GROUP_AS_STRIDED(i));
#undef GROUP_AS_STRIDED
    float sum = one[0] + one[1] + one[2];
    printf("cublasGemmGroupedBatchedEx   %.6f ms, _64 %.6f ms; three single calls %.6f ms together, "
           "%.6f + %.6f + %.6f = %.6f ms apart\n",
           grouped, grouped64, together, one[0], one[1], one[2], sum);
    CHECK(one[0] > 0 && one[1] > 0 && one[2] > 0, "single calls %.6f, %.6f, %.6f ms", one[0], one[1], one[2]);
    CHECK(grouped == together && grouped64 == grouped, "grouped %.6f ms, _64 %.6f ms, single calls together %.6f ms",
          grouped, grouped64, together);
    CHECK(fabsf(grouped - sum) <= 1e-3f * sum, "grouped %.6f ms, the sum of the single calls %.6f ms", grouped, sum);

    /* cublasSgemmGroupedBatched against cublasSgemmStridedBatched, and its _64 form */
    float sgrouped, sgrouped64, stogether;
    TIMED(sgrouped,
          CHECK_OK(cublasSgemmGroupedBatched(h, ops_n, ops_n, m, n, k, &onef, (const float *const *)ptrs, m,
                                             (const float *const *)ptrs, k, &onef, (float *const *)outs, m, 3, size)));
    TIMED(sgrouped64, CHECK_OK(cublasSgemmGroupedBatched_64(h, ops_n, ops_n, m64, n64, k64, &onef,
                                                            (const float *const *)ptrs, m64, (const float *const *)ptrs,
                                                            k64, &onef, (float *const *)outs, m64, 3, size64)));
    TIMED(stogether, for (int i = 0; i < 3; i++) CHECK_OK(cublasSgemmStridedBatched(
                         h, NN, m[i], n[i], k[i], &onef, d, m[i], 0, d, k[i], 0, &onef, d, m[i], 0, size[i])));
    printf("cublasSgemmGroupedBatched    %.6f ms, _64 %.6f ms; three single calls %.6f ms\n", sgrouped, sgrouped64,
           stogether);
    CHECK(sgrouped > 0 && sgrouped == stogether && sgrouped64 == sgrouped, "grouped %.6f, _64 %.6f, single %.6f ms",
          sgrouped, sgrouped64, stogether);

    float dgrouped, dgrouped64, dtogether;
    TIMED(dgrouped, CHECK_OK(cublasDgemmGroupedBatched(h, ops_n, ops_n, m, n, k, &oned, (const double *const *)ptrs, m,
                                                       (const double *const *)ptrs, k, &oned, (double *const *)outs, m,
                                                       3, size)));
    TIMED(dgrouped64, CHECK_OK(cublasDgemmGroupedBatched_64(
                          h, ops_n, ops_n, m64, n64, k64, &oned, (const double *const *)ptrs, m64,
                          (const double *const *)ptrs, k64, &oned, (double *const *)outs, m64, 3, size64)));
    TIMED(dtogether, for (int i = 0; i < 3; i++) CHECK_OK(cublasDgemmStridedBatched(
                         h, NN, m[i], n[i], k[i], &oned, d, m[i], 0, d, k[i], 0, &oned, d, m[i], 0, size[i])));
    printf("cublasDgemmGroupedBatched    %.6f ms, _64 %.6f ms; three single calls %.6f ms\n", dgrouped, dgrouped64,
           dtogether);
    CHECK(dgrouped > 0 && dgrouped == dtogether && dgrouped64 == dgrouped, "grouped %.6f, _64 %.6f, single %.6f ms",
          dgrouped, dgrouped64, dtogether);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "ops") && strcmp(mode, "time")) {
        fprintf(stderr, "usage: %s ops|time\n", argv[0]);
        return 2;
    }
    CHECK(cudaMalloc(&d, 1 << 20) == cudaSuccess, "cudaMalloc");
    for (int i = 0; i < 8; i++)
        ptrs[i] = d;
    CHECK(cudaStreamCreate(&s) == cudaSuccess, "stream");
    CHECK_OK(cublasCreate(&h));
    CHECK_OK(cublasSetStream(h, s));
    if (!strcmp(mode, "ops")) {
        ops_64();
        ops_grouped();
        ops_errors();
    } else {
        CHECK(cudaEventCreate(&ev_begin) == cudaSuccess && cudaEventCreate(&ev_end) == cudaSuccess, "events");
        time_64();
        time_grouped();
        cudaEventDestroy(ev_begin);
        cudaEventDestroy(ev_end);
    }
    CHECK_OK(cublasDestroy(h));
    CHECK(cudaStreamDestroy(s) == cudaSuccess && cudaFree(d) == cudaSuccess, "cleanup");
    printf("cublas_64_grouped %s: ok\n", mode);
    return 0;
}
