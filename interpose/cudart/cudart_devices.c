/*
 * Device-level runtime calls beyond cudart.c's: peer access between the
 * GPUs of a server (every pair can, over NVLink), PCI bus ids (the bus
 * number is the GPU's index in its server, as cudaDevAttrPciBusId reports), device
 * flags, limits, cache and shared-memory configurations (stored and
 * reported, with the real runtime's defaults and bounds as an H100 gives
 * them, bench/real/data/runtime_answers_h100.txt; they change no timing),
 * cudaChooseDevice and cudaInitDevice, the stream priority range and the
 * profiler switches (no profiler runs: they succeed and do nothing).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_profiler_api.h>

#include "cudart_internal.h"

/* Hopper's stream priorities, as cudaStreamCreateWithPriority clamps them. */
#define LEAST_PRIORITY    0
#define GREATEST_PRIORITY (-5)

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char *g_peer; /* [device * n + peer]: peer access enabled */
static unsigned *g_dev_flags; /* cudaSetDeviceFlags, per device */
static int g_n;

/* cudaLimit values 0..6, per device; a real H100's defaults (cudaLimitDevRuntimeSyncDepth: unsupported). */
#define HS_NLIMITS 7
static const size_t LIMIT_DEFAULTS[HS_NLIMITS] = {
    [cudaLimitStackSize] = 1024,           [cudaLimitPrintfFifoSize] = 8650752,
    [cudaLimitMallocHeapSize] = 8388608,   [cudaLimitDevRuntimePendingLaunchCount] = 2048,
    [cudaLimitMaxL2FetchGranularity] = 64, [cudaLimitPersistingL2CacheSize] = 9830400,
};
static size_t (*g_limits)[HS_NLIMITS];
static unsigned *g_cache_config; /* enum cudaFuncCache, per device */

/* Connects, then sets up the tables once. Called with g_lock held. */
static cudaError_t ready_locked(void)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess || g_peer)
        return e;
    int n = hs_client_gpu_info()->device_count;
    unsigned char *peer = calloc((size_t)n * (size_t)n + 1, 1);
    unsigned *flags = calloc((size_t)n + 1, sizeof *flags);
    size_t(*limits)[HS_NLIMITS] = calloc((size_t)n + 1, sizeof *limits);
    unsigned *cache = calloc((size_t)n + 1, sizeof *cache);
    if (!peer || !flags || !limits || !cache) {
        free(peer);
        free(flags);
        free(limits);
        free(cache);
        return cudaErrorMemoryAllocation;
    }
    for (int d = 0; d < n; d++)
        memcpy(limits[d], LIMIT_DEFAULTS, sizeof LIMIT_DEFAULTS);
    g_limits = limits;
    g_cache_config = cache;
    g_peer = peer;
    g_dev_flags = flags;
    g_n = n;
    return cudaSuccess;
}

static int valid(int dev) { return dev >= 0 && dev < g_n; }

/* Reads (get) and/or writes (set) the current device's word of a per-device table (*table, set up by ready_locked). */
static cudaError_t device_word(unsigned **table, unsigned *get, const unsigned *set)
{
    pthread_mutex_lock(&g_lock);
    cudaError_t e = ready_locked();
    if (e == cudaSuccess) {
        unsigned *w = &(*table)[hs_client_get_device()];
        if (get)
            *get = *w;
        if (set)
            *w = *set;
    }
    pthread_mutex_unlock(&g_lock);
    return e;
}

/* ---- peer access ---- */

cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
{
    RT_ENTER();
    if (!canAccessPeer)
        RT_RETURN(cudaErrorInvalidValue);
    pthread_mutex_lock(&g_lock);
    cudaError_t e = ready_locked();
    if (e == cudaSuccess && (!valid(device) || !valid(peerDevice)))
        e = cudaErrorInvalidDevice;
    pthread_mutex_unlock(&g_lock);
    if (e == cudaSuccess)
        *canAccessPeer = device != peerDevice;
    RT_RETURN(e);
}

/* enable: 1 to enable, 0 to disable the current device's access to peerDevice. */
static cudaError_t set_peer_access(int peerDevice, int enable)
{
    pthread_mutex_lock(&g_lock);
    cudaError_t e = ready_locked();
    int dev = hs_client_get_device();
    if (e == cudaSuccess && (!valid(peerDevice) || peerDevice == dev))
        e = cudaErrorInvalidDevice;
    if (e == cudaSuccess) {
        unsigned char *on = &g_peer[dev * g_n + peerDevice];
        if (enable && *on)
            e = cudaErrorPeerAccessAlreadyEnabled;
        else if (!enable && !*on)
            e = cudaErrorPeerAccessNotEnabled;
        else
            *on = (unsigned char)enable;
    }
    pthread_mutex_unlock(&g_lock);
    return e;
}

cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags)
{
    RT_ENTER();
    RT_RETURN(flags ? cudaErrorInvalidValue : set_peer_access(peerDevice, 1));
}

cudaError_t cudaDeviceDisablePeerAccess(int peerDevice)
{
    RT_ENTER();
    RT_RETURN(set_peer_access(peerDevice, 0));
}

/* Every pair of the server's GPUs: NVLink through the NVSwitch, the same rank, atomics and arrays. */
cudaError_t cudaDeviceGetP2PAttribute(int *value, enum cudaDeviceP2PAttr attr, int srcDevice, int dstDevice)
{
    RT_ENTER();
    if (!value)
        RT_RETURN(cudaErrorInvalidValue);
    pthread_mutex_lock(&g_lock);
    cudaError_t e = ready_locked();
    if (e == cudaSuccess && (!valid(srcDevice) || !valid(dstDevice) || srcDevice == dstDevice))
        e = cudaErrorInvalidDevice;
    pthread_mutex_unlock(&g_lock);
    if (e != cudaSuccess)
        RT_RETURN(e);
    switch (attr) {
    case cudaDevP2PAttrPerformanceRank: *value = 0; break;
    case cudaDevP2PAttrAccessSupported:
    case cudaDevP2PAttrNativeAtomicSupported:
    case cudaDevP2PAttrCudaArrayAccessSupported: *value = 1; break;
    default: *value = 0; break; /* only partial atomics, and what later CUDAs add: none */
    }
    RT_RETURN(cudaSuccess);
}

/* ---- PCI bus ids: domain 0000, bus = index in the server, device 00, function 0 ---- */

cudaError_t cudaDeviceGetPCIBusId(char *pciBusId, int len, int device)
{
    RT_ENTER();
    if (!pciBusId || len <= 0)
        RT_RETURN(cudaErrorInvalidValue);
    pthread_mutex_lock(&g_lock);
    cudaError_t e = ready_locked();
    if (e == cudaSuccess && !valid(device))
        e = cudaErrorInvalidDevice;
    pthread_mutex_unlock(&g_lock);
    if (e == cudaSuccess)
        snprintf(pciBusId, (size_t)len, "%04x:%02x:%02x.0", 0u, (unsigned)device + hs_client_gpu_info()->visible_first,
                 0u);
    RT_RETURN(e);
}

/* Accepts "domain:bus:device.function" and "bus:device.function" (hexadecimal). */
cudaError_t cudaDeviceGetByPCIBusId(int *device, const char *pciBusId)
{
    RT_ENTER();
    if (!device || !pciBusId)
        RT_RETURN(cudaErrorInvalidValue);
    unsigned domain = 0, bus, dev, fn;
    char tail;
    if (sscanf(pciBusId, "%x:%x:%x.%x%c", &domain, &bus, &dev, &fn, &tail) != 4 &&
        (domain = 0, sscanf(pciBusId, "%x:%x.%x%c", &bus, &dev, &fn, &tail) != 3))
        RT_RETURN(cudaErrorInvalidValue);
    pthread_mutex_lock(&g_lock);
    cudaError_t e = ready_locked();
    unsigned first = e == cudaSuccess ? hs_client_gpu_info()->visible_first : 0;
    if (e == cudaSuccess && (domain != 0 || dev != 0 || fn != 0 || bus < first || bus - first >= (unsigned)g_n))
        e = cudaErrorInvalidDevice;
    pthread_mutex_unlock(&g_lock);
    if (e == cudaSuccess)
        *device = (int)(bus - first);
    RT_RETURN(e);
}

/* ---- device flags (stored and reported; scheduling does not apply to a simulated GPU) ---- */

cudaError_t cudaSetDeviceFlags(unsigned int flags)
{
    RT_ENTER();
    unsigned sched = flags & cudaDeviceScheduleMask;
    if ((flags & ~(unsigned)cudaDeviceMask) ||
        (sched != cudaDeviceScheduleAuto && sched != cudaDeviceScheduleSpin && sched != cudaDeviceScheduleYield &&
         sched != cudaDeviceScheduleBlockingSync))
        RT_RETURN(cudaErrorInvalidValue);
    RT_RETURN(device_word(&g_dev_flags, NULL, &flags));
}

cudaError_t cudaGetDeviceFlags(unsigned int *flags)
{
    RT_ENTER();
    RT_RETURN(flags ? device_word(&g_dev_flags, flags, NULL) : cudaErrorInvalidValue);
}

/* ---- limits and configurations (stored and reported; no timing depends on them) ---- */

/* The value a set stores, as the real runtime rounds it; cudaErrorInvalidValue past a bound. */
static cudaError_t limit_value(enum cudaLimit limit, size_t value, size_t *stored)
{
    const size_t persisting_max = 32768000; /* cudaDevAttrMaxPersistingL2CacheSize */
    switch (limit) {
    case cudaLimitStackSize: *stored = (value + 15) / 16 * 16; return cudaSuccess;
    case cudaLimitPrintfFifoSize: *stored = value < 524288 ? 524288 : value; return cudaSuccess;
    case cudaLimitMaxL2FetchGranularity: *stored = value; return value <= 128 ? cudaSuccess : cudaErrorInvalidValue;
    case cudaLimitPersistingL2CacheSize: /* in tenths of the most that can be set aside */
        *stored = (value + persisting_max / 10 - 1) / (persisting_max / 10) * (persisting_max / 10);
        return value <= persisting_max ? cudaSuccess : cudaErrorInvalidValue;
    default: *stored = value; return cudaSuccess;
    }
}

/* The current device's limit slot, or an error for a limit CUDA 13 does not have on Hopper. */
static cudaError_t limit_slot(enum cudaLimit limit, size_t **slot)
{
    if ((unsigned)limit >= HS_NLIMITS)
        return cudaErrorInvalidValue;
    if (limit == cudaLimitDevRuntimeSyncDepth)
        return cudaErrorUnsupportedLimit;
    cudaError_t e = ready_locked();
    if (e == cudaSuccess)
        *slot = &g_limits[hs_client_get_device()][limit];
    return e;
}

cudaError_t cudaDeviceGetLimit(size_t *pValue, enum cudaLimit limit)
{
    RT_ENTER();
    if (!pValue)
        RT_RETURN(cudaErrorInvalidValue);
    size_t *slot;
    pthread_mutex_lock(&g_lock);
    cudaError_t e = limit_slot(limit, &slot);
    if (e == cudaSuccess)
        *pValue = *slot;
    pthread_mutex_unlock(&g_lock);
    RT_RETURN(e);
}

cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value)
{
    RT_ENTER();
    size_t *slot, stored;
    pthread_mutex_lock(&g_lock);
    cudaError_t e = limit_slot(limit, &slot);
    if (e == cudaSuccess && (e = limit_value(limit, value, &stored)) == cudaSuccess)
        *slot = stored;
    pthread_mutex_unlock(&g_lock);
    RT_RETURN(e);
}

cudaError_t cudaDeviceGetCacheConfig(enum cudaFuncCache *pCacheConfig)
{
    RT_ENTER();
    if (!pCacheConfig)
        RT_RETURN(cudaErrorInvalidValue);
    unsigned v;
    cudaError_t e = device_word(&g_cache_config, &v, NULL);
    if (e == cudaSuccess)
        *pCacheConfig = (enum cudaFuncCache)v;
    RT_RETURN(e);
}

cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache cacheConfig)
{
    RT_ENTER();
    unsigned v = (unsigned)cacheConfig;
    RT_RETURN(v > cudaFuncCachePreferEqual ? cudaErrorInvalidValue : device_word(&g_cache_config, NULL, &v));
}

/* Hopper's banks are four bytes wide whatever is asked (a set succeeds and changes nothing, as on an H100). */
cudaError_t cudaDeviceGetSharedMemConfig(enum cudaSharedMemConfig *pConfig)
{
    RT_ENTER();
    if (!pConfig)
        RT_RETURN(cudaErrorInvalidValue);
    *pConfig = cudaSharedMemBankSizeFourByte;
    RT_RETURN(hs_client_start());
}

cudaError_t cudaDeviceSetSharedMemConfig(enum cudaSharedMemConfig config)
{
    RT_ENTER();
    RT_RETURN((unsigned)config > cudaSharedMemBankSizeEightByte ? cudaErrorInvalidValue : hs_client_start());
}

/* ---- choosing and initialising a device: all of a scenario's GPUs are alike ---- */

cudaError_t cudaChooseDevice(int *device, const struct cudaDeviceProp *prop)
{
    RT_ENTER();
    if (!device || !prop)
        RT_RETURN(cudaErrorInvalidValue);
    cudaError_t e = hs_client_start();
    if (e == cudaSuccess)
        *device = 0;
    RT_RETURN(e);
}

cudaError_t cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags)
{
    RT_ENTER();
    if (flags & ~(unsigned)cudaInitDeviceFlagsAreValid)
        RT_RETURN(cudaErrorInvalidValue);
    pthread_mutex_lock(&g_lock);
    cudaError_t e = ready_locked();
    if (e == cudaSuccess && !valid(device))
        e = cudaErrorInvalidDevice;
    if (e == cudaSuccess && (flags & cudaInitDeviceFlagsAreValid))
        g_dev_flags[device] = deviceFlags;
    pthread_mutex_unlock(&g_lock);
    RT_RETURN(e);
}

/* ---- streams, profiler ---- */

cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    RT_ENTER();
    if (leastPriority)
        *leastPriority = LEAST_PRIORITY;
    if (greatestPriority)
        *greatestPriority = GREATEST_PRIORITY;
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaProfilerStart(void)
{
    RT_ENTER();
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaProfilerStop(void)
{
    RT_ENTER();
    RT_RETURN(cudaSuccess);
}
