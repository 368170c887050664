/*
 * Checks libcudart.so.13 against every function cuda_runtime_api.h declares
 * (cudart_api_table.h, generated at build time from the header and from
 * what the hand-written objects define; interpose/stubs/gen_api_stubs.sh):
 * each is exported with the symbol version libcudart.so.13, and each one
 * hysim does not implement returns cudaErrorNotSupported when called with
 * zeroed arguments, without crashing, printing "hysim: NAME is not supported
 * yet" exactly once however often it is called.
 *
 * usage: api_surface_test PATH/libcudart.so.13
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <driver_types.h>

static const struct {
    const char *name;
    int stubbed;
} api[] = {
#define HS_API_FUNCTION(name, stubbed) {name, stubbed},
#include "cudart_api_table.h"
};
#define NAPI (sizeof api / sizeof api[0])

/* Twelve zeroed integer arguments: more than any declared function takes in registers and on the stack. */
typedef cudaError_t (*zeroed_call)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t,
                                   uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t);

static int failures;

static void fail(const char *fmt, const char *name, const char *detail)
{
    failures++;
    printf("FAIL: ");
    printf(fmt, name, detail);
    putchar('\n');
}

/* Calls f twice with stderr sent to a file; returns what was printed (malloc'd) and the results. */
static char *call_twice(zeroed_call f, int tmp, cudaError_t r[2])
{
    fflush(stderr);
    int saved = dup(2);
    if (ftruncate(tmp, 0) != 0 || lseek(tmp, 0, SEEK_SET) != 0 || saved < 0 || dup2(tmp, 2) < 0)
        abort();
    r[0] = f(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    r[1] = f(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    off_t len = lseek(tmp, 0, SEEK_END);
    char *text = calloc(1, (size_t)len + 1);
    if (!text || pread(tmp, text, (size_t)len, 0) != len)
        abort();
    return text;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: api_surface_test PATH/libcudart.so.13\n");
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        printf("FAIL: %s\n", dlerror());
        return 1;
    }
    char path[] = "/tmp/hs-api-surface.XXXXXX";
    int tmp = mkstemp(path);
    if (tmp < 0)
        abort();
    unlink(path);

    size_t nstub = 0;
    for (size_t i = 0; i < NAPI; i++) {
        void *f = dlvsym(lib, api[i].name, "libcudart.so.13");
        if (!f) {
            fail("%s is not exported as %s", api[i].name, "version libcudart.so.13");
            continue;
        }
        if (!api[i].stubbed)
            continue;
        nstub++;
        cudaError_t r[2];
        char *said = call_twice((zeroed_call)f, tmp, r), want[256];
        snprintf(want, sizeof want, "hysim: %s is not supported yet\n", api[i].name);
        if (r[0] != cudaErrorNotSupported || r[1] != cudaErrorNotSupported)
            fail("%s returned something other than %s", api[i].name, "cudaErrorNotSupported");
        if (strcmp(said, want) != 0)
            fail("%s printed \"%s\" (expected its message once)", api[i].name, said);
        free(said);
    }

    /* The stubs record their error as the thread's last, as every runtime call does. */
    cudaError_t (*last)(void) = (cudaError_t(*)(void))dlvsym(lib, "cudaGetLastError", "libcudart.so.13");
    if (nstub && (!last || last() != cudaErrorNotSupported || last() != cudaSuccess))
        fail("%s after a stub is not cudaErrorNotSupported once %s", "cudaGetLastError", "then cudaSuccess");

    /* What the runtime must refuse loudly rather than fake. */
    const char *must_refuse[] = {"cudaMallocArray", "cudaGraphAddChildGraphNode", "cudaStreamBeginCaptureToGraph",
                                 "cudaIpcGetMemHandle"};
    for (size_t j = 0; j < sizeof must_refuse / sizeof must_refuse[0]; j++) {
        size_t i = 0;
        while (i < NAPI && strcmp(api[i].name, must_refuse[j]))
            i++;
        if (i == NAPI || !api[i].stubbed)
            fail("%s is %s", must_refuse[j], i == NAPI ? "not declared" : "not a not-supported stub");
    }
    if (NAPI < 300)
        fail("only %s%s functions in the generated table", "", "a few");
    printf("cuda_runtime_api.h declares %zu functions: %zu implemented, %zu not supported yet\n", NAPI, NAPI - nstub,
           nstub);
    close(tmp);
    dlclose(lib);
    if (failures)
        return 1;
    printf("ok\n");
    return 0;
}
