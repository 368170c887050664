/* How long a cuRAND generation takes on the scenario's GPU (random_time.h). */
#include "random_time.h"

#include <math.h>
#include <string.h>

/* ---- cuRAND's costs, measured on a real H100 and H200 (bench/real/data/curand_gen_h{100,200}.txt) ---- */

enum dist { UNIFORM, NORMAL, UNIFORM_DOUBLE, UINT32, NDISTS };

typedef struct gen_costs {
    double setup_us; /* a first generation's set-up of the states */
    struct {
        double fixed_us, per_us;
    } d[NDISTS]; /* fixed cost and numbers per us */
} gen_costs;

typedef struct gpu_costs {
    gen_costs xorwow, philox, mrg32k3a, mtgp32, sobol32;
} gpu_costs;

/*
 * Fitted on the medians of 2^24 and 2^28 numbers; the set-up is the median of
 * first - median (bench/interpose/curand_fit.sh prints each GPU's rows). The
 * H200 generates Philox's numbers, Sobol32's and double uniforms 16-33 %
 * faster than the H100 (whose memory bound them); the rest alike.
 */
static const gpu_costs H100_COSTS = {
    .xorwow = {284, {{7.9, 269.8e3}, {9.0, 66.2e3}, {6.3, 88.1e3}, {7.8, 355.8e3}}},
    .philox = {83, {{9.2, 769.8e3}, {8.4, 509.6e3}, {3.3, 195.5e3}, {9.7, 776.3e3}}},
    .mrg32k3a = {835, {{11.1, 365.4e3}, {10.6, 292.7e3}, {13.2, 319.0e3}, {11.3, 365.0e3}}},
    .mtgp32 = {346, {{18.2, 167.1e3}, {14.9, 121.7e3}, {16.2, 157.3e3}, {17.3, 170.1e3}}},
    .sobol32 = {7, {{13.5, 730.4e3}, {71.6, 574.3e3}, {10.9, 403.0e3}, {12.0, 728.1e3}}},
};
static const gpu_costs H200_COSTS = {
    .xorwow = {281, {{7.7, 270.4e3}, {8.2, 66.0e3}, {8.1, 87.9e3}, {6.2, 356.2e3}}},
    .philox = {54, {{8.1, 937.4e3}, {7.3, 514.0e3}, {1.3, 228.0e3}, {8.5, 967.3e3}}},
    .mrg32k3a = {820, {{8.6, 364.7e3}, {8.3, 292.5e3}, {8.3, 368.5e3}, {9.0, 365.1e3}}},
    .mtgp32 = {320, {{13.0, 167.4e3}, {14.5, 122.1e3}, {15.4, 158.2e3}, {14.9, 171.0e3}}},
    .sobol32 = {4, {{18.4, 904.4e3}, {71.1, 559.5e3}, {7.8, 531.4e3}, {16.2, 899.1e3}}},
};

/* A GPU named H200 takes the H200's costs, any other GPU the H100's (as the GEMM curves). MT19937 is
 * timed as MTGP32 and the 64-bit and scrambled Sobol generators as Sobol32: not measured. */
static const gen_costs *costs_of(const char *gpu_model, enum hs_rng_generator generator)
{
    const gpu_costs *gpu = strstr(gpu_model, "H200") ? &H200_COSTS : &H100_COSTS;
    switch (generator) {
    case HS_RNG_PHILOX: return &gpu->philox;
    case HS_RNG_MRG32K3A: return &gpu->mrg32k3a;
    case HS_RNG_MTGP32:
    case HS_RNG_MT19937: return &gpu->mtgp32;
    case HS_RNG_SOBOL32:
    case HS_RNG_SCRAMBLED_SOBOL32:
    case HS_RNG_SOBOL64:
    case HS_RNG_SCRAMBLED_SOBOL64: return &gpu->sobol32;
    default: return &gpu->xorwow;
    }
}

/*
 * A generation's GPU time in ns. Kinds not measured borrow a measured one:
 * double normals the double uniforms' rate scaled by normal / uniform of the
 * same generator, log-normals the normals', Poisson numbers the normals',
 * 64-bit integers half the 32-bit rate.
 */
uint64_t hs_random_time_ns(const char *gpu_model, const hs_rng_generation *r)
{
    const gen_costs *c = costs_of(gpu_model, r->generator);
    if (r->count == 0)
        return r->first ? (uint64_t)llround(c->setup_us * 1e3) : 0; /* curandGenerateSeeds */
    double fixed, per_us;
    switch (r->output) {
    case HS_RNG_UINT32: fixed = c->d[UINT32].fixed_us, per_us = c->d[UINT32].per_us; break;
    case HS_RNG_UINT64: fixed = c->d[UINT32].fixed_us, per_us = c->d[UINT32].per_us / 2; break;
    case HS_RNG_UNIFORM: fixed = c->d[UNIFORM].fixed_us, per_us = c->d[UNIFORM].per_us; break;
    case HS_RNG_UNIFORM_DOUBLE: fixed = c->d[UNIFORM_DOUBLE].fixed_us, per_us = c->d[UNIFORM_DOUBLE].per_us; break;
    case HS_RNG_NORMAL_DOUBLE:
        fixed = c->d[UNIFORM_DOUBLE].fixed_us;
        per_us = c->d[UNIFORM_DOUBLE].per_us * c->d[NORMAL].per_us / c->d[UNIFORM].per_us;
        break;
    default: fixed = c->d[NORMAL].fixed_us, per_us = c->d[NORMAL].per_us; break; /* normal, log-normal, Poisson */
    }
    double us = fixed + (double)r->count / per_us + (r->first ? c->setup_us : 0);
    return (uint64_t)llround(us * 1e3);
}
