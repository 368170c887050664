/*
 * The host clock's per-call costs (interpose/core/api_cost.h, host_clock.c): each
 * measured kind of call is issued a known number of times between two reads
 * of the clock, which must have moved by exactly what HYSIM_HOST_TIME says:
 *   calls, scaled0 (scaled:0)  the calls' costs and nothing else
 *   fixed (fixed:1000)         1000 ns per intercepted call, no costs
 *   zero                       nothing
 *   real                       at least the costs (real CPU time comes on top)
 * A synchronize that finds its work done costs one sync; an NCCL group costs
 * one group device per device its thread issued calls for on communicators
 * of several ranks, at its end, and those calls nothing; a call in a group on
 * a one-rank communicator costs what it costs outside one. Calls of kinds not measured (a
 * synchronous device-to-device copy, capture and instantiation) cost nothing; a graph launch costs one kernel launch,
 * however many ops it replays; calls captured into a graph cost what they
 * cost when issued. Under the fake daemon (HYSIM_TEST_LOG set) the launches'
 * ops must carry the clock at each call's entry, and a cuBLAS GEMM's op the
 * clock after its call's cost (cuBLAS launches at the end of the call).
 *
 * `host_time_calls_test MODE`; prints "host_time MODE: ok" and every reading
 * of the clock on one line, so that two runs can be compared byte for byte.
 * Exit status 0 when every check passed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include "api_cost.h"

void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize);

#define FIXED_NS 1000u
#define LAUNCHES 100
#define RECORDS  50

static int failures;

#define HS_CHECK_COUNTS
#include "test_check.h"

#define CHECK_OK(call) CHECK((call) == 0, "%s failed", #call)

enum mode { MODE_CALLS, MODE_FIXED, MODE_ZERO, MODE_REAL };
static enum mode g_mode;

static uint64_t readings[64];
static size_t nreadings;

/* The host clock, as the program sees it (an intercepted call, costing nothing). */
static uint64_t now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t v = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    if (nreadings < sizeof readings / sizeof readings[0])
        readings[nreadings++] = v;
    return v;
}

/*
 * What the clock must have moved by over `calls` intercepted calls and the
 * closing read, with `charged` calls (intercepted or not: cuBLAS) of `kind`.
 */
static uint64_t expected(uint64_t calls, uint64_t charged, enum hs_api_call kind)
{
    switch (g_mode) {
    case MODE_CALLS:
    case MODE_REAL: return charged * hs_api_call_ns(kind);
    case MODE_FIXED: return (calls + 1) * FIXED_NS;
    default: return 0;
    }
}

/*
 * In a sanitizer build the sanitizer runtime reads the clock now and then
 * (client_test.c, case_clock_fixed): under fixed those reads add whole steps.
 */
static int moved_as_expected(uint64_t d, uint64_t want)
{
    if (g_mode == MODE_REAL)
        return d >= want;
#ifdef __SANITIZE_ADDRESS__
    if (g_mode == MODE_FIXED)
        return d >= want && d % FIXED_NS == 0;
#endif
    return d == want;
}

#define STEP(what, calls, charged, kind, ...)                                                                   \
    do {                                                                                                        \
        uint64_t a_ = now();                                                                                    \
        __VA_ARGS__;                                                                                            \
        uint64_t d_ = now() - a_, want_ = expected(calls, charged, kind);                                       \
        CHECK(moved_as_expected(d_, want_), "%s moved the clock %" PRIu64 " ns, expected %s%" PRIu64, what, d_, \
              g_mode == MODE_REAL ? "at least " : "", want_);                                                   \
    } while (0)

static void kernel_stub(float *x) { (void)x; }
static char fatbin[64];

static cudaError_t launch(cudaStream_t s)
{
    float *arg = NULL;
    void *args[] = {&arg};
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    return cudaLaunchKernel((const void *)kernel_stub, g, b, args, 0, s);
}

/* The ops of the first LAUNCHES kernels carry the clock at each launch's entry (t0: the read before their step). */
static void check_stamps(uint64_t t0)
{
    const char *path = getenv("HYSIM_TEST_LOG");
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f)
        return; /* not under the fake daemon */
    char line[512];
    int i = 0, bad = 0;
    while (i < LAUNCHES && fgets(line, sizeof line, f)) {
        uint64_t h;
        if (!strstr(line, "kernel name=_Z6kernelPf") || sscanf(line, "op host=%" SCNu64, &h) != 1)
            continue;
        uint64_t want = g_mode == MODE_CALLS   ? t0 + (uint64_t)i * hs_api_call_ns(HS_CALL_KERNEL_LAUNCH)
                        : g_mode == MODE_FIXED ? t0 + (uint64_t)(i + 2) * FIXED_NS /* the step's read, the launch */
                        : g_mode == MODE_ZERO  ? t0
                                               : h;
        if (h != want && !bad++)
            CHECK(h == want, "launch %d stamped %" PRIu64 ", expected %" PRIu64, i, h, want);
        i++;
    }
    fclose(f);
    CHECK(i == LAUNCHES, "%d launches in the log", i);
}

/*
 * The 5 cublasSgemm and then 5 cublasGemmEx ops of the sequence: cuBLAS launches at the end of its call,
 * so each op is issued after its call's cost: consecutive ops lie one call of the later one apart (the
 * first GemmEx one GEMM after the last Sgemm, not one Sgemm). Calls mode only; nothing without the log.
 */
static void check_gemm_stamps(void)
{
    const char *path = getenv("HYSIM_TEST_LOG");
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f || g_mode != MODE_CALLS) {
        if (f)
            fclose(f);
        return;
    }
    char line[512];
    uint64_t h[10];
    int n = 0;
    while (n < 10 && fgets(line, sizeof line, f))
        if (strstr(line, " gemm=16x16x16 ") && sscanf(line, "op host=%" SCNu64, &h[n]) == 1)
            n++;
    fclose(f);
    CHECK(n == 10, "%d GEMM ops of 16 x 16 x 16 in the log, expected 10", n);
    for (int i = 1; i < n; i++) {
        uint64_t want = hs_api_call_ns(i < 5 ? HS_CALL_SGEMM : HS_CALL_GEMM);
        CHECK(h[i] - h[i - 1] == want, "GEMM op %d stamped %" PRIu64 " ns after the one before, expected %" PRIu64, i,
              h[i] - h[i - 1], want);
    }
}

/* An NCCL group of two all-reduces from this thread: two group devices on a 2-rank communicator's two
 * devices; two ungrouped calls' worth on a 1-rank communicator, nothing there in place (NCCL has nothing
 * to do). */
static void check_groups(float *d0, float *d1)
{
    int devs[2] = {0, 1}, dev0[2] = {0, 0};
    ncclComm_t pair[2], same;
    cudaStream_t st[2];
    float *buf[2];
    CHECK_OK(ncclCommInitAll(pair, 2, devs));
    CHECK_OK(ncclCommInitAll(&same, 1, dev0));
    for (int d = 0; d < 2; d++) {
        CHECK_OK(cudaSetDevice(d));
        CHECK_OK(cudaStreamCreate(&st[d]));
        CHECK_OK(cudaMalloc((void **)&buf[d], 4096));
    }
    CHECK_OK(cudaSetDevice(0));
    uint64_t per_group[3] = {2 * hs_api_call_ns(HS_CALL_NCCL_GROUP_DEVICE), 2 * hs_api_call_ns(HS_CALL_NCCL), 0};
    const char *what[3] = {"on a 2-rank communicator", "on a 1-rank communicator", "in place on a 1-rank communicator"};
    for (int c = 0; c < 3; c++) {
        uint64_t a = now();
        CHECK_OK(ncclGroupStart());
        for (int r = 0; r < 2; r++)
            CHECK_OK(c == 0   ? ncclAllReduce(buf[r], buf[r], 256, ncclFloat, ncclSum, pair[r], st[r])
                     : c == 1 ? ncclAllReduce(d0, d1, 256, ncclFloat, ncclSum, same, st[0])
                              : ncclAllReduce(d0, d0, 256, ncclFloat, ncclSum, same, st[0]));
        CHECK_OK(ncclGroupEnd());
        uint64_t d = now() - a;
        uint64_t want = g_mode == MODE_CALLS || g_mode == MODE_REAL ? per_group[c]
                        : g_mode == MODE_FIXED                      ? 5 * FIXED_NS
                                                                    : 0;
        CHECK(moved_as_expected(d, want),
              "a group of 2 all-reduces %s moved the clock %" PRIu64 " ns, expected %" PRIu64, what[c], d, want);
    }
    for (int d = 0; d < 2; d++) {
        CHECK_OK(cudaStreamSynchronize(st[d]));
        CHECK_OK(ncclCommDestroy(pair[d]));
        CHECK_OK(cudaFree(buf[d]));
    }
    CHECK_OK(ncclCommDestroy(same));
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "";
    if (!strcmp(m, "calls") || !strcmp(m, "scaled0"))
        g_mode = MODE_CALLS;
    else if (!strcmp(m, "fixed"))
        g_mode = MODE_FIXED;
    else if (!strcmp(m, "zero"))
        g_mode = MODE_ZERO;
    else if (!strcmp(m, "real"))
        g_mode = MODE_REAL;
    else {
        fprintf(stderr, "usage: host_time_calls_test calls|scaled0|fixed|zero|real\n");
        return 2;
    }
    void **module = __cudaRegisterFatBinary(fatbin);
    __cudaRegisterFunction(module, (const char *)kernel_stub, "_Z6kernelPf", "_Z6kernelPf", -1, NULL, NULL, NULL, NULL,
                           NULL);
    __cudaRegisterFatBinaryEnd(module);

    cudaStream_t s;
    cudaEvent_t ev;
    float *d0, *d1;
    static float host[1024];
    CHECK_OK(cudaSetDevice(0));
    CHECK_OK(cudaStreamCreate(&s));
    CHECK_OK(cudaEventCreate(&ev));
    CHECK_OK(cudaMalloc((void **)&d0, sizeof host));
    CHECK_OK(cudaMalloc((void **)&d1, sizeof host));
    /* pinned: an asynchronous copy of pageable memory would hold the thread until done */
    CHECK_OK(cudaHostRegister(host, sizeof host, cudaHostRegisterDefault));
    cublasHandle_t blas;
    CHECK_OK(cublasCreate(&blas));
    CHECK_OK(cublasSetStream(blas, s));
    ncclComm_t comm;
    int dev0 = 0;
    CHECK_OK(ncclCommInitAll(&comm, 1, &dev0));

    /* ten events to query, one query each: a thread that queries again what it was just told is not
     * done, its clock where it was (host_time zero), waits instead (core/ops.c, query_locked) */
    cudaEvent_t queried[10];
    for (int i = 0; i < 10; i++) {
        CHECK_OK(cudaEventCreate(&queried[i]));
        CHECK_OK(cudaEventRecord(queried[i], s));
    }

    uint64_t t0 = now();
    STEP("launches", LAUNCHES, LAUNCHES, HS_CALL_KERNEL_LAUNCH, for (int i = 0; i < LAUNCHES; i++) CHECK_OK(launch(s)));
    STEP("event records", RECORDS, RECORDS, HS_CALL_EVENT_RECORD,
         for (int i = 0; i < RECORDS; i++) CHECK_OK(cudaEventRecord(ev, s)));
    STEP("stream waits", 20, 20, HS_CALL_STREAM_WAIT_EVENT,
         for (int i = 0; i < 20; i++) CHECK_OK(cudaStreamWaitEvent(s, ev, 0)));
    /* The fake daemon answers a query at the host time asked: only the cost moves the clock. */
    STEP("event queries", 10, 10, HS_CALL_EVENT_QUERY, for (int i = 0; i < 10; i++) cudaEventQuery(queried[i]));
    STEP("device-to-device async copies", 10, 10, HS_CALL_MEMCPY_ASYNC,
         for (int i = 0; i < 10; i++) CHECK_OK(cudaMemcpyAsync(d1, d0, sizeof host, cudaMemcpyDeviceToDevice, s)));
    STEP("host-to-device async copies", 10, 10, HS_CALL_MEMCPY_ASYNC,
         for (int i = 0; i < 10; i++) CHECK_OK(cudaMemcpyAsync(d1, host, sizeof host, cudaMemcpyHostToDevice, s)));
    STEP("async memsets", 10, 10, HS_CALL_MEMSET,
         for (int i = 0; i < 10; i++) CHECK_OK(cudaMemsetAsync(d0, 0, sizeof host, s)));
    /* A device-to-device cudaMemcpy does not wait for the stream, and is not a measured kind. */
    STEP("synchronous device-to-device copies", 5, 0, HS_CALL_MEMCPY_ASYNC,
         for (int i = 0; i < 5; i++) CHECK_OK(cudaMemcpy(d1, d0, sizeof host, cudaMemcpyDeviceToDevice)));
    STEP("all-reduces", 5, 5, HS_CALL_NCCL,
         for (int i = 0; i < 5; i++) CHECK_OK(ncclAllReduce(d0, d1, 256, ncclFloat, ncclSum, comm, s)));
    /* In place on one rank NCCL has nothing to do: no cost. */
    STEP("in-place all-reduces on one rank", 5, 0, HS_CALL_NCCL,
         for (int i = 0; i < 5; i++) CHECK_OK(ncclAllReduce(d0, d0, 256, ncclFloat, ncclSum, comm, s)));
    /* cuBLAS calls are no intercepted calls: under fixed they do not move the clock. */
    const float one = 1, zero_f = 0;
    STEP("cublasSgemm", 0, 5, HS_CALL_SGEMM,
         for (int i = 0; i < 5; i++)
             CHECK_OK(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16, &one, d0, 16, d1, 16, &zero_f, d1, 16)));
    STEP("cublasGemmEx", 0, 5, HS_CALL_GEMM,
         for (int i = 0; i < 5; i++)
             CHECK_OK(cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16, &one, d0, CUDA_R_32F, 16, d1, CUDA_R_32F,
                                   16, &zero_f, d1, CUDA_R_32F, 16, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)));
    uint64_t t1 = now();
    CHECK_OK(cudaStreamSynchronize(s)); /* a Wait: the clock jumps to the answer */
    uint64_t t2 = now();
    CHECK(t2 >= t1, "a Wait moved the clock back");
    check_stamps(t0);
    check_gemm_stamps();

    /* Capture: each captured launch costs a launch; beginning, ending and instantiating nothing. */
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    STEP("capture of 3 launches", 5, 3, HS_CALL_KERNEL_LAUNCH, {
        CHECK_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
        for (int i = 0; i < 3; i++)
            CHECK_OK(launch(s));
        CHECK_OK(cudaStreamEndCapture(s, &graph));
    });
    STEP("instantiation", 1, 0, HS_CALL_KERNEL_LAUNCH, CHECK_OK(cudaGraphInstantiate(&exec, graph, 0)));
    /* A graph launch: one call, one launch's cost, for 3 kernels and the events around them. */
    STEP("graph launch", 1, 1, HS_CALL_KERNEL_LAUNCH, CHECK_OK(cudaGraphLaunch(exec, s)));
    CHECK_OK(cudaStreamSynchronize(s));
    if (g_mode == MODE_CALLS) /* every cost above, and the two Waits, and nothing else */
        CHECK(t1 - t0 == LAUNCHES * hs_api_call_ns(HS_CALL_KERNEL_LAUNCH) +
                             RECORDS * hs_api_call_ns(HS_CALL_EVENT_RECORD) +
                             20 * hs_api_call_ns(HS_CALL_STREAM_WAIT_EVENT) + 10 * hs_api_call_ns(HS_CALL_EVENT_QUERY) +
                             20 * hs_api_call_ns(HS_CALL_MEMCPY_ASYNC) + 10 * hs_api_call_ns(HS_CALL_MEMSET) +
                             5 * hs_api_call_ns(HS_CALL_NCCL) + 5 * hs_api_call_ns(HS_CALL_SGEMM) +
                             5 * hs_api_call_ns(HS_CALL_GEMM),
              "the whole sequence: %" PRIu64 " ns", t1 - t0);

    /* Synchronizes that find the work done (a blocked one pays the wake-up after its answer instead).
     * Under hysim run only: the fake daemon answers every Wait later than asked, as if it blocked. */
    if (!getenv("HYSIM_TEST_LOG")) {
        STEP("idle stream synchronizes", 5, 5, HS_CALL_SYNC,
             for (int i = 0; i < 5; i++) CHECK_OK(cudaStreamSynchronize(s)));
        STEP("done event synchronizes", 5, 5, HS_CALL_SYNC,
             for (int i = 0; i < 5; i++) CHECK_OK(cudaEventSynchronize(ev)));
        STEP("idle device synchronizes", 5, 5, HS_CALL_SYNC,
             for (int i = 0; i < 5; i++) CHECK_OK(cudaDeviceSynchronize()));
    }
    check_groups(d0, d1);

    CHECK_OK(cudaGraphExecDestroy(exec));
    CHECK_OK(cudaGraphDestroy(graph));
    CHECK_OK(ncclCommDestroy(comm));
    CHECK_OK(cublasDestroy(blas));
    CHECK_OK(cudaFree(d0));
    CHECK_OK(cudaFree(d1));
    if (failures) {
        fprintf(stderr, "host_time %s: %d checks failed\n", m, failures);
        return 1;
    }
    printf("host_time %s: ok readings", m);
    for (size_t i = 0; i < nreadings; i++)
        printf(" %" PRIu64, readings[i]);
    printf("\n");
    return 0;
}
