/*
 * The function a wrapper of libhysim.so stands in front of: libc's own
 * (pthread_create, pthread_cond_wait, nanosleep, ...), for the wrappers in
 * threads.c, host_sync.c, sleep.c and timed_waits.c to call.
 */
#include <dlfcn.h>

#include "internal.h"

void *hs_next_symbol(const char *name, const char *version)
{
    void *p = version ? dlvsym(RTLD_NEXT, name, version) : dlsym(RTLD_NEXT, name);
    if (!p) { /* libhysim.so linked, not preloaded: libc comes before it */
        void *h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            p = version ? dlvsym(h, name, version) : dlsym(h, name);
            dlclose(h);
        }
    }
    return p;
}
