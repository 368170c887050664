/*
 * The compute model's GEMM roofline (docs/compute.md): the time a
 * cuBLAS/cuBLASLt GEMM of known shape and type takes on the scenario's GPU,
 * from its peak FLOP/s per type and HBM bandwidth and an efficiency curve
 * fitted to real timings (bridge/compute/gemm_efficiency.h, bench/compute/fit_gemm.sh).
 * The daemon and the calibration test call the same function.
 */
#ifndef HYSIM_BRIDGE_GEMM_MODEL_H
#define HYSIM_BRIDGE_GEMM_MODEL_H

#include <stdint.h>

#include "hysim/gemm_dtype.h"
#include "hysim/scenario.h"

typedef struct hs_gemm_shape {
    uint64_t m, n, k;
    uint64_t batch;         /* 0 is read as 1 */
    int dtype;              /* enum hs_gemm_dtype */
    uint64_t lda, ldb, ldc; /* leading dimensions in elements; 0: packed, not transposed (m, k, m) */
} hs_gemm_shape;

/*
 * Predicted time per call in microseconds (0 for an empty product), as the
 * curve was fitted: CUDA events around calls issued back to back on one
 * stream, so it includes the GPU's launch gap before each kernel.
 */
double hs_gemm_time_us(const hs_scenario *sc, const hs_gemm_shape *g);

/*
 * The launch gap in the fitted times: on the H100 the fit's data came from,
 * a GEMM's CUDA-event time per call exceeds its kernels' CUPTI time by 1.1 to
 * 1.3 us, other kernels' by 0.9 to 1.0 us (bench/RESULTS.md, "Kernel launch
 * gap"); the scenario's default gap (compute.kernel_gap_us) is the same 1 us.
 */
#define HS_GEMM_FIT_GAP_US 1.0

/* The kernel alone: hs_gemm_time_us less the fitted gap, which the timeline adds back as the scenario's. */
double hs_gemm_kernel_us(const hs_scenario *sc, const hs_gemm_shape *g);

/* The dtype's name as bench/real/data CSVs spell it ("bf16"), or NULL if unknown (gemm_dtype.c). */
const char *hs_gemm_dtype_name(int dtype);

#endif
