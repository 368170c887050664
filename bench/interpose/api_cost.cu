// api_cost: CPU cost per call of the CUDA, cuBLAS and NCCL calls a training
// step issues most, as the calling thread pays it. For each call kind, a
// batch of B calls is issued back to back and timed by the thread's CPU
// clock (CLOCK_THREAD_CPUTIME_ID), then the stream is synchronised outside
// the timing; the figure is the median over R batches, per call. B stays
// well under the GPU's launch queue depth, so no call waits for the GPU to
// drain it: the figure is the library's own CPU work, not the GPU's rate.
//
// Under hysim the CPU-time clocks are not simulated, so the same program
// measures the interposer's cost there and the real libraries' on a GPU.
// usage: api_cost [BATCH [BATCHES]]
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <vector>

#define CHECK(call)                                                                                     \
    do {                                                                                                \
        cudaError_t err_ = (call);                                                                      \
        if (err_ != cudaSuccess) {                                                                      \
            std::fprintf(stderr, "api_cost: %s failed: %s\n", #call, cudaGetErrorString(err_));         \
            std::exit(1);                                                                               \
        }                                                                                               \
    } while (0)
#define CHECK_BLAS(call)                                                                                \
    do {                                                                                                \
        if ((call) != CUBLAS_STATUS_SUCCESS) {                                                          \
            std::fprintf(stderr, "api_cost: %s failed\n", #call);                                       \
            std::exit(1);                                                                               \
        }                                                                                               \
    } while (0)
#define CHECK_NCCL(call)                                                                                \
    do {                                                                                                \
        ncclResult_t r_ = (call);                                                                       \
        if (r_ != ncclSuccess) {                                                                        \
            std::fprintf(stderr, "api_cost: %s failed: %s\n", #call, ncclGetErrorString(r_));           \
            std::exit(1);                                                                               \
        }                                                                                               \
    } while (0)

__global__ void empty_kernel(int *p) { if (p && threadIdx.x == 1024) *p = 0; }

static double thread_cpu_us()
{
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

// Median CPU µs per call of `call` over `batches` batches of `batch` calls.
static double cost_us(cudaStream_t s, int batch, int batches, const std::function<void()> &call)
{
    call(); // warm-up: first-call setup
    CHECK(cudaStreamSynchronize(s));
    std::vector<double> per_call;
    for (int b = 0; b < batches; b++) {
        double t0 = thread_cpu_us();
        for (int i = 0; i < batch; i++)
            call();
        per_call.push_back((thread_cpu_us() - t0) / batch);
        CHECK(cudaStreamSynchronize(s));
    }
    std::sort(per_call.begin(), per_call.end());
    return per_call[per_call.size() / 2];
}

int main(int argc, char **argv)
{
    int batch = argc > 1 ? std::atoi(argv[1]) : 256, batches = argc > 2 ? std::atoi(argv[2]) : 50;
    if (batch <= 0 || batches <= 0) {
        std::fprintf(stderr, "usage: api_cost [BATCH [BATCHES]]\n");
        return 2;
    }
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    cudaEvent_t ev;
    CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    const size_t bytes = 4096, n = 128;
    void *a, *b;
    CHECK(cudaMalloc(&a, 1 << 20));
    CHECK(cudaMalloc(&b, 1 << 20));
    cublasHandle_t blas;
    CHECK_BLAS(cublasCreate(&blas));
    CHECK_BLAS(cublasSetStream(blas, s));
    ncclComm_t comm;
    int dev = 0;
    CHECK_NCCL(ncclCommInitAll(&comm, 1, &dev));
    float one = 1, zero = 0;

    struct row { const char *name; std::function<void()> call; };
    std::vector<row> rows = {
        {"cudaLaunchKernel (empty kernel)", [&] { empty_kernel<<<1, 32, 0, s>>>(nullptr); }},
        {"cudaEventRecord", [&] { CHECK(cudaEventRecord(ev, s)); }},
        {"cudaStreamWaitEvent", [&] { CHECK(cudaStreamWaitEvent(s, ev, 0)); }},
        {"cudaEventQuery", [&] { (void)cudaEventQuery(ev); }},
        {"cudaMemcpyAsync (4 KiB, device to device)", [&] { CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s)); }},
        {"cudaMemsetAsync (4 KiB)", [&] { CHECK(cudaMemsetAsync(a, 0, bytes, s)); }},
        {"cublasGemmEx (bf16, 128^3)", [&] {
             CHECK_BLAS(cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_16BF, n, a, CUDA_R_16BF, n,
                                     &zero, b, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
         }},
        {"cublasSgemm (128^3)", [&] {
             CHECK_BLAS(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, (float *)a, n, (float *)a, n, &zero,
                                    (float *)b, n));
         }},
        {"ncclAllReduce (4 KiB, 1 rank)", [&] { CHECK_NCCL(ncclAllReduce(a, b, bytes / 4, ncclFloat, ncclSum, comm, s)); }},
    };
    std::printf("# api_cost: CPU us per call, median of %d batches of %d calls\n", batches, batch);
    for (const row &r : rows)
        std::printf("%-45s %8.3f\n", r.name, cost_us(s, batch, batches, r.call));
    CHECK_NCCL(ncclCommDestroy(comm));
    CHECK_BLAS(cublasDestroy(blas));
    return 0;
}
