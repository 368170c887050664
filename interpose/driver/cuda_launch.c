/*
 * Launches of the driver API: a function of a module (cuda_modules.c) run
 * as the same Kernel op as the runtime's (hs_client_launch), timed by its
 * name's profile or the scenario's default, on the stream given (CUstream
 * and cudaStream_t are one handle); occupancy by kernel_rules.h, clusters by
 * a model of a real H100's answers; a tensor map (TMA descriptor) checked
 * and left blank, since no kernel reads it.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "cuda_driver.h"
#include "kernel_rules.h"

/* ---- launches ---- */

static CUresult launch(CUfunction f, const unsigned grid[3], const unsigned block[3], unsigned shared, CUstream stream)
{
    if (!hs_driver_function_ok(f))
        return CUDA_ERROR_INVALID_HANDLE;
    if (shared > (unsigned)f->attrs[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES])
        return CUDA_ERROR_INVALID_VALUE;
    return hs_driver_from_runtime(hs_client_launch(f->kernel, grid, block, shared, (cudaStream_t)stream, NULL));
}

static CUresult launch_kernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                              unsigned bz, unsigned shared, CUstream stream)
{
    const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    return launch(f, grid, block, shared, stream);
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                        unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                        unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
    (void)kernelParams, (void)extra; /* arguments of code that does not run */
    hs_client_enter();
    return hs_driver_leave(
        launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream));
}

/* A cooperative grid is co-resident on the device, as every simulated grid is: timed as any launch. */
CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                   unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                   unsigned int sharedMemBytes, CUstream hStream, void **kernelParams)
{
    (void)kernelParams;
    hs_client_enter();
    return hs_driver_leave(
        launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream));
}

/* One "not supported yet" line per refused launch attribute and process. */
static _Atomic int g_attr_said[HS_LAUNCH_ATTR_MAX + 1];

static CUresult launch_ex(const CUlaunchConfig *config, CUfunction f, CUstream default_stream)
{
    if (!config || (config->numAttrs && !config->attrs))
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < config->numAttrs; i++) {
        const char *name = NULL;
        switch (hs_kernel_launch_attr((int)config->attrs[i].id, &name)) { /* kernel_rules.c: which, and why */
        case HS_LAUNCH_ATTR_IGNORED: break;
        case HS_LAUNCH_ATTR_NOT_SUPPORTED:
            if (!atomic_exchange(&g_attr_said[config->attrs[i].id], 1))
                fprintf(stderr, "hysim: cuLaunchKernelEx attribute %d (%s) is not supported yet\n",
                        (int)config->attrs[i].id, name);
            return CUDA_ERROR_NOT_SUPPORTED;
        case HS_LAUNCH_ATTR_UNKNOWN: return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return launch_kernel(f, config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX, config->blockDimY,
                         config->blockDimZ, config->sharedMemBytes, config->hStream ? config->hStream : default_stream);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
{
    (void)kernelParams, (void)extra;
    hs_client_enter();
    return hs_driver_leave(launch_ex(config, f, NULL));
}

/* The per-thread default stream's entry points: stream 0 is the calling thread's default stream. */
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                             unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                             unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra);
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                             unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                             unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
    (void)kernelParams, (void)extra;
    hs_client_enter();
    return hs_driver_leave(launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                                         sharedMemBytes, hStream ? hStream : CU_STREAM_PER_THREAD));
}

CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                        void **kernelParams);
CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                        void **kernelParams)
{
    (void)kernelParams;
    hs_client_enter();
    return hs_driver_leave(launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                                         sharedMemBytes, hStream ? hStream : CU_STREAM_PER_THREAD));
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
{
    (void)kernelParams, (void)extra;
    hs_client_enter();
    return hs_driver_leave(launch_ex(config, f, CU_STREAM_PER_THREAD));
}

/* ---- occupancy ---- */

static CUresult occupancy(int *numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize, unsigned flags)
{
    if (!numBlocks || blockSize <= 0 || (flags & ~(unsigned)CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE))
        return CUDA_ERROR_INVALID_VALUE;
    if (!hs_driver_function_ok(func))
        return CUDA_ERROR_INVALID_HANDLE;
    *numBlocks = hs_kernel_blocks_per_sm(blockSize, dynamicSMemSize,
                                         func->attrs[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES]);
    return CUDA_SUCCESS;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func, int blockSize,
                                                     size_t dynamicSMemSize)
{
    hs_client_enter();
    return hs_driver_leave(occupancy(numBlocks, func, blockSize, dynamicSMemSize, 0));
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, CUfunction func, int blockSize,
                                                              size_t dynamicSMemSize, unsigned int flags)
{
    hs_client_enter();
    return hs_driver_leave(occupancy(numBlocks, func, blockSize, dynamicSMemSize, flags));
}

/* The block size (a multiple of a warp, at most blockSizeLimit) that keeps the most threads resident per SM;
 * the grid that fills the GPU with it. */
CUresult cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, CUfunction func,
                                          CUoccupancyB2DSize blockSizeToDynamicSMemSize, size_t dynamicSMemSize,
                                          int blockSizeLimit)
{
    hs_client_enter();
    if (!minGridSize || !blockSize || blockSizeLimit < 0)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    if (!hs_driver_function_ok(func))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    const hs_gpu_info *info = hs_client_gpu_info();
    int limit = blockSizeLimit && blockSizeLimit < HS_MAX_THREADS_PER_BLOCK ? blockSizeLimit : HS_MAX_THREADS_PER_BLOCK;
    int best = 0, best_blocks = 0;
    for (int b = 32; b <= limit; b += 32) {
        size_t smem = blockSizeToDynamicSMemSize ? blockSizeToDynamicSMemSize(b) : dynamicSMemSize;
        int n = hs_kernel_blocks_per_sm(b, smem, func->attrs[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES]);
        if (n * b > best * best_blocks || (n * b == best * best_blocks && b > best)) /* ties: the larger block */
            best = b, best_blocks = n;
    }
    *blockSize = best;
    *minGridSize = best_blocks * (info ? info->sm_count : 0);
    return hs_driver_leave(CUDA_SUCCESS);
}

/*
 * Clusters of the launch's shape that can be resident at once, as a real
 * H100 answers (bench/real/data/driver_launch_h100.txt): at most 8 blocks an
 * SM (it answers 8 for blocks of 128 and 256 threads alike), and clusters of
 * more than 2 blocks stay within groups of SMs that leave 8 of its 132 over
 * (124 usable): within 4 % of its 12 answers for 1-8 blocks of 128-1024
 * threads.
 */
#define CLUSTER_BLOCKS_PER_SM 8
#define CLUSTER_USABLE_SHARE  (124.0 / 132.0)

CUresult cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func, const CUlaunchConfig *config)
{
    hs_client_enter();
    if (!numClusters || !config)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    if (!hs_driver_function_ok(func))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    unsigned cluster = 1;
    for (unsigned i = 0; i < config->numAttrs; i++)
        if (config->attrs && config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
            cluster = config->attrs[i].value.clusterDim.x * config->attrs[i].value.clusterDim.y *
                      config->attrs[i].value.clusterDim.z;
    if (!cluster || cluster > 16 || config->gridDimX * config->gridDimY * config->gridDimZ % cluster)
        return hs_driver_leave(CUDA_ERROR_INVALID_CLUSTER_SIZE);
    const hs_gpu_info *info = hs_client_gpu_info();
    int per_sm =
        hs_kernel_blocks_per_sm((int)(config->blockDimX * config->blockDimY * config->blockDimZ),
                                config->sharedMemBytes, func->attrs[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES]);
    if (per_sm > CLUSTER_BLOCKS_PER_SM)
        per_sm = CLUSTER_BLOCKS_PER_SM;
    double sms = info ? info->sm_count * (cluster > 2 ? CLUSTER_USABLE_SHARE : 1.0) : 0;
    *numClusters = (int)(per_sm * sms / cluster + 1e-9);
    return hs_driver_leave(CUDA_SUCCESS);
}

/* ---- tensor maps (TMA descriptors): checked, left blank ---- */

CUresult cuTensorMapEncodeTiled(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
                                void *globalAddress, const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
                                const cuuint32_t *boxDim, const cuuint32_t *elementStrides,
                                CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill)
{
    (void)interleave, (void)swizzle, (void)l2Promotion, (void)oobFill;
    hs_client_enter();
    int ok = tensorMap && globalAddress && globalDim && boxDim && elementStrides && tensorRank >= 1 &&
             tensorRank <= 5 && (tensorRank == 1 || globalStrides) && (unsigned)tensorDataType < 16 &&
             ((uintptr_t)globalAddress % 16) == 0;
    for (cuuint32_t i = 0; ok && i < tensorRank; i++)
        ok = globalDim[i] >= 1 && boxDim[i] >= 1 && boxDim[i] <= 256 && elementStrides[i] >= 1 &&
             elementStrides[i] <= 8 && (i == 0 || globalStrides[i - 1] % 16 == 0);
    if (ok)
        memset(tensorMap, 0, sizeof *tensorMap);
    return hs_driver_leave(ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}
