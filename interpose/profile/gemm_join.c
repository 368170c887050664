/*
 * GEMM calls joined with their kernels (gemm_join.h). Records are appended
 * as they come and joined by sorting the correlation records and searching
 * each kernel's correlation id among them, so the result does not depend on
 * the order of arrival.
 */
#include "gemm_join.h"

#include <stdbool.h>
#include <stdlib.h>

typedef struct gemm_call {
    hs_gemm_shape g;
    uint64_t ns;     /* its kernels' durations, summed */
    const char *gpu; /* the GPU its first kernel ran on */
    uint32_t kernels;
    bool failed, done;
} gemm_call;

typedef struct correlation {
    uint32_t correlation_id;
    uint64_t external_id;
} correlation;

typedef struct kernel {
    uint32_t correlation_id;
    uint64_t graph_node_id; /* 0: not launched by a graph */
    const char *gpu;
    uint64_t ns;
} kernel;

/* A graph node and the GEMM call it was created in (or cloned from a node of). */
typedef struct graph_node {
    uint64_t node_id, external_id;
} graph_node;

/* A graph launch's kernel of a captured GEMM call. */
typedef struct graph_kernel {
    uint32_t correlation_id;
    uint64_t external_id;
    const char *gpu;
    uint64_t ns;
} graph_kernel;

struct hs_gemm_join {
    gemm_call *calls;
    size_t ncalls, cap_calls;
    correlation *corr;
    size_t ncorr, cap_corr;
    kernel *kern;
    size_t nkern, cap_kern;
    graph_node *nodes; /* in the order reported; by node id once sorted */
    size_t nnodes, cap_nodes;
    bool nodes_sorted;
};

hs_gemm_join *hs_gemm_join_new(void) { return calloc(1, sizeof(hs_gemm_join)); }

void hs_gemm_join_free(hs_gemm_join *j)
{
    if (!j)
        return;
    free(j->calls);
    free(j->corr);
    free(j->kern);
    free(j->nodes);
    free(j);
}

/* Room for one more element in *items (n used of *cap); -1 when out of memory. */
static int reserve(void **items, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : 64;
    void *p = realloc(*items, c * size);
    if (!p)
        return -1;
    *items = p;
    *cap = c;
    return 0;
}

/* Whether the shape has a GEMM key (profile_db.h). */
static bool keyed(const hs_gemm_shape *g, const char *gpu, char *name, size_t namelen, hs_profile_key *key)
{
    return hs_profile_gemm_key(gpu, hs_gemm_dtype_name(g->dtype), g->m, g->n, g->k, g->batch, name, namelen, key);
}

uint64_t hs_gemm_join_begin(hs_gemm_join *j, const hs_gemm_shape *g)
{
    char name[32];
    hs_profile_key key;
    if (!keyed(g, "", name, sizeof name, &key) ||
        reserve((void **)&j->calls, &j->cap_calls, j->ncalls, sizeof *j->calls) != 0)
        return 0;
    j->calls[j->ncalls] = (gemm_call){.g = *g};
    return ++j->ncalls;
}

void hs_gemm_join_discard(hs_gemm_join *j, uint64_t id)
{
    if (id >= 1 && id <= j->ncalls)
        j->calls[id - 1].failed = true;
}

int hs_gemm_join_correlation(hs_gemm_join *j, uint32_t correlation_id, uint64_t external_id)
{
    if (reserve((void **)&j->corr, &j->cap_corr, j->ncorr, sizeof *j->corr) != 0)
        return -1;
    j->corr[j->ncorr++] = (correlation){correlation_id, external_id};
    return 0;
}

int hs_gemm_join_graph_node(hs_gemm_join *j, uint64_t node_id, uint64_t external_id)
{
    if (reserve((void **)&j->nodes, &j->cap_nodes, j->nnodes, sizeof *j->nodes) != 0)
        return -1;
    j->nodes[j->nnodes++] = (graph_node){node_id, external_id};
    j->nodes_sorted = false;
    return 0;
}

static int cmp_node(const void *x, const void *y)
{
    const graph_node *a = x, *b = y;
    return a->node_id < b->node_id ? -1 : a->node_id > b->node_id;
}

/* The GEMM call a node belongs to, 0 for none (CUPTI's node ids are unique in the process). */
static uint64_t node_call(const hs_gemm_join *j, uint64_t node_id)
{
    if (!j->nnodes)
        return 0;
    if (j->nodes_sorted) {
        graph_node want = {node_id, 0}, *hit = bsearch(&want, j->nodes, j->nnodes, sizeof *j->nodes, cmp_node);
        return hit ? hit->external_id : 0;
    }
    for (size_t i = j->nnodes; i-- > 0;)
        if (j->nodes[i].node_id == node_id)
            return j->nodes[i].external_id;
    return 0;
}

int hs_gemm_join_graph_clone(hs_gemm_join *j, uint64_t original_id, uint64_t clone_id)
{
    uint64_t id = node_call(j, original_id);
    return id ? hs_gemm_join_graph_node(j, clone_id, id) : 0;
}

int hs_gemm_join_kernel(hs_gemm_join *j, uint32_t correlation_id, uint64_t graph_node_id, const char *gpu,
                        uint64_t duration_ns)
{
    if (reserve((void **)&j->kern, &j->cap_kern, j->nkern, sizeof *j->kern) != 0)
        return -1;
    j->kern[j->nkern++] = (kernel){correlation_id, graph_node_id, gpu, duration_ns};
    return 0;
}

static int cmp_correlation(const void *x, const void *y)
{
    const correlation *a = x, *b = y;
    if (a->correlation_id != b->correlation_id)
        return a->correlation_id < b->correlation_id ? -1 : 1;
    return a->external_id < b->external_id ? -1 : a->external_id > b->external_id;
}

/* The call a kernel's correlation id belongs to, or NULL (a kernel outside any GEMM call). */
static gemm_call *call_of(hs_gemm_join *j, uint32_t correlation_id)
{
    size_t lo = 0, hi = j->ncorr;
    while (lo < hi) { /* the first record with this correlation id */
        size_t mid = lo + (hi - lo) / 2;
        if (j->corr[mid].correlation_id < correlation_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == j->ncorr || j->corr[lo].correlation_id != correlation_id)
        return NULL;
    uint64_t id = j->corr[lo].external_id;
    return id >= 1 && id <= j->ncalls ? &j->calls[id - 1] : NULL;
}

static int cmp_graph_kernel(const void *x, const void *y)
{
    const graph_kernel *a = x, *b = y;
    if (a->correlation_id != b->correlation_id)
        return a->correlation_id < b->correlation_id ? -1 : 1;
    return a->external_id < b->external_id ? -1 : a->external_id > b->external_id;
}

/* One sample per (graph launch, captured GEMM call): the sum of that call's kernels in that launch. */
static int resolve_graph_kernels(hs_gemm_join *j, hs_prof_agg *agg, size_t *samples)
{
    if (j->nnodes) /* qsort's array may not be NULL, even empty */
        qsort(j->nodes, j->nnodes, sizeof *j->nodes, cmp_node);
    j->nodes_sorted = true;
    graph_kernel *gk = NULL;
    size_t n = 0;
    for (size_t i = 0; i < j->nkern; i++) {
        uint64_t id = j->kern[i].graph_node_id ? node_call(j, j->kern[i].graph_node_id) : 0;
        if (!id || id > j->ncalls || j->calls[id - 1].failed)
            continue;
        if (!gk && !(gk = malloc(j->nkern * sizeof *gk)))
            return -1;
        gk[n++] = (graph_kernel){j->kern[i].correlation_id, id, j->kern[i].gpu, j->kern[i].ns};
    }
    if (n)
        qsort(gk, n, sizeof *gk, cmp_graph_kernel);
    for (size_t i = 0; i < n;) {
        size_t end = i;
        uint64_t ns = 0;
        while (end < n && cmp_graph_kernel(&gk[end], &gk[i]) == 0)
            ns += gk[end++].ns;
        char name[32];
        hs_profile_key key;
        if (keyed(&j->calls[gk[i].external_id - 1].g, gk[i].gpu, name, sizeof name, &key)) {
            if (hs_prof_agg_add(agg, &key, ns) != 0) {
                free(gk);
                return -1;
            }
            (*samples)++;
        }
        i = end;
    }
    free(gk);
    return 0;
}

int hs_gemm_join_resolve(hs_gemm_join *j, hs_prof_agg *agg, size_t *samples)
{
    *samples = 0;
    if (resolve_graph_kernels(j, agg, samples) != 0)
        return -1;
    if (j->ncorr)
        qsort(j->corr, j->ncorr, sizeof *j->corr, cmp_correlation);
    for (size_t i = 0; i < j->nkern; i++) {
        if (j->kern[i].graph_node_id && node_call(j, j->kern[i].graph_node_id))
            continue; /* a captured call's: counted above */
        gemm_call *c = call_of(j, j->kern[i].correlation_id);
        if (!c || c->done)
            continue;
        c->ns += j->kern[i].ns;
        if (!c->kernels++)
            c->gpu = j->kern[i].gpu;
    }
    j->nkern = j->ncorr = 0;
    for (size_t i = 0; i < j->ncalls; i++) {
        gemm_call *c = &j->calls[i];
        char name[32];
        hs_profile_key key;
        if (c->done || c->failed || !c->kernels || !keyed(&c->g, c->gpu, name, sizeof name, &key))
            continue;
        if (hs_prof_agg_add(agg, &key, c->ns) != 0)
            return -1;
        c->done = true;
        (*samples)++;
    }
    return 0;
}
