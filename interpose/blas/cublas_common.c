/* Shared by the cuBLAS replacements (cublas_common.h). */
#include "cublas_common.h"

#include <stdio.h>
#include <string.h>
#include <cublas_api.h>

#include "api_cost.h"
#include "client.h"

cudaError_t hs_cublas_enqueue(const char *name, const hs_cublas_gemm *g, cudaStream_t stream, bool *launched)
{
    *launched = false;
    if (g->m == 0 || g->n == 0 || g->batch == 0)
        return cudaSuccess; /* nothing to compute: cuBLAS launches nothing */
    /* a negative leading dimension is cuBLAS's to refuse; hysim reads it as not known */
    hs_gemm_call call = {(uint64_t)g->m,
                         (uint64_t)g->n,
                         (uint64_t)g->k,
                         (uint64_t)g->batch,
                         g->dtype,
                         (uint64_t)(g->lda > 0 ? g->lda : 0),
                         (uint64_t)(g->ldb > 0 ? g->ldb : 0),
                         (uint64_t)(g->ldc > 0 ? g->ldc : 0)};
    cudaError_t e = hs_client_gemm(name, &call, stream);
    *launched = e == cudaSuccess;
    return e;
}

/* The Sgemm entry points were measured apart (api_cost.h). */
void hs_cublas_charge(const char *name)
{
    hs_client_charge_call(strncmp(name, "cublasSgemm", 11) ? HS_CALL_GEMM : HS_CALL_SGEMM);
}

bool hs_cublas_launches(const hs_cublas_gemm *g) { return g->m != 0 && g->n != 0 && g->batch != 0; }

cudaError_t hs_cublas_send(const char *name, const hs_cublas_gemm *g, cudaStream_t stream)
{
    /* Before the op: cuBLAS does its host work (heuristics, descriptors) and launches its kernel at the end
     * of the call, so the op is issued after the call's cost and reaches the GPU HS_SUBMIT_NS after the
     * call returns, as a kernel launch's does. A cuBLAS call is no intercepted call: the cost is added at
     * once (api_cost.h). */
    if (hs_cublas_launches(g))
        hs_cublas_charge(name);
    bool launched;
    return hs_cublas_enqueue(name, g, stream, &launched);
}

int hs_cublas_get_property(libraryPropertyType type, int *value)
{
    if (!value)
        return CUBLAS_STATUS_INVALID_VALUE;
    switch (type) {
    case MAJOR_VERSION: *value = CUBLAS_VER_MAJOR; return CUBLAS_STATUS_SUCCESS;
    case MINOR_VERSION: *value = CUBLAS_VER_MINOR; return CUBLAS_STATUS_SUCCESS;
    case PATCH_LEVEL: *value = CUBLAS_VER_PATCH; return CUBLAS_STATUS_SUCCESS;
    default: return CUBLAS_STATUS_INVALID_VALUE;
    }
}

int hs_cublas_not_supported(const char *name, _Atomic int *said)
{
    if (!__atomic_exchange_n(said, 1, __ATOMIC_RELAXED))
        fprintf(stderr, "hysim: %s is not supported yet\n", name);
    return CUBLAS_STATUS_NOT_SUPPORTED;
}
