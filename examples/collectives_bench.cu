// collectives_bench: every NCCL collective and Send/Recv, timed in the manner
// of nccl-tests.
//
// One process drives N GPUs (ncclCommInitAll). For one message size S (bytes,
// as nccl-tests counts it for each operation) it runs each operation, timed
// with std::chrono around enqueue + cudaStreamSynchronize, and prints one row:
//
//   op             S is             busbw = algbw × (algbw = S / time)
//   allreduce      the buffer       2(n−1)/n
//   allgather      the output       (n−1)/n       (each rank contributes S/n)
//   reducescatter  the input        (n−1)/n       (each rank receives S/n)
//   broadcast      the buffer       1
//   reduce         the buffer       1
//   alltoall       the input        (n−1)/n       (S/n to each rank)
//   sendrecv       the buffer       1             (rank r sends to r+1, receives from r−1)
//
// It is an ordinary CUDA + NCCL program: it runs unchanged on real GPUs, and
// under `hysim run` its clocks and results are the simulated cluster's.
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CUDA_CHECK(call)                                                                 \
    do {                                                                                 \
        cudaError_t err_ = (call);                                                       \
        if (err_ != cudaSuccess) {                                                       \
            std::fprintf(stderr, "collectives_bench: %s failed: %s (%s)\n", #call,       \
                         cudaGetErrorString(err_), cudaGetErrorName(err_));              \
            std::exit(1);                                                                \
        }                                                                                \
    } while (0)

#define NCCL_CHECK(call)                                                                 \
    do {                                                                                 \
        ncclResult_t res_ = (call);                                                      \
        if (res_ != ncclSuccess) {                                                       \
            std::fprintf(stderr, "collectives_bench: %s failed: %s\n", #call,            \
                         ncclGetErrorString(res_));                                      \
            std::exit(1);                                                                \
        }                                                                                \
    } while (0)

struct options {
    int gpus = 0; // 0: every visible GPU
    size_t bytes = 64u << 20;
    int iters = 5;
    int warmup = 1;
};

static void usage(FILE *out)
{
    std::fprintf(out,
                 "usage: collectives_bench [-g GPUS] [-b BYTES] [-n ITERS] [-w WARMUP]\n"
                 "  -g GPUS    GPUs driven by this process (default: all visible)\n"
                 "  -b BYTES   message size S; K, M, G suffixes (default 64M)\n"
                 "  -n ITERS   timed iterations per operation (default 5)\n"
                 "  -w WARMUP  untimed iterations per operation (default 1)\n");
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
    if (*end != '\0')
        return false;
    *out = (size_t)(value * scale);
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
        char *end = nullptr;
        long v = std::strtol(value, &end, 10);
        bool is_int = end != value && *end == '\0' && v >= 0 && v <= 1 << 20;
        bool ok = false;
        switch (flag[1]) {
        case 'g': ok = is_int && v >= 1; opt.gpus = (int)v; break;
        case 'b': ok = parse_size(value, &opt.bytes); break;
        case 'n': ok = is_int && v >= 1; opt.iters = (int)v; break;
        case 'w': ok = is_int; opt.warmup = (int)v; break;
        default: break;
        }
        if (!ok) {
            std::fprintf(stderr, "collectives_bench: bad value for %s: %s\n", flag, value);
            usage(stderr);
            std::exit(2);
        }
    }
    return opt;
}

struct gpu_state {
    float *send = nullptr;
    float *recv = nullptr;
    cudaStream_t stream = nullptr;
    ncclComm_t comm = nullptr;
};

enum op_kind { ALLREDUCE, ALLGATHER, REDUCESCATTER, BROADCAST, REDUCE, ALLTOALL, SENDRECV, NUM_OPS };
static const char *const op_names[NUM_OPS] = {"allreduce", "allgather", "reducescatter", "broadcast",
                                              "reduce",    "alltoall",  "sendrecv"};

// busbw / algbw for n ranks, as nccl-tests defines it
static double bus_factor(op_kind op, int n)
{
    switch (op) {
    case ALLREDUCE: return 2.0 * (n - 1) / n;
    case ALLGATHER: case REDUCESCATTER: case ALLTOALL: return (double)(n - 1) / n;
    default: return 1.0;
    }
}

// One operation on every GPU, in one group: count is S in floats.
static void run_op(op_kind op, std::vector<gpu_state> &gpus, size_t count)
{
    int n = (int)gpus.size();
    size_t share = count / (size_t)n;
    NCCL_CHECK(ncclGroupStart());
    for (int r = 0; r < n; r++) {
        gpu_state &g = gpus[(size_t)r];
        switch (op) {
        case ALLREDUCE:
            NCCL_CHECK(ncclAllReduce(g.send, g.recv, count, ncclFloat, ncclSum, g.comm, g.stream));
            break;
        case ALLGATHER:
            NCCL_CHECK(ncclAllGather(g.send, g.recv, share, ncclFloat, g.comm, g.stream));
            break;
        case REDUCESCATTER:
            NCCL_CHECK(ncclReduceScatter(g.send, g.recv, share, ncclFloat, ncclSum, g.comm, g.stream));
            break;
        case BROADCAST:
            NCCL_CHECK(ncclBroadcast(g.send, g.recv, count, ncclFloat, 0, g.comm, g.stream));
            break;
        case REDUCE:
            NCCL_CHECK(ncclReduce(g.send, g.recv, count, ncclFloat, ncclSum, 0, g.comm, g.stream));
            break;
        case ALLTOALL:
            NCCL_CHECK(ncclAlltoAll(g.send, g.recv, share, ncclFloat, g.comm, g.stream));
            break;
        case SENDRECV:
            NCCL_CHECK(ncclSend(g.send, count, ncclFloat, (r + 1) % n, g.comm, g.stream));
            NCCL_CHECK(ncclRecv(g.recv, count, ncclFloat, (r + n - 1) % n, g.comm, g.stream));
            break;
        default:
            break;
        }
    }
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
        std::fprintf(stderr, "collectives_bench: -g %d but only %d GPUs are visible\n", n, visible);
        return 2;
    }
    size_t count = opt.bytes / sizeof(float) / (size_t)n * (size_t)n; // a multiple of n floats
    if (count == 0) {
        std::fprintf(stderr, "collectives_bench: -b must hold at least %d floats\n", n);
        return 2;
    }
    size_t bytes = count * sizeof(float);
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("# collectives_bench: %d x %s, %zu bytes, float, %d iterations (%d warm-up)\n", n, prop.name,
                bytes, opt.iters, opt.warmup);

    std::vector<gpu_state> gpus((size_t)n);
    std::vector<int> devices((size_t)n);
    for (int g = 0; g < n; g++) {
        devices[(size_t)g] = g;
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaMalloc(&gpus[(size_t)g].send, bytes));
        CUDA_CHECK(cudaMalloc(&gpus[(size_t)g].recv, bytes));
        CUDA_CHECK(cudaMemset(gpus[(size_t)g].send, 0, bytes));
        CUDA_CHECK(cudaStreamCreateWithFlags(&gpus[(size_t)g].stream, cudaStreamNonBlocking));
    }
    std::vector<ncclComm_t> comms((size_t)n);
    NCCL_CHECK(ncclCommInitAll(comms.data(), n, devices.data()));
    for (int g = 0; g < n; g++)
        gpus[(size_t)g].comm = comms[(size_t)g];
    wait_all(gpus);

    std::printf("#%13s %14s %12s %12s %12s\n", "op", "size(B)", "time(us)", "algbw(GB/s)", "busbw(GB/s)");
    for (int k = 0; k < NUM_OPS; k++) {
        op_kind op = (op_kind)k;
        for (int i = 0; i < opt.warmup; i++)
            run_op(op, gpus, count);
        wait_all(gpus);
        auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < opt.iters; i++)
            run_op(op, gpus, count);
        wait_all(gpus);
        auto stop = std::chrono::steady_clock::now();
        double seconds = std::chrono::duration<double>(stop - start).count() / opt.iters;
        double algbw = (double)bytes / 1e9 / seconds;
        std::printf("%14s %14zu %12.2f %12.2f %12.2f\n", op_names[k], bytes, seconds * 1e6, algbw,
                    algbw * bus_factor(op, n));
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
