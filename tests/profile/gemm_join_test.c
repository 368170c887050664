/*
 * The profile recorder's GEMM join without a GPU (interpose/profile/
 * gemm_join.h): GEMM calls, and the external-correlation and kernel records
 * CUPTI would report for them, fed in two different orders; each call's
 * kernels are summed (a split-k call launches two), failed calls, calls that
 * launched nothing and kernels outside any call give no sample, the written
 * "gemm:..." lines hold each key's median and are the same bytes either way,
 * and hysimd's kernel timing (bridge/compute/kernel_time.c) takes a GEMM op of that
 * shape and type from the file and leaves every other on the roofline. GEMM
 * calls captured into a CUDA graph: each launch of the graph gives one
 * sample per captured call, the sum of its nodes' kernels in that launch.
 * usage: gemm_join_test TMPDIR
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gemm_join.h"
#include "kernel_time_of.h"
#include "profile_aggregate.h"
#include "profile_db.h"

#define HS_CHECK_COUNTS
static int failures;
#include "test_check.h"

#define GPU  "NVIDIA H200"
#define N(a) (sizeof a / sizeof a[0])

/* The calls, in the order the program makes them (their ids are 1, 2, ...). */
static const hs_gemm_shape calls[] = {
    {4096, 2048, 1024, 1, HS_GEMM_BF16, 0, 0, 0}, /* 1: split-k, two kernels */
    {4096, 2048, 1024, 1, HS_GEMM_BF16, 0, 0, 0}, /* 2 */
    {512, 512, 64, 8, HS_GEMM_FP32, 0, 0, 0},     /* 3: a batch, one kernel */
    {4096, 2048, 1024, 1, HS_GEMM_BF16, 0, 0, 0}, /* 4 */
    {256, 256, 256, 1, HS_GEMM_FP16, 0, 0, 0},    /* 5: the real call fails */
    {128, 128, 128, 1, HS_GEMM_TF32, 0, 0, 0},    /* 6: launches nothing */
};
#define FAILED_CALL 5

typedef struct record {
    int is_kernel;
    uint32_t correlation_id;
    uint64_t external_id; /* correlation records */
    uint64_t ns;          /* kernel records */
} record;

/* What CUPTI reports: a correlation record per API call inside a call's
 * region (a runtime and a driver call may share an id), a kernel record per
 * launch; correlation 900's kernel ran outside any GEMM call, 901 names an
 * id no call has. */
static const record records[] = {
    {0, 100, 1, 0},     {0, 100, 1, 0},    {1, 100, 0, 90000}, {0, 101, 1, 0},    {1, 101, 0, 11000}, {0, 110, 2, 0},
    {1, 110, 0, 99000}, {0, 120, 3, 0},    {1, 120, 0, 40000}, {0, 130, 4, 0},    {1, 130, 0, 97000}, {0, 140, 5, 0},
    {1, 140, 0, 5000},  {1, 900, 0, 1234}, {0, 901, 77, 0},    {1, 901, 0, 4321}, {0, 150, 6, 0},
};
/* bf16 4096x2048x1024 samples: 101000 (calls 1), 99000, 97000: median 99 us */
static const hs_profile_key k_bf16 = {GPU, "gemm:bf16", {4096, 2048, 1024}, {1, 1, 1}, 0};
static const hs_profile_key k_fp32 = {GPU, "gemm:fp32", {512, 512, 64}, {8, 1, 1}, 0};

static void feed(hs_gemm_join *j, const record *r)
{
    if (r->is_kernel)
        CHECK_COND(hs_gemm_join_kernel(j, r->correlation_id, 0, GPU, r->ns) == 0);
    else
        CHECK_COND(hs_gemm_join_correlation(j, r->correlation_id, r->external_id) == 0);
}

/* order 0: as listed; 1: every kernel before every correlation record, both reversed */
static hs_prof_agg *record_run(int order)
{
    hs_gemm_join *j = hs_gemm_join_new();
    for (size_t i = 0; i < N(calls); i++)
        CHECK_COND(hs_gemm_join_begin(j, &calls[i]) == i + 1);
    hs_gemm_join_discard(j, FAILED_CALL);
    /* shapes without a GEMM key are not recorded */
    hs_gemm_shape big = {(uint64_t)UINT32_MAX + 1, 8, 8, 1, HS_GEMM_BF16, 0, 0, 0};
    hs_gemm_shape odd = {8, 8, 8, 1, 99, 0, 0, 0}, empty = {8, 0, 8, 1, HS_GEMM_BF16, 0, 0, 0};
    CHECK_COND(hs_gemm_join_begin(j, &big) == 0 && hs_gemm_join_begin(j, &odd) == 0 &&
               hs_gemm_join_begin(j, &empty) == 0);
    if (order == 0) {
        for (size_t i = 0; i < N(records); i++)
            feed(j, &records[i]);
    } else {
        for (size_t i = N(records); i-- > 0;)
            if (records[i].is_kernel)
                feed(j, &records[i]);
        for (size_t i = N(records); i-- > 0;)
            if (!records[i].is_kernel)
                feed(j, &records[i]);
    }
    hs_prof_agg *a = hs_prof_agg_new();
    hs_profile_key other = {GPU, "_Z5scalePffi", {64, 1, 1}, {256, 1, 1}, 0};
    CHECK_COND(hs_prof_agg_add(a, &other, 7000) == 0); /* a kernel the recorder keeps by name */
    size_t samples = 0;
    CHECK_COND(hs_gemm_join_resolve(j, a, &samples) == 0);
    CHECK_COND(samples == 4);
    CHECK_COND(hs_gemm_join_resolve(j, a, &samples) == 0 && samples == 0); /* no call gives a second sample */
    hs_gemm_join_free(j);
    return a;
}

static void check_stats(hs_prof_agg *a)
{
    hs_prof_stats s;
    CHECK_COND(hs_prof_agg_keys(a) == 3);
    CHECK_COND(hs_prof_agg_stats(a, &k_bf16, &s) == 0);
    CHECK_COND(s.launches == 3 && s.median_us == 99.0 && s.min_us == 97.0 && s.max_us == 101.0);
    CHECK_COND(hs_prof_agg_stats(a, &k_fp32, &s) == 0);
    CHECK_COND(s.launches == 1 && s.median_us == 40.0);
    hs_profile_key fp16 = {GPU, "gemm:fp16", {256, 256, 256}, {1, 1, 1}, 0};
    hs_profile_key tf32 = {GPU, "gemm:tf32", {128, 128, 128}, {1, 1, 1}, 0};
    CHECK_COND(hs_prof_agg_stats(a, &fp16, &s) == -1 && hs_prof_agg_stats(a, &tf32, &s) == -1);
}

/* A graph kernel record: the launch's correlation id, the (cloned) node it ran for, its duration. */
typedef struct graph_record {
    uint32_t launch;
    uint64_t node, ns;
} graph_record;

/*
 * Call 1 (bf16, split-k) captured as nodes 1001 and 1002, call 2 (fp32) as
 * 1003, call 3 (the real call failed) as 1004; 1005 is no GEMM's. Instantiation
 * clones each as 2001..2005, and the graph is launched three times (the
 * launches' correlation ids 500, 501, 502).
 */
static void check_graph_launches(int reversed)
{
    static const hs_gemm_shape captured[] = {
        {4096, 2048, 1024, 1, HS_GEMM_BF16, 0, 0, 0},
        {512, 512, 64, 8, HS_GEMM_FP32, 0, 0, 0},
        {256, 256, 256, 1, HS_GEMM_FP16, 0, 0, 0},
    };
    static const graph_record kernels[] = {
        {500, 2001, 30000}, {500, 2002, 5000}, {500, 2003, 20000}, {500, 2004, 1000}, {500, 2005, 777},
        {501, 2001, 32000}, {501, 2002, 6000}, {501, 2003, 21000}, {501, 2004, 1000}, {501, 2005, 777},
        {502, 2001, 36000}, {502, 2002, 4000}, {502, 2003, 22000}, {502, 2004, 1000}, {502, 2005, 777},
    };
    hs_gemm_join *j = hs_gemm_join_new();
    for (size_t i = 0; i < N(captured); i++)
        CHECK_COND(hs_gemm_join_begin(j, &captured[i]) == i + 1);
    CHECK_COND(hs_gemm_join_graph_node(j, 1001, 1) == 0 && hs_gemm_join_graph_node(j, 1002, 1) == 0 &&
               hs_gemm_join_graph_node(j, 1003, 2) == 0 && hs_gemm_join_graph_node(j, 1004, 3) == 0);
    hs_gemm_join_discard(j, 3);
    CHECK_COND(hs_gemm_join_correlation(j, 300, 1) == 0); /* the captured call's own launch: no kernel */
    for (uint64_t n = 1001; n <= 1005; n++)
        CHECK_COND(hs_gemm_join_graph_clone(j, n, n + 1000) == 0);
    for (size_t i = 0; i < N(kernels); i++) {
        const graph_record *k = &kernels[reversed ? N(kernels) - 1 - i : i];
        CHECK_COND(hs_gemm_join_kernel(j, k->launch, k->node, GPU, k->ns) == 0);
    }
    hs_prof_agg *a = hs_prof_agg_new();
    size_t samples = 0;
    CHECK_COND(hs_gemm_join_resolve(j, a, &samples) == 0);
    CHECK(samples == 6, "%zu samples from 3 launches of 2 recorded calls", samples);
    hs_prof_stats s;
    CHECK_COND(hs_prof_agg_keys(a) == 2);
    /* bf16: 35, 38, 40 us, both nodes of each launch summed */
    CHECK_COND(hs_prof_agg_stats(a, &k_bf16, &s) == 0 && s.launches == 3 && s.median_us == 38.0 && s.min_us == 35.0 &&
               s.max_us == 40.0);
    CHECK_COND(hs_prof_agg_stats(a, &k_fp32, &s) == 0 && s.launches == 3 && s.median_us == 21.0);
    hs_profile_key fp16 = {GPU, "gemm:fp16", {256, 256, 256}, {1, 1, 1}, 0};
    CHECK_COND(hs_prof_agg_stats(a, &fp16, &s) == -1); /* the failed call */
    CHECK_COND(hs_gemm_join_resolve(j, a, &samples) == 0 && samples == 0);
    hs_prof_agg_free(a);
    hs_gemm_join_free(j);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[1 << 14];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* kernel_time.c on an H200 scenario with the database: the source and duration of a GEMM op. */
static int time_of(const char *path, uint64_t m, uint64_t n, uint64_t k, uint64_t batch, int dtype, uint64_t *ps)
{
    hs_kernel_launch kern = {.name = "cublasGemmEx",
                             .grid = {1, 1, 1},
                             .block = {1, 1, 1},
                             .has_gemm = true,
                             .gemm = {.m = m, .n = n, .k = k, .batch = batch, .dtype = dtype}};
    return kernel_time_of(GPU, path, &kern, ps);
}

static void check_kernel_time(const char *path)
{
    uint64_t ps = 0;
    CHECK_COND(time_of(path, 4096, 2048, 1024, 1, HS_GEMM_BF16, &ps) == HS_KERNEL_PROFILE && ps == 99000000);
    CHECK_COND(time_of(path, 512, 512, 64, 8, HS_GEMM_FP32, &ps) == HS_KERNEL_PROFILE && ps == 40000000);
    /* another type, shape or batch is not this measurement */
    CHECK_COND(time_of(path, 4096, 2048, 1024, 1, HS_GEMM_FP16, &ps) == HS_KERNEL_ROOFLINE);
    CHECK_COND(time_of(path, 4096, 2048, 512, 1, HS_GEMM_BF16, &ps) == HS_KERNEL_ROOFLINE);
    CHECK_COND(time_of(path, 512, 512, 64, 4, HS_GEMM_FP32, &ps) == HS_KERNEL_ROOFLINE);
    CHECK_COND(time_of(path, (uint64_t)UINT32_MAX + 1, 2048, 1024, 1, HS_GEMM_BF16, &ps) == HS_KERNEL_ROOFLINE);
}

static void check_key(void)
{
    char name[16];
    hs_profile_key k;
    CHECK_COND(hs_profile_gemm_key(GPU, "bf16", 1, 2, 3, 4, name, sizeof name, &k) && !strcmp(k.kernel, "gemm:bf16") &&
               k.grid[0] == 1 && k.grid[1] == 2 && k.grid[2] == 3 && k.block[0] == 4 && k.block[1] == 1 &&
               k.block[2] == 1 && k.shared_bytes == 0 && !strcmp(k.gpu, GPU));
    CHECK_COND(hs_profile_gemm_key(GPU, "bf16", UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX, name, sizeof name, &k));
    CHECK_COND(!hs_profile_gemm_key(GPU, "bf16", 1, 2, (uint64_t)UINT32_MAX + 1, 1, name, sizeof name, &k));
    CHECK_COND(!hs_profile_gemm_key(GPU, "bf16", 1, 2, 3, 0, name, sizeof name, &k));
    CHECK_COND(!hs_profile_gemm_key(GPU, NULL, 1, 2, 3, 1, name, sizeof name, &k));
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s TMPDIR\n", argv[0]);
        return 2;
    }
    mkdir(argv[1], 0755);
    check_key();
    char path[1024], path2[1100], err[512] = "";
    snprintf(path, sizeof path, "%s/gemm.csv", argv[1]);
    snprintf(path2, sizeof path2, "%s/gemm_reordered.csv", argv[1]);
    hs_prof_agg *a = record_run(0), *b = record_run(1);
    check_stats(a);
    check_stats(b);
    size_t skipped = 99;
    CHECK_COND(hs_prof_agg_write(a, path, &skipped, err, sizeof err) == 0 && skipped == 0);
    CHECK_COND(hs_prof_agg_write(b, path2, &skipped, err, sizeof err) == 0 && skipped == 0);
    char *text = slurp(path);
    CHECK_COND(text && strstr(text, "\n" GPU ",gemm:bf16,4096,2048,1024,1,1,1,0,99\n"));
    CHECK_COND(text && strstr(text, "\n" GPU ",gemm:fp32,512,512,64,8,1,1,0,40\n"));
    CHECK_COND(text && strstr(text, "\n# 3 launches, mean 99.000 us, min 97.000 us, max 101.000 us\n"));
    CHECK_COND(text && !strstr(text, "gemm:fp16") && !strstr(text, "gemm:tf32"));
    char cmd[2400];
    snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", path, path2);
    CHECK_COND(system(cmd) == 0);
    check_kernel_time(path);
    check_graph_launches(0);
    check_graph_launches(1);
    hs_prof_agg_free(a);
    hs_prof_agg_free(b);
    if (failures)
        return 1;
    printf("ok\n");
    return 0;
}
