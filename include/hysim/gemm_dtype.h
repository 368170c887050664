/*
 * A GEMM's element type as hysim times it: the numbers hysim.proto's
 * GemmDtype carries, shared by the replacement cuBLAS libraries, the
 * profile recorder and the compute model (docs/compute.md).
 */
#ifndef HYSIM_GEMM_DTYPE_H
#define HYSIM_GEMM_DTYPE_H

enum hs_gemm_dtype {
    HS_GEMM_FP32 = 0,
    HS_GEMM_FP16 = 1,
    HS_GEMM_BF16 = 2,
    HS_GEMM_FP64 = 3,
    HS_GEMM_TF32 = 4,
    HS_GEMM_FP8 = 5,
};

#endif
