// mlp_train: data-parallel training of a multi-layer perceptron, one process
// driving every visible GPU, as a user writes it without a framework.
//
// Each GPU holds a replica of the model and trains on its own shard of a
// synthetic regression task (inputs drawn on the GPU, targets from a fixed
// random linear "teacher", so the loss must go down). A step is:
//   forward   Z = W·A (cublasGemmEx, fp32 storage, TF32 math unless --no-tf32),
//             then bias + ReLU (own kernel)
//   loss      0.5·|P − Y|² summed over outputs, mean over the batch (own kernel)
//   backward  dW = G·Aᵀ, dA = Wᵀ·G (cublasGemmEx), bias gradient and ReLU mask
//             (own kernels), last layer first
//   all-reduce  gradients are laid out last layer first and cut into buckets
//             of about --bucket-mib; a bucket is all-reduced (ncclAllReduce,
//             sum) on a second stream as soon as backward has written it, so
//             communication overlaps the rest of backward
//   update    after the last bucket, on the gradients' mean over GPUs: SGD,
//             w −= lr · g (default), or Adam (--optimizer adam); own kernels
// Every step prints its loss (the mean over GPUs, read back with the step) and
// its time by CUDA events on GPU 0 and by the host clock; the last line gives
// the mean step time without the first step.
//
//   mlp_train [--gpus N] [--batch B] [--in D] [--hidden H] [--layers L] [--out O]
//             [--steps S] [--optimizer sgd|adam] [--lr LR] [--bucket-mib MIB] [--no-tf32]
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

#define CUDA_CHECK(call)                                                                           \
    do {                                                                                           \
        cudaError_t err_ = (call);                                                                 \
        if (err_ != cudaSuccess) {                                                                 \
            std::fprintf(stderr, "mlp_train: %s failed: %s\n", #call, cudaGetErrorString(err_));   \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)
#define BLAS_CHECK(call)                                                                           \
    do {                                                                                           \
        cublasStatus_t st_ = (call);                                                               \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                                        \
            std::fprintf(stderr, "mlp_train: %s failed: status %d\n", #call, (int)st_);            \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)
#define NCCL_CHECK(call)                                                                           \
    do {                                                                                           \
        ncclResult_t res_ = (call);                                                                \
        if (res_ != ncclSuccess) {                                                                 \
            std::fprintf(stderr, "mlp_train: %s failed: %s\n", #call, ncclGetErrorString(res_));   \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

struct options {
    int gpus = 0; // 0: all visible
    int batch = 128;
    int in = 256;
    int hidden = 512;
    int layers = 4;
    int out = 16;
    int steps = 10;
    bool adam = false;
    float lr = 0.0f; // 0: 0.003 for SGD, 0.001 for Adam
    double bucket_mib = 1.0;
    bool tf32 = true;
};

static void usage(FILE *f)
{
    std::fprintf(f,
                 "usage: mlp_train [options]\n"
                 "  --gpus N         GPUs to use (default: all visible)\n"
                 "  --batch B        samples per GPU per step (default 128)\n"
                 "  --in D           input features (default 256)\n"
                 "  --hidden H       hidden width (default 512)\n"
                 "  --layers L       linear layers, >= 2 (default 4)\n"
                 "  --out O          outputs (default 16)\n"
                 "  --steps S        training steps (default 10)\n"
                 "  --optimizer OPT  sgd (default) or adam\n"
                 "  --lr LR          learning rate (default 0.003 for SGD, 0.001 for Adam)\n"
                 "  --bucket-mib M   gradient bucket size for the all-reduce (default 1)\n"
                 "  --no-tf32        full fp32 GEMMs instead of TF32 tensor cores\n");
}

static options parse_options(int argc, char **argv)
{
    enum { GPUS = 1, BATCH, IN, HIDDEN, LAYERS, OUT, STEPS, OPTIMIZER, LR, BUCKET, NOTF32, HELP };
    static const struct option longs[] = {
        {"gpus", required_argument, nullptr, GPUS},     {"batch", required_argument, nullptr, BATCH},
        {"in", required_argument, nullptr, IN},         {"hidden", required_argument, nullptr, HIDDEN},
        {"layers", required_argument, nullptr, LAYERS}, {"out", required_argument, nullptr, OUT},
        {"steps", required_argument, nullptr, STEPS},   {"lr", required_argument, nullptr, LR},
        {"optimizer", required_argument, nullptr, OPTIMIZER}, {"bucket-mib", required_argument, nullptr, BUCKET},
        {"no-tf32", no_argument, nullptr, NOTF32},      {"help", no_argument, nullptr, HELP},
        {nullptr, 0, nullptr, 0}};
    options o;
    bool bad_optimizer = false;
    for (int c; (c = getopt_long(argc, argv, "h", longs, nullptr)) != -1;) {
        switch (c) {
        case GPUS: o.gpus = example_arg_int("mlp_train", "--gpus", optarg, 0); break;
        case BATCH: o.batch = example_arg_int("mlp_train", "--batch", optarg, 1); break;
        case IN: o.in = example_arg_int("mlp_train", "--in", optarg, 1); break;
        case HIDDEN: o.hidden = example_arg_int("mlp_train", "--hidden", optarg, 1); break;
        case LAYERS: o.layers = example_arg_int("mlp_train", "--layers", optarg, 2); break;
        case OUT: o.out = example_arg_int("mlp_train", "--out", optarg, 1); break;
        case STEPS: o.steps = example_arg_int("mlp_train", "--steps", optarg, 1); break;
        case OPTIMIZER:
            o.adam = !std::strcmp(optarg, "adam");
            bad_optimizer = !o.adam && std::strcmp(optarg, "sgd");
            break;
        case LR: o.lr = (float)example_arg_positive("mlp_train", "--lr", optarg); break;
        case BUCKET: o.bucket_mib = example_arg_positive("mlp_train", "--bucket-mib", optarg); break;
        case NOTF32: o.tf32 = false; break;
        case 'h':
        case HELP: usage(stdout); std::exit(0);
        default: usage(stderr); std::exit(2);
        }
    }
    if (o.lr == 0.0f)
        o.lr = o.adam ? 1e-3f : 3e-3f;
    if (optind != argc || bad_optimizer || o.gpus < 0 || o.batch < 1 || o.in < 1 || o.hidden < 1 || o.layers < 2 ||
        o.out < 1 || o.steps < 1 || !(o.lr > 0) || !(o.bucket_mib > 0)) {
        std::fprintf(stderr, "mlp_train: bad arguments (an option or a combination out of range, or an argument left over)\n");
        usage(stderr);
        std::exit(2);
    }
    return o;
}

// ---- kernels -------------------------------------------------------------

// A uniform number in [-1, 1) from (seed, index): splitmix64, so every GPU
// and every run draws the same data without a random-number library.
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

// z[r, c] = z[r, c] + b[r], then max(·, 0) if relu; column-major rows × cols.
__global__ void bias_act(float *z, const float *b, int rows, size_t n, bool relu)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float v = z[i] + b[i % rows];
        z[i] = relu ? fmaxf(v, 0.0f) : v;
    }
}

// grad = (pred − target)/batch; *loss += 0.5·Σ(pred − target)²/batch.
__global__ void mse_loss_grad(const float *pred, const float *target, float *grad, float *loss, size_t n,
                              float inv_batch)
{
    __shared__ float partial[256];
    float sum = 0.0f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float d = pred[i] - target[i];
        grad[i] = d * inv_batch;
        sum += 0.5f * d * d * inv_batch;
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

// The ReLU's backward: no gradient where the activation was clipped to zero.
__global__ void relu_backward(float *g, const float *act, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        if (act[i] <= 0.0f)
            g[i] = 0.0f;
}

// Adam (β1 0.9, β2 0.999, ε 1e-8) on g·grad_scale; b1c, b2c = 1 − β^t.
__global__ void sgd_update(float *w, const float *g, size_t n, float lr)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        w[i] -= lr * g[i];
}

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

// One replica on one GPU. Parameters and gradients are each one buffer, laid
// out last layer first (W then b), so that backward fills the gradient
// buffer from the front and every bucket is one contiguous range.
struct replica {
    int dev = 0;
    cudaStream_t compute = nullptr, comm = nullptr;
    cudaEvent_t grads_ready = nullptr, reduced = nullptr, start = nullptr, stop = nullptr;
    cublasHandle_t blas = nullptr;
    ncclComm_t nccl = nullptr;
    float *params = nullptr, *grads = nullptr, *adam_m = nullptr, *adam_v = nullptr, *teacher = nullptr;
    std::vector<float *> act; // act[0] = inputs, act[l + 1] = output of layer l
    float *target = nullptr, *gbuf[2] = {nullptr, nullptr}, *loss = nullptr;
};

struct model {
    options opt;
    std::vector<int> dims;          // dims[l] → dims[l + 1] is layer l
    std::vector<size_t> w_off, b_off; // offsets into params / grads, in floats
    size_t nparams = 0;
    std::vector<int> bucket_end_layer; // a bucket closes after this layer's backward
    std::vector<size_t> bucket_begin, bucket_count;
};

static model plan(const options &o)
{
    model m;
    m.opt = o;
    m.dims.push_back(o.in);
    for (int l = 0; l < o.layers - 1; l++)
        m.dims.push_back(o.hidden);
    m.dims.push_back(o.out);
    m.w_off.assign(o.layers, 0);
    m.b_off.assign(o.layers, 0);
    size_t off = 0, begin = 0;
    const size_t bucket_floats = (size_t)(o.bucket_mib * 1048576.0 / sizeof(float));
    for (int l = o.layers - 1; l >= 0; l--) {
        m.w_off[l] = off;
        off += (size_t)m.dims[l + 1] * m.dims[l];
        m.b_off[l] = off;
        off += (size_t)m.dims[l + 1];
        if (off - begin >= bucket_floats || l == 0) {
            m.bucket_end_layer.push_back(l);
            m.bucket_begin.push_back(begin);
            m.bucket_count.push_back(off - begin);
            begin = off;
        }
    }
    m.nparams = off;
    return m;
}

static void gemm(const replica &r, const options &o, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                 int k, const float *A, int lda, const float *B, int ldb, float *C, int ldc)
{
    const float one = 1.0f, zero = 0.0f;
    BLAS_CHECK(cublasGemmEx(r.blas, ta, tb, m, n, k, &one, A, CUDA_R_32F, lda, B, CUDA_R_32F, ldb, &zero, C,
                            CUDA_R_32F, ldc, o.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
}

static void setup(replica &r, const model &m, int dev)
{
    const options &o = m.opt;
    r.dev = dev;
    CUDA_CHECK(cudaSetDevice(dev));
    CUDA_CHECK(cudaStreamCreateWithFlags(&r.compute, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&r.comm, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&r.grads_ready, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&r.reduced, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreate(&r.start));
    CUDA_CHECK(cudaEventCreate(&r.stop));
    BLAS_CHECK(cublasCreate(&r.blas));
    BLAS_CHECK(cublasSetStream(r.blas, r.compute));
    CUDA_CHECK(cudaMalloc(&r.params, m.nparams * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&r.grads, m.nparams * sizeof(float)));
    if (o.adam) { // the moments
        CUDA_CHECK(cudaMalloc(&r.adam_m, m.nparams * sizeof(float)));
        CUDA_CHECK(cudaMalloc(&r.adam_v, m.nparams * sizeof(float)));
        CUDA_CHECK(cudaMemsetAsync(r.adam_m, 0, m.nparams * sizeof(float), r.compute));
        CUDA_CHECK(cudaMemsetAsync(r.adam_v, 0, m.nparams * sizeof(float), r.compute));
    }
    CUDA_CHECK(cudaMalloc(&r.teacher, (size_t)o.out * o.in * sizeof(float)));
    r.act.resize(o.layers + 1);
    int widest = 0;
    for (int l = 0; l <= o.layers; l++) {
        CUDA_CHECK(cudaMalloc(&r.act[l], (size_t)m.dims[l] * o.batch * sizeof(float)));
        widest = m.dims[l] > widest ? m.dims[l] : widest;
    }
    CUDA_CHECK(cudaMalloc(&r.target, (size_t)o.out * o.batch * sizeof(float)));
    for (float *&g : r.gbuf)
        CUDA_CHECK(cudaMalloc(&g, (size_t)widest * o.batch * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&r.loss, sizeof(float)));

    // Same initial weights on every replica (same seeds), He-uniform for the
    // ReLU layers; zero biases. The teacher's outputs have unit variance.
    for (int l = 0; l < o.layers; l++) {
        size_t n = (size_t)m.dims[l + 1] * m.dims[l];
        float gain = l + 1 < o.layers ? 6.0f : 3.0f;
        fill_uniform<<<grid_for(n), 256, 0, r.compute>>>(r.params + m.w_off[l], n, sqrtf(gain / m.dims[l]),
                                                         1000 + l);
        CUDA_CHECK(cudaMemsetAsync(r.params + m.b_off[l], 0, m.dims[l + 1] * sizeof(float), r.compute));
    }
    size_t nt = (size_t)o.out * o.in;
    fill_uniform<<<grid_for(nt), 256, 0, r.compute>>>(r.teacher, nt, sqrtf(3.0f / o.in), 7);
    CUDA_CHECK(cudaGetLastError());
}

// One replica's forward pass and loss gradient on its shard of step `step`.
static void forward(replica &r, const model &m, int rank, int step)
{
    const options &o = m.opt;
    CUDA_CHECK(cudaSetDevice(r.dev));
    size_t nx = (size_t)o.in * o.batch;
    fill_uniform<<<grid_for(nx), 256, 0, r.compute>>>(r.act[0], nx, sqrtf(3.0f),
                                                      ((uint64_t)step << 20) + (uint64_t)rank + 1);
    gemm(r, o, CUBLAS_OP_N, CUBLAS_OP_N, o.out, o.batch, o.in, r.teacher, o.out, r.act[0], o.in, r.target, o.out);
    for (int l = 0; l < o.layers; l++) {
        int rows = m.dims[l + 1], cols = m.dims[l];
        gemm(r, o, CUBLAS_OP_N, CUBLAS_OP_N, rows, o.batch, cols, r.params + m.w_off[l], rows, r.act[l], cols,
             r.act[l + 1], rows);
        size_t n = (size_t)rows * o.batch;
        bias_act<<<grid_for(n), 256, 0, r.compute>>>(r.act[l + 1], r.params + m.b_off[l], rows, n,
                                                     l + 1 < o.layers);
    }
    size_t np = (size_t)o.out * o.batch;
    CUDA_CHECK(cudaMemsetAsync(r.loss, 0, sizeof(float), r.compute));
    mse_loss_grad<<<grid_for(np), 256, 0, r.compute>>>(r.act[o.layers], r.target, r.gbuf[0], r.loss, np,
                                                       1.0f / o.batch);
    CUDA_CHECK(cudaGetLastError());
}

// Layer l's backward on one replica: its gradients, and the gradient of its
// input in the other half of gbuf (*cur flips) unless it is the first layer.
static void backward_layer(replica &r, const model &m, int l, int *cur)
{
    const options &o = m.opt;
    CUDA_CHECK(cudaSetDevice(r.dev));
    int rows = m.dims[l + 1], cols = m.dims[l];
    const float *g = r.gbuf[*cur];
    gemm(r, o, CUBLAS_OP_N, CUBLAS_OP_T, rows, cols, o.batch, g, rows, r.act[l], cols, r.grads + m.w_off[l],
         rows);
    bias_grad<<<rows, 256, 0, r.compute>>>(g, r.grads + m.b_off[l], rows, o.batch);
    if (l > 0) {
        float *gin = r.gbuf[1 - *cur];
        gemm(r, o, CUBLAS_OP_T, CUBLAS_OP_N, cols, o.batch, rows, r.params + m.w_off[l], rows, g, rows, gin, cols);
        size_t n = (size_t)cols * o.batch;
        relu_backward<<<grid_for(n), 256, 0, r.compute>>>(gin, r.act[l], n);
        *cur = 1 - *cur;
    }
    CUDA_CHECK(cudaGetLastError());
}

// All-reduce bucket b on every replica's communication stream once its
// backward has written it; one group, since one thread drives every GPU.
static void allreduce_bucket(std::vector<replica> &reps, const model &m, size_t b)
{
    for (replica &r : reps) {
        CUDA_CHECK(cudaSetDevice(r.dev));
        CUDA_CHECK(cudaEventRecord(r.grads_ready, r.compute));
        CUDA_CHECK(cudaStreamWaitEvent(r.comm, r.grads_ready, 0));
    }
    NCCL_CHECK(ncclGroupStart());
    for (replica &r : reps) {
        float *p = r.grads + m.bucket_begin[b];
        NCCL_CHECK(ncclAllReduce(p, p, m.bucket_count[b], ncclFloat, ncclSum, r.nccl, r.comm));
    }
    NCCL_CHECK(ncclGroupEnd());
}

int main(int argc, char **argv)
{
    options o = parse_options(argc, argv);
    int visible = 0;
    CUDA_CHECK(cudaGetDeviceCount(&visible));
    int n = o.gpus ? o.gpus : visible;
    if (n > visible) {
        std::fprintf(stderr, "mlp_train: %d GPUs asked for, %d visible\n", n, visible);
        return 2;
    }
    model m = plan(o);
    std::printf("# mlp_train: %d GPU(s), layers %d (%d -> %d x %d -> %d), batch %d per GPU, %zu parameters "
                "(%.2f MiB), %zu gradient bucket(s), %s GEMMs, %s lr %g\n",
                n, o.layers, o.in, o.layers - 1, o.hidden, o.out, o.batch, m.nparams,
                m.nparams * 4.0 / 1048576.0, m.bucket_count.size(), o.tf32 ? "TF32" : "FP32",
                o.adam ? "Adam" : "SGD", o.lr);

    std::vector<replica> reps(n);
    for (int g = 0; g < n; g++)
        setup(reps[g], m, g);
    std::vector<ncclComm_t> comms(n);
    NCCL_CHECK(ncclCommInitAll(comms.data(), n, nullptr));
    for (int g = 0; g < n; g++)
        reps[g].nccl = comms[g];
    float *loss_host = nullptr;
    CUDA_CHECK(cudaMallocHost(&loss_host, n * sizeof(float)));
    for (replica &r : reps) {
        CUDA_CHECK(cudaSetDevice(r.dev));
        CUDA_CHECK(cudaStreamSynchronize(r.compute));
    }

    double total_ms = 0.0;
    for (int step = 0; step < o.steps; step++) {
        auto t0 = std::chrono::steady_clock::now();
        for (replica &r : reps) {
            CUDA_CHECK(cudaSetDevice(r.dev));
            CUDA_CHECK(cudaEventRecord(r.start, r.compute));
        }
        for (int g = 0; g < n; g++)
            forward(reps[g], m, g, step);
        std::vector<int> cur(n, 0);
        size_t bucket = 0;
        for (int l = o.layers - 1; l >= 0; l--) {
            for (int g = 0; g < n; g++)
                backward_layer(reps[g], m, l, &cur[g]);
            if (bucket < m.bucket_end_layer.size() && m.bucket_end_layer[bucket] == l)
                allreduce_bucket(reps, m, bucket++);
        }
        for (int g = 0; g < n; g++) {
            replica &r = reps[g];
            CUDA_CHECK(cudaSetDevice(r.dev));
            CUDA_CHECK(cudaEventRecord(r.reduced, r.comm));
            CUDA_CHECK(cudaStreamWaitEvent(r.compute, r.reduced, 0));
            if (o.adam)
                adam_update<<<grid_for(m.nparams), 256, 0, r.compute>>>(
                    r.params, r.grads, r.adam_m, r.adam_v, m.nparams, o.lr, 1.0f / n, 1.0f - powf(0.9f, step + 1),
                    1.0f - powf(0.999f, step + 1));
            else
                sgd_update<<<grid_for(m.nparams), 256, 0, r.compute>>>(r.params, r.grads, m.nparams, o.lr / n);
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaMemcpyAsync(loss_host + g, r.loss, sizeof(float), cudaMemcpyDeviceToHost, r.compute));
            CUDA_CHECK(cudaEventRecord(r.stop, r.compute));
        }
        for (replica &r : reps)
            CUDA_CHECK(cudaEventSynchronize(r.stop));
        auto t1 = std::chrono::steady_clock::now();
        float gpu_ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&gpu_ms, reps[0].start, reps[0].stop));
        double host_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
        double loss = 0.0;
        for (int g = 0; g < n; g++)
            loss += loss_host[g] / n;
        std::printf("step %3d  loss %.6f  gpu %.3f ms  host %.3f ms\n", step, loss, gpu_ms, host_ms);
        if (step > 0 || o.steps == 1)
            total_ms += host_ms;
    }
    int timed = o.steps > 1 ? o.steps - 1 : 1;
    double mean_ms = total_ms / timed;
    std::printf("mlp_train: %d GPU(s), mean step %.3f ms over %d step(s), %.0f samples/s\n", n, mean_ms, timed,
                mean_ms > 0 ? (double)o.batch * n * 1e3 / mean_ms : 0.0);

    for (replica &r : reps) {
        CUDA_CHECK(cudaSetDevice(r.dev));
        NCCL_CHECK(ncclCommDestroy(r.nccl));
        BLAS_CHECK(cublasDestroy(r.blas));
        for (float *p : r.act)
            CUDA_CHECK(cudaFree(p));
        for (float *p : {r.params, r.grads, r.adam_m, r.adam_v, r.teacher, r.target, r.gbuf[0], r.gbuf[1], r.loss})
            CUDA_CHECK(cudaFree(p));
        for (cudaEvent_t e : {r.grads_ready, r.reduced, r.start, r.stop})
            CUDA_CHECK(cudaEventDestroy(e));
        CUDA_CHECK(cudaStreamDestroy(r.compute));
        CUDA_CHECK(cudaStreamDestroy(r.comm));
    }
    CUDA_CHECK(cudaFreeHost(loss_host));
    return 0;
}
