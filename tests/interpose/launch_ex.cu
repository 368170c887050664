// A user's CUDA program, built by nvcc 13 against the real headers, that
// launches one kernel every way the runtime offers: <<<>>>, the C++ template
// cudaLaunchKernelEx (no attributes; a cluster dimension; a few more
// attributes that do not change the time), cudaLaunchCooperativeKernel, and
// a cudaLaunchKernelEx captured into a graph. Under hysim each must take
// exactly the simulated time the <<<>>> launch takes and cost the host clock
// what it costs. With host_time: zero (launch_ex.yaml) that time is the
// profile's figure for the shape (argv[1], us), not the scenario's default,
// so a launch that lost its grid, block or dynamic shared memory would show;
// with host_time: calls (launch_ex_calls.yaml) each call costs the host one
// launch (interpose/core/api_cost.h). Also: what cudaLaunchKernelExC refuses.
// Built a second time with --default-stream per-thread (the _ptsz entry
// points), where argv[2] "default" times the launches on stream 0.
//
// usage: launch_ex EXPECTED_US created|default zero|calls
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include "test_check.h"

__global__ void busy(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += 1.0f;
}

static const dim3 kGrid(8), kBlock(128);
static const size_t kShared = 1024; // part of the profiled shape
static const int kN = 8 * 128;

struct timing {
    float ms;         // simulated GPU time between two events around the call
    long long host_ns; // what the call moved the (simulated) host clock
};

// What the call `launch`, issuing work on `s`, takes on the GPU and costs the host.
template <typename F> static timing timed(cudaStream_t s, const char *what, F launch)
{
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a) == cudaSuccess && cudaEventCreate(&b) == cudaSuccess, "%s: events", what);
    CHECK(cudaEventRecord(a, s) == cudaSuccess, "%s: record", what);
    auto t0 = std::chrono::steady_clock::now();
    cudaError_t e = launch();
    auto t1 = std::chrono::steady_clock::now();
    CHECK(e == cudaSuccess, "%s returned %s", what, cudaGetErrorName(e));
    CHECK(cudaEventRecord(b, s) == cudaSuccess && cudaEventSynchronize(b) == cudaSuccess, "%s: sync", what);
    float ms = -1;
    CHECK(cudaEventElapsedTime(&ms, a, b) == cudaSuccess, "%s: elapsed", what);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return {ms, (long long)std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()};
}

// Each launch kind against the <<<>>> launch: the same GPU time and the same host cost.
static void check_same(const char *what, timing t, timing chevrons)
{
    CHECK(t.ms == chevrons.ms, "%s took %.6f ms, <<<>>> %.6f", what, t.ms, chevrons.ms);
    CHECK(t.host_ns == chevrons.host_ns, "%s cost the host %lld ns, <<<>>> %lld", what, t.host_ns, chevrons.host_ns);
}

static cudaLaunchConfig_t config(cudaStream_t s, cudaLaunchAttribute *attrs, unsigned n)
{
    cudaLaunchConfig_t c;
    std::memset(&c, 0, sizeof c);
    c.gridDim = kGrid;
    c.blockDim = kBlock;
    c.dynamicSmemBytes = kShared;
    c.stream = s;
    c.attrs = attrs;
    c.numAttrs = n;
    return c;
}

// What cudaLaunchKernelExC refuses, and that a refused attribute says so once, by name.
static void check_refusals(float *d)
{
    int n = kN;
    void *args[] = {&d, &n};
    CHECK(cudaLaunchKernelExC(nullptr, (const void *)busy, args) == cudaErrorInvalidValue, "NULL config");
    CHECK(cudaGetLastError() == cudaErrorInvalidValue, "NULL config is the last error");
    cudaLaunchConfig_t c = config(0, nullptr, 1);
    CHECK(cudaLaunchKernelEx(&c, busy, d, n) == cudaErrorInvalidValue, "NULL attrs with numAttrs 1");
    cudaLaunchAttribute undeclared;
    std::memset(&undeclared, 0, sizeof undeclared);
    undeclared.id = (cudaLaunchAttributeID)15; // driver_types.h skips 15
    c = config(0, &undeclared, 1);
    CHECK(cudaLaunchKernelEx(&c, busy, d, n) == cudaErrorInvalidValue, "undeclared attribute id 15");
    undeclared.id = (cudaLaunchAttributeID)1000;
    CHECK(cudaLaunchKernelEx(&c, busy, d, n) == cudaErrorInvalidValue, "undeclared attribute id 1000");
    c = config(0, nullptr, 0);
    CHECK(cudaLaunchKernelExC(&c, (const void *)check_refusals, args) == cudaErrorInvalidDeviceFunction,
          "a host function that is no kernel");
    cudaGetLastError();

    // A launch-completion event: work hysim does not do, refused by name, once.
    cudaLaunchAttribute event;
    std::memset(&event, 0, sizeof event);
    event.id = cudaLaunchAttributeLaunchCompletionEvent;
    CHECK(cudaEventCreateWithFlags(&event.val.launchCompletionEvent.event, cudaEventDisableTiming) == cudaSuccess,
          "event");
    c = config(0, &event, 1);
    char path[] = "/tmp/hs-launch-ex.XXXXXX";
    int tmp = mkstemp(path);
    CHECK(tmp >= 0, "temporary file");
    unlink(path);
    std::fflush(stderr);
    int saved = dup(2);
    CHECK(saved >= 0 && dup2(tmp, 2) >= 0, "redirect stderr");
    cudaError_t r0 = cudaLaunchKernelEx(&c, busy, d, n), r1 = cudaLaunchKernelEx(&c, busy, d, n);
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char said[512] = {0};
    CHECK(pread(tmp, said, sizeof said - 1, 0) >= 0, "read stderr");
    close(tmp);
    CHECK(r0 == cudaErrorNotSupported && r1 == cudaErrorNotSupported, "launch completion event: %s, %s",
          cudaGetErrorName(r0), cudaGetErrorName(r1));
    CHECK(!std::strcmp(said, "hysim: cudaLaunchKernelExC attribute cudaLaunchAttributeLaunchCompletionEvent "
                             "is not supported yet\n"),
          "printed \"%s\"", said);
    cudaGetLastError();
    cudaEventDestroy(event.val.launchCompletionEvent.event);
}

int main(int argc, char **argv)
{
    if (argc != 4 || (std::strcmp(argv[2], "created") && std::strcmp(argv[2], "default")) ||
        (std::strcmp(argv[3], "zero") && std::strcmp(argv[3], "calls"))) {
        std::fprintf(stderr, "usage: launch_ex EXPECTED_US created|default zero|calls\n");
        return 2;
    }
    const bool calls = !std::strcmp(argv[3], "calls");
    const double expected_ms = std::atof(argv[1]) / 1000.0;
    float *d = nullptr;
    int n = kN;
    CHECK(cudaMalloc(&d, kN * sizeof(float)) == cudaSuccess, "cudaMalloc");
    cudaStream_t created;
    CHECK(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking) == cudaSuccess, "stream");
    cudaStream_t s = std::strcmp(argv[2], "created") ? (cudaStream_t)0 : created;

    timing chevrons = timed(s, "<<<>>>", [&] {
        busy<<<kGrid, kBlock, kShared, s>>>(d, n);
        return cudaGetLastError();
    });
    if (calls) {
        // each op reaches the GPU once its call has returned: the kernel a launch's host cost after its
        // entry, the event before it a record's, so the elapsed time holds the difference (a few us)
        CHECK(chevrons.host_ns > 0, "<<<>>> cost the host nothing under host_time: calls");
        CHECK(chevrons.ms > expected_ms + chevrons.host_ns * 0.5e-6 && chevrons.ms < expected_ms + 0.010,
              "<<<>>> took %.6f ms, the profile %.6f and a launch %lld ns", chevrons.ms, expected_ms,
              chevrons.host_ns);
    } else {
        CHECK(chevrons.host_ns == 0, "<<<>>> cost the host %lld ns under host_time: zero", chevrons.host_ns);
        CHECK(chevrons.ms > expected_ms * 0.999 && chevrons.ms < expected_ms * 1.001,
              "<<<>>> took %.6f ms, the profile %.6f", chevrons.ms, expected_ms);
    }

    cudaLaunchConfig_t plain = config(s, nullptr, 0);
    check_same("cudaLaunchKernelEx", timed(s, "cudaLaunchKernelEx", [&] { return cudaLaunchKernelEx(&plain, busy, d, n); }),
               chevrons);

    cudaLaunchAttribute cluster[1];
    std::memset(cluster, 0, sizeof cluster);
    cluster[0].id = cudaLaunchAttributeClusterDimension;
    cluster[0].val.clusterDim.x = 2;
    cluster[0].val.clusterDim.y = 1;
    cluster[0].val.clusterDim.z = 1;
    cudaLaunchConfig_t clustered = config(s, cluster, 1);
    check_same("cudaLaunchKernelEx (cluster 2)",
               timed(s, "cudaLaunchKernelEx (cluster 2)", [&] { return cudaLaunchKernelEx(&clustered, busy, d, n); }),
               chevrons);

    cudaLaunchAttribute hints[4];
    std::memset(hints, 0, sizeof hints);
    hints[0].id = cudaLaunchAttributeCooperative;
    hints[0].val.cooperative = 1;
    hints[1].id = cudaLaunchAttributePriority;
    hints[1].val.priority = -1;
    hints[2].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    hints[2].val.programmaticStreamSerializationAllowed = 1;
    hints[3].id = cudaLaunchAttributeIgnore;
    cudaLaunchConfig_t hinted = config(s, hints, 4);
    check_same("cudaLaunchKernelEx (hints)",
               timed(s, "cudaLaunchKernelEx (hints)", [&] { return cudaLaunchKernelEx(&hinted, busy, d, n); }),
               chevrons);

    void *args[] = {&d, &n};
    check_same("cudaLaunchCooperativeKernel",
               timed(s, "cudaLaunchCooperativeKernel",
                     [&] { return cudaLaunchCooperativeKernel((const void *)busy, kGrid, kBlock, args, kShared, s); }),
               chevrons);

    // Captured (on the created stream: the legacy stream cannot be captured) and replayed.
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaLaunchConfig_t captured = config(created, cluster, 1);
    CHECK(cudaStreamBeginCapture(created, cudaStreamCaptureModeGlobal) == cudaSuccess, "begin capture");
    CHECK(cudaLaunchKernelEx(&captured, busy, d, n) == cudaSuccess, "captured cudaLaunchKernelEx");
    CHECK(cudaStreamEndCapture(created, &graph) == cudaSuccess, "end capture");
    size_t nodes = 0;
    CHECK(cudaGraphGetNodes(graph, nullptr, &nodes) == cudaSuccess && nodes == 1, "one node, not %zu", nodes);
    CHECK(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess, "instantiate");
    // A graph launch costs the host one kernel launch (api_cost.h), however many nodes it has.
    check_same("the graph", timed(created, "cudaGraphLaunch", [&] { return cudaGraphLaunch(exec, created); }), chevrons);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);

    check_refusals(d);
    CHECK(cudaDeviceSynchronize() == cudaSuccess, "sync");
    cudaStreamDestroy(created);
    cudaFree(d);
    std::printf("launch_ex %s %s: ok, every launch %.6f ms, host %lld ns\n", argv[2], argv[3], chevrons.ms,
                chevrons.host_ns);
    return 0;
}
