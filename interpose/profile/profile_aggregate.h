/*
 * The profile recorder's bookkeeping, free of CUPTI so it can be tested
 * without a GPU: kernel launches measured on a real GPU, grouped by the key
 * hysimd looks kernels up by (bridge/compute/profile_db.h: GPU model, mangled kernel
 * name, grid, block, dynamic shared memory), written as a profile database
 * with each key's median duration.
 */
#ifndef HYSIM_INTERPOSE_PROFILE_AGGREGATE_H
#define HYSIM_INTERPOSE_PROFILE_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

#include "profile_db.h"

typedef struct hs_prof_agg hs_prof_agg;

typedef struct hs_prof_stats {
    uint64_t launches;
    double median_us, mean_us, min_us, max_us;
} hs_prof_stats;

hs_prof_agg *hs_prof_agg_new(void);
void hs_prof_agg_free(hs_prof_agg *a);

/* Adds one launch that ran for duration_ns (the key's strings are copied). -1 when out of memory. */
int hs_prof_agg_add(hs_prof_agg *a, const hs_profile_key *key, uint64_t duration_ns);

size_t hs_prof_agg_keys(const hs_prof_agg *a);
uint64_t hs_prof_agg_launches(const hs_prof_agg *a);

/* The key's statistics; -1 when it was never added. */
int hs_prof_agg_stats(hs_prof_agg *a, const hs_profile_key *key, hs_prof_stats *out);

/*
 * Writes the database to path (through path.tmp and a rename, so a reader
 * never sees half a file): entries sorted by key, each with its median
 * duration and a comment line with the launch count, mean, min and max.
 * A key the format cannot hold (a comma in a name) is left out and counted
 * in *skipped. 0 on success, -1 with err.
 */
int hs_prof_agg_write(hs_prof_agg *a, const char *path, size_t *skipped, char *err, size_t errlen);

#endif
