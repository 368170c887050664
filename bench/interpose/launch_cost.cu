// launch_cost: CPU cost of a kernel launch and of an event record, as the
// calling process pays it. Each is issued N times back to back, then the
// stream is synchronised; the process's CPU time (CLOCK_PROCESS_CPUTIME_ID)
// around the loop, divided by N, is the cost per call.
//
// Under hysim the CPU-time clocks are not simulated, so the same program
// measures the interposer's cost there and the real CUDA runtime's on a GPU.
// The wall time of the loop is also printed (simulated time under hysim).
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#define CHECK(call)                                                                      \
    do {                                                                                 \
        cudaError_t err_ = (call);                                                       \
        if (err_ != cudaSuccess) {                                                       \
            std::fprintf(stderr, "launch_cost: %s failed: %s\n", #call,                  \
                         cudaGetErrorString(err_));                                      \
            std::exit(1);                                                                \
        }                                                                                \
    } while (0)

__global__ void empty_kernel(int *p) { if (p && threadIdx.x == 1024) *p = 0; }

static double cpu_seconds()
{
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? std::atoi(argv[1]) : 100000;
    if (n <= 0) {
        std::fprintf(stderr, "usage: launch_cost [CALLS]\n");
        return 2;
    }
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    cudaEvent_t event;
    CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    empty_kernel<<<1, 32, 0, stream>>>(nullptr); // warm-up: module load, first-call setup
    CHECK(cudaStreamSynchronize(stream));

    double cpu0 = cpu_seconds();
    auto wall0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; i++)
        empty_kernel<<<1, 32, 0, stream>>>(nullptr);
    double cpu1 = cpu_seconds();
    CHECK(cudaStreamSynchronize(stream));
    auto wall1 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; i++)
        CHECK(cudaEventRecord(event, stream));
    double cpu2 = cpu_seconds();
    CHECK(cudaStreamSynchronize(stream));

    double launch_wall = std::chrono::duration<double>(wall1 - wall0).count();
    std::printf("calls                 %d\n", n);
    std::printf("launch   CPU us/call  %.3f\n", (cpu1 - cpu0) / n * 1e6);
    std::printf("record   CPU us/call  %.3f\n", (cpu2 - cpu1) / n * 1e6);
    std::printf("launches + sync, clock of the program: %.3f ms\n", launch_wall * 1e3);
    return 0;
}
