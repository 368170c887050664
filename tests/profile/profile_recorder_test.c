/*
 * The profile recorder without a GPU (interpose/profile/profile_aggregate.h):
 * synthetic kernel launches, as CUPTI's activity records would report them,
 * are grouped by key and written as a profile database; the file loads with
 * bridge/compute/profile_db.c, holds each key's median, and hysimd's kernel timing
 * (bridge/compute/kernel_time.c) then takes those kernels from it (source
 * "profile") under the same GPU model and only under it.
 * usage: profile_recorder_test TMPDIR
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kernel_time_of.h"
#include "profile_aggregate.h"
#include "profile_db.h"

#define HS_CHECK_COUNTS
static int failures;
#include "test_check.h"

#define GPU "NVIDIA H200"

/* Three kernels; launch durations in ns, deliberately out of order. */
static const hs_profile_key k_scale = {GPU, "_Z5scalePffi", {4096, 1, 1}, {256, 1, 1}, 0};
static const hs_profile_key k_scale_big = {GPU, "_Z5scalePffi", {8192, 1, 1}, {256, 1, 1}, 0};
static const hs_profile_key k_reduce = {GPU, "_Z6reducePKfPfi", {64, 2, 1}, {128, 2, 1}, 4096};
static const uint64_t d_scale[] = {7300, 7100, 9900, 7250, 7200}; /* median 7250 */
static const uint64_t d_scale_big[] = {14000, 12000};             /* median 13000 */
static const uint64_t d_reduce[] = {2001};
/* a key the format cannot hold: left out of the file, counted */
static const hs_profile_key k_comma = {GPU, "void f<1, 2>()", {1, 1, 1}, {32, 1, 1}, 0};

static void add_all(hs_prof_agg *a, const hs_profile_key *k, const uint64_t *ns, size_t n)
{
    for (size_t i = 0; i < n; i++)
        CHECK_COND(hs_prof_agg_add(a, k, ns[i]) == 0);
}

static double median_us(const uint64_t *ns, size_t n)
{
    uint64_t s[8];
    memcpy(s, ns, n * sizeof *s);
    for (size_t i = 1; i < n; i++) /* insertion sort: a handful of values */
        for (size_t j = i; j > 0 && s[j - 1] > s[j]; j--) {
            uint64_t t = s[j];
            s[j] = s[j - 1];
            s[j - 1] = t;
        }
    return (n % 2 ? (double)s[n / 2] : ((double)s[n / 2 - 1] + (double)s[n / 2]) / 2) / 1e3;
}

#define N(a) (sizeof a / sizeof a[0])

static void check_stats(hs_prof_agg *a)
{
    hs_prof_stats s;
    CHECK_COND(hs_prof_agg_stats(a, &k_scale, &s) == 0);
    CHECK_COND(s.launches == N(d_scale));
    CHECK_COND(s.median_us == median_us(d_scale, N(d_scale)));
    CHECK_COND(fabs(s.mean_us - (7300 + 7100 + 9900 + 7250 + 7200) / 5.0 / 1e3) < 1e-12);
    CHECK_COND(s.min_us == 7.1 && s.max_us == 9.9);
    hs_profile_key other = k_scale;
    other.shared_bytes = 16;
    CHECK_COND(hs_prof_agg_stats(a, &other, &s) == -1);
    CHECK_COND(hs_prof_agg_keys(a) == 4);
    CHECK_COND(hs_prof_agg_launches(a) == N(d_scale) + N(d_scale_big) + N(d_reduce) + 1);
}

static void check_loaded(const char *path)
{
    char err[512] = "";
    hs_profile_db *db = hs_profile_db_load(path, err, sizeof err);
    if (!db) {
        printf("FAIL: the written database does not load: %s\n", err);
        failures++;
        return;
    }
    CHECK_COND(hs_profile_db_size(db) == 3);
    double us = 0;
    CHECK_COND(hs_profile_db_lookup(db, &k_scale, &us) && us == median_us(d_scale, N(d_scale)));
    CHECK_COND(hs_profile_db_lookup(db, &k_scale_big, &us) && us == median_us(d_scale_big, N(d_scale_big)));
    CHECK_COND(hs_profile_db_lookup(db, &k_reduce, &us) && us == median_us(d_reduce, N(d_reduce)));
    CHECK_COND(!hs_profile_db_lookup(db, &k_comma, &us));
    hs_profile_db_free(db);
}

/* kernel_time.c on a daemon whose scenario names `model` and `path`: the source and duration of `k`. */
static int time_of(const char *model, const char *path, const hs_profile_key *k, uint64_t *ps)
{
    hs_kernel_launch kern = {.name = k->kernel,
                             .grid = {k->grid[0], k->grid[1], k->grid[2]},
                             .block = {k->block[0], k->block[1], k->block[2]},
                             .shared_bytes = k->shared_bytes};
    return kernel_time_of(model, path, &kern, ps);
}

static void check_kernel_time(const char *path)
{
    uint64_t ps = 0;
    CHECK_COND(time_of(GPU, path, &k_scale, &ps) == HS_KERNEL_PROFILE);
    CHECK_COND(ps == (uint64_t)llround(median_us(d_scale, N(d_scale)) * 1e6));
    CHECK_COND(time_of(GPU, path, &k_reduce, &ps) == HS_KERNEL_PROFILE);
    CHECK_COND(ps == (uint64_t)llround(median_us(d_reduce, N(d_reduce)) * 1e6));
    /* another GPU model is not this measurement; another grid is it scaled by the threads */
    CHECK_COND(time_of("NVIDIA H100 80GB HBM3", path, &k_scale, &ps) == HS_KERNEL_DEFAULT);
    hs_profile_key grid = k_scale;
    grid.grid[0] = 6144; /* halfway between the two grids recorded */
    CHECK_COND(time_of(GPU, path, &grid, &ps) == HS_KERNEL_FAMILY);
    double mid = (median_us(d_scale, N(d_scale)) + median_us(d_scale_big, N(d_scale_big))) / 2;
    CHECK(llabs((long long)ps - llround(mid * 1e6)) <= 1, "grid 6144: %llu ps, not %.0f", (unsigned long long)ps,
          mid * 1e6);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s TMPDIR\n", argv[0]);
        return 2;
    }
    mkdir(argv[1], 0755);
    char path[1024];
    snprintf(path, sizeof path, "%s/recorded.csv", argv[1]);

    hs_prof_agg *a = hs_prof_agg_new();
    add_all(a, &k_scale, d_scale, 3);
    add_all(a, &k_reduce, d_reduce, N(d_reduce));
    add_all(a, &k_scale_big, d_scale_big, N(d_scale_big));
    add_all(a, &k_scale, d_scale + 3, N(d_scale) - 3); /* interleaved with other kernels, as on a GPU */
    CHECK_COND(hs_prof_agg_add(a, &k_comma, 1000) == 0);
    check_stats(a);

    size_t skipped = 99;
    char err[512] = "";
    CHECK_COND(hs_prof_agg_write(a, path, &skipped, err, sizeof err) == 0);
    CHECK_COND(skipped == 1);
    check_loaded(path);
    check_kernel_time(path);

    /* written twice, the same bytes: the file does not depend on launch order */
    hs_prof_agg *b = hs_prof_agg_new();
    add_all(b, &k_scale_big, d_scale_big, N(d_scale_big));
    CHECK_COND(hs_prof_agg_add(b, &k_comma, 1000) == 0);
    add_all(b, &k_scale, d_scale, N(d_scale));
    add_all(b, &k_reduce, d_reduce, N(d_reduce));
    char path2[1100];
    snprintf(path2, sizeof path2, "%s.again", path);
    CHECK_COND(hs_prof_agg_write(b, path2, &skipped, err, sizeof err) == 0);
    char cmd[2400];
    snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", path, path2);
    CHECK_COND(system(cmd) == 0);

    /* an unwritable place is an error naming it */
    CHECK_COND(hs_prof_agg_write(a, "/nonexistent-dir/x.csv", &skipped, err, sizeof err) == -1);
    CHECK_COND(strstr(err, "/nonexistent-dir/x.csv") != NULL);
    hs_prof_agg_free(a);
    hs_prof_agg_free(b);
    if (failures)
        return 1;
    printf("ok\n");
    return 0;
}
