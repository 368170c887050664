/*
 * libcurand.so.10: cuRAND's host API. The real library carries its own copy
 * of the CUDA runtime, which hysim cannot see, so hysim replaces it.
 *
 * A device generator's generation is one kernel on the generator's stream,
 * which hysimd times from what it generates (bridge/compute/random_time.c). Device memory holds no data, so nothing
 * is written. A host generator (curandCreateGeneratorHost) writes real
 * numbers of the right distribution into host memory on the calling thread
 * (its own generator, not cuRAND's sequence), and costs the GPU nothing.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <curand.h>

#include "client.h"
#include "managed_memory.h"

#define HS_GEN_MAGIC 0x68736772u /* "hsgr" */

struct curandGenerator_st {
    unsigned magic;
    curandRngType_t type;
    int host; /* curandCreateGeneratorHost */
    unsigned long long seed, offset;
    unsigned dimensions; /* quasi generators */
    cudaStream_t stream;
    int states_ready; /* a generation set its states up since creation or seeding */
    uint64_t state;   /* a host generator's own sequence */
};

struct curandDiscreteDistribution_st {
    double lambda;
};

/* What a generation produces, as hysim.proto's RngOutput numbers them (log-normal numbers: the normals). */
enum kind { K_UINT32, K_UINT64, K_UNIFORM, K_UNIFORM_DOUBLE, K_NORMAL, K_NORMAL_DOUBLE, K_POISSON };

/* The generator as hysim.proto's RngGenerator numbers them. */
static uint32_t wire_generator(curandRngType_t t)
{
    switch (t) {
    case CURAND_RNG_PSEUDO_MRG32K3A: return 1;
    case CURAND_RNG_PSEUDO_MTGP32: return 2;
    case CURAND_RNG_PSEUDO_MT19937: return 3;
    case CURAND_RNG_PSEUDO_PHILOX4_32_10: return 4;
    case CURAND_RNG_QUASI_DEFAULT:
    case CURAND_RNG_QUASI_SOBOL32: return 5;
    case CURAND_RNG_QUASI_SCRAMBLED_SOBOL32: return 6;
    case CURAND_RNG_QUASI_SOBOL64: return 7;
    case CURAND_RNG_QUASI_SCRAMBLED_SOBOL64: return 8;
    default: return 0; /* XORWOW, the default */
    }
}

/* ---- host generators: splitmix64, then the distributions ---- */

static uint64_t next_u64(struct curandGenerator_st *g)
{
    uint64_t z = (g->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* (0, 1], as cuRAND's uniforms */
static double next_uniform(struct curandGenerator_st *g)
{
    return ((double)(next_u64(g) >> 11) + 1) / 9007199254740992.0;
}

static double next_normal(struct curandGenerator_st *g)
{
    double u = next_uniform(g), v = next_uniform(g);
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

static unsigned next_poisson(struct curandGenerator_st *g, double lambda)
{
    if (lambda > 64) { /* normal approximation for large means */
        double x = lambda + sqrt(lambda) * next_normal(g) + 0.5;
        return x < 0 ? 0 : (unsigned)x;
    }
    double l = exp(-lambda), p = 1;
    unsigned k = 0;
    do {
        k++;
        p *= next_uniform(g);
    } while (p > l);
    return k - 1;
}

static void host_fill(struct curandGenerator_st *g, enum kind k, void *out, size_t n, double a, double b)
{
    for (size_t i = 0; i < n; i++) {
        switch (k) {
        case K_UINT32: ((unsigned *)out)[i] = (unsigned)(next_u64(g) >> 32); break;
        case K_UINT64: ((unsigned long long *)out)[i] = next_u64(g); break;
        case K_UNIFORM: ((float *)out)[i] = (float)next_uniform(g); break;
        case K_UNIFORM_DOUBLE: ((double *)out)[i] = next_uniform(g); break;
        case K_NORMAL: ((float *)out)[i] = (float)(a + b * next_normal(g)); break;
        case K_NORMAL_DOUBLE: ((double *)out)[i] = a + b * next_normal(g); break;
        case K_POISSON: ((unsigned *)out)[i] = next_poisson(g, a); break;
        }
    }
}

/* ---- generators ---- */

static int valid_type(curandRngType_t t)
{
    switch (t) {
    case CURAND_RNG_PSEUDO_DEFAULT:
    case CURAND_RNG_PSEUDO_XORWOW:
    case CURAND_RNG_PSEUDO_MRG32K3A:
    case CURAND_RNG_PSEUDO_MTGP32:
    case CURAND_RNG_PSEUDO_MT19937:
    case CURAND_RNG_PSEUDO_PHILOX4_32_10:
    case CURAND_RNG_QUASI_DEFAULT:
    case CURAND_RNG_QUASI_SOBOL32:
    case CURAND_RNG_QUASI_SCRAMBLED_SOBOL32:
    case CURAND_RNG_QUASI_SOBOL64:
    case CURAND_RNG_QUASI_SCRAMBLED_SOBOL64: return 1;
    default: return 0;
    }
}

static int quasi(curandRngType_t t) { return t >= CURAND_RNG_QUASI_DEFAULT; }
static int sixty_four(curandRngType_t t)
{
    return t == CURAND_RNG_QUASI_SOBOL64 || t == CURAND_RNG_QUASI_SCRAMBLED_SOBOL64;
}

static int ok(curandGenerator_t g) { return g && g->magic == HS_GEN_MAGIC; }

static curandStatus_t create(curandGenerator_t *out, curandRngType_t type, int host)
{
    if (!out)
        return CURAND_STATUS_NOT_INITIALIZED;
    if (!valid_type(type))
        return CURAND_STATUS_TYPE_ERROR;
    if (hs_client_start() != cudaSuccess)
        return CURAND_STATUS_INITIALIZATION_FAILED;
    struct curandGenerator_st *g = calloc(1, sizeof *g);
    if (!g)
        return CURAND_STATUS_ALLOCATION_FAILED;
    *g = (struct curandGenerator_st){
        .magic = HS_GEN_MAGIC, .type = type, .host = host, .seed = 0, .dimensions = 1, .state = 0};
    *out = g;
    return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandCreateGenerator(curandGenerator_t *generator, curandRngType_t rng_type)
{
    return create(generator, rng_type, 0);
}

curandStatus_t curandCreateGeneratorHost(curandGenerator_t *generator, curandRngType_t rng_type)
{
    return create(generator, rng_type, 1);
}

curandStatus_t curandDestroyGenerator(curandGenerator_t generator)
{
    if (!ok(generator))
        return CURAND_STATUS_NOT_INITIALIZED;
    generator->magic = 0;
    free(generator);
    return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandGetVersion(int *version)
{
    if (!version)
        return CURAND_STATUS_OUT_OF_RANGE;
    *version = CURAND_VERSION;
    return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandGetProperty(libraryPropertyType type, int *value)
{
    if (!value)
        return CURAND_STATUS_OUT_OF_RANGE;
    switch (type) {
    case MAJOR_VERSION: *value = CURAND_VER_MAJOR; return CURAND_STATUS_SUCCESS;
    case MINOR_VERSION: *value = CURAND_VER_MINOR; return CURAND_STATUS_SUCCESS;
    case PATCH_LEVEL: *value = CURAND_VER_PATCH; return CURAND_STATUS_SUCCESS;
    default: return CURAND_STATUS_OUT_OF_RANGE;
    }
}

curandStatus_t curandSetStream(curandGenerator_t generator, cudaStream_t stream)
{
    if (!ok(generator))
        return CURAND_STATUS_NOT_INITIALIZED;
    generator->stream = stream;
    return CURAND_STATUS_SUCCESS;
}

/* A new seed or offset: the states are set up again at the next generation, as cuRAND does. */
curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t generator, unsigned long long seed)
{
    if (!ok(generator))
        return CURAND_STATUS_NOT_INITIALIZED;
    if (quasi(generator->type))
        return CURAND_STATUS_TYPE_ERROR;
    generator->seed = seed;
    generator->state = seed;
    generator->states_ready = 0;
    return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandSetGeneratorOffset(curandGenerator_t generator, unsigned long long offset)
{
    if (!ok(generator))
        return CURAND_STATUS_NOT_INITIALIZED;
    if (generator->type == CURAND_RNG_PSEUDO_MTGP32 || generator->type == CURAND_RNG_PSEUDO_MT19937)
        return CURAND_STATUS_TYPE_ERROR;
    generator->offset = offset;
    generator->state = generator->seed + offset * 0x9e3779b97f4a7c15ull;
    generator->states_ready = 0;
    return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandSetGeneratorOrdering(curandGenerator_t generator, curandOrdering_t order)
{
    if (!ok(generator))
        return CURAND_STATUS_NOT_INITIALIZED;
    int q = order == CURAND_ORDERING_QUASI_DEFAULT;
    int p = order >= CURAND_ORDERING_PSEUDO_BEST && order <= CURAND_ORDERING_PSEUDO_DYNAMIC;
    return quasi(generator->type) ? (q ? CURAND_STATUS_SUCCESS : CURAND_STATUS_OUT_OF_RANGE)
                                  : (p ? CURAND_STATUS_SUCCESS : CURAND_STATUS_OUT_OF_RANGE);
}

curandStatus_t curandSetQuasiRandomGeneratorDimensions(curandGenerator_t generator, unsigned int num_dimensions)
{
    if (!ok(generator))
        return CURAND_STATUS_NOT_INITIALIZED;
    if (!quasi(generator->type))
        return CURAND_STATUS_TYPE_ERROR;
    if (num_dimensions < 1 || num_dimensions > 20000)
        return CURAND_STATUS_OUT_OF_RANGE;
    generator->dimensions = num_dimensions;
    generator->states_ready = 0;
    return CURAND_STATUS_SUCCESS;
}

/* ---- generation ---- */

static const char *const KERNEL_NAMES[] = {
    [K_UINT32] = "curandGenerate",         [K_UINT64] = "curandGenerateLongLong",
    [K_UNIFORM] = "curandGenerateUniform", [K_UNIFORM_DOUBLE] = "curandGenerateUniformDouble",
    [K_NORMAL] = "curandGenerateNormal",   [K_NORMAL_DOUBLE] = "curandGenerateNormalDouble",
    [K_POISSON] = "curandGeneratePoisson",
};

/* Checks and issues one generation of n numbers of kind k into out (a, b: the distribution's parameters). */
static curandStatus_t generate(curandGenerator_t g, enum kind k, void *out, size_t n, double a, double b)
{
    if (!ok(g))
        return CURAND_STATUS_NOT_INITIALIZED;
    if (sixty_four(g->type) != (k == K_UINT64) && (k == K_UINT32 || k == K_UINT64))
        return CURAND_STATUS_TYPE_ERROR;
    int pairs = (k == K_NORMAL || k == K_NORMAL_DOUBLE) && !quasi(g->type);
    if ((pairs && n % 2) || (quasi(g->type) && n % g->dimensions))
        return CURAND_STATUS_LENGTH_NOT_MULTIPLE;
    if (n == 0)
        return CURAND_STATUS_SUCCESS;
    if (!out)
        return CURAND_STATUS_LAUNCH_FAILURE;
    if (g->host) {
        if (hs_client_device_of(out) >= 0 && !hs_client_managed_find(out, NULL))
            return CURAND_STATUS_LAUNCH_FAILURE; /* a host generator writes host memory */
        host_fill(g, k, out, n, a, b);
        return CURAND_STATUS_SUCCESS;
    }
    if (hs_client_device_of(out) < 0)
        return CURAND_STATUS_LAUNCH_FAILURE; /* a device generator writes device memory */
    hs_random_generation r = {wire_generator(g->type), (uint32_t)k, n, !g->states_ready};
    if (hs_client_random_kernel(KERNEL_NAMES[k], &r, g->stream) != cudaSuccess)
        return CURAND_STATUS_LAUNCH_FAILURE;
    g->states_ready = 1;
    return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandGenerate(curandGenerator_t generator, unsigned int *outputPtr, size_t num)
{
    return generate(generator, K_UINT32, outputPtr, num, 0, 0);
}

curandStatus_t curandGenerateLongLong(curandGenerator_t generator, unsigned long long *outputPtr, size_t num)
{
    return generate(generator, K_UINT64, outputPtr, num, 0, 0);
}

curandStatus_t curandGenerateUniform(curandGenerator_t generator, float *outputPtr, size_t num)
{
    return generate(generator, K_UNIFORM, outputPtr, num, 0, 0);
}

curandStatus_t curandGenerateUniformDouble(curandGenerator_t generator, double *outputPtr, size_t num)
{
    return generate(generator, K_UNIFORM_DOUBLE, outputPtr, num, 0, 0);
}

curandStatus_t curandGenerateNormal(curandGenerator_t generator, float *outputPtr, size_t n, float mean, float stddev)
{
    return generate(generator, K_NORMAL, outputPtr, n, mean, stddev);
}

curandStatus_t curandGenerateNormalDouble(curandGenerator_t generator, double *outputPtr, size_t n, double mean,
                                          double stddev)
{
    return generate(generator, K_NORMAL_DOUBLE, outputPtr, n, mean, stddev);
}

/* Log-normal numbers: exp of the normals, on the host; on a GPU timed as the normals. */
static curandStatus_t log_normal(curandGenerator_t g, enum kind k, void *out, size_t n, double mean, double sd)
{
    curandStatus_t st = generate(g, k, out, n, mean, sd);
    if (st == CURAND_STATUS_SUCCESS && g->host)
        for (size_t i = 0; i < n; i++) {
            if (k == K_NORMAL)
                ((float *)out)[i] = expf(((float *)out)[i]);
            else
                ((double *)out)[i] = exp(((double *)out)[i]);
        }
    return st;
}

curandStatus_t curandGenerateLogNormal(curandGenerator_t generator, float *outputPtr, size_t n, float mean,
                                       float stddev)
{
    return log_normal(generator, K_NORMAL, outputPtr, n, mean, stddev);
}

curandStatus_t curandGenerateLogNormalDouble(curandGenerator_t generator, double *outputPtr, size_t n, double mean,
                                             double stddev)
{
    return log_normal(generator, K_NORMAL_DOUBLE, outputPtr, n, mean, stddev);
}

curandStatus_t curandGeneratePoisson(curandGenerator_t generator, unsigned int *outputPtr, size_t n, double lambda)
{
    if (!(lambda > 0))
        return CURAND_STATUS_OUT_OF_RANGE;
    return generate(generator, K_POISSON, outputPtr, n, lambda, 0);
}

curandStatus_t curandGeneratePoissonMethod(curandGenerator_t generator, unsigned int *outputPtr, size_t n,
                                           double lambda, curandMethod_t method)
{
    (void)method; /* one cost and one host sampler for every method */
    return curandGeneratePoisson(generator, outputPtr, n, lambda);
}

/* Sets the states up now (the set-up's time), instead of at the first generation. */
curandStatus_t curandGenerateSeeds(curandGenerator_t generator)
{
    if (!ok(generator))
        return CURAND_STATUS_NOT_INITIALIZED;
    if (generator->host || generator->states_ready)
        return CURAND_STATUS_SUCCESS;
    hs_random_generation r = {wire_generator(generator->type), K_UINT32, 0, 1}; /* no numbers: the set-up alone */
    if (hs_client_random_kernel("curandGenerateSeeds", &r, generator->stream) != cudaSuccess)
        return CURAND_STATUS_LAUNCH_FAILURE;
    generator->states_ready = 1;
    return CURAND_STATUS_SUCCESS;
}

/* ---- discrete distributions: the mean is all a host-side Poisson sampler needs ---- */

curandStatus_t curandCreatePoissonDistribution(double lambda, curandDiscreteDistribution_t *discrete_distribution)
{
    if (!discrete_distribution)
        return CURAND_STATUS_NOT_INITIALIZED;
    if (!(lambda > 0))
        return CURAND_STATUS_OUT_OF_RANGE;
    struct curandDiscreteDistribution_st *d = malloc(sizeof *d);
    if (!d)
        return CURAND_STATUS_ALLOCATION_FAILED;
    d->lambda = lambda;
    *discrete_distribution = d;
    return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandDestroyDistribution(curandDiscreteDistribution_t discrete_distribution)
{
    if (!discrete_distribution)
        return CURAND_STATUS_NOT_INITIALIZED;
    free(discrete_distribution);
    return CURAND_STATUS_SUCCESS;
}

/* ---- the quasi-random generators' tables (for the device API): not there yet ---- */

static curandStatus_t not_supported(const char *name)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static const char *said[8];
    pthread_mutex_lock(&lock);
    int i = 0;
    while (i < 8 && said[i] && said[i] != name)
        i++;
    if (i < 8 && !said[i]) {
        said[i] = name;
        fprintf(stderr, "hysim: %s is not supported yet\n", name);
    }
    pthread_mutex_unlock(&lock);
    return CURAND_STATUS_INTERNAL_ERROR;
}

curandStatus_t curandGetDirectionVectors32(curandDirectionVectors32_t *vectors[], curandDirectionVectorSet_t set)
{
    (void)vectors, (void)set;
    return not_supported("curandGetDirectionVectors32");
}

curandStatus_t curandGetDirectionVectors64(curandDirectionVectors64_t *vectors[], curandDirectionVectorSet_t set)
{
    (void)vectors, (void)set;
    return not_supported("curandGetDirectionVectors64");
}

curandStatus_t curandGetScrambleConstants32(unsigned int **constants)
{
    (void)constants;
    return not_supported("curandGetScrambleConstants32");
}

curandStatus_t curandGetScrambleConstants64(unsigned long long **constants)
{
    (void)constants;
    return not_supported("curandGetScrambleConstants64");
}
