// multiprocess_allreduce: an NCCL all-reduce benchmark across processes, one
// process per server, each driving all the GPUs it sees.
//
// The processes form one communicator through ncclGetUniqueId, passed by the
// program itself through a file: process 0 writes the id to IDFILE (through a
// temporary name and rename, so a reader never sees half of it), the others
// poll for it. Each process then joins its GPUs with ncclCommInitRank inside
// ncclGroupStart/End, global rank = process × local GPUs + local GPU, and
// prints a table like allreduce_bench's (busbw = algbw × 2(n−1)/n).
//
// Which process am I: `-r RANK`, or else the first of the environment
// variables OMPI_COMM_WORLD_RANK (mpirun), RANK (torchrun-style launchers) and
// HYSIM_SERVER (`hysim run` starts the same command once per server and sets
// it). How many: `-N NPROCS`, or else OMPI_COMM_WORLD_SIZE or WORLD_SIZE.
// Every process must see the same number of GPUs.
//
//   hysim run scenarios/h200x16-2srv.yaml -- multiprocess_allreduce -N 2 -i /tmp/run1/id
//   (on real servers: multiprocess_allreduce -r 0 -N 2 -i /shared/id on one, -r 1 on the other)
//
// It is an ordinary CUDA + NCCL program: it runs unchanged on real GPUs.
#include <cuda_runtime.h>
#include <nccl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CUDA_CHECK(call)                                                                 \
    do {                                                                                 \
        cudaError_t err_ = (call);                                                       \
        if (err_ != cudaSuccess) {                                                       \
            std::fprintf(stderr, "multiprocess_allreduce: %s failed: %s (%s)\n", #call,  \
                         cudaGetErrorString(err_), cudaGetErrorName(err_));              \
            std::exit(1);                                                                \
        }                                                                                \
    } while (0)

#define NCCL_CHECK(call)                                                                 \
    do {                                                                                 \
        ncclResult_t res_ = (call);                                                      \
        if (res_ != ncclSuccess) {                                                       \
            std::fprintf(stderr, "multiprocess_allreduce: %s failed: %s\n", #call,       \
                         ncclGetErrorString(res_));                                      \
            std::exit(1);                                                                \
        }                                                                                \
    } while (0)

struct options {
    int rank = -1;
    int nprocs = -1;
    const char *idfile = nullptr;
    size_t min_bytes = 1 << 20;
    size_t max_bytes = 1 << 30;
    double factor = 2.0;
    int iters = 10;
    int warmup = 2;
};

static void usage(FILE *out)
{
    std::fprintf(out,
                 "usage: multiprocess_allreduce [-r RANK] [-N NPROCS] -i IDFILE [-b MIN] [-e MAX] [-f FACTOR]\n"
                 "                              [-n ITERS] [-w WARMUP]\n"
                 "  -r RANK    this process's index (default: $OMPI_COMM_WORLD_RANK, $RANK or $HYSIM_SERVER)\n"
                 "  -N NPROCS  processes (default: $OMPI_COMM_WORLD_SIZE or $WORLD_SIZE)\n"
                 "  -i IDFILE  file through which process 0 hands the NCCL unique id to the others\n"
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
    if (*end != '\0')
        return false;
    *out = (size_t)(value * scale);
    return true;
}

static bool parse_int(const char *text, int min, int *out)
{
    char *end = nullptr;
    long value = text ? std::strtol(text, &end, 10) : 0;
    if (!text || end == text || *end != '\0' || value < min || value > 1 << 20)
        return false;
    *out = (int)value;
    return true;
}

// The first of the variables that is set and a number ≥ min, or -1.
static int from_env(const char *const *names, int min)
{
    for (; *names; names++) {
        int v;
        if (parse_int(std::getenv(*names), min, &v))
            return v;
    }
    return -1;
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
        case 'r': ok = parse_int(value, 0, &opt.rank); break;
        case 'N': ok = parse_int(value, 1, &opt.nprocs); break;
        case 'i': opt.idfile = value; ok = *value != '\0'; break;
        case 'b': ok = parse_size(value, &opt.min_bytes); break;
        case 'e': ok = parse_size(value, &opt.max_bytes); break;
        case 'f': opt.factor = std::atof(value); ok = opt.factor > 1.0; break;
        case 'n': ok = parse_int(value, 1, &opt.iters); break;
        case 'w': ok = parse_int(value, 0, &opt.warmup); break;
        default: break;
        }
        if (!ok) {
            std::fprintf(stderr, "multiprocess_allreduce: bad value for %s: %s\n", flag, value);
            usage(stderr);
            std::exit(2);
        }
    }
    static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "RANK", "HYSIM_SERVER", nullptr};
    static const char *const size_vars[] = {"OMPI_COMM_WORLD_SIZE", "WORLD_SIZE", nullptr};
    if (opt.rank < 0)
        opt.rank = from_env(rank_vars, 0);
    if (opt.nprocs < 0)
        opt.nprocs = from_env(size_vars, 1);
    if (opt.rank < 0 || opt.nprocs < 1 || opt.rank >= opt.nprocs || !opt.idfile) {
        std::fprintf(stderr, "multiprocess_allreduce: need -i IDFILE and a process index below the process "
                             "count (-r/-N or their environment variables)\n");
        usage(stderr);
        std::exit(2);
    }
    if (opt.min_bytes > opt.max_bytes) {
        std::fprintf(stderr, "multiprocess_allreduce: -b must not exceed -e\n");
        std::exit(2);
    }
    return opt;
}

// Process 0 publishes the id; the others wait for it (up to about a minute).
static ncclUniqueId exchange_id(const options &opt)
{
    ncclUniqueId id;
    if (opt.rank == 0) {
        NCCL_CHECK(ncclGetUniqueId(&id));
        std::string tmp = std::string(opt.idfile) + ".tmp";
        FILE *f = std::fopen(tmp.c_str(), "wb");
        if (!f || std::fwrite(&id, sizeof id, 1, f) != 1 || std::fclose(f) != 0 ||
            std::rename(tmp.c_str(), opt.idfile) != 0) {
            std::perror("multiprocess_allreduce: writing the unique id");
            std::exit(1);
        }
        return id;
    }
    for (int tries = 0; tries < 60000; tries++) {
        FILE *f = std::fopen(opt.idfile, "rb");
        if (f) {
            size_t got = std::fread(&id, sizeof id, 1, f);
            std::fclose(f);
            if (got == 1)
                return id;
        }
        usleep(1000);
    }
    std::fprintf(stderr, "multiprocess_allreduce: no unique id in %s from process 0\n", opt.idfile);
    std::exit(1);
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
        NCCL_CHECK(ncclAllReduce(gpus[g].send, gpus[g].recv, count, ncclFloat, ncclSum, gpus[g].comm,
                                 gpus[g].stream));
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
    int local = 0;
    CUDA_CHECK(cudaGetDeviceCount(&local));
    int nranks = local * opt.nprocs;
    ncclUniqueId id = exchange_id(opt);

    std::vector<gpu_state> gpus((size_t)local);
    size_t max_count = opt.max_bytes / sizeof(float);
    for (int g = 0; g < local; g++) {
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaMalloc(&gpus[(size_t)g].send, max_count * sizeof(float)));
        CUDA_CHECK(cudaMalloc(&gpus[(size_t)g].recv, max_count * sizeof(float)));
        CUDA_CHECK(cudaMemset(gpus[(size_t)g].send, 0, max_count * sizeof(float)));
        CUDA_CHECK(cudaStreamCreateWithFlags(&gpus[(size_t)g].stream, cudaStreamNonBlocking));
    }
    NCCL_CHECK(ncclGroupStart());
    for (int g = 0; g < local; g++) {
        CUDA_CHECK(cudaSetDevice(g));
        NCCL_CHECK(ncclCommInitRank(&gpus[(size_t)g].comm, nranks, id, opt.rank * local + g));
    }
    NCCL_CHECK(ncclGroupEnd());
    wait_all(gpus);

    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    if (opt.rank == 0) {
        std::printf("# multiprocess_allreduce: %d processes x %d x %s = %d ranks, float sum, %d iterations "
                    "(%d warm-up)\n",
                    opt.nprocs, local, prop.name, nranks, opt.iters, opt.warmup);
        std::printf("#%13s %12s %6s %12s %12s %12s\n", "size(B)", "count", "type", "time(us)", "algbw(GB/s)",
                    "busbw(GB/s)");
    }
    for (double size = (double)opt.min_bytes; size <= (double)opt.max_bytes * 1.0000001; size *= opt.factor) {
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
        if (opt.rank == 0) {
            std::printf("%14zu %12zu %6s %12.2f %12.2f %12.2f\n", bytes, count, "float", seconds * 1e6, algbw,
                        algbw * 2.0 * (nranks - 1) / nranks);
            std::fflush(stdout);
        }
    }

    for (int g = 0; g < local; g++) {
        CUDA_CHECK(cudaSetDevice(g));
        NCCL_CHECK(ncclCommDestroy(gpus[(size_t)g].comm));
        CUDA_CHECK(cudaStreamDestroy(gpus[(size_t)g].stream));
        CUDA_CHECK(cudaFree(gpus[(size_t)g].send));
        CUDA_CHECK(cudaFree(gpus[(size_t)g].recv));
    }
    if (opt.rank == 0)
        std::remove(opt.idfile); // every rank has joined: the collectives above needed them all
    return 0;
}
