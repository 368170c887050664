/*
 * hysimd: the simulation daemon. It accepts one session per application
 * process, keeps every simulated GPU's streams as an event DAG, expands NCCL
 * collectives into flows for the fabric, and answers blocking calls in exact
 * or optimistic mode (docs/time.md; optimistic: speculate.c). `hysim run` creates it, starts the program, and
 * calls hs_daemon_run until the program is done.
 */
#ifndef HYSIM_BRIDGE_HYSIMD_H
#define HYSIM_BRIDGE_HYSIMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hysim/scenario.h"

typedef struct hs_daemon hs_daemon;

/* What a finished run reports (the CLI prints it; the JSON report comes later). */
typedef struct hs_run_summary {
    uint64_t sim_end_ps;       /* latest simulated time any GPU or process reached */
    uint64_t sessions;         /* processes that registered */
    uint64_t kernels;          /* kernels timed */
    uint64_t kernels_default;  /* ... of which by the per-kernel default */
    uint64_t kernels_profile;  /* ... of which by the profile database (compute.profiles) */
    uint64_t kernels_roofline; /* ... of which by the GEMM roofline (cuBLAS/cuBLASLt calls) */
    uint64_t kernels_family;   /* ... of which by the profile's entries of its name or template at other sizes */
    uint64_t kernels_database; /* ... of which by hysim's measured databases (compute.kernel_database) */
    uint64_t kernel_ps_default, kernel_ps_profile, kernel_ps_roofline, kernel_ps_family,
        kernel_ps_database; /* their summed durations */
    uint64_t copies;
    uint64_t collectives; /* collectives completed (counted once, not per rank) */
    uint64_t flows;       /* fabric flows completed */
    uint64_t packet_hops;
    uint64_t peak_memory_bytes_max; /* largest per-device peak reported by any process */
    /* Connections refused without failing the run (a stray or hostile peer, not the program): */
    uint64_t rejected_token;      /* Register with a token other than the run's (HYSIM_TOKEN) */
    uint64_t rejected_unknown;    /* a connection that sent something other than Register first */
    uint64_t rejected_oversize;   /* frames above HS_FRAME_MAX, or 64 KiB before a Register */
    uint64_t refused_connections; /* unregistered, closed to stay under 256 of them or within the open-file limit */
    /* A thread's first work came after the simulation passed its process's clock: started later. */
    uint64_t late_threads;
    /* host_time real/scaled: flows whose work reached the fabric after it had passed their start (started then) */
    uint64_t late_flows, late_flow_max_ps;
    /* run.mode: optimistic (docs/time.md; bridge/speculation/speculate.c). All 0 in exact mode. */
    uint64_t optimistic_answers;  /* blocking calls answered by speculation, ahead of the safe time */
    uint64_t answers_revised;     /* ... whose answer the authoritative simulation later changed */
    uint64_t max_revision_ns;     /* the largest change of a time such an answer carried (ns) */
    uint64_t speculations;        /* forks to speculate, answered or not */
    uint64_t speculation_wall_ns; /* wall time in them: fork, simulating ahead, reading the answer */
    uint64_t fork_wall_ns;        /* ... of which in fork() itself */
    /* run.fabric.speculate with a worker-process fabric (bridge/speculation/fabric_speculation.c). They depend on
     * wall-clock timing (how far the fabric got while hysimd waited), not on results; all 0 otherwise. */
    uint64_t fabric_speculative_completions; /* completions computed ahead of the safe time, held back */
    uint64_t fabric_withdrawn;               /* ... of those, withdrawn by a rollback before they were applied */
    uint64_t fabric_rollbacks;               /* late flows that rolled the fabric back to a checkpoint */
    uint64_t fabric_replayed_flows;          /* flows handed again to a resumed checkpoint */
    char error[1024];                        /* non-empty: the simulation failed, and why */
    bool program_failed;                     /* ... because a program process exited with an error or was killed */
} hs_run_summary;

/*
 * Builds the fabric for the scenario and listens on `endpoint`
 * ("unix:/path" or "tcp:HOST:PORT"). NULL on error, with the reason in err.
 * When HYSIM_TOKEN is set in the environment, every Register must carry it;
 * other sessions are refused and counted (hs_run_summary.rejected_token).
 */
hs_daemon *hs_daemon_create(const hs_scenario *sc, const char *endpoint, char *err, size_t errlen);

/* The endpoint clients connect to: `endpoint` as given, with a TCP port 0 replaced by the one bound. */
const char *hs_daemon_endpoint(const hs_daemon *d);

/*
 * Serves sessions until every child in `children` has exited and every
 * session has closed. exit_status[i] receives children[i]'s wait status.
 * Returns 0 when the simulation itself went well, -1 when it failed (summary
 * ->error says why; the children still running are then killed). Never
 * hangs on a dead process: a child that exits while others wait on it ends
 * the run with an error naming it.
 */
int hs_daemon_run(hs_daemon *d, const pid_t *children, int nchildren, int *exit_status, hs_run_summary *summary);

/*
 * Servers whose processes are started elsewhere (`hysim join` on another
 * machine; docs/launchers.md, "Several hosts"): the simulated time stays at 0
 * and the run goes on until a process of each has registered. remote[s] != 0
 * for such a server s, for the scenario's servers.count entries. 0, or -1 with
 * a message.
 */
int hs_daemon_expect_remote(hs_daemon *d, const unsigned char *remote, int nservers, char *err, size_t errlen);

/*
 * The kernels the per-kernel default timed, by name, most time first: up to
 * max of them in names (owned by the daemon), counts and their summed time in
 * ps; returns how many there are in all. What a user would profile first.
 */
size_t hs_daemon_default_kernels(hs_daemon *d, const char **names, uint64_t *counts, uint64_t *ps, size_t max);

void hs_daemon_destroy(hs_daemon *d);

#endif
