/*
 * How hysimd times a kernel (docs/compute.md), first match wins:
 * torch's grouped GEMMs by their groups' products (grouped_gemm_model.h),
 * the profile database (compute.profiles; a library GEMM by its shape and
 * type: profile_db.h), the GEMM roofline for library calls of known
 * shape, the scenario's default duration. The
 * run summary counts kernels and their time by source.
 */
#ifndef HYSIM_BRIDGE_KERNEL_TIME_H
#define HYSIM_BRIDGE_KERNEL_TIME_H

#include <stddef.h>
#include <stdint.h>

#include "gemm_model.h"
#include "grouped_gemm_model.h"
#include "random_time.h"

struct hs_daemon;

/* A kernel as its process launched it. */
typedef struct hs_kernel_launch {
    const char *name; /* mangled device function name (library calls: the API name); NULL: none */
    uint32_t grid[3], block[3];
    uint64_t shared_bytes;
    bool graph_node;    /* replayed by a CUDA graph: no launch gap (compute.kernel_gap_us) */
    bool has_gemm;      /* a library GEMM of this shape and type: the roofline's */
    hs_gemm_shape gemm; /* (batch 0 is read as 1; leading dimensions 0: packed) */
    bool has_random;    /* a cuRAND generation: random_time.c's */
    hs_rng_generation random;
    bool has_grouped;        /* torch's grouped GEMM: grouped_gemm_model.c's */
    hs_grouped_gemm grouped; /* (its sizes: the caller's, while the kernel is timed) */
} hs_kernel_launch;

enum hs_kernel_source {
    HS_KERNEL_DEFAULT = 0,
    HS_KERNEL_PROFILE,
    HS_KERNEL_ROOFLINE,
    HS_KERNEL_FAMILY,   /* the profile's entries of its name or template at other sizes (hs_profile_db_scaled) */
    HS_KERNEL_DATABASE, /* hysim's measured databases (compute.kernel_database), its size or its family */
};

/* Loads the scenario's profile database, if it names one. -1 with err on failure. */
int hs_kernel_time_init(struct hs_daemon *d, char *err, size_t errlen);
void hs_kernel_time_free(struct hs_daemon *d);

/* The kernel's duration on global GPU `gpu` in *dur_ps; returns its source. */
enum hs_kernel_source hs_kernel_time(const struct hs_daemon *d, uint32_t gpu, const hs_kernel_launch *k,
                                     uint64_t *dur_ps);

/* Adds a finished kernel to the run summary. */
void hs_kernel_time_count(struct hs_daemon *d, int source, uint64_t dur_ps);

/* A kernel timed by the default, by name: what a user would profile first. */
typedef struct hs_default_kernel {
    char *name;
    uint64_t count, ps;
} hs_default_kernel;
/* Notes a kernel issued that the default times (name may be NULL or empty: "(unnamed)"). */
void hs_kernel_time_note_default(struct hs_daemon *d, const char *name, uint64_t dur_ps);
/* The default-timed kernels, most time first (then by name); *n of them. Owned by the daemon. */
const hs_default_kernel *hs_kernel_time_defaults(struct hs_daemon *d, size_t *n);

#endif
