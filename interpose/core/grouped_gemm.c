/*
 * torch's grouped GEMMs read from their launches (grouped_gemm.h).
 */
#include "grouped_gemm.h"

#include <stdlib.h>
#include <string.h>

#include "values.h"

/* at::cuda::detail::prepare_grouped_gemm_data<...>(14 pointers, const int* offs, int M, int N, int K,
 * std::array<long, 3> x 5 (strides of A, B, output; sizes of A, B), long, long, bool, bool): torch 2.11's */
#define PREPARE_PREFIX "_ZN2at4cuda6detail25prepare_grouped_gemm_data"
#define PREPARE_TAIL   "PKiiiiSt5arrayIlLm3EE"
enum { ARG_OFFS = 14, ARG_M, ARG_N, ARG_K, ARG_SHAPE_A = 21, ARG_SHAPE_B };

/* The integer of the next "ILi<n>E" (a template argument of int n) at or after *p, moving *p past it; 0: none. */
static uint32_t next_int_arg(const char **p)
{
    const char *s = strstr(*p, "ILi");
    if (!s)
        return 0;
    char *end;
    unsigned long v = strtoul(s + 3, &end, 10);
    if (end == s + 3 || *end != 'E' || v > 4096)
        return 0;
    *p = end;
    return (uint32_t)v;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && !strcmp(s + n - t, tail);
}

hs_gg_kernel hs_gg_kernel_of(const char *mangled)
{
    hs_gg_kernel k = {HS_GG_NONE, 0, 0, 0, false};
    if (!mangled)
        return k;
    if (!strncmp(mangled, PREPARE_PREFIX, strlen(PREPARE_PREFIX))) {
        if (strstr(mangled, PREPARE_TAIL) && ends_with(mangled, "llbb"))
            k.role = HS_GG_PREPARE;
        return k;
    }
    if (strncmp(mangled, "_ZN7cutlass13device_kernelI", 27) || !strstr(mangled, "17GroupProblemShape"))
        return k;
    /* MainloopSm90ArrayTmaGmmaWarpSpecialized<stages, ClusterShape<m, n, k>>, then the schedule and the tile */
    const char *p = strstr(mangled, "MainloopSm90ArrayTmaGmmaWarpSpecializedILi");
    const char *sched = strstr(mangled, "KernelPtrArrayTmaWarpSpecialized");
    if (!p || !sched)
        return k;
    p += strlen("MainloopSm90ArrayTmaGmmaWarpSpecialized");
    uint32_t stages = next_int_arg(&p), cluster_m = next_int_arg(&p);
    sched += strlen("KernelPtrArrayTmaWarpSpecialized");
    bool pingpong = !strncmp(sched, "Pingpong", 8);
    if (!pingpong && strncmp(sched, "Cooperative", 11))
        return k;
    uint32_t tile_m = next_int_arg(&sched), tile_n = next_int_arg(&sched);
    if (!stages || !cluster_m || !tile_m || !tile_n)
        return k;
    return (hs_gg_kernel){HS_GG_GEMM, tile_m, tile_n, cluster_m, pingpong};
}

/* The total of the grouped dimension split evenly over the groups. */
static void even_split(hs_gg_problem *p, uint64_t total)
{
    for (uint32_t g = 0; g < p->groups; g++)
        p->sizes[g] = (uint32_t)(total / p->groups + (g < total % p->groups));
    p->exact = false;
}

/* The groups' sizes from the offsets (cumulative ends), when all are known and make sense. */
static bool sizes_from_offsets(hs_gg_problem *p, uintptr_t offs, uint64_t total)
{
    int32_t ends[HS_GG_MAX_GROUPS];
    size_t n = (size_t)p->groups * sizeof ends[0];
    if (!offs || hs_values_peek(ends, offs, n) != n)
        return false;
    int32_t start = 0;
    for (uint32_t g = 0; g < p->groups; g++) {
        if (ends[g] < start || (uint64_t)ends[g] > total)
            return false;
        p->sizes[g] = (uint32_t)(ends[g] - start);
        start = ends[g];
    }
    p->exact = true;
    return true;
}

bool hs_gg_read(void *const *args, uint32_t groups, hs_gg_problem *p)
{
    if (!args || !groups || groups > HS_GG_MAX_GROUPS)
        return false;
    uintptr_t offs = (uintptr_t) * (const int32_t *const *)args[ARG_OFFS];
    int32_t m = *(const int32_t *)args[ARG_M], n = *(const int32_t *)args[ARG_N], k = *(const int32_t *)args[ARG_K];
    const int64_t *shape_a = (const int64_t *)args[ARG_SHAPE_A], *shape_b = (const int64_t *)args[ARG_SHAPE_B];
    int64_t total;
    *p = (hs_gg_problem){.groups = groups};
    if (m < 0 && n > 0 && k > 0 && shape_a[1] == k) { /* A 2-D: each group its rows of A and of the output */
        p->grouped = HS_GG_DIM_M, p->n = (uint64_t)n, p->k = (uint64_t)k, total = shape_a[0];
    } else if (n < 0 && m > 0 && k > 0) { /* B 2-D: each group its columns of B and of the output */
        p->grouped = HS_GG_DIM_N, p->m = (uint64_t)m, p->k = (uint64_t)k, total = shape_b[1];
    } else if (k < 0 && m > 0 && n > 0 && shape_a[0] == m) { /* A and B 2-D: each group its part of the depth */
        p->grouped = HS_GG_DIM_K, p->m = (uint64_t)m, p->n = (uint64_t)n, total = shape_a[1];
    } else if (m > 0 && n > 0 && k > 0) { /* all 3-D: the same product per group */
        p->grouped = HS_GG_DIM_M, p->n = (uint64_t)n, p->k = (uint64_t)k, total = (int64_t)m * groups;
        offs = 0;
    } else {
        return false;
    }
    if (total < 0 || total > (int64_t)UINT32_MAX * groups)
        return false;
    if (!sizes_from_offsets(p, offs, (uint64_t)total))
        even_split(p, (uint64_t)total);
    return true;
}
