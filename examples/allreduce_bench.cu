// allreduce_bench: an NCCL all-reduce benchmark in the manner of nccl-tests.
//
// One process drives N GPUs (ncclCommInitAll), sweeps message sizes, and times
// each size with std::chrono around enqueue + cudaStreamSynchronize. It prints
// one row per size: bytes, time (µs), algbw and busbw (GB/s), where
// busbw = algbw × 2(n−1)/n as nccl-tests defines it for all-reduce.
//
// It is an ordinary CUDA + NCCL program: it runs unchanged on real GPUs, and
// under `hysim run` its clocks and results are the simulated cluster's.
#include <cuda_runtime.h>
#include <nccl.h>

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
};

static void usage(FILE *out)
{
    std::fprintf(out,
                 "usage: allreduce_bench [-g GPUS] [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP]\n"
                 "  -g GPUS    GPUs driven by this process (default: all visible)\n"
                 "  -b MIN     smallest message, bytes; K, M, G suffixes (default 1M)\n"
                 "  -e MAX     largest message (default 1G)\n"
                 "  -f FACTOR  size multiplier between rows (default 2)\n"
                 "  -n ITERS   timed iterations per size (default 10)\n"
                 "  -w WARMUP  untimed iterations per size (default 2)\n");
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
    std::printf("# allreduce_bench: %d x %s, NCCL %d, float sum, %d iterations (%d warm-up)\n", n,
                prop.name, nccl_version, opt.iters, opt.warmup);

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

    std::printf("#%13s %12s %6s %12s %12s %12s\n", "size(B)", "count", "type", "time(us)",
                "algbw(GB/s)", "busbw(GB/s)");
    for (double size = (double)opt.min_bytes; size <= (double)opt.max_bytes * 1.0000001;
         size *= opt.factor) {
        size_t count = (size_t)size / sizeof(float);
        if (count == 0)
            continue;
        size_t bytes = count * sizeof(float);
        for (int i = 0; i < opt.warmup; i++)
            run_allreduce(gpus, count);
        wait_all(gpus);

        auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < opt.iters; i++)
            run_allreduce(gpus, count);
        wait_all(gpus);
        auto stop = std::chrono::steady_clock::now();

        double seconds = std::chrono::duration<double>(stop - start).count() / opt.iters;
        double algbw = (double)bytes / 1e9 / seconds;
        double busbw = algbw * 2.0 * (n - 1) / n;
        std::printf("%14zu %12zu %6s %12.2f %12.2f %12.2f\n", bytes, count, "float", seconds * 1e6,
                    algbw, busbw);
        std::fflush(stdout);
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
