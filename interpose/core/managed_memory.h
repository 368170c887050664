/*
 * Managed (unified) memory in the client core (libhysim.so): the table of
 * cudaMallocManaged allocations. Each one is real host memory (an anonymous
 * mapping, outside every device range, so the host reads and writes it) and
 * owns an extent of its device's virtual range of the same size, which
 * charges it to the device's capacity exactly as cudaMalloc would. The
 * device memory calls (device_memory.c) count a managed pointer, or one into
 * the middle of a managed allocation, as memory of its device.
 *
 * The hs_client_managed_* functions are exported for libcudart.so.13
 * (cudart_managed.c); the others are private to the core. The table has a
 * lock of its own, taken after the client lock and never before it.
 */
#ifndef HYSIM_INTERPOSE_MANAGED_MEMORY_H
#define HYSIM_INTERPOSE_MANAGED_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "client.h"

/* What cudaMemAdvise and cudaMemPrefetchAsync last said of an allocation (cudaMemLocationType, id). */
typedef struct hs_managed_state {
    int read_mostly;
    int preferred_type, preferred_id;         /* type 0: none */
    uint64_t accessed_by;                     /* bit d: device d; bit 63: the host */
    int last_prefetch_type, last_prefetch_id; /* type 0: never prefetched */
} hs_managed_state;

/* One managed allocation, as hs_client_managed_find copies it out. */
typedef struct hs_managed_info {
    void *base;
    size_t size;
    int device;
    hs_managed_state state;
} hs_managed_info;

/*
 * Makes the device extent `extent` (a fresh allocation of `size` bytes of
 * `device`, from hs_client_malloc) a managed allocation: maps `size` bytes
 * of zeroed host memory and returns them in *host. cudaErrorMemoryAllocation
 * when the host has no memory left (the extent is then the caller's to free).
 */
HS_API cudaError_t hs_client_managed_adopt(void *extent, int device, size_t size, void **host);
/* The managed allocation holding ptr (its start or any byte inside): 1 and *out, or 0. */
HS_API int hs_client_managed_find(const void *ptr, hs_managed_info *out);
/* Replaces the advice and prefetch state of the allocation starting at base; 0 when there is none. */
HS_API int hs_client_managed_set_state(const void *base, const hs_managed_state *state);

/* ---- private to the core (device_memory.c) ---- */

/* Device of the managed allocation holding ptr, or -1. */
__attribute__((visibility("hidden"))) int hs_managed_device_of(const void *ptr);
/* Whether ptr is the start of a managed allocation. */
__attribute__((visibility("hidden"))) int hs_managed_is_start(const void *ptr);
/*
 * Forgets the managed allocation starting at ptr and unmaps its host memory;
 * returns its device extent (for the caller to free), or NULL when ptr is
 * not the start of one.
 */
__attribute__((visibility("hidden"))) void *hs_managed_release(const void *ptr);
/* Forgets and unmaps every managed allocation of a device (cudaDeviceReset). */
__attribute__((visibility("hidden"))) void hs_managed_reset(int device);

#endif
