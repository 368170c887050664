/*
 * The generated stubs of libcudnn.so.9 (gen_symbol_stubs.sh): a cuDNN
 * function hysim does not implement says once that it is not supported yet
 * and returns CUDNN_STATUS_NOT_SUPPORTED. It does not include cudnn.h: a stub
 * takes no parameters (the caller's are ignored, which the x86-64 calling
 * convention allows) and would clash with the header's prototype. Weak, so
 * that a hand-written function of the same name wins at link time.
 */
#ifndef HYSIM_INTERPOSE_CUDNN_STUB_H
#define HYSIM_INTERPOSE_CUDNN_STUB_H

/* Prints "hysim: NAME (cuDNN) is not supported yet" once (*said); returns CUDNN_STATUS_NOT_SUPPORTED. */
__attribute__((visibility("hidden"))) int hs_cudnn_not_supported(const char *name, _Atomic int *said);

#define HS_CUDNN_STUB(name)                           \
    __attribute__((weak)) int name(void);             \
    __attribute__((weak)) int name(void)              \
    {                                                 \
        static _Atomic int said_;                     \
        return hs_cudnn_not_supported(#name, &said_); \
    }

#endif
