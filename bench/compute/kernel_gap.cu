// kernel_gap: what a GPU spends between back-to-back kernels of one stream.
//
// A blocking kernel holds the stream while N copies of a kernel of known
// length are queued behind it, so the GPU, not the host, decides when each
// starts. CUDA events around the N kernels give the time per kernel as a
// program sees it (its run time plus the gap before it); on a real GPU each
// kernel also stamps its first start and last end (%globaltimer, atomics over
// its blocks), which gives its run time and the gap apart. The same queue is
// replayed as a CUDA graph, and a cuBLAS GEMM is queued the same way.
//
// On an idle GPU, a launch and a synchronize: the host time of the pair and,
// on a real GPU, where it goes: the host clock (CLOCK_REALTIME) is matched
// to %globaltimer by a kernel that keeps writing the timer to mapped host
// memory while the host reads it, which gives the time from the launch
// call's entry to the kernel's start, and from its end to the synchronize's
// return.
//
// Under hysim the kernels do not run: the stamps read zero and only the event
// times are printed, which are what hysim's timeline gives (with the kernels'
// lengths from a profile recorded on a real GPU, `hysim profile`).
//
// usage: kernel_gap [-n KERNELS]
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cudaError_t err_ = (call);                                                                 \
        if (err_ != cudaSuccess) {                                                                 \
            std::fprintf(stderr, "kernel_gap: %s failed: %s\n", #call, cudaGetErrorString(err_)); \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)
#define CHECK_BLAS(call)                                                            \
    do {                                                                            \
        cublasStatus_t st_ = (call);                                                \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                         \
            std::fprintf(stderr, "kernel_gap: %s failed: %d\n", #call, (int)st_); \
            std::exit(1);                                                           \
        }                                                                           \
    } while (0)

typedef unsigned long long u64;

__device__ static u64 now_ns()
{
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// One template instance per length, so that each length has its own name
// (and its own entry in a profile database).
template <int LENGTH_ID>
__global__ void spin(long long ns, u64 *first_start, u64 *last_end)
{
    u64 t0 = now_ns();
    if (threadIdx.x == 0 && first_start)
        atomicMin(first_start, t0);
    while (ns > 0 && (long long)(now_ns() - t0) < ns) {
    }
    __syncthreads();
    if (threadIdx.x == 0 && last_end)
        atomicMax(last_end, now_ns());
}

__global__ void blocker(long long ns)
{
    u64 t0 = now_ns();
    while ((long long)(now_ns() - t0) < ns) {
    }
}

// Keeps writing the GPU's clock to mapped host memory for `ns`.
__global__ void clock_to_host(long long ns, volatile u64 *out)
{
    u64 t0 = now_ns(), t;
    do {
        t = now_ns();
        *out = t;
        __threadfence_system();
    } while ((long long)(t - t0) < ns);
}

typedef void (*spin_fn)(long long, u64 *, u64 *);
static const spin_fn kSpin[] = {spin<0>, spin<1>, spin<2>, spin<3>};
static const long long kLengthNs[] = {0, 2000, 10000, 50000};
static const int kGrids[] = {1, 132, 1056};
static const int kThreads = 128;
static const long long kBlockNs = 4000000; // holds the stream while the host queues N launches
static bool g_kernels_run;                  // the stamps moved: a real GPU, not hysim

struct stamps {
    u64 *first, *last; // device, one per kernel
    std::vector<u64> h_first, h_last;
};

static void stamps_reset(stamps *s, int n)
{
    CHECK(cudaMemset(s->first, 0xff, n * sizeof(u64)));
    CHECK(cudaMemset(s->last, 0, n * sizeof(u64)));
}

// Mean run time and mean/median gap (ns) from the stamps; false when the
// kernels did not run (hysim) or the timer did not move.
static bool stamps_read(stamps *s, int n, double *run_ns, double *gap_mean_ns, double *gap_median_ns)
{
    s->h_first.resize(n);
    s->h_last.resize(n);
    CHECK(cudaMemcpy(s->h_first.data(), s->first, n * sizeof(u64), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(s->h_last.data(), s->last, n * sizeof(u64), cudaMemcpyDeviceToHost));
    if (s->h_last[0] == 0 || s->h_first[0] == ~0ULL)
        return false;
    g_kernels_run = true;
    double run = 0;
    std::vector<double> gaps;
    for (int i = 0; i < n; i++) {
        run += (double)(s->h_last[i] - s->h_first[i]);
        if (i > 0)
            gaps.push_back((double)(long long)(s->h_first[i] - s->h_last[i - 1]));
    }
    double sum = 0;
    for (double g : gaps)
        sum += g;
    std::sort(gaps.begin(), gaps.end());
    *run_ns = run / n;
    *gap_mean_ns = sum / (double)gaps.size();
    *gap_median_ns = gaps[gaps.size() / 2];
    return true;
}

static void launch_queue(cudaStream_t st, int len, int grid, int n, stamps *s)
{
    for (int i = 0; i < n; i++)
        kSpin[len]<<<grid, kThreads, 0, st>>>(kLengthNs[len], s->first + i, s->last + i);
}

// Event time per kernel of a queue that waits behind the blocker.
static double queued_us(cudaStream_t st, cudaEvent_t e0, cudaEvent_t e1, int len, int grid, int n, stamps *s,
                        cudaGraphExec_t graph)
{
    blocker<<<1, 32, 0, st>>>(kBlockNs);
    CHECK(cudaEventRecord(e0, st));
    if (graph)
        CHECK(cudaGraphLaunch(graph, st));
    else
        launch_queue(st, len, grid, n, s);
    CHECK(cudaEventRecord(e1, st));
    CHECK(cudaStreamSynchronize(st));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    return ms * 1000.0 / n;
}

static void print_row(const char *how, int len, int grid, double event_us, stamps *s, int n)
{
    double run, gap_mean, gap_median;
    if (stamps_read(s, n, &run, &gap_mean, &gap_median))
        std::printf("%-7s %9.1f %6d %14.3f %12.3f %13.3f %15.3f\n", how, kLengthNs[len] / 1000.0, grid, event_us,
                    run / 1000.0, gap_mean / 1000.0, gap_median / 1000.0);
    else
        std::printf("%-7s %9.1f %6d %14.3f %12s %13s %15s\n", how, kLengthNs[len] / 1000.0, grid, event_us, "-",
                    "-", "-");
}

static void spin_table(cudaStream_t st, int n)
{
    stamps s;
    CHECK(cudaMalloc(&s.first, n * sizeof(u64)));
    CHECK(cudaMalloc(&s.last, n * sizeof(u64)));
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    std::printf("%-7s %9s %6s %14s %12s %13s %15s\n", "queue", "spin_us", "grid", "event_us/kern", "run_us",
                "gap_mean_us", "gap_median_us");
    for (int len = 0; len < 4; len++)
        for (int grid : kGrids) {
            stamps_reset(&s, n);
            queued_us(st, e0, e1, len, grid, n, &s, nullptr); // warm-up
            stamps_reset(&s, n);
            print_row("stream", len, grid, queued_us(st, e0, e1, len, grid, n, &s, nullptr), &s, n);

            cudaGraph_t g;
            cudaGraphExec_t ge;
            CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
            launch_queue(st, len, grid, n, &s);
            CHECK(cudaStreamEndCapture(st, &g));
            CHECK(cudaGraphInstantiate(&ge, g, 0));
            stamps_reset(&s, n);
            queued_us(st, e0, e1, len, grid, n, &s, ge); // warm-up: the graph's first upload
            stamps_reset(&s, n);
            print_row("graph", len, grid, queued_us(st, e0, e1, len, grid, n, &s, ge), &s, n);
            CHECK(cudaGraphExecDestroy(ge));
            CHECK(cudaGraphDestroy(g));
        }
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
    CHECK(cudaFree(s.first));
    CHECK(cudaFree(s.last));
}

// bf16 GEMMs of size^3 queued behind the blocker: event time per call.
static void gemm_table(cudaStream_t st, int n)
{
    static const int kSizes[] = {1024, 2048, 4096};
    cublasHandle_t h;
    CHECK_BLAS(cublasCreate(&h));
    CHECK_BLAS(cublasSetStream(h, st));
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    int big = kSizes[2];
    void *a, *b, *c;
    CHECK(cudaMalloc(&a, (size_t)big * big * 2));
    CHECK(cudaMalloc(&b, (size_t)big * big * 2));
    CHECK(cudaMalloc(&c, (size_t)big * big * 2));
    CHECK(cudaMemset(a, 0, (size_t)big * big * 2));
    CHECK(cudaMemset(b, 0, (size_t)big * big * 2));
    std::printf("%-7s %9s %14s\n", "gemm", "size", "event_us/call");
    float alpha = 1, beta = 0;
    for (int size : kSizes) {
        for (int pass = 0; pass < 2; pass++) { // the first pass warms up
            blocker<<<1, 32, 0, st>>>(kBlockNs);
            CHECK(cudaEventRecord(e0, st));
            for (int i = 0; i < n; i++)
                CHECK_BLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, size, size, size, &alpha, a, CUDA_R_16BF, size,
                                        b, CUDA_R_16BF, size, &beta, c, CUDA_R_16BF, size, CUBLAS_COMPUTE_32F,
                                        CUBLAS_GEMM_DEFAULT));
            CHECK(cudaEventRecord(e1, st));
            CHECK(cudaStreamSynchronize(st));
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, e0, e1));
            if (pass == 1)
                std::printf("%-7s %9d %14.3f\n", "bf16", size, ms * 1000.0 / n);
        }
    }
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
    CHECK_BLAS(cublasDestroy(h));
}

// Host time of a launch and a synchronize on an idle GPU (median).
static void idle_round_trip(cudaStream_t st)
{
    const int trials = 200;
    std::vector<double> us;
    for (int i = 0; i < trials; i++) {
        timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        spin<0><<<1, kThreads, 0, st>>>(0, nullptr, nullptr);
        CHECK(cudaStreamSynchronize(st));
        clock_gettime(CLOCK_MONOTONIC, &t1);
        us.push_back((double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3);
    }
    std::sort(us.begin(), us.end());
    std::printf("idle launch + synchronize: median %.3f us, min %.3f us (%d trials)\n", us[trials / 2], us[0],
                trials);
}

static double realtime_ns()
{
    timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

// host CLOCK_REALTIME minus %globaltimer, plus the least time a GPU write
// takes to reach the host: the least (host time it was seen - its value).
static double clock_offset_ns(cudaStream_t st, volatile u64 *host_word, u64 *dev_word)
{
    *host_word = 0;
    clock_to_host<<<1, 1, 0, st>>>(2000000, (volatile u64 *)dev_word);
    double best = 1e30;
    u64 last = 0;
    while (cudaStreamQuery(st) == cudaErrorNotReady) {
        u64 v = *host_word;
        double h = realtime_ns();
        if (v != last && v != 0) {
            best = std::min(best, h - (double)v);
            last = v;
        }
    }
    CHECK(cudaStreamSynchronize(st));
    return best;
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Where an idle launch + synchronize goes, on a real GPU (medians, us).
static void idle_launch_latency(cudaStream_t st)
{
    u64 *host_word, *dev_word, *first, *last;
    CHECK(cudaHostAlloc(&host_word, sizeof(u64), cudaHostAllocMapped));
    CHECK(cudaHostGetDevicePointer((void **)&dev_word, host_word, 0));
    CHECK(cudaMalloc(&first, sizeof(u64)));
    CHECK(cudaMalloc(&last, sizeof(u64)));
    double off0 = clock_offset_ns(st, host_word, dev_word);
    std::vector<double> to_start, call, end_to_return;
    std::vector<double> entries, returns, sync_returns;
    std::vector<u64> starts, ends;
    for (int i = 0; i < 200; i++) {
        CHECK(cudaMemset(first, 0xff, sizeof(u64)));
        CHECK(cudaMemset(last, 0, sizeof(u64)));
        double t_entry = realtime_ns();
        spin<0><<<1, kThreads, 0, st>>>(0, first, last);
        double t_return = realtime_ns();
        CHECK(cudaStreamSynchronize(st));
        double t_sync = realtime_ns();
        u64 s, e;
        CHECK(cudaMemcpy(&s, first, sizeof s, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(&e, last, sizeof e, cudaMemcpyDeviceToHost));
        entries.push_back(t_entry);
        returns.push_back(t_return);
        sync_returns.push_back(t_sync);
        starts.push_back(s);
        ends.push_back(e);
    }
    double off1 = clock_offset_ns(st, host_word, dev_word);
    double off = std::min(off0, off1);
    for (size_t i = 0; i < entries.size(); i++) {
        to_start.push_back(((double)starts[i] + off - entries[i]) / 1000.0);
        call.push_back((returns[i] - entries[i]) / 1000.0);
        end_to_return.push_back((sync_returns[i] - ((double)ends[i] + off)) / 1000.0);
    }
    std::printf("idle launch, medians of 200: launch call %.3f us, call entry to kernel start %.3f us, "
                "kernel end to synchronize's return %.3f us (clock match %.3f us apart before and after)\n",
                median(call), median(to_start), median(end_to_return), std::abs(off1 - off0) / 1000.0);
    CHECK(cudaFreeHost(host_word));
    CHECK(cudaFree(first));
    CHECK(cudaFree(last));
}

int main(int argc, char **argv)
{
    int n = 200;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "-n") && i + 1 < argc) {
            n = std::atoi(argv[++i]);
        } else {
            std::fprintf(stderr, "usage: kernel_gap [-n KERNELS]\n");
            return 2;
        }
    }
    if (n < 2 || n > 800) { // more than the launch queue holds would make the host wait
        std::fprintf(stderr, "kernel_gap: -n must be 2..800\n");
        return 2;
    }
    cudaStream_t st;
    CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    spin_table(st, n);
    gemm_table(st, n / 4 > 2 ? n / 4 : 2);
    idle_round_trip(st);
    if (g_kernels_run)
        idle_launch_latency(st);
    CHECK(cudaStreamDestroy(st));
    return 0;
}
