/*
 * libhysim_profile.so's cuBLAS GEMM wrappers without a GPU
 * (interpose/profile/cublas_forward.c). This program is linked against the
 * REAL libcublas.so.13 / libcublasLt.so.13 (versioned references, as an
 * nvcc-built program's are) and run with the recorder LD_PRELOADed, as
 * `hysim profile` runs a program: each GEMM entry point the replacement
 * times (the _64 forms too; the grouped-batched ones are not wrapped) must
 * resolve to the recorder's wrapper, and the wrapper must forward
 * to the real function (same answer as the real one, called directly, for a
 * call the real library refuses without a GPU: a null handle).
 * usage: gemm_forward_test (LD_PRELOAD=.../libhysim_profile.so)
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <cublasLt.h>
#include <cublas_v2.h>

#define HS_CHECK_COUNTS
static int failures;
#include "test_check.h"

#include "cublas_hgemm.h" /* C has no __half: the Hgemm family as the replacement and the wrapper declare it */

/* Where the program's reference to `fn` resolved, and that it is not the real library's definition. */
static void check_bound(const char *name, void *fn, void *real_lib)
{
    Dl_info info;
    int found = dladdr(fn, &info);
    const char *from = found && info.dli_fname ? info.dli_fname : "?";
    void *real = dlsym(real_lib, name);
    printf("%s -> %s\n", name, from);
    if (!strstr(from, "libhysim_profile.so") || !real || real == fn) {
        printf("FAIL: %s is not the recorder's wrapper (bound in %s)\n", name, from);
        failures++;
    }
}

int main(void)
{
    void *blas = dlopen("libcublas.so.13", RTLD_NOW | RTLD_NOLOAD);
    void *lt = dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_NOLOAD);
    if (!blas || !lt) {
        printf("FAIL: the real libcublas.so.13 / libcublasLt.so.13 are not loaded\n");
        return 1;
    }
#define BOUND(lib, fn) check_bound(#fn, (void *)(uintptr_t)&fn, lib)
    BOUND(blas, cublasSgemm_v2);
    BOUND(blas, cublasSgemmStridedBatched);
    BOUND(blas, cublasSgemmBatched);
    BOUND(blas, cublasDgemm_v2);
    BOUND(blas, cublasDgemmStridedBatched);
    BOUND(blas, cublasDgemmBatched);
    BOUND(blas, cublasHgemm);
    BOUND(blas, cublasHgemmStridedBatched);
    BOUND(blas, cublasHgemmBatched);
    BOUND(blas, cublasGemmEx);
    BOUND(blas, cublasGemmStridedBatchedEx);
    BOUND(blas, cublasGemmBatchedEx);
    BOUND(blas, cublasSgemm_v2_64);
    BOUND(blas, cublasSgemmStridedBatched_64);
    BOUND(blas, cublasSgemmBatched_64);
    BOUND(blas, cublasDgemm_v2_64);
    BOUND(blas, cublasDgemmStridedBatched_64);
    BOUND(blas, cublasDgemmBatched_64);
    BOUND(blas, cublasHgemm_64);
    BOUND(blas, cublasHgemmStridedBatched_64);
    BOUND(blas, cublasHgemmBatched_64);
    BOUND(blas, cublasGemmEx_64);
    BOUND(blas, cublasGemmStridedBatchedEx_64);
    BOUND(blas, cublasGemmBatchedEx_64);
    BOUND(lt, cublasLtMatmul);
#undef BOUND

    /* forwarded: the real library's answer to a null handle, through the wrapper and directly */
    float one = 1, x = 0;
    typedef cublasStatus_t (*sgemm_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                       const float *, const float *, int, const float *, int, const float *, float *,
                                       int);
    sgemm_fn real_sgemm = (sgemm_fn)(uintptr_t)dlsym(blas, "cublasSgemm_v2");
    cublasStatus_t via = cublasSgemm_v2(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, &x, 8, &x, 8, &one, &x, 8);
    cublasStatus_t direct = real_sgemm(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, &x, 8, &x, 8, &one, &x, 8);
    printf("cublasSgemm_v2(NULL handle): %d through the wrapper, %d directly\n", (int)via, (int)direct);
    CHECK_COND(via == direct && via != CUBLAS_STATUS_SUCCESS);
    typedef cublasStatus_t (*ex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void *,
                                    const void *, cudaDataType, int, const void *, cudaDataType, int, const void *,
                                    void *, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
    ex_fn real_ex = (ex_fn)(uintptr_t)dlsym(blas, "cublasGemmEx");
    via = cublasGemmEx(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, &x, CUDA_R_16BF, 8, &x, CUDA_R_16BF, 8, &one, &x,
                       CUDA_R_16BF, 8, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    direct = real_ex(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, &x, CUDA_R_16BF, 8, &x, CUDA_R_16BF, 8, &one, &x,
                     CUDA_R_16BF, 8, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    printf("cublasGemmEx(NULL handle): %d through the wrapper, %d directly\n", (int)via, (int)direct);
    CHECK_COND(via == direct && via != CUBLAS_STATUS_SUCCESS);
    typedef cublasStatus_t (*ex64_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t, int64_t, int64_t,
                                      const void *, const void *, cudaDataType, int64_t, const void *, cudaDataType,
                                      int64_t, const void *, void *, cudaDataType, int64_t, cublasComputeType_t,
                                      cublasGemmAlgo_t);
    ex64_fn real_ex64 = (ex64_fn)(uintptr_t)dlsym(blas, "cublasGemmEx_64");
    via = cublasGemmEx_64(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, &x, CUDA_R_16BF, 8, &x, CUDA_R_16BF, 8, &one,
                          &x, CUDA_R_16BF, 8, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    direct = real_ex64(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, &x, CUDA_R_16BF, 8, &x, CUDA_R_16BF, 8, &one, &x,
                       CUDA_R_16BF, 8, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    printf("cublasGemmEx_64(NULL handle): %d through the wrapper, %d directly\n", (int)via, (int)direct);
    CHECK_COND(via == direct && via != CUBLAS_STATUS_SUCCESS);
    typedef cublasStatus_t (*lt_fn)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *, const void *,
                                    cublasLtMatrixLayout_t, const void *, cublasLtMatrixLayout_t, const void *,
                                    const void *, cublasLtMatrixLayout_t, void *, cublasLtMatrixLayout_t,
                                    const cublasLtMatmulAlgo_t *, void *, size_t, cudaStream_t);
    lt_fn real_lt = (lt_fn)(uintptr_t)dlsym(lt, "cublasLtMatmul");
    via = cublasLtMatmul(NULL, NULL, &one, &x, NULL, &x, NULL, &one, &x, NULL, &x, NULL, NULL, NULL, 0, NULL);
    direct = real_lt(NULL, NULL, &one, &x, NULL, &x, NULL, &one, &x, NULL, &x, NULL, NULL, NULL, 0, NULL);
    printf("cublasLtMatmul(NULL handle): %d through the wrapper, %d directly\n", (int)via, (int)direct);
    CHECK_COND(via == direct && via != CUBLAS_STATUS_SUCCESS);
    if (failures)
        return 1;
    printf("ok\n");
    return 0;
}
