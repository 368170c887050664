/*
 * Device variables (__device__ and __constant__): nvcc registers each at
 * load time (__cudaRegisterVar, crt/host_runtime.h); the program reaches
 * them by the address of their host shadow (cudaMemcpyToSymbol,
 * cudaGetSymbolAddress, ...). Each gets its own allocation of the device
 * memory on each device, made when first used there, so it counts against
 * the device's capacity as on a GPU. Copies to and from them are Copy ops
 * like any other. __managed__ variables would need host memory that
 * follows the device; they are refused.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "cudart_internal.h"
#include "internal.h"

void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress, const char *deviceName, int ext,
                       size_t size, int constant, int global);
void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress, char *deviceAddress,
                              const char *deviceName, int ext, size_t size, int constant, int global);
cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src, size_t count, size_t offset,
                                    enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count, size_t offset,
                                      enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src, size_t count, size_t offset,
                                         enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol, size_t count, size_t offset,
                                           enum cudaMemcpyKind kind, cudaStream_t stream);

typedef struct device_var {
    size_t size;
    int ndev;  /* entries in on: the process's device count, known at first use */
    void **on; /* its memory on each device, NULL until first used there */
} device_var;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static hs_ptrmap g_vars; /* host shadow → device_var * */

/* Registration runs before main: it never connects nor enters an intercepted call. */
void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress, const char *deviceName, int ext,
                       size_t size, int constant, int global)
{
    (void)fatCubinHandle, (void)deviceAddress, (void)deviceName, (void)ext, (void)constant, (void)global;
    device_var *v = calloc(1, sizeof *v);
    if (!v) {
        fprintf(stderr, "hysim: out of host memory\n");
        abort();
    }
    v->size = size;
    pthread_mutex_lock(&g_lock);
    device_var *old = (device_var *)hs_ptrmap_get(&g_vars, (uintptr_t)hostVar); /* a module loaded again */
    if (old)
        free(old->on);
    free(old);
    hs_ptrmap_put(&g_vars, (uintptr_t)hostVar, (uintptr_t)v);
    pthread_mutex_unlock(&g_lock);
}

void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress, char *deviceAddress,
                              const char *deviceName, int ext, size_t size, int constant, int global)
{
    (void)fatCubinHandle, (void)hostVarPtrAddress, (void)deviceAddress, (void)ext;
    (void)size, (void)constant, (void)global;
    static _Atomic int said;
    if (!atomic_exchange(&said, 1))
        fprintf(stderr, "hysim: __managed__ variables are not supported yet (%s)\n", deviceName ? deviceName : "?");
}

/* v's per-device table, sized by the process's device count on first use; NULL if out of memory. */
static void **device_table(device_var *v, int ndev)
{
    if (!v->on && (v->on = calloc((size_t)ndev, sizeof *v->on)) != NULL)
        v->ndev = ndev;
    return v->on;
}

/* The variable's size and (ptr not NULL) its memory on the current device, allocated on first use. */
static cudaError_t resolve(const void *symbol, void **ptr, size_t *size)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    int dev = hs_client_get_device(), ndev = hs_client_gpu_info()->device_count;
    if (dev < 0 || dev >= ndev)
        return cudaErrorInvalidDevice;
    pthread_mutex_lock(&g_lock);
    device_var *v = (device_var *)hs_ptrmap_get(&g_vars, (uintptr_t)symbol);
    if (!v)
        e = cudaErrorInvalidSymbol;
    else if (ptr && !device_table(v, ndev))
        e = cudaErrorMemoryAllocation;
    else if (ptr && !v->on[dev])
        e = hs_client_malloc_on(dev, v->size ? v->size : 1, &v->on[dev]);
    if (e == cudaSuccess) {
        if (ptr)
            *ptr = v->on[dev];
        *size = v->size;
    }
    pthread_mutex_unlock(&g_lock);
    return e;
}

void hs_rt_symbols_reset_device(int device)
{
    if (device < 0)
        return;
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < g_vars.cap; i++) {
        device_var *v = g_vars.keys[i] ? (device_var *)g_vars.vals[i] : NULL;
        if (v && v->on && device < v->ndev)
            v->on[device] = NULL; /* cudaDeviceReset freed them */
    }
    pthread_mutex_unlock(&g_lock);
}

cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol)
{
    RT_ENTER();
    size_t size;
    RT_RETURN(devPtr ? resolve(symbol, devPtr, &size) : cudaErrorInvalidValue);
}

cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol)
{
    RT_ENTER();
    RT_RETURN(size ? resolve(symbol, NULL, size) : cudaErrorInvalidValue);
}

/* to_symbol: host or device memory → the variable; otherwise the variable → host or device memory. */
static cudaError_t copy_symbol(int to_symbol, void *other, const void *symbol, size_t count, size_t offset,
                               enum cudaMemcpyKind kind, cudaStream_t stream, int synchronous)
{
    int ok_kind = kind == cudaMemcpyDeviceToDevice || kind == cudaMemcpyDefault ||
                  kind == (to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost);
    if (!ok_kind)
        return cudaErrorInvalidMemcpyDirection;
    void *var;
    size_t size;
    cudaError_t e = resolve(symbol, &var, &size);
    if (e != cudaSuccess)
        return e;
    if (offset > size || count > size - offset)
        return cudaErrorInvalidValue;
    char *at = (char *)var + offset;
    return to_symbol ? hs_client_memcpy(at, other, count, (int)kind, stream, synchronous)
                     : hs_client_memcpy(other, at, count, (int)kind, stream, synchronous);
}

cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
                               enum cudaMemcpyKind kind)
{
    RT_ENTER();
    RT_RETURN(copy_symbol(1, (void *)src, symbol, count, offset, kind, NULL, 1));
}

cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset, enum cudaMemcpyKind kind)
{
    RT_ENTER();
    RT_RETURN(copy_symbol(0, dst, symbol, count, offset, kind, NULL, 1));
}

cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, size_t offset,
                                    enum cudaMemcpyKind kind, cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(copy_symbol(1, (void *)src, symbol, count, offset, kind, stream, 0));
}

cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset,
                                      enum cudaMemcpyKind kind, cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(copy_symbol(0, dst, symbol, count, offset, kind, stream, 0));
}

/* --default-stream per-thread */

cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src, size_t count, size_t offset,
                                    enum cudaMemcpyKind kind)
{
    RT_ENTER();
    RT_RETURN(copy_symbol(1, (void *)src, symbol, count, offset, kind, cudaStreamPerThread, 1));
}

cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count, size_t offset,
                                      enum cudaMemcpyKind kind)
{
    RT_ENTER();
    RT_RETURN(copy_symbol(0, dst, symbol, count, offset, kind, cudaStreamPerThread, 1));
}

cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src, size_t count, size_t offset,
                                         enum cudaMemcpyKind kind, cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(copy_symbol(1, (void *)src, symbol, count, offset, kind, stream ? stream : cudaStreamPerThread, 0));
}

cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol, size_t count, size_t offset,
                                           enum cudaMemcpyKind kind, cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(copy_symbol(0, dst, symbol, count, offset, kind, stream ? stream : cudaStreamPerThread, 0));
}
