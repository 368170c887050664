/*
 * Virtual device memory. Each local device gets one address range of its
 * capacity, reserved with mmap(PROT_NONE, MAP_NORESERVE): nothing in it is
 * ever touched or backed, so a stray host dereference of a device pointer
 * faults at once and eight 141 GiB GPUs cost no host memory. Allocation is
 * 256-byte aligned first fit over a sorted free list of extents; the
 * allocation sizes live in a map keyed by address. Callers hold the client
 * lock. Managed allocations (managed_memory.c) are host memory that owns an
 * extent here: they count as memory of their device, by any address inside.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"
#include "managed_memory.h"
#include "values.h"

#define ALIGN 256u

typedef struct extent {
    uint64_t off, len;
} extent;

typedef struct devmem {
    uint8_t *base;
    uint64_t cap;
    extent *free; /* sorted by offset, never adjacent (merged) */
    size_t nfree, free_cap;
    uint64_t used, peak;
} devmem;

static devmem *g_dev;
static _Atomic int g_ndev; /* published after g_dev is complete */
static hs_ptrmap g_allocs; /* address → rounded size */

static int ensure_free_cap(devmem *d, size_t n)
{
    if (n <= d->free_cap)
        return 0;
    size_t cap = d->free_cap ? d->free_cap * 2 : 16;
    while (cap < n)
        cap *= 2;
    extent *f = realloc(d->free, cap * sizeof *f);
    if (!f)
        return -1;
    d->free = f;
    d->free_cap = cap;
    return 0;
}

static void reset_free_list(devmem *d)
{
    d->free[0] = (extent){0, d->cap};
    d->nfree = 1;
    d->used = 0;
}

int hs_devmem_init(int ndevices, uint64_t capacity, char *err, size_t errlen)
{
    if (atomic_load(&g_ndev) > 0)
        return 0; /* a forked child that registers again keeps its parent's ranges */
    capacity &= ~(uint64_t)(ALIGN - 1);
    devmem *dev = calloc((size_t)ndevices, sizeof *dev);
    if (!dev) {
        snprintf(err, errlen, "out of host memory for %d devices", ndevices);
        return -1;
    }
    for (int i = 0; i < ndevices; i++) {
        devmem *d = &dev[i];
        d->cap = capacity;
        if (capacity == 0 || ensure_free_cap(d, 1) < 0) {
            snprintf(err, errlen, capacity ? "out of host memory" : "the scenario's GPUs have no memory");
            goto fail;
        }
        void *p = mmap(NULL, (size_t)capacity, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            snprintf(err, errlen, "cannot reserve %llu bytes of address space for device %d: %s",
                     (unsigned long long)capacity, i, strerror(errno));
            goto fail;
        }
        d->base = p;
        reset_free_list(d);
    }
    g_dev = dev;
    atomic_store(&g_ndev, ndevices);
    return 0;
fail:
    for (int i = 0; i < ndevices; i++) {
        if (dev[i].base)
            munmap(dev[i].base, (size_t)dev[i].cap);
        free(dev[i].free);
    }
    free(dev);
    return -1;
}

int hs_devmem_ndevices(void) { return atomic_load(&g_ndev); }

int hs_devmem_device_of(const void *ptr)
{
    int n = atomic_load(&g_ndev);
    uintptr_t p = (uintptr_t)ptr;
    for (int i = 0; i < n; i++) {
        uintptr_t b = (uintptr_t)g_dev[i].base;
        if (p >= b && p - b < g_dev[i].cap)
            return i;
    }
    return hs_managed_device_of(ptr);
}

void *hs_devmem_alloc(int device, size_t size)
{
    if (device < 0 || device >= atomic_load(&g_ndev))
        return NULL;
    devmem *d = &g_dev[device];
    if (size > d->cap)
        return NULL;
    uint64_t sz = ((uint64_t)size + ALIGN - 1) & ~(uint64_t)(ALIGN - 1);
    for (size_t i = 0; i < d->nfree; i++) {
        extent *e = &d->free[i];
        if (e->len < sz)
            continue;
        uint64_t off = e->off;
        e->off += sz;
        e->len -= sz;
        if (e->len == 0) {
            memmove(e, e + 1, (d->nfree - i - 1) * sizeof *e);
            d->nfree--;
        }
        d->used += sz;
        if (d->used > d->peak)
            d->peak = d->used;
        void *p = d->base + off;
        hs_ptrmap_put(&g_allocs, (uintptr_t)p, (uintptr_t)sz);
        return p;
    }
    return NULL;
}

/* Returns [off, off+len) to the free list, merging with its neighbours. */
static int release(devmem *d, uint64_t off, uint64_t len)
{
    size_t lo = 0, hi = d->nfree; /* first extent with offset > off */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (d->free[mid].off > off)
            hi = mid;
        else
            lo = mid + 1;
    }
    int merge_prev = lo > 0 && d->free[lo - 1].off + d->free[lo - 1].len == off;
    int merge_next = lo < d->nfree && off + len == d->free[lo].off;
    if (merge_prev && merge_next) {
        d->free[lo - 1].len += len + d->free[lo].len;
        memmove(&d->free[lo], &d->free[lo + 1], (d->nfree - lo - 1) * sizeof *d->free);
        d->nfree--;
    } else if (merge_prev) {
        d->free[lo - 1].len += len;
    } else if (merge_next) {
        d->free[lo].off = off;
        d->free[lo].len += len;
    } else {
        if (ensure_free_cap(d, d->nfree + 1) < 0)
            return -1; /* the range stays lost; accounting below still frees it */
        memmove(&d->free[lo + 1], &d->free[lo], (d->nfree - lo) * sizeof *d->free);
        d->free[lo] = (extent){off, len};
        d->nfree++;
    }
    return 0;
}

int hs_devmem_is_allocation(const void *ptr)
{
    return hs_ptrmap_get(&g_allocs, (uintptr_t)ptr) != 0 || hs_managed_is_start(ptr);
}

int hs_devmem_free(void *ptr)
{
    void *extent = hs_managed_release(ptr);
    if (extent)
        ptr = extent; /* a managed allocation frees the extent that charged it */
    int dev = hs_devmem_device_of(ptr);
    if (dev < 0)
        return -1;
    uint64_t sz = hs_ptrmap_del(&g_allocs, (uintptr_t)ptr);
    if (sz == 0)
        return -1;
    hs_values_forget((uintptr_t)ptr, sz); /* a later allocation there starts with zeros */
    devmem *d = &g_dev[dev];
    if (release(d, (uint64_t)((uint8_t *)ptr - d->base), sz) < 0)
        fprintf(stderr,
                "hysim: out of host memory while freeing device memory; %llu bytes of "
                "device %d's address range stay unusable\n",
                (unsigned long long)sz, dev);
    d->used -= sz;
    return 0;
}

void hs_devmem_reset(int device)
{
    if (device < 0 || device >= atomic_load(&g_ndev))
        return;
    devmem *d = &g_dev[device];
    /* Collect first: deleting shifts entries under the iteration. */
    size_t n = 0;
    uintptr_t *keys = malloc((g_allocs.len + 1) * sizeof *keys);
    if (!keys)
        return;
    for (size_t i = 0; i < g_allocs.cap; i++)
        if (g_allocs.keys[i] && hs_devmem_device_of((void *)g_allocs.keys[i]) == device)
            keys[n++] = g_allocs.keys[i];
    for (size_t i = 0; i < n; i++)
        hs_ptrmap_del(&g_allocs, keys[i]);
    free(keys);
    hs_managed_reset(device);
    reset_free_list(d);
}

uint64_t hs_devmem_used(int device) { return device >= 0 && device < atomic_load(&g_ndev) ? g_dev[device].used : 0; }

uint64_t hs_devmem_peak(int device) { return device >= 0 && device < atomic_load(&g_ndev) ? g_dev[device].peak : 0; }
