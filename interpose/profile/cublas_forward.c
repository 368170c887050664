/*
 * The cuBLAS / cuBLASLt GEMM entry points hysim's replacement libraries time
 * (interpose/blas/cublas.c, cublaslt.c), their _64 forms included but not the
 * grouped-batched calls, wrapped for `hysim profile`, which LD_PRELOADs
 * libhysim_profile.so: each forwards to the real function (the
 * next definition, RTLD_NEXT, resolved on first use) inside a GEMM region of
 * the recorder (cupti_recorder.h), keyed by the shape and type the
 * replacement would send (interpose/blas/cublas_gemm_shape.h). The real exports
 * are versioned (libcublas.so.13); a program's versioned references bind to
 * these unversioned definitions, as the preloaded object comes first.
 */
#include <dlfcn.h>
#include <stdio.h>

#include <cublasLt.h>
#include <cublas_v2.h>

#include "cublas_gemm_shape.h"
#include "cupti_recorder.h"

#define HS_EXPORT   __attribute__((visibility("default")))
#define LIBCUBLAS   "libcublas.so.13"
#define LIBCUBLASLT "libcublasLt.so.13"

/* A GEMM entry point the library calls from inside another is part of the outer call's region. */
static _Thread_local int t_depth;

/* The real function: the next definition after this library, else the one in
 * `lib` when the program loaded it privately (dlopen without RTLD_GLOBAL). */
static void *real_symbol(void **slot, const char *lib, const char *name)
{
    void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (p)
        return p;
    p = dlsym(RTLD_NEXT, name);
    if (!p) {
        void *h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            p = dlsym(h, name);
            dlclose(h);
        }
    }
    if (!p)
        fprintf(stderr, "hysim profile: %s: the real %s is not loaded\n", name, lib);
    __atomic_store_n(slot, p, __ATOMIC_RELEASE); /* racing threads find the same */
    return p;
}

static uint64_t enter(int64_t m, int64_t n, int64_t k, int64_t batch, int dtype)
{
    if (t_depth++ || m < 0 || n < 0 || k < 0 || batch < 0 || dtype < 0)
        return 0;
    hs_gemm_shape g = {(uint64_t)m, (uint64_t)n, (uint64_t)k, (uint64_t)batch, dtype, 0, 0, 0}; /* the key has no lds */
    return hs_recorder_gemm_begin(&g);
}

static cublasStatus_t leave(uint64_t id, cublasStatus_t status)
{
    t_depth--;
    hs_recorder_gemm_end(id, status == CUBLAS_STATUS_SUCCESS);
    return status;
}

/* The body of a wrapper: the real fn of lib, called with the arguments inside the region of the shape. */
#define HS_FORWARD(lib, fn, m, n, k, batch, dtype, ...)                     \
    static void *slot_;                                                     \
    __typeof__(&fn) real_ = (__typeof__(&fn))real_symbol(&slot_, lib, #fn); \
    if (!real_)                                                             \
        return CUBLAS_STATUS_NOT_INITIALIZED;                               \
    uint64_t id_ = enter(m, n, k, batch, dtype);                            \
    return leave(id_, real_(__VA_ARGS__))

/* The handle's math mode, which decides fp32 or tf32 (the default when it cannot be read). */
static int math_mode(cublasHandle_t h)
{
    typedef cublasStatus_t (*get_fn)(cublasHandle_t, cublasMath_t *);
    static void *slot;
    get_fn get = (get_fn)real_symbol(&slot, LIBCUBLAS, "cublasGetMathMode");
    cublasMath_t mode = CUBLAS_DEFAULT_MATH;
    if (!h || !get || get(h, &mode) != CUBLAS_STATUS_SUCCESS)
        mode = CUBLAS_DEFAULT_MATH;
    return (int)mode;
}

static int ex_dtype(cublasHandle_t h, cudaDataType a, cublasComputeType_t c)
{
    return hs_cublas_dtype(a, (int)c, hs_cublas_tf32_math(math_mode(h)));
}

/* ---- typed GEMMs ---- */

/* I: the type of the sizes, int, or int64_t in the _64 forms (keyed alike). */
#define HS_TYPED_GEMM(fn, T, I, dtype)                                                                            \
    HS_EXPORT cublasStatus_t fn(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k,      \
                                const T *alpha, const T *A, I lda, const T *B, I ldb, const T *beta, T *C, I ldc) \
    {                                                                                                             \
        HS_FORWARD(LIBCUBLAS, fn, m, n, k, 1, dtype, h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);    \
    }

#define HS_TYPED_GEMM_STRIDED(fn, T, I, dtype)                                                                       \
    HS_EXPORT cublasStatus_t fn(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k,         \
                                const T *alpha, const T *A, I lda, long long sa, const T *B, I ldb, long long sb,    \
                                const T *beta, T *C, I ldc, long long sc, I batch)                                   \
    {                                                                                                                \
        HS_FORWARD(LIBCUBLAS, fn, m, n, k, batch, dtype, h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, \
                   ldc, sc, batch);                                                                                  \
    }

#define HS_TYPED_GEMM_BATCHED(fn, T, I, dtype)                                                                       \
    HS_EXPORT cublasStatus_t fn(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k,         \
                                const T *alpha, const T *const A[], I lda, const T *const B[], I ldb, const T *beta, \
                                T *const C[], I ldc, I batch)                                                        \
    {                                                                                                                \
        HS_FORWARD(LIBCUBLAS, fn, m, n, k, batch, dtype, h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,    \
                   batch);                                                                                           \
    }

/* An entry point and its _64 form, in the three shapes. */
#define HS_TYPED_GEMMS(gemm_fn, strided_fn, batched_fn, T, dtype) \
    HS_TYPED_GEMM(gemm_fn, T, int, dtype)                         \
    HS_TYPED_GEMM(gemm_fn##_64, T, int64_t, dtype)                \
    HS_TYPED_GEMM_STRIDED(strided_fn, T, int, dtype)              \
    HS_TYPED_GEMM_STRIDED(strided_fn##_64, T, int64_t, dtype)     \
    HS_TYPED_GEMM_BATCHED(batched_fn, T, int, dtype)              \
    HS_TYPED_GEMM_BATCHED(batched_fn##_64, T, int64_t, dtype)

HS_TYPED_GEMMS(cublasSgemm_v2, cublasSgemmStridedBatched, cublasSgemmBatched, float,
               hs_cublas_sgemm_dtype(math_mode(h)))
HS_TYPED_GEMMS(cublasDgemm_v2, cublasDgemmStridedBatched, cublasDgemmBatched, double, 3)
/* cublas_api.h declares the __half functions for C++ only (C has no __half);
 * the pointers they take are passed the same way as void pointers. */
HS_TYPED_GEMMS(cublasHgemm, cublasHgemmStridedBatched, cublasHgemmBatched, void, 1)

/* ---- mixed-type GEMMs ---- */

#define HS_GEMM_EX(fn, I)                                                                                             \
    HS_EXPORT cublasStatus_t fn(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k,          \
                                const void *alpha, const void *A, cudaDataType at, I lda, const void *B,              \
                                cudaDataType bt, I ldb, const void *beta, void *C, cudaDataType ct, I ldc,            \
                                cublasComputeType_t compute, cublasGemmAlgo_t algo)                                   \
    {                                                                                                                 \
        HS_FORWARD(LIBCUBLAS, fn, m, n, k, 1, ex_dtype(h, at, compute), h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, \
                   ldb, beta, C, ct, ldc, compute, algo);                                                             \
    }

#define HS_GEMM_STRIDED_EX(fn, I)                                                                                      \
    HS_EXPORT cublasStatus_t fn(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k,           \
                                const void *alpha, const void *A, cudaDataType at, I lda, long long sa, const void *B, \
                                cudaDataType bt, I ldb, long long sb, const void *beta, void *C, cudaDataType ct,      \
                                I ldc, long long sc, I batch, cublasComputeType_t compute, cublasGemmAlgo_t algo)      \
    {                                                                                                                  \
        HS_FORWARD(LIBCUBLAS, fn, m, n, k, batch, ex_dtype(h, at, compute), h, ta, tb, m, n, k, alpha, A, at, lda, sa, \
                   B, bt, ldb, sb, beta, C, ct, ldc, sc, batch, compute, algo);                                        \
    }

#define HS_GEMM_BATCHED_EX(fn, I)                                                                                     \
    HS_EXPORT cublasStatus_t fn(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k,          \
                                const void *alpha, const void *const A[], cudaDataType at, I lda,                     \
                                const void *const B[], cudaDataType bt, I ldb, const void *beta, void *const C[],     \
                                cudaDataType ct, I ldc, I batch, cublasComputeType_t compute, cublasGemmAlgo_t algo)  \
    {                                                                                                                 \
        HS_FORWARD(LIBCUBLAS, fn, m, n, k, batch, ex_dtype(h, at, compute), h, ta, tb, m, n, k, alpha, A, at, lda, B, \
                   bt, ldb, beta, C, ct, ldc, batch, compute, algo);                                                  \
    }

HS_GEMM_EX(cublasGemmEx, int)
HS_GEMM_EX(cublasGemmEx_64, int64_t)
HS_GEMM_STRIDED_EX(cublasGemmStridedBatchedEx, int)
HS_GEMM_STRIDED_EX(cublasGemmStridedBatchedEx_64, int64_t)
HS_GEMM_BATCHED_EX(cublasGemmBatchedEx, int)
HS_GEMM_BATCHED_EX(cublasGemmBatchedEx_64, int64_t)

/* The grouped-batched calls (cublasGemmGroupedBatchedEx, ...) are not wrapped:
 * the real library may run all groups in one kernel, whose time cannot be
 * split into the groups' GEMM keys; they pass straight to the real library. */

/* ---- cuBLASLt ---- */

/* The product's shape and type from the real descriptors' attributes; false if one cannot be read. */
static bool lt_gemm(cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t d, hs_cublas_gemm *g)
{
    typedef cublasStatus_t (*desc_fn)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, void *, size_t, size_t *);
    typedef cublasStatus_t (*layout_fn)(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t, void *, size_t,
                                        size_t *);
    static void *desc_slot, *layout_slot;
    desc_fn get_desc = (desc_fn)real_symbol(&desc_slot, LIBCUBLASLT, "cublasLtMatmulDescGetAttribute");
    layout_fn get_layout = (layout_fn)real_symbol(&layout_slot, LIBCUBLASLT, "cublasLtMatrixLayoutGetAttribute");
    if (!get_desc || !get_layout || !desc || !a || !d)
        return false;
    hs_cublaslt_operands o = {.transa = CUBLAS_OP_N, .d_batch = 1};
    size_t w;
#define HS_GET(fn, obj, attr, field) (fn(obj, attr, &o.field, sizeof o.field, &w) == CUBLAS_STATUS_SUCCESS)
    return HS_GET(get_desc, desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, compute) &&
           HS_GET(get_desc, desc, CUBLASLT_MATMUL_DESC_TRANSA, transa) &&
           HS_GET(get_layout, a, CUBLASLT_MATRIX_LAYOUT_TYPE, a_type) &&
           HS_GET(get_layout, a, CUBLASLT_MATRIX_LAYOUT_ROWS, a_rows) &&
           HS_GET(get_layout, a, CUBLASLT_MATRIX_LAYOUT_COLS, a_cols) &&
           HS_GET(get_layout, d, CUBLASLT_MATRIX_LAYOUT_ROWS, d_rows) &&
           HS_GET(get_layout, d, CUBLASLT_MATRIX_LAYOUT_COLS, d_cols) &&
           HS_GET(get_layout, d, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, d_batch) && hs_cublaslt_gemm(&o, g) == 0;
#undef HS_GET
}

HS_EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t computeDesc, const void *alpha,
                                        const void *A, cublasLtMatrixLayout_t Adesc, const void *B,
                                        cublasLtMatrixLayout_t Bdesc, const void *beta, const void *C,
                                        cublasLtMatrixLayout_t Cdesc, void *D, cublasLtMatrixLayout_t Ddesc,
                                        const cublasLtMatmulAlgo_t *algo, void *workspace, size_t workspaceSize,
                                        cudaStream_t stream)
{
    hs_cublas_gemm g = {.dtype = -1}; /* not recorded unless the descriptors can be read */
    if (!t_depth)
        lt_gemm(computeDesc, Adesc, Ddesc, &g);
    HS_FORWARD(LIBCUBLASLT, cublasLtMatmul, g.m, g.n, g.k, g.batch, g.dtype, handle, computeDesc, alpha, A, Adesc, B,
               Bdesc, beta, C, Cdesc, D, Ddesc, algo, workspace, workspaceSize, stream);
}
