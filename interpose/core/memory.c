/*
 * Memory: device allocations (virtual, device_memory.c), pinned and
 * registered host memory, copies and memsets as ops, and what values they
 * carry (values.c).
 */
#include "client_internal.h"

cudaError_t hs_client_malloc_on(int device, size_t size, void **ptr)
{
    if (!ptr)
        return cudaErrorInvalidValue;
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    if (!valid_device(device))
        return cudaErrorInvalidDevice;
    if (size == 0) {
        *ptr = NULL;
        return cudaSuccess;
    }
    bind_primary();
    note_primary_active(device);
    LOCK();
    void *p = hs_devmem_alloc(device, size);
    UNLOCK();
    *ptr = p;
    return p ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t hs_client_malloc(size_t size, void **ptr)
{
    cudaError_t e = CAPTURE_ON() ? capture_check(HS_CHECK_UNSAFE, NULL) : cudaSuccess;
    return e == cudaSuccess ? hs_client_malloc_on(t_device, size, ptr) : e;
}

/* No Wait: hysimd does not model memory, so stream order changes no timing. */
cudaError_t hs_client_free_unordered(void *ptr)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    LOCK();
    int ok = hs_devmem_is_allocation(ptr) && hs_devmem_free(ptr) == 0;
    UNLOCK();
    return ok ? cudaSuccess : cudaErrorInvalidValue;
}

/* cudaFree waits for the pointer's device first, as CUDA's does. */
cudaError_t hs_client_free(void *ptr)
{
    cudaError_t e = hs_client_start();
    if (e == cudaSuccess && ptr && CAPTURE_ON())
        e = capture_check(HS_CHECK_UNSAFE, NULL);
    if (e != cudaSuccess || !ptr)
        return e;
    int dev = hs_devmem_device_of(ptr);
    if (dev < 0)
        return cudaErrorInvalidValue;
    LOCK();
    if (!hs_devmem_is_allocation(ptr))
        e = cudaErrorInvalidValue;
    else
        e = wait_locked(HYSIM__WAIT__COND__DEVICE_IDLE, dev, 0, 0, 0, NULL, 0, NULL);
    if (e == cudaSuccess)
        hs_devmem_free(ptr);
    UNLOCK();
    return e;
}

cudaError_t hs_client_mem_info_on(int dev, size_t *free_bytes, size_t *total_bytes, size_t *used_bytes)
{
    if (!free_bytes || !total_bytes)
        return cudaErrorInvalidValue;
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    if (dev < 0 || dev >= g_info.device_count)
        return cudaErrorInvalidDevice;
    uint64_t total = g_info.memory_bytes & ~(uint64_t)255;
    LOCK();
    uint64_t used = hs_devmem_used(dev);
    UNLOCK();
    *free_bytes = (size_t)(total - used);
    *total_bytes = (size_t)total;
    if (used_bytes)
        *used_bytes = (size_t)used;
    return cudaSuccess;
}

cudaError_t hs_client_mem_info(size_t *free_bytes, size_t *total_bytes)
{
    return hs_client_mem_info_on(t_device, free_bytes, total_bytes, NULL);
}

cudaError_t hs_client_host_alloc(size_t size, unsigned flags, void **ptr)
{
    if (!ptr)
        return cudaErrorInvalidValue;
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    if (size == 0) {
        *ptr = NULL;
        return cudaSuccess;
    }
    void *p;
    if (posix_memalign(&p, 4096, size) != 0) {
        *ptr = NULL;
        return cudaErrorMemoryAllocation;
    }
    LOCK();
    hs_ptrmap_put(&g_pinned, (uintptr_t)p, (uintptr_t)size);
    hs_ptrmap_put(&g_host_flags, (uintptr_t)p, flags);
    UNLOCK();
    *ptr = p;
    return cudaSuccess;
}

cudaError_t hs_client_host_free(void *ptr)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess || !ptr)
        return e;
    LOCK();
    uintptr_t had = hs_ptrmap_del(&g_pinned, (uintptr_t)ptr);
    hs_ptrmap_del(&g_host_flags, (uintptr_t)ptr);
    UNLOCK();
    if (!had)
        return cudaErrorInvalidValue;
    free(ptr);
    return cudaSuccess;
}

int hs_client_device_of(const void *ptr) { return hs_devmem_device_of(ptr); }

/* The start of a range of m (start → size) that overlaps [p, p + size), or 0. */
static uintptr_t range_overlapping(const hs_ptrmap *m, uintptr_t p, size_t size)
{
    for (size_t i = 0; i < m->cap; i++) {
        uintptr_t k = m->keys[i];
        if (k && (p >= k ? p - k < m->vals[i] : k - p < size))
            return k;
    }
    return 0;
}

/* The start of the pinned block or registered range overlapping [p, p + size), or 0 (g_lock held). A
 * range that starts at p is found by its key; one p points inside by a scan. */
static uintptr_t host_range_locked(uintptr_t p, size_t size)
{
    if (p && (hs_ptrmap_get(&g_pinned, p) || hs_ptrmap_get(&g_registered, p)))
        return p;
    uintptr_t k = range_overlapping(&g_pinned, p, size);
    return k ? k : range_overlapping(&g_registered, p, size);
}

void *hs_client_host_block(const void *ptr)
{
    LOCK();
    uintptr_t found = host_range_locked((uintptr_t)ptr, 1);
    UNLOCK();
    return (void *)found;
}

/* cudaHostRegister: the range counts as pinned (copies from it run at the copy engines' rate) until unregistered. */
cudaError_t hs_client_host_register(void *ptr, size_t size, unsigned flags)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    if (!ptr || size == 0)
        return cudaErrorInvalidValue;
    uintptr_t p = (uintptr_t)ptr;
    LOCK();
    if (host_range_locked(p, size))
        e = cudaErrorHostMemoryAlreadyRegistered;
    else {
        hs_ptrmap_put(&g_registered, p, (uintptr_t)size);
        hs_ptrmap_put(&g_host_flags, p, flags);
    }
    UNLOCK();
    return e;
}

cudaError_t hs_client_host_unregister(void *ptr)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    LOCK();
    uintptr_t had = ptr ? hs_ptrmap_del(&g_registered, (uintptr_t)ptr) : 0;
    if (had)
        hs_ptrmap_del(&g_host_flags, (uintptr_t)ptr);
    UNLOCK();
    return had ? cudaSuccess : cudaErrorHostMemoryNotRegistered;
}

cudaError_t hs_client_host_flags(const void *ptr, unsigned *flags)
{
    LOCK(); /* one lock: the block cannot go between finding it and reading its flags */
    uintptr_t block = host_range_locked((uintptr_t)ptr, 1);
    if (block)
        *flags = (unsigned)hs_ptrmap_get(&g_host_flags, block);
    UNLOCK();
    return block ? cudaSuccess : cudaErrorInvalidValue;
}

/* hs_client_copy in `rows` rows of count / rows bytes (1: contiguous); a 2D copy is not captured (cudart_pitched.c). */
static cudaError_t copy_rows(void *dst, const void *src, size_t count, size_t rows, int kind, cudaStream_t stream,
                             int synchronous, unsigned how)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    if (count == 0)
        return cudaSuccess;
    if (!dst || !src)
        return cudaErrorInvalidValue;
    int sd = hs_devmem_device_of(src), dd = hs_devmem_device_of(dst);
    int dir = kind;
    if (kind == cudaMemcpyDefault) {
        dir = sd < 0 ? (dd < 0 ? cudaMemcpyHostToHost : cudaMemcpyHostToDevice)
                     : (dd < 0 ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice);
    } else {
        /* A kind that contradicts the pointers is refused rather than faulting later. */
        int src_dev = dir == cudaMemcpyDeviceToHost || dir == cudaMemcpyDeviceToDevice;
        int dst_dev = dir == cudaMemcpyHostToDevice || dir == cudaMemcpyDeviceToDevice;
        if ((sd >= 0) != src_dev || (dd >= 0) != dst_dev)
            return cudaErrorInvalidValue;
    }
    if (!synchronous)
        hs_client_charge_call(HS_CALL_MEMCPY_ASYNC);
    /* Host memory that is neither pinned, registered nor managed is pageable: the driver
     * stages it through pinned buffers of its own at the host's rate, and cudaMemcpyAsync
     * returns only once its copy is done (bench/RESULTS.md, "Host copies"). */
    const void *host = dir == cudaMemcpyHostToDevice ? src : dir == cudaMemcpyDeviceToHost ? dst : NULL;
    int pageable =
        host && !(how & HS_COPY_AS_PINNED) && !hs_client_host_block(host) && !hs_client_managed_find(host, NULL);
    if (CAPTURE_ON() && synchronous) { /* may be forbidden during a capture */
        if ((e = capture_check(HS_CHECK_UNSAFE, stream)) != cudaSuccess)
            return e;
    } else if (CAPTURE_ON()) {
        hs_stream_op op = {.kind = HS_SOP_COPY, .stream = stream, .u.copy = {dst, src, count, kind}};
        if (captured(&op, &e))
            return e;
    }
    if (pageable && (how & HS_COPY_HOLD_PAGEABLE)) /* not when captured: a graph's launch never waits */
        synchronous = 1;
    static const Hysim__CopyKind wire[] = {
        [cudaMemcpyHostToHost] = HYSIM__COPY_KIND__H2H,
        [cudaMemcpyHostToDevice] = HYSIM__COPY_KIND__H2D,
        [cudaMemcpyDeviceToHost] = HYSIM__COPY_KIND__D2H,
        [cudaMemcpyDeviceToDevice] = HYSIM__COPY_KIND__D2D,
    };
    int dev;
    uint64_t id;
    LOCK();
    e = resolve_stream_locked(stream, t_device, &dev, &id);
    if (e == cudaSuccess) {
        pending_op *p = append_locked(dev, id);
        hysim__copy__init(&p->u.copy);
        p->u.copy.kind = wire[dir];
        p->u.copy.bytes = count;
        int other = dir != cudaMemcpyDeviceToDevice ? dev : sd != dev ? sd : dd;
        p->u.copy.peer_gpu = global_gpu(other);
        p->u.copy.from_peer = dir == cudaMemcpyDeviceToDevice && other == sd && sd != dd; /* peer → dev */
        p->u.copy.pageable = pageable != 0;
        p->u.copy.rows = rows;
        p->op.kind_case = HYSIM__OP__KIND_COPY;
        p->op.copy = &p->u.copy;
        commit_locked();
        if (synchronous && dir != cudaMemcpyDeviceToDevice)
            e = wait_locked(HYSIM__WAIT__COND__STREAM_IDLE, dev, id, 0, 0, NULL, 0, NULL);
    }
    UNLOCK();
    if (e != cudaSuccess)
        return e;
    /* Device memory keeps what copies put there, small ones only (values.h). */
    if (dir == cudaMemcpyHostToDevice)
        rows == 1 ? hs_values_write((uintptr_t)dst, src, count) : hs_values_forget((uintptr_t)dst, count);
    else if (dir == cudaMemcpyDeviceToDevice)
        rows == 1 ? hs_values_copy((uintptr_t)dst, (uintptr_t)src, count) : hs_values_forget((uintptr_t)dst, count);
    if (!(how & HS_COPY_WRITE_HOST))
        return e;
    if (dir == cudaMemcpyHostToHost)
        memmove(dst, src, count);
    else if (dir == cudaMemcpyDeviceToHost)
        hs_values_read(dst, (uintptr_t)src, count); /* zeros but for what copies and collectives put there */
    return cudaSuccess;
}

cudaError_t hs_client_copy(void *dst, const void *src, size_t count, int kind, cudaStream_t stream, int synchronous,
                           unsigned how)
{
    return copy_rows(dst, src, count, 1, kind, stream, synchronous, how);
}

cudaError_t hs_client_copy_2d(void *dst, const void *src, size_t count, size_t rows, int kind, cudaStream_t stream,
                              int synchronous, unsigned how)
{
    if (rows == 0 || count % rows)
        return cudaErrorInvalidValue;
    return copy_rows(dst, src, count, rows, kind, stream, synchronous, how & ~HS_COPY_WRITE_HOST);
}

cudaError_t hs_client_memcpy(void *dst, const void *src, size_t count, int kind, cudaStream_t stream, int synchronous)
{
    return hs_client_copy(dst, src, count, kind, stream, synchronous, HS_COPY_WRITE_HOST | HS_COPY_HOLD_PAGEABLE);
}

cudaError_t hs_client_memset(void *ptr, size_t count, cudaStream_t stream)
{
    return hs_client_memset_2d(ptr, count, 1, stream);
}

cudaError_t hs_client_memset_2d(void *ptr, size_t count, size_t rows, cudaStream_t stream)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess || count == 0)
        return e;
    if (rows == 0 || count % rows)
        return cudaErrorInvalidValue;
    if (hs_devmem_device_of(ptr) < 0)
        return cudaErrorInvalidValue;
    hs_client_charge_call(HS_CALL_MEMSET);
    if (CAPTURE_ON()) {
        hs_stream_op op = {.kind = HS_SOP_MEMSET, .stream = stream, .u.memset = {ptr, count, rows}};
        if (captured(&op, &e))
            return e;
    }
    int dev;
    uint64_t id;
    LOCK();
    e = resolve_stream_locked(stream, t_device, &dev, &id);
    if (e == cudaSuccess) {
        pending_op *p = append_locked(dev, id);
        hysim__memset__init(&p->u.memset);
        p->u.memset.bytes = count;
        p->u.memset.rows = rows;
        p->op.kind_case = HYSIM__OP__KIND_MEMSET;
        p->op.memset = &p->u.memset;
        commit_locked();
    }
    UNLOCK();
    if (e == cudaSuccess)
        hs_values_forget((uintptr_t)ptr, count); /* zeros; cudaMemset then keeps its value (hs_rt_memset) */
    return e;
}
