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
#include <string.h>

#include "cudart_internal.h"

cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr, unsigned long long flags,
                                         enum cudaDriverEntryPointQueryResult *driverStatus);
cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                                                  unsigned long long flags,
                                                  enum cudaDriverEntryPointQueryResult *driverStatus);

static void *g_driver;
static pthread_once_t g_driver_once = PTHREAD_ONCE_INIT;

static void open_driver(void) {
    g_driver = dlopen("libcuda.so.1", RTLD_LAZY);
    if (!g_driver)
        fprintf(stderr, "hysim: cudaGetDriverEntryPoint: cannot load libcuda.so.1: %s\n", dlerror());
}

/* hysim's libcuda.so.1, loaded once and kept. */
static void *driver_library(void) {
    pthread_once(&g_driver_once, open_driver);
    return g_driver;
}

/* The first of the symbol's names, newest version first (cuda.h's _v2 ... _v4), that the driver exports. */
static void *newest(void *lib, const char *symbol, const char *thread_suffix) {
    static const char *const versions[] = {"_v4", "_v3", "_v2", ""};
    char name[256];
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        snprintf(name, sizeof name, "%s%s%s", symbol, versions[i], thread_suffix);
        void *fn = dlsym(lib, name);
        if (fn)
            return fn;
    }
    return NULL;
}

/*
 * symbol's entry point for a program of CUDA version cuda_version: the newest
 * version of the function, except where a newer one changed its arguments
 * after the version asked for (cuGetProcAddress in 12.0, cuCtxGetDevice in
 * 13.0); per_thread: the per-thread default stream's variant where one exists.
 */
static void *entry_point(const char *symbol, unsigned cuda_version, int per_thread) {
    void *lib = driver_library();
    if (!lib || strncmp(symbol, "cu", 2) != 0 || strlen(symbol) > 200)
        return NULL;
    if ((strcmp(symbol, "cuGetProcAddress") == 0 && cuda_version < 12000) ||
        (strcmp(symbol, "cuCtxGetDevice") == 0 && cuda_version < 13000))
        return dlsym(lib, symbol);
    void *fn = per_thread ? newest(lib, symbol, "_ptsz") : NULL;
    if (!fn && per_thread)
        fn = newest(lib, symbol, "_ptds");
    return fn ? fn : newest(lib, symbol, "");
}

static cudaError_t lookup(const char *symbol, void **funcPtr, unsigned cuda_version, unsigned long long flags,
                          enum cudaDriverEntryPointQueryResult *status, int per_thread_default) {
    if (!symbol || !funcPtr ||
        (flags != cudaEnableDefault && flags != cudaEnableLegacyStream && flags != cudaEnablePerThreadDefaultStream))
        return cudaErrorInvalidValue;
    cudaError_t e = hs_client_start(); /* the runtime initializes the driver, as a real one calls cuInit */
    if (e != cudaSuccess)
        return e;
    int per_thread = flags == cudaEnablePerThreadDefaultStream || (flags == cudaEnableDefault && per_thread_default);
    *funcPtr = entry_point(symbol, cuda_version, per_thread);
    if (status)
        *status = *funcPtr ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
    return cudaSuccess;
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                                             unsigned long long flags,
                                             enum cudaDriverEntryPointQueryResult *driverStatus) {
    RT_ENTER();
    RT_RETURN(lookup(symbol, funcPtr, cudaVersion, flags, driverStatus, 0));
}

cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
                                    enum cudaDriverEntryPointQueryResult *driverStatus) {
    RT_ENTER();
    RT_RETURN(lookup(symbol, funcPtr, CUDART_VERSION, flags, driverStatus, 0));
}

cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                                                  unsigned long long flags,
                                                  enum cudaDriverEntryPointQueryResult *driverStatus) {
    RT_ENTER();
    RT_RETURN(lookup(symbol, funcPtr, cudaVersion, flags, driverStatus, 1));
}

cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr, unsigned long long flags,
                                         enum cudaDriverEntryPointQueryResult *driverStatus) {
    RT_ENTER();
    RT_RETURN(lookup(symbol, funcPtr, CUDART_VERSION, flags, driverStatus, 1));
}
