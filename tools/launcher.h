/*
 * Starts the program under simulation: one process per server the scenario
 * names, each with the interposer libraries on its library path and the
 * HYSIM_* environment the interposer reads.
 */
#ifndef HYSIM_TOOLS_LAUNCHER_H
#define HYSIM_TOOLS_LAUNCHER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hysim/scenario.h"

typedef struct launcher_config {
    const hs_scenario *scenario;
    const char *endpoint;               /* hysimd's endpoint, "unix:/path" or "tcp:HOST:PORT" */
    const char *token;                  /* the run's secret, HYSIM_TOKEN: hysimd refuses a Register without it */
    const char *lib_dir;                /* folder holding libhysim.so and the replacement libraries */
    uint64_t epoch_ns;                  /* CLOCK_REALTIME at simulated time 0 */
    const char *message_clocks;         /* the file the processes order their messages' clocks in, or NULL */
    char **argv;                        /* program and arguments, NULL-terminated */
    int job;                            /* argv launches the whole job (mpirun, srun): start it once, not per server */
    const unsigned char *local_servers; /* [servers.count]: start only these here (NULL: all) */
} launcher_config;

/*
 * Finds the folder of the interposer libraries: $HYSIM_LIB_DIR, else
 * ../lib beside the hysim executable. 0 on success, -1 with a message.
 */
int launcher_find_lib_dir(char *out, size_t len, char *err, size_t errlen);

/* Resolves argv[0] through PATH as execvp would; -1 with a message if it cannot run. */
int launcher_check_program(const char *program, char *err, size_t errlen);

/*
 * The folder of hysim's measured kernel databases (docs/compute.md):
 * $HYSIM_DATABASE_DIR, else ../share/hysim/profiles beside the hysim
 * executable (the build tree and an installed tree alike). 0 when it is
 * there, -1 when not (out is then "").
 */
int launcher_find_database_dir(char *out, size_t len);

/* Whether argv[0] is a launcher of a whole job across servers (mpirun, mpiexec, srun, ...). */
int launcher_is_job_launcher(const char *program);

/*
 * Forks one process per server, or one for the whole job (cfg->job: its ranks
 * find their server from the launcher's variables, docs/launchers.md);
 * returns how many were started (pids[0..n)) or -1 with a message (then none
 * is left running).
 */
int launcher_start(const launcher_config *cfg, pid_t *pids, int max_pids, char *err, size_t errlen);

/* In the calling process: sets server `server`'s environment (-1: the whole job) and execs cfg->argv; returns
 * only on failure, after saying why (exit 127). cfg->scenario NULL (hysim join): hysimd's Setup gives the rest. */
void launcher_exec(const launcher_config *cfg, int server);

/* The scenario's host_time setting as the interposer reads it ("real", "fixed:1000", ...). */
void launcher_host_time_string(const hs_scenario *sc, char *out, size_t len);

#endif
