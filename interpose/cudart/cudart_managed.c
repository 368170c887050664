/*
 * Managed (unified) memory in libcudart.so.13: cudaMallocManaged, prefetches,
 * advice, range attributes, cudaStreamAttachMemAsync, and what copies and
 * memsets do to managed data.
 *
 * An allocation is real host memory charged to its device's capacity
 * (managed_memory.h), so the host reads and writes it, and every call that
 * asks which device a pointer is on counts it as memory of its device:
 * copies to and from it are timed as that device's copies, NCCL takes it as
 * a buffer. Data really moves where both sides of a copy are host-backed
 * (managed or host memory); from plain device memory, which has no
 * contents, a managed destination reads zeros.
 *
 * There is no page-fault migration model: a kernel that touches managed
 * memory is timed as any kernel, and data costs time only where the program
 * moves it (copies, and cudaMemPrefetchAsync, timed as the same PCIe copy a
 * cudaMemcpyAsync of its bytes to or from the device is). Advice and the
 * last prefetch location are kept per allocation, not per page: advice on
 * part of an allocation applies to all of it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cudart_graphs.h"
#include "managed_memory.h"
#include "values.h"

/* Guards read-modify-write of an allocation's advice and prefetch state. */
static pthread_mutex_t g_state_lock = PTHREAD_MUTEX_INITIALIZER;

/* What a host-to-device prefetch names as its source: a copy with no data is never read. */
static const char g_prefetch_source;
/* What a device-to-host prefetch names as its destination: a timed copy writes nothing. */
static const char g_prefetch_sink;

/* ---- allocation ---- */

cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
    RT_ENTER();
    if (!devPtr || size == 0 || (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost))
        RT_RETURN(cudaErrorInvalidValue);
    void *extent;
    cudaError_t e = hs_client_malloc(size, &extent); /* the current device's capacity, as cudaMalloc */
    if (e != cudaSuccess)
        RT_RETURN(e);
    e = hs_client_managed_adopt(extent, hs_client_device_of(extent), size, devPtr);
    if (e != cudaSuccess)
        hs_client_free_unordered(extent);
    RT_RETURN(e);
}

/* ---- copies and memsets (cudart_internal.h) ---- */

/* 1 unless ptr is managed and [ptr, ptr + count) runs past its allocation. */
static int managed_fits(const void *ptr, size_t count)
{
    hs_managed_info m;
    if (!hs_client_managed_find(ptr, &m))
        return 1;
    return count <= m.size - (size_t)((uintptr_t)ptr - (uintptr_t)m.base);
}

static int is_managed(const void *ptr) { return hs_client_managed_find(ptr, NULL); }

void hs_rt_managed_data(void *dst, const void *src, size_t count)
{
    if (count == 0 || src == &g_prefetch_source)
        return;
    int dm = is_managed(dst), sm = is_managed(src);
    if (!dm && !sm)
        return;
    int src_host = sm || hs_client_device_of(src) < 0;
    int dst_host = dm || hs_client_device_of(dst) < 0;
    if (src_host && dst_host)
        memmove(dst, src, count);
    else if (dm)
        memset(dst, 0, count); /* plain device memory reads as zeros, as copies to the host do */
}

cudaError_t hs_rt_memcpy(void *dst, const void *src, size_t count, int kind, cudaStream_t stream, int synchronous)
{
    if (count && dst && src && (!managed_fits(dst, count) || !managed_fits(src, count)))
        return cudaErrorInvalidValue;
    cudaError_t e = hs_client_memcpy(dst, src, count, kind, stream, synchronous);
    /* A captured copy moves its data when the graph is launched. */
    if (e == cudaSuccess && (is_managed(dst) || is_managed(src)) && !hs_capture_stream_active(stream))
        hs_rt_managed_data(dst, src, count);
    return e;
}

cudaError_t hs_rt_memset(void *ptr, int value, size_t count, cudaStream_t stream)
{
    if (count && !managed_fits(ptr, count))
        return cudaErrorInvalidValue;
    cudaError_t e = hs_client_memset(ptr, count, stream);
    if (e == cudaSuccess && count && !hs_capture_stream_active(stream)) {
        if (is_managed(ptr))
            memset(ptr, value, count);
        else
            hs_values_fill((uintptr_t)ptr, value, count);
    }
    return e;
}

/* ---- prefetches ---- */

/* A location's device (-1: the host); cudaErrorInvalidDevice / cudaErrorInvalidValue for a bad one. */
static cudaError_t location_device(struct cudaMemLocation loc, int *dev)
{
    switch (loc.type) {
    case cudaMemLocationTypeDevice:
        if (loc.id < 0 || loc.id >= hs_client_gpu_info()->device_count)
            return cudaErrorInvalidDevice;
        *dev = loc.id;
        return cudaSuccess;
    case cudaMemLocationTypeHost:
    case cudaMemLocationTypeHostNuma:
    case cudaMemLocationTypeHostNumaCurrent: *dev = -1; return cudaSuccess;
    default: return cudaErrorInvalidValue;
    }
}

/* How a location is remembered: the host NUMA node closest to the caller counts as the host. */
static void remember_location(struct cudaMemLocation loc, int *type, int *id)
{
    *type = loc.type == cudaMemLocationTypeHostNumaCurrent ? cudaMemLocationTypeHost : (int)loc.type;
    *id = loc.type == cudaMemLocationTypeDevice || loc.type == cudaMemLocationTypeHostNuma ? loc.id : 0;
}

/* [ptr, ptr + count) inside one managed allocation, *m its allocation. */
static cudaError_t managed_range(const void *ptr, size_t count, hs_managed_info *m)
{
    if (!ptr || !hs_client_managed_find(ptr, m))
        return cudaErrorInvalidValue;
    return count <= m->size - (size_t)((uintptr_t)ptr - (uintptr_t)m->base) ? cudaSuccess : cudaErrorInvalidValue;
}

/*
 * A prefetch to the host is the device-to-host copy cudaMemcpyAsync of
 * pinned memory sends, timed only: the managed data stays as it is, and
 * nothing is written to the host. A capture would record it as a copy that
 * writes, so a capture refuses it.
 */
static cudaError_t prefetch_to_host(const void *ptr, size_t count, cudaStream_t stream)
{
    if (hs_capture_stream_active(stream)) {
        static _Atomic int said;
        if (!atomic_exchange(&said, 1))
            fprintf(stderr, "hysim: cudaMemPrefetchAsync to the host in a stream capture is not supported yet\n");
        return cudaErrorStreamCaptureUnsupported;
    }
    return hs_client_copy((void *)&g_prefetch_sink, ptr, count, cudaMemcpyDeviceToHost, stream, 0, HS_COPY_AS_PINNED);
}

/* Checks everything a prefetch names, issues nothing. */
static cudaError_t prefetch_check(const void *ptr, size_t count, struct cudaMemLocation loc, cudaStream_t stream,
                                  int *dev)
{
    hs_managed_info m;
    cudaError_t e = location_device(loc, dev);
    if (e == cudaSuccess)
        e = managed_range(ptr, count, &m);
    int sdev, prio;
    unsigned sflags;
    return e != cudaSuccess ? e : hs_client_stream_info(stream, &sdev, &sflags, &prio);
}

/* Issues a checked prefetch and remembers its location. */
static cudaError_t prefetch_issue(const void *ptr, size_t count, struct cudaMemLocation loc, int dev,
                                  cudaStream_t stream)
{
    cudaError_t e = cudaSuccess;
    if (count)
        e = dev >= 0 ? hs_client_copy((void *)ptr, &g_prefetch_source, count, cudaMemcpyHostToDevice, stream, 0,
                                      HS_COPY_AS_PINNED)
                     : prefetch_to_host(ptr, count, stream);
    hs_managed_info m;
    if (e == cudaSuccess) {
        pthread_mutex_lock(&g_state_lock);
        if (hs_client_managed_find(ptr, &m)) {
            remember_location(loc, &m.state.last_prefetch_type, &m.state.last_prefetch_id);
            hs_client_managed_set_state(m.base, &m.state);
        }
        pthread_mutex_unlock(&g_state_lock);
    }
    return e;
}

static cudaError_t prefetch(const void *ptr, size_t count, struct cudaMemLocation loc, unsigned flags,
                            cudaStream_t stream)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    if (flags)
        return cudaErrorInvalidValue;
    int dev;
    e = prefetch_check(ptr, count, loc, stream, &dev);
    return e != cudaSuccess ? e : prefetch_issue(ptr, count, loc, dev, stream);
}

cudaError_t cudaMemPrefetchAsync(const void *devPtr, size_t count, struct cudaMemLocation location, unsigned int flags,
                                 cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(prefetch(devPtr, count, location, flags, stream));
}

/* Prefetch i goes to prefetchLocs[k] for prefetchLocIdxs[k] <= i < prefetchLocIdxs[k + 1]. */
static cudaError_t prefetch_batch(void **dptrs, size_t *sizes, size_t count, struct cudaMemLocation *locs,
                                  size_t *loc_idxs, size_t nlocs, unsigned long long flags, cudaStream_t stream)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    if (!dptrs || !sizes || count == 0 || !locs || !loc_idxs || nlocs == 0 || nlocs > count || flags ||
        loc_idxs[0] != 0 || stream == NULL || stream == cudaStreamLegacy)
        return cudaErrorInvalidValue;
    for (size_t k = 1; k < nlocs; k++)
        if (loc_idxs[k] <= loc_idxs[k - 1] || loc_idxs[k] >= count)
            return cudaErrorInvalidValue;
    int dev;
    for (size_t i = 0, k = 0; i < count; i++) { /* all checked before any is issued */
        while (k + 1 < nlocs && loc_idxs[k + 1] <= i)
            k++;
        if ((e = prefetch_check(dptrs[i], sizes[i], locs[k], stream, &dev)) != cudaSuccess)
            return e;
    }
    for (size_t i = 0, k = 0; i < count && e == cudaSuccess; i++) {
        while (k + 1 < nlocs && loc_idxs[k + 1] <= i)
            k++;
        location_device(locs[k], &dev);
        e = prefetch_issue(dptrs[i], sizes[i], locs[k], dev, stream);
    }
    return e;
}

cudaError_t cudaMemPrefetchBatchAsync(void **dptrs, size_t *sizes, size_t count, struct cudaMemLocation *prefetchLocs,
                                      size_t *prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags,
                                      cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(prefetch_batch(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags, stream));
}

/* The per-thread default stream's entry points (--default-stream per-thread): NULL is that stream. */
cudaError_t cudaMemPrefetchAsync_ptsz(const void *devPtr, size_t count, struct cudaMemLocation location,
                                      unsigned int flags, cudaStream_t stream);
cudaError_t cudaMemPrefetchAsync_ptsz(const void *devPtr, size_t count, struct cudaMemLocation location,
                                      unsigned int flags, cudaStream_t stream)
{
    return cudaMemPrefetchAsync(devPtr, count, location, flags, stream ? stream : cudaStreamPerThread);
}

cudaError_t cudaMemPrefetchBatchAsync_ptsz(void **dptrs, size_t *sizes, size_t count,
                                           struct cudaMemLocation *prefetchLocs, size_t *prefetchLocIdxs,
                                           size_t numPrefetchLocs, unsigned long long flags, cudaStream_t stream);
cudaError_t cudaMemPrefetchBatchAsync_ptsz(void **dptrs, size_t *sizes, size_t count,
                                           struct cudaMemLocation *prefetchLocs, size_t *prefetchLocIdxs,
                                           size_t numPrefetchLocs, unsigned long long flags, cudaStream_t stream)
{
    return cudaMemPrefetchBatchAsync(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags,
                                     stream ? stream : cudaStreamPerThread);
}

/* ---- advice and attributes: recorded, no time ---- */

/* The accessed-by bit of a location: a device's, or bit 63 for the host; -1 for an invalid one. */
static int accessed_by_bit(struct cudaMemLocation loc)
{
    int dev;
    if (location_device(loc, &dev) != cudaSuccess)
        return -1;
    return dev >= 0 ? dev : 63;
}

static cudaError_t advise(const void *ptr, size_t count, enum cudaMemoryAdvise advice, struct cudaMemLocation loc)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    hs_managed_info m;
    if ((e = managed_range(ptr, count, &m)) != cudaSuccess)
        return e;
    int dev, bit = -1;
    if (advice == cudaMemAdviseSetPreferredLocation && (e = location_device(loc, &dev)) != cudaSuccess)
        return e;
    if ((advice == cudaMemAdviseSetAccessedBy || advice == cudaMemAdviseUnsetAccessedBy) &&
        (bit = accessed_by_bit(loc)) < 0)
        return loc.type == cudaMemLocationTypeDevice ? cudaErrorInvalidDevice : cudaErrorInvalidValue;
    pthread_mutex_lock(&g_state_lock);
    if (hs_client_managed_find(ptr, &m)) {
        hs_managed_state *s = &m.state;
        switch (advice) {
        case cudaMemAdviseSetReadMostly: s->read_mostly = 1; break;
        case cudaMemAdviseUnsetReadMostly: s->read_mostly = 0; break;
        case cudaMemAdviseSetPreferredLocation: remember_location(loc, &s->preferred_type, &s->preferred_id); break;
        case cudaMemAdviseUnsetPreferredLocation: s->preferred_type = s->preferred_id = 0; break;
        case cudaMemAdviseSetAccessedBy: s->accessed_by |= (uint64_t)1 << bit; break;
        case cudaMemAdviseUnsetAccessedBy: s->accessed_by &= ~((uint64_t)1 << bit); break;
        default: e = cudaErrorInvalidValue; break;
        }
        if (e == cudaSuccess)
            hs_client_managed_set_state(m.base, s);
    }
    pthread_mutex_unlock(&g_state_lock);
    return e;
}

cudaError_t cudaMemAdvise(const void *devPtr, size_t count, enum cudaMemoryAdvise advice,
                          struct cudaMemLocation location)
{
    RT_ENTER();
    RT_RETURN(advise(devPtr, count, advice, location));
}

/* A remembered location as the legacy attributes give it: a device, cudaCpuDeviceId, or cudaInvalidDeviceId. */
static int legacy_location(int type, int id)
{
    return type == cudaMemLocationTypeDevice    ? id
           : type != cudaMemLocationTypeInvalid ? cudaCpuDeviceId
                                                : cudaInvalidDeviceId;
}

static cudaError_t range_attribute(void *data, size_t size, enum cudaMemRangeAttribute attr, const hs_managed_state *s)
{
    if (!data || size < sizeof(int) || (attr != cudaMemRangeAttributeAccessedBy && size != sizeof(int)) ||
        size % sizeof(int))
        return cudaErrorInvalidValue;
    int *out = data;
    switch (attr) {
    case cudaMemRangeAttributeReadMostly: *out = s->read_mostly; break;
    case cudaMemRangeAttributePreferredLocation: *out = legacy_location(s->preferred_type, s->preferred_id); break;
    case cudaMemRangeAttributePreferredLocationType: *out = s->preferred_type; break;
    case cudaMemRangeAttributePreferredLocationId: *out = s->preferred_id; break;
    case cudaMemRangeAttributeLastPrefetchLocation:
        *out = legacy_location(s->last_prefetch_type, s->last_prefetch_id);
        break;
    case cudaMemRangeAttributeLastPrefetchLocationType: *out = s->last_prefetch_type; break;
    case cudaMemRangeAttributeLastPrefetchLocationId: *out = s->last_prefetch_id; break;
    case cudaMemRangeAttributeAccessedBy: {
        size_t n = 0, room = size / sizeof(int);
        for (int bit = 0; bit < 64 && n < room; bit++)
            if (s->accessed_by & ((uint64_t)1 << bit))
                out[n++] = bit == 63 ? cudaCpuDeviceId : bit;
        while (n < room)
            out[n++] = cudaInvalidDeviceId;
        break;
    }
    default: return cudaErrorInvalidValue;
    }
    return cudaSuccess;
}

static cudaError_t range_attributes(void **data, size_t *sizes, enum cudaMemRangeAttribute *attrs, size_t n,
                                    const void *ptr, size_t count)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    hs_managed_info m;
    if (!data || !sizes || !attrs || n == 0 || (e = managed_range(ptr, count, &m)) != cudaSuccess)
        return e != cudaSuccess ? e : cudaErrorInvalidValue;
    for (size_t i = 0; i < n && e == cudaSuccess; i++)
        e = range_attribute(data[i], sizes[i], attrs[i], &m.state);
    return e;
}

cudaError_t cudaMemRangeGetAttribute(void *data, size_t dataSize, enum cudaMemRangeAttribute attribute,
                                     const void *devPtr, size_t count)
{
    RT_ENTER();
    RT_RETURN(range_attributes(&data, &dataSize, &attribute, 1, devPtr, count));
}

cudaError_t cudaMemRangeGetAttributes(void **data, size_t *dataSizes, enum cudaMemRangeAttribute *attributes,
                                      size_t numAttributes, const void *devPtr, size_t count)
{
    RT_ENTER();
    RT_RETURN(range_attributes(data, dataSizes, attributes, numAttributes, devPtr, count));
}

/* Which streams may touch the memory changes nothing hysim times: checked and accepted. */
static cudaError_t attach(cudaStream_t stream, void *ptr, size_t length, unsigned flags)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    hs_managed_info m;
    int dev, prio;
    unsigned sflags;
    if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost && flags != cudaMemAttachSingle)
        return cudaErrorInvalidValue;
    if ((e = hs_client_stream_info(stream, &dev, &sflags, &prio)) != cudaSuccess)
        return e;
    if (!hs_client_managed_find(ptr, &m) || m.base != ptr || (length && length != m.size))
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, void *devPtr, size_t length, unsigned int flags)
{
    RT_ENTER();
    RT_RETURN(attach(stream, devPtr, length, flags));
}

cudaError_t cudaStreamAttachMemAsync_ptsz(cudaStream_t stream, void *devPtr, size_t length, unsigned int flags);
cudaError_t cudaStreamAttachMemAsync_ptsz(cudaStream_t stream, void *devPtr, size_t length, unsigned int flags)
{
    return cudaStreamAttachMemAsync(stream ? stream : cudaStreamPerThread, devPtr, length, flags);
}
