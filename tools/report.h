/*
 * hysim run's results: the options that ask for them (--report, --trace,
 * --out), the end-of-run summary lines, the JSON report (schema
 * hysim-report/2, documented in tools/REPORT.md: only what was simulated, the
 * same for the same scenario, program and seed) and the host figures beside
 * it (host.json: wall time, slowdown, events per second).
 */
#ifndef HYSIM_TOOLS_REPORT_H
#define HYSIM_TOOLS_REPORT_H

#include <stdio.h>

#include "hysimd.h"
#include "hysim/scenario.h"

typedef struct report_options {
    const char *report_path;                                /* --report FILE.json */
    const char *trace_path;                                 /* --trace FILE.json */
    const char *host_path;                                  /* --out DIR: DIR/host.json; NULL: none */
    char out_report[4096], out_trace[4096], out_host[4096]; /* --out DIR: report.json, trace.json, host.json */
} report_options;

/*
 * Consumes argv[*i] (and its value) when it is one of report's options;
 * 1: consumed, 0: not ours, -1: bad (message printed).
 */
int report_parse_option(report_options *o, int argc, char **argv, int *i);
void report_options_help(FILE *out);

/* What the run gave: the daemon's counters and the wall time. */
typedef struct report_run {
    const hs_scenario *sc;
    const char *scenario_path;
    const hs_run_summary *sum;
    double wall_s;
    int exit_code;
} report_run;

/* After hs_daemon_run: the per-GPU and congestion lines of the summary, on stderr. */
void report_print_details(hs_daemon *d, const report_run *run);
/* Writes the JSON report; 0, or -1 with a message printed. */
int report_write_json(hs_daemon *d, const report_run *run, const char *path);
/* Writes the host figures (schema hysim-host/1); 0, or -1 with a message printed. */
int report_write_host_json(hs_daemon *d, const report_run *run, const char *path);

#endif
