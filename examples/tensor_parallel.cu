// tensor_parallel: Megatron-style tensor-parallel training of a stack of MLP
// blocks with sequence parallelism, one process driving every visible GPU.
//
// With n GPUs, every GPU holds 1/n of the tokens between blocks (its
// sequence shard, hidden × tokens/n) and 1/n of every block's weights: rows
// of W1 (ffn/n × hidden, column-parallel) and columns of W2 (hidden × ffn/n,
// row-parallel). A block, forward:
//   all-gather      the token shards into the full input X (ncclAllGather)
//   column-parallel Y = ReLU(W1ᵣ·X + b1ᵣ) (cublasGemmEx TF32, own kernel)
//   row-parallel    partial Z = W2ᵣ·Y (cublasGemmEx), summed and cut into
//                   token shards at once (ncclReduceScatter)
//   residual        out = x + Z + b2 (own kernel)
// and backward mirrors it: all-gather of the output gradient, the weight and
// input gradients of both GEMMs, reduce-scatter of the input gradient. The
// replicated b2 gradients are all-reduced at the end of backward, then Adam.
// The loss is 0.5·|out − Y|² on each token, mean over tokens, with targets
// from a fixed random linear "teacher" of the inputs, so it must go down.
// Every step prints the loss, the time by CUDA events on GPU 0 and by the
// host clock; the last line the mean step time without the first step.
//
//   tensor_parallel [--gpus N] [--tokens T] [--hidden H] [--ffn F] [--layers L]
//                   [--steps S] [--lr LR]
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
            std::fprintf(stderr, "tensor_parallel: %s failed: %s\n", #call, cudaGetErrorString(err_)); \
            std::exit(1);                                                                            \
        }                                                                                            \
    } while (0)
#define BLAS_CHECK(call)                                                                             \
    do {                                                                                             \
        cublasStatus_t st_ = (call);                                                                 \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                                          \
            std::fprintf(stderr, "tensor_parallel: %s failed: status %d\n", #call, (int)st_);        \
            std::exit(1);                                                                            \
        }                                                                                            \
    } while (0)
#define NCCL_CHECK(call)                                                                             \
    do {                                                                                             \
        ncclResult_t res_ = (call);                                                                  \
        if (res_ != ncclSuccess) {                                                                   \
            std::fprintf(stderr, "tensor_parallel: %s failed: %s\n", #call, ncclGetErrorString(res_)); \
            std::exit(1);                                                                            \
        }                                                                                            \
    } while (0)

struct options {
    int gpus = 0; // 0: all visible
    int tokens = 512;
    int hidden = 512;
    int ffn = 0; // 0: 4 × hidden
    int layers = 2;
    int steps = 6;
    float lr = 1e-3f;
};

static void usage(FILE *f)
{
    std::fprintf(f,
                 "usage: tensor_parallel [options]\n"
                 "  --gpus N     tensor-parallel GPUs (default: all visible)\n"
                 "  --tokens T   tokens per step, a multiple of N (default 512)\n"
                 "  --hidden H   model width (default 512)\n"
                 "  --ffn F      inner width of a block, a multiple of N (default 4 x hidden)\n"
                 "  --layers L   MLP blocks (default 2)\n"
                 "  --steps S    training steps (default 6)\n"
                 "  --lr LR      Adam learning rate (default 0.001)\n");
}

static options parse_options(int argc, char **argv)
{
    enum { GPUS = 1, TOKENS, HIDDEN, FFN, LAYERS, STEPS, LR, HELP };
    static const struct option longs[] = {
        {"gpus", required_argument, nullptr, GPUS},     {"tokens", required_argument, nullptr, TOKENS},
        {"hidden", required_argument, nullptr, HIDDEN}, {"ffn", required_argument, nullptr, FFN},
        {"layers", required_argument, nullptr, LAYERS}, {"steps", required_argument, nullptr, STEPS},
        {"lr", required_argument, nullptr, LR},         {"help", no_argument, nullptr, HELP},
        {nullptr, 0, nullptr, 0}};
    options o;
    for (int c; (c = getopt_long(argc, argv, "h", longs, nullptr)) != -1;) {
        switch (c) {
        case GPUS: o.gpus = example_arg_int("tensor_parallel", "--gpus", optarg, 0); break;
        case TOKENS: o.tokens = example_arg_int("tensor_parallel", "--tokens", optarg, 1); break;
        case HIDDEN: o.hidden = example_arg_int("tensor_parallel", "--hidden", optarg, 1); break;
        case FFN: o.ffn = example_arg_int("tensor_parallel", "--ffn", optarg, 1); break;
        case LAYERS: o.layers = example_arg_int("tensor_parallel", "--layers", optarg, 1); break;
        case STEPS: o.steps = example_arg_int("tensor_parallel", "--steps", optarg, 1); break;
        case LR: o.lr = (float)example_arg_positive("tensor_parallel", "--lr", optarg); break;
        case 'h':
        case HELP: usage(stdout); std::exit(0);
        default: usage(stderr); std::exit(2);
        }
    }
    if (o.ffn == 0)
        o.ffn = 4 * o.hidden;
    if (optind != argc || o.gpus < 0 || o.tokens < 1 || o.hidden < 1 || o.ffn < 1 || o.layers < 1 ||
        o.steps < 1 || !(o.lr > 0)) {
        std::fprintf(stderr, "tensor_parallel: bad arguments (an option or a combination out of range, or an argument left over)\n");
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

// y[r, c] = max(y[r, c] + b[r], 0); column-major rows × cols.
__global__ void bias_relu(float *y, const float *b, int rows, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        y[i] = fmaxf(y[i] + b[i % rows], 0.0f);
}

// out = x + z + b[row]: the residual connection and the row-parallel bias.
__global__ void residual_bias(float *out, const float *x, const float *z, const float *b, int rows, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = x[i] + z[i] + b[i % rows];
}

// grad = (pred − target)/tokens; *loss += 0.5·Σ(pred − target)²/tokens.
__global__ void mse_loss_grad(const float *pred, const float *target, float *grad, float *loss, size_t n,
                              float inv_tokens)
{
    __shared__ float partial[256];
    float sum = 0.0f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float d = pred[i] - target[i];
        grad[i] = d * inv_tokens;
        sum += 0.5f * d * d * inv_tokens;
    }
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        atomicAdd(loss, partial[0]);
}

// db[r] = Σ_c g[r, c]: one block per row.
__global__ void bias_grad(const float *g, float *db, int rows, int cols)
{
    __shared__ float partial[256];
    int r = blockIdx.x;
    float sum = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        sum += g[r + (size_t)c * rows];
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        db[r] = partial[0];
}

__global__ void relu_backward(float *g, const float *act, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        if (act[i] <= 0.0f)
            g[i] = 0.0f;
}

__global__ void add_into(float *a, const float *b, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        a[i] += b[i];
}

// Adam (β1 0.9, β2 0.999, ε 1e-8) on g·grad_scale; b1c, b2c = 1 − β^t.
__global__ void adam_update(float *w, const float *g, float *m, float *v, size_t n, float lr, float grad_scale,
                            float b1c, float b2c)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float gi = g[i] * grad_scale;
        float mi = 0.9f * m[i] + 0.1f * gi, vi = 0.999f * v[i] + 0.001f * gi * gi;
        m[i] = mi;
        v[i] = vi;
        w[i] -= lr * (mi / b1c) / (sqrtf(vi / b2c) + 1e-8f);
    }
}

static unsigned grid_for(size_t n)
{
    size_t blocks = (n + 255) / 256;
    return (unsigned)(blocks < 1024 ? blocks : 1024);
}

// ---- the model -----------------------------------------------------------

// One block's shard of parameters, in one buffer: W1ᵣ (F/n × H), b1ᵣ (F/n),
// W2ᵣ (H × F/n), then the replicated b2 (H), last so that the b2 gradients
// of every block can be all-reduced in place block by block.
struct shape {
    int H, F, Fr, T, Tr; // widths, the ffn shard, tokens, the token shard
    size_t w1, b1, w2, b2, floats; // offsets into a block's buffer
};

struct rank_state {
    int dev = 0;
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    cublasHandle_t blas = nullptr;
    ncclComm_t nccl = nullptr;
    std::vector<float *> params, grads, adam_m, adam_v; // per block
    std::vector<float *> x_shard;         // per block input shard (H × Tr), [L] = output
    std::vector<float *> x_full, y;       // per block: gathered input (H × T), ReLU output (Fr × T)
    float *z_full = nullptr;              // H × T partial sums / gradient scratch
    float *dy = nullptr;                  // Fr × T
    float *g_shard = nullptr, *g_tmp = nullptr; // H × Tr
    float *teacher = nullptr, *target = nullptr, *loss = nullptr;
};

static void gemm(const rank_state &r, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                 const float *A, const float *B, float *C)
{
    const float one = 1.0f, zero = 0.0f;
    int lda = ta == CUBLAS_OP_N ? m : k, ldb = tb == CUBLAS_OP_N ? k : n;
    BLAS_CHECK(cublasGemmEx(r.blas, ta, tb, m, n, k, &one, A, CUDA_R_32F, lda, B, CUDA_R_32F, ldb, &zero, C,
                            CUDA_R_32F, m, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
}

static float *alloc(size_t floats)
{
    float *p = nullptr;
    CUDA_CHECK(cudaMalloc(&p, floats * sizeof(float)));
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
        r.params.push_back(alloc(s.floats));
        r.grads.push_back(alloc(s.floats));
        r.adam_m.push_back(alloc(s.floats));
        r.adam_v.push_back(alloc(s.floats));
        CUDA_CHECK(cudaMemsetAsync(r.adam_m[l], 0, s.floats * sizeof(float), r.stream));
        CUDA_CHECK(cudaMemsetAsync(r.adam_v[l], 0, s.floats * sizeof(float), r.stream));
        r.x_full.push_back(alloc((size_t)s.H * s.T));
        r.y.push_back(alloc((size_t)s.Fr * s.T));
        float *p = r.params[l];
        // every rank draws its own rows of W1 and columns of W2 of one full
        // matrix (seeded per block and rank); b2 is the same everywhere
        fill_uniform<<<grid_for((size_t)s.Fr * s.H), 256, 0, r.stream>>>(p + s.w1, (size_t)s.Fr * s.H,
                                                                          sqrtf(6.0f / s.H), 100 * l + rank);
        fill_uniform<<<grid_for((size_t)s.H * s.Fr), 256, 0, r.stream>>>(p + s.w2, (size_t)s.H * s.Fr,
                                                                          sqrtf(1.0f / s.F), 100 * l + 50 + rank);
        CUDA_CHECK(cudaMemsetAsync(p + s.b1, 0, s.Fr * sizeof(float), r.stream));
        CUDA_CHECK(cudaMemsetAsync(p + s.b2, 0, s.H * sizeof(float), r.stream));
    }
    for (int l = 0; l <= o.layers; l++)
        r.x_shard.push_back(alloc((size_t)s.H * s.Tr));
    r.z_full = alloc((size_t)s.H * s.T);
    r.dy = alloc((size_t)s.Fr * s.T);
    r.g_shard = alloc((size_t)s.H * s.Tr);
    r.g_tmp = alloc((size_t)s.H * s.Tr);
    r.teacher = alloc((size_t)s.H * s.H);
    r.target = alloc((size_t)s.H * s.Tr);
    r.loss = alloc(1);
    fill_uniform<<<grid_for((size_t)s.H * s.H), 256, 0, r.stream>>>(r.teacher, (size_t)s.H * s.H,
                                                                    sqrtf(3.0f / s.H), 7);
    CUDA_CHECK(cudaGetLastError());
}

static void each_rank(std::vector<rank_state> &ranks, void (*fn)(rank_state &, const shape &, int, int),
                      const shape &s, int arg)
{
    for (size_t i = 0; i < ranks.size(); i++) {
        CUDA_CHECK(cudaSetDevice(ranks[i].dev));
        fn(ranks[i], s, (int)i, arg);
    }
}

// ---- one step, phase by phase over every rank ------------------------------

static void draw_batch(rank_state &r, const shape &s, int rank, int step)
{
    size_t n = (size_t)s.H * s.Tr;
    fill_uniform<<<grid_for(n), 256, 0, r.stream>>>(r.x_shard[0], n, sqrtf(3.0f),
                                                    ((uint64_t)step << 20) + (uint64_t)rank + 1);
    gemm(r, CUBLAS_OP_N, CUBLAS_OP_N, s.H, s.Tr, s.H, r.teacher, r.x_shard[0], r.target);
    CUDA_CHECK(cudaMemsetAsync(r.loss, 0, sizeof(float), r.stream));
}

static void block_forward_gemms(rank_state &r, const shape &s, int, int l)
{
    gemm(r, CUBLAS_OP_N, CUBLAS_OP_N, s.Fr, s.T, s.H, r.params[l] + s.w1, r.x_full[l], r.y[l]);
    size_t n = (size_t)s.Fr * s.T;
    bias_relu<<<grid_for(n), 256, 0, r.stream>>>(r.y[l], r.params[l] + s.b1, s.Fr, n);
    gemm(r, CUBLAS_OP_N, CUBLAS_OP_N, s.H, s.T, s.Fr, r.params[l] + s.w2, r.y[l], r.z_full);
    CUDA_CHECK(cudaGetLastError());
}

static void block_forward_residual(rank_state &r, const shape &s, int, int l)
{
    size_t n = (size_t)s.H * s.Tr;
    residual_bias<<<grid_for(n), 256, 0, r.stream>>>(r.x_shard[l + 1], r.x_shard[l], r.g_tmp,
                                                     r.params[l] + s.b2, s.H, n);
    CUDA_CHECK(cudaGetLastError());
}

static void loss_grad(rank_state &r, const shape &s, int, int layers)
{
    size_t n = (size_t)s.H * s.Tr;
    mse_loss_grad<<<grid_for(n), 256, 0, r.stream>>>(r.x_shard[layers], r.target, r.g_shard, r.loss, n,
                                                     1.0f / s.T);
    CUDA_CHECK(cudaGetLastError());
}

// With the output gradient gathered in z_full: both GEMMs' gradients, and the
// partial input gradient (H × T) in z_full again.
static void block_backward_gemms(rank_state &r, const shape &s, int, int l)
{
    float *p = r.params[l], *g = r.grads[l];
    bias_grad<<<s.H, 256, 0, r.stream>>>(r.g_shard, g + s.b2, s.H, s.Tr);
    gemm(r, CUBLAS_OP_N, CUBLAS_OP_T, s.H, s.Fr, s.T, r.z_full, r.y[l], g + s.w2);
    gemm(r, CUBLAS_OP_T, CUBLAS_OP_N, s.Fr, s.T, s.H, p + s.w2, r.z_full, r.dy);
    size_t n = (size_t)s.Fr * s.T;
    relu_backward<<<grid_for(n), 256, 0, r.stream>>>(r.dy, r.y[l], n);
    bias_grad<<<s.Fr, 256, 0, r.stream>>>(r.dy, g + s.b1, s.Fr, s.T);
    gemm(r, CUBLAS_OP_N, CUBLAS_OP_T, s.Fr, s.H, s.T, r.dy, r.x_full[l], g + s.w1);
    gemm(r, CUBLAS_OP_T, CUBLAS_OP_N, s.H, s.T, s.Fr, p + s.w1, r.dy, r.z_full);
    CUDA_CHECK(cudaGetLastError());
}

// The residual: the gradient of the block's input shard is the output's plus
// the reduce-scattered one.
static void block_backward_residual(rank_state &r, const shape &s, int, int)
{
    size_t n = (size_t)s.H * s.Tr;
    add_into<<<grid_for(n), 256, 0, r.stream>>>(r.g_shard, r.g_tmp, n);
    CUDA_CHECK(cudaGetLastError());
}

int main(int argc, char **argv)
{
    options o = parse_options(argc, argv);
    int visible = 0;
    CUDA_CHECK(cudaGetDeviceCount(&visible));
    int n = o.gpus ? o.gpus : visible;
    if (n > visible || n < 1) {
        std::fprintf(stderr, "tensor_parallel: %d GPUs asked for, %d visible\n", n, visible);
        return 2;
    }
    if (o.tokens % n || o.ffn % n) {
        std::fprintf(stderr, "tensor_parallel: --tokens %d and --ffn %d must be multiples of %d GPUs\n", o.tokens,
                     o.ffn, n);
        return 2;
    }
    shape s;
    s.H = o.hidden, s.F = o.ffn, s.Fr = o.ffn / n, s.T = o.tokens, s.Tr = o.tokens / n;
    s.w1 = 0;
    s.b1 = s.w1 + (size_t)s.Fr * s.H;
    s.w2 = s.b1 + s.Fr;
    s.b2 = s.w2 + (size_t)s.H * s.Fr;
    s.floats = s.b2 + s.H;
    std::printf("# tensor_parallel: %d GPU(s), %d block(s) %d -> %d -> %d, %d tokens (%d per GPU), "
                "%.2f MiB per all-gather, lr %g\n",
                n, o.layers, s.H, s.F, s.H, s.T, s.Tr, (double)s.H * s.T * 4 / 1048576.0, o.lr);

    std::vector<rank_state> ranks(n);
    for (int i = 0; i < n; i++)
        setup(ranks[i], s, o, i);
    std::vector<ncclComm_t> comms(n);
    NCCL_CHECK(ncclCommInitAll(comms.data(), n, nullptr));
    for (int i = 0; i < n; i++)
        ranks[i].nccl = comms[i];
    float *loss_host = nullptr;
    CUDA_CHECK(cudaMallocHost(&loss_host, n * sizeof(float)));
    for (rank_state &r : ranks) {
        CUDA_CHECK(cudaSetDevice(r.dev));
        CUDA_CHECK(cudaStreamSynchronize(r.stream));
    }

    const size_t shard = (size_t)s.H * s.Tr;
    double total_ms = 0.0;
    for (int step = 0; step < o.steps; step++) {
        auto t0 = std::chrono::steady_clock::now();
        for (rank_state &r : ranks) {
            CUDA_CHECK(cudaSetDevice(r.dev));
            CUDA_CHECK(cudaEventRecord(r.start, r.stream));
        }
        each_rank(ranks, draw_batch, s, step);
        for (int l = 0; l < o.layers; l++) {
            NCCL_CHECK(ncclGroupStart());
            for (rank_state &r : ranks)
                NCCL_CHECK(ncclAllGather(r.x_shard[l], r.x_full[l], shard, ncclFloat, r.nccl, r.stream));
            NCCL_CHECK(ncclGroupEnd());
            each_rank(ranks, block_forward_gemms, s, l);
            NCCL_CHECK(ncclGroupStart());
            for (rank_state &r : ranks)
                NCCL_CHECK(ncclReduceScatter(r.z_full, r.g_tmp, shard, ncclFloat, ncclSum, r.nccl, r.stream));
            NCCL_CHECK(ncclGroupEnd());
            each_rank(ranks, block_forward_residual, s, l);
        }
        each_rank(ranks, loss_grad, s, o.layers);
        for (int l = o.layers - 1; l >= 0; l--) {
            NCCL_CHECK(ncclGroupStart());
            for (rank_state &r : ranks)
                NCCL_CHECK(ncclAllGather(r.g_shard, r.z_full, shard, ncclFloat, r.nccl, r.stream));
            NCCL_CHECK(ncclGroupEnd());
            each_rank(ranks, block_backward_gemms, s, l);
            NCCL_CHECK(ncclGroupStart());
            for (rank_state &r : ranks)
                NCCL_CHECK(ncclReduceScatter(r.z_full, r.g_tmp, shard, ncclFloat, ncclSum, r.nccl, r.stream));
            NCCL_CHECK(ncclGroupEnd());
            each_rank(ranks, block_backward_residual, s, l);
        }
        // b2 is replicated and each rank saw only its tokens: sum its gradients
        NCCL_CHECK(ncclGroupStart());
        for (rank_state &r : ranks)
            for (int l = 0; l < o.layers; l++)
                NCCL_CHECK(ncclAllReduce(r.grads[l] + s.b2, r.grads[l] + s.b2, s.H, ncclFloat, ncclSum, r.nccl,
                                         r.stream));
        NCCL_CHECK(ncclGroupEnd());
        for (int i = 0; i < n; i++) {
            rank_state &r = ranks[i];
            CUDA_CHECK(cudaSetDevice(r.dev));
            for (int l = 0; l < o.layers; l++)
                adam_update<<<grid_for(s.floats), 256, 0, r.stream>>>(
                    r.params[l], r.grads[l], r.adam_m[l], r.adam_v[l], s.floats, o.lr, 1.0f,
                    1.0f - powf(0.9f, step + 1), 1.0f - powf(0.999f, step + 1));
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaMemcpyAsync(loss_host + i, r.loss, sizeof(float), cudaMemcpyDeviceToHost, r.stream));
            CUDA_CHECK(cudaEventRecord(r.stop, r.stream));
        }
        for (rank_state &r : ranks)
            CUDA_CHECK(cudaEventSynchronize(r.stop));
        auto t1 = std::chrono::steady_clock::now();
        float gpu_ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&gpu_ms, ranks[0].start, ranks[0].stop));
        double host_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
        double loss = 0.0;
        for (int i = 0; i < n; i++)
            loss += loss_host[i]; // each rank's share of the mean over all tokens
        std::printf("step %3d  loss %.6f  gpu %.3f ms  host %.3f ms\n", step, loss, gpu_ms, host_ms);
        if (step > 0 || o.steps == 1)
            total_ms += host_ms;
    }
    int timed = o.steps > 1 ? o.steps - 1 : 1;
    double mean_ms = total_ms / timed;
    std::printf("tensor_parallel: %d GPU(s), mean step %.3f ms over %d step(s), %.0f tokens/s\n", n, mean_ms, timed,
                mean_ms > 0 ? (double)s.T * 1e3 / mean_ms : 0.0);

    for (rank_state &r : ranks) {
        CUDA_CHECK(cudaSetDevice(r.dev));
        NCCL_CHECK(ncclCommDestroy(r.nccl));
        BLAS_CHECK(cublasDestroy(r.blas));
        for (auto *list : {&r.params, &r.grads, &r.adam_m, &r.adam_v, &r.x_shard, &r.x_full, &r.y})
            for (float *p : *list)
                CUDA_CHECK(cudaFree(p));
        for (float *p : {r.z_full, r.dy, r.g_shard, r.g_tmp, r.teacher, r.target, r.loss})
            CUDA_CHECK(cudaFree(p));
        CUDA_CHECK(cudaEventDestroy(r.start));
        CUDA_CHECK(cudaEventDestroy(r.stop));
        CUDA_CHECK(cudaStreamDestroy(r.stream));
    }
    CUDA_CHECK(cudaFreeHost(loss_host));
    return 0;
}
