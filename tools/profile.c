/*
 * hysim profile: runs a program UNMODIFIED against the real CUDA libraries
 * of a machine with a GPU, with hysim's profile recorder
 * (interpose/profile/, libhysim_profile.so) injected by the CUDA driver
 * (CUDA_INJECTION64_PATH) and preloaded (LD_PRELOAD, to wrap the cuBLAS GEMM
 * calls), and checks the profile database it wrote. A
 * scenario's compute.profiles then gives the simulated GPUs those measured
 * kernel durations. Without a GPU it stops before starting the program.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "profile_db.h"

#define RECORDER "libhysim_profile.so"

void cli_profile_help(FILE *out)
{
    fprintf(out, "usage: hysim profile [--out FILE] [--gpu-model NAME] -- PROGRAM [ARGS]\n"
                 "\n"
                 "On a machine WITH an NVIDIA GPU: runs PROGRAM, unmodified, against the real\n"
                 "CUDA libraries, records the duration of every kernel the GPU runs (CUPTI's\n"
                 "activity API, loaded through CUDA_INJECTION64_PATH) and writes a profile\n"
                 "database: one line per kernel name, grid, block and dynamic shared memory,\n"
                 "with the median duration (format: bridge/compute/profile_db.h). Point a scenario's\n"
                 "compute.profiles at it and `hysim run` gives those kernels the measured time.\n"
                 "cuBLAS / cuBLASLt GEMM calls (not the grouped-batched ones) are also recorded\n"
                 "whole, by type and shape (\"gemm:bf16\", m, n, k, batch; the recorder is\n"
                 "preloaded to wrap them): `hysim run` gives a GEMM of that type and shape the\n"
                 "measured time and any other its GEMM model; cuBLAS's own kernels in the file\n"
                 "are unused. A call captured into a CUDA graph gives a sample at each launch.\n"
                 "\n"
                 "options:\n"
                 "  --out FILE        the database to write (default hysim-profile.csv); an\n"
                 "                    existing file is replaced\n"
                 "  --gpu-model NAME  key the entries by NAME instead of the name the GPU reports;\n"
                 "                    it must equal the gpu.model the scenario reports (the H200\n"
                 "                    and H100 presets report \"NVIDIA H200\" and\n"
                 "                    \"NVIDIA H100 80GB HBM3\", the names those GPUs give)\n"
                 "\n"
                 "Profile one CUDA process at a time: every CUDA process PROGRAM starts writes FILE.\n"
                 "\n"
                 "example:\n"
                 "  hysim profile --out h200.csv -- build/bin/gemm_bench -i 5\n"
                 "\n"
                 "environment:\n"
                 "  HYSIM_LIB_DIR   folder of " RECORDER " (default: ../lib/hysim or ../lib\n"
                 "                  beside the hysim executable)\n"
                 "\n"
                 "exit codes: 0 ok, 1 the program failed, 2 usage error or no GPU here,\n"
                 "            3 no profile was recorded\n");
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The recorder beside hysim (as launcher.c finds the interposer libraries), or in $HYSIM_LIB_DIR. */
static int find_recorder(char *out, size_t len)
{
    const char *dir = getenv("HYSIM_LIB_DIR");
    if (dir && *dir) {
        snprintf(out, len, "%s/" RECORDER, dir);
    } else {
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n < 0)
            return -1;
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = '\0';
        if ((size_t)snprintf(out, len, "%s/../lib/hysim/" RECORDER, exe) >= len)
            return -1;
        if (!file_exists(out) && (size_t)snprintf(out, len, "%s/../lib/" RECORDER, exe) >= len)
            return -1;
    }
    char real[PATH_MAX];
    if (!realpath(out, real))
        return -1;
    snprintf(out, len, "%s", real);
    return 0;
}

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_count_fn)(int *);
typedef int (*cu_error_fn)(int, const char **);
typedef int (*cu_device_fn)(int *, int);
typedef int (*cu_name_fn)(char *, int, int);

/* Where the dynamic linker found a library, for the message about hysim's own libcuda. */
static const char *loaded_from(void *handle)
{
    struct link_map *map = NULL;
    return dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map ? map->l_name : "?";
}

/*
 * Asks the NVIDIA driver for a GPU, as the program will. 0 with the first
 * GPU's name, or -1 with why there is none.
 */
static int find_gpu(char *name, size_t namelen, char *why, size_t whylen)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cuda) {
        snprintf(why, whylen, "the NVIDIA driver's libcuda.so.1 cannot be loaded: %s", dlerror());
        return -1;
    }
    const char *from = loaded_from(cuda);
    /* hysim's libcuda.so.1 brings libhysim.so, whose client functions the real driver lacks */
    if (dlsym(cuda, "hs_client_comm_init")) {
        snprintf(why, whylen,
                 "libcuda.so.1 is hysim's replacement (%s): take hysim's library folder off "
                 "LD_LIBRARY_PATH",
                 from);
        return -1;
    }
    cu_init_fn cu_init = (cu_init_fn)(uintptr_t)dlsym(cuda, "cuInit");
    cu_count_fn cu_count = (cu_count_fn)(uintptr_t)dlsym(cuda, "cuDeviceGetCount");
    cu_error_fn cu_error = (cu_error_fn)(uintptr_t)dlsym(cuda, "cuGetErrorName");
    cu_device_fn cu_device = (cu_device_fn)(uintptr_t)dlsym(cuda, "cuDeviceGet");
    cu_name_fn cu_name = (cu_name_fn)(uintptr_t)dlsym(cuda, "cuDeviceGetName");
    if (!cu_init || !cu_count || !cu_device || !cu_name) {
        snprintf(why, whylen, "%s is not a CUDA driver (no cuInit)", from);
        return -1;
    }
    int rc = cu_init(0), count = 0, dev = 0;
    if (rc != 0) {
        const char *e = NULL;
        if (cu_error)
            cu_error(rc, &e);
        snprintf(why, whylen, "cuInit: %s (%d), from %s", e ? e : "error", rc, from);
        return -1;
    }
    if (cu_count(&count) != 0 || count < 1) {
        snprintf(why, whylen, "the driver (%s) sees no device", from);
        return -1;
    }
    if (cu_device(&dev, 0) != 0 || cu_name(name, (int)namelen, dev) != 0)
        snprintf(name, namelen, "?");
    return 0;
}

/* Reads what the recorder wrote: -1 with a message when nothing usable was recorded. */
static int check_database(const char *path)
{
    if (!file_exists(path)) {
        fprintf(stderr,
                "hysim profile: no profile database was written to %s (did the program initialise "
                "CUDA? the recorder's own messages above say why otherwise)\n",
                path);
        return -1;
    }
    char err[4352];
    hs_profile_db *db = hs_profile_db_load(path, err, sizeof err);
    if (!db) {
        fprintf(stderr, "hysim profile: the recorded database does not load: %s\n", err);
        return -1;
    }
    size_t n = hs_profile_db_size(db);
    hs_profile_db_free(db);
    if (n == 0) {
        fprintf(stderr, "hysim profile: no kernel was recorded in %s: the program launched none\n", path);
        return -1;
    }
    fprintf(stderr, "hysim profile: %s holds %zu entries\n", path, n);
    return 0;
}

/* Absolute, so the program may change directory; -1 when too long. */
static int absolute(const char *path, char *out, size_t len)
{
    char cwd[PATH_MAX];
    int n = path[0] == '/' || !getcwd(cwd, sizeof cwd) ? snprintf(out, len, "%s", path)
                                                       : snprintf(out, len, "%s/%s", cwd, path);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* LD_PRELOAD with the recorder appended (what the program preloads already comes first); NULL if too long. */
static const char *preload_with(const char *recorder, char *buf, size_t len)
{
    const char *pre = getenv("LD_PRELOAD");
    int n = pre && *pre ? snprintf(buf, len, "%s:%s", pre, recorder) : snprintf(buf, len, "%s", recorder);
    return n < 0 || (size_t)n >= len ? NULL : buf;
}

static int run_program(char **argv, const char *recorder, const char *out, const char *gpu_model)
{
    char preload[8192];
    if (!preload_with(recorder, preload, sizeof preload)) {
        fprintf(stderr, "hysim profile: LD_PRELOAD is too long to add %s to\n", recorder);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "hysim profile: fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        /* the same path twice: the driver's dlopen finds the preloaded library and initialises it once */
        setenv("CUDA_INJECTION64_PATH", recorder, 1);
        setenv("LD_PRELOAD", preload, 1);
        setenv("HYSIM_PROFILE_OUT", out, 1);
        if (gpu_model)
            setenv("HYSIM_PROFILE_GPU_MODEL", gpu_model, 1);
        else
            unsetenv("HYSIM_PROFILE_GPU_MODEL");
        execvp(argv[0], argv);
        fprintf(stderr, "hysim profile: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (WIFEXITED(status))
        fprintf(stderr, "hysim profile: %s exited with status %d\n", argv[0], WEXITSTATUS(status));
    else
        fprintf(stderr, "hysim profile: %s was killed by signal %d\n", argv[0], WTERMSIG(status));
    return 1;
}

int cli_profile(int argc, char **argv)
{
    const char *out = "hysim-profile.csv", *gpu_model = NULL;
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--"); i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            cli_profile_help(stdout);
            return HS_EXIT_OK;
        }
        if (!strcmp(argv[i], "--out") && i + 1 < argc && *argv[i + 1]) {
            out = argv[++i];
            continue;
        }
        if (!strcmp(argv[i], "--gpu-model") && i + 1 < argc && *argv[i + 1]) {
            gpu_model = argv[++i];
            continue;
        }
        if (!strcmp(argv[i], "--out") || !strcmp(argv[i], "--gpu-model"))
            fprintf(stderr, "hysim profile: %s needs a value\n", argv[i]);
        else
            fprintf(stderr, "hysim profile: unexpected argument \"%s\" (`hysim help profile` lists the options)\n",
                    argv[i]);
        return HS_EXIT_USAGE;
    }
    if (i + 1 >= argc) {
        fprintf(stderr, "hysim profile: no program given (hysim profile [--out FILE] -- PROGRAM [ARGS])\n");
        return HS_EXIT_USAGE;
    }
    if (gpu_model && strpbrk(gpu_model, ",\r\n")) {
        fprintf(stderr,
                "hysim profile: --gpu-model \"%s\": a profile database's GPU name cannot hold a comma "
                "or line break\n",
                gpu_model);
        return HS_EXIT_USAGE;
    }
    char recorder[PATH_MAX + 32], why[PATH_MAX + 256], gpu[256];
    if (find_recorder(recorder, sizeof recorder) != 0) {
        fprintf(stderr,
                "hysim profile: %s not found (%s): hysim was built without CUPTI (cupti.h, libcupti) "
                "or HYSIM_LIB_DIR is wrong\n",
                RECORDER, recorder);
        return HS_EXIT_USAGE;
    }
    if (find_gpu(gpu, sizeof gpu, why, sizeof why) != 0) {
        fprintf(stderr,
                "hysim profile: no CUDA GPU here (%s); profile on a machine with an NVIDIA GPU and "
                "its driver, then use the database anywhere\n",
                why);
        return HS_EXIT_USAGE;
    }
    char path[PATH_MAX];
    if (absolute(out, path, sizeof path) != 0) {
        fprintf(stderr, "hysim profile: --out %s: path too long\n", out);
        return HS_EXIT_USAGE;
    }
    if (remove(path) != 0 && errno != ENOENT) {
        fprintf(stderr, "hysim profile: cannot replace %s: %s\n", path, strerror(errno));
        return HS_EXIT_USAGE;
    }
    fprintf(stderr, "hysim profile: recording on %s, entries keyed by GPU \"%s\"\n", gpu, gpu_model ? gpu_model : gpu);
    int rc = run_program(argv + i + 1, recorder, path, gpu_model);
    if (rc < 0)
        return HS_EXIT_USAGE;
    if (check_database(path) != 0)
        return rc ? HS_EXIT_PROGRAM_FAILED : HS_EXIT_SIMULATION;
    return rc ? HS_EXIT_PROGRAM_FAILED : HS_EXIT_OK;
}
