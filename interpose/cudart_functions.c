/*
 * Kernel function attributes and occupancy. hysim never sees a kernel's
 * machine code, so what the compiler decides is assumed: no static shared,
 * constant or local memory, and HS_ASSUMED_REGS registers per thread. The
 * attributes a program sets (cudaFuncSetAttribute) are kept and checked
 * against Hopper's limits; occupancy is computed from the block size, the
 * dynamic shared memory and Hopper's per-SM limits.
 */
#include <pthread.h>
#include <stdlib.h>

#include "cudart_internal.h"
#include "internal.h"

#define HS_ASSUMED_REGS 32        /* per thread; with Hopper's 64K registers per SM, never the limit */
#define MAX_THREADS_PER_BLOCK 1024
#define MAX_WARPS_PER_SM 64
#define MAX_BLOCKS_PER_SM 32
#define REGS_PER_SM 65536
#define SHARED_PER_SM 233472      /* 228 KiB */
#define SHARED_PER_BLOCK_DEFAULT 49152
#define SHARED_PER_BLOCK_OPTIN 232448
#define SHARED_RESERVED_PER_BLOCK 1024
#define SHARED_GRANULE 128

/* The settable attributes, cudaFuncAttributeMaxDynamicSharedMemorySize (8) .. 15. */
#define FIRST_ATTR cudaFuncAttributeMaxDynamicSharedMemorySize
#define NATTRS (cudaFuncAttributeClusterSchedulingPolicyPreference - FIRST_ATTR + 1)

typedef struct func_attrs {
    int value[NATTRS];
} func_attrs;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static hs_ptrmap g_attrs; /* host stub → func_attrs * (created by the first cudaFuncSetAttribute) */

static const func_attrs defaults = {{
    [cudaFuncAttributeMaxDynamicSharedMemorySize - FIRST_ATTR] = SHARED_PER_BLOCK_DEFAULT,
    [cudaFuncAttributePreferredSharedMemoryCarveout - FIRST_ATTR] = -1,
}};

static func_attrs attrs_of(const void *func) {
    pthread_mutex_lock(&g_lock);
    const func_attrs *a = (const func_attrs *)hs_ptrmap_get(&g_attrs, (uintptr_t)func);
    func_attrs copy = a ? *a : defaults;
    pthread_mutex_unlock(&g_lock);
    return copy;
}

static int value_ok(enum cudaFuncAttribute attr, int v) {
    switch (attr) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize: return v >= 0 && v <= SHARED_PER_BLOCK_OPTIN;
    case cudaFuncAttributePreferredSharedMemoryCarveout: return v >= -1 && v <= 100;
    case cudaFuncAttributeClusterDimMustBeSet: return 0; /* read-only */
    case cudaFuncAttributeRequiredClusterWidth:
    case cudaFuncAttributeRequiredClusterHeight:
    case cudaFuncAttributeRequiredClusterDepth: return 0; /* read-only (set at compile time) */
    case cudaFuncAttributeNonPortableClusterSizeAllowed: return v == 0 || v == 1;
    case cudaFuncAttributeClusterSchedulingPolicyPreference: return v >= 0 && v <= 2;
    default: return 0;
    }
}

cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value) {
    RT_ENTER();
    if (!hs_client_kernel_find(func))
        RT_RETURN(cudaErrorInvalidDeviceFunction);
    if (!value_ok(attr, value))
        RT_RETURN(cudaErrorInvalidValue);
    pthread_mutex_lock(&g_lock);
    func_attrs *a = (func_attrs *)hs_ptrmap_get(&g_attrs, (uintptr_t)func);
    if (!a && (a = malloc(sizeof *a))) {
        *a = defaults;
        hs_ptrmap_put(&g_attrs, (uintptr_t)func, (uintptr_t)a);
    }
    if (a)
        a->value[attr - FIRST_ATTR] = value;
    pthread_mutex_unlock(&g_lock);
    RT_RETURN(a ? cudaSuccess : cudaErrorMemoryAllocation);
}

/* The device function's (mangled) name, as registered: what the real runtime answers. */
cudaError_t cudaFuncGetName(const char **name, const void *func) {
    RT_ENTER();
    if (!name)
        RT_RETURN(cudaErrorInvalidValue);
    const char *n = hs_client_kernel_name(func);
    if (n)
        *name = n;
    RT_RETURN(n ? cudaSuccess : cudaErrorInvalidResourceHandle);
}

/* A kernel's cache and bank preferences: checked, and without effect on its time. */
cudaError_t cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache cacheConfig) {
    RT_ENTER();
    if (!hs_client_kernel_find(func))
        RT_RETURN(cudaErrorInvalidDeviceFunction);
    RT_RETURN((unsigned)cacheConfig > cudaFuncCachePreferEqual ? cudaErrorInvalidValue : cudaSuccess);
}

cudaError_t cudaFuncSetSharedMemConfig(const void *func, enum cudaSharedMemConfig config) {
    RT_ENTER();
    if (!hs_client_kernel_find(func))
        RT_RETURN(cudaErrorInvalidDeviceFunction);
    RT_RETURN((unsigned)config > cudaSharedMemBankSizeEightByte ? cudaErrorInvalidValue : cudaSuccess);
}

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func) {
    RT_ENTER();
    if (!attr)
        RT_RETURN(cudaErrorInvalidValue);
    if (!hs_client_kernel_find(func))
        RT_RETURN(cudaErrorInvalidDeviceFunction);
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        RT_RETURN(e);
    const hs_gpu_info *g = hs_client_gpu_info();
    func_attrs a = attrs_of(func);
    struct cudaFuncAttributes r = {0};
    r.maxThreadsPerBlock = MAX_THREADS_PER_BLOCK;
    r.numRegs = HS_ASSUMED_REGS;
    r.ptxVersion = r.binaryVersion = g->cc_major * 10 + g->cc_minor;
    r.maxDynamicSharedSizeBytes = a.value[cudaFuncAttributeMaxDynamicSharedMemorySize - FIRST_ATTR];
    r.preferredShmemCarveout = a.value[cudaFuncAttributePreferredSharedMemoryCarveout - FIRST_ATTR];
    r.nonPortableClusterSizeAllowed = a.value[cudaFuncAttributeNonPortableClusterSizeAllowed - FIRST_ATTR];
    r.clusterSchedulingPolicyPreference = a.value[cudaFuncAttributeClusterSchedulingPolicyPreference - FIRST_ATTR];
    *attr = r;
    RT_RETURN(cudaSuccess);
}

/* Resident blocks per SM: the least of what warps, blocks, registers and shared memory allow. */
static int blocks_per_sm(int block_size, size_t dynamic_shared, int max_dynamic) {
    if (block_size > MAX_THREADS_PER_BLOCK || dynamic_shared > (size_t)max_dynamic)
        return 0;
    int warps = (block_size + 31) / 32;
    int n = MAX_BLOCKS_PER_SM;
    if (MAX_WARPS_PER_SM / warps < n)
        n = MAX_WARPS_PER_SM / warps;
    int regs_per_block = warps * 32 * HS_ASSUMED_REGS;
    if (REGS_PER_SM / regs_per_block < n)
        n = REGS_PER_SM / regs_per_block;
    size_t shared = dynamic_shared + SHARED_RESERVED_PER_BLOCK;
    shared = (shared + SHARED_GRANULE - 1) / SHARED_GRANULE * SHARED_GRANULE;
    if (SHARED_PER_SM / shared < (size_t)n)
        n = (int)(SHARED_PER_SM / shared);
    return n;
}

static cudaError_t occupancy(int *numBlocks, const void *func, int blockSize, size_t dynamicSMemSize,
                             unsigned flags) {
    if (!numBlocks || blockSize <= 0 || (flags & ~(unsigned)cudaOccupancyDisableCachingOverride))
        return cudaErrorInvalidValue;
    if (!hs_client_kernel_find(func))
        return cudaErrorInvalidDeviceFunction;
    func_attrs a = attrs_of(func);
    *numBlocks = blocks_per_sm(blockSize, dynamicSMemSize,
                               a.value[cudaFuncAttributeMaxDynamicSharedMemorySize - FIRST_ATTR]);
    return cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func, int blockSize,
                                                          size_t dynamicSMemSize) {
    RT_ENTER();
    RT_RETURN(occupancy(numBlocks, func, blockSize, dynamicSMemSize, 0));
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, const void *func,
                                                                   int blockSize, size_t dynamicSMemSize,
                                                                   unsigned int flags) {
    RT_ENTER();
    RT_RETURN(occupancy(numBlocks, func, blockSize, dynamicSMemSize, flags));
}
