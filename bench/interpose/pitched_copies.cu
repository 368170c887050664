// pitched_copies: pitched (2D) device memory. Prints the pitch cudaMallocPitch
// gives for several row widths, then times cudaMemcpy2DAsync of pinned host
// rows into a pitched allocation and back (CUDA events, the median of R runs)
// against a 1D copy of the same bytes, and cudaMemset2DAsync against a 1D
// cudaMemsetAsync: what a row-by-row copy costs beyond its bytes. Then 1D
// memsets and pinned host-to-device copies, one between two events and 20 back
// to back: what one such op occupies in a stream; and single memsets of 1 KiB
// to 256 KiB. The same program runs under hysim.
// usage: pitched_copies [REPEATS]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                                   \
    do {                                                                                              \
        cudaError_t err_ = (call);                                                                    \
        if (err_ != cudaSuccess) {                                                                    \
            std::fprintf(stderr, "pitched_copies: %s failed: %s\n", #call, cudaGetErrorString(err_)); \
            std::exit(1);                                                                             \
        }                                                                                             \
    } while (0)

// Median us of `op` between two events on stream s.
template <typename F> static double median_us(cudaStream_t s, int repeats, F op)
{
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<double> us;
    op(); // warm-up
    for (int r = 0; r < repeats; r++) {
        CHECK(cudaEventRecord(a, s));
        op();
        CHECK(cudaEventRecord(b, s));
        CHECK(cudaEventSynchronize(b));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        us.push_back(ms * 1e3);
    }
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    std::sort(us.begin(), us.end());
    return us[us.size() / 2];
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? std::atoi(argv[1]) : 20;
    if (repeats < 1) {
        std::fprintf(stderr, "usage: pitched_copies [REPEATS]\n");
        return 2;
    }
    CHECK(cudaSetDevice(0));
    std::printf("# cudaMallocPitch: width -> pitch (bytes), height 4\n");
    for (size_t w : {1, 100, 256, 500, 512, 513, 1000, 1024, 4000, 4096, 10000}) {
        void *p;
        size_t pitch;
        CHECK(cudaMallocPitch(&p, &pitch, w, 4));
        std::printf("pitch %zu %zu\n", w, pitch);
        CHECK(cudaFree(p));
    }
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    std::printf("# 2D vs 1D, medians of %d, us: width height bytes h2d_2d h2d_1d d2h_2d d2h_1d memset_2d memset_1d\n",
                repeats);
    const size_t shapes[][2] = {{4, 65536}, {64, 16384}, {256, 4096}, {1000, 1000}, {4096, 256},
                                {65536, 16}, {4096, 4096}, {16384, 1024}};
    for (const auto &sh : shapes) {
        size_t w = sh[0], h = sh[1], bytes = w * h;
        void *pitched, *flat, *host;
        size_t pitch;
        CHECK(cudaMallocPitch(&pitched, &pitch, w, h));
        CHECK(cudaMalloc(&flat, bytes));
        CHECK(cudaMallocHost(&host, bytes));
        double h2d2 = median_us(s, repeats, [&] { CHECK(cudaMemcpy2DAsync(pitched, pitch, host, w, w, h, cudaMemcpyHostToDevice, s)); });
        double h2d1 = median_us(s, repeats, [&] { CHECK(cudaMemcpyAsync(flat, host, bytes, cudaMemcpyHostToDevice, s)); });
        double d2h2 = median_us(s, repeats, [&] { CHECK(cudaMemcpy2DAsync(host, w, pitched, pitch, w, h, cudaMemcpyDeviceToHost, s)); });
        double d2h1 = median_us(s, repeats, [&] { CHECK(cudaMemcpyAsync(host, flat, bytes, cudaMemcpyDeviceToHost, s)); });
        double ms2 = median_us(s, repeats, [&] { CHECK(cudaMemset2DAsync(pitched, pitch, 1, w, h, s)); });
        double ms1 = median_us(s, repeats, [&] { CHECK(cudaMemsetAsync(flat, 1, bytes, s)); });
        std::printf("copy %zu %zu %zu %.2f %.2f %.2f %.2f %.2f %.2f\n", w, h, bytes, h2d2, h2d1, d2h2, d2h1, ms2, ms1);
        CHECK(cudaFreeHost(host));
        CHECK(cudaFree(flat));
        CHECK(cudaFree(pitched));
    }
    // One op between two events, and 20 back to back (per op): what an op occupies in a stream of them.
    std::printf("# 1D ops, medians of %d, us: op bytes one back_to_back_per_op\n", repeats);
    for (size_t bytes = 4096; bytes <= (256u << 20); bytes *= 16) {
        void *dev, *host;
        CHECK(cudaMalloc(&dev, bytes));
        CHECK(cudaMallocHost(&host, bytes));
        double one = median_us(s, repeats, [&] { CHECK(cudaMemsetAsync(dev, 1, bytes, s)); });
        double run = median_us(s, repeats, [&] {
            for (int i = 0; i < 20; i++)
                CHECK(cudaMemsetAsync(dev, 1, bytes, s));
        });
        std::printf("memset %zu %.2f %.2f\n", bytes, one, run / 20);
        one = median_us(s, repeats, [&] { CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s)); });
        run = median_us(s, repeats, [&] {
            for (int i = 0; i < 20; i++)
                CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s));
        });
        std::printf("h2d %zu %.2f %.2f\n", bytes, one, run / 20);
        CHECK(cudaFreeHost(host));
        CHECK(cudaFree(dev));
    }
    // Where a small memset's fixed cost changes: one between two events, 1 KiB ... 256 KiB.
    std::printf("# 1D memsets, medians of %d, us: bytes one\n", repeats);
    for (size_t bytes = 1024; bytes <= (256u << 10); bytes *= 2) {
        void *dev;
        CHECK(cudaMalloc(&dev, bytes));
        std::printf("memset_one %zu %.2f\n", bytes, median_us(s, repeats, [&] { CHECK(cudaMemsetAsync(dev, 1, bytes, s)); }));
        CHECK(cudaFree(dev));
    }
    CHECK(cudaStreamDestroy(s));
    return 0;
}
