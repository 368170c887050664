// managed_prefetch: how long cudaMemPrefetchAsync of managed memory takes to
// the GPU and back, against cudaMemcpyAsync of the same bytes between pinned
// host memory and the GPU, timed with CUDA events on one stream (the median
// of R runs per size). hysim times a prefetch as the PCIe copy of its bytes
// (interpose/cudart/cudart_managed.c); on a real GPU this says how far that is from
// what page migration costs. The same program runs under hysim.
// usage: managed_prefetch [MAX_MIB [REPEATS]]   (sizes 1 MiB ... MAX_MIB, x4)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                                                     \
    do {                                                                                                \
        cudaError_t err_ = (call);                                                                      \
        if (err_ != cudaSuccess) {                                                                      \
            std::fprintf(stderr, "managed_prefetch: %s failed: %s\n", #call, cudaGetErrorString(err_)); \
            std::exit(1);                                                                               \
        }                                                                                               \
    } while (0)

// Median ms of `op` between two events on stream s.
template <typename F> static float median_ms(cudaStream_t s, int repeats, F op)
{
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<float> ms;
    for (int r = 0; r < repeats; r++) {
        CHECK(cudaEventRecord(a, s));
        op();
        CHECK(cudaEventRecord(b, s));
        CHECK(cudaEventSynchronize(b));
        float t;
        CHECK(cudaEventElapsedTime(&t, a, b));
        ms.push_back(t);
    }
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

int main(int argc, char **argv)
{
    size_t max_mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1024;
    int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
    if (max_mib < 1 || repeats < 1) {
        std::fprintf(stderr, "usage: managed_prefetch [MAX_MIB [REPEATS]]\n");
        return 2;
    }
    int dev = 0;
    CHECK(cudaSetDevice(dev));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    cudaMemLocation gpu = {}, host = {};
    gpu.type = cudaMemLocationTypeDevice;
    gpu.id = dev;
    host.type = cudaMemLocationTypeHost;
    std::printf("# managed_prefetch: median of %d, ms and GB/s; prefetch of managed memory vs copy of pinned memory\n",
                repeats);
    std::printf("%10s %12s %12s %12s %12s %10s %10s\n", "MiB", "pf_to_gpu", "pf_to_host", "copy_h2d", "copy_d2h",
                "pf/copy_in", "pf/copy_out");
    for (size_t mib = 1; mib <= max_mib; mib *= 4) {
        size_t bytes = mib << 20;
        char *managed, *pinned, *device;
        CHECK(cudaMallocManaged(&managed, bytes));
        CHECK(cudaMallocHost(&pinned, bytes));
        CHECK(cudaMalloc(&device, bytes));
        std::memset(managed, 1, bytes); // resident on the host, as a program that filled it there
        std::memset(pinned, 1, bytes);
        float to_gpu = 0, to_host = 0;
        std::vector<float> in, out;
        for (int r = 0; r < repeats; r++) { // each round trip starts from the host
            in.push_back(median_ms(s, 1, [&] { CHECK(cudaMemPrefetchAsync(managed, bytes, gpu, 0, s)); }));
            out.push_back(median_ms(s, 1, [&] { CHECK(cudaMemPrefetchAsync(managed, bytes, host, 0, s)); }));
        }
        std::sort(in.begin(), in.end());
        std::sort(out.begin(), out.end());
        to_gpu = in[in.size() / 2];
        to_host = out[out.size() / 2];
        float h2d = median_ms(s, repeats, [&] {
            CHECK(cudaMemcpyAsync(device, pinned, bytes, cudaMemcpyHostToDevice, s));
        });
        float d2h = median_ms(s, repeats, [&] {
            CHECK(cudaMemcpyAsync(pinned, device, bytes, cudaMemcpyDeviceToHost, s));
        });
        std::printf("%10zu %12.4f %12.4f %12.4f %12.4f %10.2f %10.2f\n", mib, to_gpu, to_host, h2d, d2h, to_gpu / h2d,
                    to_host / d2h);
        std::printf("%10s %12.2f %12.2f %12.2f %12.2f\n", "GB/s", bytes / to_gpu / 1e6, bytes / to_host / 1e6,
                    bytes / h2d / 1e6, bytes / d2h / 1e6);
        CHECK(cudaFree(managed));
        CHECK(cudaFreeHost(pinned));
        CHECK(cudaFree(device));
    }
    return 0;
}
