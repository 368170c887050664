/*
 * Container launcher for `hysim run --containers`: builds one `podman run`
 * command per server, starts them, and removes the containers afterwards.
 */
#include "podman_launcher.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#ifndef HYSIM_CONTAINERS_DIR
#define HYSIM_CONTAINERS_DIR "containers"
#endif

#define PID_DIGITS      10
#define REMOVE_ATTEMPTS 3
#define LAUNCH_PID_ENV  "--env=HYSIM_LAUNCH_PID="

/* Mount points inside the container that hysim's own image leaves empty. */
#define HOST_USR      "/usr"
#define HOST_LD_CACHE "/etc/ld.so.cache"

typedef struct arg_list {
    char **v;
    int n, cap;
    int failed;
} arg_list;

static void add_arg(arg_list *a, const char *fmt, ...)
{
    if (a->failed)
        return;
    if (a->n + 2 > a->cap) {
        int cap = a->cap ? 2 * a->cap : 64;
        char **v = realloc(a->v, (size_t)cap * sizeof *v);
        if (!v) {
            a->failed = 1;
            return;
        }
        a->v = v;
        a->cap = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    int r = vasprintf(&a->v[a->n], fmt, ap);
    va_end(ap);
    if (r < 0) {
        a->failed = 1;
        return;
    }
    a->v[++a->n] = NULL;
}

static void free_args(arg_list *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->v[i]);
    free(a->v);
    memset(a, 0, sizeof *a);
}

/* Runs podman with `argv`; its stdout (and stderr when quiet) go to /dev/null. Exit status, 127 if it cannot run. */
static int run_podman(char *const argv[], int quiet)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, STDIN_FILENO);
            dup2(null, STDOUT_FILENO);
            if (quiet)
                dup2(null, STDERR_FILENO);
        }
        signal(SIGPIPE, SIG_DFL);
        execvp("podman", argv);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static const char *image_of(const hs_scenario *sc)
{
    return sc->containers.image[0] ? sc->containers.image : PODMAN_DEFAULT_IMAGE;
}

int podman_launcher_prepare(const hs_scenario *sc, char *err, size_t errlen)
{
    /* Our settings unless the caller chose others: they make podman work on VMs without CAP_SYS_RESOURCE. */
    setenv("CONTAINERS_CONF", HYSIM_CONTAINERS_DIR "/containers.conf", 0);
    const char *image = image_of(sc);
    char *exists[] = {"podman", "image", "exists", (char *)image, NULL};
    int status = run_podman(exists, 1);
    if (status == 0)
        return 0;
    if (status == 127 || status < 0) {
        snprintf(err, errlen,
                 "--containers needs podman, which cannot be run here (tools/install-deps.sh installs it)");
    } else if (status == 1) {
        if (sc->containers.image[0])
            snprintf(err, errlen, "the scenario's image %s does not exist (podman images lists those there are)",
                     image);
        else
            snprintf(err, errlen, "the image %s does not exist: build it with %s/build-image.sh", image,
                     HYSIM_CONTAINERS_DIR);
    } else {
        char *info[] = {"podman", "info", NULL};
        run_podman(info, 0); /* its error says why podman does not work */
        snprintf(err, errlen,
                 "--containers: podman does not work here (podman image exists exited with %d; "
                 "CONTAINERS_CONF=%s)",
                 status, getenv("CONTAINERS_CONF"));
    }
    return -1;
}

void podman_launcher_container_name(const char *run_id, int server, char *out, size_t len)
{
    snprintf(out, len, "%s-server%d", run_id, server);
}

/* The folder of a "unix:/path" endpoint's socket, or "" for TCP. */
static void socket_dir(const char *endpoint, char *out, size_t len)
{
    out[0] = '\0';
    if (strncmp(endpoint, "unix:", 5) != 0)
        return;
    snprintf(out, len, "%s", endpoint + 5);
    char *slash = strrchr(out, '/');
    if (slash && slash != out)
        *slash = '\0';
    else
        out[0] = '\0';
}

/* argv[0] as an absolute path (PATH searched as execvp would), so the container needs no PATH of ours. */
static int absolute_program(const char *program, char *out, size_t len)
{
    if (program[0] == '/') {
        snprintf(out, len, "%s", program);
        return 0;
    }
    if (strchr(program, '/')) {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd))
            return -1;
        int n = snprintf(out, len, "%s/%s", cwd, program);
        return n > 0 && (size_t)n < len ? 0 : -1;
    }
    const char *path = getenv("PATH");
    for (const char *dir = path ? path : "/usr/local/bin:/usr/bin:/bin"; *dir;) {
        const char *end = strchr(dir, ':');
        size_t dir_len = end ? (size_t)(end - dir) : strlen(dir);
        snprintf(out, len, "%.*s/%s", (int)dir_len, dir, program);
        if (access(out, X_OK) == 0)
            return 0;
        dir = end ? end + 1 : dir + dir_len;
    }
    return -1;
}

/* Bind-mounts DIR at the same path unless hysim's own image already has it through the host's /usr. */
static void mount_same_path(arg_list *a, const char *dir, const char *mode, int host_usr)
{
    if (!dir[0] || !strcmp(dir, "/"))
        return;
    if (host_usr && (!strcmp(dir, HOST_USR) || !strncmp(dir, HOST_USR "/", strlen(HOST_USR) + 1)))
        return;
    add_arg(a, "--volume=%s:%s:%s", dir, dir, mode);
}

/* The caller's settings for the program's libraries, passed on by name (values stay off the command line). */
static void pass_caller_env(arg_list *a)
{
    static const char *const prefixes[] = {
        "HYSIM_", "NCCL_", "CUDA_", "ASAN_OPTIONS=", "UBSAN_OPTIONS=", "LSAN_OPTIONS=", NULL};
    /* set per server below */
    static const char *const own[] = {"HYSIM_ENDPOINT=",  "HYSIM_TOKEN=",    "HYSIM_SERVER=",     "HYSIM_GPUS=",
                                      "HYSIM_HOST_TIME=", "HYSIM_EPOCH_NS=", "HYSIM_LAUNCH_PID=", NULL};
    for (char **e = environ; *e; e++) {
        int skip = 0;
        for (int o = 0; own[o]; o++)
            skip |= !strncmp(*e, own[o], strlen(own[o]));
        for (int p = 0; prefixes[p] && !skip; p++) {
            if (strncmp(*e, prefixes[p], strlen(prefixes[p])) != 0)
                continue;
            const char *eq = strchr(*e, '=');
            if (eq)
                add_arg(a, "--env=%.*s", (int)(eq - *e), *e);
            break;
        }
    }
}

/* Writes pid over the blanks after LAUNCH_PID_ENV in arg (async-signal-safe: it runs between fork and exec). */
static void fill_pid(char *arg, pid_t pid)
{
    char digits[PID_DIGITS];
    int n = 0;
    do {
        digits[n++] = (char)('0' + pid % 10);
        pid /= 10;
    } while (pid > 0 && n < PID_DIGITS);
    char *p = arg + strlen(LAUNCH_PID_ENV);
    while (n > 0)
        *p++ = digits[--n];
    *p = '\0';
}

static void server_command(arg_list *a, const launcher_config *cfg, const char *run_id, int server, const char *program)
{
    const hs_scenario *sc = cfg->scenario;
    int own_image = !strcmp(image_of(sc), PODMAN_DEFAULT_IMAGE);
    char name[256], dir[PATH_MAX + 8], value[PATH_MAX + 64];
    podman_launcher_container_name(run_id, server, name, sizeof name);

    add_arg(a, "podman");
    add_arg(a, "run");
    add_arg(a, "--name=%s", name);
    add_arg(a, "--label=hysim.run=%s", run_id);
    add_arg(a, "--hostname=server%d", server);
    add_arg(a, "--init"); /* PID 1 that passes SIGTERM on, so a stop does not wait out a timeout */
    /* A Unix socket needs no network at all; TCP reaches hysimd on the host's loopback. */
    socket_dir(cfg->endpoint, dir, sizeof dir);
    add_arg(a, "--network=%s", dir[0] ? "none" : "host");
    size_t dlen = strlen(dir); /* the message clocks' file is shared where it lies in the mounted folder */
    int clocks_mounted =
        dlen && cfg->message_clocks && !strncmp(cfg->message_clocks, dir, dlen) && cfg->message_clocks[dlen] == '/';
    if (own_image) {
        add_arg(a, "--volume=" HOST_USR ":" HOST_USR ":ro");
        if (access(HOST_LD_CACHE, R_OK) == 0)
            add_arg(a, "--volume=" HOST_LD_CACHE ":" HOST_LD_CACHE ":ro");
    }
    if (dir[0])
        add_arg(a, "--volume=%s:%s:rw", dir, dir);
    mount_same_path(a, cfg->lib_dir, "ro", own_image);
    snprintf(dir, sizeof dir, "%s", program);
    *strrchr(dir, '/') = '\0';
    mount_same_path(a, dir, "ro", own_image);
    /* The working folder is shared by every server, like a cluster's shared file system. */
    if (getcwd(dir, sizeof dir)) {
        mount_same_path(a, dir, "rw", 0);
        add_arg(a, "--workdir=%s", dir);
    }

    pass_caller_env(a);
    add_arg(a, "--env=HYSIM_ENDPOINT=%s", cfg->endpoint);
    if (cfg->token)
        add_arg(a, "--env=HYSIM_TOKEN"); /* from hysim's environment: a secret stays off the command line */
    /* Filled in by the forked child with its own pid: the pid hysimd waits on. */
    add_arg(a, "--env=HYSIM_LAUNCH_PID=%*s", PID_DIGITS, "");
    add_arg(a, "--env=HYSIM_SERVER=%d", server);
    add_arg(a, "--env=HYSIM_GPUS=%d", sc->servers.gpus_per_server);
    launcher_host_time_string(sc, value, sizeof value);
    add_arg(a, "--env=HYSIM_HOST_TIME=%s", value);
    add_arg(a, "--env=HYSIM_EPOCH_NS=%llu", (unsigned long long)cfg->epoch_ns);
    add_arg(a, "--env=LD_LIBRARY_PATH=%s", cfg->lib_dir);
    if (clocks_mounted)
        add_arg(a, "--env=HYSIM_MESSAGE_CLOCKS=%s", cfg->message_clocks);
#ifdef HYSIM_SANITIZER_PRELOAD
    add_arg(a, "--env=LD_PRELOAD=%s:%s/libhysim.so", HYSIM_SANITIZER_PRELOAD, cfg->lib_dir);
#else
    add_arg(a, "--env=LD_PRELOAD=%s/libhysim.so", cfg->lib_dir);
    add_arg(a, "--env=LD_AUDIT=%s/libhysim_audit.so", cfg->lib_dir); /* interpose/loader/audit.c; launcher.c */
#endif
    add_arg(a, "%s", image_of(sc));
    add_arg(a, "%s", strchr(cfg->argv[0], '/') ? cfg->argv[0] : program);
    for (int i = 1; cfg->argv[i]; i++)
        add_arg(a, "%s", cfg->argv[i]);
}

int podman_launcher_start(const launcher_config *cfg, const char *run_id, pid_t *pids, int max_pids, char *err,
                          size_t errlen)
{
    int servers = cfg->scenario->servers.count;
    if (servers > max_pids) {
        snprintf(err, errlen, "%d servers: at most %d containers can be started", servers, max_pids);
        return -1;
    }
    char program[PATH_MAX];
    if (absolute_program(cfg->argv[0], program, sizeof program) < 0) {
        snprintf(err, errlen, "cannot find %s", cfg->argv[0]);
        return -1;
    }
    for (int s = 0; s < servers; s++) {
        arg_list a = {0};
        server_command(&a, cfg, run_id, s, program);
        pid_t pid = a.failed ? -1 : (fflush(NULL), fork());
        if (pid == 0) {
            for (int i = 0; i < a.n; i++)
                if (!strncmp(a.v[i], LAUNCH_PID_ENV, strlen(LAUNCH_PID_ENV)))
                    fill_pid(a.v[i], getpid());
            signal(SIGPIPE, SIG_DFL);
            execvp("podman", a.v);
            fprintf(stderr, "hysim: cannot run podman: %s\n", strerror(errno));
            _exit(127);
        }
        free_args(&a);
        if (pid < 0) {
            snprintf(err, errlen, "cannot start the container of server %d: %s", s, strerror(errno));
            for (int i = 0; i < s; i++)
                kill(pids[i], SIGKILL);
            for (int i = 0; i < s; i++)
                waitpid(pids[i], NULL, 0);
            podman_launcher_remove(run_id, s, err + strlen(err), errlen - strlen(err));
            return -1;
        }
        pids[s] = pid;
    }
    return servers;
}

int podman_launcher_remove(const char *run_id, int servers, char *err, size_t errlen)
{
    arg_list a = {0};
    add_arg(&a, "podman");
    add_arg(&a, "rm");
    add_arg(&a, "--force");
    add_arg(&a, "--ignore"); /* a container that was never created is not an error */
    add_arg(&a, "--time=0");
    for (int s = 0; s < servers; s++) {
        char name[256];
        podman_launcher_container_name(run_id, s, name, sizeof name);
        add_arg(&a, "%s", name);
    }
    /* A container whose `podman run` client is still exiting can make one attempt fail: try again. */
    int status = -1;
    for (int attempt = 0; attempt < REMOVE_ATTEMPTS && status != 0 && !a.failed; attempt++) {
        if (attempt)
            usleep(300 * 1000);
        status = run_podman(a.v, attempt + 1 < REMOVE_ATTEMPTS);
    }
    free_args(&a);
    if (status == 0)
        return 0;
    snprintf(err, errlen, "podman rm of the containers %s-server* exited with %d: some may be left", run_id, status);
    return -1;
}
