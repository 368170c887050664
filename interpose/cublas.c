/*
 * libcublas.so.13: the handle, stream, workspace and math-mode calls, and the
 * GEMM entry points (Sgemm/Dgemm/Hgemm, GemmEx, their batched and strided
 * batched forms, _v2 names as cublas_v2.h maps them). Each GEMM becomes one
 * kernel carrying its shape and type, which hysimd times by its roofline
 * (bridge/gemm_model.h). Nothing is computed: results stay as they were, as
 * device memory is never backed. Every other function the real library
 * exports is a generated stub (gen_cublas_stubs.sh) that says it is not
 * supported yet.
 */
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

#define HS_TYPED_GEMM(fn, T, dtype)                                                                        \
    cublasStatus_t fn(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,   \
                      const T *alpha, const T *A, int lda, const T *B, int ldb, const T *beta, T *C,       \
                      int ldc)                                                                             \
    {                                                                                                      \
        (void)ta, (void)tb, (void)alpha, (void)A, (void)B, (void)beta, (void)C;                            \
        return gemm(h, #fn, m, n, k, lda, ldb, ldc, 1, dtype);                                             \
    }

#define HS_TYPED_GEMM_STRIDED(fn, T, dtype)                                                                \
    cublasStatus_t fn(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,   \
                      const T *alpha, const T *A, int lda, long long sa, const T *B, int ldb,              \
                      long long sb, const T *beta, T *C, int ldc, long long sc, int batch)                 \
    {                                                                                                      \
        (void)ta, (void)tb, (void)alpha, (void)A, (void)sa, (void)B, (void)sb, (void)beta, (void)C, (void)sc; \
        return gemm(h, #fn, m, n, k, lda, ldb, ldc, batch, dtype);                                         \
    }

#define HS_TYPED_GEMM_BATCHED(fn, T, dtype)                                                                \
    cublasStatus_t fn(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,   \
                      const T *alpha, const T *const A[], int lda, const T *const B[], int ldb,            \
                      const T *beta, T *const C[], int ldc, int batch)                                     \
    {                                                                                                      \
        (void)ta, (void)tb, (void)alpha, (void)A, (void)B, (void)beta, (void)C;                            \
        return gemm(h, #fn, m, n, k, lda, ldb, ldc, batch, dtype);                                         \
    }

cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              const float *alpha, const float *A, int lda, const float *B, int ldb,
                              const float *beta, float *C, int ldc)
{
    (void)ta, (void)tb, (void)alpha, (void)A, (void)B, (void)beta, (void)C;
    return gemm(h, "cublasSgemm_v2", m, n, k, lda, ldb, ldc, 1, fp32_dtype(h));
}

HS_TYPED_GEMM(cublasDgemm_v2, double, 3)
HS_TYPED_GEMM_STRIDED(cublasDgemmStridedBatched, double, 3)
HS_TYPED_GEMM_BATCHED(cublasDgemmBatched, double, 3)
/* cublas_api.h declares the __half functions for C++ only (C has no __half);
 * the pointers they take are passed the same way as void pointers. */
HS_TYPED_GEMM(cublasHgemm, void, 1)
HS_TYPED_GEMM_STRIDED(cublasHgemmStridedBatched, void, 1)
HS_TYPED_GEMM_BATCHED(cublasHgemmBatched, void, 1)

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const float *alpha, const float *A, int lda, long long sa,
                                         const float *B, int ldb, long long sb, const float *beta, float *C, int ldc,
                                         long long sc, int batch)
{
    (void)ta, (void)tb, (void)alpha, (void)A, (void)sa, (void)B, (void)sb, (void)beta,
        (void)C, (void)sc;
    return gemm(h, "cublasSgemmStridedBatched", m, n, k, lda, ldb, ldc, batch, fp32_dtype(h));
}

cublasStatus_t cublasSgemmBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                  const float *alpha, const float *const A[], int lda, const float *const B[], int ldb,
                                  const float *beta, float *const C[], int ldc, int batch)
{
    (void)ta, (void)tb, (void)alpha, (void)A, (void)B, (void)beta, (void)C;
    return gemm(h, "cublasSgemmBatched", m, n, k, lda, ldb, ldc, batch, fp32_dtype(h));
}

/* ---- mixed-type GEMMs ---- */

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const void *alpha, const void *A, cudaDataType at, int lda, const void *B,
                            cudaDataType bt, int ldb, const void *beta, void *C, cudaDataType ct, int ldc,
                            cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    (void)ta, (void)tb, (void)alpha, (void)A, (void)B, (void)bt, (void)beta, (void)C, (void)ct,
        (void)algo;
    return gemm(h, "cublasGemmEx", m, n, k, lda, ldb, ldc, 1, ex_dtype(h, at, compute));
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                          int k, const void *alpha, const void *A, cudaDataType at, int lda,
                                          long long sa, const void *B, cudaDataType bt, int ldb, long long sb,
                                          const void *beta, void *C, cudaDataType ct, int ldc, long long sc,
                                          int batch, cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    (void)ta, (void)tb, (void)alpha, (void)A, (void)sa, (void)B, (void)bt, (void)sb, (void)beta,
        (void)C, (void)ct, (void)sc, (void)algo;
    return gemm(h, "cublasGemmStridedBatchedEx", m, n, k, lda, ldb, ldc, batch, ex_dtype(h, at, compute));
}

cublasStatus_t cublasGemmBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                   const void *alpha, const void *const A[], cudaDataType at, int lda,
                                   const void *const B[], cudaDataType bt, int ldb, const void *beta, void *const C[],
                                   cudaDataType ct, int ldc, int batch, cublasComputeType_t compute,
                                   cublasGemmAlgo_t algo)
{
    (void)ta, (void)tb, (void)alpha, (void)A, (void)B, (void)bt, (void)beta, (void)C, (void)ct,
        (void)algo;
    return gemm(h, "cublasGemmBatchedEx", m, n, k, lda, ldb, ldc, batch, ex_dtype(h, at, compute));
}
