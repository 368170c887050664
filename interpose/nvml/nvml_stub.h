/*
 * The generated stubs of libnvidia-ml.so.1 (gen_symbol_stubs.sh): an NVML
 * function hysim does not answer says once that it is not supported yet and
 * returns NVML_ERROR_NOT_SUPPORTED, an answer NVML's callers expect of
 * devices without a feature. No parameters, as cudnn_stub.h explains. Weak,
 * so that a hand-written function of the same name wins at link time.
 */
#ifndef HYSIM_INTERPOSE_NVML_STUB_H
#define HYSIM_INTERPOSE_NVML_STUB_H

/* Prints "hysim: NAME (NVML) is not supported yet" once (*said); returns NVML_ERROR_NOT_SUPPORTED. */
__attribute__((visibility("hidden"))) int hs_nvml_not_supported(const char *name, _Atomic int *said);

#define HS_NVML_STUB(name)                           \
    __attribute__((weak)) int name(void);            \
    __attribute__((weak)) int name(void)             \
    {                                                \
        static _Atomic int said_;                    \
        return hs_nvml_not_supported(#name, &said_); \
    }

#endif
