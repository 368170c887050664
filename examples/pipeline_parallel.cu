// pipeline_parallel: pipeline-parallel training of a deep MLP, one stage per
// GPU, one process driving every visible GPU, with a GPipe schedule.
//
// Stage s holds --layers-per-stage linear layers of width --hidden (ReLU
// between them; the very last layer is linear). A step splits the batch into
// --micro-batches micro-batches and runs, on every stage's stream:
//   forward  for each micro-batch: receive the activations from stage s−1
//            (ncclRecv), the stage's GEMMs (cublasGemmEx, TF32) and
//            bias + ReLU (own kernel), send the output to stage s+1 (ncclSend)
//   loss     on the last stage: 0.5·|P − Y|², mean over the micro-batch
//            (own kernel); the targets come from a fixed random linear
//            "teacher" of the inputs, which the last stage draws itself from
//            the same seeds as stage 0, so the loss must go down
//   backward for each micro-batch: receive the output gradient from stage
//            s+1, dW += G·Aᵀ and dA = Wᵀ·G per layer (cublasGemmEx, gradients
//            accumulated over micro-batches), send dA to stage s−1
//   update   Adam on every stage (own kernel)
// Each send/receive pair is one ncclGroupStart/End, since one thread drives
// both ends. Stages overlap through their streams: while stage 1 works on
// micro-batch m, stage 0 works on m+1. Every step prints the loss, the time by
// CUDA events on the first and last stage and by the host clock, and the last
// line the mean step time without the first step.
//
//   pipeline_parallel [--gpus N] [--micro-batches M] [--micro-batch B] [--hidden H]
//                     [--layers-per-stage L] [--steps S] [--lr LR]
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
            std::fprintf(stderr, "pipeline_parallel: %s failed: %s\n", #call, cudaGetErrorString(err_)); \
            std::exit(1);                                                                            \
        }                                                                                            \
    } while (0)
#define BLAS_CHECK(call)                                                                             \
    do {                                                                                             \
        cublasStatus_t st_ = (call);                                                                 \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                                          \
            std::fprintf(stderr, "pipeline_parallel: %s failed: status %d\n", #call, (int)st_);      \
            std::exit(1);                                                                            \
        }                                                                                            \
    } while (0)
#define NCCL_CHECK(call)                                                                             \
    do {                                                                                             \
        ncclResult_t res_ = (call);                                                                  \
        if (res_ != ncclSuccess) {                                                                   \
            std::fprintf(stderr, "pipeline_parallel: %s failed: %s\n", #call, ncclGetErrorString(res_)); \
            std::exit(1);                                                                            \
        }                                                                                            \
    } while (0)

struct options {
    int gpus = 0; // 0: all visible
    int micro_batches = 4;
    int micro_batch = 64;
    int hidden = 512;
    int layers_per_stage = 2;
    int steps = 6;
    float lr = 1e-3f;
};

static void usage(FILE *f)
{
    std::fprintf(f,
                 "usage: pipeline_parallel [options]\n"
                 "  --gpus N               pipeline stages, one per GPU (default: all visible)\n"
                 "  --micro-batches M      micro-batches per step (default 4)\n"
                 "  --micro-batch B        samples per micro-batch (default 64)\n"
                 "  --hidden H             width of every layer (default 512)\n"
                 "  --layers-per-stage L   linear layers per stage (default 2)\n"
                 "  --steps S              training steps (default 6)\n"
                 "  --lr LR                Adam learning rate (default 0.001)\n");
}

static options parse_options(int argc, char **argv)
{
    enum { GPUS = 1, MBS, MB, HIDDEN, LPS, STEPS, LR, HELP };
    static const struct option longs[] = {
        {"gpus", required_argument, nullptr, GPUS},   {"micro-batches", required_argument, nullptr, MBS},
        {"micro-batch", required_argument, nullptr, MB}, {"hidden", required_argument, nullptr, HIDDEN},
        {"layers-per-stage", required_argument, nullptr, LPS}, {"steps", required_argument, nullptr, STEPS},
        {"lr", required_argument, nullptr, LR},       {"help", no_argument, nullptr, HELP},
        {nullptr, 0, nullptr, 0}};
    options o;
    for (int c; (c = getopt_long(argc, argv, "h", longs, nullptr)) != -1;) {
        switch (c) {
        case GPUS: o.gpus = example_arg_int("pipeline_parallel", "--gpus", optarg, 0); break;
        case MBS: o.micro_batches = example_arg_int("pipeline_parallel", "--micro-batches", optarg, 1); break;
        case MB: o.micro_batch = example_arg_int("pipeline_parallel", "--micro-batch", optarg, 1); break;
        case HIDDEN: o.hidden = example_arg_int("pipeline_parallel", "--hidden", optarg, 1); break;
        case LPS: o.layers_per_stage = example_arg_int("pipeline_parallel", "--layers-per-stage", optarg, 1); break;
        case STEPS: o.steps = example_arg_int("pipeline_parallel", "--steps", optarg, 1); break;
        case LR: o.lr = (float)example_arg_positive("pipeline_parallel", "--lr", optarg); break;
        case 'h':
        case HELP: usage(stdout); std::exit(0);
        default: usage(stderr); std::exit(2);
        }
    }
    if (optind != argc || o.gpus < 0 || o.micro_batches < 1 || o.micro_batch < 1 || o.hidden < 1 ||
        o.layers_per_stage < 1 || o.steps < 1 || !(o.lr > 0)) {
        std::fprintf(stderr, "pipeline_parallel: bad arguments (an option or a combination out of range, or an argument left over)\n");
        usage(stderr);
        std::exit(2);
    }
    return o;
}

// ---- kernels -------------------------------------------------------------

// A uniform number in [-1, 1) from (seed, index): splitmix64, so that two
// stages draw the same inputs without a random-number library.
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

// z[r, c] += b[r], then max(·, 0) if relu; column-major rows × cols.
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

// db[r] += Σ_c g[r, c]: one block per row; accumulates over micro-batches.
__global__ void bias_grad_add(const float *g, float *db, int rows, int cols)
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
        db[r] += partial[0];
}

// The ReLU's backward: no gradient where the activation was clipped to zero.
__global__ void relu_backward(float *g, const float *act, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        if (act[i] <= 0.0f)
            g[i] = 0.0f;
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

// ---- the pipeline ----------------------------------------------------------

// One stage on one GPU. Parameters: per layer W (H×H) then b (H), in one
// buffer, gradients alike. act[m][l] is micro-batch m's input to layer l
// (act[m][0] arrives from the previous stage), kept for backward.
struct stage {
    int dev = 0, index = 0;
    bool first = false, last = false;
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    cublasHandle_t blas = nullptr;
    ncclComm_t nccl = nullptr;
    float *params = nullptr, *grads = nullptr, *adam_m = nullptr, *adam_v = nullptr;
    std::vector<std::vector<float *>> act;
    float *grad_in = nullptr, *grad_out = nullptr; // gradient at the stage's output / input
    float *teacher = nullptr, *target = nullptr, *loss = nullptr;
    std::vector<float *> loss_grad; // last stage: per micro-batch, from forward to backward
};

struct pipeline {
    options opt;
    size_t layer_floats = 0, stage_floats = 0, act_floats = 0;
    std::vector<stage> stages;
};

static float *weight(float *base, const pipeline &p, int l) { return base + l * p.layer_floats; }
static float *bias(float *base, const pipeline &p, int l) { return base + l * p.layer_floats + (size_t)p.opt.hidden * p.opt.hidden; }

static void gemm(const stage &s, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const float *A,
                 const float *B, float beta, float *C)
{
    const float one = 1.0f;
    int lda = ta == CUBLAS_OP_N ? m : k, ldb = tb == CUBLAS_OP_N ? k : n;
    BLAS_CHECK(cublasGemmEx(s.blas, ta, tb, m, n, k, &one, A, CUDA_R_32F, lda, B, CUDA_R_32F, ldb, &beta, C,
                            CUDA_R_32F, m, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
}

static void setup(stage &s, pipeline &p, int index, int nstages)
{
    const options &o = p.opt;
    const int H = o.hidden, L = o.layers_per_stage;
    s.dev = s.index = index;
    s.first = index == 0;
    s.last = index == nstages - 1;
    CUDA_CHECK(cudaSetDevice(s.dev));
    CUDA_CHECK(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&s.start));
    CUDA_CHECK(cudaEventCreate(&s.stop));
    BLAS_CHECK(cublasCreate(&s.blas));
    BLAS_CHECK(cublasSetStream(s.blas, s.stream));
    CUDA_CHECK(cudaMalloc(&s.params, p.stage_floats * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&s.grads, p.stage_floats * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&s.adam_m, p.stage_floats * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&s.adam_v, p.stage_floats * sizeof(float)));
    CUDA_CHECK(cudaMemsetAsync(s.adam_m, 0, p.stage_floats * sizeof(float), s.stream));
    CUDA_CHECK(cudaMemsetAsync(s.adam_v, 0, p.stage_floats * sizeof(float), s.stream));
    s.act.assign(o.micro_batches, std::vector<float *>(L + 1));
    for (auto &per_mb : s.act)
        for (float *&a : per_mb)
            CUDA_CHECK(cudaMalloc(&a, p.act_floats * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&s.grad_in, p.act_floats * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&s.grad_out, p.act_floats * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&s.loss, sizeof(float)));
    for (int l = 0; l < L; l++) {
        bool final_layer = s.last && l == L - 1;
        size_t n = (size_t)H * H;
        fill_uniform<<<grid_for(n), 256, 0, s.stream>>>(weight(s.params, p, l), n,
                                                        sqrtf((final_layer ? 3.0f : 6.0f) / H),
                                                        1000 + (uint64_t)index * L + l);
        CUDA_CHECK(cudaMemsetAsync(bias(s.params, p, l), 0, H * sizeof(float), s.stream));
    }
    if (s.last) {
        CUDA_CHECK(cudaMalloc(&s.teacher, (size_t)H * H * sizeof(float)));
        CUDA_CHECK(cudaMalloc(&s.target, p.act_floats * sizeof(float)));
        fill_uniform<<<grid_for((size_t)H * H), 256, 0, s.stream>>>(s.teacher, (size_t)H * H, sqrtf(3.0f / H), 7);
        s.loss_grad.resize(o.micro_batches);
        for (float *&g : s.loss_grad)
            CUDA_CHECK(cudaMalloc(&g, p.act_floats * sizeof(float)));
    }
    CUDA_CHECK(cudaGetLastError());
}

// Micro-batch m's inputs in step `step`, drawn identically wherever asked.
static void draw_inputs(const stage &s, const pipeline &p, float *x, int step, int m)
{
    fill_uniform<<<grid_for(p.act_floats), 256, 0, s.stream>>>(x, p.act_floats, sqrtf(3.0f),
                                                               ((uint64_t)step << 20) + (uint64_t)m + 1);
}

static void forward(stage &s, const pipeline &p, int step, int m)
{
    const options &o = p.opt;
    const int H = o.hidden, B = o.micro_batch, L = o.layers_per_stage;
    CUDA_CHECK(cudaSetDevice(s.dev));
    std::vector<float *> &a = s.act[m];
    if (s.first)
        draw_inputs(s, p, a[0], step, m);
    for (int l = 0; l < L; l++) {
        bool final_layer = s.last && l == L - 1;
        gemm(s, CUBLAS_OP_N, CUBLAS_OP_N, H, B, H, weight(s.params, p, l), a[l], 0.0f, a[l + 1]);
        bias_act<<<grid_for(p.act_floats), 256, 0, s.stream>>>(a[l + 1], bias(s.params, p, l), H, p.act_floats,
                                                               !final_layer);
    }
    if (s.last) {
        // the teacher's targets from this micro-batch's inputs, redrawn here
        draw_inputs(s, p, s.grad_in, step, m);
        gemm(s, CUBLAS_OP_N, CUBLAS_OP_N, H, B, H, s.teacher, s.grad_in, 0.0f, s.target);
        mse_loss_grad<<<grid_for(p.act_floats), 256, 0, s.stream>>>(a[L], s.target, s.loss_grad[m], s.loss,
                                                                    p.act_floats, 1.0f / B);
    }
    CUDA_CHECK(cudaGetLastError());
}

// Backward of micro-batch m from the gradient in grad_in; leaves the
// gradient of the stage's input in grad_out (not computed on stage 0).
static void backward(stage &s, const pipeline &p, int m)
{
    const options &o = p.opt;
    const int H = o.hidden, B = o.micro_batch, L = o.layers_per_stage;
    CUDA_CHECK(cudaSetDevice(s.dev));
    std::vector<float *> &a = s.act[m];
    float *g = s.grad_in, *other = s.grad_out;
    for (int l = L - 1; l >= 0; l--) {
        gemm(s, CUBLAS_OP_N, CUBLAS_OP_T, H, H, B, g, a[l], 1.0f, weight(s.grads, p, l));
        bias_grad_add<<<H, 256, 0, s.stream>>>(g, bias(s.grads, p, l), H, B);
        if (l == 0 && s.first)
            break;
        gemm(s, CUBLAS_OP_T, CUBLAS_OP_N, H, B, H, weight(s.params, p, l), g, 0.0f, other);
        relu_backward<<<grid_for(p.act_floats), 256, 0, s.stream>>>(other, a[l], p.act_floats);
        std::swap(g, other);
    }
    // after an odd number of swaps the result sits in grad_in: move it to grad_out
    if (g != s.grad_out && !s.first)
        CUDA_CHECK(cudaMemcpyAsync(s.grad_out, g, p.act_floats * sizeof(float), cudaMemcpyDeviceToDevice, s.stream));
    CUDA_CHECK(cudaGetLastError());
}

// from → to, one send/receive pair as one group.
static void transfer(stage &from, float *src, stage &to, float *dst, size_t floats)
{
    NCCL_CHECK(ncclGroupStart());
    NCCL_CHECK(ncclSend(src, floats, ncclFloat, to.index, from.nccl, from.stream));
    NCCL_CHECK(ncclRecv(dst, floats, ncclFloat, from.index, to.nccl, to.stream));
    NCCL_CHECK(ncclGroupEnd());
}

int main(int argc, char **argv)
{
    options o = parse_options(argc, argv);
    int visible = 0;
    CUDA_CHECK(cudaGetDeviceCount(&visible));
    int n = o.gpus ? o.gpus : visible;
    if (n > visible || n < 1) {
        std::fprintf(stderr, "pipeline_parallel: %d GPUs asked for, %d visible\n", n, visible);
        return 2;
    }
    pipeline p;
    p.opt = o;
    p.layer_floats = (size_t)o.hidden * o.hidden + o.hidden;
    p.stage_floats = p.layer_floats * o.layers_per_stage;
    p.act_floats = (size_t)o.hidden * o.micro_batch;
    std::printf("# pipeline_parallel: %d stage(s) x %d layer(s) of %d, %d micro-batches of %d, GPipe, "
                "%.2f MiB of activations per transfer, lr %g\n",
                n, o.layers_per_stage, o.hidden, o.micro_batches, o.micro_batch, p.act_floats * 4.0 / 1048576.0,
                o.lr);
    p.stages.resize(n);
    for (int s = 0; s < n; s++)
        setup(p.stages[s], p, s, n);
    std::vector<ncclComm_t> comms(n);
    NCCL_CHECK(ncclCommInitAll(comms.data(), n, nullptr));
    for (int s = 0; s < n; s++)
        p.stages[s].nccl = comms[s];
    float *loss_host = nullptr;
    CUDA_CHECK(cudaMallocHost(&loss_host, sizeof(float)));
    for (stage &s : p.stages) {
        CUDA_CHECK(cudaSetDevice(s.dev));
        CUDA_CHECK(cudaStreamSynchronize(s.stream));
    }

    stage &first = p.stages.front(), &last = p.stages.back();
    double total_ms = 0.0;
    for (int step = 0; step < o.steps; step++) {
        auto t0 = std::chrono::steady_clock::now();
        for (stage &s : p.stages) {
            CUDA_CHECK(cudaSetDevice(s.dev));
            CUDA_CHECK(cudaEventRecord(s.start, s.stream));
            CUDA_CHECK(cudaMemsetAsync(s.grads, 0, p.stage_floats * sizeof(float), s.stream));
        }
        CUDA_CHECK(cudaSetDevice(last.dev));
        CUDA_CHECK(cudaMemsetAsync(last.loss, 0, sizeof(float), last.stream));
        // GPipe: every micro-batch forward through all stages, then every backward
        for (int m = 0; m < o.micro_batches; m++)
            for (int s = 0; s < n; s++) {
                forward(p.stages[s], p, step, m);
                if (s + 1 < n)
                    transfer(p.stages[s], p.stages[s].act[m][o.layers_per_stage], p.stages[s + 1],
                             p.stages[s + 1].act[m][0], p.act_floats);
            }
        for (int m = o.micro_batches - 1; m >= 0; m--)
            for (int s = n - 1; s >= 0; s--) {
                stage &st = p.stages[s];
                if (st.last) { // micro-batch m's loss gradient, kept since its forward
                    CUDA_CHECK(cudaSetDevice(st.dev));
                    CUDA_CHECK(cudaMemcpyAsync(st.grad_in, st.loss_grad[m], p.act_floats * sizeof(float),
                                               cudaMemcpyDeviceToDevice, st.stream));
                }
                backward(st, p, m);
                if (s > 0)
                    transfer(st, st.grad_out, p.stages[s - 1], p.stages[s - 1].grad_in, p.act_floats);
            }
        for (stage &s : p.stages) {
            CUDA_CHECK(cudaSetDevice(s.dev));
            adam_update<<<grid_for(p.stage_floats), 256, 0, s.stream>>>(
                s.params, s.grads, s.adam_m, s.adam_v, p.stage_floats, o.lr, 1.0f / o.micro_batches,
                1.0f - powf(0.9f, step + 1), 1.0f - powf(0.999f, step + 1));
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaEventRecord(s.stop, s.stream));
        }
        CUDA_CHECK(cudaSetDevice(last.dev));
        CUDA_CHECK(cudaMemcpyAsync(loss_host, last.loss, sizeof(float), cudaMemcpyDeviceToHost, last.stream));
        for (stage &s : p.stages) {
            CUDA_CHECK(cudaSetDevice(s.dev));
            CUDA_CHECK(cudaStreamSynchronize(s.stream));
        }
        auto t1 = std::chrono::steady_clock::now();
        float first_ms = 0.0f, last_ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&first_ms, first.start, first.stop));
        CUDA_CHECK(cudaEventElapsedTime(&last_ms, last.start, last.stop));
        double host_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
        std::printf("step %3d  loss %.6f  stage0 %.3f ms  stage%d %.3f ms  host %.3f ms\n", step,
                    *loss_host / o.micro_batches, first_ms, n - 1, last_ms, host_ms);
        if (step > 0 || o.steps == 1)
            total_ms += host_ms;
    }
    int timed = o.steps > 1 ? o.steps - 1 : 1;
    double mean_ms = total_ms / timed;
    std::printf("pipeline_parallel: %d stage(s), mean step %.3f ms over %d step(s), %.0f samples/s\n", n, mean_ms,
                timed, mean_ms > 0 ? (double)o.micro_batch * o.micro_batches * 1e3 / mean_ms : 0.0);

    for (stage &s : p.stages) {
        CUDA_CHECK(cudaSetDevice(s.dev));
        NCCL_CHECK(ncclCommDestroy(s.nccl));
        BLAS_CHECK(cublasDestroy(s.blas));
        for (auto &per_mb : s.act)
            for (float *a : per_mb)
                CUDA_CHECK(cudaFree(a));
        for (float *q : {s.params, s.grads, s.adam_m, s.adam_v, s.grad_in, s.grad_out, s.teacher, s.target, s.loss})
            if (q)
                CUDA_CHECK(cudaFree(q));
        for (float *q : s.loss_grad)
            CUDA_CHECK(cudaFree(q));
        CUDA_CHECK(cudaEventDestroy(s.start));
        CUDA_CHECK(cudaEventDestroy(s.stop));
        CUDA_CHECK(cudaStreamDestroy(s.stream));
    }
    CUDA_CHECK(cudaFreeHost(loss_host));
    return 0;
}
