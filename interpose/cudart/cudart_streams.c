/*
 * Stream queries and host functions on streams (stream capture is
 * cudart_capture.c).
 *
 * Host functions (cudaLaunchHostFunc, cudaStreamAddCallback) run on the
 * calling thread once the stream has drained: the call is a stream
 * synchronize followed by the function. The function therefore sees the
 * simulated time at which the stream reached it, and work queued on the
 * stream afterwards runs after it, as in CUDA. Unlike CUDA, the calling
 * thread is held until then. A helper thread cannot do better here: a Wait
 * holds the connection to hysimd, so it would hold up the calling thread's
 * next call anyway, and it would make the order of the wire messages depend
 * on thread scheduling. In a stream capture cudaLaunchHostFunc adds a host
 * node instead, which each launch of the graph runs the same way
 * (cudart_graphs.c).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudart_graphs.h"
#include "cudart_internal.h"
#include "internal.h"

cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int *priority)
{
    RT_ENTER();
    int dev, prio;
    unsigned flags;
    if (!priority)
        RT_RETURN(cudaErrorInvalidValue);
    cudaError_t e = hs_client_stream_info(hStream, &dev, &flags, &prio);
    if (e == cudaSuccess)
        *priority = prio;
    RT_RETURN(e);
}

cudaError_t cudaStreamGetFlags(cudaStream_t hStream, unsigned int *flags)
{
    RT_ENTER();
    int dev, prio;
    unsigned f;
    if (!flags)
        RT_RETURN(cudaErrorInvalidValue);
    cudaError_t e = hs_client_stream_info(hStream, &dev, &f, &prio);
    if (e == cudaSuccess)
        *flags = f;
    RT_RETURN(e);
}

/* ---- stream attributes: stored and reported (an H100's answers); no timing depends on them ---- */

typedef struct stream_attrs {
    struct cudaAccessPolicyWindow window;
    unsigned sync_policy; /* 0xffffffff until set, as the real runtime reports it */
} stream_attrs;

static pthread_mutex_t g_attrs_lock = PTHREAD_MUTEX_INITIALIZER;
static hs_ptrmap g_attrs; /* stream handle + 16 (the legacy and per-thread handles are 0..2) → stream_attrs * */

/* The stream's attributes, created at their defaults (g_attrs_lock held); NULL when out of memory. */
static stream_attrs *attrs_locked(cudaStream_t s)
{
    uintptr_t key = (uintptr_t)s + 16;
    stream_attrs *a = (stream_attrs *)hs_ptrmap_get(&g_attrs, key);
    if (!a && (a = calloc(1, sizeof *a))) {
        a->sync_policy = 0xffffffffu;
        hs_ptrmap_put(&g_attrs, key, (uintptr_t)a);
    }
    return a;
}

/* The stream's device and priority, once the value pointer given with it is checked. */
static cudaError_t attr_stream(cudaStream_t s, const void *value, int *dev, int *prio)
{
    unsigned flags;
    return value ? hs_client_stream_info(s, dev, &flags, prio) : cudaErrorInvalidValue;
}

cudaError_t cudaStreamGetAttribute(cudaStream_t hStream, cudaStreamAttrID attr, cudaStreamAttrValue *value_out)
{
    RT_ENTER();
    int dev, prio;
    cudaError_t e = attr_stream(hStream, value_out, &dev, &prio);
    if (e != cudaSuccess)
        RT_RETURN(e);
    if (attr == cudaStreamAttributePriority) {
        memset(value_out, 0, sizeof *value_out);
        value_out->priority = prio;
        RT_RETURN(cudaSuccess);
    }
    if (attr != cudaStreamAttributeAccessPolicyWindow && attr != cudaStreamAttributeSynchronizationPolicy &&
        attr != cudaStreamAttributeMemSyncDomainMap && attr != cudaStreamAttributeMemSyncDomain)
        RT_RETURN(cudaErrorInvalidValue);
    pthread_mutex_lock(&g_attrs_lock);
    stream_attrs *a = attrs_locked(hStream);
    if (a) {
        memset(value_out, 0, sizeof *value_out);
        if (attr == cudaStreamAttributeAccessPolicyWindow)
            value_out->accessPolicyWindow = a->window;
        else if (attr == cudaStreamAttributeSynchronizationPolicy)
            value_out->syncPolicy = (enum cudaSynchronizationPolicy)a->sync_policy;
    }
    pthread_mutex_unlock(&g_attrs_lock);
    RT_RETURN(a ? cudaSuccess : cudaErrorMemoryAllocation);
}

cudaError_t cudaStreamSetAttribute(cudaStream_t hStream, cudaStreamAttrID attr, const cudaStreamAttrValue *value)
{
    RT_ENTER();
    int dev, prio;
    cudaError_t e = attr_stream(hStream, value, &dev, &prio);
    if (e != cudaSuccess)
        RT_RETURN(e);
    if (attr == cudaStreamAttributeAccessPolicyWindow) {
        int most = 0;
        const struct cudaAccessPolicyWindow *w = &value->accessPolicyWindow;
        cudaDeviceGetAttribute(&most, cudaDevAttrMaxAccessPolicyWindowSize, dev);
        if (w->num_bytes > (size_t)most || !(w->hitRatio >= 0 && w->hitRatio <= 1))
            RT_RETURN(cudaErrorInvalidValue);
    } else if (attr == cudaStreamAttributeSynchronizationPolicy) {
        if (value->syncPolicy < cudaSyncPolicyAuto || value->syncPolicy > cudaSyncPolicyBlockingSync)
            RT_RETURN(cudaErrorInvalidValue);
    } else if (attr == cudaStreamAttributePriority) {
        static _Atomic int said;
        if (!atomic_exchange(&said, 1))
            fprintf(stderr, "hysim: cudaStreamSetAttribute of a stream's priority is not supported yet\n");
        RT_RETURN(cudaErrorNotSupported);
    } else if (attr != cudaStreamAttributeMemSyncDomainMap && attr != cudaStreamAttributeMemSyncDomain) {
        RT_RETURN(cudaErrorInvalidValue);
    }
    pthread_mutex_lock(&g_attrs_lock);
    stream_attrs *a = attrs_locked(hStream);
    if (a && attr == cudaStreamAttributeAccessPolicyWindow)
        a->window = value->accessPolicyWindow;
    else if (a && attr == cudaStreamAttributeSynchronizationPolicy)
        a->sync_policy = (unsigned)value->syncPolicy;
    pthread_mutex_unlock(&g_attrs_lock);
    RT_RETURN(a ? cudaSuccess : cudaErrorMemoryAllocation);
}

void hs_rt_stream_attrs_forget(cudaStream_t stream)
{
    pthread_mutex_lock(&g_attrs_lock);
    free((void *)hs_ptrmap_del(&g_attrs, (uintptr_t)stream + 16));
    pthread_mutex_unlock(&g_attrs_lock);
}

cudaError_t cudaStreamCopyAttributes(cudaStream_t dst, cudaStream_t src)
{
    RT_ENTER();
    int dev, prio;
    unsigned flags;
    cudaError_t e = hs_client_stream_info(dst, &dev, &flags, &prio);
    if (e == cudaSuccess)
        e = hs_client_stream_info(src, &dev, &flags, &prio);
    if (e != cudaSuccess)
        RT_RETURN(e);
    pthread_mutex_lock(&g_attrs_lock);
    stream_attrs *from = attrs_locked(src), *to = attrs_locked(dst);
    if (from && to)
        *to = *from;
    pthread_mutex_unlock(&g_attrs_lock);
    RT_RETURN(from && to ? cudaSuccess : cudaErrorMemoryAllocation);
}

cudaError_t cudaStreamGetId(cudaStream_t hStream, unsigned long long *streamId)
{
    RT_ENTER();
    RT_RETURN(streamId ? hs_client_stream_id(hStream, streamId) : cudaErrorInvalidValue);
}

cudaError_t cudaStreamGetDevice(cudaStream_t hStream, int *device)
{
    RT_ENTER();
    int dev, prio;
    unsigned flags;
    if (!device)
        RT_RETURN(cudaErrorInvalidValue);
    cudaError_t e = hs_client_stream_info(hStream, &dev, &flags, &prio);
    if (e == cudaSuccess)
        *device = dev;
    RT_RETURN(e);
}

/* ---- host functions ---- */

/* Leaves the intercepted call before the program's function runs: its time is the program's. */
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    RT_ENTER();
    hs_stream_op op = {.kind = HS_SOP_HOST, .stream = stream, .u.host = {fn, userData}};
    cudaError_t taken;
    if (fn && hs_capture_divert(&op, &taken)) /* a host node: runs at each launch of the graph */
        RT_RETURN(taken);
    cudaError_t e = hs_rt_return(fn ? hs_client_stream_synchronize(stream) : cudaErrorInvalidValue);
    if (e == cudaSuccess)
        fn(userData);
    return e;
}

cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void *userData,
                                  unsigned int flags)
{
    RT_ENTER();
    cudaError_t e = hs_rt_return(callback && flags == 0 ? hs_client_stream_synchronize(stream) : cudaErrorInvalidValue);
    if (e == cudaSuccess)
        callback(stream, cudaSuccess, userData);
    return e;
}
