/*
 * What the generated stubs of libcudart.so.13 expand to (gen_api_stubs.sh):
 * a runtime function hysim does not implement says so once, by name, and
 * returns cudaErrorNotSupported. It deliberately does not include
 * cuda_runtime_api.h: a stub takes no parameters (the caller's arguments are
 * ignored, which the x86-64 calling convention allows) and would clash with
 * the header's prototype.
 */
#ifndef HYSIM_INTERPOSE_CUDART_NOT_SUPPORTED_H
#define HYSIM_INTERPOSE_CUDART_NOT_SUPPORTED_H

#include <driver_types.h>

/*
 * Prints "hysim: NAME is not supported yet" the first time (*said), records
 * cudaErrorNotSupported as the thread's last error and returns it.
 */
__attribute__((visibility("hidden"))) cudaError_t hs_rt_not_supported(const char *name, _Atomic int *said);

#define HS_NOT_SUPPORTED(name)                     \
    cudaError_t name(void);                        \
    cudaError_t name(void)                         \
    {                                              \
        static _Atomic int said_;                  \
        return hs_rt_not_supported(#name, &said_); \
    }

#endif
