/*
 * hysim plot: PNG figures of a run from its trace (and the report's scenario
 * name for titles), drawn by gnuplot: the step timeline of every GPU, link
 * utilisation over time, queue depth and PFC pauses over time. The trace is
 * the one `hysim run --trace` writes (one event per line, keys in a fixed
 * order: tools/REPORT.md), so a line-by-line reader is enough.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

#define MAX_SERIES 4096
#define SHOWN      8 /* links per figure: the busiest */

void cli_plot_help(FILE *out)
{
    fprintf(out,
            "usage: hysim plot RUN_DIR\n"
            "       hysim plot REPORT.json TRACE.json OUTDIR\n"
            "\n"
            "Draws PNG figures of a run with gnuplot (Debian: gnuplot-nox):\n"
            "  timeline.png    every GPU's kernels, copies and NCCL operations over time\n"
            "  links.png       utilisation of the %d busiest links over time\n"
            "  queues.png      queue depth of the %d ports that queued most, and PFC-paused\n"
            "                  share of the %d ports paused most\n"
            "RUN_DIR is a folder written by `hysim run --out RUN_DIR` (report.json and\n"
            "trace.json); the figures and their data (*.dat, plot.gp) are written beside them.\n"
            "\n"
            "examples:\n"
            "  hysim run --out run1 scenarios/h200x8.yaml -- build/bin/allreduce_bench -b 1M -e 64M\n"
            "  hysim plot run1\n"
            "  hysim plot run1/report.json run1/trace.json /tmp/figures\n"
            "\n"
            "exit codes: 0 ok, 1 gnuplot is missing or failed, 2 usage error or unreadable input\n",
            SHOWN, SHOWN, SHOWN);
}

typedef struct series {
    char kind[16], link[48];
    double *t, *v;
    size_t n, cap;
    double weight; /* ranks series: the sum of its values, or its largest */
} series;

typedef struct plot_data {
    series *s;
    size_t ns;
    FILE *spans[3]; /* kernel, memcpy, nccl: "gpu start_us end_us" */
    size_t nspans[3];
    int gpu_of_pid[4096];
    int ngpus;
    double t_max;
    bool queue_deepest; /* queue counters are the deepest so far (the fabric's sampler was busy) */
} plot_data;

static series *series_for(plot_data *p, const char *kind, const char *link)
{
    for (size_t i = 0; i < p->ns; i++)
        if (!strcmp(p->s[i].kind, kind) && !strcmp(p->s[i].link, link))
            return &p->s[i];
    if (p->ns >= MAX_SERIES)
        return NULL;
    series *s = &p->s[p->ns++];
    memset(s, 0, sizeof(*s));
    snprintf(s->kind, sizeof(s->kind), "%s", kind);
    snprintf(s->link, sizeof(s->link), "%s", link);
    return s;
}

static void series_add(series *s, double t, double v)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->t = realloc(s->t, s->cap * sizeof(*s->t));
        s->v = realloc(s->v, s->cap * sizeof(*s->v));
        if (!s->t || !s->v) {
            fprintf(stderr, "hysim: out of memory reading the trace\n");
            exit(HS_EXIT_SIMULATION);
        }
    }
    s->t[s->n] = t;
    s->v[s->n++] = v;
    s->weight += v;
}

static void read_event(plot_data *p, const char *line)
{
    int pid;
    unsigned tid, gpu;
    double ts, dur, v;
    char kind[16], link[48], key[32];
    if (sscanf(line, "{\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"GPU %u\"", &pid,
               &gpu) == 2) {
        if (pid >= 0 && pid < 4096)
            p->gpu_of_pid[pid] = (int)gpu + 1;
        p->ngpus = (int)gpu + 1 > p->ngpus ? (int)gpu + 1 : p->ngpus;
    } else if (sscanf(line, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%lf,\"dur\":%lf", &pid, &tid, &ts, &dur) == 4) {
        const char *cat = strstr(line, "\"cat\":\"");
        if (pid < 0 || pid >= 4096 || !p->gpu_of_pid[pid] || !cat)
            return;
        cat += 7;
        int which = !strncmp(cat, "kernel\"", 7) ? 0 : !strncmp(cat, "memcpy\"", 7) ? 1 : 2;
        fprintf(p->spans[which], "%d %.6f %.6f\n", p->gpu_of_pid[pid] - 1, ts, ts + dur);
        p->nspans[which]++;
        p->t_max = ts + dur > p->t_max ? ts + dur : p->t_max;
    } else if (sscanf(line,
                      "{\"ph\":\"C\",\"pid\":0,\"tid\":0,\"ts\":%lf,\"name\":\"%15[a-z] "
                      "%47[^\"]\",\"args\":{\"%31[^\"]\":%lf",
                      &ts, kind, link, key, &v) == 5) {
        p->queue_deepest |= !strcmp(key, "deepest_kib");
        series *s = series_for(p, kind, link);
        if (s)
            series_add(s, ts, v);
        p->t_max = ts > p->t_max ? ts : p->t_max;
    }
}

static int by_weight(const void *a, const void *b)
{
    const series *x = *(const series *const *)a, *y = *(const series *const *)b;
    if (x->weight != y->weight)
        return x->weight < y->weight ? 1 : -1;
    return strcmp(x->link, y->link);
}

/* Writes the busiest series of a kind as gnuplot data blocks; returns how many. */
static int write_series(plot_data *p, const char *kind, const char *path)
{
    const series *pick[MAX_SERIES];
    size_t n = 0;
    for (size_t i = 0; i < p->ns; i++)
        if (!strcmp(p->s[i].kind, kind) && p->s[i].weight > 0)
            pick[n++] = &p->s[i];
    qsort(pick, n, sizeof(*pick), by_weight);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int shown = 0;
    for (size_t i = 0; i < n && shown < SHOWN; i++, shown++) {
        fprintf(f, "%s\"%s\"\n", shown ? "\n\n" : "", pick[i]->link);
        for (size_t k = 0; k < pick[i]->n; k++)
            fprintf(f, "%.6f %.3f\n", pick[i]->t[k], pick[i]->v[k]);
    }
    fclose(f);
    return shown;
}

static void write_script(FILE *g, const char *dir, const char *title, const plot_data *p, int nutil, int nqueue,
                         int npfc, const char *queue_label)
{
    fprintf(g, "set terminal pngcairo size 1400,%d noenhanced font 'sans,10'\nset grid\nset key outside right\n",
            300 + 40 * (p->ngpus > 0 ? p->ngpus : 1));
    fprintf(g, "set output '%s/timeline.png'\nset title \"%s: GPU timeline\"\nset xlabel 'simulated time (us)'\n", dir,
            title);
    fprintf(g, "set yrange [-0.6:%d.6] reverse\nset ytics 1\nset ylabel 'GPU'\nset style fill solid 1.0 noborder\n",
            p->ngpus > 0 ? p->ngpus - 1 : 0);
    fprintf(g, "set xrange [0:%.6f]\n", p->t_max > 0 ? p->t_max : 1);
    static const char *file[3] = {"kernel", "memcpy", "nccl"}, *title_of[3] = {"kernel", "memcpy/memset", "NCCL"},
                      *colour[3] = {"#1f77b4", "#2ca02c", "#ff7f0e"};
    const char *sep = "plot";
    for (int i = 0; i < 3; i++) {
        if (!p->nspans[i])
            continue; /* gnuplot warns about an empty file */
        fprintf(g,
                "%s '%s/timeline_%s.dat' using (($2+$3)/2):1:(($3-$2)/2):(0.35) with boxxyerror lc rgb '%s' title '%s'",
                sep, dir, file[i], colour[i], title_of[i]);
        sep = ", \\\n    ";
    }
    fprintf(g, "%s\n", *sep == 'p' ? "plot NaN title 'no GPU work'" : "");
    fprintf(
        g,
        "unset yrange\nunset ytics\nset ytics auto\nset terminal pngcairo size 1400,600 noenhanced font 'sans,10'\n");
    fprintf(g, "set output '%s/links.png'\nset title \"%s: link utilisation (the %d busiest links)\"\n", dir, title,
            nutil);
    fprintf(g, "set ylabel 'utilisation (%%)'\nset yrange [0:105]\n");
    if (nutil > 0)
        fprintf(g, "plot for [i=0:%d] '%s/links.dat' index i using 1:2 with steps lw 2 title columnheader(1)\n",
                nutil - 1, dir);
    else
        fprintf(g, "set label 1 'no link carried traffic' at graph 0.4,0.5\nplot NaN notitle\nunset label 1\n");
    fprintf(g,
            "set terminal pngcairo size 1400,900 noenhanced font 'sans,10'\nset output '%s/queues.png'\n"
            "set multiplot layout 2,1\nset autoscale y\n",
            dir);
    fprintf(g, "set title \"%s: %s\"\nset ylabel 'KiB'\n", title, queue_label);
    if (nqueue > 0)
        fprintf(g, "plot for [i=0:%d] '%s/queues.dat' index i using 1:2 with steps lw 2 title columnheader(1)\n",
                nqueue - 1, dir);
    else
        fprintf(g, "set label 1 'no switch queue held data' at graph 0.4,0.5\nplot NaN notitle\nunset label 1\n");
    fprintf(g, "set title \"%s: PFC-paused share of time\"\nset ylabel 'paused (%%)'\nset yrange [0:105]\n", title);
    if (npfc > 0)
        fprintf(g, "plot for [i=0:%d] '%s/pfc.dat' index i using 1:2 with steps lw 2 title columnheader(1)\n", npfc - 1,
                dir);
    else
        fprintf(g, "set label 1 'no PFC pauses' at graph 0.45,0.5\nplot NaN notitle\nunset label 1\n");
    fprintf(g, "unset multiplot\n");
}

/* The scenario's name from the report, for titles ("" when there is none). */
static void scenario_name(const char *report, char *out, size_t len)
{
    snprintf(out, len, "hysim");
    FILE *f = report ? fopen(report, "r") : NULL;
    if (!f)
        return;
    char line[4096];
    while (fgets(line, sizeof(line), f)) {
        const char *at = strstr(line, "\"name\": \"");
        if (at) {
            at += 9;
            size_t k = 0;
            for (; at[k] && at[k] != '"' && at[k] != '\\' && k + 1 < len; k++)
                out[k] = at[k] == '\'' ? ' ' : at[k];
            out[k] = 0;
            break;
        }
    }
    fclose(f);
}

static int run_gnuplot(const char *script)
{
    pid_t pid = fork();
    if (pid == 0) {
        execlp("gnuplot", "gnuplot", script, (char *)NULL);
        fprintf(stderr, "hysim: plot needs gnuplot (Debian: apt-get install gnuplot-nox): %s\n", strerror(errno));
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0)
        return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int open_spans(plot_data *p, const char *dir)
{
    static const char *names[3] = {"kernel", "memcpy", "nccl"};
    for (int i = 0; i < 3; i++) {
        char path[4200];
        snprintf(path, sizeof(path), "%s/timeline_%s.dat", dir, names[i]);
        if (!(p->spans[i] = fopen(path, "w"))) {
            fprintf(stderr, "hysim: cannot write %s: %s\n", path, strerror(errno));
            return -1;
        }
        fprintf(p->spans[i], "# gpu start_us end_us\n");
    }
    return 0;
}

int cli_plot(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        cli_plot_help(stdout);
        return HS_EXIT_OK;
    }
    char report[4200], trace[4200], dir[4096];
    if (argc == 2) {
        snprintf(dir, sizeof(dir), "%s", argv[1]);
        snprintf(report, sizeof(report), "%s/report.json", argv[1]);
        snprintf(trace, sizeof(trace), "%s/trace.json", argv[1]);
    } else if (argc == 4) {
        snprintf(report, sizeof(report), "%s", argv[1]);
        snprintf(trace, sizeof(trace), "%s", argv[2]);
        snprintf(dir, sizeof(dir), "%s", argv[3]);
        if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
            fprintf(stderr, "hysim: cannot create %s: %s\n", dir, strerror(errno));
            return HS_EXIT_USAGE;
        }
    } else {
        cli_plot_help(stderr);
        return HS_EXIT_USAGE;
    }
    FILE *in = fopen(trace, "r");
    if (!in) {
        fprintf(stderr, "hysim: cannot read the trace %s: %s (write one with hysim run --out DIR or --trace)\n", trace,
                strerror(errno));
        return HS_EXIT_USAGE;
    }
    static plot_data p;
    memset(&p, 0, sizeof(p));
    p.s = calloc(MAX_SERIES, sizeof(*p.s));
    int rc = HS_EXIT_OK;
    if (!p.s || open_spans(&p, dir) < 0) {
        fclose(in);
        return HS_EXIT_USAGE;
    }
    char *line = NULL;
    size_t cap = 0;
    bool is_trace = false;
    while (getline(&line, &cap, in) > 0) {
        is_trace |= strstr(line, "\"schema\":\"hysim-trace/1\"") != NULL;
        read_event(&p, line);
    }
    free(line);
    fclose(in);
    for (int i = 0; i < 3; i++)
        fclose(p.spans[i]);
    if (!is_trace) {
        fprintf(stderr, "hysim: %s is not a trace of hysim run (schema hysim-trace/1)\n", trace);
        rc = HS_EXIT_USAGE;
    } else {
        char path[4200], title[256];
        scenario_name(report, title, sizeof(title));
        snprintf(path, sizeof(path), "%s/links.dat", dir);
        int nutil = write_series(&p, "util", path);
        snprintf(path, sizeof(path), "%s/queues.dat", dir);
        int nqueue = write_series(&p, "queue", path);
        snprintf(path, sizeof(path), "%s/pfc.dat", dir);
        int npfc = write_series(&p, "pfc", path);
        snprintf(path, sizeof(path), "%s/plot.gp", dir);
        FILE *g = fopen(path, "w");
        if (!g || nutil < 0 || nqueue < 0 || npfc < 0) {
            fprintf(stderr, "hysim: cannot write the figures' data in %s\n", dir);
            rc = HS_EXIT_USAGE;
        } else {
            write_script(g, dir, title, &p, nutil, nqueue, npfc,
                         p.queue_deepest ? "deepest queue so far" : "queue depth");
            fclose(g);
            g = NULL;
            if (run_gnuplot(path) < 0) {
                fprintf(stderr, "hysim: gnuplot failed on %s\n", path);
                rc = HS_EXIT_PROGRAM_FAILED;
            } else {
                printf("hysim: wrote %s/timeline.png, %s/links.png, %s/queues.png\n", dir, dir, dir);
            }
        }
        if (g)
            fclose(g);
    }
    for (size_t i = 0; i < p.ns; i++) {
        free(p.s[i].t);
        free(p.s[i].v);
    }
    free(p.s);
    return rc;
}
