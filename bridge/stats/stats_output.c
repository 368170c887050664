/*
 * hysimd statistics files (stats_output.h). Flows are recorded as they enter
 * the fabric and completed by id; link samples are written to
 * link_timeseries.csv as the fabric reports them, so that a long run keeps
 * nothing per sample in memory.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "background.h"
#include "daemon_internal.h"
#include "stats_output.h"

typedef struct hs_flow_rec {
    uint64_t id, bytes, start_ps, finish_ps; /* finish UINT64_MAX: unfinished */
    uint32_t src, dst;
    uint8_t kind;
} hs_flow_rec;

typedef struct hs_statsout {
    char dir[4096];
    FILE *ts;
    uint64_t interval_ps;
    uint64_t *prev_bytes, *prev_paused; /* per link, at the last sample */
    size_t nlinks;
    uint64_t samples;
    hs_flow_rec *recs;
    size_t nrecs, caprecs;
    hs_u64map index; /* flow id → record index + 1 */
} hs_statsout;

static const char *const KIND_NAMES[] = {"collective", "copy", "background"};

static hs_statsout *out_of(const hs_daemon *d) { return (hs_statsout *)d->stats_out; }

/* One row per link per sample: t_us,link,utilisation,queue_bytes,pfc_paused_fraction over the interval. */
static void on_sample(void *ctx, uint64_t t_ps, const hs_fabric_link_sample *links, size_t n)
{
    hs_daemon *d = ctx;
    hs_statsout *o = out_of(d);
    if (!o->prev_bytes) {
        o->nlinks = n;
        o->prev_bytes = hs_xcalloc(n ? n : 1, sizeof(*o->prev_bytes));
        o->prev_paused = hs_xcalloc(n ? n : 1, sizeof(*o->prev_paused));
    }
    hs_fabric_link_stats ls;
    for (size_t i = 0; i < n && i < o->nlinks; i++) {
        hs_fabric_get_link_stats(d->fabric, i, &ls);
        double util = (double)(links[i].bytes - o->prev_bytes[i]) * 8.0 / (ls.gbps * 1e-3 * (double)o->interval_ps);
        double paused = (double)(links[i].pfc_paused_ps - o->prev_paused[i]) / (double)o->interval_ps;
        fprintf(o->ts, "%.3f,%s,%.6f,%" PRIu64 ",%.6f\n", (double)t_ps * 1e-6, ls.name, util, links[i].queue_bytes,
                paused);
        o->prev_bytes[i] = links[i].bytes;
        o->prev_paused[i] = links[i].pfc_paused_ps;
    }
    o->samples++;
}

int hs_daemon_stats_dir(hs_daemon *d, const char *dir, char *err, size_t errlen)
{
    if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "--stats %s: cannot create the folder: %s", dir, strerror(errno));
        return -1;
    }
    hs_statsout *o = hs_xcalloc(1, sizeof(*o));
    snprintf(o->dir, sizeof(o->dir), "%s", dir);
    char path[sizeof(o->dir) + 32];
    snprintf(path, sizeof(path), "%s/link_timeseries.csv", dir);
    o->ts = fopen(path, "w");
    if (!o->ts) {
        snprintf(err, errlen, "--stats: cannot create %s: %s", path, strerror(errno));
        free(o);
        return -1;
    }
    fprintf(o->ts, "t_us,link,utilisation,queue_bytes,pfc_paused_fraction\n");
    d->stats_out = o;
    o->interval_ps = d->sc.stats.interval_ns * 1000;
    if (o->interval_ps && hs_fabric_sample_links(d->fabric, o->interval_ps, on_sample, d, err, errlen) < 0) {
        hs_statsout_free(d);
        return -1;
    }
    return 0;
}

void hs_statsout_flow_started(hs_daemon *d, uint64_t id, enum hs_flow_kind kind, uint32_t src, uint32_t dst,
                              uint64_t bytes, uint64_t start_ps)
{
    hs_statsout *o = out_of(d);
    if (!o)
        return;
    hs_grow((void **)&o->recs, &o->caprecs, o->nrecs + 1, sizeof(*o->recs));
    o->recs[o->nrecs] = (hs_flow_rec){.id = id,
                                      .bytes = bytes,
                                      .start_ps = start_ps,
                                      .finish_ps = UINT64_MAX,
                                      .src = src,
                                      .dst = dst,
                                      .kind = (uint8_t)kind};
    hs_u64map_put(&o->index, id, (void *)(uintptr_t)(++o->nrecs));
}

void hs_statsout_flow_done(hs_daemon *d, uint64_t id, uint64_t finish_ps)
{
    hs_statsout *o = out_of(d);
    if (!o)
        return;
    uintptr_t at = (uintptr_t)hs_u64map_get(&o->index, id);
    if (at)
        o->recs[at - 1].finish_ps = finish_ps;
}

static double utilisation(const hs_fabric_link_stats *ls, uint64_t sim_ps)
{
    return sim_ps ? (double)ls->bytes * 8.0 / (ls->gbps * 1e-3 * (double)sim_ps) : 0.0;
}

static FILE *open_in(hs_daemon *d, const hs_statsout *o, const char *name)
{
    char path[sizeof(o->dir) + 32];
    snprintf(path, sizeof(path), "%s/%s", o->dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        hs_daemon_fail(d, "hysim: --stats: cannot create %s: %s", path, strerror(errno));
    return f;
}

static int close_checked(hs_daemon *d, const hs_statsout *o, FILE *f, const char *name)
{
    if (ferror(f) | (fclose(f) != 0)) {
        hs_daemon_fail(d, "hysim: --stats: cannot write %s/%s", o->dir, name);
        return -1;
    }
    return 0;
}

static void write_links(hs_daemon *d, const hs_statsout *o, uint64_t sim_ps, hs_fabric_link_stats *total,
                        hs_fabric_link_stats *busiest, double *busiest_util)
{
    FILE *f = open_in(d, o, "links.csv");
    if (!f)
        return;
    fprintf(f, "link,gbps,bytes,utilisation,packets,pfc_pauses,pfc_paused_us,ecn_marks,drops,retransmissions,cnps,"
               "max_queue_bytes\n");
    memset(total, 0, sizeof(*total));
    *busiest_util = -1;
    for (size_t i = 0; i < hs_fabric_link_count(d->fabric); i++) {
        hs_fabric_link_stats ls;
        hs_fabric_get_link_stats(d->fabric, i, &ls);
        double u = utilisation(&ls, sim_ps);
        fprintf(f,
                "%s,%g,%" PRIu64 ",%.6f,%" PRIu64 ",%" PRIu64 ",%.3f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                ",%" PRIu64 "\n",
                ls.name, ls.gbps, ls.bytes, u, ls.packets, ls.pfc_pauses, (double)ls.pfc_paused_ps * 1e-6, ls.ecn_marks,
                ls.drops, ls.retransmissions, ls.cnps, ls.max_queue_bytes);
        total->bytes += ls.bytes;
        total->packets += ls.packets;
        total->pfc_pauses += ls.pfc_pauses;
        total->pfc_paused_ps += ls.pfc_paused_ps;
        total->ecn_marks += ls.ecn_marks;
        total->drops += ls.drops;
        total->retransmissions += ls.retransmissions;
        total->cnps += ls.cnps;
        if (u > *busiest_util) {
            *busiest_util = u;
            *busiest = ls;
        }
    }
    close_checked(d, o, f, "links.csv");
}

static int rec_cmp(const void *a, const void *b)
{
    const hs_flow_rec *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* flows.csv; counts[kind] and bytes[kind] for the summary, [3]: background flows left unfinished. */
static void write_flows(hs_daemon *d, hs_statsout *o, uint64_t counts[4], uint64_t bytes[3])
{
    FILE *f = open_in(d, o, "flows.csv");
    if (!f)
        return;
    qsort(o->recs, o->nrecs, sizeof(*o->recs), rec_cmp); /* background ids come after the program's */
    fprintf(f, "id,src_gpu,dst_gpu,bytes,start_ps,finish_ps,kind\n");
    for (size_t i = 0; i < o->nrecs; i++) {
        const hs_flow_rec *r = &o->recs[i];
        char fin[32] = "";
        if (r->finish_ps != UINT64_MAX)
            snprintf(fin, sizeof(fin), "%" PRIu64, r->finish_ps);
        fprintf(f, "%" PRIu64 ",%u,%u,%" PRIu64 ",%" PRIu64 ",%s,%s\n", r->id, r->src, r->dst, r->bytes, r->start_ps,
                fin, KIND_NAMES[r->kind]);
        counts[r->kind]++;
        bytes[r->kind] += r->bytes;
        counts[3] += r->kind == HS_FLOWKIND_BACKGROUND && r->finish_ps == UINT64_MAX;
    }
    close_checked(d, o, f, "flows.csv");
}

static void put_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static void write_summary(hs_daemon *d, const hs_statsout *o, uint64_t sim_ps, const hs_fabric_link_stats *t,
                          const hs_fabric_link_stats *busiest, double busiest_util, const uint64_t counts[4],
                          const uint64_t bytes[3])
{
    FILE *f = open_in(d, o, "summary.json");
    if (!f)
        return;
    fprintf(f, "{\n  \"version\": %d,\n  \"scenario\": ", HS_STATS_SCHEMA_VERSION);
    put_json_string(f, d->sc.name);
    fprintf(f,
            ",\n  \"sim_time_ps\": %" PRIu64 ",\n  \"sample_interval_ps\": %" PRIu64 ",\n  \"samples\": %" PRIu64
            ",\n  \"links\": %zu,\n",
            sim_ps, o->interval_ps, o->samples, hs_fabric_link_count(d->fabric));
    fprintf(f,
            "  \"flows\": {\"collective\": %" PRIu64 ", \"copy\": %" PRIu64 ", \"background\": %" PRIu64
            ", \"background_unfinished\": %" PRIu64 "},\n",
            counts[0], counts[1], counts[2], counts[3]);
    fprintf(f, "  \"flow_bytes\": {\"collective\": %" PRIu64 ", \"copy\": %" PRIu64 ", \"background\": %" PRIu64 "},\n",
            bytes[0], bytes[1], bytes[2]);
    fprintf(f,
            "  \"totals\": {\"link_bytes\": %" PRIu64 ", \"packets\": %" PRIu64 ", \"pfc_pauses\": %" PRIu64
            ", \"pfc_paused_us\": %.3f, \"ecn_marks\": %" PRIu64 ", \"drops\": %" PRIu64
            ", \"retransmissions\": %" PRIu64 ", \"cnps\": %" PRIu64 "},\n",
            t->bytes, t->packets, t->pfc_pauses, (double)t->pfc_paused_ps * 1e-6, t->ecn_marks, t->drops,
            t->retransmissions, t->cnps);
    fprintf(f, "  \"busiest_link\": {\"name\": ");
    put_json_string(f, busiest_util >= 0 ? busiest->name : "");
    fprintf(f, ", \"utilisation\": %.6f},\n", busiest_util >= 0 ? busiest_util : 0.0);
    fprintf(f, "  \"files\": [\"links.csv\", \"flows.csv\", \"link_timeseries.csv\"]\n}\n");
    close_checked(d, o, f, "summary.json");
}

void hs_statsout_finish(hs_daemon *d)
{
    hs_statsout *o = out_of(d);
    if (!o)
        return;
    uint64_t sim_ps = d->sum.sim_end_ps;
    hs_fabric_link_stats total, busiest;
    memset(&total, 0, sizeof(total));
    memset(&busiest, 0, sizeof(busiest));
    double busiest_util = -1;
    uint64_t counts[4] = {0}, bytes[3] = {0};
    write_links(d, o, sim_ps, &total, &busiest, &busiest_util);
    write_flows(d, o, counts, bytes);
    write_summary(d, o, sim_ps, &total, &busiest, busiest_util, counts, bytes);
    FILE *ts = o->ts;
    o->ts = NULL;
    close_checked(d, o, ts, "link_timeseries.csv");
}

void hs_statsout_free(hs_daemon *d)
{
    hs_statsout *o = out_of(d);
    if (!o)
        return;
    if (o->ts)
        fclose(o->ts);
    free(o->prev_bytes);
    free(o->prev_paused);
    free(o->recs);
    hs_u64map_free(&o->index);
    free(o);
    d->stats_out = NULL;
}
