/*
 * The profile database (DESIGN.md, "Compute model"): kernel durations measured
 * on a real GPU, keyed by GPU model, kernel name, grid, block and dynamic
 * shared memory. A kernel found here takes the measured time. Format
 * (version 1), a text file:
 *
 *   # hysim-profile 1
 *   # gpu,kernel,grid_x,grid_y,grid_z,block_x,block_y,block_z,shared_bytes,us
 *   NVIDIA H200,_Z6scalePfi,1024,1,1,256,1,1,0,12.5
 *
 * The first line must be "# hysim-profile 1"; later lines starting with '#'
 * and blank lines are comments. Fields are comma-separated without quoting
 * (neither GPU model names nor mangled kernel names contain commas); gpu is
 * the scenario's gpu model as cudaDeviceProp.name reports it; us > 0. A key
 * given twice is an error.
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

size_t hs_profile_db_size(const hs_profile_db *db);

/*
 * Writing a database (the profile recorder, interpose/profile/): the first
 * line and the column comment, then one line per entry. -1 when the key
 * cannot be written in this format (a comma or line break in a name, a zero
 * dimension) or us is not positive, or on a write error.
 */
int hs_profile_db_write_header(FILE *f);
int hs_profile_db_write_entry(FILE *f, const hs_profile_key *key, double us);

void hs_profile_db_free(hs_profile_db *db);

#endif
