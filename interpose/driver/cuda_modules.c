/*
 * Modules and their functions in the driver API: what a program that builds
 * its kernels at run time (NVRTC, Triton, CuPy) or loads cubins itself
 * loads. No machine code runs, so a module's image is not read and a
 * function is whatever name the program asks for (a name the real module
 * lacks is not caught); each function is a kernel of the client's registry,
 * which cuda_launch.c launches. Function attributes follow kernel_rules.h,
 * as the runtime's do. CUDA 12's libraries are modules (a CUlibrary is a
 * CUmodule, a CUkernel a CUfunction, as a launch may treat it); the JIT
 * linker links nothing and hands out an image that only hysim's
 * cuModuleLoadData takes.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_driver.h"
#include "kernel_rules.h"

#define MODULE_MAGIC 0x68736d64u /* "hsmd" */

struct CUmod_st {
    unsigned magic;
    struct CUfunc_st *functions;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* modules' function lists */

static int module_ok(CUmodule m) { return m && m->magic == MODULE_MAGIC; }

/* ---- modules ---- */

static CUresult new_module(CUmodule *module, const void *image)
{
    CUresult r = hs_driver_initialized();
    if (r != CUDA_SUCCESS)
        return r;
    if (!module || !image)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUmod_st *m = calloc(1, sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    m->magic = MODULE_MAGIC;
    *module = m;
    return CUDA_SUCCESS;
}

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    hs_client_enter();
    return hs_driver_leave(new_module(module, image));
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions, CUjit_option *options,
                            void **optionValues)
{
    (void)numOptions, (void)options, (void)optionValues; /* JIT options: no code is compiled */
    hs_client_enter();
    return hs_driver_leave(new_module(module, image));
}

CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
    hs_client_enter();
    return hs_driver_leave(new_module(module, fatCubin));
}

/* The file must be there to be loaded; its contents are not read. */
CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
    hs_client_enter();
    FILE *f = fname ? fopen(fname, "rb") : NULL;
    if (f)
        fclose(f);
    return hs_driver_leave(!fname ? CUDA_ERROR_INVALID_VALUE
                           : !f   ? CUDA_ERROR_FILE_NOT_FOUND
                                  : new_module(module, fname));
}

CUresult cuModuleUnload(CUmodule hmod)
{
    hs_client_enter();
    if (!module_ok(hmod))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    hs_client_module_unregister(hmod); /* its kernels, once the ops that name them are sent */
    pthread_mutex_lock(&g_lock);
    for (struct CUfunc_st *f = hmod->functions, *next; f; f = next) {
        next = f->next;
        f->magic = 0;
        free(f->name);
        free(f);
    }
    hmod->magic = 0;
    pthread_mutex_unlock(&g_lock);
    free(hmod);
    return hs_driver_leave(CUDA_SUCCESS);
}

/* The module's function of that name: the same handle each time it is asked for. */
CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    hs_client_enter();
    if (!hfunc || !name)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    if (!module_ok(hmod))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    pthread_mutex_lock(&g_lock);
    struct CUfunc_st *f = hmod->functions;
    while (f && strcmp(f->name, name) != 0)
        f = f->next;
    if (!f && (f = calloc(1, sizeof *f)) && !(f->name = strdup(name))) {
        free(f);
        f = NULL;
    }
    if (f && !f->magic) {
        f->magic = HS_FUNCTION_MAGIC;
        f->module = hmod;
        f->attrs[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES] = HS_SHARED_PER_BLOCK_DEFAULT;
        f->attrs[CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT] = -1;
        hs_client_kernel_register(hmod, f, name);
        f->kernel = hs_client_kernel_find(f);
        f->next = hmod->functions;
        hmod->functions = f;
    }
    pthread_mutex_unlock(&g_lock);
    if (f)
        *hfunc = f;
    return hs_driver_leave(f ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY);
}

/* ---- libraries (CUDA 12): modules by another name ---- */

CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions, void **jitOptionsValues,
                           unsigned int numJitOptions, CUlibraryOption *libraryOptions, void **libraryOptionValues,
                           unsigned int numLibraryOptions)
{
    (void)jitOptions, (void)jitOptionsValues, (void)numJitOptions;
    (void)libraryOptions, (void)libraryOptionValues, (void)numLibraryOptions;
    hs_client_enter();
    return hs_driver_leave(new_module((CUmodule *)library, code));
}

CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName, CUjit_option *jitOptions,
                               void **jitOptionsValues, unsigned int numJitOptions, CUlibraryOption *libraryOptions,
                               void **libraryOptionValues, unsigned int numLibraryOptions)
{
    (void)jitOptions, (void)jitOptionsValues, (void)numJitOptions;
    (void)libraryOptions, (void)libraryOptionValues, (void)numLibraryOptions;
    return cuModuleLoad((CUmodule *)library, fileName);
}

CUresult cuLibraryUnload(CUlibrary library) { return cuModuleUnload((CUmodule)library); }

CUresult cuLibraryGetModule(CUmodule *pMod, CUlibrary library)
{
    hs_client_enter();
    if (!pMod)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    if (!module_ok((CUmodule)library))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    *pMod = (CUmodule)library;
    return hs_driver_leave(CUDA_SUCCESS);
}

CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
    return cuModuleGetFunction((CUfunction *)pKernel, (CUmodule)library, name);
}

CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
    hs_client_enter();
    if (!pFunc)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    if (!hs_driver_function_ok((CUfunction)kernel))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    *pFunc = (CUfunction)kernel;
    return hs_driver_leave(CUDA_SUCCESS);
}

CUresult cuKernelGetName(const char **name, CUkernel hfunc) { return cuFuncGetName(name, (CUfunction)hfunc); }

/* A kernel's attributes are one set for every device here (as for a function). */
CUresult cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev)
{
    const hs_gpu_info *info;
    CUresult r = hs_driver_check_device(dev, &info);
    return r != CUDA_SUCCESS ? r : cuFuncGetAttribute(pi, attrib, (CUfunction)kernel);
}

CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev)
{
    const hs_gpu_info *info;
    CUresult r = hs_driver_check_device(dev, &info);
    return r != CUDA_SUCCESS ? r : cuFuncSetAttribute((CUfunction)kernel, attrib, val);
}

/* ---- the JIT linker: links nothing ---- */

#define LINK_MAGIC 0x68736c6bu /* "hslk" */

struct CUlinkState_st {
    unsigned magic;
    unsigned inputs;
};

static const char g_linked_image[] = "hysim: a linked image (no code; only hysim's cuModuleLoadData reads it)";

CUresult cuLinkCreate(unsigned int numOptions, CUjit_option *options, void **optionValues, CUlinkState *stateOut)
{
    (void)numOptions, (void)options, (void)optionValues;
    hs_client_enter();
    CUresult r = hs_driver_initialized();
    struct CUlinkState_st *st = NULL;
    if (r == CUDA_SUCCESS && !stateOut)
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS && !(st = calloc(1, sizeof *st)))
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS) {
        st->magic = LINK_MAGIC;
        *stateOut = st;
    }
    return hs_driver_leave(r);
}

static int link_ok(CUlinkState st) { return st && st->magic == LINK_MAGIC; }

CUresult cuLinkAddData(CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,
                       unsigned int numOptions, CUjit_option *options, void **optionValues)
{
    (void)name, (void)numOptions, (void)options, (void)optionValues;
    hs_client_enter();
    if (!link_ok(state))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    if (!data || !size || (unsigned)type >= CU_JIT_NUM_INPUT_TYPES)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    state->inputs++;
    return hs_driver_leave(CUDA_SUCCESS);
}

CUresult cuLinkAddFile(CUlinkState state, CUjitInputType type, const char *path, unsigned int numOptions,
                       CUjit_option *options, void **optionValues)
{
    (void)numOptions, (void)options, (void)optionValues;
    hs_client_enter();
    if (!link_ok(state))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    if (!path || (unsigned)type >= CU_JIT_NUM_INPUT_TYPES)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    FILE *f = fopen(path, "rb");
    if (!f)
        return hs_driver_leave(CUDA_ERROR_FILE_NOT_FOUND);
    fclose(f);
    state->inputs++;
    return hs_driver_leave(CUDA_SUCCESS);
}

/* The image lives as long as the process (a real one, as long as the link state). */
CUresult cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut)
{
    hs_client_enter();
    if (!link_ok(state))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    if (!cubinOut || !sizeOut || !state->inputs)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    *cubinOut = (void *)g_linked_image;
    *sizeOut = sizeof g_linked_image;
    return hs_driver_leave(CUDA_SUCCESS);
}

CUresult cuLinkDestroy(CUlinkState state)
{
    hs_client_enter();
    if (!link_ok(state))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    state->magic = 0;
    free(state);
    return hs_driver_leave(CUDA_SUCCESS);
}

/* ---- function attributes and names ---- */

CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
    hs_client_enter();
    if (!pi || (unsigned)attrib >= HS_NFUNC_ATTRS)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    if (!hs_driver_function_ok(hfunc))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    const hs_gpu_info *info = hs_client_gpu_info();
    switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = HS_MAX_THREADS_PER_BLOCK; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = HS_ASSUMED_REGS; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = info ? info->cc_major * 10 + info->cc_minor : 0; break;
    default: *pi = hfunc->attrs[attrib]; break; /* static shared, constant and local memory: none */
    }
    return hs_driver_leave(CUDA_SUCCESS);
}

CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
    hs_client_enter();
    if (!hs_driver_function_ok(hfunc))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    if ((unsigned)attrib >= HS_NFUNC_ATTRS || !hs_kernel_attr_value_ok(attrib, value))
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    hfunc->attrs[attrib] = value;
    return hs_driver_leave(CUDA_SUCCESS);
}

/* A function's cache and bank preferences: checked, and without effect on its time. */
CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
    hs_client_enter();
    if (!hs_driver_function_ok(hfunc))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    return hs_driver_leave((unsigned)config > CU_FUNC_CACHE_PREFER_EQUAL ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS);
}

CUresult cuFuncSetSharedMemConfig(CUfunction hfunc, CUsharedconfig config)
{
    hs_client_enter();
    if (!hs_driver_function_ok(hfunc))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    return hs_driver_leave((unsigned)config > CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE ? CUDA_ERROR_INVALID_VALUE
                                                                                        : CUDA_SUCCESS);
}

CUresult cuFuncGetName(const char **name, CUfunction hfunc)
{
    hs_client_enter();
    if (!name)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    if (!hs_driver_function_ok(hfunc))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    *name = hfunc->name;
    return hs_driver_leave(CUDA_SUCCESS);
}

CUresult cuFuncGetModule(CUmodule *hmod, CUfunction hfunc)
{
    hs_client_enter();
    if (!hmod)
        return hs_driver_leave(CUDA_ERROR_INVALID_VALUE);
    if (!hs_driver_function_ok(hfunc))
        return hs_driver_leave(CUDA_ERROR_INVALID_HANDLE);
    *hmod = hfunc->module;
    return hs_driver_leave(CUDA_SUCCESS);
}
