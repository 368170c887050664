/*
 * The hooks nvcc 13 emits into every program (crt/host_runtime.h,
 * crt/device_functions.h): fat binary and kernel registration at load time,
 * the <<<...>>> call configuration, and launches. A launch becomes a Kernel
 * op naming the device function (its mangled name) with the grid, block and
 * dynamic shared memory.
 *
 * Registration and the launch plumbing around <<<...>>> (push/pop of the
 * configuration, __cudaGetKernel) are not calls of the program: they never
 * connect to hysimd and do not move the host clock. The launch itself does.
 */
#include <stdlib.h>

#include "cudart_internal.h"

/* crt/host_runtime.h is C++ only; these are its declarations. */
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
void __cudaUnregisterFatBinary(void **fatCubinHandle);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                            const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
                            dim3 *bDim, dim3 *gDim, int *wSize);
char __cudaInitModule(void **fatCubinHandle);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                     struct CUstream_st *stream);
cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
                                       void *stream);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                               size_t sharedMem, cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                    size_t sharedMem, cudaStream_t stream);
cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                  size_t sharedMem, cudaStream_t stream);

/* ---- registration ---- */

/* A module's handle is the address of its fat binary pointer, as CUDA's is. */
void **__cudaRegisterFatBinary(void *fatCubin) {
    void **handle = malloc(sizeof *handle);
    if (!handle)
        abort();
    *handle = fatCubin;
    return handle;
}

void __cudaRegisterFatBinaryEnd(void **fatCubinHandle) { (void)fatCubinHandle; }

void __cudaUnregisterFatBinary(void **fatCubinHandle) {
    hs_client_module_unregister(fatCubinHandle);
    free(fatCubinHandle);
}

void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                            const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
                            dim3 *bDim, dim3 *gDim, int *wSize) {
    (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
    hs_client_kernel_register(fatCubinHandle, hostFun, deviceName ? deviceName : deviceFun);
}

/* Managed variables' runtime initialisation: nothing to do, so it succeeded. */
char __cudaInitModule(void **fatCubinHandle) {
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

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                     struct CUstream_st *stream) {
    if (t_config_depth == CONFIG_DEPTH)
        return 1;
    int i = t_config_depth++;
    t_config[i].grid = gridDim;
    t_config[i].block = blockDim;
    t_config[i].shared = sharedMem;
    t_config[i].stream = stream;
    return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
                                       void *stream) {
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

cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun) {
    void *k = hs_client_kernel_find(hostFun);
    if (!kernel || !k)
        return cudaErrorInvalidDeviceFunction;
    *kernel = (cudaKernel_t)k;
    return cudaSuccess;
}

static cudaError_t launch(void *kernel, dim3 grid, dim3 block, size_t shared, cudaStream_t stream) {
    const unsigned g[3] = {grid.x, grid.y, grid.z}, b[3] = {block.x, block.y, block.z};
    return hs_client_launch(kernel, g, b, shared, stream);
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                               size_t sharedMem, cudaStream_t stream) {
    (void)args;
    RT_ENTER();
    RT_RETURN(launch(kernel, gridDim, blockDim, sharedMem, stream));
}

/* Per-thread default stream compilation (--default-stream per-thread). */
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                    size_t sharedMem, cudaStream_t stream) {
    (void)args;
    RT_ENTER();
    RT_RETURN(launch(kernel, gridDim, blockDim, sharedMem, stream ? stream : cudaStreamPerThread));
}

cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                             size_t sharedMem, cudaStream_t stream) {
    (void)args;
    RT_ENTER();
    void *k = hs_client_kernel_find(func);
    RT_RETURN(k ? launch(k, gridDim, blockDim, sharedMem, stream) : cudaErrorInvalidDeviceFunction);
}

cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                  size_t sharedMem, cudaStream_t stream) {
    (void)args;
    RT_ENTER();
    void *k = hs_client_kernel_find(func);
    RT_RETURN(k ? launch(k, gridDim, blockDim, sharedMem, stream ? stream : cudaStreamPerThread)
                : cudaErrorInvalidDeviceFunction);
}
