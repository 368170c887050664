/*
 * libcublas.so.13 and libcublasLt.so.13 export every function the real
 * libraries do (the committed lists, from objdump -T of the real ones), with
 * the real symbol version; a function hysim does not implement says so once,
 * by name, and returns CUBLAS_STATUS_NOT_SUPPORTED (15).
 * usage: cublas_surface_test LIB SYMBOLS VERSION [LIB SYMBOLS VERSION]...
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fails;

/* Calls a stub twice with stderr sent to a file; returns what it printed. */
static int call_stub(int (*fn)(void), char *out, size_t cap, int *rc1, int *rc2)
{
    fflush(stderr);
    FILE *tmp = tmpfile();
    if (!tmp)
        return -1;
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    *rc1 = fn();
    *rc2 = fn();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(out, 1, cap - 1, tmp);
    out[n] = '\0';
    fclose(tmp);
    return 0;
}

static void check_library(const char *lib, const char *symbols, const char *version)
{
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("FAIL: dlopen %s: %s\n", lib, dlerror());
        fails++;
        return;
    }
    FILE *f = fopen(symbols, "r");
    if (!f) {
        perror(symbols);
        exit(1);
    }
    char name[256], stub[256] = "";
    int n = 0, missing = 0;
    while (fscanf(f, "%255s", name) == 1) {
        if (name[0] == '#') {
            int c;
            while ((c = fgetc(f)) != '\n' && c != EOF)
                ;
            continue;
        }
        n++;
        if (!dlvsym(h, name, version)) {
            if (missing++ < 10)
                printf("FAIL: %s: %s@%s is missing\n", lib, name, version);
        }
        /* a generated stub: a function no hand-written file of ours implements */
        if (!stub[0] && (!strcmp(name, "cublasZtrsm_v2") || !strcmp(name, "cublasLtMatrixTransform")))
            snprintf(stub, sizeof stub, "%s", name);
    }
    fclose(f);
    printf("%s: %d functions listed, %d missing\n", lib, n, missing);
    fails += missing > 0 || n < 100;
    if (!stub[0]) {
        printf("FAIL: %s: no stub to call in %s\n", lib, symbols);
        fails++;
    } else {
        char out[512];
        int rc1 = -1, rc2 = -1;
        int (*fn)(void) = (int (*)(void))dlvsym(h, stub, version);
        char want[300];
        snprintf(want, sizeof want, "hysim: %s is not supported yet\n", stub);
        if (!fn || call_stub(fn, out, sizeof out, &rc1, &rc2) || rc1 != 15 || rc2 != 15 || strcmp(out, want)) {
            printf("FAIL: %s: %s returned %d, %d and printed \"%s\"; want 15, 15 and \"%s\" once\n", lib, stub,
                   fn ? rc1 : -1, fn ? rc2 : -1, fn ? out : "", want);
            fails++;
        } else {
            printf("%s: %s says it is not supported, once, and returns 15\n", lib, stub);
        }
    }
    dlclose(h);
}

int main(int argc, char **argv)
{
    if (argc < 4 || (argc - 1) % 3) {
        fprintf(stderr, "usage: %s LIB SYMBOLS VERSION...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i + 2 < argc; i += 3)
        check_library(argv[i], argv[i + 1], argv[i + 2]);
    printf(fails ? "FAIL\n" : "ok\n");
    return fails ? 1 : 0;
}
