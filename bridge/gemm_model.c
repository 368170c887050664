/*
 * GEMM roofline × efficiency curve (gemm_model.h). Per product:
 *   t = t0 + flops / (peak × eff) + ab × (A + B bytes) / hbm + c × (C bytes) / hbm
 *       + l2 × (operand bytes of the waves of output tiles) / hbm
 * with the constants fitted per type on an H100 (gemm_efficiency.h,
 * bench/compute/fit_gemm.sh, which describes the wave term). Types
 * without their own fit borrow the closest one: TF32 and FP8 the BF16 curve
 * (tensor cores, at half and twice the BF16 peak), FP64 the FP32 curve at the
 * FP32 peak (Hopper's FP64 tensor peak equals its FP32 peak).
 */
#include "gemm_model.h"

#include <stddef.h>

#include "gemm_efficiency.h"

typedef struct curve {
    double eff, ab, c, t0_us, l2;
} curve;

static const curve CURVE_FP32 = {HS_GEMM_EFF_FP32, HS_GEMM_AB_FP32, HS_GEMM_C_FP32, HS_GEMM_T0_US_FP32,
                                 HS_GEMM_L2_FP32};
static const curve CURVE_FP16 = {HS_GEMM_EFF_FP16, HS_GEMM_AB_FP16, HS_GEMM_C_FP16, HS_GEMM_T0_US_FP16,
                                 HS_GEMM_L2_FP16};
static const curve CURVE_BF16 = {HS_GEMM_EFF_BF16, HS_GEMM_AB_BF16, HS_GEMM_C_BF16, HS_GEMM_T0_US_BF16,
                                 HS_GEMM_L2_BF16};

const char *hs_gemm_dtype_name(int dtype)
{
    switch (dtype) {
    case HS_GEMM_FP32: return "fp32";
    case HS_GEMM_FP16: return "fp16";
    case HS_GEMM_BF16: return "bf16";
    case HS_GEMM_FP64: return "fp64";
    case HS_GEMM_TF32: return "tf32";
    case HS_GEMM_FP8: return "fp8";
    default: return NULL;
    }
}

/* Peak FLOP/s (in TFLOP/s), element sizes and curve of a type; unknown types read as FP32. */
static void type_params(const hs_scenario *sc, int dtype, double *tflops, double *in_bytes, double *out_bytes,
                        const curve **cv)
{
    switch (dtype) {
    case HS_GEMM_FP16: *tflops = sc->gpu.bf16_tflops; *in_bytes = *out_bytes = 2; *cv = &CURVE_FP16; return;
    case HS_GEMM_BF16: *tflops = sc->gpu.bf16_tflops; *in_bytes = *out_bytes = 2; *cv = &CURVE_BF16; return;
    case HS_GEMM_TF32: *tflops = sc->gpu.bf16_tflops / 2; *in_bytes = *out_bytes = 4; *cv = &CURVE_BF16; return;
    case HS_GEMM_FP8: *tflops = sc->gpu.bf16_tflops * 2; *in_bytes = 1; *out_bytes = 2; *cv = &CURVE_BF16; return;
    case HS_GEMM_FP64: *tflops = sc->gpu.fp32_tflops; *in_bytes = *out_bytes = 8; *cv = &CURVE_FP32; return;
    default: *tflops = sc->gpu.fp32_tflops; *in_bytes = *out_bytes = 4; *cv = &CURVE_FP32; return;
    }
}

/* Bytes of A and B the GPU's waves of HS_GEMM_TILE² output tiles read from HBM:
 * the SMs run min(tiles, SMs) tiles at once, laid out along n first; a wave
 * reads its tiles' rows of A and columns of B once, k deep (tiles in one row
 * or column share them in L2), so a long wave along n re-reads more of A. */
static double wave_operand_bytes(uint64_t m, uint64_t n, uint64_t k, double in_bytes, int sm_count)
{
    uint64_t tiles_m = (m + HS_GEMM_TILE - 1) / HS_GEMM_TILE, tiles_n = (n + HS_GEMM_TILE - 1) / HS_GEMM_TILE;
    uint64_t tiles = tiles_m * tiles_n, sms = sm_count > 0 ? (uint64_t)sm_count : 1;
    uint64_t at_once = tiles < sms ? tiles : sms;
    uint64_t along_n = tiles_n < at_once ? tiles_n : at_once, along_m = (at_once + along_n - 1) / along_n;
    return (double)(along_m + along_n) * HS_GEMM_TILE * (double)k * in_bytes * (double)tiles / (double)at_once;
}

double hs_gemm_time_us(const hs_scenario *sc, const hs_gemm_shape *g)
{
    if (!g->m || !g->n || !g->k)
        return 0;
    double tflops, in_b, out_b;
    const curve *cv;
    type_params(sc, g->dtype, &tflops, &in_b, &out_b, &cv);
    double m = (double)g->m, n = (double)g->n, k = (double)g->k;
    double flop_per_us = tflops * 1e6, byte_per_us = sc->gpu.hbm_gbps * 1e3;
    double one = 2 * m * n * k / (flop_per_us * cv->eff) + cv->ab * (m * k + k * n) * in_b / byte_per_us +
                 cv->c * m * n * out_b / byte_per_us +
                 cv->l2 * wave_operand_bytes(g->m, g->n, g->k, in_b, sc->gpu.sm_count) / byte_per_us;
    /* a batch is one kernel: its fixed cost is paid once */
    return cv->t0_us + one * (double)(g->batch ? g->batch : 1);
}
