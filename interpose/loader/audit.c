/*
 * libhysim_audit.so: an rtld-audit module (LD_AUDIT) that makes every request
 * for a library hysim replaces load hysim's copy, whatever route it takes: a
 * NEEDED entry found through a DT_RPATH that beats LD_LIBRARY_PATH (the torch
 * wheel's), or dlopen / ctypes.CDLL of an absolute path into a CUDA wheel.
 * docs/pytorch.md, "Loading", says why an audit module and not a dlopen wrapper.
 */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The file names hysim's library folder holds in place of the real ones. */
static const char *const hs_replaced[] = {
    "libcudart.so.13", "libcudart.so", "libcuda.so.1",      "libcuda.so",      "libnccl.so.2",    "libnccl.so",
    "libcublas.so.13", "libcublas.so", "libcublasLt.so.13", "libcublasLt.so",  "libcurand.so.10", "libcurand.so",
    "libcudnn.so.9",   "libcudnn.so",  "libnvidia-ml.so.1", "libnvidia-ml.so",
};
#define HS_NREPLACED (sizeof hs_replaced / sizeof hs_replaced[0])

/* Their full paths in hysim's folder; hs_have[i] where that folder has the file. */
static char hs_paths[HS_NREPLACED][PATH_MAX];
static int hs_have[HS_NREPLACED];

static void hs_audit_find_paths(void)
{
    Dl_info info;
    if (!dladdr((void *)hs_audit_find_paths, &info) || !info.dli_fname)
        return;
    char dir[PATH_MAX];
    if (!realpath(info.dli_fname, dir))
        return;
    char *slash = strrchr(dir, '/');
    if (!slash)
        return;
    *slash = '\0';
    for (size_t i = 0; i < HS_NREPLACED; i++) {
        int n = snprintf(hs_paths[i], sizeof hs_paths[i], "%s/%s", dir, hs_replaced[i]);
        hs_have[i] = n > 0 && (size_t)n < sizeof hs_paths[i] && access(hs_paths[i], R_OK) == 0;
    }
}

unsigned int la_version(unsigned int version)
{
    (void)version;
    hs_audit_find_paths();
    return LAV_CURRENT;
}

char *la_objsearch(const char *name, uintptr_t *cookie, unsigned int flag)
{
    (void)cookie;
    if (flag != LA_SER_ORIG || !name)
        return (char *)name;
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    for (size_t i = 0; i < HS_NREPLACED; i++)
        if (hs_have[i] && strcmp(base, hs_replaced[i]) == 0)
            return hs_paths[i];
    return (char *)name;
}
