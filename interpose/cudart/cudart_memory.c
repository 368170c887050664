/*
 * Runtime memory calls beyond cudart.c's basics: copies between devices
 * (cudaMemcpyPeer), what a pointer is (cudaPointerGetAttributes) and the
 * channel descriptors of cudaCreateChannelDesc.
 */
#include "cudart_internal.h"
#include "managed_memory.h"

/* Both devices must exist and hold the pointers; the copy is a device-to-device Copy op. */
static cudaError_t memcpy_peer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count,
                               cudaStream_t stream)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    int n = hs_client_gpu_info()->device_count;
    if (dstDevice < 0 || dstDevice >= n || srcDevice < 0 || srcDevice >= n)
        return cudaErrorInvalidDevice;
    if (count == 0)
        return cudaSuccess;
    if (hs_client_device_of(dst) != dstDevice || hs_client_device_of(src) != srcDevice)
        return cudaErrorInvalidValue;
    return hs_rt_memcpy(dst, src, count, cudaMemcpyDeviceToDevice, stream, 0);
}

/* Asynchronous with respect to the host, as CUDA's; ordered on the legacy stream. */
cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count)
{
    RT_ENTER();
    RT_RETURN(memcpy_peer(dst, dstDevice, src, srcDevice, count, NULL));
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t count,
                                cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(memcpy_peer(dst, dstDevice, src, srcDevice, count, stream));
}

/*
 * Managed memory: any address in a cudaMallocManaged allocation, host and
 * device pointer alike. Device memory: any address in a device's range.
 * Pinned host memory: a block of cudaMallocHost / cudaHostAlloc (mapped, so
 * both pointers are the address). Anything else is unregistered host
 * memory, device -2 as CUDA reports it.
 */
cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *ptr)
{
    RT_ENTER();
    if (!attributes)
        RT_RETURN(cudaErrorInvalidValue);
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        RT_RETURN(e);
    struct cudaPointerAttributes a = {.type = cudaMemoryTypeUnregistered, .device = -2};
    hs_managed_info m;
    int dev = hs_client_device_of(ptr);
    if (hs_client_managed_find(ptr, &m)) {
        a.type = cudaMemoryTypeManaged;
        a.device = m.device;
        a.devicePointer = a.hostPointer = (void *)ptr;
    } else if (dev >= 0) {
        a.type = cudaMemoryTypeDevice;
        a.device = dev;
        a.devicePointer = (void *)ptr;
    } else if (ptr && hs_client_host_block(ptr)) {
        a.type = cudaMemoryTypeHost;
        a.device = hs_client_get_device();
        a.devicePointer = a.hostPointer = (void *)ptr;
    } else {
        a.hostPointer = (void *)ptr;
    }
    *attributes = a;
    RT_RETURN(cudaSuccess);
}

/* A pure function in CUDA too. */
struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, enum cudaChannelFormatKind f)
{
    struct cudaChannelFormatDesc d = {x, y, z, w, f};
    return d;
}
