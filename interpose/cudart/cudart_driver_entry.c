/*
 * cudaGetDriverEntryPoint and cudaGetDriverEntryPointByVersion: the driver's
 * functions by name, from hysim's libcuda.so.1 (beside this library on the
 * path hysim run sets): hysim's own driver calls, and for every other
 * function cuda.h declares its "not supported yet" stub. A real driver has
 * every function, and programs that fetch a list of them up front (PyTorch's
 * c10 asserts each is found) would stop at a missing one; with the stub they
 * run until they call it, which then names itself. A name no driver has is
 * not found, as on a real one (bench/real/data/driver_contexts_h100.txt).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "cudart_internal.h"
#include "driver_symbols.h"

cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr, unsigned long long flags,
                                         enum cudaDriverEntryPointQueryResult *driverStatus);
cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                                                  unsigned long long flags,
                                                  enum cudaDriverEntryPointQueryResult *driverStatus);

static void *g_driver;
static pthread_once_t g_driver_once = PTHREAD_ONCE_INIT;

static void open_driver(void)
{
    g_driver = dlopen("libcuda.so.1", RTLD_LAZY);
    if (!g_driver)
        fprintf(stderr, "hysim: cudaGetDriverEntryPoint: cannot load libcuda.so.1: %s\n", dlerror());
}

/* hysim's libcuda.so.1, loaded once and kept. */
static void *driver_library(void)
{
    pthread_once(&g_driver_once, open_driver);
    return g_driver;
}

static cudaError_t lookup(const char *symbol, void **funcPtr, unsigned cuda_version, unsigned long long flags,
                          enum cudaDriverEntryPointQueryResult *status, int per_thread_default)
{
    if (!symbol || !funcPtr ||
        (flags != cudaEnableDefault && flags != cudaEnableLegacyStream && flags != cudaEnablePerThreadDefaultStream))
        return cudaErrorInvalidValue;
    cudaError_t e = hs_client_start(); /* the runtime initializes the driver, as a real one calls cuInit */
    if (e != cudaSuccess)
        return e;
    int per_thread = flags == cudaEnablePerThreadDefaultStream || (flags == cudaEnableDefault && per_thread_default);
    *funcPtr = hs_driver_symbol(driver_library(), symbol, cuda_version, per_thread);
    if (status)
        *status = *funcPtr ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
    return cudaSuccess;
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                                             unsigned long long flags,
                                             enum cudaDriverEntryPointQueryResult *driverStatus)
{
    RT_ENTER();
    RT_RETURN(lookup(symbol, funcPtr, cudaVersion, flags, driverStatus, 0));
}

cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
                                    enum cudaDriverEntryPointQueryResult *driverStatus)
{
    RT_ENTER();
    RT_RETURN(lookup(symbol, funcPtr, CUDART_VERSION, flags, driverStatus, 0));
}

cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                                                  unsigned long long flags,
                                                  enum cudaDriverEntryPointQueryResult *driverStatus)
{
    RT_ENTER();
    RT_RETURN(lookup(symbol, funcPtr, cudaVersion, flags, driverStatus, 1));
}

cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr, unsigned long long flags,
                                         enum cudaDriverEntryPointQueryResult *driverStatus)
{
    RT_ENTER();
    RT_RETURN(lookup(symbol, funcPtr, CUDART_VERSION, flags, driverStatus, 1));
}
