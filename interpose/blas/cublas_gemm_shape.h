/*
 * What a cuBLAS / cuBLASLt GEMM call is, in the terms hysim times it by: its
 * shape (m, n, k, batch) and element type (hysim.proto GemmDtype). Shared by
 * the replacement libraries (cublas.c, cublaslt.c), which send it as one
 * kernel, and the profile recorder (interpose/profile/), which files the real
 * call's measured time under the same shape; so it needs neither the
 * simulator client nor CUPTI.
 */
#ifndef HYSIM_INTERPOSE_CUBLAS_GEMM_SHAPE_H
#define HYSIM_INTERPOSE_CUBLAS_GEMM_SHAPE_H

#include <stdint.h>

#include <library_types.h>

/* hysim.proto GemmDtype of a product whose A/B type is `ab` computed in
 * `compute` (cublasComputeType_t; -1 when the call has none); tf32_math: the
 * handle's math mode allows TF32 for fp32 products. -1 if unknown. */
__attribute__((visibility("hidden"))) int hs_cublas_dtype(cudaDataType ab, int compute, int tf32_math);

/* Whether a handle's math mode (cublasMath_t) lets fp32 products use TF32. */
__attribute__((visibility("hidden"))) int hs_cublas_tf32_math(int math_mode);

/* The GemmDtype of the fp32 entry points (cublasSgemm*): fp32, or tf32 by the math mode. */
__attribute__((visibility("hidden"))) int hs_cublas_sgemm_dtype(int math_mode);

/* What cublasLtMatmul's descriptors say about the product (their attributes). */
typedef struct hs_cublaslt_operands {
    int32_t compute, transa;  /* the matmul descriptor's compute type and op(A) */
    uint32_t a_type;          /* A's cudaDataType */
    uint64_t a_rows, a_cols;  /* A's layout */
    uint64_t d_rows, d_cols;  /* D's layout */
    int32_t d_batch;          /* D's batch count (0 read as 1) */
    int64_t a_ld, b_ld, d_ld; /* A's, B's and D's leading dimensions (0: not known) */
} hs_cublaslt_operands;

typedef struct hs_cublas_gemm {
    int64_t m, n, k, batch;
    int dtype;
    int64_t lda, ldb, ldc; /* leading dimensions in elements, as passed (0: not known) */
} hs_cublas_gemm;

/* A cublasLtMatmul's product: m, n from D's layout, k from op(A), batch from
 * D's batch count, dtype from A's type and the compute type, the leading
 * dimensions from A's, B's and D's layouts. 0, or the
 * cublasStatus_t the call fails with (unknown type, negative batch, a
 * dimension over INT64_MAX). */
__attribute__((visibility("hidden"))) int hs_cublaslt_gemm(const hs_cublaslt_operands *o, hs_cublas_gemm *g);

#endif
