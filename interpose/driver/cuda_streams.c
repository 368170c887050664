/*
 * Streams and events of the driver API: the runtime's own (the client core's),
 * since a CUstream is a cudaStream_t and a CUevent a cudaEvent_t; created on
 * the current context's device, which the driver needs there to be.
 * Host functions run as the runtime's do (cudart_streams.c): on the calling
 * thread once the stream has drained. Per-thread default stream forms
 * (_ptsz) are not here (their stubs name themselves).
 */
#include "cuda_driver.h"

static CUresult create_stream(CUstream *ph, unsigned flags, int priority)
{
    CUresult r = hs_driver_current_context();
    if (r != CUDA_SUCCESS)
        return r;
    if (!ph || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    return hs_driver_from_runtime(hs_client_stream_create(flags, priority, (cudaStream_t *)ph));
}

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    hs_client_enter();
    return hs_driver_leave(create_stream(phStream, Flags, 0));
}

CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    hs_client_enter();
    return hs_driver_leave(create_stream(phStream, flags, priority));
}

CUresult cuStreamDestroy(CUstream hStream)
{
    hs_client_enter();
    return hs_driver_leave(hs_driver_from_runtime(hs_client_stream_destroy((cudaStream_t)hStream)));
}

CUresult cuStreamSynchronize(CUstream hStream)
{
    hs_client_enter();
    return hs_driver_leave(hs_driver_from_runtime(hs_client_stream_synchronize((cudaStream_t)hStream)));
}

CUresult cuStreamQuery(CUstream hStream)
{
    hs_client_enter();
    return hs_driver_leave(hs_driver_from_runtime(hs_client_stream_query((cudaStream_t)hStream)));
}

CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    hs_client_enter();
    if (Flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    return hs_driver_leave(
        hs_driver_from_runtime(hs_client_stream_wait_event((cudaStream_t)hStream, (cudaEvent_t)hEvent)));
}

/* A stream's device, creation flags and priority, into those asked for (the default streams: the
 * current device's); the caller's out pointer must be there. */
static CUresult stream_info(CUstream h, const void *out, int *dev, unsigned *flags, int *priority)
{
    int d = -1, p = 0;
    unsigned f = 0;
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = hs_driver_from_runtime(hs_client_stream_info((cudaStream_t)h, &d, &f, &p));
    if (r == CUDA_SUCCESS && dev)
        *dev = d;
    if (r == CUDA_SUCCESS && flags)
        *flags = f;
    if (r == CUDA_SUCCESS && priority)
        *priority = p;
    return r;
}

CUresult cuStreamGetPriority(CUstream hStream, int *priority)
{
    hs_client_enter();
    return hs_driver_leave(stream_info(hStream, priority, NULL, NULL, priority));
}

CUresult cuStreamGetFlags(CUstream hStream, unsigned int *flags)
{
    hs_client_enter();
    return hs_driver_leave(stream_info(hStream, flags, NULL, flags, NULL));
}

CUresult cuStreamGetDevice(CUstream hStream, CUdevice *device)
{
    hs_client_enter();
    return hs_driver_leave(stream_info(hStream, device, device, NULL, NULL));
}

CUresult cuStreamGetCtx(CUstream hStream, CUcontext *pctx)
{
    hs_client_enter();
    int dev = -1;
    CUresult r = stream_info(hStream, pctx, &dev, NULL, NULL);
    if (r == CUDA_SUCCESS)
        *pctx = hs_driver_primary_context(dev);
    return hs_driver_leave(r);
}

CUresult cuStreamGetId(CUstream hStream, unsigned long long *streamId)
{
    hs_client_enter();
    if (!streamId)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    return hs_driver_leave(hs_driver_from_runtime(hs_client_stream_id((cudaStream_t)hStream, streamId)));
}

CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    hs_client_enter();
    CUresult r = hs_driver_current_context();
    if (r == CUDA_SUCCESS &&
        (!phEvent || (Flags & ~(unsigned)(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS))))
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        r = hs_driver_from_runtime(hs_client_event_create(Flags, (cudaEvent_t *)phEvent));
    return hs_driver_leave(r);
}

CUresult cuEventDestroy(CUevent hEvent)
{
    hs_client_enter();
    return hs_driver_leave(hs_driver_from_runtime(hs_client_event_destroy((cudaEvent_t)hEvent)));
}

CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
{
    hs_client_enter();
    return hs_driver_leave(hs_driver_from_runtime(hs_client_event_record((cudaEvent_t)hEvent, (cudaStream_t)hStream)));
}

CUresult cuEventQuery(CUevent hEvent)
{
    hs_client_enter();
    return hs_driver_leave(hs_driver_from_runtime(hs_client_event_query((cudaEvent_t)hEvent)));
}

CUresult cuEventSynchronize(CUevent hEvent)
{
    hs_client_enter();
    return hs_driver_leave(hs_driver_from_runtime(hs_client_event_synchronize((cudaEvent_t)hEvent)));
}

CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    hs_client_enter();
    return hs_driver_leave(
        hs_driver_from_runtime(hs_client_event_elapsed(pMilliseconds, (cudaEvent_t)hStart, (cudaEvent_t)hEnd)));
}

/* The stream drains, then the function runs on the calling thread, outside the driver call. */
CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
    hs_client_enter();
    CUresult r = hs_driver_leave(fn ? hs_driver_from_runtime(hs_client_stream_synchronize((cudaStream_t)hStream))
                                    : CUDA_ERROR_INVALID_VALUE);
    if (r == CUDA_SUCCESS)
        fn(userData);
    return r;
}

CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags)
{
    hs_client_enter();
    CUresult r = hs_driver_leave(callback && flags == 0
                                     ? hs_driver_from_runtime(hs_client_stream_synchronize((cudaStream_t)hStream))
                                     : CUDA_ERROR_INVALID_VALUE);
    if (r == CUDA_SUCCESS)
        callback(hStream, CUDA_SUCCESS, userData);
    return r;
}

/* The unversioned names of the calls cuda.h maps to "_v2" (older programs link them; same arguments). */
#undef cuStreamDestroy
#undef cuEventDestroy
#undef cuEventElapsedTime
CUresult cuStreamDestroy(CUstream hStream) { return cuStreamDestroy_v2(hStream); }
CUresult cuEventDestroy(CUevent hEvent) { return cuEventDestroy_v2(hEvent); }
CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    return cuEventElapsedTime_v2(pMilliseconds, hStart, hEnd);
}
