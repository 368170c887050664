/*
 * What the files of hysim's libcuda.so.1 share (cuda_driver.c: devices,
 * errors and entry points; cuda_contexts.c: primary and current contexts).
 */
#ifndef HYSIM_INTERPOSE_CUDA_DRIVER_H
#define HYSIM_INTERPOSE_CUDA_DRIVER_H

#include <cuda.h>

#include "client.h"

#define HS_DRIVER_HIDDEN __attribute__((visibility("hidden")))

/* The driver's code for a runtime error. */
HS_DRIVER_HIDDEN CUresult hs_driver_from_runtime(cudaError_t e);
/* Ends a driver call begun with hs_client_enter: returns r. */
HS_DRIVER_HIDDEN CUresult hs_driver_leave(CUresult r);
/* CUDA_SUCCESS if the driver is initialized (cuInit, or the runtime started) and dev is one of its
 * devices, which *info then describes. */
HS_DRIVER_HIDDEN CUresult hs_driver_check_device(CUdevice dev, const hs_gpu_info **info);

/* Driver entry points of cuda_contexts.c by name (cuda.h's, unversioned, and "_v2" names), or NULL. */
HS_DRIVER_HIDDEN void *hs_driver_context_entry(const char *symbol, int cuda_version);

#endif
