/*
 * CUDA graphs under hysim (interpose/cudart/cudart_graphs.c, cudart_capture.c): an
 * ordinary C program built against the CUDA 13 and NCCL headers, linked to
 * the replacement libraries, run by `hysim run` on a scenario whose kernels
 * all take compute.default_kernel_us (K) and whose host time is zero, so
 * every simulated duration below is arithmetic in K.
 *
 * usage: graphs_test capture K | explicit K | errors | nccl [timed]
 *   capture   a fork/join DAG on two streams issued directly, then captured
 *             and launched once and three times: K + max(2K, K) + K each;
 *             and a copy, a memset and a cuBLAS GEMM: the same time captured
 *   explicit  the explicit API: A → {B, C} → D, clone, update, node removal
 *   errors    the error codes of calls that a capture forbids
 *   nccl      a 2-GPU graph of two captured all-reduce ranks and a send/recv
 *             launched twice: new collectives (sequence numbers 1 and 2
 *             between direct calls 0 and 3); with "timed", each launch takes
 *             the direct calls' time
 * Exit status 0 when every check passed.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize);

static int failures;

#define HS_CHECK_COUNTS
#include "test_check.h"
#include "cuda_test_check.h"

#define CHECK_NCCL(call) CHECK((call) == ncclSuccess, "%s failed", #call)

static double g_k_ms; /* one kernel's simulated time */

static void kernel_stub(void) {}

static void register_kernel(void)
{
    static char fatbin[64];
    void **module = __cudaRegisterFatBinary(fatbin);
    __cudaRegisterFunction(module, (const char *)kernel_stub, "_Z4workv", "_Z4workv", -1, NULL, NULL, NULL, NULL, NULL);
}

static void kernel(cudaStream_t s)
{
    CHECK_CUDA(cudaLaunchKernel((const void *)kernel_stub, (dim3){4, 1, 1}, (dim3){128, 1, 1}, NULL, 0, s),
               cudaSuccess);
}

/* Simulated ms between two events on s around run(arg), after a synchronize. */
static float timed(cudaStream_t s, void (*run)(void *), void *arg)
{
    cudaEvent_t a, b;
    float ms = -1;
    CHECK_CUDA(cudaEventCreate(&a), cudaSuccess);
    CHECK_CUDA(cudaEventCreate(&b), cudaSuccess);
    CHECK_CUDA(cudaEventRecord(a, s), cudaSuccess);
    run(arg);
    CHECK_CUDA(cudaEventRecord(b, s), cudaSuccess);
    CHECK_CUDA(cudaEventSynchronize(b), cudaSuccess);
    CHECK_CUDA(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms;
}

static int near(double got, double want) { return fabs(got - want) < 1e-4 * want + 1e-6; }

/* ---- host functions in graphs ---- */

/* What a host function saw: how often it ran, and the simulated time of its last run. */
typedef struct host_calls {
    int n;
    double at_ms;
} host_calls;
static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
static void CUDART_CB record_call(void *arg)
{
    host_calls *h = arg;
    h->n++;
    h->at_ms = now_ms();
}

/*
 * cudaLaunchHostFunc in a capture is a host node between the captured
 * kernels; cudaGraphAddHostNode the same in an explicit graph. Each launch
 * runs the function once the kernel before it is done, and the kernel after
 * it follows.
 */
static void test_host_nodes(void)
{
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    host_calls h = {0}, other = {0};
    cudaGraph_t g;
    CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    kernel(s);
    CHECK_CUDA(cudaLaunchHostFunc(s, record_call, &h), cudaSuccess);
    kernel(s);
    CHECK_CUDA(cudaStreamEndCapture(s, &g), cudaSuccess);
    CHECK(h.n == 0, "a captured host function ran %d times at its capture", h.n);
    cudaGraphNode_t nodes[4];
    size_t n = 4;
    enum cudaGraphNodeType t = cudaGraphNodeTypeEmpty;
    CHECK_CUDA(cudaGraphGetNodes(g, nodes, &n), cudaSuccess);
    CHECK(n == 3 && cudaGraphNodeGetType(nodes[1], &t) == cudaSuccess && t == cudaGraphNodeTypeHost,
          "captured %zu nodes, the second of type %d", n, t);
    struct cudaHostNodeParams p = {0};
    CHECK_CUDA(cudaGraphHostNodeGetParams(nodes[1], &p), cudaSuccess);
    CHECK(p.fn == record_call && p.userData == &h, "host node parameters");
    cudaGraphExec_t x;
    CHECK_CUDA(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
    for (int i = 1; i <= 2; i++) {
        double t0 = now_ms();
        CHECK_CUDA(cudaGraphLaunch(x, s), cudaSuccess);
        CHECK_CUDA(cudaStreamSynchronize(s), cudaSuccess);
        CHECK(h.n == i && near(h.at_ms - t0, g_k_ms), "launch %d: %d calls, the last %.6f ms in, expected after %.6f",
              i, h.n, h.at_ms - t0, g_k_ms);
        CHECK(near(now_ms() - t0, 2 * g_k_ms), "launch %d took %.6f ms, expected %.6f", i, now_ms() - t0, 2 * g_k_ms);
    }
    /* an executable graph's host node takes new parameters */
    p.userData = &other;
    CHECK_CUDA(cudaGraphExecHostNodeSetParams(x, nodes[1], &p), cudaSuccess);
    CHECK_CUDA(cudaGraphLaunch(x, s), cudaSuccess);
    CHECK_CUDA(cudaStreamSynchronize(s), cudaSuccess);
    CHECK(h.n == 2 && other.n == 1, "after new parameters: %d and %d calls", h.n, other.n);
    CHECK_CUDA(cudaGraphExecDestroy(x), cudaSuccess);
    CHECK_CUDA(cudaGraphDestroy(g), cudaSuccess);

    /* explicit: root host node, then a kernel depending on it */
    cudaGraphNode_t host, k;
    struct cudaHostNodeParams hp = {record_call, &h};
    struct cudaKernelNodeParams kp = {.func = (void *)kernel_stub, .gridDim = {4, 1, 1}, .blockDim = {128, 1, 1}};
    CHECK_CUDA(cudaGraphCreate(&g, 0), cudaSuccess);
    CHECK_CUDA(cudaGraphAddHostNode(&host, g, NULL, 0, &hp), cudaSuccess);
    CHECK_CUDA(cudaGraphAddKernelNode(&k, g, &host, 1, &kp), cudaSuccess);
    hp.fn = NULL;
    CHECK_CUDA(cudaGraphAddHostNode(&host, g, NULL, 0, &hp), cudaErrorInvalidValue);
    CHECK_CUDA(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
    double t0 = now_ms();
    CHECK_CUDA(cudaGraphLaunch(x, s), cudaSuccess);
    CHECK_CUDA(cudaStreamSynchronize(s), cudaSuccess);
    CHECK(h.n == 3 && near(h.at_ms - t0 + 1, 1) && near(now_ms() - t0, g_k_ms),
          "explicit host node: %d calls, at %.6f ms, launch %.6f ms", h.n, h.at_ms - t0, now_ms() - t0);
    CHECK_CUDA(cudaGraphExecDestroy(x), cudaSuccess);
    CHECK_CUDA(cudaGraphDestroy(g), cudaSuccess);
    CHECK_CUDA(cudaStreamDestroy(s), cudaSuccess);
}

/* ---- capture ---- */

/* A 2D memset of 64-byte rows, 16384 of them (pitched rows), on s. */
typedef struct memset_2d {
    void *p;
    size_t pitch;
    cudaStream_t s;
    cudaGraphExec_t exec;
} memset_2d;
static void issue_memset_2d(void *arg)
{
    memset_2d *m = arg;
    CHECK_CUDA(cudaMemset2DAsync(m->p, m->pitch, 0, 64, 16384, m->s), cudaSuccess);
}
static void issue_memset_1d(void *arg)
{
    memset_2d *m = arg;
    CHECK_CUDA(cudaMemsetAsync(m->p, 0, 64 * 16384, m->s), cudaSuccess);
}
static void launch_memset_2d(void *arg)
{
    memset_2d *m = arg;
    CHECK_CUDA(cudaGraphLaunch(m->exec, m->s), cudaSuccess);
}

/* A 2D copy of the pitched rows into pinned host rows of 128 bytes (64 written, 64 padding). */
typedef struct copy_2d {
    void *dev;
    size_t pitch;
    char *host;
    cudaStream_t s;
    cudaGraphExec_t exec;
} copy_2d;
static void issue_copy_2d(void *arg)
{
    copy_2d *c = arg;
    CHECK_CUDA(cudaMemcpy2DAsync(c->host, 128, c->dev, c->pitch, 64, 4096, cudaMemcpyDeviceToHost, c->s), cudaSuccess);
}
static void launch_copy_2d(void *arg)
{
    copy_2d *c = arg;
    CHECK_CUDA(cudaGraphLaunch(c->exec, c->s), cudaSuccess);
}

/* Captured or as an explicit memcpy node of pitched pointers, a 2D copy keeps its rows: the same time as
 * issued directly, and each launch writes the host's rows (zeros: device memory) but not the padding. */
static void test_copy_2d(void)
{
    copy_2d c = {0};
    CHECK_CUDA(cudaMallocPitch(&c.dev, &c.pitch, 64, 4096), cudaSuccess);
    CHECK_CUDA(cudaMallocHost((void **)&c.host, 128 * 4096), cudaSuccess);
    CHECK_CUDA(cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking), cudaSuccess);
    float direct = timed(c.s, issue_copy_2d, &c);
    cudaGraph_t g;
    CHECK_CUDA(cudaStreamBeginCapture(c.s, cudaStreamCaptureModeGlobal), cudaSuccess);
    memset(c.host, 0x5a, 128 * 4096);
    issue_copy_2d(&c);
    CHECK_CUDA(cudaStreamEndCapture(c.s, &g), cudaSuccess);
    CHECK(c.host[0] == 0x5a, "a captured 2D copy wrote the host at its capture");
    CHECK_CUDA(cudaGraphInstantiate(&c.exec, g, 0), cudaSuccess);
    float captured = timed(c.s, launch_copy_2d, &c);
    CHECK(near(captured, direct), "captured 2D copy %.6f ms, issued directly %.6f", captured, direct);
    CHECK(c.host[0] == 0 && c.host[128 * 4095 + 63] == 0 && c.host[64] == 0x5a && c.host[128 * 4095 + 127] == 0x5a,
          "the launch's 2D copy wrote the rows and only the rows");
    CHECK_CUDA(cudaGraphExecDestroy(c.exec), cudaSuccess);
    CHECK_CUDA(cudaGraphDestroy(g), cudaSuccess);
    struct cudaMemcpy3DParms p = {0};
    p.srcPtr = (struct cudaPitchedPtr){.ptr = c.dev, .pitch = c.pitch, .xsize = 64, .ysize = 4096};
    p.dstPtr = (struct cudaPitchedPtr){.ptr = c.host, .pitch = 128, .xsize = 64, .ysize = 4096};
    p.extent = (struct cudaExtent){.width = 64, .height = 4096, .depth = 1};
    p.kind = cudaMemcpyDeviceToHost;
    cudaGraphNode_t node;
    CHECK_CUDA(cudaGraphCreate(&g, 0), cudaSuccess);
    CHECK_CUDA(cudaGraphAddMemcpyNode(&node, g, NULL, 0, &p), cudaSuccess);
    CHECK_CUDA(cudaGraphInstantiate(&c.exec, g, 0), cudaSuccess);
    float node_ms = timed(c.s, launch_copy_2d, &c);
    CHECK(near(node_ms, direct), "explicit pitched memcpy node %.6f ms, issued directly %.6f", node_ms, direct);
    CHECK_CUDA(cudaGraphExecDestroy(c.exec), cudaSuccess);
    CHECK_CUDA(cudaGraphDestroy(g), cudaSuccess);
    CHECK_CUDA(cudaStreamDestroy(c.s), cudaSuccess);
    CHECK_CUDA(cudaFreeHost(c.host), cudaSuccess);
    CHECK_CUDA(cudaFree(c.dev), cudaSuccess);
}

/* Captured or as an explicit memset node, a 2D memset keeps its rows: the same time as issued directly. */
static void test_memset_2d(void)
{
    memset_2d m = {0};
    CHECK_CUDA(cudaMallocPitch(&m.p, &m.pitch, 64, 16384), cudaSuccess);
    CHECK_CUDA(cudaStreamCreateWithFlags(&m.s, cudaStreamNonBlocking), cudaSuccess);
    float direct = timed(m.s, issue_memset_2d, &m), flat = timed(m.s, issue_memset_1d, &m);
    CHECK(direct > flat + 0.005, "2D memset %.6f ms, not its rows' time beyond the 1D one's %.6f", direct, flat);
    cudaGraph_t g;
    CHECK_CUDA(cudaStreamBeginCapture(m.s, cudaStreamCaptureModeGlobal), cudaSuccess);
    issue_memset_2d(&m);
    CHECK_CUDA(cudaStreamEndCapture(m.s, &g), cudaSuccess);
    CHECK_CUDA(cudaGraphInstantiate(&m.exec, g, 0), cudaSuccess);
    float captured = timed(m.s, launch_memset_2d, &m);
    CHECK(near(captured, direct), "captured 2D memset %.6f ms, issued directly %.6f", captured, direct);
    CHECK_CUDA(cudaGraphExecDestroy(m.exec), cudaSuccess);
    CHECK_CUDA(cudaGraphDestroy(g), cudaSuccess);
    struct cudaMemsetParams p = {
        .dst = m.p, .pitch = m.pitch, .value = 0, .elementSize = 1, .width = 64, .height = 16384};
    cudaGraphNode_t node;
    CHECK_CUDA(cudaGraphCreate(&g, 0), cudaSuccess);
    CHECK_CUDA(cudaGraphAddMemsetNode(&node, g, NULL, 0, &p), cudaSuccess);
    CHECK_CUDA(cudaGraphInstantiate(&m.exec, g, 0), cudaSuccess);
    float node_ms = timed(m.s, launch_memset_2d, &m);
    CHECK(near(node_ms, direct), "explicit 2D memset node %.6f ms, issued directly %.6f", node_ms, direct);
    CHECK_CUDA(cudaGraphExecDestroy(m.exec), cudaSuccess);
    CHECK_CUDA(cudaGraphDestroy(g), cudaSuccess);
    CHECK_CUDA(cudaStreamDestroy(m.s), cudaSuccess);
    CHECK_CUDA(cudaFree(m.p), cudaSuccess);
}

typedef struct dag {
    cudaStream_t s0, s1;
    cudaEvent_t fork, join;
    cudaGraphExec_t exec;
    int launches;
} dag;

/* s0: A, fork; s1: B, B; s0: C; s1: join; s0 waits, D. */
static void issue_dag(void *arg)
{
    dag *d = arg;
    kernel(d->s0);
    CHECK_CUDA(cudaEventRecord(d->fork, d->s0), cudaSuccess);
    CHECK_CUDA(cudaStreamWaitEvent(d->s1, d->fork, 0), cudaSuccess);
    kernel(d->s1);
    kernel(d->s1);
    kernel(d->s0);
    CHECK_CUDA(cudaEventRecord(d->join, d->s1), cudaSuccess);
    CHECK_CUDA(cudaStreamWaitEvent(d->s0, d->join, 0), cudaSuccess);
    kernel(d->s0);
}

static void launch_dag(void *arg)
{
    dag *d = arg;
    for (int i = 0; i < d->launches; i++)
        CHECK_CUDA(cudaGraphLaunch(d->exec, d->s0), cudaSuccess);
}

/* The graph, then one more kernel on the launch stream: it runs after the whole graph. */
static void launch_then_kernel(void *arg)
{
    launch_dag(arg);
    kernel(((dag *)arg)->s0);
}

static void test_capture(void)
{
    dag d = {0};
    CHECK_CUDA(cudaStreamCreateWithFlags(&d.s0, cudaStreamNonBlocking), cudaSuccess);
    CHECK_CUDA(cudaStreamCreateWithFlags(&d.s1, cudaStreamNonBlocking), cudaSuccess);
    CHECK_CUDA(cudaEventCreateWithFlags(&d.fork, cudaEventDisableTiming), cudaSuccess);
    CHECK_CUDA(cudaEventCreateWithFlags(&d.join, cudaEventDisableTiming), cudaSuccess);
    double want = 4 * g_k_ms; /* A + max(B + B, C) + D */

    float direct = timed(d.s0, issue_dag, &d);
    CHECK(near(direct, want), "issued directly: %.6f ms, expected %.6f", direct, want);

    cudaGraph_t g;
    enum cudaStreamCaptureStatus st;
    CHECK_CUDA(cudaStreamBeginCapture(d.s0, cudaStreamCaptureModeGlobal), cudaSuccess);
    issue_dag(&d);
    CHECK_CUDA(cudaStreamIsCapturing(d.s1, &st), cudaSuccess);
    CHECK(st == cudaStreamCaptureStatusActive, "the forked stream is not capturing (%d)", st);
    CHECK_CUDA(cudaStreamEndCapture(d.s0, &g), cudaSuccess);
    CHECK_CUDA(cudaStreamIsCapturing(d.s1, &st), cudaSuccess);
    CHECK(st == cudaStreamCaptureStatusNone, "the forked stream still captures after the end (%d)", st);

    size_t n = 0, roots = 0;
    CHECK_CUDA(cudaGraphGetNodes(g, NULL, &n), cudaSuccess);
    CHECK_CUDA(cudaGraphGetRootNodes(g, NULL, &roots), cudaSuccess);
    CHECK(n == 5 && roots == 1, "captured %zu nodes, %zu roots; expected 5 kernels, 1 root", n, roots);
    cudaGraphNode_t nodes[8];
    n = 8;
    CHECK_CUDA(cudaGraphGetNodes(g, nodes, &n), cudaSuccess);
    for (size_t i = 0; i < n; i++) {
        enum cudaGraphNodeType t;
        CHECK_CUDA(cudaGraphNodeGetType(nodes[i], &t), cudaSuccess);
        CHECK(t == cudaGraphNodeTypeKernel, "node %zu has type %d", i, t);
    }

    CHECK_CUDA(cudaGraphInstantiate(&d.exec, g, 0), cudaSuccess);
    CHECK_CUDA(cudaGraphUpload(d.exec, d.s0), cudaSuccess);
    d.launches = 1;
    float once = timed(d.s0, launch_dag, &d);
    CHECK(near(once, want), "one launch: %.6f ms, expected %.6f (issued directly: %.6f)", once, want, direct);
    d.launches = 3;
    float thrice = timed(d.s0, launch_dag, &d);
    CHECK(near(thrice, 3 * want), "three launches: %.6f ms, expected %.6f", thrice, 3 * want);
    d.launches = 1;
    float then = timed(d.s0, launch_then_kernel, &d);
    CHECK(near(then, want + g_k_ms), "a launch then a kernel: %.6f ms, expected %.6f", then, want + g_k_ms);
    /* launched on the other stream, the graph still waits for that stream's earlier work */
    cudaGraphExec_t exec2;
    CHECK_CUDA(cudaGraphInstantiateWithFlags(&exec2, g, 0), cudaSuccess);
    CHECK_CUDA(cudaGraphLaunch(exec2, d.s1), cudaSuccess);
    CHECK_CUDA(cudaStreamSynchronize(d.s1), cudaSuccess);
    CHECK_CUDA(cudaGraphExecDestroy(exec2), cudaSuccess);
    CHECK_CUDA(cudaGraphExecDestroy(exec2), cudaErrorInvalidValue);

    CHECK_CUDA(cudaGraphExecDestroy(d.exec), cudaSuccess);
    CHECK_CUDA(cudaGraphDestroy(g), cudaSuccess);

    /* a long capture (more ops than one batch): a chain of LONG kernels */
    enum { LONG = 1000 };
    CHECK_CUDA(cudaStreamBeginCapture(d.s0, cudaStreamCaptureModeGlobal), cudaSuccess);
    for (int i = 0; i < LONG; i++)
        kernel(d.s0);
    CHECK_CUDA(cudaStreamEndCapture(d.s0, &g), cudaSuccess);
    CHECK_CUDA(cudaGraphInstantiate(&d.exec, g, 0), cudaSuccess);
    float chain = timed(d.s0, launch_dag, &d);
    CHECK(near(chain, LONG * g_k_ms), "%d captured kernels: %.6f ms, expected %.6f", LONG, chain, LONG * g_k_ms);
    CHECK_CUDA(cudaGraphExecDestroy(d.exec), cudaSuccess);
    CHECK_CUDA(cudaGraphDestroy(g), cudaSuccess);
    CHECK_CUDA(cudaStreamSynchronize(d.s0), cudaSuccess);
    printf("capture: direct %.3f ms, one launch %.3f ms, three %.3f ms; %d kernels %.3f ms\n", direct, once, thrice,
           LONG, chain);
}

/* A host-to-device copy, a memset and a cuBLAS SGEMM on one stream. */
typedef struct mixed {
    cudaStream_t s;
    cublasHandle_t blas;
    float *a, *b, *c, *host;
    cudaGraphExec_t exec;
} mixed;

#define GEMM_N 1024

static void issue_mixed(void *arg)
{
    mixed *m = arg;
    const float one = 1, zero = 0;
    size_t bytes = (size_t)GEMM_N * GEMM_N * sizeof(float);
    CHECK_CUDA(cudaMemcpyAsync(m->a, m->host, bytes, cudaMemcpyHostToDevice, m->s), cudaSuccess);
    CHECK_CUDA(cudaMemsetAsync(m->c, 0, bytes, m->s), cudaSuccess);
    CHECK(cublasSgemm(m->blas, CUBLAS_OP_N, CUBLAS_OP_N, GEMM_N, GEMM_N, GEMM_N, &one, m->a, GEMM_N, m->b, GEMM_N,
                      &zero, m->c, GEMM_N) == CUBLAS_STATUS_SUCCESS,
          "cublasSgemm failed");
}

static void launch_mixed(void *arg)
{
    mixed *m = arg;
    CHECK_CUDA(cudaGraphLaunch(m->exec, m->s), cudaSuccess);
    CHECK_CUDA(cudaGraphLaunch(m->exec, m->s), cudaSuccess);
}

static void test_capture_library(void)
{
    mixed m = {0};
    size_t bytes = (size_t)GEMM_N * GEMM_N * sizeof(float);
    CHECK_CUDA(cudaStreamCreate(&m.s), cudaSuccess);
    CHECK(cublasCreate(&m.blas) == CUBLAS_STATUS_SUCCESS && cublasSetStream(m.blas, m.s) == CUBLAS_STATUS_SUCCESS,
          "cuBLAS handle");
    CHECK_CUDA(cudaMalloc((void **)&m.a, bytes), cudaSuccess);
    CHECK_CUDA(cudaMalloc((void **)&m.b, bytes), cudaSuccess);
    CHECK_CUDA(cudaMalloc((void **)&m.c, bytes), cudaSuccess);
    CHECK_CUDA(cudaMallocHost((void **)&m.host, bytes), cudaSuccess);
    float direct = timed(m.s, issue_mixed, &m);

    cudaGraph_t g;
    CHECK_CUDA(cudaStreamBeginCapture(m.s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    issue_mixed(&m);
    CHECK_CUDA(cudaStreamEndCapture(m.s, &g), cudaSuccess);
    cudaGraphNode_t nodes[4];
    size_t n = 4;
    CHECK_CUDA(cudaGraphGetNodes(g, nodes, &n), cudaSuccess);
    enum cudaGraphNodeType want[] = {cudaGraphNodeTypeMemcpy, cudaGraphNodeTypeMemset, cudaGraphNodeTypeKernel};
    CHECK(n == 3, "captured %zu nodes, expected a copy, a memset and a GEMM", n);
    for (size_t i = 0; i < n && i < 3; i++) {
        enum cudaGraphNodeType t;
        CHECK_CUDA(cudaGraphNodeGetType(nodes[i], &t), cudaSuccess);
        CHECK(t == want[i], "node %zu has type %d, expected %d", i, t, want[i]);
    }
    CHECK_CUDA(cudaGraphInstantiate(&m.exec, g, 0), cudaSuccess);
    float twice = timed(m.s, launch_mixed, &m);
    /* the second launch's copy waits behind the first's GEMM, which hides 1.3 us of its 4 us fixed cost (a host
     * copy queued behind other work, bridge/daemon/timeline.c): the only difference from two direct issues */
    CHECK(direct > 0 && near(twice, 2 * direct - 0.0013),
          "copy, memset and GEMM launched twice: %.6f ms, directly %.6f ms", twice, direct);
    CHECK_CUDA(cudaGraphExecDestroy(m.exec), cudaSuccess);
    CHECK_CUDA(cudaGraphDestroy(g), cudaSuccess);
    cublasDestroy(m.blas);
    printf("capture: copy, memset and GEMM %.3f ms directly, launched twice %.3f ms\n", direct, twice);
}

/* ---- explicit graphs ---- */

typedef struct launch_arg {
    cudaGraphExec_t exec;
    cudaStream_t s;
} launch_arg;

static void launch_one(void *arg)
{
    launch_arg *l = arg;
    CHECK_CUDA(cudaGraphLaunch(l->exec, l->s), cudaSuccess);
}

static void test_explicit(void)
{
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreate(&s), cudaSuccess);
    cudaGraph_t g;
    CHECK_CUDA(cudaGraphCreate(&g, 0), cudaSuccess);
    struct cudaKernelNodeParams kp = {0};
    kp.func = (void *)kernel_stub;
    kp.gridDim = (dim3){8, 1, 1};
    kp.blockDim = (dim3){256, 1, 1};
    cudaGraphNode_t a, b, c, dd, empty, rec, wait, cp, ms;
    CHECK_CUDA(cudaGraphAddKernelNode(&a, g, NULL, 0, &kp), cudaSuccess);
    CHECK_CUDA(cudaGraphAddKernelNode(&b, g, &a, 1, &kp), cudaSuccess);
    CHECK_CUDA(cudaGraphAddKernelNode(&c, g, &a, 1, &kp), cudaSuccess);
    CHECK_CUDA(cudaGraphAddEmptyNode(&empty, g, (cudaGraphNode_t[]){b, c}, 2), cudaSuccess);
    CHECK_CUDA(cudaGraphAddKernelNode(&dd, g, &empty, 1, &kp), cudaSuccess);
    CHECK_CUDA(cudaGraphAddKernelNode(&dd, g, (cudaGraphNode_t[]){a, a}, 2, &kp), cudaErrorInvalidValue);
    kp.func = (void *)test_explicit; /* not a kernel */
    CHECK_CUDA(cudaGraphAddKernelNode(&dd, g, NULL, 0, &kp), cudaErrorInvalidDeviceFunction);
    kp.func = (void *)kernel_stub;

    /* an event recorded by the graph and waited on in it, a copy and a memset beside A */
    cudaEvent_t ev;
    CHECK_CUDA(cudaEventCreate(&ev), cudaSuccess);
    void *dev_buf, *host_buf = calloc(1, 4096);
    CHECK_CUDA(cudaMalloc(&dev_buf, 4096), cudaSuccess);
    CHECK_CUDA(cudaGraphAddEventRecordNode(&rec, g, &a, 1, ev), cudaSuccess);
    CHECK_CUDA(cudaGraphAddEventWaitNode(&wait, g, &rec, 1, ev), cudaSuccess);
    CHECK_CUDA(cudaGraphAddMemcpyNode1D(&cp, g, NULL, 0, dev_buf, host_buf, 64, cudaMemcpyHostToDevice), cudaSuccess);
    struct cudaMemsetParams mp = {.dst = dev_buf, .value = 0, .elementSize = 4, .width = 16, .height = 1};
    CHECK_CUDA(cudaGraphAddMemsetNode(&ms, g, &cp, 1, &mp), cudaSuccess);
    CHECK_CUDA(cudaGraphAddDependencies(g, &wait, &dd, NULL, 1), cudaSuccess);
    CHECK_CUDA(cudaGraphAddDependencies(g, &wait, &dd, NULL, 1), cudaErrorInvalidValue); /* already there */

    size_t n = 0, roots = 0;
    CHECK_CUDA(cudaGraphGetNodes(g, NULL, &n), cudaSuccess);
    CHECK_CUDA(cudaGraphGetRootNodes(g, NULL, &roots), cudaSuccess);
    CHECK(n == 9 && roots == 2, "%zu nodes, %zu roots; expected 9 and 2 (A, the copy)", n, roots);
    /* the edges, both ways, and as a whole; one removed and put back */
    cudaGraphNode_t nb[4] = {NULL, NULL, NULL, (cudaGraphNode_t)1};
    cudaGraphEdgeData ed[4];
    size_t k = 0;
    CHECK_CUDA(cudaGraphNodeGetDependencies(empty, NULL, NULL, &k), cudaSuccess);
    CHECK(k == 2, "the empty node's dependencies: %zu, expected 2", k);
    k = 4;
    memset(ed, 0x55, sizeof ed);
    CHECK_CUDA(cudaGraphNodeGetDependencies(empty, nb, ed, &k), cudaSuccess);
    CHECK(k == 2 && nb[0] == b && nb[1] == c && nb[2] == NULL && nb[3] == NULL && ed[1].type == 0 &&
              ed[1].from_port == 0,
          "the empty node's dependencies: %zu, B and C then NULL, plain edges", k);
    k = 4;
    CHECK_CUDA(cudaGraphNodeGetDependentNodes(a, nb, NULL, &k), cudaSuccess);
    CHECK(k == 3 && nb[0] == b && nb[1] == c && nb[2] == rec, "A's dependents: %zu (B, C, the record)", k);
    k = 1;
    CHECK_CUDA(cudaGraphNodeGetDependentNodes(a, nb, NULL, &k), cudaSuccess);
    CHECK(k == 1 && nb[0] == b, "A's first dependent, asked for one: %zu", k);
    size_t edges = 0;
    CHECK_CUDA(cudaGraphGetEdges(g, NULL, NULL, NULL, &edges), cudaSuccess);
    CHECK(edges == 9, "%zu edges, expected 9", edges);
    cudaGraphNode_t from[9], to[9];
    edges = 9;
    CHECK_CUDA(cudaGraphGetEdges(g, from, to, NULL, &edges), cudaSuccess);
    CHECK(from[0] == a && to[0] == b && from[2] == b && to[2] == empty, "edges in order: A->B first, B->empty third");
    CHECK_CUDA(cudaGraphGetEdges(g, from, NULL, NULL, &edges), cudaErrorInvalidValue);
    CHECK_CUDA(cudaGraphRemoveDependencies(g, &a, &c, NULL, 1), cudaSuccess);
    CHECK_CUDA(cudaGraphRemoveDependencies(g, &a, &c, NULL, 1), cudaErrorInvalidValue); /* gone */
    CHECK_CUDA(cudaGraphGetRootNodes(g, NULL, &roots), cudaSuccess);
    CHECK(roots == 3, "%zu roots after removing A->C, expected 3", roots);
    CHECK_CUDA(cudaGraphAddDependencies(g, &a, &c, NULL, 1), cudaSuccess);
    char dot[] = "/tmp/hysim_graph_XXXXXX";
    int fd = mkstemp(dot);
    CHECK(fd >= 0, "mkstemp");
    close(fd);
    CHECK_CUDA(cudaGraphDebugDotPrint(g, dot, 0), cudaSuccess);
    FILE *df = fopen(dot, "r");
    char text[4096] = {0};
    size_t read = df ? fread(text, 1, sizeof text - 1, df) : 0;
    if (df)
        fclose(df);
    unlink(dot);
    CHECK(read > 0 && strstr(text, "digraph") && strstr(text, "n0 -> n1;") && strstr(text, "memset") &&
              strstr(text, "grid 8x1x1 block 256x1x1"),
          "cudaGraphDebugDotPrint's file: %s", text);
    CHECK_CUDA(cudaGraphDebugDotPrint(g, "/nonexistent/dir/g.dot", 0), cudaErrorOperatingSystem);

    enum cudaGraphNodeType t;
    CHECK_CUDA(cudaGraphNodeGetType(ms, &t), cudaSuccess);
    CHECK(t == cudaGraphNodeTypeMemset, "memset node type %d", t);
    CHECK_CUDA(cudaGraphNodeGetType(empty, &t), cudaSuccess);
    CHECK(t == cudaGraphNodeTypeEmpty, "empty node type %d", t);
    struct cudaKernelNodeParams got;
    CHECK_CUDA(cudaGraphKernelNodeGetParams(b, &got), cudaSuccess);
    CHECK(got.func == (void *)kernel_stub && got.gridDim.x == 8 && got.blockDim.x == 256, "kernel node parameters");

    /* A, then B and C together, then D: three kernels' time (the copy and memset run beside them) */
    launch_arg l = {0};
    l.s = s;
    CHECK_CUDA(cudaGraphInstantiate(&l.exec, g, 0), cudaSuccess);
    float ms1 = timed(s, launch_one, &l);
    CHECK(near(ms1, 3 * g_k_ms), "explicit graph: %.6f ms, expected %.6f", ms1, 3 * g_k_ms);

    /* an update with the same topology is accepted; kernel parameters of the executable change */
    cudaGraph_t clone, other;
    CHECK_CUDA(cudaGraphClone(&clone, g), cudaSuccess);
    cudaGraphExecUpdateResultInfo info;
    CHECK_CUDA(cudaGraphExecUpdate(l.exec, clone, &info), cudaSuccess);
    CHECK(info.result == cudaGraphExecUpdateSuccess, "update result %d", info.result);
    kp.gridDim = (dim3){16, 1, 1};
    CHECK_CUDA(cudaGraphExecKernelNodeSetParams(l.exec, b, &kp), cudaSuccess);
    CHECK_CUDA(cudaGraphExecKernelNodeSetParams(l.exec, empty, &kp), cudaErrorInvalidValue);
    float ms2 = timed(s, launch_one, &l);
    CHECK(near(ms2, 3 * g_k_ms), "updated graph: %.6f ms, expected %.6f", ms2, 3 * g_k_ms);

    /* without C's branch, a different topology: refused */
    CHECK_CUDA(cudaGraphClone(&other, g), cudaSuccess);
    cudaGraphNode_t cn[16];
    size_t nn = 16;
    CHECK_CUDA(cudaGraphGetNodes(other, cn, &nn), cudaSuccess);
    CHECK_CUDA(cudaGraphDestroyNode(cn[2]), cudaSuccess); /* C */
    nn = 0;
    CHECK_CUDA(cudaGraphGetNodes(other, NULL, &nn), cudaSuccess);
    CHECK(nn == 8, "%zu nodes after destroying one", nn);
    CHECK_CUDA(cudaGraphExecUpdate(l.exec, other, &info), cudaErrorGraphExecUpdateFailure);
    CHECK(info.result == cudaGraphExecUpdateErrorTopologyChanged, "update result %d", info.result);

    /* the clone without C still runs A, B, D in a row */
    launch_arg l2 = {0};
    l2.s = s;
    cudaGraphInstantiateParams ip = {0};
    CHECK_CUDA(cudaGraphInstantiateWithParams(&l2.exec, other, &ip), cudaSuccess);
    CHECK(ip.result_out == cudaGraphInstantiateSuccess, "instantiate result %d", ip.result_out);
    float ms3 = timed(s, launch_one, &l2);
    CHECK(near(ms3, 3 * g_k_ms), "graph without C: %.6f ms, expected %.6f", ms3, 3 * g_k_ms);

    /* a cycle cannot be instantiated */
    cudaGraph_t cyc;
    cudaGraphNode_t x, y;
    cudaGraphExec_t bad;
    CHECK_CUDA(cudaGraphCreate(&cyc, 0), cudaSuccess);
    CHECK_CUDA(cudaGraphAddEmptyNode(&x, cyc, NULL, 0), cudaSuccess);
    CHECK_CUDA(cudaGraphAddEmptyNode(&y, cyc, &x, 1), cudaSuccess);
    CHECK_CUDA(cudaGraphAddDependencies(cyc, &y, &x, NULL, 1), cudaSuccess);
    CHECK_CUDA(cudaGraphInstantiate(&bad, cyc, 0), cudaErrorInvalidValue);

    CHECK_CUDA(cudaGraphExecDestroy(l.exec), cudaSuccess);
    CHECK_CUDA(cudaGraphExecDestroy(l2.exec), cudaSuccess);
    CHECK_CUDA(cudaGraphDestroy(g), cudaSuccess);
    CHECK_CUDA(cudaGraphDestroy(clone), cudaSuccess);
    CHECK_CUDA(cudaGraphDestroy(other), cudaSuccess);
    CHECK_CUDA(cudaGraphDestroy(cyc), cudaSuccess);
    CHECK_CUDA(cudaGraphDestroy(cyc), cudaErrorInvalidValue);
    CHECK_CUDA(cudaFree(dev_buf), cudaSuccess);
    free(host_buf);
    printf("explicit: %.3f ms, updated %.3f ms, without a branch %.3f ms\n", ms1, ms2, ms3);
}

/* ---- errors during capture ---- */

/* cudaMalloc on another thread (which does not capture), with that thread's capture mode. */
static void *malloc_on_thread(void *arg)
{
    enum cudaStreamCaptureMode mode = *(enum cudaStreamCaptureMode *)arg;
    CHECK_CUDA(cudaThreadExchangeStreamCaptureMode(&mode), cudaSuccess);
    void *p = NULL;
    cudaError_t *r = malloc(sizeof *r);
    *r = cudaMalloc(&p, 256);
    if (p)
        cudaFree(p);
    return r;
}

static cudaError_t malloc_elsewhere(enum cudaStreamCaptureMode mode)
{
    pthread_t t;
    void *r = NULL;
    pthread_create(&t, NULL, malloc_on_thread, &mode);
    pthread_join(t, &r);
    cudaError_t e = *(cudaError_t *)r;
    free(r);
    return e;
}

static void test_errors(void)
{
    cudaStream_t s, s1;
    cudaEvent_t ev;
    cudaGraph_t g = (cudaGraph_t)1;
    enum cudaStreamCaptureStatus st;
    void *p;
    CHECK_CUDA(cudaStreamCreate(&s), cudaSuccess);
    CHECK_CUDA(cudaStreamCreate(&s1), cudaSuccess);
    CHECK_CUDA(cudaEventCreate(&ev), cudaSuccess);

    CHECK_CUDA(cudaStreamBeginCapture(NULL, cudaStreamCaptureModeGlobal), cudaErrorStreamCaptureUnsupported);
    CHECK_CUDA(cudaStreamBeginCapture(s, (enum cudaStreamCaptureMode)7), cudaErrorInvalidValue);
    CHECK_CUDA(cudaStreamEndCapture(s, &g), cudaErrorIllegalState);

    /* synchronizing a capturing stream: refused, and the capture is invalidated */
    CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaErrorIllegalState);
    kernel(s);
    unsigned long long id = 0;
    const cudaGraphNode_t *deps = NULL;
    size_t ndeps = 0;
    cudaGraph_t capturing = NULL;
    CHECK_CUDA(cudaStreamGetCaptureInfo(s, &st, &id, &capturing, &deps, NULL, &ndeps), cudaSuccess);
    CHECK(st == cudaStreamCaptureStatusActive && id != 0 && capturing && ndeps == 1 && deps && deps[0],
          "capture info: status %d id %llu graph %p, %zu dependencies", st, id, (void *)capturing, ndeps);
    CHECK_CUDA(cudaStreamSynchronize(s), cudaErrorStreamCaptureUnsupported);
    CHECK_CUDA(cudaStreamIsCapturing(s, &st), cudaSuccess);
    CHECK(st == cudaStreamCaptureStatusInvalidated, "status after a synchronize: %d", st);
    CHECK_CUDA(cudaLaunchKernel((const void *)kernel_stub, (dim3){1, 1, 1}, (dim3){1, 1, 1}, NULL, 0, s),
               cudaErrorStreamCaptureInvalidated);
    CHECK_CUDA(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
    CHECK(g == NULL, "graph of an invalidated capture %p", (void *)g);
    CHECK_CUDA(cudaStreamIsCapturing(s, &st), cudaSuccess);
    CHECK(st == cudaStreamCaptureStatusNone, "status after the end: %d", st);

    /* global mode: cudaMalloc, cudaDeviceSynchronize and cudaStreamQuery are refused */
    CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    CHECK_CUDA(cudaMalloc(&p, 256), cudaErrorStreamCaptureUnsupported);
    CHECK_CUDA(cudaDeviceSynchronize(), cudaErrorStreamCaptureUnsupported);
    CHECK_CUDA(cudaStreamQuery(s), cudaErrorStreamCaptureUnsupported);
    CHECK_CUDA(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);

    /* relaxed mode: cudaMalloc is allowed and the capture stays valid */
    CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed), cudaSuccess);
    CHECK_CUDA(cudaMalloc(&p, 256), cudaSuccess);
    kernel(s);
    CHECK_CUDA(cudaStreamEndCapture(s, &g), cudaSuccess);
    CHECK_CUDA(cudaGraphDestroy(g), cudaSuccess);
    CHECK_CUDA(cudaFree(p), cudaSuccess);

    /* a thread in relaxed interaction mode may allocate during its global capture */
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    CHECK_CUDA(cudaThreadExchangeStreamCaptureMode(&mode), cudaSuccess);
    CHECK(mode == cudaStreamCaptureModeGlobal, "the thread's default mode is %d", mode);
    CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    CHECK_CUDA(cudaMalloc(&p, 256), cudaSuccess);
    CHECK_CUDA(cudaStreamEndCapture(s, &g), cudaSuccess);
    CHECK_CUDA(cudaGraphDestroy(g), cudaSuccess);
    CHECK_CUDA(cudaFree(p), cudaSuccess);
    CHECK_CUDA(cudaThreadExchangeStreamCaptureMode(&mode), cudaSuccess);
    mode = (enum cudaStreamCaptureMode)9;
    CHECK_CUDA(cudaThreadExchangeStreamCaptureMode(&mode), cudaErrorInvalidValue);

    /* another thread: a global capture forbids its unsafe calls in global mode only;
       a thread-local capture never does */
    CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    CHECK_CUDA(malloc_elsewhere(cudaStreamCaptureModeGlobal), cudaSuccess);
    CHECK_CUDA(cudaStreamEndCapture(s, &g), cudaSuccess);
    CHECK_CUDA(cudaGraphDestroy(g), cudaSuccess);
    CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    CHECK_CUDA(malloc_elsewhere(cudaStreamCaptureModeThreadLocal), cudaSuccess);
    CHECK_CUDA(cudaStreamIsCapturing(s, &st), cudaSuccess);
    CHECK(st == cudaStreamCaptureStatusActive, "status after a thread-local thread's cudaMalloc: %d", st);
    CHECK_CUDA(malloc_elsewhere(cudaStreamCaptureModeGlobal), cudaErrorStreamCaptureUnsupported);
    CHECK_CUDA(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);

    /* a fork never joined back; ending on the forked stream */
    CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    CHECK_CUDA(cudaEventRecord(ev, s), cudaSuccess);
    CHECK_CUDA(cudaStreamWaitEvent(s1, ev, 0), cudaSuccess);
    kernel(s1);
    CHECK_CUDA(cudaStreamEndCapture(s1, &g), cudaErrorStreamCaptureUnmatched);
    CHECK_CUDA(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
    CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    CHECK_CUDA(cudaEventRecord(ev, s), cudaSuccess);
    CHECK_CUDA(cudaStreamWaitEvent(s1, ev, 0), cudaSuccess);
    kernel(s1);
    CHECK_CUDA(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureUnjoined);
    CHECK_CUDA(cudaStreamIsCapturing(s1, &st), cudaSuccess);
    CHECK(st == cudaStreamCaptureStatusNone, "the unjoined stream still captures (%d)", st);

    /* after all that, the streams work as before */
    kernel(s);
    kernel(s1);
    CHECK_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    printf("errors: checked\n");
}

/* ---- NCCL ---- */

#define NGPU  2
#define COUNT (1 << 20)

typedef struct ranks {
    ncclComm_t comm[NGPU];
    cudaStream_t s[NGPU];
    float *buf[NGPU];
    cudaEvent_t fork, join;
    cudaGraphExec_t exec;
} ranks;

/* Both ranks' all-reduce and a send from rank 0 to rank 1, forked from and joined back into stream 0. */
static void all_reduce(void *arg)
{
    ranks *r = arg;
    CHECK_CUDA(cudaEventRecord(r->fork, r->s[0]), cudaSuccess);
    CHECK_CUDA(cudaStreamWaitEvent(r->s[1], r->fork, 0), cudaSuccess);
    CHECK_NCCL(ncclGroupStart());
    for (int d = 0; d < NGPU; d++)
        CHECK_NCCL(ncclAllReduce(r->buf[d], r->buf[d], COUNT, ncclFloat, ncclSum, r->comm[d], r->s[d]));
    CHECK_NCCL(ncclGroupEnd());
    CHECK_NCCL(ncclGroupStart());
    CHECK_NCCL(ncclSend(r->buf[0], COUNT, ncclFloat, 1, r->comm[0], r->s[0]));
    CHECK_NCCL(ncclRecv(r->buf[1], COUNT, ncclFloat, 0, r->comm[1], r->s[1]));
    CHECK_NCCL(ncclGroupEnd());
    CHECK_CUDA(cudaEventRecord(r->join, r->s[1]), cudaSuccess);
    CHECK_CUDA(cudaStreamWaitEvent(r->s[0], r->join, 0), cudaSuccess);
}

static void launch_twice(void *arg)
{
    ranks *r = arg;
    for (int i = 0; i < 2; i++)
        CHECK_CUDA(cudaGraphLaunch(r->exec, r->s[0]), cudaSuccess);
}

static void test_nccl(int check_time)
{
    ranks r = {0};
    CHECK_NCCL(ncclCommInitAll(r.comm, NGPU, NULL));
    for (int d = 0; d < NGPU; d++) {
        CHECK_CUDA(cudaSetDevice(d), cudaSuccess);
        CHECK_CUDA(cudaStreamCreateWithFlags(&r.s[d], cudaStreamNonBlocking), cudaSuccess);
        CHECK_CUDA(cudaMalloc((void **)&r.buf[d], COUNT * sizeof(float)), cudaSuccess);
    }
    CHECK_CUDA(cudaSetDevice(0), cudaSuccess);
    CHECK_CUDA(cudaEventCreateWithFlags(&r.fork, cudaEventDisableTiming), cudaSuccess);
    CHECK_CUDA(cudaEventCreateWithFlags(&r.join, cudaEventDisableTiming), cudaSuccess);

    float direct = timed(r.s[0], all_reduce, &r); /* sequence number 0 */

    cudaGraph_t g;
    CHECK_CUDA(cudaStreamBeginCapture(r.s[0], cudaStreamCaptureModeGlobal), cudaSuccess);
    all_reduce(&r);
    CHECK_CUDA(cudaStreamEndCapture(r.s[0], &g), cudaSuccess);
    size_t n = 0, roots = 0;
    CHECK_CUDA(cudaGraphGetNodes(g, NULL, &n), cudaSuccess);
    CHECK_CUDA(cudaGraphGetRootNodes(g, NULL, &roots), cudaSuccess);
    CHECK(n == 2 * NGPU && roots == NGPU, "captured %zu nodes, %zu roots; expected two per rank, roots the all-reduce",
          n, roots);
    CHECK_CUDA(cudaGraphInstantiate(&r.exec, g, 0), cudaSuccess);

    float twice = timed(r.s[0], launch_twice, &r); /* sequence numbers 1 and 2 */
    float after = timed(r.s[0], all_reduce, &r);   /* 3 */
    if (check_time) {
        CHECK(direct > 0 && near(twice, 2 * direct), "two launches: %.6f ms, one direct all-reduce %.6f ms", twice,
              direct);
        CHECK(near(after, direct), "direct all-reduce after the launches: %.6f ms, before %.6f ms", after, direct);
    }
    CHECK_CUDA(cudaGraphExecDestroy(r.exec), cudaSuccess);
    CHECK_CUDA(cudaGraphDestroy(g), cudaSuccess);
    for (int d = 0; d < NGPU; d++)
        CHECK_NCCL(ncclCommDestroy(r.comm[d]));
    printf("nccl: direct %.3f ms, graph launched twice %.3f ms, direct again %.3f ms\n", direct, twice, after);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    g_k_ms = argc > 2 ? atof(argv[2]) / 1000.0 : 0;
    register_kernel();
    if (!strcmp(mode, "capture") && g_k_ms > 0) {
        test_capture();
        test_capture_library();
        test_memset_2d();
        test_copy_2d();
        test_host_nodes();
    } else if (!strcmp(mode, "explicit") && g_k_ms > 0)
        test_explicit();
    else if (!strcmp(mode, "errors"))
        test_errors();
    else if (!strcmp(mode, "nccl"))
        test_nccl(argc > 2 && !strcmp(argv[2], "timed"));
    else {
        fprintf(stderr, "usage: graphs_test capture K_US | explicit K_US | errors | nccl [timed]\n");
        return 2;
    }
    if (failures)
        fprintf(stderr, "graphs_test %s: %d checks failed\n", mode, failures);
    else
        printf("graphs %s: ok\n", mode);
    return failures != 0;
}
