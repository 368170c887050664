/*
 * Stream-ordered allocation (cudaMallocAsync / cudaFreeAsync) and memory
 * pools: each device's default pool, pools the program creates, the
 * device's current pool, and the pool attributes.
 *
 * The model: an allocation takes device memory at once, from the same
 * capacity cudaMalloc takes it from (the client core's virtual device
 * memory), and cudaFreeAsync gives it back at once. hysimd does not model
 * memory, so stream order changes no timing; what it changes is only how
 * long memory counts as used, which this model ends at the call rather than
 * when the stream reaches it. A pool keeps no freed memory in reserve: the
 * release threshold is stored and reported, and the reserved figures equal
 * the used ones. Each pool keeps which devices may access it (read-write or
 * none; its own device always). CUDA 13's host pools (a memory location of
 * the host) exist to be asked for; allocating from one is not supported yet.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "cudart_internal.h"
#include "internal.h"

#define HOST_POOL (-1) /* a pool's device when it is the host's */

typedef struct hs_pool {
    int device; /* or HOST_POOL */
    int is_default;
    unsigned char *access; /* per device: cudaMemAccessFlags (none or read-write) */
    int destroyed;         /* by cudaMemPoolDestroy while allocations were live */
    uint64_t live;         /* allocations not freed yet */
    uint64_t threshold;
    uint64_t used, used_high, reserved_high;
    int reuse[3]; /* cudaMemPoolReuse* (attributes 1..3) */
} hs_pool;

#define ALIGN 256u /* the client core's allocation granularity */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static hs_pool **g_default; /* per device, created with the first use */
static hs_pool **g_current; /* per device: cudaDeviceSetMemPool's, or the default */
static hs_pool *g_host;     /* the host's default pool, created when asked for */
static int g_ndev;
static hs_ptrmap g_pools; /* live hs_pool * → 1 */
static hs_ptrmap g_owner; /* allocation → hs_pool * */
static hs_ptrmap g_size;  /* allocation → rounded size */

static void free_pool(hs_pool *p)
{
    free(p->access);
    free(p);
}

/* A pool of device (or HOST_POOL) among ndev devices; its own device may access it. */
static hs_pool *new_pool(int device, int is_default, int ndev)
{
    hs_pool *p = calloc(1, sizeof *p);
    if (!p || !(p->access = calloc((size_t)ndev + 1, 1))) {
        free(p);
        return NULL;
    }
    p->device = device;
    p->is_default = is_default;
    if (device >= 0)
        p->access[device] = cudaMemAccessFlagsProtReadWrite;
    p->reuse[0] = p->reuse[1] = p->reuse[2] = 1; /* CUDA's defaults */
    hs_ptrmap_put(&g_pools, (uintptr_t)p, 1);
    return p;
}

/* Connects, then sets up the per-device tables once. Called with g_lock held. */
static cudaError_t ready_locked(void)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess || g_default)
        return e;
    int n = hs_client_gpu_info()->device_count;
    hs_pool **dflt = calloc((size_t)n, sizeof *dflt), **cur = calloc((size_t)n, sizeof *cur);
    for (int i = 0; dflt && cur && i < n; i++)
        if (!(dflt[i] = cur[i] = new_pool(i, 1, n)))
            break;
    if (!dflt || !cur || (n > 0 && !dflt[n - 1])) {
        for (int i = 0; dflt && i < n && dflt[i]; i++) {
            hs_ptrmap_del(&g_pools, (uintptr_t)dflt[i]);
            free_pool(dflt[i]);
        }
        free(dflt);
        free(cur);
        return cudaErrorMemoryAllocation;
    }
    g_default = dflt;
    g_current = cur;
    g_ndev = n;
    return cudaSuccess;
}

static hs_pool *pool_locked(cudaMemPool_t handle)
{
    return handle && hs_ptrmap_get(&g_pools, (uintptr_t)handle) ? (hs_pool *)handle : NULL;
}

static void update_high(hs_pool *p)
{
    if (p->used > p->used_high)
        p->used_high = p->used;
    if (p->used > p->reserved_high)
        p->reserved_high = p->used;
}

static _Atomic int g_host_said;

static cudaError_t alloc_from(hs_pool *p, void **ptr, size_t size)
{
    if (p->device == HOST_POOL) {
        if (!atomic_exchange(&g_host_said, 1))
            fprintf(stderr,
                    "hysim: allocation from a host memory pool (cudaMemLocationTypeHost) is not supported yet\n");
        return cudaErrorNotSupported;
    }
    cudaError_t e = hs_client_malloc_on(p->device, size, ptr);
    if (e != cudaSuccess || !*ptr)
        return e;
    uint64_t rounded = ((uint64_t)size + ALIGN - 1) & ~(uint64_t)(ALIGN - 1);
    hs_ptrmap_put(&g_owner, (uintptr_t)*ptr, (uintptr_t)p);
    hs_ptrmap_put(&g_size, (uintptr_t)*ptr, (uintptr_t)rounded);
    p->used += rounded;
    p->live++;
    update_high(p);
    return cudaSuccess;
}

/* Drops ptr from its pool's accounting (if a pool's); frees a destroyed pool's last. */
static void forget_locked(const void *ptr)
{
    hs_pool *p = (hs_pool *)hs_ptrmap_del(&g_owner, (uintptr_t)ptr);
    uint64_t rounded = hs_ptrmap_del(&g_size, (uintptr_t)ptr);
    if (!p)
        return;
    p->used -= rounded;
    if (--p->live == 0 && p->destroyed)
        free_pool(p);
}

/* Under the pool lock, so that the address cannot be reused by a pool before it is forgotten. */
cudaError_t hs_rt_pool_free(void *ptr)
{
    pthread_mutex_lock(&g_lock);
    cudaError_t e = hs_client_free(ptr);
    if (e == cudaSuccess && ptr)
        forget_locked(ptr);
    pthread_mutex_unlock(&g_lock);
    return e;
}

void hs_rt_pool_reset_device(int device)
{
    pthread_mutex_lock(&g_lock);
    size_t n = 0;
    uintptr_t *gone = malloc((g_owner.len + 1) * sizeof *gone);
    for (size_t i = 0; gone && i < g_owner.cap; i++)
        if (g_owner.keys[i] && ((hs_pool *)g_owner.vals[i])->device == device)
            gone[n++] = g_owner.keys[i];
    for (size_t i = 0; i < n; i++)
        forget_locked((void *)gone[i]);
    free(gone);
    pthread_mutex_unlock(&g_lock);
}

/* ---- allocation ---- */

static cudaError_t malloc_async(void **ptr, size_t size, cudaMemPool_t handle, cudaStream_t stream)
{
    if (!ptr)
        return cudaErrorInvalidValue;
    int dev, prio;
    unsigned flags;
    cudaError_t e = hs_client_stream_info(stream, &dev, &flags, &prio);
    if (e != cudaSuccess)
        return e;
    pthread_mutex_lock(&g_lock);
    e = ready_locked();
    hs_pool *p = NULL;
    if (e == cudaSuccess && !(p = handle ? pool_locked(handle) : g_current[dev]))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess && p->destroyed)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = alloc_from(p, ptr, size);
    pthread_mutex_unlock(&g_lock);
    return e;
}

static cudaError_t free_async(void *ptr, cudaStream_t stream)
{
    int dev, prio;
    unsigned flags;
    cudaError_t e = hs_client_stream_info(stream, &dev, &flags, &prio);
    if (e != cudaSuccess || !ptr)
        return e;
    pthread_mutex_lock(&g_lock);
    e = hs_client_free_unordered(ptr);
    if (e == cudaSuccess)
        forget_locked(ptr);
    pthread_mutex_unlock(&g_lock);
    return e;
}

cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
    RT_ENTER();
    RT_RETURN(malloc_async(devPtr, size, NULL, hStream));
}

cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream);
cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream)
{
    RT_ENTER();
    RT_RETURN(malloc_async(devPtr, size, NULL, hStream ? hStream : cudaStreamPerThread));
}

cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(memPool ? malloc_async(ptr, size, memPool, stream) : cudaErrorInvalidValue);
}

cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream);
cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(memPool ? malloc_async(ptr, size, memPool, stream ? stream : cudaStreamPerThread)
                      : cudaErrorInvalidValue);
}

cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
    RT_ENTER();
    RT_RETURN(free_async(devPtr, hStream));
}

cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream);
cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream)
{
    RT_ENTER();
    RT_RETURN(free_async(devPtr, hStream ? hStream : cudaStreamPerThread));
}

/* ---- pools ---- */

static cudaError_t device_pool(cudaMemPool_t *memPool, int device, int current)
{
    if (!memPool)
        return cudaErrorInvalidValue;
    pthread_mutex_lock(&g_lock);
    cudaError_t e = ready_locked();
    if (e == cudaSuccess && (device < 0 || device >= g_ndev))
        e = cudaErrorInvalidDevice;
    if (e == cudaSuccess)
        *memPool = (cudaMemPool_t)(current ? g_current[device] : g_default[device]);
    pthread_mutex_unlock(&g_lock);
    return e;
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device)
{
    RT_ENTER();
    RT_RETURN(device_pool(memPool, device, 0));
}

cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *memPool, int device)
{
    RT_ENTER();
    RT_RETURN(device_pool(memPool, device, 1));
}

cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t memPool)
{
    RT_ENTER();
    pthread_mutex_lock(&g_lock);
    cudaError_t e = ready_locked();
    hs_pool *p = NULL;
    if (e == cudaSuccess && (device < 0 || device >= g_ndev))
        e = cudaErrorInvalidDevice;
    else if (e == cudaSuccess && (!(p = pool_locked(memPool)) || p->device != device))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        g_current[device] = p;
    pthread_mutex_unlock(&g_lock);
    RT_RETURN(e);
}

/* Only device pools of pinned memory exist on a simulated GPU. */
cudaError_t cudaMemPoolCreate(cudaMemPool_t *memPool, const struct cudaMemPoolProps *poolProps)
{
    RT_ENTER();
    if (!memPool || !poolProps || poolProps->allocType != cudaMemAllocationTypePinned ||
        poolProps->location.type != cudaMemLocationTypeDevice)
        RT_RETURN(cudaErrorInvalidValue);
    pthread_mutex_lock(&g_lock);
    cudaError_t e = ready_locked();
    if (e == cudaSuccess && (poolProps->location.id < 0 || poolProps->location.id >= g_ndev))
        e = cudaErrorInvalidDevice;
    hs_pool *p = NULL;
    if (e == cudaSuccess && !(p = new_pool(poolProps->location.id, 0, g_ndev)))
        e = cudaErrorMemoryAllocation;
    if (e == cudaSuccess)
        *memPool = (cudaMemPool_t)p;
    pthread_mutex_unlock(&g_lock);
    RT_RETURN(e);
}

/* As CUDA: a default pool cannot be destroyed; live allocations outlive their pool. */
cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool)
{
    RT_ENTER();
    pthread_mutex_lock(&g_lock);
    cudaError_t e = ready_locked();
    hs_pool *p = e == cudaSuccess ? pool_locked(memPool) : NULL;
    if (e == cudaSuccess && (!p || p->is_default))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess) {
        hs_ptrmap_del(&g_pools, (uintptr_t)p);
        if (g_current[p->device] == p)
            g_current[p->device] = g_default[p->device];
        if (p->live)
            p->destroyed = 1;
        else
            free_pool(p);
    }
    pthread_mutex_unlock(&g_lock);
    RT_RETURN(e);
}

/* Nothing is kept in reserve, so there is nothing to trim. */
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep)
{
    (void)minBytesToKeep;
    RT_ENTER();
    pthread_mutex_lock(&g_lock);
    cudaError_t e = ready_locked();
    if (e == cudaSuccess && !pool_locked(memPool))
        e = cudaErrorInvalidValue;
    pthread_mutex_unlock(&g_lock);
    RT_RETURN(e);
}

static cudaError_t pool_attribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value, int set)
{
    if (!value)
        return cudaErrorInvalidValue;
    pthread_mutex_lock(&g_lock);
    cudaError_t e = ready_locked();
    hs_pool *p = e == cudaSuccess ? pool_locked(memPool) : NULL;
    if (e == cudaSuccess && !p)
        e = cudaErrorInvalidValue;
    uint64_t *u64 = value;
    int *i32 = value;
    if (e == cudaSuccess) {
        switch (attr) {
        case cudaMemPoolReuseFollowEventDependencies:
        case cudaMemPoolReuseAllowOpportunistic:
        case cudaMemPoolReuseAllowInternalDependencies:
            if (set)
                p->reuse[attr - 1] = *i32 != 0;
            else
                *i32 = p->reuse[attr - 1];
            break;
        case cudaMemPoolAttrReleaseThreshold:
            if (set)
                p->threshold = *u64;
            else
                *u64 = p->threshold;
            break;
        case cudaMemPoolAttrReservedMemCurrent:
        case cudaMemPoolAttrUsedMemCurrent:
            if (set)
                e = cudaErrorInvalidValue; /* read-only */
            else
                *u64 = p->used;
            break;
        case cudaMemPoolAttrReservedMemHigh:
        case cudaMemPoolAttrUsedMemHigh: {
            uint64_t *high = attr == cudaMemPoolAttrUsedMemHigh ? &p->used_high : &p->reserved_high;
            if (set && *u64 != 0)
                e = cudaErrorInvalidValue; /* a high watermark can only be reset */
            else if (set)
                *high = p->used;
            else
                *u64 = *high;
            break;
        }
        default: e = cudaErrorInvalidValue; break;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return e;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
    RT_ENTER();
    RT_RETURN(pool_attribute(memPool, attr, value, 1));
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
    RT_ENTER();
    RT_RETURN(pool_attribute(memPool, attr, value, 0));
}

/* ---- access from devices ---- */

/* A device location's index among the devices, or -1. */
static int device_of_location(const struct cudaMemLocation *loc)
{
    return loc && loc->type == cudaMemLocationTypeDevice && loc->id >= 0 && loc->id < g_ndev ? loc->id : -1;
}

/* As a real H100: a pool's own device keeps read-write; other devices get read-write or none. */
cudaError_t cudaMemPoolSetAccess(cudaMemPool_t memPool, const struct cudaMemAccessDesc *descList, size_t count)
{
    RT_ENTER();
    if (count && !descList)
        RT_RETURN(cudaErrorInvalidValue);
    pthread_mutex_lock(&g_lock);
    cudaError_t e = ready_locked();
    hs_pool *p = e == cudaSuccess ? pool_locked(memPool) : NULL;
    if (e == cudaSuccess && !p)
        e = cudaErrorInvalidValue;
    for (size_t i = 0; e == cudaSuccess && i < count; i++) { /* all checked before any is set */
        int dev = device_of_location(&descList[i].location);
        if (descList[i].location.type != cudaMemLocationTypeDevice ||
            (descList[i].flags != cudaMemAccessFlagsProtNone && descList[i].flags != cudaMemAccessFlagsProtReadWrite))
            e = cudaErrorInvalidValue;
        else if (dev < 0 || (dev == p->device && descList[i].flags != cudaMemAccessFlagsProtReadWrite))
            e = cudaErrorInvalidDevice;
    }
    for (size_t i = 0; e == cudaSuccess && i < count; i++)
        p->access[descList[i].location.id] = (unsigned char)descList[i].flags;
    pthread_mutex_unlock(&g_lock);
    RT_RETURN(e);
}

cudaError_t cudaMemPoolGetAccess(enum cudaMemAccessFlags *flags, cudaMemPool_t memPool,
                                 struct cudaMemLocation *location)
{
    RT_ENTER();
    if (!flags)
        RT_RETURN(cudaErrorInvalidValue);
    pthread_mutex_lock(&g_lock);
    cudaError_t e = ready_locked();
    hs_pool *p = e == cudaSuccess ? pool_locked(memPool) : NULL;
    int dev = device_of_location(location);
    if (e == cudaSuccess && (!p || dev < 0))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        *flags = (enum cudaMemAccessFlags)p->access[dev];
    pthread_mutex_unlock(&g_lock);
    RT_RETURN(e);
}

/* ---- pools by memory location (CUDA 13) ---- */

/* The default (current: 0) or current pool of a location: a device's, or the host's. */
static cudaError_t location_pool(hs_pool **out, const struct cudaMemLocation *location, enum cudaMemAllocationType type,
                                 int current)
{
    if (!location || type != cudaMemAllocationTypePinned)
        return cudaErrorInvalidValue;
    int dev = device_of_location(location);
    if (dev >= 0) {
        *out = current ? g_current[dev] : g_default[dev];
        return cudaSuccess;
    }
    if (location->type != cudaMemLocationTypeHost)
        return cudaErrorInvalidValue;
    if (!g_host && !(g_host = new_pool(HOST_POOL, 1, g_ndev)))
        return cudaErrorMemoryAllocation;
    *out = g_host; /* the host's only pool: current and default */
    return cudaSuccess;
}

static cudaError_t get_location_pool(cudaMemPool_t *memPool, struct cudaMemLocation *location,
                                     enum cudaMemAllocationType type, int current)
{
    if (!memPool)
        return cudaErrorInvalidValue;
    pthread_mutex_lock(&g_lock);
    hs_pool *p = NULL;
    cudaError_t e = ready_locked();
    if (e == cudaSuccess)
        e = location_pool(&p, location, type, current);
    if (e == cudaSuccess)
        *memPool = (cudaMemPool_t)p;
    pthread_mutex_unlock(&g_lock);
    return e;
}

cudaError_t cudaMemGetDefaultMemPool(cudaMemPool_t *memPool, struct cudaMemLocation *location,
                                     enum cudaMemAllocationType type)
{
    RT_ENTER();
    RT_RETURN(get_location_pool(memPool, location, type, 0));
}

cudaError_t cudaMemGetMemPool(cudaMemPool_t *memPool, struct cudaMemLocation *location, enum cudaMemAllocationType type)
{
    RT_ENTER();
    RT_RETURN(get_location_pool(memPool, location, type, 1));
}

/* A device's current pool must be one of its pools; the host has only its default pool. */
cudaError_t cudaMemSetMemPool(struct cudaMemLocation *location, enum cudaMemAllocationType type, cudaMemPool_t memPool)
{
    RT_ENTER();
    pthread_mutex_lock(&g_lock);
    hs_pool *cur = NULL, *p = NULL;
    cudaError_t e = ready_locked();
    if (e == cudaSuccess)
        e = location_pool(&cur, location, type, 1);
    if (e == cudaSuccess && (!(p = pool_locked(memPool)) || p->device != cur->device))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess && p->device != HOST_POOL)
        g_current[p->device] = p;
    pthread_mutex_unlock(&g_lock);
    RT_RETURN(e);
}
