// curand_gen: how long cuRAND's host API takes to generate on the GPU, by
// generator and distribution: the first generation after a generator is
// created (which also sets up its states) and the median of R more, for
// 2^20, 2^24 and 2^28 numbers (CUDA events on the generator's stream). The
// same program runs under hysim (its libcurand.so.10).
// usage: curand_gen [REPEATS]
#include <cuda_runtime.h>
#include <curand.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                               \
    do {                                                                                          \
        cudaError_t err_ = (call);                                                                \
        if (err_ != cudaSuccess) {                                                                \
            std::fprintf(stderr, "curand_gen: %s failed: %s\n", #call, cudaGetErrorString(err_)); \
            std::exit(1);                                                                         \
        }                                                                                         \
    } while (0)
#define CHECK_RAND(call)                                                                  \
    do {                                                                                  \
        curandStatus_t st_ = (call);                                                      \
        if (st_ != CURAND_STATUS_SUCCESS) {                                               \
            std::fprintf(stderr, "curand_gen: %s failed: status %d\n", #call, (int)st_); \
            std::exit(1);                                                                 \
        }                                                                                 \
    } while (0)

static double time_us(cudaStream_t s, curandGenerator_t g, int dist, void *out, size_t n)
{
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    CHECK(cudaEventRecord(a, s));
    switch (dist) {
    case 0: CHECK_RAND(curandGenerateUniform(g, (float *)out, n)); break;
    case 1: CHECK_RAND(curandGenerateNormal(g, (float *)out, n, 0.0f, 1.0f)); break;
    case 2: CHECK_RAND(curandGenerateUniformDouble(g, (double *)out, n)); break;
    case 3: CHECK_RAND(curandGenerate(g, (unsigned *)out, n)); break;
    }
    CHECK(cudaEventRecord(b, s));
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    return ms * 1e3;
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? std::atoi(argv[1]) : 5;
    if (repeats < 1) {
        std::fprintf(stderr, "usage: curand_gen [REPEATS]\n");
        return 2;
    }
    CHECK(cudaSetDevice(0));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    void *out;
    CHECK(cudaMalloc(&out, (size_t)8 << 28));
    const struct {
        const char *name;
        curandRngType_t type;
    } gens[] = {{"xorwow", CURAND_RNG_PSEUDO_XORWOW},   {"philox", CURAND_RNG_PSEUDO_PHILOX4_32_10},
                {"mrg32k3a", CURAND_RNG_PSEUDO_MRG32K3A}, {"mtgp32", CURAND_RNG_PSEUDO_MTGP32},
                {"sobol32", CURAND_RNG_QUASI_SOBOL32}};
    const char *dists[] = {"uniform", "normal", "uniform_double", "uint32"};
    std::printf("# curand_gen: us; first = the first generation of a new generator, median of %d after\n", repeats);
    std::printf("%-9s %-15s %10s %12s %12s\n", "gen", "dist", "n", "first_us", "median_us");
    for (const auto &gen : gens)
        for (int d = 0; d < 4; d++)
            for (size_t n : {(size_t)1 << 20, (size_t)1 << 24, (size_t)1 << 28}) {
                curandGenerator_t g;
                CHECK_RAND(curandCreateGenerator(&g, gen.type));
                CHECK_RAND(curandSetStream(g, s));
                if (gen.type != CURAND_RNG_QUASI_SOBOL32)
                    CHECK_RAND(curandSetPseudoRandomGeneratorSeed(g, 1234));
                double first = time_us(s, g, d, out, n);
                std::vector<double> v;
                for (int r = 0; r < repeats; r++)
                    v.push_back(time_us(s, g, d, out, n));
                std::sort(v.begin(), v.end());
                std::printf("%-9s %-15s %10zu %12.2f %12.2f\n", gen.name, dists[d], n, first, v[v.size() / 2]);
                CHECK_RAND(curandDestroyGenerator(g));
            }
    CHECK(cudaFree(out));
    CHECK(cudaStreamDestroy(s));
    return 0;
}
