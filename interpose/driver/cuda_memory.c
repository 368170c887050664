/*
 * Memory, copies and memsets of the driver API: the runtime's own (the client core's)
 * under the driver's names and errors. Device memory is allocated on the
 * current context's device (the driver needs one); a CUdeviceptr is the
 * address the runtime would hand out. Copies are timed as the runtime's
 * (PCIe by the kind of host memory, NVLink between devices, the GPU's own
 * copy within one), and memsets likewise; pointer queries answer as
 * cudaPointerGetAttributes does. Not here: managed memory, arrays,
 * 2D/3D copies, stream-ordered allocation, the per-thread default stream
 * forms (_ptds, _ptsz), and the unversioned names, whose 32-bit device
 * pointers CUDA 13 programs no longer use: their stubs name themselves.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "cuda_driver.h"
#include "managed_memory.h"

static void *ptr_of(CUdeviceptr p) { return (void *)(uintptr_t)p; }

CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytesize)
{
    hs_client_enter();
    CUresult r = hs_driver_current_context();
    if (r == CUDA_SUCCESS && (!dptr || !bytesize))
        r = CUDA_ERROR_INVALID_VALUE;
    void *p = NULL;
    if (r == CUDA_SUCCESS && (r = hs_driver_from_runtime(hs_client_malloc(bytesize, &p))) == CUDA_SUCCESS)
        *dptr = (CUdeviceptr)(uintptr_t)p;
    return hs_driver_leave(r);
}

CUresult cuMemFree(CUdeviceptr dptr)
{
    hs_client_enter();
    return hs_driver_leave(hs_driver_from_runtime(hs_client_free(ptr_of(dptr))));
}

CUresult cuMemGetInfo(size_t *free, size_t *total)
{
    hs_client_enter();
    CUresult r = hs_driver_current_context();
    if (r == CUDA_SUCCESS && (!free || !total))
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        r = hs_driver_from_runtime(hs_client_mem_info(free, total));
    return hs_driver_leave(r);
}

/* ---- pinned host memory (mapped: its device pointer is its address) ---- */

static CUresult host_alloc(void **pp, size_t bytesize, unsigned flags)
{
    CUresult r = hs_driver_current_context();
    if (r != CUDA_SUCCESS)
        return r;
    if (!pp ||
        (flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED)))
        return CUDA_ERROR_INVALID_VALUE;
    return hs_driver_from_runtime(hs_client_host_alloc(bytesize, flags | CU_MEMHOSTALLOC_DEVICEMAP, pp));
}

CUresult cuMemAllocHost(void **pp, size_t bytesize)
{
    hs_client_enter();
    return hs_driver_leave(host_alloc(pp, bytesize, 0));
}

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    hs_client_enter();
    return hs_driver_leave(host_alloc(pp, bytesize, Flags));
}

CUresult cuMemFreeHost(void *p)
{
    hs_client_enter();
    return hs_driver_leave(hs_driver_from_runtime(hs_client_host_free(p)));
}

CUresult cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)
{
    hs_client_enter();
    return hs_driver_leave(hs_driver_from_runtime(hs_client_host_register(p, bytesize, Flags)));
}

CUresult cuMemHostUnregister(void *p)
{
    hs_client_enter();
    return hs_driver_leave(hs_driver_from_runtime(hs_client_host_unregister(p)));
}

CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
    hs_client_enter();
    if (!pFlags)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    return hs_driver_leave(hs_driver_from_runtime(hs_client_host_flags(p, pFlags)));
}

CUresult cuMemHostGetDevicePointer(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
    hs_client_enter();
    if (!pdptr || Flags || !p || !hs_client_host_block(p))
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    *pdptr = (CUdeviceptr)(uintptr_t)p;
    return hs_driver_leave(CUDA_SUCCESS);
}

/* ---- what a pointer is ---- */

static _Atomic int g_pointer_said[CU_POINTER_ATTRIBUTE_MAPPED + 1];

/* What cudaPointerGetAttributes reports of the memory, one attribute at a time; pointers hysim did not
 * hand out or register are CUDA_ERROR_INVALID_VALUE, as on a real driver. */
CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    hs_client_enter();
    CUresult r = hs_driver_initialized();
    if (r != CUDA_SUCCESS || !data)
        return hs_driver_leave(r != CUDA_SUCCESS ? r : CUDA_ERROR_INVALID_VALUE);
    const void *p = (const void *)(uintptr_t)ptr;
    hs_managed_info m;
    int managed = hs_client_managed_find(p, &m), dev = managed ? m.device : hs_client_device_of(p);
    int host = !managed && dev < 0 && p && hs_client_host_block(p);
    if (!managed && dev < 0 && !host)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    if (host)
        dev = hs_client_get_device();
    switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)data = hs_driver_primary_context(dev); break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *(unsigned *)data = host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE; break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *(CUdeviceptr *)data = ptr; break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (!host && !managed)
            return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
        *(void **)data = (void *)(uintptr_t)ptr;
        break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(unsigned *)data = managed != 0; break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = dev; break;
    default:
        if ((unsigned)attribute <= CU_POINTER_ATTRIBUTE_MAPPED && !atomic_exchange(&g_pointer_said[attribute], 1))
            fprintf(stderr, "hysim: cuPointerGetAttribute attribute %d is not supported yet\n", (int)attribute);
        return hs_driver_leave(CUDA_ERROR_NOT_SUPPORTED);
    }
    return hs_driver_leave(CUDA_SUCCESS);
}

/* ---- copies and memsets ---- */

/* A copy of kind (cudaMemcpyKind) on stream; synchronous as the runtime's cudaMemcpy is. */
static CUresult copy(void *dst, const void *src, size_t n, int kind, CUstream stream, int synchronous)
{
    return hs_driver_from_runtime(hs_client_memcpy(dst, src, n, kind, (cudaStream_t)stream, synchronous));
}

CUresult cuMemcpyHtoD(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    hs_client_enter();
    return hs_driver_leave(copy(ptr_of(dstDevice), srcHost, ByteCount, cudaMemcpyHostToDevice, NULL, 1));
}

CUresult cuMemcpyDtoH(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    hs_client_enter();
    return hs_driver_leave(copy(dstHost, ptr_of(srcDevice), ByteCount, cudaMemcpyDeviceToHost, NULL, 1));
}

CUresult cuMemcpyDtoD(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
    hs_client_enter();
    return hs_driver_leave(copy(ptr_of(dstDevice), ptr_of(srcDevice), ByteCount, cudaMemcpyDeviceToDevice, NULL, 1));
}

/* Unified addressing: the kind follows from the pointers. */
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
    hs_client_enter();
    return hs_driver_leave(copy(ptr_of(dst), ptr_of(src), ByteCount, cudaMemcpyDefault, NULL, 1));
}

CUresult cuMemcpyHtoDAsync(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream)
{
    hs_client_enter();
    return hs_driver_leave(copy(ptr_of(dstDevice), srcHost, ByteCount, cudaMemcpyHostToDevice, hStream, 0));
}

CUresult cuMemcpyDtoHAsync(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{
    hs_client_enter();
    return hs_driver_leave(copy(dstHost, ptr_of(srcDevice), ByteCount, cudaMemcpyDeviceToHost, hStream, 0));
}

CUresult cuMemcpyDtoDAsync(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{
    hs_client_enter();
    return hs_driver_leave(copy(ptr_of(dstDevice), ptr_of(srcDevice), ByteCount, cudaMemcpyDeviceToDevice, hStream, 0));
}

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
    hs_client_enter();
    return hs_driver_leave(copy(ptr_of(dst), ptr_of(src), ByteCount, cudaMemcpyDefault, hStream, 0));
}

/* Between devices: each pointer must be its context's device's. */
static CUresult copy_peer(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, size_t n,
                          CUstream stream, int synchronous)
{
    int dd = hs_driver_context_device(dst_ctx), sd = hs_driver_context_device(src_ctx);
    if (dd < 0 || sd < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (n && (hs_client_device_of(ptr_of(dst)) != dd || hs_client_device_of(ptr_of(src)) != sd))
        return CUDA_ERROR_INVALID_VALUE;
    return copy(ptr_of(dst), ptr_of(src), n, cudaMemcpyDeviceToDevice, stream, synchronous);
}

CUresult cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext,
                      size_t ByteCount)
{
    hs_client_enter();
    return hs_driver_leave(copy_peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, NULL, 1));
}

CUresult cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext,
                           size_t ByteCount, CUstream hStream)
{
    hs_client_enter();
    return hs_driver_leave(copy_peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream, 0));
}

/* N elements of size bytes each; device memory holds no data, so the value is not kept. */
static CUresult memset_elements(CUdeviceptr dst, size_t n, size_t size, CUstream stream)
{
    if (n > SIZE_MAX / size)
        return CUDA_ERROR_INVALID_VALUE;
    return hs_driver_from_runtime(hs_client_memset(ptr_of(dst), n * size, (cudaStream_t)stream));
}

CUresult cuMemsetD8(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
    (void)uc;
    hs_client_enter();
    return hs_driver_leave(memset_elements(dstDevice, N, 1, NULL));
}

CUresult cuMemsetD16(CUdeviceptr dstDevice, unsigned short us, size_t N)
{
    (void)us;
    hs_client_enter();
    return hs_driver_leave(memset_elements(dstDevice, N, 2, NULL));
}

CUresult cuMemsetD32(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
    (void)ui;
    hs_client_enter();
    return hs_driver_leave(memset_elements(dstDevice, N, 4, NULL));
}

CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
{
    (void)uc;
    hs_client_enter();
    return hs_driver_leave(memset_elements(dstDevice, N, 1, hStream));
}

CUresult cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream)
{
    (void)us;
    hs_client_enter();
    return hs_driver_leave(memset_elements(dstDevice, N, 2, hStream));
}

CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)
{
    (void)ui;
    hs_client_enter();
    return hs_driver_leave(memset_elements(dstDevice, N, 4, hStream));
}
