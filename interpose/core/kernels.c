/*
 * Kernels: registration by the fat binary's host stubs, launches, CUDA
 * graph launches, and library kernels (GEMMs, cuRAND's generations).
 */
#include "client_internal.h"

static void free_kernel(hs_kernel *k)
{
    free(k->name);
    free(k);
}

void hs_client_kernel_register(const void *module, const void *host_fun, const char *device_name)
{
    hs_kernel *k = xcalloc(1, sizeof *k);
    k->module = module;
    k->host_fun = host_fun;
    k->name = strdup(device_name ? device_name : "");
    if (!k->name) {
        fprintf(stderr, "hysim: out of host memory\n");
        abort();
    }
    k->values = hs_kv_model_of(k->name);
    k->grouped = hs_gg_kernel_of(k->name);
    LOCK();
    hs_kernel *old = (hs_kernel *)hs_ptrmap_get(&g_kernels, (uintptr_t)host_fun);
    if (old) {
        if (atomic_load(&g_state) == ST_READY)
            flush_locked(); /* pending ops may name it */
        hs_ptrmap_del(&g_kernel_handles, (uintptr_t)old);
        free_kernel(old);
    }
    hs_ptrmap_put(&g_kernels, (uintptr_t)host_fun, (uintptr_t)k);
    hs_ptrmap_put(&g_kernel_handles, (uintptr_t)k, 1);
    UNLOCK();
}

void hs_client_module_unregister(const void *module)
{
    LOCK();
    if (atomic_load(&g_state) == ST_READY)
        flush_locked(); /* pending ops may name its kernels */
    size_t n = 0;
    hs_kernel **gone = malloc((g_kernels.len + 1) * sizeof *gone);
    for (size_t i = 0; gone && i < g_kernels.cap; i++) {
        hs_kernel *k = (hs_kernel *)g_kernels.vals[i];
        if (g_kernels.keys[i] && k->module == module)
            gone[n++] = k;
    }
    for (size_t i = 0; i < n; i++) {
        hs_ptrmap_del(&g_kernels, (uintptr_t)gone[i]->host_fun);
        hs_ptrmap_del(&g_kernel_handles, (uintptr_t)gone[i]);
        free_kernel(gone[i]);
    }
    UNLOCK();
    free(gone);
}

void *hs_client_kernel_find(const void *host_fun)
{
    LOCK();
    void *k = (void *)hs_ptrmap_get(&g_kernels, (uintptr_t)host_fun);
    UNLOCK();
    return k;
}

const char *hs_client_kernel_name(const void *host_fun)
{
    LOCK();
    const hs_kernel *k = (const hs_kernel *)hs_ptrmap_get(&g_kernels, (uintptr_t)host_fun);
    const char *name = k ? k->name : NULL; /* kept until its module is unregistered */
    UNLOCK();
    return name;
}

void hs_client_graph_launch(int on) { t_graph_launch = on; }

/* The products of this thread's last prepare_grouped_gemm_data, for the grouped GEMM launched after it. */
static __thread struct {
    bool set;
    cudaStream_t stream;
    hs_gg_problem p;
} t_grouped;

_Static_assert((int)HS_GG_DIM_M == (int)HYSIM__GROUPED_DIM__GROUPED_M &&
                   (int)HS_GG_DIM_N == (int)HYSIM__GROUPED_DIM__GROUPED_N &&
                   (int)HS_GG_DIM_K == (int)HYSIM__GROUPED_DIM__GROUPED_K,
               "grouped_gemm.h and hysim.proto's GroupedDim differ");

/* The grouped GEMM kk launches, from t_grouped (the launch's op is p's). */
static void attach_grouped_locked(pending_op *p, Hysim__Kernel *kk, const hs_gg_kernel *gk)
{
    Hysim__GroupedGemm *g = &p->u.grouped.grouped;
    const hs_gg_problem *pr = &t_grouped.p;
    hysim__grouped_gemm__init(g);
    g->m = pr->m;
    g->n = pr->n;
    g->k = pr->k;
    g->grouped = (Hysim__GroupedDim)pr->grouped;
    memcpy(p->u.grouped.sizes, pr->sizes, pr->groups * sizeof pr->sizes[0]);
    g->n_sizes = pr->groups;
    g->sizes = p->u.grouped.sizes;
    g->tile_m = gk->tile_m;
    g->tile_n = gk->tile_n;
    g->cluster_m = gk->cluster_m;
    g->pingpong = gk->pingpong;
    kk->grouped_gemm = g;
}

cudaError_t hs_client_launch(void *kernel, const unsigned grid[3], const unsigned block[3], size_t shared_bytes,
                             cudaStream_t stream, void *const *args)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    /* Hopper's launch limits. */
    uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
    if (!grid[0] || !grid[1] || !grid[2] || grid[0] > 0x7fffffffu || grid[1] > 65535 || grid[2] > 65535 || !threads ||
        block[0] > 1024 || block[1] > 1024 || block[2] > 64 || threads > 1024)
        return cudaErrorInvalidConfiguration;
    hs_client_charge_call(HS_CALL_KERNEL_LAUNCH);
    if (CAPTURE_ON()) {
        hs_stream_op op = {
            .kind = HS_SOP_KERNEL,
            .stream = stream,
            .u.kernel = {kernel, {grid[0], grid[1], grid[2]}, {block[0], block[1], block[2]}, shared_bytes}};
        if (captured(&op, &e))
            return e;
    }
    hs_kv_model computes = {HS_KV_NONE, 0, 0, 0, 0};
    enum hs_gg_role grouped = HS_GG_NONE;
    int dev;
    uint64_t id;
    LOCK();
    const hs_kernel *k = hs_ptrmap_get(&g_kernel_handles, (uintptr_t)kernel) ? kernel : NULL;
    e = k ? resolve_stream_locked(stream, t_device, &dev, &id) : cudaErrorInvalidDeviceFunction;
    if (e == cudaSuccess) {
        pending_op *p = append_locked(dev, id);
        Hysim__Kernel *kk = &p->u.kernel;
        hysim__kernel__init(kk);
        grouped = k->grouped.role;
        if (grouped == HS_GG_GEMM && t_grouped.set && t_grouped.stream == stream)
            attach_grouped_locked(p, kk, &k->grouped);
        kk->name = k->name;
        kk->grid_x = grid[0];
        kk->grid_y = grid[1];
        kk->grid_z = grid[2];
        kk->block_x = block[0];
        kk->block_y = block[1];
        kk->block_z = block[2];
        kk->shared_bytes = shared_bytes;
        kk->graph_node = t_graph_launch != 0;
        p->op.kind_case = HYSIM__OP__KIND_KERNEL;
        p->op.kernel = kk;
        commit_locked();
        g_kernels_launched++;
        computes = k->values;
    }
    UNLOCK();
    if (e != cudaSuccess)
        return e;
    /* a grouped GEMM's products, read as its inputs are (below), for the GEMM launched next */
    if (grouped != HS_GG_NONE) {
        t_grouped.set = grouped == HS_GG_PREPARE && hs_gg_read(args, block[0], &t_grouped.p);
        t_grouped.stream = stream;
    }
    /* What it computes, if hysim does: its inputs read before the launch counts, outside the lock (an input may be
     * a collective's, asked of hysimd), its output written after. */
    hs_kv_result values = {0, 0, NULL};
    if (args && computes.kind != HS_KV_NONE)
        hs_kv_eval(&computes, args, &values);
    hs_values_kernel_launched();
    hs_kv_apply(&values);
    return e;
}

/*
 * A kernel a library launches, named by it (a string that outlives the
 * process's ops), on a 1 x 1 x 1 grid: a cuBLAS GEMM (g: its shape, for the
 * roofline), a cuRAND generation (r), or neither.
 */
static cudaError_t library_kernel(const char *name, const hs_gemm_call *g, const hs_random_generation *r,
                                  cudaStream_t stream)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    if (CAPTURE_ON()) {
        hs_stream_op op = {.kind = g ? HS_SOP_GEMM : HS_SOP_LIBRARY, .stream = stream};
        if (g)
            op.u.gemm = (__typeof__(op.u.gemm)){name, *g};
        else
            op.u.library = (__typeof__(op.u.library)){name, r != NULL, r ? *r : (hs_random_generation){0}};
        if (captured(&op, &e))
            return e;
    }
    int dev;
    uint64_t id;
    LOCK();
    e = resolve_stream_locked(stream, t_device, &dev, &id);
    if (e == cudaSuccess) {
        pending_op *p = append_locked(dev, id);
        Hysim__Kernel *kk = &p->u.gemm.kernel;
        hysim__kernel__init(kk);
        kk->name = (char *)name;
        kk->grid_x = kk->grid_y = kk->grid_z = 1;
        kk->block_x = kk->block_y = kk->block_z = 1;
        if (r) {
            Hysim__RandomGeneration *rr = &p->u.gemm.random;
            hysim__random_generation__init(rr);
            rr->generator = (Hysim__RngGenerator)r->generator;
            rr->output = (Hysim__RngOutput)r->output;
            rr->count = r->count;
            rr->first = r->first != 0;
            kk->random = rr;
        }
        if (g) {
            Hysim__Gemm *gg = &p->u.gemm.gemm;
            hysim__gemm__init(gg);
            gg->m = g->m;
            gg->n = g->n;
            gg->k = g->k;
            gg->batch = g->batch;
            gg->dtype = (Hysim__GemmDtype)g->dtype;
            gg->lda = g->lda;
            gg->ldb = g->ldb;
            gg->ldc = g->ldc;
            kk->gemm = gg;
        }
        kk->graph_node = t_graph_launch != 0;
        p->op.kind_case = HYSIM__OP__KIND_KERNEL;
        p->op.kernel = kk;
        commit_locked();
        g_kernels_launched++;
        hs_values_kernel_launched();
    }
    UNLOCK();
    return e;
}

cudaError_t hs_client_random_kernel(const char *name, const hs_random_generation *r, cudaStream_t stream)
{
    return library_kernel(name, NULL, r, stream);
}

cudaError_t hs_client_library_kernel(const char *name, cudaStream_t stream)
{
    return library_kernel(name, NULL, NULL, stream);
}

cudaError_t hs_client_gemm(const char *name, const hs_gemm_call *g, cudaStream_t stream)
{
    return library_kernel(name, g, NULL, stream);
}
