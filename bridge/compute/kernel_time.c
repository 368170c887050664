/*
 * Kernel durations by source (kernel_time.h). All GPUs of a scenario are the
 * same model, so the profile database is searched under gpu.model's name; a
 * library GEMM under its GEMM key (profile_db.h) before the roofline; a
 * cuRAND generation (hs_kernel_launch.random) its measured model's time
 * (random_time.c) unless profiled.
 */
#include "kernel_time.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_internal.h"
#include "gemm_model.h"
#include "profile_db.h"
#include "random_time.h"

static int by_name(const struct dirent **a, const struct dirent **b) { return strcmp((*a)->d_name, (*b)->d_name); }

static int is_csv(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return n > 4 && !strcmp(e->d_name + n - 4, ".csv");
}

/* Every .csv of compute.database_dir, in name order: hysim's own measurements, so a broken one is an error. */
static int load_databases(hs_daemon *d, char *err, size_t errlen)
{
    struct dirent **names;
    int n = scandir(d->sc.compute.database_dir, &names, is_csv, by_name);
    if (n < 0) {
        snprintf(err, errlen, "hysim: the kernel databases in %s: %s", d->sc.compute.database_dir, strerror(errno));
        return -1;
    }
    d->databases = calloc((size_t)n + 1, sizeof *d->databases);
    int rc = d->databases ? 0 : -1;
    if (rc)
        snprintf(err, errlen, "hysim: out of memory for the kernel databases");
    for (int i = 0; i < n; i++) {
        char path[sizeof d->sc.compute.database_dir + 256];
        snprintf(path, sizeof path, "%s/%s", d->sc.compute.database_dir, names[i]->d_name);
        if (!rc && !(d->databases[d->ndatabases++] = hs_profile_db_load(path, err, errlen)))
            rc = -1;
        free(names[i]);
    }
    free(names);
    return rc;
}

int hs_kernel_time_init(hs_daemon *d, char *err, size_t errlen)
{
    if (d->sc.compute.kernel_database && d->sc.compute.database_dir[0] && load_databases(d, err, errlen) < 0)
        return -1;
    if (!d->sc.compute.profiles[0])
        return 0;
    d->profiles = hs_profile_db_load(d->sc.compute.profiles, err, errlen);
    return d->profiles ? 0 : -1;
}

void hs_kernel_time_free(hs_daemon *d)
{
    hs_profile_db_free(d->profiles);
    d->profiles = NULL;
    for (size_t i = 0; i < d->ndatabases; i++)
        hs_profile_db_free(d->databases[i]);
    free(d->databases);
    d->databases = NULL;
    d->ndatabases = 0;
}

static uint64_t us_to_ps(double us) { return (uint64_t)llround(us * 1e6); }

/* The GEMM as `hysim profile` recorded it in db, under its GEMM key (profile_db.h). */
static bool profiled_gemm(const hs_daemon *d, const hs_profile_db *db, const hs_gemm_shape *g, double *us)
{
    char name[32];
    hs_profile_key key;
    return hs_profile_gemm_key(d->sc.gpu.model, hs_gemm_dtype_name(g->dtype), g->m, g->n, g->k,
                               g->batch ? g->batch : 1 /* as hysim.proto reads it */, name, sizeof name, &key) &&
           hs_profile_db_lookup(db, &key, us);
}

/* The kernel in one of hysim's databases at its launch size (a GEMM: its shape). */
static bool in_databases_exact(const hs_daemon *d, const hs_profile_key *key, const hs_gemm_shape *g, double *us)
{
    for (size_t i = 0; i < d->ndatabases; i++)
        if (g ? profiled_gemm(d, d->databases[i], g, us) : hs_profile_db_lookup(d->databases[i], key, us))
            return true;
    return false;
}

/* ... else its family's there (hs_profile_db_scaled). */
static bool in_databases_family(const hs_daemon *d, const hs_profile_key *key, double *us)
{
    for (size_t i = 0; i < d->ndatabases; i++)
        if (hs_profile_db_scaled(d->databases[i], key, us))
            return true;
    return false;
}

enum hs_kernel_source hs_kernel_time(const hs_daemon *d, uint32_t gpu, const hs_kernel_launch *k, uint64_t *dur_ps)
{
    (void)gpu; /* one GPU model per scenario */
    /* a profile or database entry of a grouped GEMM is of one size only: its products say more */
    if (k->has_grouped) {
        *dur_ps = us_to_ps(hs_grouped_gemm_us(&d->sc, &k->grouped));
        return HS_KERNEL_ROOFLINE;
    }
    double us;
    const hs_gemm_shape *g = k->has_gemm ? &k->gemm : NULL;
    hs_profile_key key = {d->sc.gpu.model,
                          k->name ? k->name : "",
                          {k->grid[0], k->grid[1], k->grid[2]},
                          {k->block[0], k->block[1], k->block[2]},
                          k->shared_bytes};
    if (d->profiles && ((g && profiled_gemm(d, d->profiles, g, &us)) || hs_profile_db_lookup(d->profiles, &key, &us))) {
        *dur_ps = us_to_ps(us);
        return HS_KERNEL_PROFILE;
    }
    if (g && in_databases_exact(d, &key, g, &us)) {
        *dur_ps = us_to_ps(us);
        return HS_KERNEL_DATABASE;
    }
    if (g) {
        *dur_ps = us_to_ps(hs_gemm_kernel_us(&d->sc, g));
        return HS_KERNEL_ROOFLINE;
    }
    /* a measurement at this very launch size before any family's estimate (docs/compute.md, "Kernels") */
    if (!k->has_random && in_databases_exact(d, &key, NULL, &us)) {
        *dur_ps = us_to_ps(us);
        return HS_KERNEL_DATABASE;
    }
    if (d->profiles && !k->has_random && hs_profile_db_scaled(d->profiles, &key, &us)) {
        *dur_ps = us_to_ps(us);
        return HS_KERNEL_FAMILY;
    }
    if (!k->has_random && in_databases_family(d, &key, &us)) {
        *dur_ps = us_to_ps(us);
        return HS_KERNEL_DATABASE;
    }
    if (k->has_random) {
        /* cuRAND's measured model, counted with the GEMM roofline's; measured between two events, like the
         * GEMMs, it holds the launch gap of its time (HS_GEMM_FIT_GAP_US), which the GPU adds */
        uint64_t ps = hs_ns_to_ps(hs_random_time_ns(d->sc.gpu.model, &k->random)), gap = us_to_ps(HS_GEMM_FIT_GAP_US);
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
    case HS_KERNEL_DATABASE:
        d->sum.kernels_database++;
        d->sum.kernel_ps_database += dur_ps;
        break;
    default:
        d->sum.kernels_default++;
        d->sum.kernel_ps_default += dur_ps;
        break;
    }
}
