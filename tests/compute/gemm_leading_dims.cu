// A cuBLAS program, built by nvcc against the real headers, whose bf16
// products have m = 1100 rows: 2200 bytes, not a multiple of 16. Passed
// packed (lda = ldc = 1100) cuBLAS runs its slow fallback kernels; with the
// rows padded to 1104 elements (2208 bytes) its sm90 ones. Under hysim the
// leading dimensions reach the compute model (hysim.proto Gemm.lda/ldb/ldc),
// which times the first at the misaligned rate and the second at the full
// one, through cublasGemmEx and cublasLtMatmul alike (same shape, same time).
// Also: a 16-byte-aligned m = 1024 turned misaligned by lda = 1025.
//
// usage: gemm_leading_dims   (prints "gemm_leading_dims: ok" or CHECK failures)
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <functional>

#include "test_check.h"

static const int N = 2048, K = 4096;

// The simulated GPU time of one call of `gemm`, in microseconds.
static double time_us(cudaStream_t s, const std::function<void()> &gemm)
{
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a) == cudaSuccess && cudaEventCreate(&b) == cudaSuccess, "event create");
    CHECK(cudaEventRecord(a, s) == cudaSuccess, "record");
    gemm();
    CHECK(cudaEventRecord(b, s) == cudaSuccess && cudaEventSynchronize(b) == cudaSuccess, "record/sync");
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b) == cudaSuccess, "elapsed");
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms * 1e3;
}

static double gemm_ex(cublasHandle_t h, cudaStream_t s, void *buf, int m, int lda, int ldc)
{
    const float one = 1, zero = 0;
    return time_us(s, [&] {
        CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, N, K, &one, buf, CUDA_R_16BF, lda, buf, CUDA_R_16BF, K,
                           &zero, buf, CUDA_R_16BF, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) ==
                  CUBLAS_STATUS_SUCCESS,
              "cublasGemmEx m %d lda %d ldc %d", m, lda, ldc);
    });
}

static double lt_matmul(cublasLtHandle_t lt, cudaStream_t s, void *buf, int m, int lda, int ldc)
{
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc;
    CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS, "desc");
    CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, m, K, lda) == CUBLAS_STATUS_SUCCESS &&
              cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, K, N, K) == CUBLAS_STATUS_SUCCESS &&
              cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, m, N, ldc) == CUBLAS_STATUS_SUCCESS,
          "layouts");
    const float one = 1, zero = 0;
    double us = time_us(s, [&] {
        CHECK(cublasLtMatmul(lt, desc, &one, buf, la, buf, lb, &zero, buf, lc, buf, lc, nullptr, nullptr, 0, s) ==
                  CUBLAS_STATUS_SUCCESS,
              "cublasLtMatmul m %d lda %d ldc %d", m, lda, ldc);
    });
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(desc);
    return us;
}

int main()
{
    void *buf;
    CHECK(cudaMalloc(&buf, (size_t)2 * 1104 * (K + N) + (size_t)2 * K * N) == cudaSuccess, "cudaMalloc");
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s) == cudaSuccess, "stream");
    cublasHandle_t h;
    cublasLtHandle_t lt;
    CHECK(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS && cublasSetStream(h, s) == CUBLAS_STATUS_SUCCESS, "handle");
    CHECK(cublasLtCreate(&lt) == CUBLAS_STATUS_SUCCESS, "Lt handle");

    double packed = gemm_ex(h, s, buf, 1100, 1100, 1100), padded = gemm_ex(h, s, buf, 1100, 1104, 1104);
    double packed_lt = lt_matmul(lt, s, buf, 1100, 1100, 1100), padded_lt = lt_matmul(lt, s, buf, 1100, 1104, 1104);
    double aligned = gemm_ex(h, s, buf, 1024, 1024, 1024), odd = gemm_ex(h, s, buf, 1024, 1025, 1024);
    printf("m 1100: packed %.3f us, padded to 1104 %.3f us (Lt %.3f, %.3f); "
           "m 1024: lda 1024 %.3f us, lda 1025 %.3f us\n",
           packed, padded, packed_lt, padded_lt, aligned, odd);
    // the misaligned rate is a fraction of the aligned one (bench/RESULTS.md: 16 % and 10 % of peak for bf16)
    CHECK(packed > 2 * padded, "packed %.3f us should be over twice padded %.3f us", packed, padded);
    CHECK(odd > 2 * aligned, "lda 1025 %.3f us should be over twice lda 1024 %.3f us", odd, aligned);
    CHECK(packed_lt == packed && padded_lt == padded, "cublasLtMatmul %.3f/%.3f us, cublasGemmEx %.3f/%.3f us",
          packed_lt, padded_lt, packed, padded);

    cublasLtDestroy(lt);
    cublasDestroy(h);
    cudaFree(buf);
    printf("gemm_leading_dims: ok\n");
    return 0;
}
