/*
 * How long a cuRAND generation takes (docs/compute.md): a fixed cost plus
 * the count at the generator's and output's rate, and on a generator's first
 * generation the set-up of its states, as measured on a real H100 and H200
 * (bench/RESULTS.md, "cuRAND"). The interposer's libcurand sends what it
 * generates (hysim.proto RandomGeneration, hs_rng_generation here); this
 * times it.
 */
#ifndef HYSIM_BRIDGE_RANDOM_TIME_H
#define HYSIM_BRIDGE_RANDOM_TIME_H

#include <stdbool.h>
#include <stdint.h>

/* cuRAND's generators (curandRngType_t) and outputs (the curandGenerate* call), in hysim.proto's numbering. */
enum hs_rng_generator {
    HS_RNG_XORWOW,
    HS_RNG_MRG32K3A,
    HS_RNG_MTGP32,
    HS_RNG_MT19937,
    HS_RNG_PHILOX,
    HS_RNG_SOBOL32,
    HS_RNG_SCRAMBLED_SOBOL32,
    HS_RNG_SOBOL64,
    HS_RNG_SCRAMBLED_SOBOL64,
};
enum hs_rng_output { /* log-normal numbers are the normals' kernel */
                     HS_RNG_UINT32,
                     HS_RNG_UINT64,
                     HS_RNG_UNIFORM,
                     HS_RNG_UNIFORM_DOUBLE,
                     HS_RNG_NORMAL,
                     HS_RNG_NORMAL_DOUBLE,
                     HS_RNG_POISSON,
};

/* One generation. */
typedef struct hs_rng_generation {
    enum hs_rng_generator generator;
    enum hs_rng_output output;
    uint64_t count; /* numbers generated */
    bool first;     /* the generator's first since it was created or seeded: its states are set up too */
} hs_rng_generation;

/* The generation's GPU time in ns on a GPU named gpu_model (an H200's costs for an H200, else an H100's). */
uint64_t hs_random_time_ns(const char *gpu_model, const hs_rng_generation *r);

#endif
