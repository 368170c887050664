/*
 * GEMM roofline × efficiency curve (gemm_model.h). Per product:
 *   t = t0 + flops × (1 + fill × idle + quant × waste) / (peak × e) + ab × (A + B bytes) / hbm
 *       + c × (C bytes) / hbm + l2 × (operand bytes of the waves of output tiles) / hbm
 * where idle = max(0, SMs / output tiles − 1), at most HS_GEMM_IDLE_CAP,
 * charges part of the SMs a small product leaves without a tile (cuBLAS's
 * split-k recovers the rest), and waste = 1 / u − 1 from one wave of tiles up
 * charges wave quantization: u is the useful share of the SM time of the
 * best of three tiles (the last wave's idle SMs, the padding of tiles that
 * overhang m or n), and e is the share of peak: eff, or eff_align8 /
 * eff_align2 when the operands' rows (leading dimensions) are not 16-byte
 * aligned (efficiency() says why)
 * with the constants fitted per GPU and type on real H100 and H200 timings
 * (gemm_efficiency.h, bench/compute/fit_gemm.sh, which describes the wave
 * term). A GPU named H200 takes the H200 curves, any other GPU the H100's
 * (the closest measured). TF32 runs at half the BF16 peak. Types without a
 * fit of their own borrow the closest one: FP8 the BF16 curve (at twice the
 * BF16 peak), FP64 the FP32 curve at the FP32 peak (Hopper's FP64 tensor
 * peak equals its FP32 peak).
 */
#include "gemm_model.h"

#include <stddef.h>
#include <string.h>

#include "gemm_efficiency.h"

typedef struct curve {
    double eff, ab, c, t0_us, l2, fill, quant, eff_align8, eff_align2;
} curve;

/* gemm_efficiency.h's nine constants of one GPU and type */
#define HS_CURVE(GPU, T)                                                                                   \
    {                                                                                                      \
        HS_GEMM_##GPU##_EFF_##T, HS_GEMM_##GPU##_AB_##T, HS_GEMM_##GPU##_C_##T, HS_GEMM_##GPU##_T0_US_##T, \
            HS_GEMM_##GPU##_L2_##T, HS_GEMM_##GPU##_FILL_##T, HS_GEMM_##GPU##_QUANT_##T,                   \
            HS_GEMM_##GPU##_EFF_ALIGN8_##T, HS_GEMM_##GPU##_EFF_ALIGN2_##T                                 \
    }

/* One GPU's measured curves. */
typedef struct gpu_curves {
    curve fp32, fp16, bf16, tf32;
} gpu_curves;

static const gpu_curves CURVES_H100 = {HS_CURVE(H100, FP32), HS_CURVE(H100, FP16), HS_CURVE(H100, BF16),
                                       HS_CURVE(H100, TF32)};
static const gpu_curves CURVES_H200 = {HS_CURVE(H200, FP32), HS_CURVE(H200, FP16), HS_CURVE(H200, BF16),
                                       HS_CURVE(H200, TF32)};

static const gpu_curves *curves_of(const hs_scenario *sc)
{
    return strstr(sc->gpu.model, "H200") ? &CURVES_H200 : &CURVES_H100;
}

/* Peak FLOP/s (in TFLOP/s), element sizes and curve of a type; unknown types read as FP32. */
static void type_params(const hs_scenario *sc, int dtype, double *tflops, double *in_bytes, double *out_bytes,
                        const curve **cv)
{
    const gpu_curves *g = curves_of(sc);
    switch (dtype) {
    case HS_GEMM_FP16:
        *tflops = sc->gpu.bf16_tflops;
        *in_bytes = *out_bytes = 2;
        *cv = &g->fp16;
        return;
    case HS_GEMM_BF16:
        *tflops = sc->gpu.bf16_tflops;
        *in_bytes = *out_bytes = 2;
        *cv = &g->bf16;
        return;
    case HS_GEMM_TF32:
        *tflops = sc->gpu.bf16_tflops / 2;
        *in_bytes = *out_bytes = 4;
        *cv = &g->tf32;
        return;
    case HS_GEMM_FP8:
        *tflops = sc->gpu.bf16_tflops * 2;
        *in_bytes = 1;
        *out_bytes = 2;
        *cv = &g->bf16;
        return;
    case HS_GEMM_FP64:
        *tflops = sc->gpu.fp32_tflops;
        *in_bytes = *out_bytes = 8;
        *cv = &g->fp32;
        return;
    default:
        *tflops = sc->gpu.fp32_tflops;
        *in_bytes = *out_bytes = 4;
        *cv = &g->fp32;
        return;
    }
}

/* Output tiles of HS_GEMM_TILE along a dimension of x elements. */
static uint64_t tiles_along(uint64_t x) { return (x + HS_GEMM_TILE - 1) / HS_GEMM_TILE; }

/* Bytes of A and B the GPU's waves of HS_GEMM_TILE² output tiles read from HBM:
 * the SMs run min(tiles, SMs) tiles at once, laid out along n first; a wave
 * reads its tiles' rows of A and columns of B once, k deep (tiles in one row
 * or column share them in L2), so a long wave along n re-reads more of A. */
static double wave_operand_bytes(uint64_t m, uint64_t n, uint64_t k, double in_bytes, int sm_count)
{
    uint64_t tiles_m = tiles_along(m), tiles_n = tiles_along(n);
    uint64_t tiles = tiles_m * tiles_n, sms = sm_count > 0 ? (uint64_t)sm_count : 1;
    uint64_t at_once = tiles < sms ? tiles : sms;
    uint64_t along_n = tiles_n < at_once ? tiles_n : at_once, along_m = (at_once + along_n - 1) / along_n;
    return (double)(along_m + along_n) * HS_GEMM_TILE * (double)k * in_bytes * (double)tiles / (double)at_once;
}

/* SMs without an output tile, per tile: max(0, SMs / tiles - 1), capped (split-k
 * keeps a few SMs busy however small the product); a batch's products are one
 * kernel, whose tiles all run at once */
static double idle_sms_per_tile(uint64_t m, uint64_t n, uint64_t batch, int sm_count)
{
    uint64_t tiles = tiles_along(m) * tiles_along(n) * batch;
    double sms = sm_count > 0 ? (double)sm_count : 1;
    double idle = (double)tiles < sms ? sms / (double)tiles - 1 : 0;
    return idle > HS_GEMM_IDLE_CAP ? HS_GEMM_IDLE_CAP : idle;
}

/* The useful share of the SM time of waves of tm x tn output tiles: the last
 * wave leaves SMs idle and tiles overhanging m or n compute padding. */
static double used_share(uint64_t m, uint64_t n, uint64_t tm, uint64_t tn, uint64_t sms)
{
    uint64_t tiles = ((m + tm - 1) / tm) * ((n + tn - 1) / tn), waves = (tiles + sms - 1) / sms;
    return (double)m * (double)n / ((double)(waves * sms) * (double)(tm * tn));
}

/* Wave quantization, 1 / u - 1 for the tile that wastes least of 128 x 128,
 * 128 x 256 and 256 x 128 (cuBLAS's heuristic picks among such); 0 below one
 * wave of 128 x 128 tiles, which idle_sms_per_tile charges instead. A batch's
 * products share their waves, so only its whole tile count matters there:
 * taken per product, as the fit measured single products. */
static double wave_waste(uint64_t m, uint64_t n, int sm_count)
{
    uint64_t sms = sm_count > 0 ? (uint64_t)sm_count : 1;
    if (tiles_along(m) * tiles_along(n) < sms)
        return 0;
    double u = used_share(m, n, HS_GEMM_TILE, HS_GEMM_TILE, sms);
    double wide = used_share(m, n, HS_GEMM_TILE, 2 * HS_GEMM_TILE, sms);
    double tall = used_share(m, n, 2 * HS_GEMM_TILE, HS_GEMM_TILE, sms);
    if (wide > u)
        u = wide;
    if (tall > u)
        u = tall;
    return 1 / u - 1;
}

/* The alignment in bytes of rows of x elements of s bytes: the largest power of two dividing x s, at most 16. */
static unsigned row_alignment(uint64_t x, double s)
{
    uint64_t bytes = x * (uint64_t)s;
    unsigned a = 1;
    while (a < 16 && bytes % (2 * a) == 0)
        a *= 2;
    return a;
}

/* The share of peak of a product whose operands' rows (their leading
 * dimensions; packed and not transposed: m of A and C, k of B, in cuBLAS's
 * column-major terms) are not all 16-byte aligned: cuBLAS cannot use its
 * sm90 (TMA) kernels and runs sm80/sm75 ones at a fraction of the rate. */
static double efficiency(const curve *cv, const hs_gemm_shape *g, double in_bytes)
{
    const uint64_t ld[3] = {g->lda ? g->lda : g->m, g->ldb ? g->ldb : g->k, g->ldc ? g->ldc : g->m};
    unsigned a = 16;
    for (int i = 0; i < 3; i++) {
        unsigned ai = row_alignment(ld[i], in_bytes);
        if (ai < a)
            a = ai;
    }
    return a >= 16 ? cv->eff : a >= 4 ? cv->eff_align8 : cv->eff_align2;
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
    double flops = 2 * m * n * k *
                   (1 + cv->fill * idle_sms_per_tile(g->m, g->n, g->batch ? g->batch : 1, sc->gpu.sm_count) +
                    cv->quant * wave_waste(g->m, g->n, sc->gpu.sm_count));
    double one = flops / (flop_per_us * efficiency(cv, g, in_b)) + cv->ab * (m * k + k * n) * in_b / byte_per_us +
                 cv->c * m * n * out_b / byte_per_us +
                 cv->l2 * wave_operand_bytes(g->m, g->n, g->k, in_b, sc->gpu.sm_count) / byte_per_us;
    /* a batch is one kernel: its fixed cost is paid once */
    return cv->t0_us + one * (double)(g->batch ? g->batch : 1);
}

double hs_gemm_kernel_us(const hs_scenario *sc, const hs_gemm_shape *g)
{
    double t = hs_gemm_time_us(sc, g);
    return t > HS_GEMM_FIT_GAP_US ? t - HS_GEMM_FIT_GAP_US : 0;
}
