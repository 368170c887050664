/*
 * Kernel durations by source (kernel_time.h). All GPUs of a scenario are the
 * same model, so the profile database is searched under gpu.model's name; a
 * library GEMM under its GEMM key (profile_db.h) before the roofline; a
 * cuRAND generation (Kernel.random) its measured model's time
 * (random_time.c) unless profiled.
 */
#include "kernel_time.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_internal.h"
#include "gemm_model.h"
#include "profile_db.h"
#include "random_time.h"

/* The GEMM types the interposer sends (include/hysim/gemm_dtype.h) are the wire's. */
_Static_assert((int)HS_GEMM_FP32 == (int)HYSIM__GEMM_DTYPE__GEMM_FP32 &&
                   (int)HS_GEMM_FP16 == (int)HYSIM__GEMM_DTYPE__GEMM_FP16 &&
                   (int)HS_GEMM_BF16 == (int)HYSIM__GEMM_DTYPE__GEMM_BF16 &&
                   (int)HS_GEMM_FP64 == (int)HYSIM__GEMM_DTYPE__GEMM_FP64 &&
                   (int)HS_GEMM_TF32 == (int)HYSIM__GEMM_DTYPE__GEMM_TF32 &&
                   (int)HS_GEMM_FP8 == (int)HYSIM__GEMM_DTYPE__GEMM_FP8,
               "hysim/gemm_dtype.h and hysim.proto's GemmDtype differ");

int hs_kernel_time_init(hs_daemon *d, char *err, size_t errlen)
{
    if (!d->sc.compute.profiles[0])
        return 0;
    d->profiles = hs_profile_db_load(d->sc.compute.profiles, err, errlen);
    return d->profiles ? 0 : -1;
}

void hs_kernel_time_free(hs_daemon *d)
{
    hs_profile_db_free(d->profiles);
    d->profiles = NULL;
}

static uint64_t us_to_ps(double us) { return (uint64_t)llround(us * 1e6); }

/* The GEMM as `hysim profile` recorded it, under its GEMM key (profile_db.h). */
static bool profiled_gemm(const hs_daemon *d, const hs_gemm_shape *g, double *us)
{
    char name[32];
    hs_profile_key key;
    return hs_profile_gemm_key(d->sc.gpu.model, hs_gemm_dtype_name(g->dtype), g->m, g->n, g->k,
                               g->batch ? g->batch : 1 /* as hysim.proto reads it */, name, sizeof name, &key) &&
           hs_profile_db_lookup(d->profiles, &key, us);
}

enum hs_kernel_source hs_kernel_time(const hs_daemon *d, uint32_t gpu, const Hysim__Kernel *k, uint64_t *dur_ps)
{
    (void)gpu; /* one GPU model per scenario */
    double us;
    hs_gemm_shape g = {0};
    if (k->gemm)
        g = (hs_gemm_shape){k->gemm->m,          k->gemm->n,   k->gemm->k,   k->gemm->batch,
                            (int)k->gemm->dtype, k->gemm->lda, k->gemm->ldb, k->gemm->ldc};
    hs_profile_key key = {d->sc.gpu.model,
                          k->name ? k->name : "",
                          {k->grid_x, k->grid_y, k->grid_z},
                          {k->block_x, k->block_y, k->block_z},
                          k->shared_bytes};
    if (d->profiles && ((k->gemm && profiled_gemm(d, &g, &us)) || hs_profile_db_lookup(d->profiles, &key, &us))) {
        *dur_ps = us_to_ps(us);
        return HS_KERNEL_PROFILE;
    }
    if (k->gemm) {
        *dur_ps = us_to_ps(hs_gemm_kernel_us(&d->sc, &g));
        return HS_KERNEL_ROOFLINE;
    }
    if (d->profiles && !k->random && hs_profile_db_scaled(d->profiles, &key, &us)) {
        *dur_ps = us_to_ps(us);
        return HS_KERNEL_FAMILY;
    }
    if (k->random) {
        /* cuRAND's measured model, counted with the GEMM roofline's; measured between two events, like the
         * GEMMs, it holds the launch gap of its time (HS_GEMM_FIT_GAP_US), which the GPU adds */
        uint64_t ps = hs_ns_to_ps(hs_random_time_ns(d->sc.gpu.model, k->random)), gap = us_to_ps(HS_GEMM_FIT_GAP_US);
        *dur_ps = ps > gap ? ps - gap : 0;
        return HS_KERNEL_ROOFLINE;
    }
    *dur_ps = hs_ns_to_ps(d->sc.compute.default_kernel_ns);
    return HS_KERNEL_DEFAULT;
}

void hs_kernel_time_count(hs_daemon *d, int source, uint64_t dur_ps)
{
    d->sum.kernels++;
    switch (source) {
    case HS_KERNEL_PROFILE:
        d->sum.kernels_profile++;
        d->sum.kernel_ps_profile += dur_ps;
        break;
    case HS_KERNEL_ROOFLINE:
        d->sum.kernels_roofline++;
        d->sum.kernel_ps_roofline += dur_ps;
        break;
    case HS_KERNEL_FAMILY:
        d->sum.kernels_family++;
        d->sum.kernel_ps_family += dur_ps;
        break;
    default:
        d->sum.kernels_default++;
        d->sum.kernel_ps_default += dur_ps;
        break;
    }
}
