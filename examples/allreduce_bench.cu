// allreduce_bench: an NCCL all-reduce benchmark in the manner of nccl-tests.
//
// One process drives N GPUs (ncclCommInitAll), sweeps message sizes, and times
// each size with std::chrono around enqueue + cudaStreamSynchronize. It prints
// one row per size: bytes, time (µs), algbw and busbw (GB/s), where
// busbw = algbw × 2(n−1)/n as nccl-tests defines it for all-reduce.
//
// With -t 1 it drives each GPU from a thread of its own instead, as nccl-tests
// -t does: each thread joins the communicator with ncclCommInitRank and, per
// size, meets the others in a barrier (a mutex and a condition variable, as
// nccl-tests' Barrier()) before and after its timed iterations; thread 0's
// clock between the two barriers gives the row.
//
// It is an ordinary CUDA + NCCL program: it runs unchanged on real GPUs, and
// under `hysim run` its clocks and results are the simulated cluster's.
#include <cuda_runtime.h>
#include <nccl.h>

#include <pthread.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CUDA_CHECK(call)                                                                 \
    do {                                                                                 \
        cudaError_t err_ = (call);                                                       \
        if (err_ != cudaSuccess) {                                                       \
            std::fprintf(stderr, "allreduce_bench: %s failed: %s (%s)\n", #call,         \
                         cudaGetErrorString(err_), cudaGetErrorName(err_));              \
            std::exit(1);                                                                \
        }                                                                                \
    } while (0)

#define NCCL_CHECK(call)                                                                 \
    do {                                                                                 \
        ncclResult_t res_ = (call);                                                      \
        if (res_ != ncclSuccess) {                                                       \
            std::fprintf(stderr, "allreduce_bench: %s failed: %s\n", #call,              \
                         ncclGetErrorString(res_));                                      \
            std::exit(1);                                                                \
        }                                                                                \
    } while (0)

// Fills a buffer so that the reduction has defined input on a real GPU.
__global__ void fill_kernel(float *buf, size_t count, float value)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    for (; i < count; i += (size_t)gridDim.x * blockDim.x)
        buf[i] = value;
}

struct options {
    int gpus = 0; // 0: every visible GPU
    size_t min_bytes = 1 << 20;
    size_t max_bytes = 1 << 30;
    double factor = 2.0;
    int iters = 10;
    int warmup = 2;
    int threads = 0; // 1: one thread per GPU
};

static void usage(FILE *out)
{
    std::fprintf(out,
                 "usage: allreduce_bench [-g GPUS] [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP] [-t 0|1]\n"
                 "  -g GPUS    GPUs driven by this process (default: all visible)\n"
                 "  -b MIN     smallest message, bytes; K, M, G suffixes (default 1M)\n"
                 "  -e MAX     largest message (default 1G)\n"
                 "  -f FACTOR  size multiplier between rows (default 2)\n"
                 "  -n ITERS   timed iterations per size (default 10)\n"
                 "  -w WARMUP  untimed iterations per size (default 2)\n"
                 "  -t 1       one thread per GPU (ncclCommInitRank, a barrier around each size's\n"
                 "             timed iterations), as nccl-tests -t; 0: one thread drives all (default)\n");
}

static bool parse_size(const char *text, size_t *out)
{
    char *end = nullptr;
    double value = std::strtod(text, &end);
    if (end == text || value <= 0)
        return false;
    double scale = 1;
    switch (*end) {
    case 'K': case 'k': scale = 1024.0; end++; break;
    case 'M': case 'm': scale = 1024.0 * 1024; end++; break;
    case 'G': case 'g': scale = 1024.0 * 1024 * 1024; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end != '\0')
        return false;
    *out = (size_t)(value * scale);
    return true;
}

static bool parse_int(const char *text, int min, int *out)
{
    char *end = nullptr;
    long value = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || value < min || value > 1 << 20)
        return false;
    *out = (int)value;
    return true;
}

static options parse_options(int argc, char **argv)
{
    options opt;
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i];
        if (!std::strcmp(flag, "-h") || !std::strcmp(flag, "--help")) {
            usage(stdout);
            std::exit(0);
        }
        if (i + 1 >= argc || flag[0] != '-' || std::strlen(flag) != 2) {
            usage(stderr);
            std::exit(2);
        }
        const char *value = argv[++i];
        bool ok = false;
        switch (flag[1]) {
        case 'g': ok = parse_int(value, 1, &opt.gpus); break;
        case 'b': ok = parse_size(value, &opt.min_bytes); break;
        case 'e': ok = parse_size(value, &opt.max_bytes); break;
        case 'f': opt.factor = std::atof(value); ok = opt.factor > 1.0; break;
        case 'n': ok = parse_int(value, 1, &opt.iters); break;
        case 'w': ok = parse_int(value, 0, &opt.warmup); break;
        case 't': ok = parse_int(value, 0, &opt.threads) && opt.threads <= 1; break;
        default: break;
        }
        if (!ok) {
            std::fprintf(stderr, "allreduce_bench: bad value for %s: %s\n", flag, value);
            usage(stderr);
            std::exit(2);
        }
    }
    if (opt.min_bytes > opt.max_bytes) {
        std::fprintf(stderr, "allreduce_bench: -b must not exceed -e\n");
        std::exit(2);
    }
    return opt;
}

struct gpu_state {
    float *send = nullptr;
    float *recv = nullptr;
    cudaStream_t stream = nullptr;
    ncclComm_t comm = nullptr;
};

static void run_allreduce(std::vector<gpu_state> &gpus, size_t count)
{
    NCCL_CHECK(ncclGroupStart());
    for (size_t g = 0; g < gpus.size(); g++)
        NCCL_CHECK(ncclAllReduce(gpus[g].send, gpus[g].recv, count, ncclFloat, ncclSum,
                                 gpus[g].comm, gpus[g].stream));
    NCCL_CHECK(ncclGroupEnd());
}

static void wait_all(std::vector<gpu_state> &gpus)
{
    for (size_t g = 0; g < gpus.size(); g++) {
        CUDA_CHECK(cudaSetDevice((int)g));
        CUDA_CHECK(cudaStreamSynchronize(gpus[g].stream));
    }
}

// nccl-tests' Barrier(): two alternating epochs, the last thread in wakes the others.
struct barrier_state {
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
    int counter[2] = {0, 0};
    int nthreads = 0;
};

static void barrier(barrier_state &b, int &epoch)
{
    pthread_mutex_lock(&b.lock);
    int e = epoch;
    if (++b.counter[e] == b.nthreads) {
        b.counter[e ^ 1] = 0; // the next epoch starts empty
        pthread_cond_broadcast(&b.cond);
    } else {
        while (b.counter[e] != b.nthreads)
            pthread_cond_wait(&b.cond, &b.lock);
    }
    pthread_mutex_unlock(&b.lock);
    epoch ^= 1;
}

struct thread_args {
    int gpu = 0, n = 0;
    const options *opt = nullptr;
    ncclUniqueId id;
    barrier_state *bar = nullptr;
    std::vector<double> *seconds = nullptr; // thread 0's time per size
};

// The element counts of the rows: -b, times -f each row, up to -e (a row of no whole float left out).
static std::vector<size_t> sizes_of(const options &opt)
{
    std::vector<size_t> counts;
    for (double size = (double)opt.min_bytes; size <= (double)opt.max_bytes * 1.0000001; size *= opt.factor)
        if ((size_t)size / sizeof(float) > 0)
            counts.push_back((size_t)size / sizeof(float));
    return counts;
}

// One GPU's thread: joins the communicator, then per size warm-up, barrier, timed iterations, barrier.
static void *gpu_thread(void *arg)
{
    thread_args &a = *(thread_args *)arg;
    const options &opt = *a.opt;
    gpu_state st;
    size_t max_count = opt.max_bytes / sizeof(float);
    CUDA_CHECK(cudaSetDevice(a.gpu));
    CUDA_CHECK(cudaMalloc(&st.send, max_count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&st.recv, max_count * sizeof(float)));
    CUDA_CHECK(cudaStreamCreateWithFlags(&st.stream, cudaStreamNonBlocking));
    fill_kernel<<<1024, 256, 0, st.stream>>>(st.send, max_count, 1.0f);
    CUDA_CHECK(cudaGetLastError());
    int epoch = 0;
    // Every thread has issued GPU work before any waits for the GPU: under hysim a thread that has not
    // issued any yet is not known, so the simulation could pass its time (README.md, "Threads").
    barrier(*a.bar, epoch);
    NCCL_CHECK(ncclCommInitRank(&st.comm, a.n, a.id, a.gpu));
    CUDA_CHECK(cudaStreamSynchronize(st.stream));
    for (size_t count : sizes_of(opt)) {
        for (int i = 0; i < opt.warmup; i++)
            NCCL_CHECK(ncclAllReduce(st.send, st.recv, count, ncclFloat, ncclSum, st.comm, st.stream));
        CUDA_CHECK(cudaStreamSynchronize(st.stream));
        barrier(*a.bar, epoch);
        auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < opt.iters; i++)
            NCCL_CHECK(ncclAllReduce(st.send, st.recv, count, ncclFloat, ncclSum, st.comm, st.stream));
        CUDA_CHECK(cudaStreamSynchronize(st.stream));
        barrier(*a.bar, epoch);
        auto stop = std::chrono::steady_clock::now();
        if (a.gpu == 0)
            a.seconds->push_back(std::chrono::duration<double>(stop - start).count() / opt.iters);
    }
    NCCL_CHECK(ncclCommDestroy(st.comm));
    CUDA_CHECK(cudaStreamDestroy(st.stream));
    CUDA_CHECK(cudaFree(st.send));
    CUDA_CHECK(cudaFree(st.recv));
    return nullptr;
}

static void print_row(size_t count, double seconds, int n)
{
    size_t bytes = count * sizeof(float);
    double algbw = (double)bytes / 1e9 / seconds;
    double busbw = algbw * 2.0 * (n - 1) / n;
    std::printf("%14zu %12zu %6s %12.2f %12.2f %12.2f\n", bytes, count, "float", seconds * 1e6, algbw, busbw);
    std::fflush(stdout);
}

// -t 1: one thread per GPU; rows printed once every size has run.
static int run_threads(const options &opt, int n)
{
    ncclUniqueId id;
    NCCL_CHECK(ncclGetUniqueId(&id));
    barrier_state bar;
    bar.nthreads = n;
    std::vector<double> seconds;
    std::vector<thread_args> args((size_t)n);
    std::vector<pthread_t> threads((size_t)n);
    for (int g = 0; g < n; g++) {
        args[(size_t)g].gpu = g;
        args[(size_t)g].n = n;
        args[(size_t)g].opt = &opt;
        args[(size_t)g].id = id;
        args[(size_t)g].bar = &bar;
        args[(size_t)g].seconds = &seconds;
        if (pthread_create(&threads[(size_t)g], nullptr, gpu_thread, &args[(size_t)g]) != 0) {
            std::fprintf(stderr, "allreduce_bench: pthread_create failed\n");
            return 1;
        }
    }
    for (int g = 0; g < n; g++)
        pthread_join(threads[(size_t)g], nullptr);
    std::vector<size_t> counts = sizes_of(opt);
    for (size_t i = 0; i < counts.size() && i < seconds.size(); i++)
        print_row(counts[i], seconds[i], n);
    return 0;
}

int main(int argc, char **argv)
{
    options opt = parse_options(argc, argv);

    int visible = 0;
    CUDA_CHECK(cudaGetDeviceCount(&visible));
    int n = opt.gpus ? opt.gpus : visible;
    if (n > visible) {
        std::fprintf(stderr, "allreduce_bench: -g %d but only %d GPUs are visible\n", n, visible);
        return 2;
    }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    int nccl_version = 0;
    NCCL_CHECK(ncclGetVersion(&nccl_version));
    std::printf("# allreduce_bench: %d x %s, NCCL %d, float sum, %d iterations (%d warm-up)%s\n", n,
                prop.name, nccl_version, opt.iters, opt.warmup, opt.threads ? ", one thread per GPU" : "");
    std::printf("#%13s %12s %6s %12s %12s %12s\n", "size(B)", "count", "type", "time(us)", "algbw(GB/s)",
                "busbw(GB/s)");
    if (opt.threads)
        return run_threads(opt, n);

    std::vector<gpu_state> gpus((size_t)n);
    std::vector<int> devices((size_t)n);
    size_t max_count = opt.max_bytes / sizeof(float);
    for (int g = 0; g < n; g++) {
        devices[(size_t)g] = g;
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaMalloc(&gpus[(size_t)g].send, max_count * sizeof(float)));
        CUDA_CHECK(cudaMalloc(&gpus[(size_t)g].recv, max_count * sizeof(float)));
        CUDA_CHECK(cudaStreamCreateWithFlags(&gpus[(size_t)g].stream, cudaStreamNonBlocking));
        fill_kernel<<<1024, 256, 0, gpus[(size_t)g].stream>>>(gpus[(size_t)g].send, max_count, 1.0f);
        CUDA_CHECK(cudaGetLastError());
    }
    std::vector<ncclComm_t> comms((size_t)n);
    NCCL_CHECK(ncclCommInitAll(comms.data(), n, devices.data()));
    for (int g = 0; g < n; g++)
        gpus[(size_t)g].comm = comms[(size_t)g];
    wait_all(gpus);

    for (size_t count : sizes_of(opt)) {
        for (int i = 0; i < opt.warmup; i++)
            run_allreduce(gpus, count);
        wait_all(gpus);

        auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < opt.iters; i++)
            run_allreduce(gpus, count);
        wait_all(gpus);
        auto stop = std::chrono::steady_clock::now();

        print_row(count, std::chrono::duration<double>(stop - start).count() / opt.iters, n);
    }

    for (int g = 0; g < n; g++) {
        CUDA_CHECK(cudaSetDevice(g));
        NCCL_CHECK(ncclCommDestroy(gpus[(size_t)g].comm));
        CUDA_CHECK(cudaStreamDestroy(gpus[(size_t)g].stream));
        CUDA_CHECK(cudaFree(gpus[(size_t)g].send));
        CUDA_CHECK(cudaFree(gpus[(size_t)g].recv));
    }
    return 0;
}
