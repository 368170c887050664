/*
 * libcublasLt.so.13: handles, matmul descriptors, matrix layouts, preferences,
 * the algorithm heuristic (one algorithm, no workspace needed) and
 * cublasLtMatmul, enough for PyTorch-style use. A matmul becomes one kernel
 * carrying its shape (m, n, k from D's layout and op(A); batch from D's
 * batch count) and type (A's type and the compute type), timed by hysimd's
 * roofline. Attributes that do not change that shape or type (epilogues,
 * bias and scale pointers, ...) are accepted and ignored. Every other
 * function the real library exports is a generated stub (gen_symbol_stubs.sh)
 * that says it is not supported yet.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>

#include "client.h"
#include "cublas_common.h"

struct cublasLtContext {
    int unused;
};

typedef struct lt_desc {
    int32_t compute, scale, transa, transb;
} lt_desc;

typedef struct lt_layout {
    uint32_t type;
    uint64_t rows, cols;
    int64_t ld;
    int32_t batch;
} lt_layout;

typedef struct lt_pref {
    uint64_t max_workspace;
} lt_pref;

static cublasStatus_t status_of(cudaError_t e)
{
    return e == cudaSuccess                      ? CUBLAS_STATUS_SUCCESS
           : e == cudaErrorInvalidResourceHandle ? CUBLAS_STATUS_INVALID_VALUE
                                                 : CUBLAS_STATUS_EXECUTION_FAILED;
}

/* Copies a set-attribute value into a field of `width` bytes; false if the size is wrong. */
static bool set_field(void *field, size_t width, const void *buf, size_t size)
{
    if (!buf || size != width)
        return false;
    memcpy(field, buf, width);
    return true;
}

/* The get-attribute convention: size 0 asks for the size. */
static cublasStatus_t get_field(const void *field, size_t width, void *buf, size_t size, size_t *written)
{
    if (size == 0) {
        if (!written)
            return CUBLAS_STATUS_INVALID_VALUE;
        *written = width;
        return CUBLAS_STATUS_SUCCESS;
    }
    if (!buf || size != width)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(buf, field, width);
    if (written)
        *written = width;
    return CUBLAS_STATUS_SUCCESS;
}

/* ---- library and handle ---- */

cublasStatus_t cublasLtCreate(cublasLtHandle_t *handle)
{
    if (!handle)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (hs_client_start() != cudaSuccess)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    *handle = calloc(1, sizeof **handle);
    return *handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    free(handle);
    return CUBLAS_STATUS_SUCCESS;
}

/* cuBLASLt ships with cuBLAS and has its version */
size_t cublasLtGetVersion(void) { return CUBLAS_VERSION; }
size_t cublasLtGetCudartVersion(void) { return CUDART_VERSION; }

cublasStatus_t cublasLtGetProperty(libraryPropertyType type, int *value)
{
    return (cublasStatus_t)hs_cublas_get_property(type, value);
}

const char *cublasLtGetStatusName(cublasStatus_t status)
{
    switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "CUBLAS_STATUS_UNKNOWN";
    }
}

const char *cublasLtGetStatusString(cublasStatus_t status)
{
    return status == CUBLAS_STATUS_SUCCESS         ? "the operation completed successfully"
           : status == CUBLAS_STATUS_NOT_SUPPORTED ? "the functionality requested is not supported"
                                                   : "an error occurred";
}

/* ---- matmul descriptor ---- */

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc, cublasComputeType_t compute, cudaDataType_t scale)
{
    if (!desc)
        return CUBLAS_STATUS_INVALID_VALUE;
    lt_desc *d = calloc(1, sizeof *d);
    if (!d)
        return CUBLAS_STATUS_ALLOC_FAILED;
    d->compute = compute;
    d->scale = scale;
    d->transa = d->transb = CUBLAS_OP_N;
    *desc = (cublasLtMatmulDesc_t)d;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc)
{
    free(desc);
    return CUBLAS_STATUS_SUCCESS;
}

static int32_t *desc_field(lt_desc *d, cublasLtMatmulDescAttributes_t attr)
{
    switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: return &d->compute;
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE: return &d->scale;
    case CUBLASLT_MATMUL_DESC_TRANSA: return &d->transa;
    case CUBLASLT_MATMUL_DESC_TRANSB: return &d->transb;
    default: return NULL;
    }
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                              const void *buf, size_t size)
{
    if (!desc || !buf)
        return CUBLAS_STATUS_INVALID_VALUE;
    int32_t *f = desc_field((lt_desc *)desc, attr);
    if (!f)
        return CUBLAS_STATUS_SUCCESS; /* does not change the product's shape or type */
    return set_field(f, sizeof *f, buf, size) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, void *buf,
                                              size_t size, size_t *written)
{
    static _Atomic int said;
    if (!desc)
        return CUBLAS_STATUS_INVALID_VALUE;
    int32_t *f = desc_field((lt_desc *)desc, attr);
    if (!f)
        return (cublasStatus_t)hs_cublas_not_supported("cublasLtMatmulDescGetAttribute of this attribute", &said);
    return get_field(f, sizeof *f, buf, size, written);
}

/* ---- matrix layout ---- */

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *layout, cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld)
{
    if (!layout)
        return CUBLAS_STATUS_INVALID_VALUE;
    lt_layout *l = calloc(1, sizeof *l);
    if (!l)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *l = (lt_layout){(uint32_t)type, rows, cols, ld, 1};
    *layout = (cublasLtMatrixLayout_t)l;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout)
{
    free(layout);
    return CUBLAS_STATUS_SUCCESS;
}

/* The field an attribute lives in and its width; NULL for those not kept. */
static void *layout_field(lt_layout *l, cublasLtMatrixLayoutAttribute_t attr, size_t *width)
{
    switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE: *width = sizeof l->type; return &l->type;
    case CUBLASLT_MATRIX_LAYOUT_ROWS: *width = sizeof l->rows; return &l->rows;
    case CUBLASLT_MATRIX_LAYOUT_COLS: *width = sizeof l->cols; return &l->cols;
    case CUBLASLT_MATRIX_LAYOUT_LD: *width = sizeof l->ld; return &l->ld;
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: *width = sizeof l->batch; return &l->batch;
    default: return NULL;
    }
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
                                                const void *buf, size_t size)
{
    if (!layout || !buf)
        return CUBLAS_STATUS_INVALID_VALUE;
    size_t width;
    void *f = layout_field((lt_layout *)layout, attr, &width);
    if (!f)
        return CUBLAS_STATUS_SUCCESS; /* order, strides: do not change the time */
    return set_field(f, width, buf, size) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
                                                void *buf, size_t size, size_t *written)
{
    static _Atomic int said;
    if (!layout)
        return CUBLAS_STATUS_INVALID_VALUE;
    size_t width;
    void *f = layout_field((lt_layout *)layout, attr, &width);
    if (!f)
        return (cublasStatus_t)hs_cublas_not_supported("cublasLtMatrixLayoutGetAttribute of this attribute", &said);
    return get_field(f, width, buf, size, written);
}

/* ---- preference and heuristic ---- */

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref)
{
    if (!pref)
        return CUBLAS_STATUS_INVALID_VALUE;
    lt_pref *p = calloc(1, sizeof *p);
    if (!p)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *pref = (cublasLtMatmulPreference_t)p;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref)
{
    free(pref);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr, const void *buf,
                                                    size_t size)
{
    if (!pref || !buf)
        return CUBLAS_STATUS_INVALID_VALUE;
    lt_pref *p = (lt_pref *)pref;
    if (attr == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES)
        return set_field(&p->max_workspace, sizeof p->max_workspace, buf, size) ? CUBLAS_STATUS_SUCCESS
                                                                                : CUBLAS_STATUS_INVALID_VALUE;
    return CUBLAS_STATUS_SUCCESS; /* other limits: the one algorithm fits them all */
}

/* One algorithm that needs no workspace: what hysim times does not depend on it. */
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                              cublasLtMatmulPreference_t pref, int requested,
                                              cublasLtMatmulHeuristicResult_t results[], int *returned)
{
    (void)pref;
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!desc || !a || !b || !c || !d || requested <= 0 || !results || !returned)
        return CUBLAS_STATUS_INVALID_VALUE;
    memset(&results[0], 0, sizeof results[0]);
    results[0].state = CUBLAS_STATUS_SUCCESS;
    results[0].wavesCount = 1.0f;
    *returned = 1;
    return CUBLAS_STATUS_SUCCESS;
}

/* ---- the product ---- */

cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t computeDesc, const void *alpha,
                              const void *A, cublasLtMatrixLayout_t Adesc, const void *B, cublasLtMatrixLayout_t Bdesc,
                              const void *beta, const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                              cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo, void *workspace,
                              size_t workspaceSize, cudaStream_t stream)
{
    (void)alpha, (void)A, (void)B, (void)beta, (void)C, (void)Cdesc, (void)D, (void)algo, (void)workspace,
        (void)workspaceSize;
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!computeDesc || !Adesc || !Bdesc || !Ddesc)
        return CUBLAS_STATUS_INVALID_VALUE;
    const lt_desc *op = (const lt_desc *)computeDesc;
    const lt_layout *la = (const lt_layout *)Adesc, *lb = (const lt_layout *)Bdesc, *ld = (const lt_layout *)Ddesc;
    hs_cublaslt_operands o = {op->compute, op->transa, la->type, la->rows, la->cols, ld->rows,
                              ld->cols,    ld->batch,  la->ld,   lb->ld,   ld->ld};
    hs_cublas_gemm g;
    int bad = hs_cublaslt_gemm(&o, &g);
    if (bad)
        return (cublasStatus_t)bad;
    return status_of(hs_cublas_send("cublasLtMatmul", &g, stream));
}
