/*
 * A driver function's entry point by name, as cuGetProcAddress and
 * cudaGetDriverEntryPoint look it up (each library its own copy of the
 * object): cuda.h names a function without its version suffix, and the
 * driver exports each version ("cuMemAlloc_v2"); a caller of CUDA version
 * V gets the newest version, except where a newer one changed the arguments
 * after V (cuGetProcAddress in 12.0, cuCtxGetDevice and cuCtxSynchronize in 13.0).
 */
#ifndef HYSIM_INTERPOSE_DRIVER_SYMBOLS_H
#define HYSIM_INTERPOSE_DRIVER_SYMBOLS_H

/* symbol's function in the library lib (a dlopen handle), or NULL; per_thread: the per-thread default
 * stream's variant ("_ptsz", "_ptds") where there is one. */
__attribute__((visibility("hidden"))) void *hs_driver_symbol(void *lib, const char *symbol, unsigned cuda_version,
                                                             int per_thread);

#endif
