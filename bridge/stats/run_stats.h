/*
 * hysimd run statistics: what each GPU did (busy, compute, communication
 * time, peak memory), the trace of every GPU op and blocking call, link
 * counters sampled from the fabric, and the progress line. The daemon's
 * modules call the hooks below as things happen; `hysim run` sets the
 * options before hs_daemon_run and reads the results after it (the end-of-run
 * summary and `--report`, tools/report.c).
 */
#ifndef HYSIM_BRIDGE_RUN_STATS_H
#define HYSIM_BRIDGE_RUN_STATS_H

#include <stdio.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hysim/coll_kind.h"
#include "hysim/fabric.h"
#include "hysimd.h"

/* ------------------------------------------------------- for `hysim run` */

typedef struct hs_run_options {
    const char *trace_path;        /* Chrome/Perfetto trace-event JSON; NULL: none */
    bool progress;                 /* a progress line on stderr, at most once a second */
    unsigned progress_interval_ms; /* 0: 1000 (tests shorten it) */
    uint64_t sample_period_ps;     /* link counters in the trace; 0: HS_STATS_DEFAULT_SAMPLE_PS */
    /* Sample links with the fabric's sampler (hs_fabric_sample_links: queue depth
     * at each point); false when something else holds it (--stats), and the
     * counters are then sampled at flow starts and completions, with the
     * deepest queue so far in place of the queue depth. */
    bool fabric_sampler;
} hs_run_options;

#define HS_STATS_DEFAULT_SAMPLE_PS 10000000ull /* 10 µs of simulated time */

/* Before hs_daemon_run. 0, or -1 with the reason in err (the trace file cannot be created). */
int hs_daemon_set_options(hs_daemon *d, const hs_run_options *o, char *err, size_t errlen);

/* One GPU over the whole run; times are unions over its streams. */
typedef struct hs_gpu_stats {
    uint64_t busy_ps;           /* some op of any kind running */
    uint64_t compute_ps;        /* kernels, copies, memsets running */
    uint64_t comm_ps;           /* collectives or peer copies running */
    uint64_t last_done_ps;      /* the end of its last op */
    uint64_t peak_memory_bytes; /* as the owning process reported at exit */
    uint64_t kernels, copies, collectives;
} hs_gpu_stats;

/* After hs_daemon_run, before hs_daemon_destroy. */
uint32_t hs_daemon_gpu_count(const hs_daemon *d);
void hs_daemon_gpu_stats(const hs_daemon *d, uint32_t gpu, hs_gpu_stats *out);
size_t hs_daemon_link_count(const hs_daemon *d);
int hs_daemon_link_stats(const hs_daemon *d, size_t i, hs_fabric_link_stats *out);
uint64_t hs_daemon_events(const hs_daemon *d); /* timeline + fabric events simulated */
/*
 * Writes the last link sample and closes the trace (the run must be over).
 * 0, or -1 with the reason in err. Without a trace it does nothing.
 */
int hs_daemon_finish_trace(hs_daemon *d, char *err, size_t errlen);

/* ------------------------------------------------- hooks inside hysimd */

struct hs_op;
struct hs_session;

/* A name for kernel ops in the trace: an index, stable for the run (0: none). */
uint32_t hs_stats_label(hs_daemon *d, const char *name);
/* ... for a collective op: its kind's name (taken at issue: the collective may be gone when the op ends). */
uint32_t hs_stats_coll_label(hs_daemon *d, enum hs_coll_kind kind);
void hs_stats_op_done(hs_daemon *d, const struct hs_op *op);
/* A blocking call of session s, from host time from_ns, answered at to_ns; `what` as hs_wait_describe. */
void hs_stats_wait_answered(hs_daemon *d, const struct hs_session *s, const char *what, uint64_t from_ns,
                            uint64_t to_ns);
void hs_stats_peak_memory(hs_daemon *d, uint32_t gpu, uint64_t bytes);
/* A flow enters the fabric at start_ps / one completed at t_ps: link samples, progress. */
void hs_stats_flow_started(hs_daemon *d, uint64_t start_ps);
void hs_stats_flow_done(hs_daemon *d, uint64_t t_ps);
/* From the poll loop: the progress line, when it is due. */
void hs_stats_tick(hs_daemon *d);
void hs_stats_free(hs_daemon *d);

/* Writes s as the body of a JSON string (escaped, without the quotes). */
void hs_json_put_text(FILE *f, const char *s);

#endif
