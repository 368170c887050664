/*
 * The Hgemm family for C tests: cublas_api.h declares the __half functions
 * for C++ only (C has no __half). Declared as the replacement libcublas
 * (interpose/blas/cublas.c) and the profile recorder's wrappers define them, with
 * void pointers, which pass the same way.
 */
#ifndef HYSIM_TESTS_COMMON_CUBLAS_HGEMM_H
#define HYSIM_TESTS_COMMON_CUBLAS_HGEMM_H

#include <stdint.h>

#include <cublas_v2.h>

cublasStatus_t cublasHgemm(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void *,
                           const void *, int, const void *, int, const void *, void *, int);
cublasStatus_t cublasHgemmStridedBatched(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                         const void *, const void *, int, long long, const void *, int, long long,
                                         const void *, void *, int, long long, int);
cublasStatus_t cublasHgemmBatched(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void *,
                                  const void *const[], int, const void *const[], int, const void *, void *const[], int,
                                  int);
cublasStatus_t cublasHgemm_64(cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t, int64_t, int64_t,
                              const void *, const void *, int64_t, const void *, int64_t, const void *, void *,
                              int64_t);
cublasStatus_t cublasHgemmStridedBatched_64(cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t, int64_t,
                                            int64_t, const void *, const void *, int64_t, long long, const void *,
                                            int64_t, long long, const void *, void *, int64_t, long long, int64_t);
cublasStatus_t cublasHgemmBatched_64(cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t, int64_t, int64_t,
                                     const void *, const void *const[], int64_t, const void *const[], int64_t,
                                     const void *, void *const[], int64_t, int64_t);

#endif
