/* Driver entry points by name and CUDA version (driver_symbols.h). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "driver_symbols.h"

/* The first of the symbol's names, newest version first, that lib exports. */
static void *newest(void *lib, const char *symbol, const char *thread_suffix)
{
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

void *hs_driver_symbol(void *lib, const char *symbol, unsigned cuda_version, int per_thread)
{
    if (!lib || !symbol || strncmp(symbol, "cu", 2) != 0 || strlen(symbol) > 200)
        return NULL;
    if ((strcmp(symbol, "cuGetProcAddress") == 0 && cuda_version < 12000) ||
        ((strcmp(symbol, "cuCtxGetDevice") == 0 || strcmp(symbol, "cuCtxSynchronize") == 0) && cuda_version < 13000))
        return dlsym(lib, symbol);
    void *fn = per_thread ? newest(lib, symbol, "_ptsz") : NULL;
    if (!fn && per_thread)
        fn = newest(lib, symbol, "_ptds");
    return fn ? fn : newest(lib, symbol, "");
}
