/*
 * Modules, functions and launches of the driver API: what a program that
 * builds its kernels at run time (NVRTC, Triton, CuPy) or loads cubins
 * itself does. No machine code runs, so a module's image is not read and a
 * function is whatever name the program asks for (a name the real module
 * lacks is not caught); a launch is the same Kernel op as the runtime's
 * (hs_client_launch), timed by that name's profile or the scenario's
 * default, on the stream given (CUstream and cudaStream_t are one handle).
 * Function attributes and occupancy follow kernel_rules.h, as the runtime's
 * do; pointer queries answer as cudaPointerGetAttributes does. CUDA 12's
 * libraries are modules (a CUlibrary is a CUmodule, a CUkernel a
 * CUfunction, as a launch may treat it); the JIT linker links nothing and
 * hands out an image that only hysim's cuModuleLoadData takes; a tensor map
 * (TMA descriptor) is checked and left blank, since no kernel reads it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_driver.h"
#include "kernel_rules.h"
#include "managed_memory.h"

#define MODULE_MAGIC 0x68736d64u   /* "hsmd" */
#define FUNCTION_MAGIC 0x68736662u /* "hsfb" */
#define NFUNC_ATTRS (CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE + 1)

struct CUmod_st {
    unsigned magic;
    struct CUfunc_st *functions;
};

/* A function is also its kernel's key in the client's registry (the runtime's host stub). */
struct CUfunc_st {
    unsigned magic;
    struct CUmod_st *module;
    char *name;
    void *kernel; /* hs_client_kernel_find(this) */
    int attrs[NFUNC_ATTRS];
    struct CUfunc_st *next;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* modules' function lists */

static int module_ok(CUmodule m) { return m && m->magic == MODULE_MAGIC; }
static int function_ok(CUfunction f) { return f && f->magic == FUNCTION_MAGIC; }

/* ---- modules ---- */

static CUresult new_module(CUmodule *module, const void *image) {
    CUresult r = hs_driver_initialized();
    if (r != CUDA_SUCCESS)
        return r;
    if (!module || !image)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUmod_st *m = calloc(1, sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    m->magic = MODULE_MAGIC;
    *module = m;
    return CUDA_SUCCESS;
}

CUresult cuModuleLoadData(CUmodule *module, const void *image) {
    hs_client_enter();
    return hs_driver_leave(new_module(module, image));
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions, CUjit_option *options,
                            void **optionValues) {
    (void)numOptions, (void)options, (void)optionValues; /* JIT options: no code is compiled */
    hs_client_enter();
    return hs_driver_leave(new_module(module, image));
}

CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin) {
    hs_client_enter();
    return hs_driver_leave(new_module(module, fatCubin));
}

/* The file must be there to be loaded; its contents are not read. */
CUresult cuModuleLoad(CUmodule *module, const char *fname) {
    hs_client_enter();
    FILE *f = fname ? fopen(fname, "rb") : NULL;
    if (f)
        fclose(f);
    return hs_driver_leave(!fname ? CUDA_ERROR_INVALID_VALUE : !f ? CUDA_ERROR_FILE_NOT_FOUND : new_module(module, fname));
}

CUresult cuModuleUnload(CUmodule hmod) {
    hs_client_enter();
    if (!module_ok(hmod))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    hs_client_module_unregister(hmod); /* its kernels, once the ops that name them are sent */
    pthread_mutex_lock(&g_lock);
    for (struct CUfunc_st *f = hmod->functions, *next; f; f = next) {
        next = f->next;
        f->magic = 0;
        free(f->name);
        free(f);
    }
    hmod->magic = 0;
    pthread_mutex_unlock(&g_lock);
    free(hmod);
    return hs_driver_leave(CUDA_SUCCESS);
}

/* The module's function of that name: the same handle each time it is asked for. */
CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name) {
    hs_client_enter();
    if (!hfunc || !name)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    if (!module_ok(hmod))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    pthread_mutex_lock(&g_lock);
    struct CUfunc_st *f = hmod->functions;
    while (f && strcmp(f->name, name) != 0)
        f = f->next;
    if (!f && (f = calloc(1, sizeof *f)) && !(f->name = strdup(name))) {
        free(f);
        f = NULL;
    }
    if (f && !f->magic) {
        f->magic = FUNCTION_MAGIC;
        f->module = hmod;
        f->attrs[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES] = HS_SHARED_PER_BLOCK_DEFAULT;
        f->attrs[CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT] = -1;
        hs_client_kernel_register(hmod, f, name);
        f->kernel = hs_client_kernel_find(f);
        f->next = hmod->functions;
        hmod->functions = f;
    }
    pthread_mutex_unlock(&g_lock);
    if (f)
        *hfunc = f;
    return hs_driver_leave(f ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY);
}

/* ---- libraries (CUDA 12): modules by another name ---- */

CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions, void **jitOptionsValues,
                           unsigned int numJitOptions, CUlibraryOption *libraryOptions, void **libraryOptionValues,
                           unsigned int numLibraryOptions) {
    (void)jitOptions, (void)jitOptionsValues, (void)numJitOptions;
    (void)libraryOptions, (void)libraryOptionValues, (void)numLibraryOptions;
    hs_client_enter();
    return hs_driver_leave(new_module((CUmodule *)library, code));
}

CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName, CUjit_option *jitOptions,
                               void **jitOptionsValues, unsigned int numJitOptions, CUlibraryOption *libraryOptions,
                               void **libraryOptionValues, unsigned int numLibraryOptions) {
    (void)jitOptions, (void)jitOptionsValues, (void)numJitOptions;
    (void)libraryOptions, (void)libraryOptionValues, (void)numLibraryOptions;
    return cuModuleLoad((CUmodule *)library, fileName);
}

CUresult cuLibraryUnload(CUlibrary library) { return cuModuleUnload((CUmodule)library); }

CUresult cuLibraryGetModule(CUmodule *pMod, CUlibrary library) {
    hs_client_enter();
    if (!pMod)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    if (!module_ok((CUmodule)library))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    *pMod = (CUmodule)library;
    return hs_driver_leave(CUDA_SUCCESS);
}

CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name) {
    return cuModuleGetFunction((CUfunction *)pKernel, (CUmodule)library, name);
}

CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel) {
    hs_client_enter();
    if (!pFunc)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    if (!function_ok((CUfunction)kernel))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    *pFunc = (CUfunction)kernel;
    return hs_driver_leave(CUDA_SUCCESS);
}

CUresult cuKernelGetName(const char **name, CUkernel hfunc) { return cuFuncGetName(name, (CUfunction)hfunc); }

/* A kernel's attributes are one set for every device here (as for a function). */
CUresult cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev) {
    const hs_gpu_info *info;
    CUresult r = hs_driver_check_device(dev, &info);
    return r != CUDA_SUCCESS ? r : cuFuncGetAttribute(pi, attrib, (CUfunction)kernel);
}

CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev) {
    const hs_gpu_info *info;
    CUresult r = hs_driver_check_device(dev, &info);
    return r != CUDA_SUCCESS ? r : cuFuncSetAttribute((CUfunction)kernel, attrib, val);
}

/* ---- the JIT linker: links nothing ---- */

#define LINK_MAGIC 0x68736c6bu /* "hslk" */

struct CUlinkState_st {
    unsigned magic;
    unsigned inputs;
};

static const char g_linked_image[] = "hysim: a linked image (no code; only hysim's cuModuleLoadData reads it)";

CUresult cuLinkCreate(unsigned int numOptions, CUjit_option *options, void **optionValues, CUlinkState *stateOut) {
    (void)numOptions, (void)options, (void)optionValues;
    hs_client_enter();
    CUresult r = hs_driver_initialized();
    struct CUlinkState_st *st = NULL;
    if (r == CUDA_SUCCESS && !stateOut)
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS && !(st = calloc(1, sizeof *st)))
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS) {
        st->magic = LINK_MAGIC;
        *stateOut = st;
    }
    return hs_driver_leave(r);
}

static int link_ok(CUlinkState st) { return st && st->magic == LINK_MAGIC; }

CUresult cuLinkAddData(CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,
                       unsigned int numOptions, CUjit_option *options, void **optionValues) {
    (void)name, (void)numOptions, (void)options, (void)optionValues;
    hs_client_enter();
    if (!link_ok(state))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    if (!data || !size || (unsigned)type >= CU_JIT_NUM_INPUT_TYPES)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    state->inputs++;
    return hs_driver_leave(CUDA_SUCCESS);
}

CUresult cuLinkAddFile(CUlinkState state, CUjitInputType type, const char *path, unsigned int numOptions,
                       CUjit_option *options, void **optionValues) {
    (void)numOptions, (void)options, (void)optionValues;
    hs_client_enter();
    if (!link_ok(state))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    if (!path || (unsigned)type >= CU_JIT_NUM_INPUT_TYPES)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    FILE *f = fopen(path, "rb");
    if (!f)
        return hs_driver_leave(CUDA_ERROR_FILE_NOT_FOUND);
    fclose(f);
    state->inputs++;
    return hs_driver_leave(CUDA_SUCCESS);
}

/* The image lives as long as the process (a real one, as long as the link state). */
CUresult cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut) {
    hs_client_enter();
    if (!link_ok(state))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    if (!cubinOut || !sizeOut || !state->inputs)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    *cubinOut = (void *)g_linked_image;
    *sizeOut = sizeof g_linked_image;
    return hs_driver_leave(CUDA_SUCCESS);
}

CUresult cuLinkDestroy(CUlinkState state) {
    hs_client_enter();
    if (!link_ok(state))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    state->magic = 0;
    free(state);
    return hs_driver_leave(CUDA_SUCCESS);
}

/* ---- launches ---- */

static CUresult launch(CUfunction f, const unsigned grid[3], const unsigned block[3], unsigned shared,
                       CUstream stream) {
    if (!function_ok(f))
        return CUDA_ERROR_INVALID_HANDLE;
    if (shared > (unsigned)f->attrs[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES])
        return CUDA_ERROR_INVALID_VALUE;
    return hs_driver_from_runtime(hs_client_launch(f->kernel, grid, block, shared, (cudaStream_t)stream));
}

static CUresult launch_kernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                              unsigned bz, unsigned shared, CUstream stream) {
    const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    return launch(f, grid, block, shared, stream);
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                        unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                        unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra) {
    (void)kernelParams, (void)extra; /* arguments of code that does not run */
    hs_client_enter();
    return hs_driver_leave(
        launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream));
}

/* A cooperative grid is co-resident on the device, as every simulated grid is: timed as any launch. */
CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                   unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                   unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                   void **kernelParams) {
    (void)kernelParams;
    hs_client_enter();
    return hs_driver_leave(
        launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream));
}

/* One "not supported yet" line per refused launch attribute and process. */
static _Atomic int g_attr_said[HS_LAUNCH_ATTR_MAX + 1];

static CUresult launch_ex(const CUlaunchConfig *config, CUfunction f, CUstream default_stream) {
    if (!config || (config->numAttrs && !config->attrs))
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < config->numAttrs; i++) {
        const char *name = NULL;
        switch (hs_kernel_launch_attr((int)config->attrs[i].id, &name)) { /* kernel_rules.c: which, and why */
        case HS_LAUNCH_ATTR_IGNORED:
            break;
        case HS_LAUNCH_ATTR_NOT_SUPPORTED:
            if (!atomic_exchange(&g_attr_said[config->attrs[i].id], 1))
                fprintf(stderr, "hysim: cuLaunchKernelEx attribute %d (%s) is not supported yet\n",
                        (int)config->attrs[i].id, name);
            return CUDA_ERROR_NOT_SUPPORTED;
        case HS_LAUNCH_ATTR_UNKNOWN:
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return launch_kernel(f, config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX,
                         config->blockDimY, config->blockDimZ, config->sharedMemBytes,
                         config->hStream ? config->hStream : default_stream);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra) {
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
                             unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra) {
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
                                        void **kernelParams) {
    (void)kernelParams;
    hs_client_enter();
    return hs_driver_leave(launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                                         sharedMemBytes, hStream ? hStream : CU_STREAM_PER_THREAD));
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra) {
    (void)kernelParams, (void)extra;
    hs_client_enter();
    return hs_driver_leave(launch_ex(config, f, CU_STREAM_PER_THREAD));
}

/* ---- function attributes and occupancy ---- */

CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc) {
    hs_client_enter();
    if (!pi || (unsigned)attrib >= NFUNC_ATTRS)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    if (!function_ok(hfunc))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    const hs_gpu_info *info = hs_client_gpu_info();
    switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = HS_MAX_THREADS_PER_BLOCK; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = HS_ASSUMED_REGS; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = info ? info->cc_major * 10 + info->cc_minor : 0; break;
    default: *pi = hfunc->attrs[attrib]; break; /* static shared, constant and local memory: none */
    }
    return hs_driver_leave(CUDA_SUCCESS);
}

CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value) {
    hs_client_enter();
    if (!function_ok(hfunc))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    if ((unsigned)attrib >= NFUNC_ATTRS || !hs_kernel_attr_value_ok(attrib, value))
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    hfunc->attrs[attrib] = value;
    return hs_driver_leave(CUDA_SUCCESS);
}

/* A function's cache and bank preferences: checked, and without effect on its time. */
CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config) {
    hs_client_enter();
    if (!function_ok(hfunc))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    return hs_driver_leave((unsigned)config > CU_FUNC_CACHE_PREFER_EQUAL ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS);
}

CUresult cuFuncSetSharedMemConfig(CUfunction hfunc, CUsharedconfig config) {
    hs_client_enter();
    if (!function_ok(hfunc))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    return hs_driver_leave((unsigned)config > CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE ? CUDA_ERROR_INVALID_VALUE
                                                                                     : CUDA_SUCCESS);
}

CUresult cuFuncGetName(const char **name, CUfunction hfunc) {
    hs_client_enter();
    if (!name)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    if (!function_ok(hfunc))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    *name = hfunc->name;
    return hs_driver_leave(CUDA_SUCCESS);
}

CUresult cuFuncGetModule(CUmodule *hmod, CUfunction hfunc) {
    hs_client_enter();
    if (!hmod)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    if (!function_ok(hfunc))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    *hmod = hfunc->module;
    return hs_driver_leave(CUDA_SUCCESS);
}

static CUresult occupancy(int *numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize, unsigned flags) {
    if (!numBlocks || blockSize <= 0 || (flags & ~(unsigned)CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE))
        return CUDA_ERROR_INVALID_VALUE;
    if (!function_ok(func))
        return CUDA_ERROR_INVALID_HANDLE;
    *numBlocks = hs_kernel_blocks_per_sm(blockSize, dynamicSMemSize,
                                         func->attrs[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES]);
    return CUDA_SUCCESS;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func, int blockSize,
                                                     size_t dynamicSMemSize) {
    hs_client_enter();
    return hs_driver_leave(occupancy(numBlocks, func, blockSize, dynamicSMemSize, 0));
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, CUfunction func, int blockSize,
                                                              size_t dynamicSMemSize, unsigned int flags) {
    hs_client_enter();
    return hs_driver_leave(occupancy(numBlocks, func, blockSize, dynamicSMemSize, flags));
}

/* The block size (a multiple of a warp, at most blockSizeLimit) that keeps the most threads resident per SM;
 * the grid that fills the GPU with it. */
CUresult cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, CUfunction func,
                                          CUoccupancyB2DSize blockSizeToDynamicSMemSize, size_t dynamicSMemSize,
                                          int blockSizeLimit) {
    hs_client_enter();
    if (!minGridSize || !blockSize || blockSizeLimit < 0)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    if (!function_ok(func))
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
#define CLUSTER_USABLE_SHARE (124.0 / 132.0)

CUresult cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func, const CUlaunchConfig *config) {
    hs_client_enter();
    if (!numClusters || !config)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    if (!function_ok(func))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    unsigned cluster = 1;
    for (unsigned i = 0; i < config->numAttrs; i++)
        if (config->attrs && config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
            cluster = config->attrs[i].value.clusterDim.x * config->attrs[i].value.clusterDim.y *
                      config->attrs[i].value.clusterDim.z;
    if (!cluster || cluster > 16 || config->gridDimX * config->gridDimY * config->gridDimZ % cluster)
        return hs_driver_leave(CUDA_ERROR_INVALID_CLUSTER_SIZE);
    const hs_gpu_info *info = hs_client_gpu_info();
    int per_sm = hs_kernel_blocks_per_sm((int)(config->blockDimX * config->blockDimY * config->blockDimZ),
                                         config->sharedMemBytes,
                                         func->attrs[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES]);
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
                                CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill) {
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

/* ---- the current context's work, and pointers ---- */

/* CUDA 13's: the context's device, or the current context's when ctx is NULL, runs out its work. */
CUresult cuCtxSynchronize_v2(CUcontext ctx) {
    hs_client_enter();
    CUresult r = hs_driver_initialized();
    int dev = ctx ? hs_driver_context_device(ctx) : hs_client_ctx_current();
    if (r == CUDA_SUCCESS && dev < 0)
        r = CUDA_ERROR_INVALID_CONTEXT;
    if (r == CUDA_SUCCESS) /* made current for the while: hs_client_device_synchronize waits for its device */
        r = hs_driver_from_runtime(hs_client_ctx_push(dev));
    if (r == CUDA_SUCCESS) {
        r = hs_driver_from_runtime(hs_client_device_synchronize());
        hs_client_ctx_pop();
    }
    return hs_driver_leave(r);
}

CUresult cuCtxSynchronize(void) { return cuCtxSynchronize_v2(NULL); }

static _Atomic int g_pointer_said[CU_POINTER_ATTRIBUTE_MAPPED + 1];

/* What cudaPointerGetAttributes reports of the memory, one attribute at a time; pointers hysim did not
 * hand out or register are CUDA_ERROR_INVALID_VALUE, as on a real driver. */
CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr) {
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
