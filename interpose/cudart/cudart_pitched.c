/*
 * Pitched (2D) memory: cudaMallocPitch, cudaMemcpy2D and cudaMemset2D, their
 * Async forms and their per-thread-stream entry points. An allocation's rows
 * are padded to 512 bytes, as the real runtime pads them on an H100. A 2D copy
 * or memset is one op of its width x height bytes that knows its rows: the
 * daemon times it by its bytes or by its rows, whichever takes longer
 * (bridge/daemon/timeline.c). Host rows are written here, row by row: device memory
 * reads as zeros, host and managed memory hold their data. Captured, either
 * becomes a graph node that keeps its rows (cudart_graphs.c replays them).
 */
#include <stdint.h>
#include <string.h>

#include "cudart_graphs.h"
#include "cudart_internal.h"
#include "managed_memory.h"

#define HS_PITCH_ALIGN 512 /* bytes; bench/real/data/pitched_copies_*.txt */

/* Their prototypes: the header declares them only under CUDA_API_PER_THREAD_DEFAULT_STREAM. */
cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                              enum cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                   size_t height, enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemset2D_ptds(void *devPtr, size_t pitch, int value, size_t width, size_t height);
cudaError_t cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value, size_t width, size_t height,
                                   cudaStream_t stream);

cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
    RT_ENTER();
    if (!devPtr || !pitch)
        RT_RETURN(cudaErrorInvalidValue);
    if (width > SIZE_MAX - HS_PITCH_ALIGN)
        RT_RETURN(cudaErrorMemoryAllocation);
    size_t p = (width + HS_PITCH_ALIGN - 1) / HS_PITCH_ALIGN * HS_PITCH_ALIGN;
    if (height && p > SIZE_MAX / height)
        RT_RETURN(cudaErrorMemoryAllocation);
    cudaError_t e = hs_client_malloc(p * height, devPtr);
    if (e == cudaSuccess)
        *pitch = p;
    RT_RETURN(e);
}

/* Memory the host can read and write: host memory and managed memory (device_of counts that as a device's). */
static int host_side(const void *p) { return hs_client_device_of(p) < 0 || hs_client_managed_find(p, NULL); }

void hs_rt_rows_data(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height)
{
    int src_host = host_side(src), dst_host = host_side(dst);
    for (size_t r = 0; r < height && dst_host; r++) {
        char *d = (char *)dst + r * dpitch;
        if (src_host)
            memmove(d, (const char *)src + r * spitch, width);
        else
            memset(d, 0, width); /* device memory reads as zeros */
    }
}

cudaError_t hs_rt_copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                          int kind, cudaStream_t stream, int synchronous)
{
    if (width == 0 || height == 0)
        return cudaSuccess;
    if (!dst || !src)
        return cudaErrorInvalidValue;
    if (width > dpitch || width > spitch)
        return cudaErrorInvalidPitchValue;
    if (width > SIZE_MAX / height)
        return cudaErrorInvalidValue;
    /* captured: a copy node with its rows, which writes the host's rows at each launch */
    hs_stream_op op = {
        .kind = HS_SOP_COPY, .stream = stream, .u.copy = {dst, src, width * height, kind, height, dpitch, spitch}};
    cudaError_t e;
    if (!synchronous && stream && hs_capture_divert(&op, &e))
        return e;
    e = hs_client_copy_2d(dst, src, width * height, height, kind, stream, synchronous, HS_COPY_HOLD_PAGEABLE);
    if (e == cudaSuccess)
        hs_rt_rows_data(dst, dpitch, src, spitch, width, height);
    return e;
}

static cudaError_t memset_2d(void *devPtr, size_t pitch, int value, size_t width, size_t height, cudaStream_t stream)
{
    if (width == 0 || height == 0)
        return cudaSuccess;
    if (!devPtr || width > pitch || width > SIZE_MAX / height)
        return cudaErrorInvalidValue;
    cudaError_t e = hs_client_memset_2d(devPtr, width * height, height, stream);
    /* managed rows are written now, or, captured, never (a graph's memset node writes no data) */
    if (e == cudaSuccess && hs_client_managed_find(devPtr, NULL) && !hs_capture_stream_active(stream))
        for (size_t r = 0; r < height; r++)
            memset((char *)devPtr + r * pitch, value, width);
    return e;
}

cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                         enum cudaMemcpyKind kind)
{
    RT_ENTER();
    RT_RETURN(hs_rt_copy_2d(dst, dpitch, src, spitch, width, height, (int)kind, NULL, 1));
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                              enum cudaMemcpyKind kind, cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(hs_rt_copy_2d(dst, dpitch, src, spitch, width, height, (int)kind, stream, 0));
}

cudaError_t cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width, size_t height)
{
    RT_ENTER();
    RT_RETURN(memset_2d(devPtr, pitch, value, width, height, NULL));
}

cudaError_t cudaMemset2DAsync(void *devPtr, size_t pitch, int value, size_t width, size_t height, cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(memset_2d(devPtr, pitch, value, width, height, stream));
}

/* --default-stream per-thread: the default stream is the calling thread's own. */
static cudaStream_t per_thread(cudaStream_t s) { return s ? s : cudaStreamPerThread; }

cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                              enum cudaMemcpyKind kind)
{
    RT_ENTER();
    RT_RETURN(hs_rt_copy_2d(dst, dpitch, src, spitch, width, height, (int)kind, cudaStreamPerThread, 1));
}

cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                   size_t height, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, per_thread(stream));
}

cudaError_t cudaMemset2D_ptds(void *devPtr, size_t pitch, int value, size_t width, size_t height)
{
    return cudaMemset2DAsync(devPtr, pitch, value, width, height, cudaStreamPerThread);
}

cudaError_t cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value, size_t width, size_t height,
                                   cudaStream_t stream)
{
    return cudaMemset2DAsync(devPtr, pitch, value, width, height, per_thread(stream));
}
