/*
 * hysim's libcurand.so.10 (interpose/curand/curand.c) under hysim run: host
 * generators write numbers of the right distribution, the same for the same
 * seed; device generators time their generation by cuRAND's measured costs
 * (a first generation also sets the states up; a new seed does again); and
 * the errors cuRAND returns for wrong types, lengths and memory.
 * usage: curand_test   (prints "curand: ok")
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>
#include <curand.h>

#include "test_check.h"

#define CHECK_RAND(call, want)                                                            \
    do {                                                                                  \
        curandStatus_t st_ = (call);                                                      \
        CHECK(st_ == (want), "%s: status %d, expected %d", #call, (int)st_, (int)(want)); \
    } while (0)

/* Simulated us of one generation of n uniforms on g's stream s. */
static double uniform_us(curandGenerator_t g, cudaStream_t s, float *out, size_t n)
{
    cudaEvent_t a, b;
    float ms = -1;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventRecord(a, s);
    CHECK_RAND(curandGenerateUniform(g, out, n), CURAND_STATUS_SUCCESS);
    cudaEventRecord(b, s);
    cudaEventSynchronize(b);
    cudaEventElapsedTime(&ms, a, b);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms * 1e3;
}

int main(void)
{
    /* host generator: uniforms in (0, 1] with mean 1/2, normals with the mean and deviation asked */
    enum { N = 100000 };
    static float u[N], v[N], z[N];
    curandGenerator_t h;
    CHECK_RAND(curandCreateGeneratorHost(&h, CURAND_RNG_PSEUDO_DEFAULT), CURAND_STATUS_SUCCESS);
    CHECK_RAND(curandSetPseudoRandomGeneratorSeed(h, 42), CURAND_STATUS_SUCCESS);
    CHECK_RAND(curandGenerateUniform(h, u, N), CURAND_STATUS_SUCCESS);
    double sum = 0, lo = 1, hi = 0;
    for (int i = 0; i < N; i++) {
        sum += u[i];
        lo = u[i] < lo ? u[i] : lo;
        hi = u[i] > hi ? u[i] : hi;
    }
    CHECK(lo > 0 && hi <= 1 && fabs(sum / N - 0.5) < 0.01, "uniforms in [%g, %g], mean %g", lo, hi, sum / N);
    CHECK_RAND(curandGenerateNormal(h, z, N, 3.0f, 2.0f), CURAND_STATUS_SUCCESS);
    double m = 0, sq = 0;
    for (int i = 0; i < N; i++)
        m += z[i];
    m /= N;
    for (int i = 0; i < N; i++)
        sq += (z[i] - m) * (z[i] - m);
    CHECK(fabs(m - 3) < 0.05 && fabs(sqrt(sq / N) - 2) < 0.05, "normals: mean %g, deviation %g", m, sqrt(sq / N));
    CHECK_RAND(curandSetPseudoRandomGeneratorSeed(h, 42), CURAND_STATUS_SUCCESS);
    CHECK_RAND(curandGenerateUniform(h, v, N), CURAND_STATUS_SUCCESS);
    int same = 1;
    for (int i = 0; i < N; i++)
        same &= u[i] == v[i];
    CHECK(same, "the same seed gave another sequence");
    unsigned counts[1000];
    CHECK_RAND(curandGeneratePoisson(h, counts, 1000, 4.0), CURAND_STATUS_SUCCESS);
    sum = 0;
    for (int i = 0; i < 1000; i++)
        sum += counts[i];
    CHECK(fabs(sum / 1000 - 4) < 0.3, "Poisson mean %g, expected 4", sum / 1000);
    CHECK_RAND(curandGenerateNormal(h, z, 3, 0, 1), CURAND_STATUS_LENGTH_NOT_MULTIPLE);
    unsigned long long wide[4];
    CHECK_RAND(curandGenerateLongLong(h, wide, 4), CURAND_STATUS_TYPE_ERROR);
    CHECK_RAND(curandGeneratePoisson(h, counts, 10, -1), CURAND_STATUS_OUT_OF_RANGE);
    CHECK_RAND(curandDestroyGenerator(h), CURAND_STATUS_SUCCESS);
    CHECK_RAND(curandCreateGenerator(&h, (curandRngType_t)7), CURAND_STATUS_TYPE_ERROR);

    /* device generator: XORWOW's costs measured on the H200 (interpose/curand/curand.c; the scenario's GPU); a first
     * generation sets its states up */
    float *d;
    cudaStream_t s;
    CHECK(cudaMalloc((void **)&d, 4u << 24) == cudaSuccess, "cudaMalloc");
    cudaStreamCreate(&s);
    curandGenerator_t g;
    CHECK_RAND(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_XORWOW), CURAND_STATUS_SUCCESS);
    CHECK_RAND(curandSetStream(g, s), CURAND_STATUS_SUCCESS);
    double first = uniform_us(g, s, d, 1u << 24), then = uniform_us(g, s, d, 1u << 24);
    double want = 7.7 + (1u << 24) / 270.4e3;
    CHECK(fabs(then - want) < 0.01 && fabs(first - (want + 281)) < 0.01,
          "XORWOW 2^24 uniforms: %g then %g us, expected %g then %g", first, then, want + 281, want);
    CHECK_RAND(curandSetPseudoRandomGeneratorSeed(g, 7), CURAND_STATUS_SUCCESS);
    double reseeded = uniform_us(g, s, d, 1u << 24);
    CHECK(fabs(reseeded - first) < 0.01, "after a new seed %g us, expected the set-up again (%g)", reseeded, first);
    CHECK_RAND(curandGenerateUniform(g, u, 16), CURAND_STATUS_LAUNCH_FAILURE); /* host memory */
    CHECK_RAND(curandGenerate(g, (unsigned *)d, 16), CURAND_STATUS_SUCCESS);
    CHECK_RAND(curandDestroyGenerator(g), CURAND_STATUS_SUCCESS);
    int version = 0;
    CHECK_RAND(curandGetVersion(&version), CURAND_STATUS_SUCCESS);
    CHECK(version == CURAND_VERSION, "version %d", version);
    cudaFree(d);
    printf("curand: ok\n");
    return 0;
}
