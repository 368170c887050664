/*
 * libhysim_profile.so: the profile recorder. The program runs against the
 * real CUDA libraries; the driver loads this library through its injection
 * mechanism and CUPTI reports every kernel the GPU ran, written at exit as a
 * profile database (docs/compute.md, "Recording one").
 */
#include <cuda.h>
#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "cupti_recorder.h"
#include "gemm_join.h"
#include "profile_aggregate.h"

/* The current record layouts of the CUPTI this is compiled against. */
#if CUPTI_API_VERSION >= 130000
typedef CUpti_ActivityKernel10 hs_kernel_record;
#else
typedef CUpti_ActivityKernel9 hs_kernel_record;
#endif
typedef CUpti_ActivityDevice5 hs_device_record;

#define MAX_DEVICES  256
#define BUFFER_BYTES (8u << 20)

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static hs_prof_agg *g_agg;
static hs_gemm_join *g_join;
static int g_recording; /* set once CUPTI records (atomic): GEMM calls are tagged from then on */
static char *g_device_name[MAX_DEVICES];
static const char *g_gpu_model; /* HYSIM_PROFILE_GPU_MODEL, or NULL */
static size_t g_dropped, g_failed;
static pthread_once_t g_init_once = PTHREAD_ONCE_INIT;
static int g_init_ok;
static __thread uint64_t t_gemm; /* the GEMM call this thread is in (hs_recorder_gemm_begin), 0: none */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, BUFFER_BYTES) /* CUPTI wants 8-byte aligned buffers */;
    *size = *buffer ? BUFFER_BYTES : 0;
    *max_records = 0;
}

/* The device's name: from CUPTI's device record, else asked of the driver (no context needed). */
static const char *device_name(uint32_t id)
{
    if (id >= MAX_DEVICES)
        return NULL;
    if (!g_device_name[id]) {
        char name[256];
        CUdevice dev;
        if (cuDeviceGet(&dev, (int)id) == CUDA_SUCCESS && cuDeviceGetName(name, sizeof name, dev) == CUDA_SUCCESS)
            g_device_name[id] = strdup(name);
    }
    return g_device_name[id];
}

static void record_kernel(const hs_kernel_record *k)
{
    const char *gpu = g_gpu_model ? g_gpu_model : device_name(k->deviceId);
    hs_profile_key key = {gpu ? gpu : "unknown GPU",
                          k->name ? k->name : "",
                          {(uint32_t)k->gridX, (uint32_t)k->gridY, (uint32_t)k->gridZ},
                          {(uint32_t)k->blockX, (uint32_t)k->blockY, (uint32_t)k->blockZ},
                          (uint64_t)k->dynamicSharedMemory};
    uint64_t ns = k->end > k->start ? k->end - k->start : 0;
    if (hs_prof_agg_add(g_agg, &key, ns) != 0)
        g_failed++;
    if (hs_gemm_join_kernel(g_join, k->correlationId, k->graphNodeId, key.gpu, ns) != 0)
        g_failed++;
}

static void record_correlation(const CUpti_ActivityExternalCorrelation *c)
{
    if (c->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 &&
        hs_gemm_join_correlation(g_join, c->correlationId, c->externalId) != 0)
        g_failed++;
}

static void record_device(const hs_device_record *d)
{
    if (d->id < MAX_DEVICES && !g_device_name[d->id] && d->name)
        g_device_name[d->id] = strdup(d->name);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)stream;
    (void)size;
    CUpti_Activity *rec = NULL;
    pthread_mutex_lock(&g_lock);
    while (valid && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind == CUPTI_ACTIVITY_KIND_DEVICE)
            record_device((const hs_device_record *)rec);
        else if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || rec->kind == CUPTI_ACTIVITY_KIND_KERNEL)
            record_kernel((const hs_kernel_record *)rec);
        else if (rec->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)
            record_correlation((const CUpti_ActivityExternalCorrelation *)rec);
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
        g_dropped += dropped;
    pthread_mutex_unlock(&g_lock);
    free(buffer);
}

static void write_database(void)
{
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    pthread_mutex_lock(&g_lock);
    const char *out = getenv("HYSIM_PROFILE_OUT");
    if (!out || !*out)
        out = "hysim-profile.csv";
    char err[4352];
    size_t skipped = 0, gemms = 0, kernels = hs_prof_agg_keys(g_agg);
    uint64_t launches = hs_prof_agg_launches(g_agg);
    if (hs_gemm_join_resolve(g_join, g_agg, &gemms) != 0)
        g_failed++;
    if (launches == 0 && hs_prof_agg_keys(g_agg) == 0) {
        /* a process that set CUDA up and ran nothing (a launcher, torchrun's agent): the database is
         * its workers' to write, not this one's to overwrite */
        fprintf(stderr, "hysim profile: process %d ran no kernel; %s is left as it is\n", (int)getpid(), out);
        pthread_mutex_unlock(&g_lock);
        return;
    }
    if (hs_prof_agg_write(g_agg, out, &skipped, err, sizeof err) != 0)
        fprintf(stderr, "hysim profile: %s\n", err);
    else
        fprintf(stderr,
                "hysim profile: %llu kernel launches and %zu cuBLAS GEMM calls, %zu distinct entries (kernels "
                "by name, grid, block, shared memory; %zu GEMMs by type and shape) written to %s\n",
                (unsigned long long)launches, gemms, hs_prof_agg_keys(g_agg) - skipped,
                hs_prof_agg_keys(g_agg) - kernels, out);
    if (skipped)
        fprintf(stderr, "hysim profile: %zu kernels left out: a comma or line break in the name\n", skipped);
    if (g_dropped || g_failed)
        fprintf(stderr,
                "hysim profile: %zu activity records lost (CUPTI dropped %zu; out of memory %zu): "
                "the durations are from the rest\n",
                g_dropped + g_failed, g_dropped, g_failed);
    pthread_mutex_unlock(&g_lock);
}

/* Graph nodes made inside a GEMM call (stream capture), and their clones (instantiation). */
static void CUPTIAPI graph_node_event(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                      const void *cbdata)
{
    (void)userdata;
    if (domain != CUPTI_CB_DOMAIN_RESOURCE)
        return;
    const CUpti_GraphData *g = ((const CUpti_ResourceData *)cbdata)->resourceDescriptor;
    uint64_t node = 0, original = 0;
    if (!g || cuptiGetGraphNodeId(g->node, &node) != CUPTI_SUCCESS)
        return;
    if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED && t_gemm) {
        pthread_mutex_lock(&g_lock);
        if (hs_gemm_join_graph_node(g_join, node, t_gemm) != 0)
            g_failed++;
        pthread_mutex_unlock(&g_lock);
    } else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED && g->originalNode &&
               cuptiGetGraphNodeId(g->originalNode, &original) == CUPTI_SUCCESS) {
        pthread_mutex_lock(&g_lock);
        if (hs_gemm_join_graph_clone(g_join, original, node) != 0)
            g_failed++;
        pthread_mutex_unlock(&g_lock);
    }
}

/* Whether GEMMs captured into graphs can be told apart: the resource callbacks (one subscriber per process). */
static void watch_graph_nodes(void)
{
    CUpti_SubscriberHandle sub;
    CUptiResult r = cuptiSubscribe(&sub, graph_node_event, NULL);
    if (r == CUPTI_SUCCESS && (r = cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE,
                                                       CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED)) == CUPTI_SUCCESS)
        r = cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED);
    if (r != CUPTI_SUCCESS) {
        const char *why = NULL;
        cuptiGetResultString(r, &why);
        fprintf(stderr,
                "hysim profile: CUPTI's graph-node callbacks are not available (%s): cuBLAS GEMMs captured "
                "into CUDA graphs are recorded as cuBLAS's kernels, not as GEMM calls\n",
                why ? why : "unknown error");
    }
}

static int fail(const char *what, CUptiResult r)
{
    const char *why = NULL;
    cuptiGetResultString(r, &why);
    fprintf(stderr, "hysim profile: %s failed: %s; no profile is recorded\n", what, why ? why : "unknown error");
    return 0;
}

static int start(void)
{
    g_gpu_model = getenv("HYSIM_PROFILE_GPU_MODEL");
    if (g_gpu_model && !*g_gpu_model)
        g_gpu_model = NULL;
    g_agg = hs_prof_agg_new();
    g_join = hs_gemm_join_new();
    if (!g_agg || !g_join) {
        fprintf(stderr, "hysim profile: out of memory; no profile is recorded\n");
        return 0;
    }
    CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (r != CUPTI_SUCCESS)
        return fail("cuptiActivityRegisterCallbacks", r);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE); /* names; the driver is asked otherwise */
    if ((r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) != CUPTI_SUCCESS)
        return fail("cuptiActivityEnable(CONCURRENT_KERNEL)", r);
    if ((r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) != CUPTI_SUCCESS ||
        (r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME)) != CUPTI_SUCCESS ||
        (r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER)) != CUPTI_SUCCESS) {
        const char *why = NULL;
        cuptiGetResultString(r, &why);
        fprintf(stderr,
                "hysim profile: CUPTI's external correlation cannot be enabled (%s): cuBLAS GEMM calls are "
                "not recorded, only kernels\n",
                why ? why : "unknown error");
    } else {
        watch_graph_nodes();
        __atomic_store_n(&g_recording, 1, __ATOMIC_RELEASE);
    }
    atexit(write_database);
    return 1;
}

static void start_once(void) { g_init_ok = start(); }

/* Called by the CUDA driver from cuInit when CUDA_INJECTION64_PATH names this library. */
__attribute__((visibility("default"))) int InitializeInjection(void)
{
    pthread_once(&g_init_once, start_once);
    return g_init_ok;
}

static void discard_gemm(uint64_t id)
{
    pthread_mutex_lock(&g_lock);
    hs_gemm_join_discard(g_join, id);
    pthread_mutex_unlock(&g_lock);
}

uint64_t hs_recorder_gemm_begin(const hs_gemm_shape *g)
{
    if (!__atomic_load_n(&g_recording, __ATOMIC_ACQUIRE))
        return 0;
    pthread_mutex_lock(&g_lock);
    uint64_t id = hs_gemm_join_begin(g_join, g);
    pthread_mutex_unlock(&g_lock);
    if (id && cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id) != CUPTI_SUCCESS) {
        discard_gemm(id);
        return 0;
    }
    t_gemm = id;
    return id;
}

void hs_recorder_gemm_end(uint64_t id, bool ok)
{
    if (!id)
        return;
    t_gemm = 0;
    uint64_t popped = 0;
    bool ours =
        cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &popped) == CUPTI_SUCCESS &&
        popped == id;
    if (!ok || !ours) /* a failed call, or a region another tool's pop closed */
        discard_gemm(id);
}
