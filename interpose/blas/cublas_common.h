/*
 * What libcublas.so.13 and libcublasLt.so.13 share: sending a GEMM (its
 * shape and type: cublas_gemm_shape.h) as one kernel, their version, and
 * the "not supported yet" answer of every function hysim does not implement.
 */
#ifndef HYSIM_INTERPOSE_CUBLAS_COMMON_H
#define HYSIM_INTERPOSE_CUBLAS_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include <driver_types.h>
#include <library_types.h>

#include "cublas_gemm_shape.h" /* hs_cublas_dtype */

#define HS_CUBLAS_HIDDEN __attribute__((visibility("hidden")))

/* Charges the host one call of `name`, then sends the GEMM (its sizes not
 * negative), which cuBLAS launches at the end of its call; cudaSuccess or the
 * client's error. */
HS_CUBLAS_HIDDEN cudaError_t hs_cublas_send(const char *name, const hs_cublas_gemm *g, cudaStream_t stream);

/* hs_cublas_send without the charge, for a call that sends several GEMMs (a
 * grouped-batched one); *launched: whether a kernel was sent (a product with
 * nothing to compute launches none). */
HS_CUBLAS_HIDDEN cudaError_t hs_cublas_enqueue(const char *name, const hs_cublas_gemm *g, cudaStream_t stream,
                                               bool *launched);

/* Charges the host clock the cost of one cuBLAS GEMM call of `name` (api_cost.h). */
HS_CUBLAS_HIDDEN void hs_cublas_charge(const char *name);

/* Whether the GEMM launches a kernel (a product with nothing to compute launches none). */
HS_CUBLAS_HIDDEN bool hs_cublas_launches(const hs_cublas_gemm *g);

/* cublasGetProperty and cublasLtGetProperty (cuBLASLt ships with cuBLAS and
 * has its version): a cublasStatus_t. */
HS_CUBLAS_HIDDEN int hs_cublas_get_property(libraryPropertyType type, int *value);

/* Prints "hysim: NAME is not supported yet" the first time (*said) and returns
 * CUBLAS_STATUS_NOT_SUPPORTED (15). */
HS_CUBLAS_HIDDEN int hs_cublas_not_supported(const char *name, _Atomic int *said);

/* Stubs take no parameters (the caller's arguments are ignored, which the
 * x86-64 calling convention allows) and are weak, so a hand-written function
 * of the same name wins at link time. */
#define HS_CUBLAS_STUB(name)                           \
    __attribute__((weak)) int name(void);              \
    __attribute__((weak)) int name(void)               \
    {                                                  \
        static _Atomic int said_;                      \
        return hs_cublas_not_supported(#name, &said_); \
    }

#endif
