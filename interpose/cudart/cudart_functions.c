/*
 * Kernel function attributes and occupancy, by the assumptions and limits of
 * kernel_rules.h. The attributes a program sets (cudaFuncSetAttribute) are
 * kept and checked against Hopper's limits; occupancy is computed from the
 * block size, the dynamic shared memory and Hopper's per-SM limits.
 */
#include <pthread.h>
#include <stdlib.h>

#include "cudart_internal.h"
#include "internal.h"
#include "kernel_rules.h"

/* The settable attributes, cudaFuncAttributeMaxDynamicSharedMemorySize (8) .. 15. */
#define FIRST_ATTR cudaFuncAttributeMaxDynamicSharedMemorySize
#define NATTRS     (cudaFuncAttributeClusterSchedulingPolicyPreference - FIRST_ATTR + 1)

typedef struct func_attrs {
    int value[NATTRS];
} func_attrs;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static hs_ptrmap g_attrs; /* host stub → func_attrs * (created by the first cudaFuncSetAttribute) */

static const func_attrs defaults = {{
    [cudaFuncAttributeMaxDynamicSharedMemorySize - FIRST_ATTR] = HS_SHARED_PER_BLOCK_DEFAULT,
    [cudaFuncAttributePreferredSharedMemoryCarveout - FIRST_ATTR] = -1,
}};

static func_attrs attrs_of(const void *func)
{
    pthread_mutex_lock(&g_lock);
    const func_attrs *a = (const func_attrs *)hs_ptrmap_get(&g_attrs, (uintptr_t)func);
    func_attrs copy = a ? *a : defaults;
    pthread_mutex_unlock(&g_lock);
    return copy;
}

cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    RT_ENTER();
    if (!hs_client_kernel_find(func))
        RT_RETURN(cudaErrorInvalidDeviceFunction);
    if (!hs_kernel_attr_value_ok(attr, value))
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
cudaError_t cudaFuncGetName(const char **name, const void *func)
{
    RT_ENTER();
    if (!name)
        RT_RETURN(cudaErrorInvalidValue);
    const char *n = hs_client_kernel_name(func);
    if (n)
        *name = n;
    RT_RETURN(n ? cudaSuccess : cudaErrorInvalidResourceHandle);
}

/* A kernel's cache and bank preferences: checked, and without effect on its time. */
cudaError_t cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache cacheConfig)
{
    RT_ENTER();
    if (!hs_client_kernel_find(func))
        RT_RETURN(cudaErrorInvalidDeviceFunction);
    RT_RETURN((unsigned)cacheConfig > cudaFuncCachePreferEqual ? cudaErrorInvalidValue : cudaSuccess);
}

cudaError_t cudaFuncSetSharedMemConfig(const void *func, enum cudaSharedMemConfig config)
{
    RT_ENTER();
    if (!hs_client_kernel_find(func))
        RT_RETURN(cudaErrorInvalidDeviceFunction);
    RT_RETURN((unsigned)config > cudaSharedMemBankSizeEightByte ? cudaErrorInvalidValue : cudaSuccess);
}

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
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
    r.maxThreadsPerBlock = HS_MAX_THREADS_PER_BLOCK;
    r.numRegs = HS_ASSUMED_REGS;
    r.ptxVersion = r.binaryVersion = g->cc_major * 10 + g->cc_minor;
    r.maxDynamicSharedSizeBytes = a.value[cudaFuncAttributeMaxDynamicSharedMemorySize - FIRST_ATTR];
    r.preferredShmemCarveout = a.value[cudaFuncAttributePreferredSharedMemoryCarveout - FIRST_ATTR];
    r.nonPortableClusterSizeAllowed = a.value[cudaFuncAttributeNonPortableClusterSizeAllowed - FIRST_ATTR];
    r.clusterSchedulingPolicyPreference = a.value[cudaFuncAttributeClusterSchedulingPolicyPreference - FIRST_ATTR];
    *attr = r;
    RT_RETURN(cudaSuccess);
}

static cudaError_t occupancy(int *numBlocks, const void *func, int blockSize, size_t dynamicSMemSize, unsigned flags)
{
    if (!numBlocks || blockSize <= 0 || (flags & ~(unsigned)cudaOccupancyDisableCachingOverride))
        return cudaErrorInvalidValue;
    if (!hs_client_kernel_find(func))
        return cudaErrorInvalidDeviceFunction;
    func_attrs a = attrs_of(func);
    *numBlocks = hs_kernel_blocks_per_sm(blockSize, dynamicSMemSize,
                                         a.value[cudaFuncAttributeMaxDynamicSharedMemorySize - FIRST_ATTR]);
    return cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func, int blockSize,
                                                          size_t dynamicSMemSize)
{
    RT_ENTER();
    RT_RETURN(occupancy(numBlocks, func, blockSize, dynamicSMemSize, 0));
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, const void *func, int blockSize,
                                                                   size_t dynamicSMemSize, unsigned int flags)
{
    RT_ENTER();
    RT_RETURN(occupancy(numBlocks, func, blockSize, dynamicSMemSize, flags));
}
