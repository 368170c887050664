/*
 * What the files of hysim's libcuda.so.1 share (cuda_driver.c: devices,
 * errors and entry points; cuda_contexts.c: primary and current contexts;
 * cuda_modules.c: modules and functions; cuda_launch.c: launches and
 * occupancy; cuda_memory.c: memory, copies, memsets and pointer queries;
 * cuda_streams.c: streams, events and host functions).
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
/* CUDA_SUCCESS if the driver is initialized; current_context: and the thread has a current context,
 * which creating streams, events and memory needs (else CUDA_ERROR_INVALID_CONTEXT). */
HS_DRIVER_HIDDEN CUresult hs_driver_initialized(void);
HS_DRIVER_HIDDEN CUresult hs_driver_current_context(void);

/* cuda_contexts.c: a local device's primary context, and the device of a context hysim handed out (or -1). */
HS_DRIVER_HIDDEN CUcontext hs_driver_primary_context(int device);
HS_DRIVER_HIDDEN int hs_driver_context_device(CUcontext ctx);

/* cuda_modules.c: a module's function, also its kernel's key in the client's registry (the runtime's host
 * stub); cuda_launch.c launches it. */
#define HS_FUNCTION_MAGIC 0x68736662u /* "hsfb" */
#define HS_NFUNC_ATTRS    (CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE + 1)

struct CUfunc_st {
    unsigned magic;
    struct CUmod_st *module;
    char *name;
    void *kernel; /* hs_client_kernel_find(this) */
    int attrs[HS_NFUNC_ATTRS];
    struct CUfunc_st *next;
};

static inline int hs_driver_function_ok(CUfunction f) { return f && f->magic == HS_FUNCTION_MAGIC; }

#endif
