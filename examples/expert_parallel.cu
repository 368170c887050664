// expert_parallel: the forward pass of a stack of mixture-of-experts layers
// with expert parallelism, one process driving every visible GPU.
//
// Every GPU holds --tokens tokens and --experts-per-gpu experts (each a
// two-GEMM ReLU MLP); there are n × experts-per-gpu experts in all. A layer,
// as in GShard / Switch Transformer (top-1, fixed capacity):
//   route     gate logits = Wg·X (cublasGemmEx TF32); per token a softmax,
//             its best expert and that expert's probability, and a slot in
//             that expert's buffer of `capacity` tokens (own kernel; tokens
//             beyond the capacity are dropped and only take the residual)
//   dispatch  tokens copied to their slots, grouped by destination GPU (own
//             kernel), then exchanged with ncclAllToAll (or, --exchange
//             sendrecv, one grouped ncclSend/ncclRecv per peer)
//   experts   per local expert, both GEMMs over the slots received from every
//             GPU at once (cublasGemmStridedBatchedEx, one batch per source
//             GPU) with ReLU between (own kernel)
//   combine   results exchanged back (ncclAllToAll), then out = x + p·expert(x)
//             per token (own kernel)
// capacity = ceil(capacity-factor × tokens / experts), so the bytes of every
// exchange are fixed: experts-per-gpu × capacity × hidden × 4 per peer. Every
// step prints its time by CUDA events on GPU 0 and by the host clock and the
// tokens dropped (counted on the GPUs); the last line the mean step time
// without the first step.
//
//   expert_parallel [--gpus N] [--tokens T] [--hidden H] [--ffn F] [--experts-per-gpu E]
//                   [--layers L] [--capacity-factor C] [--steps S] [--exchange alltoall|sendrecv]
//
// It is an ordinary CUDA + cuBLAS + NCCL program: it runs unchanged on real GPUs.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <getopt.h>
#include <nccl.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "example_args.h"

#define CUDA_CHECK(call)                                                                             \
    do {                                                                                             \
        cudaError_t err_ = (call);                                                                   \
        if (err_ != cudaSuccess) {                                                                   \
            std::fprintf(stderr, "expert_parallel: %s failed: %s\n", #call, cudaGetErrorString(err_)); \
            std::exit(1);                                                                            \
        }                                                                                            \
    } while (0)
#define BLAS_CHECK(call)                                                                             \
    do {                                                                                             \
        cublasStatus_t st_ = (call);                                                                 \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                                          \
            std::fprintf(stderr, "expert_parallel: %s failed: status %d\n", #call, (int)st_);        \
            std::exit(1);                                                                            \
        }                                                                                            \
    } while (0)
#define NCCL_CHECK(call)                                                                             \
    do {                                                                                             \
        ncclResult_t res_ = (call);                                                                  \
        if (res_ != ncclSuccess) {                                                                   \
            std::fprintf(stderr, "expert_parallel: %s failed: %s\n", #call, ncclGetErrorString(res_)); \
            std::exit(1);                                                                            \
        }                                                                                            \
    } while (0)

struct options {
    int gpus = 0; // 0: all visible
    int tokens = 512;
    int hidden = 512;
    int ffn = 1024;
    int experts_per_gpu = 2;
    int layers = 2;
    double capacity_factor = 1.25;
    int steps = 6;
    bool sendrecv = false;
};

static void usage(FILE *f)
{
    std::fprintf(f,
                 "usage: expert_parallel [options]\n"
                 "  --gpus N                GPUs (default: all visible)\n"
                 "  --tokens T              tokens per GPU per step (default 512)\n"
                 "  --hidden H              model width (default 512)\n"
                 "  --ffn F                 inner width of an expert (default 1024)\n"
                 "  --experts-per-gpu E     experts on every GPU (default 2)\n"
                 "  --layers L              MoE layers (default 2)\n"
                 "  --capacity-factor C     expert capacity over an even split of the tokens (default 1.25)\n"
                 "  --steps S               steps (default 6)\n"
                 "  --exchange KIND         alltoall (ncclAllToAll, default) or sendrecv (grouped ncclSend/Recv)\n");
}

static options parse_options(int argc, char **argv)
{
    enum { GPUS = 1, TOKENS, HIDDEN, FFN, EPG, LAYERS, CF, STEPS, EXCHANGE, HELP };
    static const struct option longs[] = {
        {"gpus", required_argument, nullptr, GPUS},     {"tokens", required_argument, nullptr, TOKENS},
        {"hidden", required_argument, nullptr, HIDDEN}, {"ffn", required_argument, nullptr, FFN},
        {"experts-per-gpu", required_argument, nullptr, EPG}, {"layers", required_argument, nullptr, LAYERS},
        {"capacity-factor", required_argument, nullptr, CF}, {"steps", required_argument, nullptr, STEPS},
        {"exchange", required_argument, nullptr, EXCHANGE}, {"help", no_argument, nullptr, HELP},
        {nullptr, 0, nullptr, 0}};
    options o;
    bool bad_exchange = false;
    for (int c; (c = getopt_long(argc, argv, "h", longs, nullptr)) != -1;) {
        switch (c) {
        case GPUS: o.gpus = example_arg_int("expert_parallel", "--gpus", optarg, 0); break;
        case TOKENS: o.tokens = example_arg_int("expert_parallel", "--tokens", optarg, 1); break;
        case HIDDEN: o.hidden = example_arg_int("expert_parallel", "--hidden", optarg, 1); break;
        case FFN: o.ffn = example_arg_int("expert_parallel", "--ffn", optarg, 1); break;
        case EPG: o.experts_per_gpu = example_arg_int("expert_parallel", "--experts-per-gpu", optarg, 1); break;
        case LAYERS: o.layers = example_arg_int("expert_parallel", "--layers", optarg, 1); break;
        case CF: o.capacity_factor = example_arg_positive("expert_parallel", "--capacity-factor", optarg); break;
        case STEPS: o.steps = example_arg_int("expert_parallel", "--steps", optarg, 1); break;
        case EXCHANGE:
            o.sendrecv = !std::strcmp(optarg, "sendrecv");
            bad_exchange = !o.sendrecv && std::strcmp(optarg, "alltoall");
            break;
        case 'h':
        case HELP: usage(stdout); std::exit(0);
        default: usage(stderr); std::exit(2);
        }
    }
    if (optind != argc || bad_exchange || o.gpus < 0 || o.tokens < 1 || o.hidden < 1 || o.ffn < 1 ||
        o.experts_per_gpu < 1 || o.layers < 1 || !(o.capacity_factor > 0) || o.steps < 1) {
        std::fprintf(stderr, "expert_parallel: bad arguments (an option or a combination out of range, or an argument left over)\n");
        usage(stderr);
        std::exit(2);
    }
    return o;
}

// ---- kernels -------------------------------------------------------------

// A uniform number in [-1, 1) from (seed, index): splitmix64.
__device__ float hash_uniform(uint64_t seed, uint64_t i)
{
    uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

__global__ void fill_uniform(float *p, size_t n, float scale, uint64_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = scale * hash_uniform(seed, i);
}

// Top-1 routing, one thread per token: softmax over the E logits of column
// t, the best expert, its probability, and a slot in its buffer (−1: dropped).
__global__ void route(const float *logits, int experts, int tokens, int capacity, int *fill, int *slot,
                      float *prob, int *dropped)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= tokens)
        return;
    const float *z = logits + (size_t)t * experts;
    int best = 0;
    for (int e = 1; e < experts; e++)
        if (z[e] > z[best])
            best = e;
    float sum = 0.0f;
    for (int e = 0; e < experts; e++)
        sum += expf(z[e] - z[best]);
    int s = atomicAdd(&fill[best], 1);
    if (s < capacity) {
        slot[t] = best * capacity + s;
        prob[t] = 1.0f / sum;
    } else {
        slot[t] = -1;
        prob[t] = 0.0f;
        atomicAdd(dropped, 1);
    }
}

// Token t's column to its slot (slots are laid out expert-major, so by
// destination GPU); one block per token.
__global__ void dispatch(const float *x, const int *slot, float *out, int hidden)
{
    int t = blockIdx.x, s = slot[t];
    if (s < 0)
        return;
    for (int h = threadIdx.x; h < hidden; h += blockDim.x)
        out[(size_t)s * hidden + h] = x[(size_t)t * hidden + h];
}

__global__ void relu(float *y, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        y[i] = fmaxf(y[i], 0.0f);
}

// out = x + p·expert output (or x alone for a dropped token); one block per token.
__global__ void combine(const float *x, const float *expert_out, const int *slot, const float *prob, float *out,
                        int hidden)
{
    int t = blockIdx.x, s = slot[t];
    float p = prob[t];
    for (int h = threadIdx.x; h < hidden; h += blockDim.x) {
        size_t i = (size_t)t * hidden + h;
        out[i] = x[i] + (s >= 0 ? p * expert_out[(size_t)s * hidden + h] : 0.0f);
    }
}

static unsigned grid_for(size_t n)
{
    size_t blocks = (n + 255) / 256;
    return (unsigned)(blocks < 1024 ? blocks : 1024);
}

// ---- the model -----------------------------------------------------------

struct shape {
    int n, T, H, F, El, E, C; // GPUs, tokens, widths, experts per GPU / in all, capacity
    size_t per_peer;          // floats exchanged with every peer: El × C × H
};

struct rank_state {
    int dev = 0;
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    cublasHandle_t blas = nullptr;
    ncclComm_t nccl = nullptr;
    std::vector<float *> gate, w1, w2; // per layer: E × H; per layer and local expert: F × H, H × F
    float *x[2] = {nullptr, nullptr};  // H × T, ping-pong between layers
    float *logits = nullptr, *prob = nullptr, *send = nullptr, *recv = nullptr, *hid = nullptr,
          *expert_out = nullptr;
    int *fill = nullptr, *slot = nullptr, *dropped = nullptr;
};

template <typename T> static T *alloc(size_t n)
{
    T *p = nullptr;
    CUDA_CHECK(cudaMalloc(&p, n * sizeof(T)));
    return p;
}

static void setup(rank_state &r, const shape &s, const options &o, int rank)
{
    r.dev = rank;
    CUDA_CHECK(cudaSetDevice(rank));
    CUDA_CHECK(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&r.start));
    CUDA_CHECK(cudaEventCreate(&r.stop));
    BLAS_CHECK(cublasCreate(&r.blas));
    BLAS_CHECK(cublasSetStream(r.blas, r.stream));
    for (int l = 0; l < o.layers; l++) {
        float *g = alloc<float>((size_t)s.E * s.H);
        // the gate is the same on every GPU; the experts are this GPU's own
        fill_uniform<<<grid_for((size_t)s.E * s.H), 256, 0, r.stream>>>(g, (size_t)s.E * s.H, sqrtf(3.0f / s.H),
                                                                        10 + l);
        r.gate.push_back(g);
        for (int j = 0; j < s.El; j++) {
            uint64_t seed = 1000 + ((uint64_t)l * s.E + (uint64_t)rank * s.El + j) * 2;
            float *a = alloc<float>((size_t)s.F * s.H), *b = alloc<float>((size_t)s.H * s.F);
            fill_uniform<<<grid_for((size_t)s.F * s.H), 256, 0, r.stream>>>(a, (size_t)s.F * s.H,
                                                                            sqrtf(6.0f / s.H), seed);
            fill_uniform<<<grid_for((size_t)s.H * s.F), 256, 0, r.stream>>>(b, (size_t)s.H * s.F,
                                                                            sqrtf(3.0f / s.F), seed + 1);
            r.w1.push_back(a);
            r.w2.push_back(b);
        }
    }
    for (float *&x : r.x)
        x = alloc<float>((size_t)s.H * s.T);
    r.logits = alloc<float>((size_t)s.E * s.T);
    r.prob = alloc<float>(s.T);
    r.slot = alloc<int>(s.T);
    r.fill = alloc<int>(s.E);
    r.dropped = alloc<int>(1);
    r.send = alloc<float>(s.per_peer * s.n);
    r.recv = alloc<float>(s.per_peer * s.n);
    r.expert_out = alloc<float>(s.per_peer * s.n);
    r.hid = alloc<float>((size_t)s.F * s.C * s.n);
    CUDA_CHECK(cudaGetLastError());
}

// Chunk p of every GPU's `from` to GPU p's `to`, at chunk (the sender's
// index). With sendrecv, a GPU's chunk for itself is a local copy.
static void exchange(std::vector<rank_state> &ranks, const shape &s, bool sendrecv, float *rank_state::*from,
                     float *rank_state::*to)
{
    for (size_t i = 0; sendrecv && i < ranks.size(); i++) {
        rank_state &r = ranks[i];
        CUDA_CHECK(cudaSetDevice(r.dev));
        CUDA_CHECK(cudaMemcpyAsync(r.*to + i * s.per_peer, r.*from + i * s.per_peer, s.per_peer * sizeof(float),
                                   cudaMemcpyDeviceToDevice, r.stream));
    }
    NCCL_CHECK(ncclGroupStart());
    for (size_t i = 0; i < ranks.size(); i++) {
        rank_state &r = ranks[i];
        if (!sendrecv) {
            NCCL_CHECK(ncclAlltoAll(r.*from, r.*to, s.per_peer, ncclFloat, r.nccl, r.stream));
            continue;
        }
        for (int peer = 0; peer < s.n; peer++) {
            if (peer == (int)i)
                continue;
            NCCL_CHECK(ncclSend(r.*from + peer * s.per_peer, s.per_peer, ncclFloat, peer, r.nccl, r.stream));
            NCCL_CHECK(ncclRecv(r.*to + peer * s.per_peer, s.per_peer, ncclFloat, peer, r.nccl, r.stream));
        }
    }
    NCCL_CHECK(ncclGroupEnd());
}

static void route_and_dispatch(rank_state &r, const shape &s, int l, const float *x)
{
    CUDA_CHECK(cudaSetDevice(r.dev));
    const float one = 1.0f, zero = 0.0f;
    // logits (E × T) = gate (E × H) · x (H × T)
    BLAS_CHECK(cublasGemmEx(r.blas, CUBLAS_OP_N, CUBLAS_OP_N, s.E, s.T, s.H, &one, r.gate[l], CUDA_R_32F, s.E, x,
                            CUDA_R_32F, s.H, &zero, r.logits, CUDA_R_32F, s.E, CUBLAS_COMPUTE_32F_FAST_TF32,
                            CUBLAS_GEMM_DEFAULT));
    CUDA_CHECK(cudaMemsetAsync(r.fill, 0, s.E * sizeof(int), r.stream));
    CUDA_CHECK(cudaMemsetAsync(r.send, 0, s.per_peer * s.n * sizeof(float), r.stream));
    route<<<(s.T + 127) / 128, 128, 0, r.stream>>>(r.logits, s.E, s.T, s.C, r.fill, r.slot, r.prob, r.dropped);
    dispatch<<<s.T, 128, 0, r.stream>>>(x, r.slot, r.send, s.H);
    CUDA_CHECK(cudaGetLastError());
}

// Every local expert on the slots received from all GPUs: recv holds, per
// source GPU, El blocks of C tokens; one strided batch per source.
static void run_experts(rank_state &r, const shape &s, int l)
{
    CUDA_CHECK(cudaSetDevice(r.dev));
    const float one = 1.0f, zero = 0.0f;
    const long long peer_stride = (long long)s.per_peer, hid_stride = (long long)s.F * s.C;
    for (int j = 0; j < s.El; j++) {
        const float *in = r.recv + (size_t)j * s.C * s.H;
        float *out = r.expert_out + (size_t)j * s.C * s.H;
        BLAS_CHECK(cublasGemmStridedBatchedEx(r.blas, CUBLAS_OP_N, CUBLAS_OP_N, s.F, s.C, s.H, &one,
                                              r.w1[l * s.El + j], CUDA_R_32F, s.F, 0, in, CUDA_R_32F, s.H,
                                              peer_stride, &zero, r.hid, CUDA_R_32F, s.F, hid_stride, s.n,
                                              CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
        size_t nh = (size_t)s.F * s.C * s.n;
        relu<<<grid_for(nh), 256, 0, r.stream>>>(r.hid, nh);
        BLAS_CHECK(cublasGemmStridedBatchedEx(r.blas, CUBLAS_OP_N, CUBLAS_OP_N, s.H, s.C, s.F, &one,
                                              r.w2[l * s.El + j], CUDA_R_32F, s.H, 0, r.hid, CUDA_R_32F, s.F,
                                              hid_stride, &zero, out, CUDA_R_32F, s.H, peer_stride, s.n,
                                              CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
    }
    CUDA_CHECK(cudaGetLastError());
}

int main(int argc, char **argv)
{
    options o = parse_options(argc, argv);
    int visible = 0;
    CUDA_CHECK(cudaGetDeviceCount(&visible));
    int n = o.gpus ? o.gpus : visible;
    if (n > visible || n < 1) {
        std::fprintf(stderr, "expert_parallel: %d GPUs asked for, %d visible\n", n, visible);
        return 2;
    }
    shape s;
    s.n = n, s.T = o.tokens, s.H = o.hidden, s.F = o.ffn, s.El = o.experts_per_gpu, s.E = n * o.experts_per_gpu;
    s.C = (int)std::ceil(o.capacity_factor * s.T / s.E);
    s.per_peer = (size_t)s.El * s.C * s.H;
    std::printf("# expert_parallel: %d GPU(s) x %d expert(s) (%d -> %d -> %d), %d MoE layer(s), %d tokens per GPU, "
                "capacity %d, %.2f MiB per GPU per exchange, %s\n",
                n, s.El, s.H, s.F, s.H, o.layers, s.T, s.C, s.per_peer * s.n * 4.0 / 1048576.0,
                o.sendrecv ? "grouped ncclSend/ncclRecv" : "ncclAlltoAll");

    std::vector<rank_state> ranks(n);
    for (int i = 0; i < n; i++)
        setup(ranks[i], s, o, i);
    std::vector<ncclComm_t> comms(n);
    NCCL_CHECK(ncclCommInitAll(comms.data(), n, nullptr));
    for (int i = 0; i < n; i++)
        ranks[i].nccl = comms[i];
    int *dropped_host = nullptr;
    CUDA_CHECK(cudaMallocHost(&dropped_host, n * sizeof(int)));

    double total_ms = 0.0;
    for (int step = 0; step < o.steps; step++) {
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < n; i++) {
            rank_state &r = ranks[i];
            CUDA_CHECK(cudaSetDevice(r.dev));
            CUDA_CHECK(cudaEventRecord(r.start, r.stream));
            CUDA_CHECK(cudaMemsetAsync(r.dropped, 0, sizeof(int), r.stream));
            size_t nx = (size_t)s.H * s.T;
            fill_uniform<<<grid_for(nx), 256, 0, r.stream>>>(r.x[0], nx, sqrtf(3.0f),
                                                             ((uint64_t)step << 20) + (uint64_t)i + 1);
        }
        for (int l = 0; l < o.layers; l++) {
            const int in = l % 2;
            for (rank_state &r : ranks)
                route_and_dispatch(r, s, l, r.x[in]);
            exchange(ranks, s, o.sendrecv, &rank_state::send, &rank_state::recv);
            for (rank_state &r : ranks)
                run_experts(r, s, l);
            exchange(ranks, s, o.sendrecv, &rank_state::expert_out, &rank_state::send);
            for (rank_state &r : ranks) {
                CUDA_CHECK(cudaSetDevice(r.dev));
                combine<<<s.T, 128, 0, r.stream>>>(r.x[in], r.send, r.slot, r.prob, r.x[1 - in], s.H);
                CUDA_CHECK(cudaGetLastError());
            }
        }
        for (int i = 0; i < n; i++) {
            rank_state &r = ranks[i];
            CUDA_CHECK(cudaSetDevice(r.dev));
            CUDA_CHECK(cudaMemcpyAsync(dropped_host + i, r.dropped, sizeof(int), cudaMemcpyDeviceToHost, r.stream));
            CUDA_CHECK(cudaEventRecord(r.stop, r.stream));
        }
        for (rank_state &r : ranks)
            CUDA_CHECK(cudaEventSynchronize(r.stop));
        auto t1 = std::chrono::steady_clock::now();
        float gpu_ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&gpu_ms, ranks[0].start, ranks[0].stop));
        double host_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
        long dropped = 0;
        for (int i = 0; i < n; i++)
            dropped += dropped_host[i];
        std::printf("step %3d  dropped %ld of %ld token-layers  gpu %.3f ms  host %.3f ms\n", step, dropped,
                    (long)s.T * n * o.layers, gpu_ms, host_ms);
        if (step > 0 || o.steps == 1)
            total_ms += host_ms;
    }
    int timed = o.steps > 1 ? o.steps - 1 : 1;
    double mean_ms = total_ms / timed;
    std::printf("expert_parallel: %d GPU(s), mean step %.3f ms over %d step(s), %.0f tokens/s\n", n, mean_ms, timed,
                mean_ms > 0 ? (double)s.T * n * 1e3 / mean_ms : 0.0);

    for (rank_state &r : ranks) {
        CUDA_CHECK(cudaSetDevice(r.dev));
        NCCL_CHECK(ncclCommDestroy(r.nccl));
        BLAS_CHECK(cublasDestroy(r.blas));
        for (auto *list : {&r.gate, &r.w1, &r.w2})
            for (float *p : *list)
                CUDA_CHECK(cudaFree(p));
        for (float *p : {r.x[0], r.x[1], r.logits, r.prob, r.send, r.recv, r.hid, r.expert_out})
            CUDA_CHECK(cudaFree(p));
        for (int *p : {r.fill, r.slot, r.dropped})
            CUDA_CHECK(cudaFree(p));
        CUDA_CHECK(cudaEventDestroy(r.start));
        CUDA_CHECK(cudaEventDestroy(r.stop));
        CUDA_CHECK(cudaStreamDestroy(r.stream));
    }
    CUDA_CHECK(cudaFreeHost(dropped_host));
    return 0;
}
