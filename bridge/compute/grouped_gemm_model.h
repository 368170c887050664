/*
 * The compute model's grouped GEMM (docs/compute.md, "Grouped GEMMs"): the
 * time of torch's CUTLASS grouped GEMM (torch._grouped_mm) from its groups'
 * products and its kernel's tile, cluster and schedule, as a persistent
 * kernel deals its clusters' output tiles, with constants fitted on a real
 * H200 (bench/compute/fit_grouped_gemm.py).
 */
#ifndef HYSIM_BRIDGE_GROUPED_GEMM_MODEL_H
#define HYSIM_BRIDGE_GROUPED_GEMM_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hysim/scenario.h"

/* The dimension each group sets (hysim.proto GroupedDim). */
enum hs_grouped_dim { HS_GROUPED_M, HS_GROUPED_N, HS_GROUPED_K };

typedef struct hs_grouped_gemm {
    uint64_t m, n, k; /* the shared dimensions; the grouped one is sizes[g] */
    enum hs_grouped_dim grouped;
    const uint32_t *sizes;
    size_t groups;
    uint32_t tile_m, tile_n, cluster_m; /* one SM's output tile; SMs per cluster along m */
    bool pingpong;                      /* CUTLASS's Pingpong schedule (else Cooperative) */
} hs_grouped_gemm;

/* The kernel's time in microseconds, without the launch gap (which the timeline adds). */
double hs_grouped_gemm_us(const hs_scenario *sc, const hs_grouped_gemm *g);

#endif
