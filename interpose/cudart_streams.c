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
#include "cudart_graphs.h"
#include "cudart_internal.h"

cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int *priority) {
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

cudaError_t cudaStreamGetFlags(cudaStream_t hStream, unsigned int *flags) {
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

cudaError_t cudaStreamGetId(cudaStream_t hStream, unsigned long long *streamId) {
    RT_ENTER();
    RT_RETURN(streamId ? hs_client_stream_id(hStream, streamId) : cudaErrorInvalidValue);
}

cudaError_t cudaStreamGetDevice(cudaStream_t hStream, int *device) {
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
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData) {
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
                                  unsigned int flags) {
    RT_ENTER();
    cudaError_t e = hs_rt_return(callback && flags == 0 ? hs_client_stream_synchronize(stream)
                                                        : cudaErrorInvalidValue);
    if (e == cudaSuccess)
        callback(stream, cudaSuccess, userData);
    return e;
}
