// api_cost: cost per call of the CUDA, cuBLAS and NCCL calls a training
// step issues most, as the calling thread pays it. For each call kind, a
// batch of B calls is issued back to back and timed twice, by the thread's
// CPU clock (CLOCK_THREAD_CPUTIME_ID) and by the wall clock
// (CLOCK_MONOTONIC), then the stream is synchronised outside the timing;
// each figure is the median over R batches, per call. The wall figure also
// holds whatever the call waited for without using the CPU (a lock, the
// driver); it is what a host-bound step pays. B stays well under the GPU's
// launch queue depth, so no call waits for the GPU to drain it: the figure
// is the library's own work, not the GPU's rate.
//
// Under hysim the CPU-time clocks are not simulated, so the same program
// measures the interposer's cost there and the real libraries' on a GPU.
// With --gemm-grid, it times cublasGemmEx alone instead, TF32 and BF16, over
// every m, n, k of 128 ... 4096 (powers of two): what one GEMM call costs
// the host by its shape (cuBLAS picks another kernel, and more set-up, for a
// larger product).
// usage: api_cost [BATCH [BATCHES]] | api_cost --gemm-grid [BATCH [BATCHES]]
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>
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

// One TF32 GEMM as the training examples issue them (fp32 operands, C = A B, packed).
static void tf32_gemm(cublasHandle_t blas, int m, int n, int k, const void *a, void *c)
{
    const float one = 1, zero = 0;
    CHECK_BLAS(cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a, CUDA_R_32F, m, a, CUDA_R_32F, k, &zero, c,
                            CUDA_R_32F, m, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
}

static double clock_us(clockid_t clock)
{
    timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Median CPU and wall µs per call of `call` over `batches` batches of `batch`
// calls; `sync` waits for what a batch issued, outside the timing.
static void cost_us(const std::function<void()> &sync, int batch, int batches, const std::function<void()> &call,
                    double *cpu, double *wall)
{
    call(); // warm-up: first-call setup
    sync();
    std::vector<double> cpu_per_call, wall_per_call;
    for (int b = 0; b < batches; b++) {
        double c0 = clock_us(CLOCK_THREAD_CPUTIME_ID), w0 = clock_us(CLOCK_MONOTONIC);
        for (int i = 0; i < batch; i++)
            call();
        wall_per_call.push_back((clock_us(CLOCK_MONOTONIC) - w0) / batch);
        cpu_per_call.push_back((clock_us(CLOCK_THREAD_CPUTIME_ID) - c0) / batch);
        sync();
    }
    *cpu = median(cpu_per_call);
    *wall = median(wall_per_call);
}

// One measured call kind: its row name and one call of it.
struct row {
    const char *name;
    std::function<void()> call;
};

// Prints each row's CPU and wall cost (cost_us), `sync` waiting for its batches.
static void print_rows(const std::vector<row> &rows, const std::function<void()> &sync, int batch, int batches)
{
    for (const row &r : rows) {
        double cpu, wall;
        cost_us(sync, batch, batches, r.call, &cpu, &wall);
        std::printf("%-45s %8.3f %8.3f\n", r.name, cpu, wall);
    }
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
    cudaEvent_t ev2[2];
    void *buf[2];
    int turn = 0;
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaStreamCreate(&st[d]));
        CHECK(cudaEventCreateWithFlags(&ev2[d], cudaEventDisableTiming));
        CHECK(cudaMalloc(&buf[d], 1 << 20));
    }
    CHECK(cudaSetDevice(0));
    auto sync2 = [&] {
        for (int d = 0; d < 2; d++)
            CHECK(cudaStreamSynchronize(st[d]));
    };
    int which = 0;
    cublasHandle_t blas[2];
    void *c[2];
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        CHECK_BLAS(cublasCreate(&blas[d]));
        CHECK_BLAS(cublasSetStream(blas[d], st[d]));
        CHECK(cudaMalloc(&c[d], 1 << 20));
    }
    CHECK(cudaSetDevice(0));
    const float one = 1, zero = 0;
    const int n = 128;
    // The same calls as the one-device rows, each on the other device than the last (cudaSetDevice
    // included: a step that drives two GPUs from one thread issues them so)
    std::vector<row> rows = {
        {"cudaSetDevice (alternating 2 devices)", [&] { CHECK(cudaSetDevice(which ^= 1)); }},
        {"cudaLaunchKernel (empty kernel), alternating 2 devices", [&] {
             CHECK(cudaSetDevice(which ^= 1));
             empty_kernel<<<1, 32, 0, st[which]>>>(nullptr);
         }},
        {"cudaEventRecord, alternating 2 devices", [&] {
             CHECK(cudaSetDevice(which ^= 1));
             CHECK(cudaEventRecord(ev2[which], st[which]));
         }},
        {"cudaMemcpyAsync (4 KiB, D2D), alternating 2 devices", [&] {
             CHECK(cudaSetDevice(which ^= 1));
             CHECK(cudaMemcpyAsync(c[which], buf[which], 4096, cudaMemcpyDeviceToDevice, st[which]));
         }},
        {"cublasGemmEx (bf16, 128^3), alternating 2 devices", [&] {
             CHECK(cudaSetDevice(which ^= 1));
             CHECK_BLAS(cublasGemmEx(blas[which], CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, buf[which], CUDA_R_16BF, n,
                                     buf[which], CUDA_R_16BF, n, &zero, c[which], CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                                     CUBLAS_GEMM_DEFAULT));
         }},
        {"cudaLaunchKernel (empty kernel), 2 devices, 8 on each in turn", [&] {
             if (++turn % 8 == 0)
                 CHECK(cudaSetDevice(which ^= 1));
             empty_kernel<<<1, 32, 0, st[which]>>>(nullptr);
         }},
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
    for (int d = 0; d < 2; d++) {
        CHECK_NCCL(ncclCommDestroy(comms[d]));
        CHECK_BLAS(cublasDestroy(blas[d]));
    }
}

// --gemm-grid: one line per type and shape, "gemm TYPE m n k cpu wall".
static void gemm_grid(int batch, int batches)
{
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    const size_t big = (size_t)64 << 20;
    void *a, *c;
    CHECK(cudaMalloc(&a, big));
    CHECK(cudaMalloc(&c, big));
    CHECK(cudaMemset(a, 0, big));
    cublasHandle_t blas;
    CHECK_BLAS(cublasCreate(&blas));
    CHECK_BLAS(cublasSetStream(blas, s));
    auto sync = [&] { CHECK(cudaStreamSynchronize(s)); };
    std::printf("# api_cost --gemm-grid: us per cublasGemmEx call (thread CPU time, wall time), medians of %d batches "
                "of %d calls\n",
                batches, batch);
    const float one = 1, zero = 0;
    for (int tf32 = 1; tf32 >= 0; tf32--)
        for (int m = 128; m <= 4096; m *= 2)
            for (int n = 128; n <= 4096; n *= 2)
                for (int k = 128; k <= 4096; k *= 2) {
                    cudaDataType t = tf32 ? CUDA_R_32F : CUDA_R_16BF;
                    cublasComputeType_t ct = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
                    double cpu, wall;
                    cost_us(sync, batch, batches,
                            [&] {
                                CHECK_BLAS(cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a, t, m, a, t,
                                                        k, &zero, c, t, m, ct, CUBLAS_GEMM_DEFAULT));
                            },
                            &cpu, &wall);
                    std::printf("gemm %s %d %d %d %8.3f %8.3f\n", tf32 ? "tf32" : "bf16", m, n, k, cpu, wall);
                    std::fflush(stdout);
                }
    CHECK_BLAS(cublasDestroy(blas));
}

int main(int argc, char **argv)
{
    bool grid = argc > 1 && std::string(argv[1]) == "--gemm-grid";
    argc -= grid, argv += grid;
    int batch = argc > 1 ? std::atoi(argv[1]) : 256, batches = argc > 2 ? std::atoi(argv[2]) : 50;
    if (batch <= 0 || batches <= 0) {
        std::fprintf(stderr, "usage: api_cost [--gemm-grid] [BATCH [BATCHES]]\n");
        return 2;
    }
    if (grid) {
        gemm_grid(batch, batches);
        return 0;
    }
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    cudaEvent_t ev;
    CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    const size_t bytes = 4096, n = 128;
    void *a, *b;
    const size_t big = (size_t)64 << 20; // 4096 x 4096 floats: the largest tf32 GEMM's operands
    CHECK(cudaMalloc(&a, big));
    CHECK(cudaMalloc(&b, big));
    CHECK(cudaMemset(a, 0, big));
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
        {"cublasGemmEx (tf32, 128^3)", [&] { tf32_gemm(blas, 128, 128, 128, a, b); }},
        {"cublasGemmEx (tf32, 2048x256x2048)", [&] { tf32_gemm(blas, 2048, 256, 2048, a, b); }},
        {"cublasGemmEx (tf32, 4096x2048x4096)", [&] { tf32_gemm(blas, 4096, 2048, 4096, a, b); }},
        {"cudaMemsetAsync (32 MiB)", [&] { CHECK(cudaMemsetAsync(b, 0, (size_t)32 << 20, s)); }},
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
    std::printf("# api_cost: us per call (thread CPU time, wall time), medians of %d batches of %d calls\n", batches,
                batch);
    auto sync_s = [&] { CHECK(cudaStreamSynchronize(s)); };
    print_rows(rows, sync_s, batch, batches);
    two_device_rows(batch, batches);
    CHECK_NCCL(ncclCommDestroy(comm));
    CHECK_BLAS(cublasDestroy(blas));
    return 0;
}
