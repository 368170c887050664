/*
 * The table of managed allocations (managed_memory.h): an array sorted by
 * host address, searched by bisection so that a pointer into the middle of
 * an allocation finds it. Host memory comes from mmap, page by page, so it
 * never lies in a device range (those are reserved mappings too) and is
 * zeroed. There is no page migration: the memory stays on the host, and
 * hysim times what the program asks for (prefetches, copies, kernels), not
 * page faults.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "managed_memory.h"

typedef struct managed {
    uintptr_t base;
    size_t size;
    int device;
    void *extent;
    hs_managed_state state;
} managed;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static managed *g_tab;
static size_t g_n, g_cap;
static _Atomic size_t g_count; /* g_n, read without the lock: most programs have none */

/* Index of the last entry whose base is <= p, or g_n when none. */
static size_t floor_locked(uintptr_t p)
{
    size_t lo = 0, hi = g_n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (g_tab[mid].base <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? lo - 1 : g_n;
}

/* The entry holding ptr, or NULL. */
static managed *find_locked(const void *ptr)
{
    uintptr_t p = (uintptr_t)ptr;
    size_t i = floor_locked(p);
    if (i == g_n || p - g_tab[i].base >= g_tab[i].size)
        return NULL;
    return &g_tab[i];
}

static void remove_locked(size_t i)
{
    munmap((void *)g_tab[i].base, g_tab[i].size);
    memmove(&g_tab[i], &g_tab[i + 1], (g_n - i - 1) * sizeof *g_tab);
    g_n--;
    atomic_store(&g_count, g_n);
}

cudaError_t hs_client_managed_adopt(void *extent, int device, size_t size, void **host)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return cudaErrorMemoryAllocation;
    pthread_mutex_lock(&g_lock);
    if (g_n == g_cap) {
        size_t cap = g_cap ? g_cap * 2 : 16;
        managed *t = realloc(g_tab, cap * sizeof *t);
        if (!t) {
            pthread_mutex_unlock(&g_lock);
            munmap(p, size);
            return cudaErrorMemoryAllocation;
        }
        g_tab = t;
        g_cap = cap;
    }
    size_t at = floor_locked((uintptr_t)p);
    at = at == g_n ? 0 : at + 1;
    memmove(&g_tab[at + 1], &g_tab[at], (g_n - at) * sizeof *g_tab);
    g_tab[at] = (managed){(uintptr_t)p, size, device, extent, {0}};
    g_n++;
    atomic_store(&g_count, g_n);
    pthread_mutex_unlock(&g_lock);
    *host = p;
    return cudaSuccess;
}

int hs_client_managed_find(const void *ptr, hs_managed_info *out)
{
    if (!ptr || atomic_load(&g_count) == 0)
        return 0;
    pthread_mutex_lock(&g_lock);
    managed *m = find_locked(ptr);
    if (m && out)
        *out = (hs_managed_info){(void *)m->base, m->size, m->device, m->state};
    pthread_mutex_unlock(&g_lock);
    return m != NULL;
}

int hs_client_managed_set_state(const void *base, const hs_managed_state *state)
{
    pthread_mutex_lock(&g_lock);
    managed *m = find_locked(base);
    int ok = m && m->base == (uintptr_t)base;
    if (ok)
        m->state = *state;
    pthread_mutex_unlock(&g_lock);
    return ok;
}

int hs_managed_device_of(const void *ptr)
{
    hs_managed_info m;
    return hs_client_managed_find(ptr, &m) ? m.device : -1;
}

int hs_managed_is_start(const void *ptr)
{
    hs_managed_info m;
    return hs_client_managed_find(ptr, &m) && m.base == ptr;
}

void *hs_managed_release(const void *ptr)
{
    if (!ptr || atomic_load(&g_count) == 0)
        return NULL;
    pthread_mutex_lock(&g_lock);
    managed *m = find_locked(ptr);
    void *extent = NULL;
    if (m && m->base == (uintptr_t)ptr) {
        extent = m->extent;
        remove_locked((size_t)(m - g_tab));
    }
    pthread_mutex_unlock(&g_lock);
    return extent;
}

void hs_managed_reset(int device)
{
    pthread_mutex_lock(&g_lock);
    for (size_t i = g_n; i-- > 0;)
        if (g_tab[i].device == device)
            remove_locked(i);
    pthread_mutex_unlock(&g_lock);
}
