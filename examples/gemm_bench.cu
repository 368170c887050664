// gemm_bench: times cuBLAS and cuBLASLt GEMMs with CUDA events, as a user
// would on a real GPU. Built by nvcc against the real CUDA headers and linked
// against the real libcublas / libcublasLt; under `hysim run` the same binary
// reports the simulated GPU's times (the compute model's roofline).
//
// usage: gemm_bench [-m M] [-n N] [-k K] [-b BATCH] [-i ITERS] [-g]
// With -g the timed calls are captured into a CUDA graph, which is launched
// once to warm up and once timed.
// Prints one row per API and type:
//   api dtype m n k batch time_us tflops
// and launches one kernel of its own (scale<<<1024, 256>>>) before the GEMMs.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <getopt.h>

#define CHECK_CUDA(x)                                                                             \
    do {                                                                                          \
        cudaError_t e_ = (x);                                                                     \
        if (e_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "gemm_bench: %s: %s\n", #x, cudaGetErrorString(e_));                  \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)
#define CHECK_BLAS(x)                                                                             \
    do {                                                                                          \
        cublasStatus_t s_ = (x);                                                                  \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                        \
            fprintf(stderr, "gemm_bench: %s: status %d\n", #x, (int)s_);                          \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

__global__ void scale(float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

static int g_iters = 10;
static bool g_graph; // -g: the timed calls as one CUDA graph

// Mean time of one call of `gemm`, in microseconds, over g_iters after one warm-up.
static double time_us(cudaStream_t stream, const std::function<void()> &gemm) {
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    cudaGraphExec_t exec = nullptr;
    if (g_graph) {
        cudaGraph_t graph;
        CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < g_iters; i++) gemm();
        CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
        CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
        CHECK_CUDA(cudaGraphDestroy(graph));
        CHECK_CUDA(cudaGraphLaunch(exec, stream)); // warm-up
    } else {
        gemm();
    }
    CHECK_CUDA(cudaEventRecord(start, stream));
    if (exec)
        CHECK_CUDA(cudaGraphLaunch(exec, stream));
    else
        for (int i = 0; i < g_iters; i++) gemm();
    CHECK_CUDA(cudaEventRecord(stop, stream));
    if (exec)
        CHECK_CUDA(cudaGraphExecDestroy(exec));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    CHECK_CUDA(cudaEventDestroy(start));
    CHECK_CUDA(cudaEventDestroy(stop));
    return ms * 1e3 / g_iters;
}

static void row(const char *api, const char *dtype, int m, int n, int k, int batch, double us) {
    printf("%-28s %-5s %6d %6d %6d %5d %12.3f %9.2f\n", api, dtype, m, n, k, batch, us,
           2.0 * m * n * k * batch / us / 1e6);
}

static void usage(FILE *out) {
    fprintf(out,
            "usage: gemm_bench [-m M] [-n N] [-k K] [-b BATCH] [-i ITERS] [-g]\n"
            "  -m M, -n N, -k K  GEMM shape: C (M x N) = A (M x K) B (K x N) (default 4096 each)\n"
            "  -b BATCH          matrices per batched GEMM (default 4)\n"
            "  -i ITERS          timed calls per API and type, after one warm-up (default 10)\n"
            "  -g                capture the timed calls into a CUDA graph and time one launch of it\n"
            "Prints one row per API and type: api dtype m n k batch time_us tflops\n");
}

int main(int argc, char **argv) {
    int m = 4096, n = 4096, k = 4096, batch = 4;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        }
    for (int c; (c = getopt(argc, argv, "m:n:k:b:i:g")) != -1;) {
        switch (c) {
        case 'm': m = atoi(optarg); break;
        case 'n': n = atoi(optarg); break;
        case 'k': k = atoi(optarg); break;
        case 'b': batch = atoi(optarg); break;
        case 'i': g_iters = atoi(optarg); break;
        case 'g': g_graph = true; break;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (m <= 0 || n <= 0 || k <= 0 || batch <= 0 || g_iters <= 0) {
        fprintf(stderr, "gemm_bench: sizes and counts must be positive\n");
        return 2;
    }
    size_t elems = (size_t)batch * ((size_t)m * k + (size_t)k * n + (size_t)m * n);
    void *buf, *ws;
    size_t ws_bytes = 32u << 20;
    CHECK_CUDA(cudaMalloc(&buf, elems * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&ws, ws_bytes));
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cublasHandle_t h;
    CHECK_BLAS(cublasCreate(&h));
    CHECK_BLAS(cublasSetStream(h, stream));
    CHECK_BLAS(cublasSetWorkspace(h, ws, ws_bytes));

    int sn = m * n < (1 << 20) ? m * n : (1 << 20);
    scale<<<(sn + 255) / 256, 256, 0, stream>>>((float *)buf, 0.5f, sn);
    CHECK_CUDA(cudaGetLastError());

    char *A = (char *)buf;
    printf("# gemm_bench: m %d n %d k %d batch %d, mean of %d%s\n", m, n, k, batch, g_iters,
           g_graph ? ", one CUDA graph" : "");
    printf("# api                         dtype      m      n      k batch      time_us    tflops\n");
    const float one = 1.0f, zero = 0.0f;
    float *fA = (float *)A, *fB = fA + (size_t)m * k, *fC = fB + (size_t)k * n;
    double us = time_us(stream, [&] {
        CHECK_BLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, fA, m, fB, k, &zero, fC, m));
    });
    row("cublasSgemm", "fp32", m, n, k, 1, us);

    const char *types[] = {"bf16", "fp16"};
    cudaDataType dts[] = {CUDA_R_16BF, CUDA_R_16F};
    for (int t = 0; t < 2; t++) {
        us = time_us(stream, [&] {
            CHECK_BLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, A, dts[t], m, A, dts[t], k, &zero,
                                    A, dts[t], m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        });
        row("cublasGemmEx", types[t], m, n, k, 1, us);
    }
    long long sa = (long long)m * k, sb = (long long)k * n, sc = (long long)m * n;
    us = time_us(stream, [&] {
        CHECK_BLAS(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, A, CUDA_R_16BF, m, sa, A,
                                              CUDA_R_16BF, k, sb, &zero, A, CUDA_R_16BF, m, sc, batch,
                                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    });
    row("cublasGemmStridedBatchedEx", "bf16", m, n, k, batch, us);

    // cuBLASLt, as PyTorch calls it: D = A^T-free bf16 product, heuristic algorithm.
    cublasLtHandle_t lt;
    CHECK_BLAS(cublasLtCreate(&lt));
    cublasLtMatmulDesc_t desc;
    CHECK_BLAS(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t opN = CUBLAS_OP_N;
    CHECK_BLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opN, sizeof opN));
    CHECK_BLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opN, sizeof opN));
    cublasLtMatrixLayout_t la, lb, lc;
    CHECK_BLAS(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, m, k, m));
    CHECK_BLAS(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, k, n, k));
    CHECK_BLAS(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, m, n, m));
    cublasLtMatmulPreference_t pref;
    CHECK_BLAS(cublasLtMatmulPreferenceCreate(&pref));
    CHECK_BLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
                                                    sizeof ws_bytes));
    cublasLtMatmulHeuristicResult_t heur;
    int found = 0;
    CHECK_BLAS(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 1, &heur, &found));
    if (found < 1) {
        fprintf(stderr, "gemm_bench: cublasLtMatmulAlgoGetHeuristic found no algorithm\n");
        return 1;
    }
    us = time_us(stream, [&] {
        CHECK_BLAS(cublasLtMatmul(lt, desc, &one, A, la, A, lb, &zero, A, lc, A, lc, &heur.algo, ws, ws_bytes,
                                  stream));
    });
    row("cublasLtMatmul", "bf16", m, n, k, 1, us);

    CHECK_BLAS(cublasLtMatmulPreferenceDestroy(pref));
    CHECK_BLAS(cublasLtMatrixLayoutDestroy(la));
    CHECK_BLAS(cublasLtMatrixLayoutDestroy(lb));
    CHECK_BLAS(cublasLtMatrixLayoutDestroy(lc));
    CHECK_BLAS(cublasLtMatmulDescDestroy(desc));
    CHECK_BLAS(cublasLtDestroy(lt));
    CHECK_BLAS(cublasDestroy(h));
    CHECK_CUDA(cudaStreamDestroy(stream));
    CHECK_CUDA(cudaFree(ws));
    CHECK_CUDA(cudaFree(buf));
    return 0;
}
