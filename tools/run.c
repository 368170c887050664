/*
 * hysim run: loads the scenario, starts hysimd on a private Unix socket
 * (or a TCP port, --endpoint tcp) with a per-run token,
 * launches the program once per server, serves the simulation until the
 * program ends, and prints a short summary of the simulated run.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "hysimd.h"
#include "launcher.h"
#include "podman_launcher.h"
#include "process_tree.h"
#include "report.h"
#include "run_folder.h"
#include "run_stats.h"
#include "stats_output.h"
#include "hysim/scenario.h"

#define MAX_SERVERS      4096
#define HS_TREE_GRACE_MS 2000 /* what is left of the program at the end: SIGTERM, then SIGKILL after this */

void cli_run_help(FILE *out)
{
    fprintf(out, "usage: hysim run [OPTIONS] SCENARIO.yaml -- PROGRAM [ARGS]\n"
                 "\n"
                 "Runs PROGRAM, an unmodified CUDA + NCCL program, once per server of the\n"
                 "scenario's simulated cluster. GPU work is timed by hysim's models, NCCL\n"
                 "traffic crosses the simulated fabric, and the program's clocks read\n"
                 "simulated time, so the program's own output reports the simulated cluster.\n"
                 "A summary of the run is printed on stderr at the end.\n"
                 "\n"
                 "options:\n"
                 "  --endpoint unix         hysimd listens on a Unix socket in a private folder\n"
                 "                          (the default)\n"
                 "  --endpoint tcp          ... on a TCP port of the loopback address (127.0.0.1)\n"
                 "  --endpoint tcp:HOST:PORT  ... on that address and port (port 0: any free one)\n"
                 "  Either way every process must present the run's token (HYSIM_TOKEN, set\n"
                 "  for the program); other connections are refused and counted.\n"
                 "  --containers            one podman container per server (hostname serverN),\n"
                 "                          from the scenario's containers.image or hysim's own\n"
                 "                          image (containers/build-image.sh); all are removed\n"
                 "                          at the end\n"
                 "  --job                   PROGRAM launches the whole job across the servers:\n"
                 "                          start it once, not once per server (implied for\n"
                 "                          mpirun, mpiexec, srun, ...); rank r runs on server\n"
                 "                          r / gpus_per_server (docs/launchers.md)\n"
                 "  --servers LIST          start only these servers here (\"0\" or \"0,1\"); the\n"
                 "                          others join from other hosts with `hysim join`; needs\n"
                 "                          --endpoint tcp:ADDRESS:PORT (docs/launchers.md)\n"
                 "  --token-file FILE       write the run's token to FILE (mode 0600) for them\n"
                 "  --stats DIR             write DIR/links.csv, flows.csv, link_timeseries.csv\n"
                 "                          (every stats.interval_us of simulated time) and\n"
                 "                          summary.json at the end (scenarios/README.md)\n");
    report_options_help(out);
    fprintf(out, "  While the run lasts, a progress line goes to stderr at most once a second\n"
                 "  (simulated time, wall time, events/s) when stderr is a terminal.\n"
                 "\n"
                 "examples:\n"
                 "  hysim run scenarios/h200x8.yaml -- build/bin/allreduce_bench -b 1M -e 1G\n"
                 "  hysim run --out run1 scenarios/h200x8.yaml -- build/bin/allreduce_bench -b 1M -e 64M\n"
                 "  hysim plot run1     # PNG figures from run1/report.json and run1/trace.json\n"
                 "\n"
                 "environment:\n"
                 "  HYSIM_LIB_DIR   folder of the replacement libraries (default: ../lib/hysim\n"
                 "                  installed, or ../lib, beside the hysim executable)\n"
                 "\n"
                 "exit codes: 0 ok, 1 the program failed (a process exited with an error or was\n"
                 "            killed), 2 usage or scenario error (or PROGRAM cannot be started),\n"
                 "            3 simulation error (a deadlock, a signal to hysim such as Ctrl-C)\n");
}

static pid_t g_children[MAX_SERVERS];
static volatile sig_atomic_t g_child_count;

/* Ctrl-C reaches the children too; SIGTERM is passed on so nothing outlives us. */
static volatile sig_atomic_t g_stopped; /* hysim itself got a stopping signal */

static void forward_signal(int sig)
{
    g_stopped = 1;
    for (int i = 0; i < g_child_count; i++)
        kill(g_children[i], sig == SIGINT ? SIGINT : SIGTERM);
}

static void install_signal_forwarding(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A run whose GPUs spent this share of their time or more in kernels timed by
 * the default duration gets a hint: the figures are then mostly that guess. */
#define HS_DEFAULT_KERNEL_HINT_SHARE 0.10

/* Kernels and their GPU time by the compute model's source (docs/compute.md). */
static void print_kernel_sources(const hs_scenario *sc, const hs_run_summary *s)
{
    if (!s->kernels)
        return;
    fprintf(stderr,
            "hysim: kernel time by source: profile %llu kernels %.3f ms, family %llu kernels "
            "%.3f ms, database %llu kernels %.3f ms, roofline %llu kernels %.3f ms, default %llu kernels %.3f ms\n",
            (unsigned long long)s->kernels_profile, (double)s->kernel_ps_profile * 1e-9,
            (unsigned long long)s->kernels_family, (double)s->kernel_ps_family * 1e-9,
            (unsigned long long)s->kernels_database, (double)s->kernel_ps_database * 1e-9,
            (unsigned long long)s->kernels_roofline, (double)s->kernel_ps_roofline * 1e-9,
            (unsigned long long)s->kernels_default, (double)s->kernel_ps_default * 1e-9);
    double gpu_ps = (double)s->sim_end_ps * (double)sc->servers.count * (double)sc->servers.gpus_per_server;
    if (s->kernels_default && gpu_ps > 0 && (double)s->kernel_ps_default >= HS_DEFAULT_KERNEL_HINT_SHARE * gpu_ps)
        fprintf(stderr,
                "hysim: %.0f %% of the GPUs' time went to kernels hysim does not know, timed at "
                "compute.default_kernel_us (%.3g us) each: for real figures record their times on a GPU "
                "(hysim profile) and name the file in compute.profiles\n",
                fmin(100.0, 100.0 * (double)s->kernel_ps_default / gpu_ps), /* streams overlap: at most all */
                (double)sc->compute.default_kernel_ns * 1e-3);
}

/* The kernels the default timed that took the most time: what to profile first (hysim profile). */
static void print_default_kernels(hs_daemon *d)
{
    enum { SHOWN = 5 };
    const char *names[SHOWN];
    uint64_t counts[SHOWN], ps[SHOWN];
    size_t n = hs_daemon_default_kernels(d, names, counts, ps, SHOWN);
    if (!n)
        return;
    fprintf(stderr, "hysim: timed by the default, most time first (%zu kernel names%s):\n", n,
            n > SHOWN ? "; --report lists them all" : "");
    for (size_t i = 0; i < n && i < SHOWN; i++)
        fprintf(stderr, "hysim:   %8.3f ms %7llu x %.100s%s\n", (double)ps[i] * 1e-9, (unsigned long long)counts[i],
                names[i], strlen(names[i]) > 100 ? "..." : "");
}

static void print_summary(const hs_scenario *sc, const hs_run_summary *s, double wall)
{
    double simulated = (double)s->sim_end_ps * 1e-12;
    char description[512];
    hs_scenario_describe(sc, description, sizeof description);
    /* A run shorter than 0.1 s keeps four decimals, so its slowdown does not read "in 0.00 s". */
    fprintf(stderr, "hysim: simulated %.6f s in %.*f s of wall time", simulated, wall < 0.1 ? 4 : 2, wall);
    if (simulated > 0 && wall / simulated >= 0.1)
        fprintf(stderr, " (slowdown %.1fx)", wall / simulated);
    else if (simulated > 0 &&
             wall > 0) /* sleeps and long kernels simulate faster than real time: not "slowdown 0.0x" */
        fprintf(stderr, " (%.0fx faster than real time)", simulated / wall);
    struct rusage self; /* hysim and hysimd in it; the fabric's worker process, if any, is not counted */
    double peak_mib = getrusage(RUSAGE_SELF, &self) == 0 ? (double)self.ru_maxrss / 1024.0 : 0;
    fprintf(stderr, " on %s; hysim's peak memory %.0f MiB\n", description, peak_mib);
    fprintf(stderr,
            "hysim: %llu process%s, %llu kernels (%llu timed by the default duration), "
            "%llu copies, %llu collectives, %llu flows, %llu packet-hops, "
            "peak GPU memory %.2f GiB\n",
            (unsigned long long)s->sessions, s->sessions == 1 ? "" : "es", (unsigned long long)s->kernels,
            (unsigned long long)s->kernels_default, (unsigned long long)s->copies, (unsigned long long)s->collectives,
            (unsigned long long)s->flows, (unsigned long long)s->packet_hops,
            (double)s->peak_memory_bytes_max / (1024.0 * 1024 * 1024));
    print_kernel_sources(sc, s);
    if (sc->run.mode == HS_MODE_OPTIMISTIC)
        fprintf(stderr,
                "hysim: optimistic mode: %llu answers ahead of the safe time, %llu later revised (largest by %llu ns); "
                "%llu speculations took %.3f s of wall time (fork %.3f s)\n",
                (unsigned long long)s->optimistic_answers, (unsigned long long)s->answers_revised,
                (unsigned long long)s->max_revision_ns, (unsigned long long)s->speculations,
                (double)s->speculation_wall_ns * 1e-9, (double)s->fork_wall_ns * 1e-9);
    if (s->late_threads)
        fprintf(stderr,
                "hysim: note: %llu time%s a thread sent work after the simulation had passed its process's clock "
                "(the others all waited, or blocked outside); that work started where the simulation was\n",
                (unsigned long long)s->late_threads, s->late_threads == 1 ? "" : "s");
    if (s->late_flows)
        fprintf(stderr,
                "hysim: note: %llu flow%s reached the fabric after it had passed their start (by at most %.3f us: a "
                "thread's stamp behind its process's clock, host_time real); they started where the fabric was\n",
                (unsigned long long)s->late_flows, s->late_flows == 1 ? "" : "s", (double)s->late_flow_max_ps * 1e-6);
    if (s->rejected_token || s->rejected_unknown || s->rejected_oversize || s->refused_connections)
        fprintf(
            stderr,
            "hysim: refused %llu connection%s with a wrong token, %llu that did not register first, "
            "%llu oversized frame%s, %llu closed to make room (256 unregistered at most, or out of file descriptors)\n",
            (unsigned long long)s->rejected_token, s->rejected_token == 1 ? "" : "s",
            (unsigned long long)s->rejected_unknown, (unsigned long long)s->rejected_oversize,
            s->rejected_oversize == 1 ? "" : "s", (unsigned long long)s->refused_connections);
}

/* A fresh secret per run: 128 random bits in hex. 0, or -1 when the system has no randomness to give. */
static int make_token(char *out, size_t len)
{
    unsigned char bytes[16];
    size_t got = 0;
    while (got < sizeof bytes) {
        ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof bytes && 2 * i + 2 < len; i++)
        snprintf(out + 2 * i, 3, "%02x", bytes[i]);
    return 0;
}

/* --endpoint's value → where hysimd listens; NULL for the default (a private Unix socket). */
static const char *endpoint_choice(const char *value, char *out, size_t len)
{
    if (!strcmp(value, "unix"))
        return NULL;
    if (!strcmp(value, "tcp"))
        snprintf(out, len, "tcp:127.0.0.1:0");
    else if (!strncmp(value, "tcp:", 4) || !strncmp(value, "unix:", 5))
        snprintf(out, len, "%s", value);
    else
        return "";
    return out;
}

/* What is wrong with a command line that is not `[OPTIONS] SCENARIO.yaml -- PROGRAM [ARGS]`;
 * NULL when nothing is. `positional`: the arguments before `--` that are no option. */
static const char *usage_problem(int positional, int separator, int argc)
{
    if (positional == 0)
        return "no scenario given";
    if (positional > 1 && separator < 0)
        return "no `--` between the scenario and the program";
    if (positional > 1)
        return "more than one argument before `--` (the program's arguments go after it)";
    if (separator < 0)
        return "no `-- PROGRAM` after the scenario";
    if (separator + 1 >= argc)
        return "no program after `--`";
    return NULL;
}

/* hysimd's errors begin "hysim: " (the processes print them as they are); the
 * line that quotes one after "hysim: simulation failed: " drops it. */
static const char *without_hysim_prefix(const char *error)
{
    static const char prefix[] = "hysim: ";
    return strncmp(error, prefix, sizeof prefix - 1) ? error : error + sizeof prefix - 1;
}

/* Describes a child's wait status; returns 1 if it counts as a failure. */
static int report_child(int server, pid_t pid, int status)
{
    if (WIFEXITED(status)) {
        if (WEXITSTATUS(status) == 0)
            return 0;
        fprintf(stderr, "hysim: server %d (pid %d) exited with status %d\n", server, (int)pid, WEXITSTATUS(status));
    } else if (WIFSIGNALED(status)) {
        fprintf(stderr, "hysim: server %d (pid %d) was killed by signal %d (%s)\n", server, (int)pid, WTERMSIG(status),
                strsignal(WTERMSIG(status)));
    }
    return 1;
}

/* "0,2,5": the servers started here, into local[0..count); -1 with a message. */
static int parse_servers(const char *text, int count, unsigned char *local, char *err, size_t errlen)
{
    memset(local, 0, (size_t)count);
    const char *p = text;
    int n = 0;
    while (*p) {
        char *end;
        long s = strtol(p, &end, 10);
        if (end == p || s < 0 || s >= count || (*end && *end != ',')) {
            snprintf(err, errlen, "expected server numbers from 0 to %d, separated by commas", count - 1);
            return -1;
        }
        local[s] = 1;
        n++;
        p = *end ? end + 1 : end;
    }
    if (n == 0) {
        snprintf(err, errlen, "no server named");
        return -1;
    }
    return 0;
}

/* The run's token, for the processes other hosts start (hysim join --token-file): readable by its owner only. */
static int write_token_file(const char *path, const char *token, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || fchmod(fd, 0600) < 0 || dprintf(fd, "%s\n", token) < 0) {
        snprintf(err, errlen, "cannot write the token to %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return close(fd);
}

int cli_run(int argc, char **argv)
{
    int separator = -1;
    const char *endpoint_arg = NULL;
    const char *scenario_path = NULL;
    int use_containers = 0, job = 0;
    const char *servers_arg = NULL, *token_file = NULL; /* several hosts: docs/launchers.md */
    const char *stats_dir = NULL;
    static report_options outputs;
    int positional = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) {
            separator = i;
            break;
        }
        if (!strcmp(argv[i], "--endpoint") || !strncmp(argv[i], "--endpoint=", 11)) {
            endpoint_arg = argv[i][10] == '=' ? argv[i] + 11 : (i + 1 < argc ? argv[++i] : "");
            continue;
        }
        int output_opt = report_parse_option(&outputs, argc, argv, &i);
        if (output_opt != 0) {
            if (output_opt < 0)
                return HS_EXIT_USAGE;
            continue;
        }
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            cli_run_help(stdout);
            return HS_EXIT_OK;
        }
        if (!strcmp(argv[i], "--stats") || !strncmp(argv[i], "--stats=", 8)) {
            stats_dir = argv[i][7] == '=' ? argv[i] + 8 : (i + 1 < argc ? argv[++i] : "");
            if (!*stats_dir) {
                fprintf(stderr, "hysim: --stats needs a folder\n");
                return HS_EXIT_USAGE;
            }
            continue;
        }
        if (!strcmp(argv[i], "--containers")) {
            use_containers = 1;
            continue;
        }
        if (!strcmp(argv[i], "--job")) {
            job = 1;
            continue;
        }
        if (!strcmp(argv[i], "--servers") || !strcmp(argv[i], "--token-file")) {
            if (i + 1 >= argc || !strcmp(argv[i + 1], "--")) {
                fprintf(stderr, "hysim run: %s needs a value\n", argv[i]);
                return HS_EXIT_USAGE;
            }
            *(argv[i][2] == 's' ? &servers_arg : &token_file) = argv[i + 1];
            i++;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "hysim run: unknown option %s (`hysim help run` lists the options)\n", argv[i]);
            return HS_EXIT_USAGE;
        }
        scenario_path = argv[i];
        positional++;
    }
    const char *problem = usage_problem(positional, separator, argc);
    if (problem) { /* the problem, not the whole help, so that it stays in sight */
        fprintf(stderr,
                "hysim run: %s\n"
                "usage: hysim run [OPTIONS] SCENARIO.yaml -- PROGRAM [ARGS]   (`hysim help run` for the options)\n",
                problem);
        return HS_EXIT_USAGE;
    }
    char custom_endpoint[512];
    const char *chosen = endpoint_arg ? endpoint_choice(endpoint_arg, custom_endpoint, sizeof custom_endpoint) : NULL;
    if (chosen && !*chosen) {
        fprintf(stderr, "hysim: --endpoint %s: expected unix, tcp or tcp:HOST:PORT\n", endpoint_arg);
        return HS_EXIT_USAGE;
    }
    char **program = argv + separator + 1;
    job |= launcher_is_job_launcher(program[0]);
    if (job && use_containers) {
        fprintf(stderr,
                "hysim run: --containers starts one container per server, and %s launches a whole job "
                "across servers: run it without --containers (docs/launchers.md)\n",
                program[0]);
        return HS_EXIT_USAGE;
    }

    static hs_scenario sc;
    char errors[8192] = "";
    if (hs_scenario_load(scenario_path, &sc, errors, sizeof errors)) {
        fputs(errors, stderr);
        return HS_EXIT_USAGE;
    }
    char err[1024] = "";
    char lib_dir[PATH_MAX];
    if (launcher_find_lib_dir(lib_dir, sizeof lib_dir, err, sizeof err) ||
        launcher_check_program(program[0], err, sizeof err)) {
        fprintf(stderr, "hysim: %s\n", err);
        return HS_EXIT_USAGE;
    }
    if (sc.compute.kernel_database) /* the scenario's own profile first; these time what it lacks */
        launcher_find_database_dir(sc.compute.database_dir, sizeof sc.compute.database_dir);
    static unsigned char local_servers[MAX_SERVERS];
    if (servers_arg && parse_servers(servers_arg, sc.servers.count, local_servers, err, sizeof err) < 0) {
        fprintf(stderr, "hysim run: --servers %s: %s\n", servers_arg, err);
        return HS_EXIT_USAGE;
    }
    if (servers_arg && (use_containers || job || !chosen || strncmp(chosen, "tcp:", 4) != 0)) {
        fprintf(stderr, "hysim run: --servers starts some servers here and the others join from their hosts "
                        "(hysim join): it needs --endpoint tcp:ADDRESS:PORT that they can reach, and neither "
                        "--containers nor a job launcher\n");
        return HS_EXIT_USAGE;
    }
    if (sc.servers.count > MAX_SERVERS) {
        fprintf(stderr, "hysim: %d servers: at most %d are supported\n", sc.servers.count, MAX_SERVERS);
        return HS_EXIT_USAGE;
    }
    if (use_containers && podman_launcher_prepare(&sc, err, sizeof err)) {
        fprintf(stderr, "hysim: %s\n", err);
        return HS_EXIT_USAGE;
    }

    run_folder_sweep(); /* folders of runs killed before they could remove their own */
    char run_dir[64];
    if (run_folder_create(run_dir, sizeof run_dir, err, sizeof err) < 0) {
        fprintf(stderr, "hysim: %s\n", err);
        return HS_EXIT_SIMULATION;
    }
    char message_clocks[sizeof run_dir + 16]; /* interpose/host/message_clocks.c creates it */
    snprintf(message_clocks, sizeof message_clocks, "%s/messages", run_dir);
    char endpoint[sizeof custom_endpoint + 32];
    if (chosen)
        snprintf(endpoint, sizeof endpoint, "%s", chosen);
    else
        snprintf(endpoint, sizeof endpoint, "unix:%s/hysimd.sock", run_dir);
    char token[40];
    if (make_token(token, sizeof token) < 0) {
        fprintf(stderr, "hysim: cannot make a token for the run: %s\n", strerror(errno));
        run_folder_remove(run_dir);
        return HS_EXIT_SIMULATION;
    }
    setenv("HYSIM_TOKEN", token, 1); /* hysimd reads it; the launcher hands it to the program */
    if (token_file && write_token_file(token_file, token, err, sizeof err) < 0) {
        fprintf(stderr, "hysim: %s\n", err);
        run_folder_remove(run_dir);
        return HS_EXIT_USAGE;
    }

    uint64_t epoch = realtime_ns();
    char epoch_text[32];
    snprintf(epoch_text, sizeof epoch_text, "%llu", (unsigned long long)epoch);
    setenv("HYSIM_EPOCH_NS", epoch_text, 1);

    double wall_start = wall_seconds();
    hs_daemon *daemon = hs_daemon_create(&sc, endpoint, err, sizeof err);
    if (!daemon) {
        fprintf(stderr, "hysim: %s\n", err);
        run_folder_remove(run_dir);
        return HS_EXIT_SIMULATION;
    }

    if (stats_dir && hs_daemon_stats_dir(daemon, stats_dir, err, sizeof err) < 0) {
        fprintf(stderr, "hysim: %s\n", err);
        hs_daemon_destroy(daemon);
        run_folder_remove(run_dir);
        return HS_EXIT_USAGE;
    }

    const char *progress_ms = getenv("HYSIM_PROGRESS_INTERVAL_MS"); /* for tests: a shorter run shows it */
    hs_run_options run_options = {.trace_path = outputs.trace_path,
                                  .progress = isatty(STDERR_FILENO),
                                  .progress_interval_ms = progress_ms ? (unsigned)atoi(progress_ms) : 0,
                                  .fabric_sampler = !stats_dir}; /* --stats holds the fabric's sampler */
    if (hs_daemon_set_options(daemon, &run_options, err, sizeof err) < 0) {
        fprintf(stderr, "hysim: %s\n", err);
        hs_daemon_destroy(daemon);
        run_folder_remove(run_dir);
        return HS_EXIT_USAGE;
    }

    if (servers_arg) {
        unsigned char remote[MAX_SERVERS];
        for (int i = 0; i < sc.servers.count; i++)
            remote[i] = !local_servers[i];
        if (hs_daemon_expect_remote(daemon, remote, sc.servers.count, err, sizeof err) < 0) {
            fprintf(stderr, "hysim: %s\n", err);
            hs_daemon_destroy(daemon);
            run_folder_remove(run_dir);
            return HS_EXIT_USAGE;
        }
    }
    install_signal_forwarding();
    if (!use_containers) /* podman's own processes are podman's to end (podman_launcher_remove) */
        process_tree_adopt();
    char run_pid[24]; /* a process that never registers ends itself once this one is gone (interpose/core/client.c) */
    snprintf(run_pid, sizeof run_pid, "%ld", (long)getpid());
    setenv("HYSIM_RUN_PID", run_pid, 1);
    launcher_config cfg = {
        .job = job,
        .local_servers = servers_arg ? local_servers : NULL,
        .scenario = &sc,
        .endpoint = hs_daemon_endpoint(daemon),
        .token = token,
        .lib_dir = lib_dir,
        .epoch_ns = epoch,
        .message_clocks = message_clocks,
        .argv = program,
    };
    const char *run_id = strrchr(run_dir, '/') + 1; /* names the containers: unique while the folder exists */
    int started = use_containers ? podman_launcher_start(&cfg, run_id, g_children, MAX_SERVERS, err, sizeof err)
                                 : launcher_start(&cfg, g_children, MAX_SERVERS, err, sizeof err);
    if (started < 0) {
        fprintf(stderr, "hysim: %s\n", err);
        hs_daemon_destroy(daemon);
        run_folder_remove(run_dir);
        return HS_EXIT_SIMULATION;
    }
    g_child_count = started;

    static int statuses[MAX_SERVERS];
    hs_run_summary summary;
    memset(&summary, 0, sizeof summary);
    int sim_status = hs_daemon_run(daemon, g_children, started, statuses, &summary);
    double wall = wall_seconds() - wall_start;
    bool outputs_failed = hs_daemon_finish_trace(daemon, err, sizeof err) < 0;
    if (outputs_failed)
        fprintf(stderr, "hysim: %s\n", err);
    int containers_left = use_containers && podman_launcher_remove(run_id, started, err, sizeof err);
    if (containers_left)
        fprintf(stderr, "hysim: %s\n", err);

    int failed_children = 0;
    for (int i = 0; i < started; i++)
        failed_children += report_child(i, g_children[i], statuses[i]);
    /* A simulation that stopped because a program process failed (its peers could not go on
     * without it) is the program's failure; one stopped by a signal to hysim, which passed it on
     * to the processes, is not. */
    int code = failed_children ? HS_EXIT_PROGRAM_FAILED : HS_EXIT_OK;
    if (sim_status != 0 && (!summary.program_failed || g_stopped))
        code = HS_EXIT_SIMULATION;
    if (sim_status != 0) {
        fprintf(stderr, "hysim: simulation failed: %s\n",
                summary.error[0] ? without_hysim_prefix(summary.error) : "(no reason given)");
    } else {
        print_summary(&sc, &summary, wall);
        print_default_kernels(daemon);
    }
    report_run results = {
        .sc = &sc, .scenario_path = scenario_path, .sum = &summary, .wall_s = wall, .exit_code = code};
    if (sim_status == 0)
        report_print_details(daemon, &results);
    if (outputs.report_path)
        outputs_failed |= report_write_json(daemon, &results, outputs.report_path) < 0;
    if (outputs.host_path) /* --out: the host figures beside the report */
        outputs_failed |= report_write_host_json(daemon, &results, outputs.host_path) < 0;
    hs_daemon_destroy(daemon);
    int left_running = process_tree_end(HS_TREE_GRACE_MS);
    if (left_running > 0)
        fprintf(stderr, "hysim: stopped %d process%s the program left running\n", left_running,
                left_running == 1 ? "" : "es");
    run_folder_remove(run_dir); /* after hysimd, which removes its socket in it: else the folder stays in /tmp */
    return outputs_failed && code == HS_EXIT_OK ? HS_EXIT_SIMULATION : code;
}
