/*
 * What the generated stubs of libcuda.so.1 expand to (gen_api_stubs.sh): a
 * driver function hysim does not implement says once, by name and with the
 * library or program that called it, that it is not supported yet, and
 * returns CUDA_ERROR_NOT_SUPPORTED. It deliberately does not include cuda.h:
 * a stub takes no parameters (the caller's arguments are ignored, which the
 * x86-64 calling convention allows) and would clash with the header's
 * prototype; CUresult is an int-sized enum. The stubs' code lies in a
 * section of its own, whose bounds the linker marks (__start_/__stop_), so
 * that cuGetProcAddress can tell a stub from a call hysim implements.
 */
#ifndef HYSIM_INTERPOSE_CUDA_NOT_SUPPORTED_H
#define HYSIM_INTERPOSE_CUDA_NOT_SUPPORTED_H

/* Prints the message the first time (*said); returns CUDA_ERROR_NOT_SUPPORTED (cuda_driver.c). */
__attribute__((visibility("hidden"))) int hs_driver_not_supported(const char *name, const void *caller,
                                                                  _Atomic int *said);

#define HS_NOT_SUPPORTED(name)                                                      \
    int name(void) __attribute__((section("hs_driver_stubs")));                     \
    int name(void)                                                                  \
    {                                                                               \
        static _Atomic int said_;                                                   \
        return hs_driver_not_supported(#name, __builtin_return_address(0), &said_); \
    }

#endif
