/*
 * Private to libcudart.so.13 (interpose/cudart*.c): how every runtime entry
 * point brackets itself and records the thread's last error.
 */
#ifndef HYSIM_INTERPOSE_CUDART_INTERNAL_H
#define HYSIM_INTERPOSE_CUDART_INTERNAL_H

#include <cuda_runtime_api.h>

#include "client.h"

#define RT_ENTER() hs_client_enter()
#define RT_LEAVE() hs_client_leave()

/*
 * Records a failure as the calling thread's last error (cudaErrorNotReady
 * is an answer, not an error), leaves the intercepted call, returns e.
 */
__attribute__((visibility("hidden"))) cudaError_t hs_rt_return(cudaError_t e);
#define RT_RETURN(expr) return hs_rt_return(expr)

/*
 * cudart_managed.c: the cudaMemcpy family's copy (hs_client_memcpy) and,
 * where a side is managed memory, its data (unless the stream is captured);
 * a managed range that runs past its allocation is cudaErrorInvalidValue.
 */
__attribute__((visibility("hidden"))) cudaError_t hs_rt_memcpy(void *dst, const void *src, size_t count, int kind,
                                                               cudaStream_t stream, int synchronous);
/* cudart_managed.c: cudaMemset's op, and the value written where the memory is managed. */
__attribute__((visibility("hidden"))) cudaError_t hs_rt_memset(void *ptr, int value, size_t count, cudaStream_t stream);
/*
 * cudart_pitched.c: a 2D copy of height rows of width bytes (cudaMemcpy2D's
 * checks and op; captured, a copy node that keeps its rows), and what it
 * writes to host memory (a graph launch's 2D copy node: hs_rt_rows_data).
 */
__attribute__((visibility("hidden"))) cudaError_t hs_rt_copy_2d(void *dst, size_t dpitch, const void *src,
                                                                size_t spitch, size_t width, size_t height, int kind,
                                                                cudaStream_t stream, int synchronous);
__attribute__((visibility("hidden"))) void hs_rt_rows_data(void *dst, size_t dpitch, const void *src, size_t spitch,
                                                           size_t width, size_t height);
/* cudart_managed.c: what an issued copy does to managed data (a graph launch's copy node). */
__attribute__((visibility("hidden"))) void hs_rt_managed_data(void *dst, const void *src, size_t count);
/* cudart_streams.c: a destroyed stream's attributes go (its handle may come back for another). */
__attribute__((visibility("hidden"))) void hs_rt_stream_attrs_forget(cudaStream_t stream);
/* cudart_mem_pools.c: cudaFree (a pool's allocation leaves its pool's accounting). */
__attribute__((visibility("hidden"))) cudaError_t hs_rt_pool_free(void *ptr);
/* cudart_mem_pools.c: cudaDeviceReset freed every allocation of the device. */
__attribute__((visibility("hidden"))) void hs_rt_pool_reset_device(int device);
/* cudart_symbols.c: cudaDeviceReset freed the device's copies of the device variables. */
__attribute__((visibility("hidden"))) void hs_rt_symbols_reset_device(int device);

#endif
