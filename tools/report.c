/*
 * hysim run's results (report.h): the per-GPU and congestion lines printed
 * after the two-line summary, the JSON report and the host figures. All read
 * the daemon's run statistics (bridge/stats/run_stats.h) once the run is over. The
 * report holds only simulated figures and names that do not depend on where
 * or how the run happened (no wall time, pids, host names or paths), so the
 * same scenario, program and seed give the same bytes; host.json has the rest.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report.h"
#include "run_stats.h"

#define TOP_LINKS     5
#define GPU_TABLE_MAX 16 /* more GPUs: one line of minimum / mean / maximum */

void report_options_help(FILE *out)
{
    fprintf(out, "  --report FILE.json      write the run's report (schema hysim-report/2, tools/REPORT.md)\n"
                 "  --trace FILE.json       write a Chrome/Perfetto trace: GPU streams, blocking calls,\n"
                 "                          link counters (open it in ui.perfetto.dev or chrome://tracing)\n"
                 "  --out DIR               both, as DIR/report.json and DIR/trace.json (for hysim plot DIR),\n"
                 "                          and the run's wall time and speed as DIR/host.json\n");
}

static const char *option_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (!strncmp(argv[*i], name, n) && argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (*i + 1 >= argc) {
        fprintf(stderr, "hysim: %s needs a value\n", name);
        return NULL;
    }
    return argv[++*i];
}

static bool is_option(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(arg, name, n) && (arg[n] == 0 || arg[n] == '=');
}

/* The report is written after the run: a folder it cannot go in is said before the run, not after it. */
static int check_report_folder(const char *path)
{
    char folder[PATH_MAX];
    snprintf(folder, sizeof folder, "%s", path);
    char *slash = strrchr(folder, '/');
    if (!slash)
        snprintf(folder, sizeof folder, ".");
    else
        slash[slash == folder] = 0; /* "/r.json" → "/" */
    if (access(folder, W_OK) == 0)
        return 0;
    fprintf(stderr, "hysim: --report %s: cannot write in %s: %s\n", path, folder, strerror(errno));
    return -1;
}

int report_parse_option(report_options *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (is_option(a, "--report")) {
        o->report_path = option_value(argc, argv, i, "--report");
        return o->report_path && check_report_folder(o->report_path) == 0 ? 1 : -1;
    }
    if (is_option(a, "--trace"))
        return (o->trace_path = option_value(argc, argv, i, "--trace")) ? 1 : -1;
    if (!is_option(a, "--out"))
        return 0;
    const char *dir = option_value(argc, argv, i, "--out");
    if (!dir)
        return -1;
    if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
        fprintf(stderr, "hysim: --out %s: cannot create the folder: %s\n", dir, strerror(errno));
        return -1;
    }
    snprintf(o->out_report, sizeof(o->out_report), "%s/report.json", dir);
    snprintf(o->out_trace, sizeof(o->out_trace), "%s/trace.json", dir);
    snprintf(o->out_host, sizeof(o->out_host), "%s/host.json", dir);
    o->report_path = o->out_report;
    o->trace_path = o->out_trace;
    o->host_path = o->out_host;
    return 1;
}

/* ------------------------------------------------------------- helpers */

static double s_of(uint64_t ps) { return (double)ps * 1e-12; }

static double pct(uint64_t part, uint64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0.0; }

static double gib(uint64_t bytes) { return (double)bytes / (1024.0 * 1024 * 1024); }

/* Average utilisation of a link over the simulated run, in percent. */
static double link_util(const hs_fabric_link_stats *l, uint64_t end_ps)
{
    return end_ps && l->gbps > 0 ? (double)l->bytes * 8e5 / ((double)end_ps * l->gbps) : 0.0;
}

typedef struct ranked_link {
    hs_fabric_link_stats st;
    double util;
} ranked_link;

static int by_util(const void *a, const void *b)
{
    const ranked_link *x = a, *y = b;
    if (x->util != y->util)
        return x->util < y->util ? 1 : -1;
    return strcmp(x->st.name, y->st.name);
}

static int by_pause(const void *a, const void *b)
{
    const ranked_link *x = a, *y = b;
    if (x->st.pfc_paused_ps != y->st.pfc_paused_ps)
        return x->st.pfc_paused_ps < y->st.pfc_paused_ps ? 1 : -1;
    return strcmp(x->st.name, y->st.name);
}

/* Every link with its average utilisation; the caller frees. */
static ranked_link *all_links(hs_daemon *d, uint64_t end_ps, size_t *n)
{
    size_t count = hs_daemon_link_count(d);
    ranked_link *l = calloc(count ? count : 1, sizeof(*l));
    size_t k = 0;
    for (size_t i = 0; l && i < count; i++)
        if (hs_daemon_link_stats(d, i, &l[k].st) == 0) {
            l[k].util = link_util(&l[k].st, end_ps);
            k++;
        }
    *n = l ? k : 0;
    return l;
}

/* ------------------------------------------------------------- summary */

static void print_gpu_table(hs_daemon *d, uint32_t ngpus, uint64_t end)
{
    fprintf(stderr, "hysim: GPU   busy   idle   comm   peak memory\n");
    for (uint32_t g = 0; g < ngpus; g++) {
        hs_gpu_stats st;
        hs_daemon_gpu_stats(d, g, &st);
        fprintf(stderr, "hysim: %3u %5.1f%% %5.1f%% %5.1f%%   %.2f GiB\n", g, pct(st.busy_ps, end),
                100.0 - pct(st.busy_ps, end), pct(st.comm_ps, end), gib(st.peak_memory_bytes));
    }
}

static void print_gpu_range(hs_daemon *d, uint32_t ngpus, uint64_t end)
{
    double lo = 101, hi = -1, sum = 0, clo = 101, chi = -1, csum = 0;
    uint64_t mem = 0;
    for (uint32_t g = 0; g < ngpus; g++) {
        hs_gpu_stats st;
        hs_daemon_gpu_stats(d, g, &st);
        double b = pct(st.busy_ps, end), c = pct(st.comm_ps, end);
        lo = b < lo ? b : lo, hi = b > hi ? b : hi, sum += b;
        clo = c < clo ? c : clo, chi = c > chi ? c : chi, csum += c;
        mem = st.peak_memory_bytes > mem ? st.peak_memory_bytes : mem;
    }
    fprintf(stderr,
            "hysim: %u GPUs busy %.1f%% / %.1f%% / %.1f%% (min / mean / max), communicating "
            "%.1f%% / %.1f%% / %.1f%%, peak memory up to %.2f GiB\n",
            ngpus, lo, sum / ngpus, hi, clo, csum / ngpus, chi, gib(mem));
}

/* Packets lost or sent again: rare in a lossless fabric, so said whenever there are any. */
static void print_losses(const ranked_link *l, size_t n)
{
    unsigned long long drops = 0, resent = 0;
    for (size_t i = 0; i < n; i++) {
        drops += l[i].st.drops;
        resent += l[i].st.retransmissions;
    }
    if (drops || resent)
        fprintf(stderr, "hysim: fabric: %llu packets dropped, %llu retransmitted (per link: --stats or --report)\n",
                drops, resent);
}

void report_print_details(hs_daemon *d, const report_run *run)
{
    uint64_t end = run->sum->sim_end_ps;
    uint32_t ngpus = hs_daemon_gpu_count(d);
    if (ngpus <= GPU_TABLE_MAX)
        print_gpu_table(d, ngpus, end);
    else if (ngpus)
        print_gpu_range(d, ngpus, end);

    size_t n;
    ranked_link *l = all_links(d, end, &n);
    if (!l || n == 0 || l[0].util < 0) {
        free(l);
        return;
    }
    qsort(l, n, sizeof(*l), by_util);
    if (l[0].st.bytes > 0) {
        fprintf(stderr, "hysim: busiest links (mean utilisation):");
        for (size_t i = 0; i < n && i < TOP_LINKS && l[i].st.bytes > 0; i++)
            fprintf(stderr, "%s %s %.1f%%", i ? "," : "", l[i].st.name, l[i].util);
        fputc('\n', stderr);
    }
    qsort(l, n, sizeof(*l), by_pause);
    if (l[0].st.pfc_paused_ps > 0) {
        fprintf(stderr, "hysim: most PFC-paused links:");
        for (size_t i = 0; i < n && i < TOP_LINKS && l[i].st.pfc_paused_ps > 0; i++)
            fprintf(stderr, "%s %s %.3f us (%llu pauses)", i ? "," : "", l[i].st.name,
                    (double)l[i].st.pfc_paused_ps * 1e-6, (unsigned long long)l[i].st.pfc_pauses);
        fputc('\n', stderr);
    }
    print_losses(l, n);
    free(l);
}

/* ---------------------------------------------------------------- JSON */

static void json_text(FILE *f, const char *s)
{
    fputc('"', f);
    hs_json_put_text(f, s);
    fputc('"', f);
}

static void json_gpus(FILE *f, hs_daemon *d, const report_run *run)
{
    uint64_t end = run->sum->sim_end_ps;
    uint32_t ngpus = hs_daemon_gpu_count(d);
    int per_server = run->sc->servers.gpus_per_server > 0 ? run->sc->servers.gpus_per_server : 1;
    fputs("  \"gpus\": [", f);
    for (uint32_t g = 0; g < ngpus; g++) {
        hs_gpu_stats st;
        hs_daemon_gpu_stats(d, g, &st);
        fprintf(f,
                "%s\n    {\"gpu\": %u, \"server\": %u, \"busy_s\": %.12g, \"idle_s\": %.12g, \"compute_s\": %.12g, "
                "\"communication_s\": %.12g, \"last_activity_s\": %.12g, \"peak_memory_bytes\": %llu, "
                "\"kernels\": %llu, \"copies\": %llu, \"collectives\": %llu}",
                g ? "," : "", g, g / (uint32_t)per_server, s_of(st.busy_ps),
                s_of(end - (st.busy_ps < end ? st.busy_ps : end)), s_of(st.compute_ps), s_of(st.comm_ps),
                s_of(st.last_done_ps), (unsigned long long)st.peak_memory_bytes, (unsigned long long)st.kernels,
                (unsigned long long)st.copies, (unsigned long long)st.collectives);
    }
    fputs("\n  ],\n", f);
}

static void json_link(FILE *f, const ranked_link *l)
{
    fputs("{\"name\": ", f);
    json_text(f, l->st.name);
    fprintf(f,
            ", \"gbps\": %.12g, \"bytes\": %llu, \"packets\": %llu, \"mean_utilisation_percent\": %.6f, "
            "\"pfc_pauses\": %llu, \"pfc_paused_s\": %.12g, \"ecn_marks\": %llu, \"drops\": %llu, "
            "\"retransmissions\": %llu, \"cnps\": %llu, \"max_queue_bytes\": %llu}",
            l->st.gbps, (unsigned long long)l->st.bytes, (unsigned long long)l->st.packets, l->util,
            (unsigned long long)l->st.pfc_pauses, s_of(l->st.pfc_paused_ps), (unsigned long long)l->st.ecn_marks,
            (unsigned long long)l->st.drops, (unsigned long long)l->st.retransmissions, (unsigned long long)l->st.cnps,
            (unsigned long long)l->st.max_queue_bytes);
}

static void json_names(FILE *f, const ranked_link *l, size_t n, bool pauses)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k < TOP_LINKS; i++) {
        if (pauses ? l[i].st.pfc_paused_ps == 0 : l[i].st.bytes == 0)
            break;
        fputs(k++ ? ", " : "", f);
        json_text(f, l[i].st.name);
    }
}

static void json_links(FILE *f, hs_daemon *d, uint64_t end)
{
    size_t n;
    ranked_link *l = all_links(d, end, &n);
    fputs("  \"links\": [", f);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",\n    " : "\n    ", f);
        json_link(f, &l[i]);
    }
    fputs("\n  ],\n  \"congestion\": {\"by_utilisation\": [", f);
    qsort(l, n, sizeof(*l), by_util);
    json_names(f, l, n, false);
    fputs("], \"by_pfc_pause\": [", f);
    qsort(l, n, sizeof(*l), by_pause);
    json_names(f, l, n, true);
    fputs("]}\n", f);
    free(l);
}

/* The scenario file's name without its folders: the same wherever it is read from. */
static const char *base_name(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : path ? path : "";
}

static int close_checked(FILE *f, const char *what, const char *path)
{
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad)
        fprintf(stderr, "hysim: writing the %s %s failed\n", what, path);
    return bad ? -1 : 0;
}

/* default_kernels: every kernel name the per-kernel default timed, most time first. */
static void write_default_kernels(FILE *f, hs_daemon *d)
{
    size_t n = hs_daemon_default_kernels(d, NULL, NULL, NULL, 0);
    const char **names = calloc(n ? n : 1, sizeof *names);
    uint64_t *counts = calloc(n ? n : 1, sizeof *counts), *ps = calloc(n ? n : 1, sizeof *ps);
    if (!names || !counts || !ps)
        n = 0;
    else
        hs_daemon_default_kernels(d, names, counts, ps, n);
    fprintf(f, "  \"default_kernels\": [");
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
        json_text(f, names[i]);
        fprintf(f, ", \"kernels\": %llu, \"time_s\": %.12g}", (unsigned long long)counts[i], s_of(ps[i]));
    }
    fprintf(f, "%s],\n", n ? "\n  " : "");
    free(names);
    free(counts);
    free(ps);
}

int report_write_json(hs_daemon *d, const report_run *run, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "hysim: cannot write the report %s: %s\n", path, strerror(errno));
        return -1;
    }
    const hs_run_summary *s = run->sum;
    double sim = s_of(s->sim_end_ps);
    uint64_t gpu_end = 0;
    for (uint32_t g = 0; g < hs_daemon_gpu_count(d); g++) {
        hs_gpu_stats st;
        hs_daemon_gpu_stats(d, g, &st);
        gpu_end = st.last_done_ps > gpu_end ? st.last_done_ps : gpu_end;
    }
    char description[512];
    hs_scenario_describe(run->sc, description, sizeof description);
    fputs("{\n  \"schema\": \"hysim-report/2\",\n  \"scenario\": {\"file\": ", f);
    json_text(f, base_name(run->scenario_path));
    fputs(", \"name\": ", f);
    json_text(f, run->sc->name);
    fputs(", \"description\": ", f);
    json_text(f, description);
    fprintf(f, "},\n  \"exit_code\": %d,\n  \"error\": ", run->exit_code);
    json_text(f, s->error);
    fprintf(f, ",\n  \"time\": {\"simulated_s\": %.12g, \"simulated_ps\": %llu, \"last_gpu_activity_ps\": %llu},\n",
            sim, (unsigned long long)s->sim_end_ps, (unsigned long long)gpu_end);
    fprintf(f,
            "  \"counts\": {\"processes\": %llu, \"kernels\": %llu, \"copies\": %llu, \"collectives\": %llu, "
            "\"flows\": %llu, \"packet_hops\": %llu},\n",
            (unsigned long long)s->sessions, (unsigned long long)s->kernels, (unsigned long long)s->copies,
            (unsigned long long)s->collectives, (unsigned long long)s->flows, (unsigned long long)s->packet_hops);
    fprintf(
        f,
        "  \"kernels_by_time_source\": {\"profile\": {\"kernels\": %llu, \"time_s\": %.12g}, "
        "\"family\": {\"kernels\": %llu, \"time_s\": %.12g}, \"database\": {\"kernels\": %llu, \"time_s\": %.12g}, "
        "\"roofline\": {\"kernels\": %llu, \"time_s\": %.12g}, \"default\": {\"kernels\": %llu, \"time_s\": %.12g}},\n",
        (unsigned long long)s->kernels_profile, s_of(s->kernel_ps_profile), (unsigned long long)s->kernels_family,
        s_of(s->kernel_ps_family), (unsigned long long)s->kernels_database, s_of(s->kernel_ps_database),
        (unsigned long long)s->kernels_roofline, s_of(s->kernel_ps_roofline), (unsigned long long)s->kernels_default,
        s_of(s->kernel_ps_default));
    write_default_kernels(f, d);
    fprintf(f,
            "  \"connections_refused\": {\"wrong_token\": %llu, \"not_registered\": %llu, \"oversized_frames\": %llu, "
            "\"to_make_room\": %llu},\n",
            (unsigned long long)s->rejected_token, (unsigned long long)s->rejected_unknown,
            (unsigned long long)s->rejected_oversize, (unsigned long long)s->refused_connections);
    /* run.mode (bridge/speculation/speculate.c): answers given ahead of the safe time and how many were later revised */
    fprintf(f,
            "  \"mode\": {\"name\": \"%s\", \"optimistic_answers\": %llu, \"answers_revised\": %llu, "
            "\"max_revision_ns\": %llu, \"speculations\": %llu},\n",
            run->sc->run.mode == HS_MODE_OPTIMISTIC ? "optimistic" : "exact", (unsigned long long)s->optimistic_answers,
            (unsigned long long)s->answers_revised, (unsigned long long)s->max_revision_ns,
            (unsigned long long)s->speculations);
    /* run.fabric (bridge/speculation/fabric_speculation.c): the counts depend on wall-clock timing, never the results */
    fprintf(f,
            "  \"fabric_speculation\": {\"speculative_completions\": %llu, \"withdrawn\": %llu, "
            "\"rollbacks\": %llu, \"replayed_flows\": %llu},\n",
            (unsigned long long)s->fabric_speculative_completions, (unsigned long long)s->fabric_withdrawn,
            (unsigned long long)s->fabric_rollbacks, (unsigned long long)s->fabric_replayed_flows);
    json_gpus(f, d, run);
    json_links(f, d, s->sim_end_ps);
    fputs("}\n", f);
    return close_checked(f, "report", path);
}

int report_write_host_json(hs_daemon *d, const report_run *run, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "hysim: cannot write the host figures %s: %s\n", path, strerror(errno));
        return -1;
    }
    double sim = s_of(run->sum->sim_end_ps);
    uint64_t events = hs_daemon_events(d);
    fprintf(f,
            "{\n  \"schema\": \"hysim-host/1\",\n  \"wall_s\": %.6f,\n  \"slowdown\": %.6g,\n"
            "  \"events\": %llu,\n  \"events_per_s\": %.6g\n}\n",
            run->wall_s, sim > 0 ? run->wall_s / sim : 0.0, (unsigned long long)events,
            run->wall_s > 0 ? (double)events / run->wall_s : 0.0);
    return close_checked(f, "host figures", path);
}
