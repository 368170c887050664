/*
 * cuDNN's backend (graph) API as the cudnn-frontend inside the torch wheel
 * drives it for scaled dot-product attention: descriptors are attribute
 * stores; finalizing succeeds; the heuristics offer one engine, whose plan
 * needs no workspace; executing a plan times its operation graph. An SDPA
 * forward or backward operation, or the matmuls of a composite graph, count
 * their products' operations (attention: two forward, five backward), timed
 * as one compute-bound GEMM on the roofline (time_products says why); a
 * graph with neither is timed by the per-kernel default under its name. docs/pytorch.md, "cuDNN".
 * HYSIM_CUDNN_TRACE=1 prints every backend call.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "cudnn_internal.h"

#define HS_DESC_MAGIC 0x68734e4eu /* "hsNN": a descriptor this library made */

typedef struct attr {
    cudnnBackendAttributeName_t name;
    cudnnBackendAttributeType_t type;
    int64_t count;
    void *data;
} attr;

typedef struct hs_desc {
    uint32_t magic;
    cudnnBackendDescriptorType_t type;
    bool finalized;
    attr *attrs;
    size_t n, cap;
} hs_desc;

static __thread char t_last_error[256];
static int g_trace = -1;

const char *hs_cudnn_last_error(void) { return t_last_error; }

static bool tracing(void)
{
    if (g_trace < 0) {
        const char *t = getenv("HYSIM_CUDNN_TRACE");
        g_trace = t && *t && *t != '0';
    }
    return g_trace;
}

static cudnnStatus_t refuse(cudnnStatus_t st, const char *what)
{
    snprintf(t_last_error, sizeof t_last_error, "hysim: %s", what);
    if (tracing())
        fprintf(stderr, "hysim cudnn: refused: %s\n", what);
    return st;
}

static size_t elem_size(cudnnBackendAttributeType_t t)
{
    switch (t) {
    case CUDNN_TYPE_HANDLE: return sizeof(cudnnHandle_t);
    case CUDNN_TYPE_BOOLEAN: return sizeof(bool);
    case CUDNN_TYPE_INT64: return sizeof(int64_t);
    case CUDNN_TYPE_FLOAT: return sizeof(float);
    case CUDNN_TYPE_DOUBLE: return sizeof(double);
    case CUDNN_TYPE_VOID_PTR: return sizeof(void *);
    case CUDNN_TYPE_BACKEND_DESCRIPTOR: return sizeof(cudnnBackendDescriptor_t);
    case CUDNN_TYPE_CHAR: return 1;
    case CUDNN_TYPE_FRACTION: return sizeof(cudnnFraction_t);
    default: return sizeof(int); /* the enums, INT32 */
    }
}

static hs_desc *desc_of(cudnnBackendDescriptor_t d)
{
    hs_desc *h = d;
    return h && h->magic == HS_DESC_MAGIC ? h : NULL;
}

static attr *find(hs_desc *d, cudnnBackendAttributeName_t name)
{
    for (size_t i = 0; d && i < d->n; i++)
        if (d->attrs[i].name == name)
            return &d->attrs[i];
    return NULL;
}

static hs_desc *new_desc(cudnnBackendDescriptorType_t type)
{
    hs_desc *d = calloc(1, sizeof *d);
    if (d) {
        d->magic = HS_DESC_MAGIC;
        d->type = type;
    }
    return d;
}

static void clear(hs_desc *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->attrs[i].data);
    free(d->attrs);
    d->attrs = NULL;
    d->n = d->cap = 0;
}

static int put(hs_desc *d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
               const void *elems)
{
    size_t bytes = (size_t)count * elem_size(type);
    void *copy = bytes ? malloc(bytes) : NULL;
    if (bytes && !copy)
        return -1;
    if (bytes)
        memcpy(copy, elems, bytes);
    attr *a = find(d, name);
    if (!a) {
        if (d->n == d->cap) {
            size_t cap = d->cap ? 2 * d->cap : 8;
            attr *na = realloc(d->attrs, cap * sizeof *na);
            if (!na) {
                free(copy);
                return -1;
            }
            d->attrs = na;
            d->cap = cap;
        }
        a = &d->attrs[d->n++];
        a->name = name;
    } else {
        free(a->data);
    }
    a->type = type;
    a->count = count;
    a->data = copy;
    return 0;
}

/* The descriptor attribute name of d holds (its first), or NULL. */
static hs_desc *desc_attr(hs_desc *d, cudnnBackendAttributeName_t name)
{
    attr *a = find(d, name);
    if (!a || a->type != CUDNN_TYPE_BACKEND_DESCRIPTOR || a->count < 1)
        return NULL;
    return desc_of(((cudnnBackendDescriptor_t *)a->data)[0]);
}

/* Copies src's attributes into dst (a Get of a descriptor fills the caller's). */
static int copy_into(hs_desc *dst, hs_desc *src)
{
    clear(dst);
    for (size_t i = 0; i < src->n; i++)
        if (put(dst, src->attrs[i].name, src->attrs[i].type, src->attrs[i].count, src->attrs[i].data) < 0)
            return -1;
    dst->finalized = src->finalized;
    return 0;
}

cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *out)
{
    if (!out)
        return CUDNN_STATUS_BAD_PARAM;
    hs_desc *d = new_desc(type);
    if (tracing())
        fprintf(stderr, "hysim cudnn: create type %d -> %p\n", (int)type, (void *)d);
    *out = d;
    return d ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_ALLOC_FAILED;
}

cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor)
{
    hs_desc *d = desc_of(descriptor);
    if (!d)
        return descriptor ? CUDNN_STATUS_BAD_PARAM : CUDNN_STATUS_SUCCESS;
    clear(d);
    d->magic = 0;
    free(d);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendInitialize(cudnnBackendDescriptor_t descriptor)
{
    hs_desc *d = desc_of(descriptor);
    if (!d)
        return CUDNN_STATUS_BAD_PARAM;
    clear(d);
    d->finalized = false;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor)
{
    hs_desc *d = desc_of(descriptor);
    if (!d)
        return CUDNN_STATUS_BAD_PARAM;
    if (tracing())
        fprintf(stderr, "hysim cudnn: finalize %p (type %d, %zu attributes)\n", (void *)d, (int)d->type, d->n);
    d->finalized = true;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor, cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t count, const void *elements)
{
    hs_desc *d = desc_of(descriptor);
    if (!d || count < 0 || (count > 0 && !elements))
        return CUDNN_STATUS_BAD_PARAM;
    if (tracing())
        fprintf(stderr, "hysim cudnn: set %p (type %d) attr %d type %d count %lld\n", (void *)d, (int)d->type,
                (int)name, (int)type, (long long)count);
    return put(d, name, type, count, elements) < 0 ? CUDNN_STATUS_ALLOC_FAILED : CUDNN_STATUS_SUCCESS;
}

/* Writes up to requested elements of n (each size bytes, from src) and the count. */
static cudnnStatus_t give(int64_t requested, int64_t *count, void *out, const void *src, int64_t n, size_t size)
{
    if (count)
        *count = n;
    int64_t k = requested < n ? requested : n;
    if (k > 0 && out && src)
        memcpy(out, src, (size_t)k * size);
    return CUDNN_STATUS_SUCCESS;
}

/* A Get of a descriptor-valued attribute: fills the caller's descriptors with what src holds. */
static cudnnStatus_t give_descs(int64_t requested, int64_t *count, void *out, const cudnnBackendDescriptor_t *src,
                                int64_t n)
{
    if (count)
        *count = n;
    for (int64_t i = 0; i < requested && i < n && out; i++) {
        hs_desc *from = desc_of(src[i]), *dst = desc_of(((cudnnBackendDescriptor_t *)out)[i]);
        if (!from)
            return refuse(CUDNN_STATUS_BAD_PARAM, "a descriptor attribute holds a foreign descriptor");
        if (!dst || copy_into(dst, from) < 0)
            return refuse(CUDNN_STATUS_BAD_PARAM, "a Get of a descriptor needs descriptors to fill");
    }
    return CUDNN_STATUS_SUCCESS;
}

/* The one engine the heuristics offer for graph: an engine config holding it. */
static hs_desc *engine_config_for(hs_desc *graph)
{
    hs_desc *engine = new_desc(CUDNN_BACKEND_ENGINE_DESCRIPTOR), *cfg = new_desc(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    int64_t index = 0;
    cudnnBackendDescriptor_t g = graph, e = engine;
    if (!engine || !cfg || put(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g) < 0 ||
        put(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &index) < 0 ||
        put(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &e) < 0) {
        free(engine);
        free(cfg);
        return NULL;
    }
    engine->finalized = cfg->finalized = true;
    return cfg; /* kept for the process's life: the configs the caller fills point at its engine */
}

cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const descriptor, cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t requested, int64_t *count,
                                       void *elements)
{
    hs_desc *d = desc_of(descriptor);
    if (!d || requested < 0)
        return CUDNN_STATUS_BAD_PARAM;
    if (tracing())
        fprintf(stderr, "hysim cudnn: get %p (type %d) attr %d type %d requested %lld\n", (void *)d, (int)d->type,
                (int)name, (int)type, (long long)requested);
    attr *a = find(d, name);
    if (a && type == CUDNN_TYPE_BACKEND_DESCRIPTOR && a->type == type)
        return give_descs(requested, count, elements, a->data, a->count);
    if (a)
        return give(requested, count, elements, a->data, a->count, elem_size(a->type));
    static const int64_t zero = 0, one = 1;
    switch (name) {
    case CUDNN_ATTR_ENGINEHEUR_RESULTS: {
        hs_desc *graph = desc_attr(d, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH);
        if (!graph)
            return refuse(CUDNN_STATUS_BAD_PARAM, "engine heuristics without an operation graph");
        if (requested == 0) /* how many: one, made only when asked for */
            return give(0, count, NULL, NULL, 1, sizeof(cudnnBackendDescriptor_t));
        cudnnBackendDescriptor_t cfg = engine_config_for(graph);
        if (!cfg)
            return CUDNN_STATUS_ALLOC_FAILED;
        return give_descs(requested, count, elements, &cfg, 1);
    }
    case CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT: return give(requested, count, elements, &one, 1, 8);
    case CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE: return give(requested, count, elements, &zero, 1, 8);
    case CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION: {
        static const char json[] = "{\"engineId\":0,\"hysim\":true}";
        return give(requested, count, elements, json, (int64_t)sizeof json, 1);
    }
    default: {
        /* A number hysim's engine does not have (shared memory, a cfg's workspace): 0. Knobs, notes,
         * layouts: none. */
        static const char zeros[16];
        bool number = type == CUDNN_TYPE_INT64 || type == CUDNN_TYPE_INT32 || type == CUDNN_TYPE_FLOAT ||
                      type == CUDNN_TYPE_DOUBLE || type == CUDNN_TYPE_BOOLEAN;
        return give(requested, count, elements, zeros, number ? 1 : 0, elem_size(type));
    }
    }
}

/* ---- execution: the graph's time ---- */

/* A tensor descriptor's dimensions (up to 8) and data type; 0 dimensions when it is not one. */
static int tensor_dims(hs_desc *t, int64_t dims[8], int *dtype)
{
    attr *a = find(t, CUDNN_ATTR_TENSOR_DIMENSIONS), *ty = find(t, CUDNN_ATTR_TENSOR_DATA_TYPE);
    if (!a || a->type != CUDNN_TYPE_INT64 || a->count < 1 || a->count > 8)
        return 0;
    memcpy(dims, a->data, (size_t)a->count * sizeof(int64_t));
    *dtype = ty && ty->count > 0 ? *(int *)ty->data : CUDNN_DATA_FLOAT;
    return (int)a->count;
}

static int gemm_dtype(int cudnn_type)
{
    switch (cudnn_type) {
    case CUDNN_DATA_HALF: return 1;     /* GEMM_FP16 */
    case CUDNN_DATA_BFLOAT16: return 2; /* GEMM_BF16 */
    case CUDNN_DATA_DOUBLE: return 3;   /* GEMM_FP64 */
    case CUDNN_DATA_FP8_E4M3:
    case CUDNN_DATA_FP8_E5M2: return 5; /* GEMM_FP8 */
    default: return 4;                  /* fp32 data on tensor cores: GEMM_TF32 */
    }
}

/* What a graph computes: its products' floating-point operations, and the data type of the first. */
typedef struct graph_work {
    double flops;
    int dtype; /* cudnnDataType_t */
    int products;
} graph_work;

static void add_product(graph_work *w, double m, double n, double k, double batch, int dtype)
{
    if (!w->products++)
        w->dtype = dtype;
    w->flops += 2.0 * m * n * k * batch;
}

/* An SDPA operation: Q is B x H x Sq x D, K B x Hk x Skv x D, V B x Hk x Skv x Dv; its products. */
static cudnnStatus_t sdpa_work(hs_desc *op, bool backward, graph_work *w)
{
    hs_desc *q = desc_attr(op, backward ? CUDNN_ATTR_OPERATION_SDPA_BWD_QDESC : CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC);
    hs_desc *k = desc_attr(op, backward ? CUDNN_ATTR_OPERATION_SDPA_BWD_KDESC : CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC);
    hs_desc *v = desc_attr(op, backward ? CUDNN_ATTR_OPERATION_SDPA_BWD_VDESC : CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC);
    int64_t qd[8], kd[8], vd[8];
    int qt = 0, kt = 0, vt = 0;
    if (tensor_dims(q, qd, &qt) != 4 || tensor_dims(k, kd, &kt) != 4 || tensor_dims(v, vd, &vt) != 4)
        return refuse(CUDNN_STATUS_NOT_SUPPORTED, "an SDPA operation without 4-dimensional Q, K and V");
    double bh = (double)qd[0] * (double)qd[1], sq = (double)qd[2], d = (double)qd[3];
    double skv = (double)kd[2], dv = (double)vd[3];
    add_product(w, sq, skv, d, bh, qt);  /* S = Q K^T (recomputed backward) */
    add_product(w, sq, dv, skv, bh, qt); /* O = P V; backward dP = dO V^T */
    if (backward) {
        add_product(w, skv, dv, sq, bh, qt); /* dV = P^T dO */
        add_product(w, sq, d, skv, bh, qt);  /* dQ = dS K */
        add_product(w, skv, d, sq, bh, qt);  /* dK = dS^T Q */
    }
    return CUDNN_STATUS_SUCCESS;
}

/* A matmul of a composite graph: A is [batch..., M, K], B [batch..., K, N]. */
static cudnnStatus_t matmul_work(hs_desc *op, graph_work *w)
{
    int64_t ad[8], bd[8];
    int at = 0, bt = 0;
    int na = tensor_dims(desc_attr(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC), ad, &at);
    int nb = tensor_dims(desc_attr(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC), bd, &bt);
    if (na < 2 || nb < 2)
        return refuse(CUDNN_STATUS_NOT_SUPPORTED, "a matmul without 2-dimensional A and B");
    double batch = 1;
    for (int i = 0; i < na - 2; i++)
        batch *= (double)(ad[i] > (i < nb - 2 ? bd[i] : 1) ? ad[i] : bd[i]);
    add_product(w, (double)ad[na - 2], (double)bd[nb - 1], (double)ad[na - 1], batch, at);
    return CUDNN_STATUS_SUCCESS;
}

/*
 * A graph's products run fused in one kernel that keeps its intermediates
 * (attention's S x S scores) on chip: it is timed as one square GEMM of the
 * same operations on the roofline, compute-bound as the fused kernel is,
 * not as the products one by one, whose intermediates would cross memory.
 */
static cudnnStatus_t time_products(const graph_work *w, bool attention, cudaStream_t stream)
{
    uint64_t side = ((uint64_t)ceil(cbrt(w->flops / 2.0)) + 127) / 128 * 128; /* tile-aligned, as cuDNN's are */
    if (tracing())
        fprintf(stderr, "hysim cudnn: execute: %d products, %.4g flop, data type %d: a %llu^3 GEMM\n", w->products,
                w->flops, w->dtype, (unsigned long long)side);
    hs_gemm_call g = {side ? side : 1, side ? side : 1, side ? side : 1, 1, gemm_dtype(w->dtype), 0, 0, 0};
    return hs_client_gemm(attention ? "cudnn_fused_attention" : "cudnn_fused_matmul", &g, stream) == cudaSuccess
               ? CUDNN_STATUS_SUCCESS
               : CUDNN_STATUS_EXECUTION_FAILED;
}

cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan_d,
                                  cudnnBackendDescriptor_t variant_pack)
{
    hs_desc *plan = desc_of(plan_d);
    if (!handle || !plan || !desc_of(variant_pack))
        return CUDNN_STATUS_BAD_PARAM;
    hs_desc *cfg = desc_attr(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG);
    hs_desc *engine = desc_attr(cfg, CUDNN_ATTR_ENGINECFG_ENGINE);
    hs_desc *graph = desc_attr(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH);
    attr *ops = find(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS);
    if (!ops || ops->type != CUDNN_TYPE_BACKEND_DESCRIPTOR)
        return refuse(CUDNN_STATUS_BAD_PARAM, "an execution plan without an operation graph");
    cudaStream_t stream = hs_cudnn_stream(handle);
    graph_work w = {0, CUDNN_DATA_FLOAT, 0};
    bool attention = false;
    for (int64_t i = 0; i < ops->count; i++) {
        hs_desc *op = desc_of(((cudnnBackendDescriptor_t *)ops->data)[i]);
        cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
        if (!op)
            continue;
        if (op->type == CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR ||
            op->type == CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR) {
            st = sdpa_work(op, op->type == CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR, &w);
            attention = true;
        } else if (op->type == CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR) {
            st = matmul_work(op, &w);
        }
        if (st != CUDNN_STATUS_SUCCESS)
            return st;
    }
    if (w.products) /* attention as torch builds it: two products forward, five backward */
        return time_products(&w, attention || w.products >= 2, stream);
    /* pointwise and reductions alone: one fused kernel, timed by its name's profile or the default */
    return hs_client_library_kernel("cudnn_fused_graph", stream) == cudaSuccess ? CUDNN_STATUS_SUCCESS
                                                                                : CUDNN_STATUS_EXECUTION_FAILED;
}
