/*
 * libcudart.so.13: the CUDA runtime API calls hysim implements, with the
 * real header's signatures. The work is the client core's (client.h); this
 * file checks arguments as CUDA does, fills CUDA's structures and keeps the
 * per-thread last error. The other cudart*.c files implement more of the
 * runtime; every other function cuda_runtime_api.h declares is a generated
 * stub that says it is not supported yet (gen_api_stubs.sh).
 */
#include <stdio.h>
#include <string.h>

#include "cudart_graphs.h"
#include "cudart_internal.h"

#define HS_CUDA_VERSION 13000

static __thread cudaError_t t_last_error = cudaSuccess;

cudaError_t hs_rt_return(cudaError_t e)
{
    if (e != cudaSuccess && e != cudaErrorNotReady)
        t_last_error = e;
    RT_LEAVE();
    return e;
}

/* ---- errors and versions ---- */

cudaError_t cudaGetLastError(void)
{
    RT_ENTER();
    cudaError_t e = t_last_error;
    t_last_error = cudaSuccess;
    RT_LEAVE();
    return e;
}

cudaError_t cudaPeekAtLastError(void)
{
    RT_ENTER();
    cudaError_t e = t_last_error;
    RT_LEAVE();
    return e;
}

cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
    RT_ENTER();
    if (!runtimeVersion)
        RT_RETURN(cudaErrorInvalidValue);
    *runtimeVersion = HS_CUDA_VERSION;
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaDriverGetVersion(int *driverVersion)
{
    RT_ENTER();
    if (!driverVersion)
        RT_RETURN(cudaErrorInvalidValue);
    *driverVersion = HS_CUDA_VERSION;
    RT_RETURN(cudaSuccess);
}

/* ---- devices ---- */

cudaError_t cudaGetDeviceCount(int *count)
{
    RT_ENTER();
    if (!count)
        RT_RETURN(cudaErrorInvalidValue);
    cudaError_t e = hs_client_start();
    *count = e == cudaSuccess ? hs_client_gpu_info()->device_count : 0;
    RT_RETURN(e);
}

cudaError_t cudaSetDevice(int device)
{
    RT_ENTER();
    RT_RETURN(hs_client_set_device(device));
}

cudaError_t cudaGetDevice(int *device)
{
    RT_ENTER();
    if (!device)
        RT_RETURN(cudaErrorInvalidValue);
    cudaError_t e = hs_client_start();
    if (e == cudaSuccess)
        *device = hs_client_get_device();
    RT_RETURN(e);
}

/* The fixed figures are those of a real H100 80GB HBM3; the scenario sets the rest. */
static void fill_properties(struct cudaDeviceProp *p, int dev, const hs_gpu_info *g)
{
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", g->model);
    hs_client_gpu_uuid(dev, (unsigned char *)p->uuid.bytes);
    p->totalGlobalMem = (size_t)g->memory_bytes;
    p->sharedMemPerBlock = 49152;
    p->regsPerBlock = 65536;
    p->warpSize = 32;
    p->memPitch = 2147483647;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = 1024, p->maxThreadsDim[1] = 1024, p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 2147483647, p->maxGridSize[1] = 65535, p->maxGridSize[2] = 65535;
    p->totalConstMem = 65536;
    p->major = g->cc_major;
    p->minor = g->cc_minor;
    p->textureAlignment = 512;
    p->texturePitchAlignment = 32;
    p->multiProcessorCount = g->sm_count;
    p->canMapHostMemory = 1;
    p->maxTexture1D = 131072;
    p->maxTexture1DMipmap = 32768;
    p->maxTexture2D[0] = 131072, p->maxTexture2D[1] = 65536;
    p->maxTexture2DMipmap[0] = 32768, p->maxTexture2DMipmap[1] = 32768;
    p->maxTexture2DLinear[0] = 131072, p->maxTexture2DLinear[1] = 65000;
    p->maxTexture2DLinear[2] = 2097120;
    p->maxTexture2DGather[0] = 32768, p->maxTexture2DGather[1] = 32768;
    p->maxTexture3D[0] = p->maxTexture3D[1] = p->maxTexture3D[2] = 16384;
    p->maxTexture3DAlt[0] = 8192, p->maxTexture3DAlt[1] = 8192, p->maxTexture3DAlt[2] = 32768;
    p->maxTextureCubemap = 32768;
    p->maxTexture1DLayered[0] = 32768, p->maxTexture1DLayered[1] = 2048;
    p->maxTexture2DLayered[0] = 32768, p->maxTexture2DLayered[1] = 32768;
    p->maxTexture2DLayered[2] = 2048;
    p->maxTextureCubemapLayered[0] = 32768, p->maxTextureCubemapLayered[1] = 2046;
    p->maxSurface1D = 32768;
    p->maxSurface2D[0] = 131072, p->maxSurface2D[1] = 65536;
    p->maxSurface3D[0] = p->maxSurface3D[1] = p->maxSurface3D[2] = 16384;
    p->maxSurface1DLayered[0] = 32768, p->maxSurface1DLayered[1] = 2048;
    p->maxSurface2DLayered[0] = 32768, p->maxSurface2DLayered[1] = 32768;
    p->maxSurface2DLayered[2] = 2048;
    p->maxSurfaceCubemap = 32768;
    p->maxSurfaceCubemapLayered[0] = 32768, p->maxSurfaceCubemapLayered[1] = 2046;
    p->surfaceAlignment = 512;
    p->concurrentKernels = 1;
    p->ECCEnabled = 1;
    p->pciBusID = dev + (int)g->visible_first; /* its index in the server, as cudaDevAttrPciBusId */
    p->asyncEngineCount = 3;
    p->unifiedAddressing = 1;
    p->memoryBusWidth = 5120;
    p->l2CacheSize = 52428800;
    p->persistingL2CacheMaxSize = 32768000;
    p->maxThreadsPerMultiProcessor = 2048;
    p->streamPrioritiesSupported = 1;
    p->globalL1CacheSupported = 1;
    p->localL1CacheSupported = 1;
    p->sharedMemPerMultiprocessor = 233472;
    p->regsPerMultiprocessor = 65536;
    p->managedMemory = 1;
    p->concurrentManagedAccess = 1;
    p->computePreemptionSupported = 1;
    p->canUseHostPointerForRegisteredMem = 1;
    p->cooperativeLaunch = 1;
    p->sharedMemPerBlockOptin = 232448;
    p->maxBlocksPerMultiProcessor = 32;
    p->accessPolicyMaxWindowSize = 134217728;
    p->reservedSharedMemPerBlock = 1024;
    p->hostRegisterSupported = 1;
    p->sparseCudaArraySupported = 1;
    p->hostRegisterReadOnlySupported = 1;
    p->timelineSemaphoreInteropSupported = 1;
    p->memoryPoolsSupported = 1;
    p->gpuDirectRDMASupported = 1;
    p->gpuDirectRDMAFlushWritesOptions = 1;
    p->gpuDirectRDMAWritesOrdering = 100;
    p->memoryPoolSupportedHandleTypes = 9;
    p->deferredMappingCudaArraySupported = 1;
    p->ipcEventSupported = 1;
    p->clusterLaunch = 1;
    p->unifiedFunctionPointers = 1;
    p->deviceNumaId = -1;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    RT_ENTER();
    if (!prop)
        RT_RETURN(cudaErrorInvalidValue);
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        RT_RETURN(e);
    const hs_gpu_info *g = hs_client_gpu_info();
    if (device < 0 || device >= g->device_count)
        RT_RETURN(cudaErrorInvalidDevice);
    fill_properties(prop, device, g);
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    RT_ENTER();
    RT_RETURN(hs_client_device_attribute((int)attr, device, value));
}

cudaError_t cudaDeviceSynchronize(void)
{
    RT_ENTER();
    RT_RETURN(hs_client_device_synchronize());
}

cudaError_t cudaDeviceReset(void)
{
    RT_ENTER();
    cudaError_t e = hs_client_device_reset();
    if (e == cudaSuccess) {
        hs_rt_pool_reset_device(hs_client_get_device());
        hs_rt_symbols_reset_device(hs_client_get_device());
    }
    RT_RETURN(e);
}

/* ---- memory ---- */

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    RT_ENTER();
    RT_RETURN(hs_client_malloc(size, devPtr));
}

cudaError_t cudaFree(void *devPtr)
{
    RT_ENTER();
    RT_RETURN(hs_rt_pool_free(devPtr));
}

cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
{
    RT_ENTER();
    RT_RETURN(hs_client_mem_info(free, total));
}

/* Pinned memory is mapped (unified addressing): cudaHostGetFlags reports cudaHostAllocMapped, as CUDA does. */
cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    RT_ENTER();
    RT_RETURN(hs_client_host_alloc(size, cudaHostAllocMapped, ptr));
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    RT_ENTER();
    if (flags & ~(unsigned)(cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined))
        RT_RETURN(cudaErrorInvalidValue);
    RT_RETURN(hs_client_host_alloc(size, flags | cudaHostAllocMapped, pHost));
}

cudaError_t cudaFreeHost(void *ptr)
{
    RT_ENTER();
    RT_RETURN(hs_client_host_free(ptr));
}

/* Registered host memory is copied at the pinned rate; nothing else changes for it. */
cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    RT_ENTER();
    if (flags & ~(unsigned)(cudaHostRegisterPortable | cudaHostRegisterMapped | cudaHostRegisterIoMemory |
                            cudaHostRegisterReadOnly))
        RT_RETURN(cudaErrorInvalidValue);
    RT_RETURN(hs_client_host_register(ptr, size, flags | cudaHostRegisterMapped));
}

cudaError_t cudaHostUnregister(void *ptr)
{
    RT_ENTER();
    RT_RETURN(hs_client_host_unregister(ptr));
}

cudaError_t cudaHostGetFlags(unsigned int *pFlags, void *pHost)
{
    RT_ENTER();
    cudaError_t e = pFlags && pHost ? hs_client_start() : cudaErrorInvalidValue;
    RT_RETURN(e == cudaSuccess ? hs_client_host_flags(pHost, pFlags) : e);
}

/* Pinned and registered host memory is mapped at its own address (unified addressing). */
cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
{
    RT_ENTER();
    if (!pDevice || flags != 0)
        RT_RETURN(cudaErrorInvalidValue);
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        RT_RETURN(e);
    if (!pHost || !hs_client_host_block(pHost))
        RT_RETURN(cudaErrorInvalidValue);
    *pDevice = pHost;
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    RT_ENTER();
    RT_RETURN(hs_rt_memcpy(dst, src, count, (int)kind, NULL, 1));
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(hs_rt_memcpy(dst, src, count, (int)kind, stream, 0));
}

/* The value is stored only in managed memory: device memory has no contents. */
cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    RT_ENTER();
    RT_RETURN(hs_rt_memset(devPtr, value, count, NULL));
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(hs_rt_memset(devPtr, value, count, stream));
}

/* ---- streams ---- */

/* Hopper's stream priorities: 0 (least) to -5 (greatest); others are clamped, as CUDA does. */
static int clamp_priority(int p) { return p > 0 ? 0 : p < -5 ? -5 : p; }

cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
    RT_ENTER();
    if (!pStream)
        RT_RETURN(cudaErrorInvalidValue);
    RT_RETURN(hs_client_stream_create(cudaStreamDefault, 0, pStream));
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    RT_ENTER();
    if (!pStream || (flags & ~(unsigned)cudaStreamNonBlocking))
        RT_RETURN(cudaErrorInvalidValue);
    RT_RETURN(hs_client_stream_create(flags, 0, pStream));
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority)
{
    RT_ENTER();
    if (!pStream || (flags & ~(unsigned)cudaStreamNonBlocking))
        RT_RETURN(cudaErrorInvalidValue);
    RT_RETURN(hs_client_stream_create(flags, clamp_priority(priority), pStream));
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    RT_ENTER();
    cudaError_t e = hs_client_stream_destroy(stream);
    if (e == cudaSuccess)
        hs_rt_stream_attrs_forget(stream);
    RT_RETURN(e);
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(hs_client_stream_synchronize(stream));
}

cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(hs_client_stream_query(stream));
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    RT_ENTER();
    if (flags & ~(unsigned)cudaEventWaitExternal)
        RT_RETURN(cudaErrorInvalidValue);
    RT_RETURN(hs_client_stream_wait_event(stream, event));
}

/* ---- events ---- */

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    RT_ENTER();
    if (!event)
        RT_RETURN(cudaErrorInvalidValue);
    RT_RETURN(hs_client_event_create(cudaEventDefault, event));
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    RT_ENTER();
    unsigned known = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
    if (!event || (flags & ~known) || ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming)))
        RT_RETURN(cudaErrorInvalidValue);
    RT_RETURN(hs_client_event_create(flags, event));
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(hs_client_event_record(event, stream));
}

/* cudaEventRecordExternal is for a stream being captured only (outside one CUDA answers cudaErrorIllegalState). */
cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
    RT_ENTER();
    if (flags & ~(unsigned)cudaEventRecordExternal)
        RT_RETURN(cudaErrorInvalidValue);
    if ((flags & cudaEventRecordExternal) && !hs_capture_stream_active(stream))
        RT_RETURN(cudaErrorIllegalState);
    RT_RETURN(hs_client_event_record(event, stream));
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    RT_ENTER();
    RT_RETURN(hs_client_event_synchronize(event));
}

cudaError_t cudaEventQuery(cudaEvent_t event)
{
    RT_ENTER();
    RT_RETURN(hs_client_event_query(event));
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    RT_ENTER();
    RT_RETURN(hs_client_event_elapsed(ms, start, end));
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    RT_ENTER();
    RT_RETURN(hs_client_event_destroy(event));
}
