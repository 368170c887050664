/*
 * Process launcher for `hysim run`: environment of the simulated program and
 * one fork/exec per server.
 */
#include "launcher.h"

#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The folder of the running hysim executable into exe (PATH_MAX bytes); -1 with errno when unknown. */
static int exe_dir(char exe[PATH_MAX])
{
    ssize_t n = readlink("/proc/self/exe", exe, PATH_MAX - 1);
    if (n < 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    return 0;
}

int launcher_find_database_dir(char *out, size_t len)
{
    const char *override = getenv("HYSIM_DATABASE_DIR");
    char candidate[PATH_MAX + 32] = "", exe[PATH_MAX];
    if (override)
        snprintf(candidate, sizeof candidate, "%s", override);
    else if (exe_dir(exe) == 0)
        snprintf(candidate, sizeof candidate, "%s/../share/hysim/profiles", exe);
    struct stat st;
    bool there = candidate[0] && stat(candidate, &st) == 0 && S_ISDIR(st.st_mode) && strlen(candidate) < len;
    snprintf(out, len, "%s", there ? candidate : "");
    return there ? 0 : -1;
}

int launcher_find_lib_dir(char *out, size_t len, char *err, size_t errlen)
{
    const char *override = getenv("HYSIM_LIB_DIR");
    char candidate[PATH_MAX + 16];
    if (override && *override) {
        snprintf(candidate, sizeof candidate, "%s", override);
    } else {
        char exe[PATH_MAX];
        if (exe_dir(exe) < 0) {
            snprintf(err, errlen, "cannot find the hysim executable: %s", strerror(errno));
            return -1;
        }
        /* an installed tree keeps them in lib/hysim/ (tools/install.cmake), the build tree in lib/ */
        char installed[PATH_MAX + 48];
        snprintf(installed, sizeof installed, "%s/../lib/hysim/libhysim.so", exe);
        snprintf(candidate, sizeof candidate, file_exists(installed) ? "%s/../lib/hysim" : "%s/../lib", exe);
    }
    char probe[PATH_MAX + 32];
    snprintf(probe, sizeof probe, "%s/libhysim.so", candidate);
    if (!file_exists(probe)) {
        snprintf(err, errlen, "cannot find the interposer libraries: %s does not exist (set HYSIM_LIB_DIR)", probe);
        return -1;
    }
    if (!realpath(candidate, out) || strlen(out) >= len) {
        snprintf(err, errlen, "cannot resolve %s: %s", candidate, strerror(errno));
        return -1;
    }
    return 0;
}

int launcher_check_program(const char *program, char *err, size_t errlen)
{
    if (strchr(program, '/')) {
        if (access(program, X_OK) == 0)
            return 0;
        snprintf(err, errlen, "cannot run %s: %s", program, strerror(errno));
        return -1;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    const char *dir = path;
    while (*dir) {
        const char *end = strchr(dir, ':');
        size_t dir_len = end ? (size_t)(end - dir) : strlen(dir);
        char candidate[PATH_MAX];
        snprintf(candidate, sizeof candidate, "%.*s/%s", (int)dir_len, dir, program);
        if (access(candidate, X_OK) == 0)
            return 0;
        dir = end ? end + 1 : dir + dir_len;
    }
    snprintf(err, errlen, "cannot run %s: not found in PATH", program);
    return -1;
}

void launcher_host_time_string(const hs_scenario *sc, char *out, size_t len)
{
    switch (sc->run.host_time) {
    case HS_HOST_TIME_FIXED: snprintf(out, len, "fixed:%llu", (unsigned long long)sc->run.host_time_fixed_ns); break;
    case HS_HOST_TIME_SCALED: snprintf(out, len, "scaled:%.17g", sc->run.host_time_scale); break;
    case HS_HOST_TIME_ZERO: snprintf(out, len, "zero"); break;
    case HS_HOST_TIME_CALLS: snprintf(out, len, "calls"); break;
    case HS_HOST_TIME_REAL:
    default: snprintf(out, len, "real"); break;
    }
}

/* Prepends `first` to the ':'-separated variable `name`. */
static void prepend_env(const char *name, const char *first)
{
    const char *old = getenv(name);
    if (!old || !*old) {
        setenv(name, first, 1);
        return;
    }
    size_t len = strlen(first) + strlen(old) + 2;
    char *value = malloc(len);
    if (!value)
        return;
    snprintf(value, len, "%s:%s", first, old);
    setenv(name, value, 1);
    free(value);
}

int launcher_is_job_launcher(const char *program)
{
    static const char *const launchers[] = {"mpirun",        "mpiexec",        "orterun",         "prterun", "srun",
                                            "mpiexec.hydra", "mpirun.openmpi", "mpiexec.openmpi", NULL};
    const char *base = strrchr(program, '/');
    base = base ? base + 1 : program;
    for (const char *const *l = launchers; *l; l++)
        if (!strcmp(base, *l))
            return 1;
    return 0;
}

void launcher_exec(const launcher_config *cfg, int server)
{
    char value[PATH_MAX + 64];
    setenv("HYSIM_ENDPOINT", cfg->endpoint, 1);
    if (cfg->token)
        setenv("HYSIM_TOKEN", cfg->token, 1);
    if (server >= 0) {
        snprintf(value, sizeof value, "%d", server);
        setenv("HYSIM_SERVER", value, 1);
        unsetenv("HYSIM_JOB");
    } else { /* interpose/core/job_placement.c: each rank finds its server */
        unsetenv("HYSIM_SERVER");
        setenv("HYSIM_JOB", "1", 1);
    }
    if (cfg->scenario) { /* else (hysim join) hysimd's Setup says */
        snprintf(value, sizeof value, "%d", cfg->scenario->servers.gpus_per_server);
        setenv("HYSIM_GPUS", value, 1);
        launcher_host_time_string(cfg->scenario, value, sizeof value);
        setenv("HYSIM_HOST_TIME", value, 1);
        snprintf(value, sizeof value, "%llu", (unsigned long long)cfg->epoch_ns);
        setenv("HYSIM_EPOCH_NS", value, 1);
    }
    if (cfg->message_clocks)
        setenv("HYSIM_MESSAGE_CLOCKS", cfg->message_clocks, 1); /* interpose/host/message_clocks.c */
    prepend_env("LD_LIBRARY_PATH", cfg->lib_dir);
#ifndef HYSIM_SANITIZER_PRELOAD
    /* The audit module redirects what a DT_RPATH or an absolute path would
     * find elsewhere (interpose/loader/audit.c). Not in sanitizer builds: with
     * an audit module the dynamic linker's TLS allocations go through ASan's
     * malloc, which deadlocks there (those builds do not run PyTorch). */
    snprintf(value, sizeof value, "%s/libhysim_audit.so", cfg->lib_dir);
    prepend_env("LD_AUDIT", value);
#endif
    /* libhysim.so first: its clock functions must win over libc's. */
    snprintf(value, sizeof value, "%s/libhysim.so", cfg->lib_dir);
    prepend_env("LD_PRELOAD", value);
#ifdef HYSIM_SANITIZER_PRELOAD
    prepend_env("LD_PRELOAD", HYSIM_SANITIZER_PRELOAD);
#endif
    signal(SIGPIPE, SIG_DFL);
    execvp(cfg->argv[0], cfg->argv);
    fprintf(stderr, "hysim: cannot run %s: %s\n", cfg->argv[0], strerror(errno));
    _exit(127);
}

int launcher_start(const launcher_config *cfg, pid_t *pids, int max_pids, char *err, size_t errlen)
{
    int servers = cfg->job ? 1 : cfg->scenario->servers.count, started = 0;
    if (servers > max_pids) {
        snprintf(err, errlen, "%d servers: at most %d processes can be started", servers, max_pids);
        return -1;
    }
    fflush(NULL);
    for (int s = 0; s < servers; s++) {
        if (!cfg->job && cfg->local_servers && !cfg->local_servers[s])
            continue; /* started elsewhere (hysim join) */
        pid_t pid = fork();
        if (pid < 0) {
            snprintf(err, errlen, "fork for server %d: %s", s, strerror(errno));
            for (int i = 0; i < started; i++)
                kill(pids[i], SIGKILL);
            return -1;
        }
        if (pid == 0)
            launcher_exec(cfg, cfg->job ? -1 : s);
        pids[started++] = pid;
    }
    return started;
}
