/*
 * Device-level runtime calls beyond cudart.c's: peer access between the
 * GPUs of a server (every pair can, over NVLink), PCI bus ids (the bus
 * number is the local device index, as cudaDevAttrPciBusId reports), device
 * flags, the stream priority range and the profiler switches (no profiler
 * runs: they succeed and do nothing).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_profiler_api.h>

#include "cudart_internal.h"

/* Hopper's stream priorities, as cudaStreamCreateWithPriority clamps them. */
#define LEAST_PRIORITY 0
#define GREATEST_PRIORITY (-5)

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char *g_peer;   /* [device * n + peer]: peer access enabled */
static unsigned *g_dev_flags;   /* cudaSetDeviceFlags, per device */
static int g_n;

/* Connects, then sets up the tables once. Called with g_lock held. */
static cudaError_t ready_locked(void) {
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess || g_peer)
        return e;
    int n = hs_client_gpu_info()->device_count;
    unsigned char *peer = calloc((size_t)n * (size_t)n + 1, 1);
    unsigned *flags = calloc((size_t)n + 1, sizeof *flags);
    if (!peer || !flags) {
        free(peer);
        free(flags);
        return cudaErrorMemoryAllocation;
    }
    g_peer = peer;
    g_dev_flags = flags;
    g_n = n;
    return cudaSuccess;
}

static int valid(int dev) { return dev >= 0 && dev < g_n; }

/* ---- peer access ---- */

cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice) {
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
static cudaError_t set_peer_access(int peerDevice, int enable) {
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

cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags) {
    RT_ENTER();
    RT_RETURN(flags ? cudaErrorInvalidValue : set_peer_access(peerDevice, 1));
}

cudaError_t cudaDeviceDisablePeerAccess(int peerDevice) {
    RT_ENTER();
    RT_RETURN(set_peer_access(peerDevice, 0));
}

/* ---- PCI bus ids: domain 0000, bus = device index, device 00, function 0 ---- */

cudaError_t cudaDeviceGetPCIBusId(char *pciBusId, int len, int device) {
    RT_ENTER();
    if (!pciBusId || len <= 0)
        RT_RETURN(cudaErrorInvalidValue);
    pthread_mutex_lock(&g_lock);
    cudaError_t e = ready_locked();
    if (e == cudaSuccess && !valid(device))
        e = cudaErrorInvalidDevice;
    pthread_mutex_unlock(&g_lock);
    if (e == cudaSuccess)
        snprintf(pciBusId, (size_t)len, "%04x:%02x:%02x.0", 0u, (unsigned)device, 0u);
    RT_RETURN(e);
}

/* Accepts "domain:bus:device.function" and "bus:device.function" (hexadecimal). */
cudaError_t cudaDeviceGetByPCIBusId(int *device, const char *pciBusId) {
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
    if (e == cudaSuccess && (domain != 0 || dev != 0 || fn != 0 || bus >= (unsigned)g_n))
        e = cudaErrorInvalidDevice;
    pthread_mutex_unlock(&g_lock);
    if (e == cudaSuccess)
        *device = (int)bus;
    RT_RETURN(e);
}

/* ---- device flags (stored and reported; scheduling does not apply to a simulated GPU) ---- */

cudaError_t cudaSetDeviceFlags(unsigned int flags) {
    RT_ENTER();
    unsigned sched = flags & cudaDeviceScheduleMask;
    if ((flags & ~(unsigned)cudaDeviceMask) || (sched != cudaDeviceScheduleAuto && sched != cudaDeviceScheduleSpin &&
                                               sched != cudaDeviceScheduleYield && sched != cudaDeviceScheduleBlockingSync))
        RT_RETURN(cudaErrorInvalidValue);
    pthread_mutex_lock(&g_lock);
    cudaError_t e = ready_locked();
    if (e == cudaSuccess)
        g_dev_flags[hs_client_get_device()] = flags;
    pthread_mutex_unlock(&g_lock);
    RT_RETURN(e);
}

cudaError_t cudaGetDeviceFlags(unsigned int *flags) {
    RT_ENTER();
    if (!flags)
        RT_RETURN(cudaErrorInvalidValue);
    pthread_mutex_lock(&g_lock);
    cudaError_t e = ready_locked();
    if (e == cudaSuccess)
        *flags = g_dev_flags[hs_client_get_device()];
    pthread_mutex_unlock(&g_lock);
    RT_RETURN(e);
}

/* ---- streams, profiler ---- */

cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority) {
    RT_ENTER();
    if (leastPriority)
        *leastPriority = LEAST_PRIORITY;
    if (greatestPriority)
        *greatestPriority = GREATEST_PRIORITY;
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaProfilerStart(void) {
    RT_ENTER();
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaProfilerStop(void) {
    RT_ENTER();
    RT_RETURN(cudaSuccess);
}
