/*
 * The profile database: kernel durations measured on a real GPU, keyed by
 * GPU model, kernel name, grid, block and dynamic shared memory (a library
 * GEMM by its shape and type), read and written as a text file; its format
 * is in docs/compute.md, "The profile database".
 */
#ifndef HYSIM_BRIDGE_PROFILE_DB_H
#define HYSIM_BRIDGE_PROFILE_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct hs_profile_db hs_profile_db;

typedef struct hs_profile_key {
    const char *gpu;
    const char *kernel;
    uint32_t grid[3], block[3];
    uint64_t shared_bytes;
} hs_profile_key;

/* NULL on error, with "PATH:LINE: what is wrong" in err. */
hs_profile_db *hs_profile_db_load(const char *path, char *err, size_t errlen);

/* true and *us when the key is in the database. */
bool hs_profile_db_lookup(const hs_profile_db *db, const hs_profile_key *key, double *us);

/*
 * A kernel the database lacks, timed from its family (docs/compute.md,
 * "Kernels"): 1 and *us from the entries of the same GPU and kernel name at
 * other launch sizes; else 2 and *us from those of the same template (a
 * mangled name's template without its arguments: every
 * at::native::vectorized_elementwise_kernel, whatever its functor); else 0.
 * Its work is its threads (grid x block); among the entries with its block
 * and shared memory (else all of them) the time is interpolated linearly in
 * work between the two that bracket it, kept at the smallest's below them,
 * and above the largest continued along the slope of the two largest (at
 * least the largest's time, at most proportional to work; one entry alone:
 * its time).
 */
int hs_profile_db_scaled(const hs_profile_db *db, const hs_profile_key *key, double *us);
/* The length of a mangled template kernel's name without its template arguments; 0 when it is not one. */
size_t hs_profile_family_length(const char *kernel);

size_t hs_profile_db_size(const hs_profile_db *db);

/*
 * Writing a database (the profile recorder, interpose/profile/): the first
 * line and the column comment, then one line per entry. -1 when the key
 * cannot be written in this format (a comma or line break in a name, a zero
 * dimension) or us is not positive, or on a write error.
 */
int hs_profile_db_write_header(FILE *f);
int hs_profile_db_write_entry(FILE *f, const hs_profile_key *key, double us);

/*
 * The key of a GEMM (above) of dtype name `dtype` on `gpu`; the kernel name is
 * written to name (16 bytes suffice). false when dtype is NULL or m, n, k or
 * batch is 0 or over UINT32_MAX: such a GEMM is neither looked up nor recorded.
 */
#define HS_PROFILE_GEMM_PREFIX "gemm:"
bool hs_profile_gemm_key(const char *gpu, const char *dtype, uint64_t m, uint64_t n, uint64_t k, uint64_t batch,
                         char *name, size_t namelen, hs_profile_key *out);

void hs_profile_db_free(hs_profile_db *db);

#endif
