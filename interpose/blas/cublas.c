/*
 * libcublas.so.13: the handle, stream, workspace and math-mode calls, and the
 * GEMM entry points: Sgemm/Dgemm/Hgemm, GemmEx, their batched and strided
 * batched forms (_v2 names as cublas_v2.h maps them), the _64 form of each
 * (int64_t sizes, checked and timed as the 32-bit one), and the grouped
 * batched calls (cublasSgemmGroupedBatched, cublasDgemmGroupedBatched,
 * cublasGemmGroupedBatchedEx and their _64 forms), one GEMM per group, in
 * group order. Each GEMM becomes one kernel carrying its shape and type, which
 * hysimd times by its roofline (bridge/compute/gemm_model.h). Nothing is computed:
 * results stay as they were, as device memory is never backed. Every other
 * function the real library exports is a generated stub
 * (gen_symbol_stubs.sh) that says it is not supported yet.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <cublas_v2.h>

#include "client.h"
#include "cublas_common.h"

struct cublasContext {
    cudaStream_t stream;
    cublasMath_t math;
    cublasPointerMode_t pointer_mode;
    cublasAtomicsMode_t atomics;
    void *workspace;
    size_t workspace_bytes;
};

static cublasStatus_t status_of(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return CUBLAS_STATUS_SUCCESS;
    case cudaErrorInvalidResourceHandle: return CUBLAS_STATUS_INVALID_VALUE;
    case cudaErrorNotSupported: return CUBLAS_STATUS_NOT_SUPPORTED;
    default: return CUBLAS_STATUS_EXECUTION_FAILED;
    }
}

/* The checks cuBLAS makes before launching, then one kernel. */
static cublasStatus_t gemm(cublasHandle_t h, const char *name, int64_t m, int64_t n, int64_t k, int64_t lda,
                           int64_t ldb, int64_t ldc, int64_t batch, int dtype)
{
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (m < 0 || n < 0 || k < 0 || batch < 0 || dtype < 0)
        return dtype < 0 ? CUBLAS_STATUS_NOT_SUPPORTED : CUBLAS_STATUS_INVALID_VALUE;
    hs_cublas_gemm g = {m, n, k, batch, dtype, lda, ldb, ldc};
    return status_of(hs_cublas_send(name, &g, h->stream));
}

static int fp32_dtype(cublasHandle_t h) { return hs_cublas_sgemm_dtype(h ? (int)h->math : CUBLAS_DEFAULT_MATH); }

static int ex_dtype(cublasHandle_t h, cudaDataType a, cublasComputeType_t c)
{
    return hs_cublas_dtype(a, (int)c, h && hs_cublas_tf32_math((int)h->math));
}

/* ---- handle ---- */

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    if (!handle)
        return CUBLAS_STATUS_INVALID_VALUE;
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    cublasHandle_t h = calloc(1, sizeof *h);
    if (!h)
        return CUBLAS_STATUS_ALLOC_FAILED;
    h->math = CUBLAS_DEFAULT_MATH;
    h->pointer_mode = CUBLAS_POINTER_MODE_HOST;
    h->atomics = CUBLAS_ATOMICS_NOT_ALLOWED;
    *handle = h;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    free(handle);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version)
{
    (void)handle;
    if (!version)
        return CUBLAS_STATUS_INVALID_VALUE;
    *version = CUBLAS_VERSION;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetProperty(libraryPropertyType type, int *value)
{
    return (cublasStatus_t)hs_cublas_get_property(type, value);
}

size_t cublasGetCudartVersion(void) { return CUDART_VERSION; }

const char *cublasGetStatusName(cublasStatus_t status)
{
    switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "CUBLAS_STATUS_UNKNOWN";
    }
}

const char *cublasGetStatusString(cublasStatus_t status)
{
    switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "the operation completed successfully";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
    default: return "an error occurred";
    }
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->stream = stream;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *stream)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!stream)
        return CUBLAS_STATUS_INVALID_VALUE;
    *stream = handle->stream;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace, size_t bytes)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (bytes && !workspace)
        return CUBLAS_STATUS_INVALID_VALUE;
    handle->workspace = workspace;
    handle->workspace_bytes = bytes;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->math = mode;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!mode)
        return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->math;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->pointer_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t *mode)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!mode)
        return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->pointer_mode;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t mode)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->atomics = mode;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t *mode)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!mode)
        return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->atomics;
    return CUBLAS_STATUS_SUCCESS;
}

/* ---- typed GEMMs ---- */

/* Each macro defines an entry point and its _64 twin (I: int or int64_t, the
 * type of its sizes), which checks and times the product the same way. The
 * dtype expression may read the handle, h. */
#define HS_TYPED_GEMM(fn, T, I, dtype)                                                                             \
    cublasStatus_t fn(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k, const T *alpha, \
                      const T *A, I lda, const T *B, I ldb, const T *beta, T *C, I ldc)                            \
    {                                                                                                              \
        (void)ta, (void)tb, (void)alpha, (void)A, (void)B, (void)beta, (void)C;                                    \
        return gemm(h, #fn, m, n, k, lda, ldb, ldc, 1, dtype);                                                     \
    }

#define HS_TYPED_GEMM_STRIDED(fn, T, I, dtype)                                                                      \
    cublasStatus_t fn(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k, const T *alpha,  \
                      const T *A, I lda, long long sa, const T *B, I ldb, long long sb, const T *beta, T *C, I ldc, \
                      long long sc, I batch)                                                                        \
    {                                                                                                               \
        (void)ta, (void)tb, (void)alpha, (void)A, (void)sa, (void)B, (void)sb, (void)beta, (void)C, (void)sc;       \
        return gemm(h, #fn, m, n, k, lda, ldb, ldc, batch, dtype);                                                  \
    }

#define HS_TYPED_GEMM_BATCHED(fn, T, I, dtype)                                                                     \
    cublasStatus_t fn(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k, const T *alpha, \
                      const T *const A[], I lda, const T *const B[], I ldb, const T *beta, T *const C[], I ldc,    \
                      I batch)                                                                                     \
    {                                                                                                              \
        (void)ta, (void)tb, (void)alpha, (void)A, (void)B, (void)beta, (void)C;                                    \
        return gemm(h, #fn, m, n, k, lda, ldb, ldc, batch, dtype);                                                 \
    }

#define HS_TYPED_GEMMS(gemm_fn, strided_fn, batched_fn, T, dtype) \
    HS_TYPED_GEMM(gemm_fn, T, int, dtype)                         \
    HS_TYPED_GEMM(gemm_fn##_64, T, int64_t, dtype)                \
    HS_TYPED_GEMM_STRIDED(strided_fn, T, int, dtype)              \
    HS_TYPED_GEMM_STRIDED(strided_fn##_64, T, int64_t, dtype)     \
    HS_TYPED_GEMM_BATCHED(batched_fn, T, int, dtype)              \
    HS_TYPED_GEMM_BATCHED(batched_fn##_64, T, int64_t, dtype)

HS_TYPED_GEMMS(cublasSgemm_v2, cublasSgemmStridedBatched, cublasSgemmBatched, float, fp32_dtype(h))
HS_TYPED_GEMMS(cublasDgemm_v2, cublasDgemmStridedBatched, cublasDgemmBatched, double, 3)
/* cublas_api.h declares the __half functions for C++ only (C has no __half);
 * the pointers they take are passed the same way as void pointers. */
HS_TYPED_GEMMS(cublasHgemm, cublasHgemmStridedBatched, cublasHgemmBatched, void, 1)

/* ---- mixed-type GEMMs ---- */

#define HS_GEMM_EX(fn, I)                                                                                             \
    cublasStatus_t fn(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k, const void *alpha, \
                      const void *A, cudaDataType at, I lda, const void *B, cudaDataType bt, I ldb, const void *beta, \
                      void *C, cudaDataType ct, I ldc, cublasComputeType_t compute, cublasGemmAlgo_t algo)            \
    {                                                                                                                 \
        (void)ta, (void)tb, (void)alpha, (void)A, (void)B, (void)bt, (void)beta, (void)C, (void)ct, (void)algo;       \
        return gemm(h, #fn, m, n, k, lda, ldb, ldc, 1, ex_dtype(h, at, compute));                                     \
    }

#define HS_GEMM_STRIDED_EX(fn, I)                                                                                     \
    cublasStatus_t fn(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k, const void *alpha, \
                      const void *A, cudaDataType at, I lda, long long sa, const void *B, cudaDataType bt, I ldb,     \
                      long long sb, const void *beta, void *C, cudaDataType ct, I ldc, long long sc, I batch,         \
                      cublasComputeType_t compute, cublasGemmAlgo_t algo)                                             \
    {                                                                                                                 \
        (void)ta, (void)tb, (void)alpha, (void)A, (void)sa, (void)B, (void)bt, (void)sb, (void)beta, (void)C,         \
            (void)ct, (void)sc, (void)algo;                                                                           \
        return gemm(h, #fn, m, n, k, lda, ldb, ldc, batch, ex_dtype(h, at, compute));                                 \
    }

#define HS_GEMM_BATCHED_EX(fn, I)                                                                                      \
    cublasStatus_t fn(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k, const void *alpha,  \
                      const void *const A[], cudaDataType at, I lda, const void *const B[], cudaDataType bt, I ldb,    \
                      const void *beta, void *const C[], cudaDataType ct, I ldc, I batch, cublasComputeType_t compute, \
                      cublasGemmAlgo_t algo)                                                                           \
    {                                                                                                                  \
        (void)ta, (void)tb, (void)alpha, (void)A, (void)B, (void)bt, (void)beta, (void)C, (void)ct, (void)algo;        \
        return gemm(h, #fn, m, n, k, lda, ldb, ldc, batch, ex_dtype(h, at, compute));                                  \
    }

HS_GEMM_EX(cublasGemmEx, int)
HS_GEMM_EX(cublasGemmEx_64, int64_t)
HS_GEMM_STRIDED_EX(cublasGemmStridedBatchedEx, int)
HS_GEMM_STRIDED_EX(cublasGemmStridedBatchedEx_64, int64_t)
HS_GEMM_BATCHED_EX(cublasGemmBatchedEx, int)
HS_GEMM_BATCHED_EX(cublasGemmBatchedEx_64, int64_t)

/* ---- grouped-batched GEMMs ---- */

/* A grouped call's per-group host arrays: int, or int64_t in the _64 forms. */
typedef struct grouped_call {
    const void *m, *n, *k, *lda, *ldb, *ldc, *size;
    bool wide;
} grouped_call;

static int64_t element(const void *array, int64_t i, bool wide)
{
    return wide ? ((const int64_t *)array)[i] : ((const int *)array)[i];
}

static hs_cublas_gemm group_gemm(const grouped_call *c, int64_t i, int dtype)
{
    return (hs_cublas_gemm){element(c->m, i, c->wide),
                            element(c->n, i, c->wide),
                            element(c->k, i, c->wide),
                            element(c->size, i, c->wide),
                            dtype,
                            element(c->lda, i, c->wide),
                            element(c->ldb, i, c->wide),
                            element(c->ldc, i, c->wide)};
}

/* Every group is checked before any is sent: a refused call sends nothing. */
static cublasStatus_t check_groups(const cublasOperation_t *ta, const cublasOperation_t *tb, const grouped_call *c,
                                   int64_t count)
{
    if (!ta || !tb || !c->m || !c->n || !c->k || !c->lda || !c->ldb || !c->ldc || !c->size)
        return CUBLAS_STATUS_INVALID_VALUE;
    for (int64_t i = 0; i < count; i++) {
        hs_cublas_gemm g = group_gemm(c, i, 0);
        if (g.m < 0 || g.n < 0 || g.k < 0 || g.batch < 0)
            return CUBLAS_STATUS_INVALID_VALUE;
    }
    return CUBLAS_STATUS_SUCCESS;
}

/* One GEMM per group (group_size[i] products of group i's shape), in group
 * order on the handle's stream; the host is charged one call for them all. */
static cublasStatus_t grouped(cublasHandle_t h, const char *name, const cublasOperation_t *ta,
                              const cublasOperation_t *tb, const grouped_call *c, int64_t count, int dtype)
{
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (count <= 0)
        return count < 0 ? CUBLAS_STATUS_INVALID_VALUE : CUBLAS_STATUS_SUCCESS;
    if (dtype < 0) /* as gemm(): an unknown type is refused first */
        return CUBLAS_STATUS_NOT_SUPPORTED;
    cublasStatus_t st = check_groups(ta, tb, c, count);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    bool any = false;
    for (int64_t i = 0; i < count && !any; i++) {
        hs_cublas_gemm g = group_gemm(c, i, dtype);
        any = hs_cublas_launches(&g);
    }
    if (any) /* before the ops, as for one GEMM (hs_cublas_send): they are issued at the call's end */
        hs_cublas_charge(name);
    cudaError_t e = cudaSuccess;
    for (int64_t i = 0; i < count && e == cudaSuccess; i++) {
        hs_cublas_gemm g = group_gemm(c, i, dtype);
        bool launched;
        e = hs_cublas_enqueue(name, &g, h->stream, &launched);
    }
    return status_of(e);
}

#define HS_TYPED_GEMM_GROUPED(fn, T, I, dtype)                                                                   \
    cublasStatus_t fn(cublasHandle_t h, const cublasOperation_t ta[], const cublasOperation_t tb[], const I m[], \
                      const I n[], const I k[], const T alpha[], const T *const A[], const I lda[],              \
                      const T *const B[], const I ldb[], const T beta[], T *const C[], const I ldc[], I count,   \
                      const I size[])                                                                            \
    {                                                                                                            \
        (void)alpha, (void)A, (void)B, (void)beta, (void)C;                                                      \
        grouped_call c = {m, n, k, lda, ldb, ldc, size, sizeof(I) == sizeof(int64_t)};                           \
        return grouped(h, #fn, ta, tb, &c, count, dtype);                                                        \
    }

HS_TYPED_GEMM_GROUPED(cublasSgemmGroupedBatched, float, int, fp32_dtype(h))
HS_TYPED_GEMM_GROUPED(cublasSgemmGroupedBatched_64, float, int64_t, fp32_dtype(h))
HS_TYPED_GEMM_GROUPED(cublasDgemmGroupedBatched, double, int, 3)
HS_TYPED_GEMM_GROUPED(cublasDgemmGroupedBatched_64, double, int64_t, 3)

#define HS_GEMM_GROUPED_EX(fn, I)                                                                                \
    cublasStatus_t fn(cublasHandle_t h, const cublasOperation_t ta[], const cublasOperation_t tb[], const I m[], \
                      const I n[], const I k[], const void *alpha, const void *const A[], cudaDataType_t at,     \
                      const I lda[], const void *const B[], cudaDataType_t bt, const I ldb[], const void *beta,  \
                      void *const C[], cudaDataType_t ct, const I ldc[], I count, const I size[],                \
                      cublasComputeType_t compute)                                                               \
    {                                                                                                            \
        (void)alpha, (void)A, (void)B, (void)bt, (void)beta, (void)C, (void)ct;                                  \
        grouped_call c = {m, n, k, lda, ldb, ldc, size, sizeof(I) == sizeof(int64_t)};                           \
        return grouped(h, #fn, ta, tb, &c, count, ex_dtype(h, at, compute));                                     \
    }

HS_GEMM_GROUPED_EX(cublasGemmGroupedBatchedEx, int)
HS_GEMM_GROUPED_EX(cublasGemmGroupedBatchedEx_64, int64_t)
