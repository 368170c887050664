// mpi_allreduce_bench: an NCCL all-reduce benchmark launched by MPI the way
// multi-node NCCL benchmarks (nccl-tests with MPI) are: one mpirun for the
// whole job, one process per GPU (-g 1).
//
// Each rank finds its local rank as nccl-tests does, by counting the ranks
// before it whose host name hashes like its own, and uses that GPU; rank 0
// makes the NCCL unique id and MPI_Bcast hands it to the others; every rank
// joins with ncclCommInitRank. Rank 0 prints where each rank runs (host,
// local rank, GPU) and a table like allreduce_bench's (busbw = algbw ×
// 2(n−1)/n), timed around enqueue + cudaStreamSynchronize after MPI_Barrier.
//
//   mpirun -np 16 -H node0:8,node1:8 ./mpi_allreduce_bench -g 1 -b 1M -e 1G
//   hysim run scenarios/h200x16-2srv.yaml -- mpirun -np 16 ./mpi_allreduce_bench -g 1
//
// It is an ordinary MPI + CUDA + NCCL program: it runs unchanged on real GPUs.
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(ok, ...)                                                                   \
    do {                                                                                 \
        if (!(ok)) {                                                                     \
            std::fprintf(stderr, "mpi_allreduce_bench: " __VA_ARGS__);                   \
            std::fputc('\n', stderr);                                                    \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                \
        }                                                                                \
    } while (0)
#define CUDA_CHECK(call)                                                                 \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        CHECK(e_ == cudaSuccess, "%s failed: %s", #call, cudaGetErrorString(e_));        \
    } while (0)
#define NCCL_CHECK(call)                                                                 \
    do {                                                                                 \
        ncclResult_t r_ = (call);                                                        \
        CHECK(r_ == ncclSuccess, "%s failed: %s", #call, ncclGetErrorString(r_));        \
    } while (0)

static size_t parse_size(const char *text)
{
    char *end = nullptr;
    double v = std::strtod(text, &end);
    size_t scale = 1;
    if (*end == 'K' || *end == 'k')
        scale = 1ull << 10;
    else if (*end == 'M' || *end == 'm')
        scale = 1ull << 20;
    else if (*end == 'G' || *end == 'g')
        scale = 1ull << 30;
    return (size_t)(v * (double)scale);
}

// nccl-tests' getHostHash: djb2 of the host name up to its first '.'
static uint64_t host_hash(const char *name)
{
    uint64_t h = 5381;
    for (const char *p = name; *p && *p != '.'; p++)
        h = ((h << 5) + h) ^ (unsigned char)*p;
    return h;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    size_t min_bytes = 1 << 20, max_bytes = 64 << 20;
    int gpus = 1, iters = 10, warmup = 2, opt;
    while ((opt = getopt(argc, argv, "g:b:e:n:w:h")) != -1) {
        switch (opt) {
        case 'g': gpus = std::atoi(optarg); break;
        case 'b': min_bytes = parse_size(optarg); break;
        case 'e': max_bytes = parse_size(optarg); break;
        case 'n': iters = std::atoi(optarg); break;
        case 'w': warmup = std::atoi(optarg); break;
        default:
            if (rank == 0)
                std::fprintf(opt == 'h' ? stdout : stderr,
                             "usage: mpirun -np N mpi_allreduce_bench [-g 1] [-b MIN] [-e MAX] [-n ITERS] [-w WARMUP]\n");
            MPI_Finalize();
            return opt == 'h' ? 0 : 2;
        }
    }
    CHECK(gpus == 1, "-g %d: this benchmark drives one GPU per process (-g 1)", gpus);
    CHECK(min_bytes >= 4 && min_bytes <= max_bytes && iters > 0 && warmup >= 0, "bad sizes or counts");

    char host[256] = "";
    gethostname(host, sizeof host - 1);
    std::vector<uint64_t> hashes(nranks);
    uint64_t mine = host_hash(host);
    MPI_Allgather(&mine, 1, MPI_UINT64_T, hashes.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
    int local = 0;
    for (int r = 0; r < rank; r++)
        local += hashes[r] == mine;
    int devices = 0;
    CUDA_CHECK(cudaGetDeviceCount(&devices));
    CHECK(local < devices, "rank %d is local rank %d on %s, which has %d GPUs", rank, local, host, devices);
    CUDA_CHECK(cudaSetDevice(local));

    // where every rank runs, printed by rank 0
    char where[320];
    std::snprintf(where, sizeof where, "# rank %d: host %s, local rank %d, GPU %d", rank, host, local, local);
    std::vector<char> all(rank == 0 ? (size_t)nranks * sizeof where : 1);
    MPI_Gather(where, sizeof where, MPI_CHAR, all.data(), sizeof where, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int r = 0; r < nranks; r++)
            std::printf("%s\n", &all[(size_t)r * sizeof where]);

    ncclUniqueId id;
    if (rank == 0)
        NCCL_CHECK(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t comm;
    NCCL_CHECK(ncclCommInitRank(&comm, nranks, id, rank));
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    float *buf = nullptr;
    CUDA_CHECK(cudaMalloc(&buf, max_bytes));

    if (rank == 0) {
        std::printf("# mpi_allreduce_bench: %d ranks, one GPU each, float sum, %d iterations (%d warm-up)\n", nranks,
                    iters, warmup);
        std::printf("#%13s %12s %6s %12s %12s %12s\n", "size(B)", "count", "type", "time(us)", "algbw(GB/s)",
                    "busbw(GB/s)");
    }
    for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
        size_t count = bytes / sizeof(float);
        for (int i = 0; i < warmup; i++)
            NCCL_CHECK(ncclAllReduce(buf, buf, count, ncclFloat, ncclSum, comm, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        MPI_Barrier(MPI_COMM_WORLD);
        auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < iters; i++)
            NCCL_CHECK(ncclAllReduce(buf, buf, count, ncclFloat, ncclSum, comm, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / iters;
        double slowest = 0;
        MPI_Reduce(&us, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            double algbw = (double)bytes / (slowest * 1e3);
            std::printf("%14zu %12zu %6s %12.2f %12.2f %12.2f\n", bytes, count, "float", slowest, algbw,
                        algbw * 2.0 * (nranks - 1) / nranks);
        }
    }
    CUDA_CHECK(cudaFree(buf));
    NCCL_CHECK(ncclCommDestroy(comm));
    MPI_Finalize();
    return 0;
}
