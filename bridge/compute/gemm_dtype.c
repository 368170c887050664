/*
 * The names of the GEMM element types (gemm_model.h), as the measured CSVs
 * and the profile database's GEMM keys spell them. Apart from the roofline
 * (gemm_model.c) so the profile recorder can key GEMMs without the model.
 */
#include <stddef.h>

#include "gemm_model.h"

const char *hs_gemm_dtype_name(int dtype)
{
    switch (dtype) {
    case HS_GEMM_FP32: return "fp32";
    case HS_GEMM_FP16: return "fp16";
    case HS_GEMM_BF16: return "bf16";
    case HS_GEMM_FP64: return "fp64";
    case HS_GEMM_TF32: return "tf32";
    case HS_GEMM_FP8: return "fp8";
    default: return NULL;
    }
}
