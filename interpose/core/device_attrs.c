/*
 * Device attributes of the simulated GPUs, by cudaDeviceAttr number (the
 * driver's CUdevice_attribute numbers are the same). Fixed values are those a
 * real H100 80GB HBM3 reports (CUDA 13.0, driver 13000); the SM count and
 * compute capability come from the scenario (Setup), the PCI bus id is the
 * local device index. An attribute not listed is cudaErrorInvalidValue.
 */
#include <cuda_runtime_api.h>

#include "internal.h"

static const struct {
    int attr;
    int value;
} hopper[] = {
    {cudaDevAttrMaxThreadsPerBlock, 1024},
    {cudaDevAttrMaxBlockDimX, 1024},
    {cudaDevAttrMaxBlockDimY, 1024},
    {cudaDevAttrMaxBlockDimZ, 64},
    {cudaDevAttrMaxGridDimX, 2147483647},
    {cudaDevAttrMaxGridDimY, 65535},
    {cudaDevAttrMaxGridDimZ, 65535},
    {cudaDevAttrMaxSharedMemoryPerBlock, 49152},
    {cudaDevAttrTotalConstantMemory, 65536},
    {cudaDevAttrWarpSize, 32},
    {cudaDevAttrMaxPitch, 2147483647},
    {cudaDevAttrMaxRegistersPerBlock, 65536},
    {cudaDevAttrClockRate, 1980000},
    {cudaDevAttrTextureAlignment, 512},
    {cudaDevAttrGpuOverlap, 1},
    {cudaDevAttrKernelExecTimeout, 0},
    {cudaDevAttrIntegrated, 0},
    {cudaDevAttrCanMapHostMemory, 1},
    {cudaDevAttrComputeMode, 0},
    {cudaDevAttrMaxTexture1DWidth, 131072},
    {cudaDevAttrMaxTexture2DWidth, 131072},
    {cudaDevAttrMaxTexture2DHeight, 65536},
    {cudaDevAttrMaxTexture3DWidth, 16384},
    {cudaDevAttrMaxTexture3DHeight, 16384},
    {cudaDevAttrMaxTexture3DDepth, 16384},
    {cudaDevAttrMaxTexture2DLayeredWidth, 32768},
    {cudaDevAttrMaxTexture2DLayeredHeight, 32768},
    {cudaDevAttrMaxTexture2DLayeredLayers, 2048},
    {cudaDevAttrSurfaceAlignment, 512},
    {cudaDevAttrConcurrentKernels, 1},
    {cudaDevAttrEccEnabled, 1},
    {cudaDevAttrTccDriver, 0},
    {cudaDevAttrMemoryClockRate, 2619000},
    {cudaDevAttrGlobalMemoryBusWidth, 5120},
    {cudaDevAttrL2CacheSize, 52428800},
    {cudaDevAttrMaxThreadsPerMultiProcessor, 2048},
    {cudaDevAttrAsyncEngineCount, 3},
    {cudaDevAttrUnifiedAddressing, 1},
    {cudaDevAttrMaxTexture1DLayeredWidth, 32768},
    {cudaDevAttrMaxTexture1DLayeredLayers, 2048},
    {cudaDevAttrMaxTexture2DGatherWidth, 32768},
    {cudaDevAttrMaxTexture2DGatherHeight, 32768},
    {cudaDevAttrMaxTexture3DWidthAlt, 8192},
    {cudaDevAttrMaxTexture3DHeightAlt, 8192},
    {cudaDevAttrMaxTexture3DDepthAlt, 32768},
    {cudaDevAttrPciDomainId, 0},
    {cudaDevAttrTexturePitchAlignment, 32},
    {cudaDevAttrMaxTextureCubemapWidth, 32768},
    {cudaDevAttrMaxTextureCubemapLayeredWidth, 32768},
    {cudaDevAttrMaxTextureCubemapLayeredLayers, 2046},
    {cudaDevAttrMaxSurface1DWidth, 32768},
    {cudaDevAttrMaxSurface2DWidth, 131072},
    {cudaDevAttrMaxSurface2DHeight, 65536},
    {cudaDevAttrMaxSurface3DWidth, 16384},
    {cudaDevAttrMaxSurface3DHeight, 16384},
    {cudaDevAttrMaxSurface3DDepth, 16384},
    {cudaDevAttrMaxSurface1DLayeredWidth, 32768},
    {cudaDevAttrMaxSurface1DLayeredLayers, 2048},
    {cudaDevAttrMaxSurface2DLayeredWidth, 32768},
    {cudaDevAttrMaxSurface2DLayeredHeight, 32768},
    {cudaDevAttrMaxSurface2DLayeredLayers, 2048},
    {cudaDevAttrMaxSurfaceCubemapWidth, 32768},
    {cudaDevAttrMaxSurfaceCubemapLayeredWidth, 32768},
    {cudaDevAttrMaxSurfaceCubemapLayeredLayers, 2046},
    {cudaDevAttrMaxTexture1DLinearWidth, 268435456},
    {cudaDevAttrMaxTexture2DLinearWidth, 131072},
    {cudaDevAttrMaxTexture2DLinearHeight, 65000},
    {cudaDevAttrMaxTexture2DLinearPitch, 2097120},
    {cudaDevAttrMaxTexture2DMipmappedWidth, 32768},
    {cudaDevAttrMaxTexture2DMipmappedHeight, 32768},
    {cudaDevAttrMaxTexture1DMipmappedWidth, 32768},
    {cudaDevAttrStreamPrioritiesSupported, 1},
    {cudaDevAttrGlobalL1CacheSupported, 1},
    {cudaDevAttrLocalL1CacheSupported, 1},
    {cudaDevAttrMaxSharedMemoryPerMultiprocessor, 233472},
    {cudaDevAttrMaxRegistersPerMultiprocessor, 65536},
    {cudaDevAttrManagedMemory, 1},
    {cudaDevAttrIsMultiGpuBoard, 0},
    {cudaDevAttrMultiGpuBoardGroupID, 0},
    {cudaDevAttrHostNativeAtomicSupported, 0},
    {cudaDevAttrSingleToDoublePrecisionPerfRatio, 2},
    {cudaDevAttrPageableMemoryAccess, 0},
    {cudaDevAttrConcurrentManagedAccess, 1},
    {cudaDevAttrComputePreemptionSupported, 1},
    {cudaDevAttrCanUseHostPointerForRegisteredMem, 1},
    {cudaDevAttrCooperativeLaunch, 1},
    {cudaDevAttrMaxSharedMemoryPerBlockOptin, 232448},
    {cudaDevAttrCanFlushRemoteWrites, 0},
    {cudaDevAttrHostRegisterSupported, 1},
    {cudaDevAttrPageableMemoryAccessUsesHostPageTables, 0},
    {cudaDevAttrDirectManagedMemAccessFromHost, 0},
    {cudaDevAttrMaxBlocksPerMultiprocessor, 32},
    {cudaDevAttrMaxPersistingL2CacheSize, 32768000},
    {cudaDevAttrMaxAccessPolicyWindowSize, 134217728},
    {cudaDevAttrSparseCudaArraySupported, 1},
    {cudaDevAttrHostRegisterReadOnlySupported, 1},
    {cudaDevAttrTimelineSemaphoreInteropSupported, 1},
    {cudaDevAttrMemoryPoolsSupported, 1},
    {cudaDevAttrGPUDirectRDMASupported, 1},
    {cudaDevAttrGPUDirectRDMAFlushWritesOptions, 1},
    {cudaDevAttrGPUDirectRDMAWritesOrdering, 100},
    {cudaDevAttrMemoryPoolSupportedHandleTypes, 9},
    {cudaDevAttrClusterLaunch, 1},
    {cudaDevAttrDeferredMappingCudaArraySupported, 1},
    {cudaDevAttrIpcEventSupport, 1},
    {cudaDevAttrMemSyncDomainCount, 4},
    {cudaDevAttrNumaConfig, 0},
    {cudaDevAttrNumaId, -1},
    {cudaDevAttrMpsEnabled, 0},
    {cudaDevAttrHostNumaId, 0},
    {cudaDevAttrD3D12CigSupported, 0},
    {cudaDevAttrVulkanCigSupported, 0},
    {cudaDevAttrHostNumaMemoryPoolsSupported, 1},
    {cudaDevAttrHostNumaMultinodeIpcSupported, 0},
    {cudaDevAttrHostMemoryPoolsSupported, 1},
    {cudaDevAttrOnlyPartialHostNativeAtomicSupported, 0},
};

cudaError_t hs_client_device_attribute(int attr, int device, int *value)
{
    if (!value)
        return cudaErrorInvalidValue;
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    const hs_gpu_info *info = hs_client_gpu_info();
    if (device < 0 || device >= info->device_count)
        return cudaErrorInvalidDevice;
    switch (attr) {
    case cudaDevAttrMultiProcessorCount: *value = info->sm_count; return cudaSuccess;
    case cudaDevAttrComputeCapabilityMajor: *value = info->cc_major; return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor: *value = info->cc_minor; return cudaSuccess;
    case cudaDevAttrPciBusId: *value = device + (int)info->visible_first; return cudaSuccess;
    case cudaDevAttrPciDeviceId: *value = 0; return cudaSuccess;
    default: break;
    }
    for (size_t i = 0; i < sizeof hopper / sizeof hopper[0]; i++) {
        if (hopper[i].attr == attr) {
            *value = hopper[i].value;
            return cudaSuccess;
        }
    }
    return cudaErrorInvalidValue;
}
