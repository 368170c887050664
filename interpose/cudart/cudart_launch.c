/*
 * The hooks nvcc 13 emits into every program (crt/host_runtime.h,
 * crt/device_functions.h): fat binary and kernel registration at load time,
 * the <<<...>>> call configuration, and launches. A launch becomes a Kernel
 * op naming the device function (its mangled name) with the grid, block and
 * dynamic shared memory. cudaLaunchKernelExC (what the C++ template
 * cudaLaunchKernelEx calls) and cudaLaunchCooperativeKernel are launches like
 * cudaLaunchKernel: the same op, host cost and stream capture.
 *
 * Registration and the launch plumbing around <<<...>>> (push/pop of the
 * configuration, __cudaGetKernel) are not calls of the program: they never
 * connect to hysimd and do not move the host clock. The launch itself does.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "cudart_internal.h"
#include "kernel_rules.h"

/* crt/host_runtime.h is C++ only; these are its declarations. */
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
void __cudaUnregisterFatBinary(void **fatCubinHandle);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize);
char __cudaInitModule(void **fatCubinHandle);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, struct CUstream_st *stream);
cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                               cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                    cudaStream_t stream);
cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                  cudaStream_t stream);
cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func, void **args);
cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                             size_t sharedMem, cudaStream_t stream);

/* ---- registration ---- */

/* A module's handle is the address of its fat binary pointer, as CUDA's is. */
void **__cudaRegisterFatBinary(void *fatCubin)
{
    void **handle = malloc(sizeof *handle);
    if (!handle)
        abort();
    *handle = fatCubin;
    return handle;
}

void __cudaRegisterFatBinaryEnd(void **fatCubinHandle) { (void)fatCubinHandle; }

void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
    hs_client_module_unregister(fatCubinHandle);
    free(fatCubinHandle);
}

void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize)
{
    (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
    hs_client_kernel_register(fatCubinHandle, hostFun, deviceName ? deviceName : deviceFun);
}

/* Managed variables' runtime initialisation: nothing to do, so it succeeded. */
char __cudaInitModule(void **fatCubinHandle)
{
    (void)fatCubinHandle;
    return 1;
}

/* ---- <<<grid, block, shared, stream>>> ---- */

#define CONFIG_DEPTH 16 /* launches nested in launch arguments */

static __thread struct {
    dim3 grid, block;
    size_t shared;
    cudaStream_t stream;
} t_config[CONFIG_DEPTH];
static __thread int t_config_depth;

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, struct CUstream_st *stream)
{
    if (t_config_depth == CONFIG_DEPTH)
        return 1;
    int i = t_config_depth++;
    t_config[i].grid = gridDim;
    t_config[i].block = blockDim;
    t_config[i].shared = sharedMem;
    t_config[i].stream = stream;
    return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream)
{
    if (t_config_depth == 0)
        return cudaErrorMissingConfiguration;
    int i = --t_config_depth;
    *gridDim = t_config[i].grid;
    *blockDim = t_config[i].block;
    *sharedMem = t_config[i].shared;
    *(cudaStream_t *)stream = t_config[i].stream;
    return cudaSuccess;
}

/* ---- launches ---- */

cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun)
{
    void *k = hs_client_kernel_find(hostFun);
    if (!kernel || !k)
        return cudaErrorInvalidDeviceFunction;
    *kernel = (cudaKernel_t)k;
    return cudaSuccess;
}

static cudaError_t launch(void *kernel, dim3 grid, dim3 block, size_t shared, cudaStream_t stream, void **args)
{
    const unsigned g[3] = {grid.x, grid.y, grid.z}, b[3] = {block.x, block.y, block.z};
    return hs_client_launch(kernel, g, b, shared, stream, args);
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                               cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(launch(kernel, gridDim, blockDim, sharedMem, stream, args));
}

/* Per-thread default stream compilation (--default-stream per-thread). */
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                    cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(launch(kernel, gridDim, blockDim, sharedMem, stream ? stream : cudaStreamPerThread, args));
}

/* A launch of the kernel whose host function is func. */
static cudaError_t launch_func(const void *func, dim3 grid, dim3 block, size_t shared, cudaStream_t stream, void **args)
{
    void *k = hs_client_kernel_find(func);
    return k ? launch(k, grid, block, shared, stream, args) : cudaErrorInvalidDeviceFunction;
}

cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                             cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(launch_func(func, gridDim, blockDim, sharedMem, stream, args));
}

cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                  cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(launch_func(func, gridDim, blockDim, sharedMem, stream ? stream : cudaStreamPerThread, args));
}

/* ---- cudaLaunchKernelExC and cooperative launches ---- */

/* One "not supported yet" line per refused attribute and process. */
static _Atomic int g_attr_said[HS_LAUNCH_ATTR_MAX + 1];

static cudaError_t check_attrs(const cudaLaunchAttribute *attrs, unsigned n)
{
    if (n && !attrs)
        return cudaErrorInvalidValue;
    for (unsigned i = 0; i < n; i++) {
        const char *name = NULL;
        switch (hs_kernel_launch_attr(attrs[i].id, &name)) { /* kernel_rules.c: which, and why */
        case HS_LAUNCH_ATTR_IGNORED: break;
        case HS_LAUNCH_ATTR_NOT_SUPPORTED:
            if (!atomic_exchange(&g_attr_said[attrs[i].id], 1))
                fprintf(stderr, "hysim: cudaLaunchKernelExC attribute %s is not supported yet\n", name);
            return cudaErrorNotSupported;
        case HS_LAUNCH_ATTR_UNKNOWN: return cudaErrorInvalidValue;
        }
    }
    return cudaSuccess;
}

/* cudaLaunchKernelExC on `stream` or, when the config names none, on `default_stream`. */
static cudaError_t launch_ex(const cudaLaunchConfig_t *config, const void *func, cudaStream_t default_stream,
                             void **args)
{
    if (!config)
        return cudaErrorInvalidValue;
    cudaError_t e = check_attrs(config->attrs, config->numAttrs);
    if (e != cudaSuccess)
        return e;
    return launch_func(func, config->gridDim, config->blockDim, config->dynamicSmemBytes,
                       config->stream ? config->stream : default_stream, args);
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args)
{
    RT_ENTER();
    RT_RETURN(launch_ex(config, func, NULL, args));
}

cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func, void **args)
{
    RT_ENTER();
    RT_RETURN(launch_ex(config, func, cudaStreamPerThread, args));
}

/* A cooperative grid is co-resident on the device, as every simulated grid is: timed as any launch. */
cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                        cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(launch_func(func, gridDim, blockDim, sharedMem, stream, args));
}

cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                             size_t sharedMem, cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(launch_func(func, gridDim, blockDim, sharedMem, stream ? stream : cudaStreamPerThread, args));
}
