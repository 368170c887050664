/*
 * hysimd statistics files (`hysim run --stats DIR`): links.csv (per link
 * direction: counters and utilisation over the run), flows.csv (every fabric
 * flow: collective, copy or background), link_timeseries.csv (every link
 * sampled by the fabric each stats.interval_us of simulated time) and
 * summary.json. scenarios/README.md ("Statistics files") documents the
 * columns and the JSON schema.
 */
#ifndef HYSIM_BRIDGE_STATS_OUTPUT_H
#define HYSIM_BRIDGE_STATS_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "hysimd.h"

#define HS_STATS_SCHEMA_VERSION 1

enum hs_flow_kind { HS_FLOWKIND_COLLECTIVE = 0, HS_FLOWKIND_COPY, HS_FLOWKIND_BACKGROUND };

/*
 * Before hs_daemon_run: creates DIR (one level) and link_timeseries.csv, and
 * turns on flow recording and, when the scenario's stats.interval_us is set,
 * link sampling in the fabric. The other files are written at the end of the
 * run. 0, or -1 with the reason in err.
 */
int hs_daemon_stats_dir(hs_daemon *d, const char *dir, char *err, size_t errlen);

/* ------------------------------------------------- hooks inside hysimd */

void hs_statsout_flow_started(hs_daemon *d, uint64_t id, enum hs_flow_kind kind, uint32_t src, uint32_t dst,
                              uint64_t bytes, uint64_t start_ps);
void hs_statsout_flow_done(hs_daemon *d, uint64_t id, uint64_t finish_ps);
/* At the end of hs_daemon_run: writes the files; fails the run when one cannot be written. */
void hs_statsout_finish(hs_daemon *d);
void hs_statsout_free(hs_daemon *d);

#endif
