/*
 * Contexts in hysim's libcuda.so.1: each local device has one context, its
 * primary context, set up once the runtime uses the device (the client core keeps
 * which are, and each thread's stack of current contexts by device); the
 * driver calls that retain, query and make current those contexts answer as
 * a real H100's driver does (bench/interpose/driver_contexts.cu,
 * bench/real/data/driver_contexts_h100.txt). Programs that use the runtime
 * and reach the driver through cudaGetDriverEntryPoint (PyTorch's c10, for
 * one) ask these; cuCtxSynchronize waits for a context's device. A
 * context a program creates (cuCtxCreate) is its device's primary one.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cuda_driver.h"
#include "hysim/scenario.h"

struct CUctx_st {
    int unused; /* a context is named by its place in g_primary */
};

static struct CUctx_st g_primary[HS_MAX_GPUS_PER_SERVER];
static _Atomic unsigned g_primary_flags[HS_MAX_GPUS_PER_SERVER]; /* cuDevicePrimaryCtxSetFlags */

CUcontext hs_driver_primary_context(int dev) { return &g_primary[dev]; }

/* Compared as addresses: a pointer from elsewhere may not be subtracted from one into g_primary. */
int hs_driver_context_device(CUcontext ctx)
{
    uintptr_t at = (uintptr_t)ctx, first = (uintptr_t)g_primary;
    const hs_gpu_info *info = hs_client_gpu_info();
    if (!info || at < first || (at - first) % sizeof *g_primary)
        return -1;
    uintptr_t i = (at - first) / sizeof *g_primary;
    return i < (uintptr_t)info->device_count ? (int)i : -1;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    hs_client_enter();
    const hs_gpu_info *info;
    CUresult r = hs_driver_check_device(dev, &info);
    if (r == CUDA_SUCCESS && !pctx)
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS) {
        hs_client_set_primary_active(dev, 1);
        *pctx = hs_driver_primary_context(dev);
    }
    return hs_driver_leave(r);
}

/* The runtime holds the primary context too: releasing it leaves it set up, as on a real driver. */
CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
    hs_client_enter();
    const hs_gpu_info *info;
    return hs_driver_leave(hs_driver_check_device(dev, &info));
}

CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
    hs_client_enter();
    const hs_gpu_info *info;
    CUresult r = hs_driver_check_device(dev, &info);
    if (r == CUDA_SUCCESS && (flags & ~(unsigned)CU_CTX_FLAGS_MASK))
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        g_primary_flags[dev] = flags;
    return hs_driver_leave(r);
}

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    hs_client_enter();
    const hs_gpu_info *info;
    CUresult r = hs_driver_check_device(dev, &info);
    if (r == CUDA_SUCCESS && (!flags || !active))
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS) {
        *flags = g_primary_flags[dev];
        *active = hs_client_primary_active(dev);
    }
    return hs_driver_leave(r);
}

/* Nothing is held on a simulated GPU: a reset leaves the context to be set up again. */
CUresult cuDevicePrimaryCtxReset(CUdevice dev)
{
    hs_client_enter();
    const hs_gpu_info *info;
    CUresult r = hs_driver_check_device(dev, &info);
    if (r == CUDA_SUCCESS) {
        hs_client_set_primary_active(dev, 0);
        g_primary_flags[dev] = 0;
    }
    return hs_driver_leave(r);
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    hs_client_enter();
    CUresult r = hs_driver_initialized();
    if (r == CUDA_SUCCESS && !pctx)
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS) {
        int dev = hs_client_ctx_current();
        *pctx = dev >= 0 ? hs_driver_primary_context(dev) : NULL;
    }
    return hs_driver_leave(r);
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
    hs_client_enter();
    CUresult r = hs_driver_initialized();
    int dev = hs_driver_context_device(ctx);
    if (r == CUDA_SUCCESS && ctx && dev < 0)
        r = CUDA_ERROR_INVALID_CONTEXT;
    if (r == CUDA_SUCCESS)
        r = hs_driver_from_runtime(hs_client_ctx_set(ctx ? dev : -1));
    return hs_driver_leave(r);
}

CUresult cuCtxPushCurrent(CUcontext ctx)
{
    hs_client_enter();
    CUresult r = hs_driver_initialized();
    int dev = hs_driver_context_device(ctx);
    if (r == CUDA_SUCCESS && dev < 0)
        r = ctx ? CUDA_ERROR_INVALID_CONTEXT : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS) {
        cudaError_t e = hs_client_ctx_push(dev);
        r = e == cudaErrorMemoryAllocation ? CUDA_ERROR_OUT_OF_MEMORY : hs_driver_from_runtime(e);
    }
    return hs_driver_leave(r);
}

CUresult cuCtxPopCurrent(CUcontext *pctx)
{
    hs_client_enter();
    CUresult r = hs_driver_initialized();
    if (r == CUDA_SUCCESS) {
        int dev = hs_client_ctx_pop();
        if (dev < 0)
            r = CUDA_ERROR_INVALID_CONTEXT;
        else if (pctx)
            *pctx = hs_driver_primary_context(dev);
    }
    return hs_driver_leave(r);
}

/* CUDA 13's: the device of ctx, or of the current context when ctx is NULL. */
CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
    hs_client_enter();
    CUresult r = hs_driver_initialized();
    int dev = ctx ? hs_driver_context_device(ctx) : hs_client_ctx_current();
    if (r == CUDA_SUCCESS && !device)
        r = CUDA_ERROR_INVALID_VALUE;
    else if (r == CUDA_SUCCESS && dev < 0)
        r = CUDA_ERROR_INVALID_CONTEXT;
    if (r == CUDA_SUCCESS)
        *device = dev;
    return hs_driver_leave(r);
}

CUresult cuCtxGetDevice(CUdevice *device) { return cuCtxGetDevice_v2(device, NULL); }

/* CUDA 13's: the context's device, or the current context's when ctx is NULL, runs out its work. */
CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    hs_client_enter();
    CUresult r = hs_driver_initialized();
    int dev = ctx ? hs_driver_context_device(ctx) : hs_client_ctx_current();
    if (r == CUDA_SUCCESS && dev < 0)
        r = CUDA_ERROR_INVALID_CONTEXT;
    if (r == CUDA_SUCCESS) /* made current for the while: hs_client_device_synchronize waits for its device */
        r = hs_driver_from_runtime(hs_client_ctx_push(dev));
    if (r == CUDA_SUCCESS) {
        r = hs_driver_from_runtime(hs_client_device_synchronize());
        hs_client_ctx_pop();
    }
    return hs_driver_leave(r);
}

CUresult cuCtxSynchronize(void) { return cuCtxSynchronize_v2(NULL); }

/*
 * A context a program creates is its device's primary context here: hysim
 * keeps nothing per context that two contexts of one device could tell
 * apart (memory, streams and events are the device's), so cuCtxCreate
 * retains the primary context and pushes it, and cuCtxDestroy pops it if it
 * is the current one. Its handle equals the primary's, unlike a real
 * driver's; execution-affinity and CIG parameters are not supported.
 */
static CUresult create_context(CUcontext *pctx, unsigned flags, CUdevice dev)
{
    const hs_gpu_info *info;
    CUresult r = hs_driver_check_device(dev, &info);
    if (r == CUDA_SUCCESS && (!pctx || (flags & ~(unsigned)CU_CTX_FLAGS_MASK)))
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        r = hs_driver_from_runtime(hs_client_ctx_push(dev));
    if (r == CUDA_SUCCESS)
        *pctx = hs_driver_primary_context(dev);
    return r;
}

CUresult cuCtxCreate(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev)
{
    hs_client_enter();
    if (ctxCreateParams && (ctxCreateParams->numExecAffinityParams || ctxCreateParams->cigParams)) {
        static _Atomic int said;
        if (!atomic_exchange(&said, 1))
            fprintf(stderr, "hysim: cuCtxCreate with execution-affinity or CIG parameters is not supported yet\n");
        return hs_driver_leave(CUDA_ERROR_NOT_SUPPORTED);
    }
    return hs_driver_leave(create_context(pctx, flags, dev));
}

/* CUDA 11 and 12's form (cuda.h 13 declares it only for the driver's own build). */
CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    hs_client_enter();
    return hs_driver_leave(create_context(pctx, flags, dev));
}

CUresult cuCtxDestroy(CUcontext ctx)
{
    hs_client_enter();
    CUresult r = hs_driver_initialized();
    int dev = hs_driver_context_device(ctx);
    if (r == CUDA_SUCCESS && dev < 0)
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS && hs_client_ctx_current() == dev)
        hs_client_ctx_pop();
    return hs_driver_leave(r);
}

/* The unversioned names of the calls cuda.h maps to "_v2" (older programs link them; same arguments). */
#undef cuDevicePrimaryCtxRelease
#undef cuDevicePrimaryCtxSetFlags
#undef cuDevicePrimaryCtxReset
#undef cuCtxPushCurrent
#undef cuCtxPopCurrent
#undef cuCtxDestroy
CUresult cuDevicePrimaryCtxRelease(CUdevice dev) { return cuDevicePrimaryCtxRelease_v2(dev); }
CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
    return cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}
CUresult cuDevicePrimaryCtxReset(CUdevice dev) { return cuDevicePrimaryCtxReset_v2(dev); }
CUresult cuCtxPushCurrent(CUcontext ctx) { return cuCtxPushCurrent_v2(ctx); }
CUresult cuCtxPopCurrent(CUcontext *pctx) { return cuCtxPopCurrent_v2(pctx); }
CUresult cuCtxDestroy(CUcontext ctx) { return cuCtxDestroy_v2(ctx); }
