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

// Median CPU µs per call of `call` over `batches` batches of `batch` calls;
// `sync` waits for what a batch issued, outside the timing.
static double cost_us(const std::function<void()> &sync, int batch, int batches, const std::function<void()> &call)
{
    call(); // warm-up: first-call setup
    sync();
    std::vector<double> per_call;
    for (int b = 0; b < batches; b++) {
        double t0 = thread_cpu_us();
        for (int i = 0; i < batch; i++)
            call();
        per_call.push_back((thread_cpu_us() - t0) / batch);
        sync();
    }
    std::sort(per_call.begin(), per_call.end());
    return per_call[per_call.size() / 2];
}

// One measured call kind: its row name and one call of it.
struct row {
    const char *name;
    std::function<void()> call;
};

// Prints each row's cost (cost_us), `sync` waiting for its batches.
static void print_rows(const std::vector<row> &rows, const std::function<void()> &sync, int batch, int batches)
{
    for (const row &r : rows)
        std::printf("%-45s %8.3f\n", r.name, cost_us(sync, batch, batches, r.call));
}

// With two GPUs: what one thread pays to drive both, as a one-process
// data-parallel step does (per call of the row's kind; a group row per group).
static void two_device_rows(int batch, int batches)
{
    int ndev = 0;
    CHECK(cudaGetDeviceCount(&ndev));
    if (ndev < 2) {
        std::printf("# one GPU: no two-device rows\n");
        return;
    }
    int devs[2] = {0, 1};
    ncclComm_t comms[2];
    CHECK_NCCL(ncclCommInitAll(comms, 2, devs));
    cudaStream_t st[2];
    void *buf[2];
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaStreamCreate(&st[d]));
        CHECK(cudaMalloc(&buf[d], 1 << 20));
    }
    CHECK(cudaSetDevice(0));
    auto sync2 = [&] {
        for (int d = 0; d < 2; d++)
            CHECK(cudaStreamSynchronize(st[d]));
    };
    int which = 0;
    std::vector<row> rows = {
        {"cudaSetDevice (alternating 2 devices)", [&] { CHECK(cudaSetDevice(which ^= 1)); }},
        {"ncclAllReduce (4 KiB, 2 ranks, one group)", [&] {
             CHECK_NCCL(ncclGroupStart());
             for (int d = 0; d < 2; d++)
                 CHECK_NCCL(ncclAllReduce(buf[d], buf[d], 1024, ncclFloat, ncclSum, comms[d], st[d]));
             CHECK_NCCL(ncclGroupEnd());
         }},
        {"ncclSend + ncclRecv (4 KiB, 2 ranks, one group)", [&] {
             CHECK_NCCL(ncclGroupStart());
             CHECK_NCCL(ncclSend(buf[0], 1024, ncclFloat, 1, comms[0], st[0]));
             CHECK_NCCL(ncclRecv(buf[1], 1024, ncclFloat, 0, comms[1], st[1]));
             CHECK_NCCL(ncclGroupEnd());
         }},
        {"ncclSend + ncclRecv on each rank (4 KiB, 2 ranks, one group)", [&] {
             CHECK_NCCL(ncclGroupStart());
             for (int d = 0; d < 2; d++) {
                 CHECK_NCCL(ncclSend(buf[d], 1024, ncclFloat, 1 - d, comms[d], st[d]));
                 CHECK_NCCL(ncclRecv(buf[d], 1024, ncclFloat, 1 - d, comms[d], st[d]));
             }
             CHECK_NCCL(ncclGroupEnd());
         }},
        {"ncclAllReduce x2 on each rank (4 KiB, 2 ranks, one group)", [&] {
             CHECK_NCCL(ncclGroupStart());
             for (int d = 0; d < 2; d++)
                 for (int i = 0; i < 2; i++)
                     CHECK_NCCL(ncclAllReduce(buf[d], buf[d], 1024, ncclFloat, ncclSum, comms[d], st[d]));
             CHECK_NCCL(ncclGroupEnd());
         }},
    };
    print_rows(rows, sync2, batch, batches);
    CHECK(cudaSetDevice(0));
    for (int d = 0; d < 2; d++)
        CHECK_NCCL(ncclCommDestroy(comms[d]));
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
    cudaEvent_t t0, t1; // timing events, recorded and done, for cudaEventElapsedTime
    CHECK(cudaEventCreate(&t0));
    CHECK(cudaEventCreate(&t1));
    CHECK(cudaEventRecord(t0, s));
    CHECK(cudaEventRecord(t1, s));
    CHECK(cudaStreamSynchronize(s));
    void *pinned;
    CHECK(cudaMallocHost(&pinned, 4096));

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
        {"cudaSetDevice (the current device)", [&] { CHECK(cudaSetDevice(0)); }},
        {"cudaGetLastError", [&] { (void)cudaGetLastError(); }},
        {"cudaStreamSynchronize (idle stream)", [&] { CHECK(cudaStreamSynchronize(s)); }},
        {"cudaEventSynchronize (done event)", [&] { CHECK(cudaEventSynchronize(t1)); }},
        {"cudaEventElapsedTime", [&] { float ms; CHECK(cudaEventElapsedTime(&ms, t0, t1)); }},
        {"cudaMemcpyAsync (4 B, device to pinned host)", [&] { CHECK(cudaMemcpyAsync(pinned, a, 4, cudaMemcpyDeviceToHost, s)); }},
        {"ncclGroupStart + ncclGroupEnd (empty)", [&] { CHECK_NCCL(ncclGroupStart()); CHECK_NCCL(ncclGroupEnd()); }},
        {"ncclAllReduce in a group (4 KiB, 1 rank)", [&] {
             CHECK_NCCL(ncclGroupStart());
             CHECK_NCCL(ncclAllReduce(a, b, bytes / 4, ncclFloat, ncclSum, comm, s));
             CHECK_NCCL(ncclGroupEnd());
         }},
        {"ncclAllReduce x2 in a group (4 KiB, 1 rank)", [&] {
             CHECK_NCCL(ncclGroupStart());
             for (int i = 0; i < 2; i++)
                 CHECK_NCCL(ncclAllReduce(a, b, bytes / 4, ncclFloat, ncclSum, comm, s));
             CHECK_NCCL(ncclGroupEnd());
         }},
    };
    std::printf("# api_cost: CPU us per call, median of %d batches of %d calls\n", batches, batch);
    auto sync_s = [&] { CHECK(cudaStreamSynchronize(s)); };
    print_rows(rows, sync_s, batch, batches);
    two_device_rows(batch, batches);
    CHECK_NCCL(ncclCommDestroy(comm));
    CHECK_BLAS(cublasDestroy(blas));
    return 0;
}
