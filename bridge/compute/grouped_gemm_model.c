/*
 * Grouped GEMM (grouped_gemm_model.h). A unit is one cluster's output tile,
 * cluster_m x tile_m rows by tile_n columns; group g's product has
 * ceil(m_g / unit rows) x ceil(n_g / tile_n) of them, each taking
 * a + b x k_g. The kernel deals them, in group order, round robin to the
 * SMs / cluster_m clusters and takes t0 + its busiest cluster's sum.
 * Constants per schedule from bench/compute/fit_grouped_gemm.py on an H200
 * (132 SMs, 989 dense BF16 TFLOP/s); another GPU scales b by its BF16 peak
 * and deals to its own SM count.
 */
#include "grouped_gemm_model.h"

#include <stdlib.h>

typedef struct schedule_fit {
    double t0_us, unit_us, depth_ns; /* t0, a, b */
} schedule_fit;

static const schedule_fit COOPERATIVE = {4.54, 2.736, 10.3885};
static const schedule_fit PINGPONG = {5.58, 0.934, 4.5186};
#define FIT_BF16_TFLOPS 989.4

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

double hs_grouped_gemm_us(const hs_scenario *sc, const hs_grouped_gemm *g)
{
    const schedule_fit *fit = g->pingpong ? &PINGPONG : &COOPERATIVE;
    uint32_t cluster = g->cluster_m ? g->cluster_m : 1;
    uint64_t rows = (uint64_t)cluster * (g->tile_m ? g->tile_m : 1), cols = g->tile_n ? g->tile_n : 1;
    size_t slots = (size_t)(sc->gpu.sm_count > 0 ? sc->gpu.sm_count : 132) / cluster;
    if (!slots)
        slots = 1;
    double depth_us = fit->depth_ns * 1e-3 * (sc->gpu.bf16_tflops > 0 ? FIT_BF16_TFLOPS / sc->gpu.bf16_tflops : 1);
    double *busy = calloc(slots, sizeof *busy);
    if (!busy)
        return fit->t0_us;
    size_t next = 0;
    for (size_t i = 0; i < g->groups; i++) {
        uint64_t m = g->grouped == HS_GROUPED_M ? g->sizes[i] : g->m;
        uint64_t n = g->grouped == HS_GROUPED_N ? g->sizes[i] : g->n;
        uint64_t k = g->grouped == HS_GROUPED_K ? g->sizes[i] : g->k;
        uint64_t units = ceil_div(m, rows) * ceil_div(n, cols);
        double each = fit->unit_us + depth_us * (double)k;
        /* whole rounds of the slots first, then the rest from where the deal stands */
        uint64_t rounds = units / slots, rest = units % slots;
        for (size_t s = 0; rounds && s < slots; s++)
            busy[s] += each * (double)rounds;
        for (uint64_t r = 0; r < rest; r++)
            busy[(next + r) % slots] += each;
        next = (next + rest) % slots;
    }
    double most = 0;
    for (size_t s = 0; s < slots; s++)
        if (busy[s] > most)
            most = busy[s];
    free(busy);
    return fit->t0_us + most;
}
