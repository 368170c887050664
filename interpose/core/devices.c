/*
 * Devices: the current device, primary contexts and the driver's context stack.
 */
#include "client_internal.h"

int hs_client_get_device(void) { return t_device; }

int valid_device(int dev) { return dev >= 0 && dev < g_info.device_count; }

/*
 * Contexts, as the driver API sees them: a device's primary context is set up
 * once the runtime makes the device current, allocates on it or gives it work
 * (as CUDA 12 and later do at cudaSetDevice or at the first call that needs a
 * context); each thread has a stack of current contexts, named here by their
 * devices, whose top is the runtime's current device. A runtime call that needs
 * a context when the stack is empty binds its device's primary context, as the
 * real runtime does (bench/real/data/driver_contexts_h100.txt).
 */
#define HS_CTX_DEPTH 16

static _Atomic unsigned char g_primary_active[HS_MAX_GPUS_PER_SERVER];
static __thread int16_t t_ctx[HS_CTX_DEPTH];
static __thread int t_ctx_depth;

/* Called for every op: stores only the first time, so threads issuing work do not keep writing the line. */
void note_primary_active(int dev)
{
    if (dev >= 0 && dev < HS_MAX_GPUS_PER_SERVER && !atomic_load_explicit(&g_primary_active[dev], memory_order_relaxed))
        atomic_store_explicit(&g_primary_active[dev], 1, memory_order_relaxed);
}

/* A runtime call that needs a context: the current device's primary one, bound if none is current. */
void bind_primary(void)
{
    if (!t_ctx_depth)
        t_ctx[t_ctx_depth++] = (int16_t)t_device;
    note_primary_active(t_device);
}

int hs_client_primary_active(int device)
{
    return device >= 0 && device < HS_MAX_GPUS_PER_SERVER &&
           atomic_load_explicit(&g_primary_active[device], memory_order_relaxed);
}

void hs_client_set_primary_active(int device, int active)
{
    if (device >= 0 && device < HS_MAX_GPUS_PER_SERVER)
        atomic_store_explicit(&g_primary_active[device], (unsigned char)(active != 0), memory_order_relaxed);
}

int hs_client_ctx_current(void) { return t_ctx_depth ? t_ctx[t_ctx_depth - 1] : -1; }

/* Makes device's context the top of the thread's stack: a new top (push), else in place of the old one. */
static cudaError_t ctx_make_top(int device, int push)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    if (!valid_device(device))
        return cudaErrorInvalidDevice;
    if (push && t_ctx_depth == HS_CTX_DEPTH)
        return cudaErrorMemoryAllocation;
    if (push || !t_ctx_depth)
        t_ctx_depth++;
    t_ctx[t_ctx_depth - 1] = (int16_t)device;
    t_device = device;
    note_primary_active(device);
    return cudaSuccess;
}

cudaError_t hs_client_set_device(int device) { return ctx_make_top(device, 0); }

cudaError_t hs_client_ctx_push(int device) { return ctx_make_top(device, 1); }

int hs_client_ctx_pop(void)
{
    if (!t_ctx_depth)
        return -1;
    int dev = t_ctx[--t_ctx_depth];
    if (t_ctx_depth)
        t_device = t_ctx[t_ctx_depth - 1];
    return dev;
}

cudaError_t hs_client_ctx_set(int device)
{
    if (device >= 0)
        return hs_client_set_device(device);
    if (t_ctx_depth && --t_ctx_depth) /* none: pops the top, if any */
        t_device = t_ctx[t_ctx_depth - 1];
    return cudaSuccess;
}
