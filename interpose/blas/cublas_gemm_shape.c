/* A GEMM call's shape and type (cublas_gemm_shape.h). */
#include "cublas_gemm_shape.h"

#include <cublas_api.h>

#include "hysim/gemm_dtype.h"

int hs_cublas_dtype(cudaDataType ab, int compute, int tf32_math)
{
    switch (compute) {
    case CUBLAS_COMPUTE_32F_FAST_TF32: return HS_GEMM_TF32;
    case CUBLAS_COMPUTE_32F_FAST_16BF: return HS_GEMM_BF16;
    case CUBLAS_COMPUTE_32F_FAST_16F: return HS_GEMM_FP16;
    default: break;
    }
    switch (ab) {
    case CUDA_R_32F:
    case CUDA_C_32F: return tf32_math ? HS_GEMM_TF32 : HS_GEMM_FP32;
    case CUDA_R_16F: return HS_GEMM_FP16;
    case CUDA_R_16BF: return HS_GEMM_BF16;
    case CUDA_R_64F:
    case CUDA_C_64F: return HS_GEMM_FP64;
    case CUDA_R_8F_E4M3:
    case CUDA_R_8F_E5M2: return HS_GEMM_FP8;
    default: return -1;
    }
}

int hs_cublas_tf32_math(int math_mode) { return (math_mode & 0xf) == CUBLAS_TF32_TENSOR_OP_MATH; }

int hs_cublas_sgemm_dtype(int math_mode) { return hs_cublas_tf32_math(math_mode) ? HS_GEMM_TF32 : HS_GEMM_FP32; }

int hs_cublaslt_gemm(const hs_cublaslt_operands *o, hs_cublas_gemm *g)
{
    uint64_t k = o->transa == CUBLAS_OP_N ? o->a_cols : o->a_rows;
    /* cuBLASLt has no math mode: TF32 is asked for by the compute type */
    int dtype = hs_cublas_dtype((cudaDataType)o->a_type, o->compute, 0);
    if (dtype < 0)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (o->d_batch < 0 || o->d_rows > INT64_MAX || o->d_cols > INT64_MAX || k > INT64_MAX)
        return CUBLAS_STATUS_INVALID_VALUE;
    *g = (hs_cublas_gemm){(int64_t)o->d_rows,
                          (int64_t)o->d_cols,
                          (int64_t)k,
                          o->d_batch ? o->d_batch : 1,
                          dtype,
                          o->a_ld,
                          o->b_ld,
                          o->d_ld};
    return 0;
}
