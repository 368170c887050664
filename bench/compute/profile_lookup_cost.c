/*
 * What timing a kernel from a profile database costs hysimd: exact lookups
 * (hs_profile_db_lookup), family models of a kernel at a size the database
 * lacks (hs_profile_db_scaled, by name and by template), and misses, on a
 * database the size of the shipped one, in ns per call (bench/RESULTS.md).
 * usage: profile_lookup_cost DATABASE.csv [CALLS]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profile_db.h"

#define MAX_KEYS 4096

typedef struct entry {
    char gpu[64], kernel[1024];
    unsigned grid[3], block[3];
    unsigned long long shared;
} entry;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int read_keys(const char *path, entry *out, int max)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[2048];
    int n = 0;
    while (n < max && fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        entry *e = &out[n];
        char *gpu = strtok(line, ","), *kernel = strtok(NULL, ",");
        if (!gpu || !kernel)
            continue;
        snprintf(e->gpu, sizeof e->gpu, "%s", gpu);
        snprintf(e->kernel, sizeof e->kernel, "%s", kernel);
        int ok = 1;
        for (int i = 0; i < 3 && ok; i++) {
            char *t = strtok(NULL, ",");
            ok = t && (e->grid[i] = (unsigned)strtoul(t, NULL, 10)) > 0;
        }
        for (int i = 0; i < 3 && ok; i++) {
            char *t = strtok(NULL, ",");
            ok = t && (e->block[i] = (unsigned)strtoul(t, NULL, 10)) > 0;
        }
        char *t = ok ? strtok(NULL, ",") : NULL;
        if (!t)
            continue;
        e->shared = strtoull(t, NULL, 10);
        n++;
    }
    fclose(f);
    return n;
}

static hs_profile_key key_of(const entry *e, unsigned grid_scale, const char *kernel)
{
    hs_profile_key k = {.gpu = e->gpu, .kernel = kernel ? kernel : e->kernel, .shared_bytes = e->shared};
    for (int i = 0; i < 3; i++) {
        k.grid[i] = e->grid[i] * (i == 0 ? grid_scale : 1);
        k.block[i] = e->block[i];
    }
    return k;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DATABASE.csv [CALLS]\n", argv[0]);
        return 2;
    }
    long calls = argc > 2 ? atol(argv[2]) : 2000000;
    char err[512];
    hs_profile_db *db = hs_profile_db_load(argv[1], err, sizeof err);
    static entry keys[MAX_KEYS];
    int n = read_keys(argv[1], keys, MAX_KEYS);
    if (!db || n <= 0) {
        fprintf(stderr, "%s: %s\n", argv[1], db ? "no keys" : err);
        return 1;
    }
    double sink = 0, us;
    const char *names[4] = {"exact lookup (hit)", "family by name (grid x 3, not in the database)",
                            "family by template (other functor)", "miss (no such kernel or template)"};
    printf("# profile_lookup_cost: %s, %zu entries, %ld calls per case\n", argv[1], hs_profile_db_size(db), calls);
    for (int c = 0; c < 4; c++) {
        int found = 0;
        double t0 = now_s();
        for (long i = 0; i < calls; i++) {
            const entry *e = &keys[i % n];
            hs_profile_key k;
            int got;
            char other[1100];
            switch (c) {
            case 0:
                k = key_of(e, 1, NULL);
                got = hs_profile_db_lookup(db, &k, &us);
                break;
            case 1:
                k = key_of(e, 3, NULL);
                got = !hs_profile_db_lookup(db, &k, &us) && hs_profile_db_scaled(db, &k, &us) > 0;
                break;
            case 2: {
                size_t len = hs_profile_family_length(e->kernel);
                snprintf(other, sizeof other, "%.*sIZ_other_functorE", (int)(len ? len : 8), e->kernel);
                k = key_of(e, 1, other);
                got = !hs_profile_db_lookup(db, &k, &us) && hs_profile_db_scaled(db, &k, &us) > 0;
                break;
            }
            default:
                k = key_of(e, 1, "_Z20not_a_kernel_at_allPf");
                got = !hs_profile_db_lookup(db, &k, &us) && hs_profile_db_scaled(db, &k, &us) > 0;
                break;
            }
            found += got;
            sink += got ? us : 0;
        }
        double dt = now_s() - t0;
        printf("%-48s %8.1f ns per call   (%.1f %% of calls timed)\n", names[c], dt * 1e9 / (double)calls,
               100.0 * found / (double)calls);
    }
    hs_profile_db_free(db);
    return sink < 0;
}
