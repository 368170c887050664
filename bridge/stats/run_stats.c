/*
 * hysimd run statistics (run_stats.h): per-GPU intervals of work, kept until
 * the end of the run so that busy and communication time are unions over
 * streams (concurrent streams do not count twice); the trace-event JSON,
 * written as events happen (one event per line, keys in a fixed order); link
 * counters sampled from the fabric at flow starts and completions; and the
 * progress line.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collective.h"
#include "daemon_internal.h"
#include "run_stats.h"

typedef struct hs_span {
    uint64_t start, end;
    uint8_t comm;
} hs_span;

typedef struct hs_gpu_acc {
    hs_span *spans;
    size_t nspans, capspans;
    hs_gpu_stats st;
    hs_u64map stream_tid; /* stream id → trace tid (stored as tid, never 0) */
    uint32_t next_tid;
    bool named;
} hs_gpu_acc;

typedef struct hs_link_prev {
    char name[sizeof(((hs_fabric_link_stats *)0)->name)]; /* for the fabric's sampler, which then */
    double gbps;                                          /* reads nothing from the fabric */
    uint64_t bytes, paused_ps;
    double util, pfc, queue; /* last values written, -1: none yet */
} hs_link_prev;

struct hs_run_stats {
    hs_gpu_acc *gpus;
    uint32_t ngpus;

    char **labels; /* [0] unused */
    size_t nlabels, caplabels;
    hs_u64map label_of; /* FNV-1a of a name → label */

    FILE *trace;
    char *trace_path; /* rewritten in canonical order at the end */
    bool trace_first;
    bool fabric_named;
    uint64_t period_ps;
    uint64_t sample_ps; /* time of the last link sample */
    bool sampled;
    bool by_fabric; /* the fabric's sampler feeds the counters */
    hs_link_prev *links;
    size_t nlinks;
    hs_u64map host_named; /* session index + 1 → its trace pid + 1 */

    bool progress;
    int64_t wall_start_ms, progress_ms, progress_interval_ms;
    uint64_t ticks;
};

/* ------------------------------------------------------------- state */

static struct hs_run_stats *stats_of(hs_daemon *d)
{
    if (!d->stats) {
        struct hs_run_stats *r = hs_xcalloc(1, sizeof(*r));
        r->ngpus = d->total_gpus;
        r->gpus = hs_xcalloc(r->ngpus ? r->ngpus : 1, sizeof(*r->gpus));
        r->nlabels = 1;
        r->period_ps = HS_STATS_DEFAULT_SAMPLE_PS;
        r->wall_start_ms = r->progress_ms = hs_daemon_now_ms();
        d->stats = r;
    }
    return d->stats;
}

static double ps_to_us(uint64_t ps) { return (double)ps * 1e-6; }

void hs_json_put_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
}

/* Starts one event line: the separator and the opening brace. */
static FILE *event_begin(struct hs_run_stats *r)
{
    fputs(r->trace_first ? "\n" : ",\n", r->trace);
    r->trace_first = false;
    return r->trace;
}

static void meta(struct hs_run_stats *r, int pid, uint32_t tid, const char *what, const char *name)
{
    FILE *f = event_begin(r);
    fprintf(f, "{\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"name\":\"%s\",\"args\":{\"name\":\"", pid, tid, what);
    hs_json_put_text(f, name);
    fputs("\"}}", f);
}

static void sort_index(struct hs_run_stats *r, int pid, int index)
{
    FILE *f = event_begin(r);
    fprintf(f, "{\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%d}}", pid,
            index);
}

/* ------------------------------------------------------------- options */

static void link_table(hs_daemon *d, struct hs_run_stats *r);
static void on_fabric_sample(void *ctx, uint64_t t, const hs_fabric_link_sample *s, size_t n);

int hs_daemon_set_options(hs_daemon *d, const hs_run_options *o, char *err, size_t errlen)
{
    struct hs_run_stats *r = stats_of(d);
    r->progress = o->progress;
    r->progress_interval_ms = o->progress_interval_ms ? o->progress_interval_ms : 1000;
    if (o->sample_period_ps)
        r->period_ps = o->sample_period_ps;
    if (o->trace_path) {
        r->trace = fopen(o->trace_path, "w");
        if (!r->trace) {
            snprintf(err, errlen, "cannot write the trace %s: %m", o->trace_path);
            return -1;
        }
        free(r->trace_path);
        r->trace_path = strdup(o->trace_path);
        fputs("{\"schema\":\"hysim-trace/1\",\"displayTimeUnit\":\"ns\",\"traceEvents\":[", r->trace);
        r->trace_first = true;
        if (o->fabric_sampler) {
            link_table(d, r);
            r->sampled = true;
            if (hs_fabric_sample_links(d->fabric, r->period_ps, on_fabric_sample, d, err, errlen) < 0)
                return -1;
            r->by_fabric = true;
        }
    }
    return 0;
}

/* -------------------------------------------------------------- labels */

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

uint32_t hs_stats_label(hs_daemon *d, const char *name)
{
    struct hs_run_stats *r = stats_of(d);
    if (!r->trace || !name || !*name)
        return 0; /* names are only needed by the trace */
    uint64_t h = fnv1a(name);
    uintptr_t found = (uintptr_t)hs_u64map_get(&r->label_of, h);
    if (found && !strcmp(r->labels[found], name))
        return (uint32_t)found;
    for (size_t i = 1; found && i < r->nlabels; i++) /* a hash collision: rare, so a plain search */
        if (!strcmp(r->labels[i], name))
            return (uint32_t)i;
    hs_grow((void **)&r->labels, &r->caplabels, r->nlabels + 1, sizeof(*r->labels));
    r->labels[r->nlabels] = strdup(name);
    if (!found)
        hs_u64map_put(&r->label_of, h, (void *)(uintptr_t)r->nlabels);
    return (uint32_t)r->nlabels++;
}

uint32_t hs_stats_coll_label(hs_daemon *d, enum hs_coll_kind kind)
{
    return hs_stats_label(d, hs_coll_kind_name(kind));
}

/* -------------------------------------------------------------- GPU ops */

static int gpu_pid(uint32_t gpu) { return (int)gpu + 1; }

static uint32_t stream_tid(struct hs_run_stats *r, uint32_t gpu, uint64_t stream)
{
    hs_gpu_acc *g = &r->gpus[gpu];
    if (!g->named) {
        char name[64];
        snprintf(name, sizeof(name), "GPU %u", gpu);
        meta(r, gpu_pid(gpu), 0, "process_name", name);
        sort_index(r, gpu_pid(gpu), gpu_pid(gpu));
        g->named = true;
    }
    uintptr_t tid = (uintptr_t)hs_u64map_get(&g->stream_tid, stream);
    if (!tid) {
        tid = ++g->next_tid;
        hs_u64map_put(&g->stream_tid, stream, (void *)tid);
        char name[64];
        if (stream == 0)
            snprintf(name, sizeof(name), "stream 0 (legacy default)");
        else
            snprintf(name, sizeof(name), "stream %" PRIu64, stream);
        meta(r, gpu_pid(gpu), (uint32_t)tid, "thread_name", name);
    }
    return (uint32_t)tid;
}

static const char *copy_name(uint8_t kind)
{
    switch (kind) {
    case HS_COPY_H2D: return "memcpy H2D";
    case HS_COPY_D2H: return "memcpy D2H";
    case HS_COPY_D2D: return "memcpy D2D";
    default: return "memcpy H2H";
    }
}

static void trace_op(struct hs_run_stats *r, const hs_op *op)
{
    uint32_t tid = stream_tid(r, op->gpu, op->stream);
    FILE *f = event_begin(r);
    fprintf(f, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%.6f,\"dur\":%.6f,\"name\":\"", gpu_pid(op->gpu), tid,
            ps_to_us(op->start_ps), ps_to_us(op->done_ps - op->start_ps));
    switch (op->kind) {
    case HS_OP_KERNEL:
        hs_json_put_text(f, op->label ? r->labels[op->label] : "kernel");
        fputs("\",\"cat\":\"kernel\",\"args\":{}}", f);
        break;
    case HS_OP_COPY:
        fprintf(f, "%s\",\"cat\":\"memcpy\",\"args\":{\"bytes\":%" PRIu64 "}}", copy_name(op->copy_kind), op->bytes);
        break;
    case HS_OP_MEMSET: fprintf(f, "memset\",\"cat\":\"memcpy\",\"args\":{\"bytes\":%" PRIu64 "}}", op->bytes); break;
    case HS_OP_PEER_COPY:
        fprintf(f, "memcpy D2D %s GPU %u\",\"cat\":\"memcpy\",\"args\":{\"bytes\":%" PRIu64 "}}",
                op->from_peer ? "from" : "to", op->peer, op->bytes);
        break;
    default: { /* HS_OP_COLLECTIVE: its parts' collectives may be freed by now; op->bytes sums them */
        /* the label: the kind, then what NCCL would run ("AllReduce Tree/LL", collective.c) */
        const char *name = op->label ? r->labels[op->label] : "collective";
        int kind_len = (int)strcspn(name, " ");
        fprintf(f, "%s%s\",\"cat\":\"nccl\",\"args\":{\"kind\":\"%.*s\",\"bytes\":%" PRIu64 ",\"parts\":%u", name,
                op->nparts > 1 ? " (group)" : "", kind_len, name, op->bytes, op->nparts);
        if (name[kind_len])
            fprintf(f, ",\"algorithm\":\"%s\"", name + kind_len + 1);
        fputs("}}", f);
        break;
    }
    }
}

void hs_stats_op_done(hs_daemon *d, const hs_op *op)
{
    struct hs_run_stats *r = stats_of(d);
    if (op->gpu >= r->ngpus)
        return;
    hs_gpu_acc *g = &r->gpus[op->gpu];
    bool comm = op->kind == HS_OP_COLLECTIVE || op->kind == HS_OP_PEER_COPY;
    switch (op->kind) {
    case HS_OP_KERNEL: g->st.kernels++; break;
    case HS_OP_COPY:
    case HS_OP_PEER_COPY: g->st.copies++; break;
    case HS_OP_COLLECTIVE: g->st.collectives++; break;
    case HS_OP_MEMSET: break;
    default: return; /* records and event waits take no time */
    }
    g->st.last_done_ps = hs_max_u64(g->st.last_done_ps, op->done_ps);
    if (op->done_ps > op->start_ps) {
        hs_grow((void **)&g->spans, &g->capspans, g->nspans + 1, sizeof(*g->spans));
        g->spans[g->nspans++] = (hs_span){.start = op->start_ps, .end = op->done_ps, .comm = comm};
    }
    if (r->trace)
        trace_op(r, op);
}

void hs_stats_peak_memory(hs_daemon *d, uint32_t gpu, uint64_t bytes)
{
    struct hs_run_stats *r = stats_of(d);
    if (gpu < r->ngpus)
        r->gpus[gpu].st.peak_memory_bytes = hs_max_u64(r->gpus[gpu].st.peak_memory_bytes, bytes);
}

/* ------------------------------------------------------------ host calls */

/* The session's launch index on its server: how many of that server's processes
 * registered before it (0 for the process hysim started there). */
static uint32_t launch_index(const hs_daemon *d, const hs_session *s)
{
    uint32_t k = 0;
    for (size_t i = 0; i < d->nsessions; i++) {
        const hs_session *o = d->sessions[i];
        k += o && o != s && o->registered && o->server == s->server && o->index < s->index;
    }
    return k;
}

/* The program's file name: the same however the program was named (./prog,
 * /abs/path/prog, a container's mount), unlike program_invocation_name. */
static const char *program_base(const hs_session *s)
{
    const char *slash = strrchr(s->program, '/');
    return !s->program[0] ? "process" : slash && slash[1] ? slash + 1 : s->program;
}

/* A host track per process, named and numbered by server and launch index
 * (never by pid or connection order, which differ between runs):
 * pid = after the GPUs, launch index × servers + server. */
void hs_stats_wait_answered(hs_daemon *d, const hs_session *s, const char *what, uint64_t from_ns, uint64_t to_ns)
{
    struct hs_run_stats *r = stats_of(d);
    if (!r->trace || to_ns <= from_ns)
        return;
    uintptr_t named = (uintptr_t)hs_u64map_get(&r->host_named, s->index + 1);
    if (!named) {
        uint32_t k = launch_index(d, s);
        named = 1 + r->ngpus + 1 + (uintptr_t)k * (uint32_t)d->sc.servers.count + s->server;
        hs_u64map_put(&r->host_named, s->index + 1, (void *)named);
        char name[256];
        snprintf(name, sizeof(name), "host: server %u, process %u, %s", s->server, k, program_base(s));
        meta(r, (int)named - 1, 0, "process_name", name);
        sort_index(r, (int)named - 1, (int)named - 1);
        meta(r, (int)named - 1, 1, "thread_name", "blocking calls");
    }
    int pid = (int)named - 1;
    FILE *f = event_begin(r);
    fprintf(f, "{\"ph\":\"X\",\"pid\":%d,\"tid\":1,\"ts\":%.6f,\"dur\":%.6f,\"name\":\"wait for ", pid,
            ps_to_us(hs_ns_to_ps(from_ns)), ps_to_us(hs_ns_to_ps(to_ns - from_ns)));
    hs_json_put_text(f, what);
    fputs("\",\"cat\":\"host\",\"args\":{}}", f);
}

/* ---------------------------------------------------------- link samples */

static void counter(struct hs_run_stats *r, uint64_t t, const char *what, const char *link, const char *key, double v,
                    double *prev)
{
    v = round(v * 1000.0) / 1000.0; /* as written: a change below that is no change */
    if (*prev == v)
        return;
    *prev = v;
    FILE *f = event_begin(r);
    fprintf(f, "{\"ph\":\"C\",\"pid\":0,\"tid\":0,\"ts\":%.6f,\"name\":\"%s ", ps_to_us(t), what);
    hs_json_put_text(f, link);
    fprintf(f, "\",\"args\":{\"%s\":%.3f}}", key, v);
}

/*
 * Counters over [sample_ps, t], written at sample_ps: a counter holds its value
 * until the next one, so each interval's average starts where the interval does.
 */
static void sample_links(hs_daemon *d, struct hs_run_stats *r, uint64_t t)
{
    if (!r->fabric_named) {
        link_table(d, r);
        r->sample_ps = t;
        r->sampled = true;
    }
    if (t <= r->sample_ps && r->sampled && t != 0)
        return;
    uint64_t dt = t - r->sample_ps;
    for (size_t i = 0; i < r->nlinks; i++) {
        hs_fabric_link_stats ls;
        if (hs_fabric_get_link_stats(d->fabric, i, &ls) < 0)
            continue;
        hs_link_prev *p = &r->links[i];
        if (dt > 0) {
            double util = ls.gbps > 0 ? (double)(ls.bytes - p->bytes) * 8e5 / ((double)dt * ls.gbps) : 0;
            double pfc = (double)(ls.pfc_paused_ps - p->paused_ps) * 100.0 / (double)dt;
            counter(r, r->sample_ps, "util", ls.name, "percent", util, &p->util);
            counter(r, r->sample_ps, "pfc", ls.name, "paused_percent", pfc, &p->pfc);
        }
        if (!r->by_fabric) /* the deepest queue so far: all the link statistics tell */
            counter(r, t, "queue", ls.name, "deepest_kib", (double)ls.max_queue_bytes / 1024.0, &p->queue);
        p->bytes = ls.bytes;
        p->paused_ps = ls.pfc_paused_ps;
    }
    r->sample_ps = t;
}

static void link_table(hs_daemon *d, struct hs_run_stats *r)
{
    r->fabric_named = true;
    meta(r, 0, 0, "process_name", "fabric links");
    sort_index(r, 0, 0);
    r->nlinks = hs_fabric_link_count(d->fabric);
    r->links = hs_xcalloc(r->nlinks ? r->nlinks : 1, sizeof(*r->links));
    for (size_t i = 0; i < r->nlinks; i++) {
        r->links[i].util = r->links[i].pfc = r->links[i].queue = -1;
        hs_fabric_link_stats ls;
        if (hs_fabric_get_link_stats(d->fabric, i, &ls) == 0) {
            memcpy(r->links[i].name, ls.name, sizeof(ls.name));
            r->links[i].gbps = ls.gbps;
        }
    }
}

/* The fabric's sampler: counters as they stand at t, queue depth included. */
static void on_fabric_sample(void *ctx, uint64_t t, const hs_fabric_link_sample *s, size_t n)
{
    hs_daemon *d = ctx;
    struct hs_run_stats *r = stats_of(d); /* fresh (no trace) in a speculation child */
    if (!r->trace || t < r->sample_ps)
        return;
    uint64_t dt = t - r->sample_ps;
    for (size_t i = 0; i < n && i < r->nlinks; i++) {
        hs_link_prev *p = &r->links[i];
        if (!p->name[0])
            continue; /* the fabric did not name it */
        if (dt > 0) {
            double util = p->gbps > 0 ? (double)(s[i].bytes - p->bytes) * 8e5 / ((double)dt * p->gbps) : 0;
            double pfc = (double)(s[i].pfc_paused_ps - p->paused_ps) * 100.0 / (double)dt;
            counter(r, r->sample_ps, "util", p->name, "percent", util, &p->util);
            counter(r, r->sample_ps, "pfc", p->name, "paused_percent", pfc, &p->pfc);
        }
        counter(r, t, "queue", p->name, "kib", (double)s[i].queue_bytes / 1024.0, &p->queue);
        p->bytes = s[i].bytes;
        p->paused_ps = s[i].pfc_paused_ps;
    }
    r->sample_ps = t;
}

void hs_stats_flow_started(hs_daemon *d, uint64_t start_ps)
{
    struct hs_run_stats *r = stats_of(d);
    if (r->by_fabric)
        return;
    /* an idle fabric's counters at start_ps are those of now: the busy period starts here.
     * In flight as the daemon sees it: a speculating fabric may have finished flows it holds back */
    if (r->trace && hs_fspec_in_flight(d) == 0 && (!r->sampled || start_ps > r->sample_ps))
        sample_links(d, r, start_ps);
}

void hs_stats_flow_done(hs_daemon *d, uint64_t t_ps)
{
    struct hs_run_stats *r = stats_of(d);
    if (r->trace && !r->by_fabric && (!r->sampled || t_ps >= r->sample_ps + r->period_ps || hs_fspec_in_flight(d) == 0))
        sample_links(d, r, t_ps);
    hs_stats_tick(d);
}

/* -------------------------------------------------------------- progress */

uint64_t hs_daemon_events(const hs_daemon *d)
{
    hs_fabric_stats st;
    hs_fabric_get_stats(d->fabric, &st);
    return st.events + d->steps;
}

void hs_stats_tick(hs_daemon *d)
{
    struct hs_run_stats *r = stats_of(d);
    if (!r->progress || (++r->ticks & 63) != 1)
        return; /* reading the clock on every flow would cost more than the line is worth */
    int64_t now = hs_daemon_now_ms();
    if (now - r->progress_ms < r->progress_interval_ms)
        return;
    r->progress_ms = now;
    double wall = (double)(now - r->wall_start_ms) * 1e-3;
    /* a whole line: the program writes to the same terminal, and a line
     * rewritten in place with \r would run into its output */
    fprintf(stderr, "hysim: simulated %.6f s, wall %.1f s, %.3g events/s\n", (double)d->sum.sim_end_ps * 1e-12, wall,
            wall > 0 ? (double)hs_daemon_events(d) / wall : 0.0);
}

/* -------------------------------------------------------------- results */

uint32_t hs_daemon_gpu_count(const hs_daemon *d) { return d->total_gpus; }

static int span_cmp(const void *a, const void *b)
{
    const hs_span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Length of the union of the spans that match (comm: 0 or 1; 2: all). */
static uint64_t union_ps(const hs_span *sp, size_t n, int which)
{
    uint64_t total = 0, cs = 0, ce = 0;
    bool open = false;
    for (size_t i = 0; i < n; i++) {
        if (which != 2 && sp[i].comm != which)
            continue;
        if (open && sp[i].start <= ce) {
            ce = hs_max_u64(ce, sp[i].end);
            continue;
        }
        if (open)
            total += ce - cs;
        cs = sp[i].start;
        ce = sp[i].end;
        open = true;
    }
    return open ? total + ce - cs : total;
}

void hs_daemon_gpu_stats(const hs_daemon *d, uint32_t gpu, hs_gpu_stats *out)
{
    memset(out, 0, sizeof(*out));
    struct hs_run_stats *r = d->stats;
    if (!r || gpu >= r->ngpus)
        return;
    hs_gpu_acc *g = &r->gpus[gpu];
    if (g->nspans) /* an idle GPU has no array at all */
        qsort(g->spans, g->nspans, sizeof(*g->spans), span_cmp);
    *out = g->st;
    out->busy_ps = union_ps(g->spans, g->nspans, 2);
    out->compute_ps = union_ps(g->spans, g->nspans, 0);
    out->comm_ps = union_ps(g->spans, g->nspans, 1);
}

size_t hs_daemon_link_count(const hs_daemon *d) { return hs_fabric_link_count(d->fabric); }

int hs_daemon_link_stats(const hs_daemon *d, size_t i, hs_fabric_link_stats *out)
{
    return hs_fabric_get_link_stats(d->fabric, i, out);
}

/* ------------------------------------------------------ canonical order */

/* One event line and what orders it: track, metadata first, time, longest first. */
typedef struct trace_line {
    char *text;
    long pid;
    unsigned long tid;
    int meta;
    double ts, dur;
} trace_line;

static void parse_line(trace_line *l)
{
    const char *p = strstr(l->text, "\"pid\":"), *t = strstr(l->text, "\"tid\":");
    const char *ts = strstr(l->text, "\"ts\":"), *dur = strstr(l->text, "\"dur\":");
    l->meta = !strncmp(l->text, "{\"ph\":\"M\",", 10);
    l->pid = p ? strtol(p + 6, NULL, 10) : 0;
    l->tid = t ? strtoul(t + 6, NULL, 10) : 0;
    l->ts = ts && !l->meta ? strtod(ts + 5, NULL) : 0;
    l->dur = dur && !l->meta ? strtod(dur + 6, NULL) : 0;
}

static int line_cmp(const void *a, const void *b)
{
    const trace_line *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->meta != y->meta)
        return x->meta ? -1 : 1;
    if (!x->meta && x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur) /* an enclosing event before what it encloses */
        return x->dur > y->dur ? -1 : 1;
    return strcmp(x->text, y->text);
}

/*
 * Events are written as the run produces them, and work of different
 * processes that happens at one simulated time arrives in whatever order the
 * host ran them: rewritten sorted by track, time and text, the trace is the
 * same bytes for the same simulation. Returns 0, or -1 (errno set).
 */
static int sort_trace(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return 0; /* a pipe or a terminal: it has the events as they came */
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    trace_line *lines = NULL;
    size_t n = 0, cap = 0, len = 0;
    char *head = NULL, *buf = NULL;
    ssize_t got;
    int rc = 0;
    while ((got = getline(&buf, &len, f)) > 0) {
        while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == ','))
            buf[--got] = 0;
        if (!head) {
            head = strdup(buf);
            continue;
        }
        if (buf[0] != '{')
            continue; /* the closing "]}" and the empty first line */
        hs_grow((void **)&lines, &cap, n + 1, sizeof(*lines));
        lines[n].text = strdup(buf);
        parse_line(&lines[n++]);
    }
    free(buf);
    rc |= ferror(f) ? -1 : 0;
    fclose(f);
    if (rc == 0 && n)
        qsort(lines, n, sizeof(*lines), line_cmp);
    if (rc == 0 && head && (f = fopen(path, "w"))) {
        fputs(head, f);
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%s\n%s", i ? "," : "", lines[i].text);
        fputs("\n]}\n", f);
        rc = ferror(f) ? -1 : 0;
        rc |= fclose(f) ? -1 : 0;
    } else {
        rc = -1;
    }
    for (size_t i = 0; i < n; i++)
        free(lines[i].text);
    free(lines);
    free(head);
    return rc;
}

int hs_daemon_finish_trace(hs_daemon *d, char *err, size_t errlen)
{
    struct hs_run_stats *r = stats_of(d);
    if (!r->trace)
        return 0;
    uint64_t end = hs_max_u64(hs_fabric_now_ps(d->fabric), r->sample_ps);
    if (!r->fabric_named)
        link_table(d, r);
    sample_links(d, r, end);                 /* the stretch after the fabric's last sample point */
    for (size_t i = 0; i < r->nlinks; i++) { /* every counter ends at zero with the run */
        hs_fabric_link_stats ls;
        if (hs_fabric_get_link_stats(d->fabric, i, &ls) == 0) {
            counter(r, end, "util", ls.name, "percent", 0, &r->links[i].util);
            counter(r, end, "pfc", ls.name, "paused_percent", 0, &r->links[i].pfc);
            if (r->by_fabric) /* queues are empty once every flow is done */
                counter(r, end, "queue", ls.name, "kib", 0, &r->links[i].queue);
        }
    }
    fputs("\n]}\n", r->trace);
    int bad = ferror(r->trace);
    bad |= fclose(r->trace) != 0;
    r->trace = NULL;
    if (bad || sort_trace(r->trace_path) < 0) {
        snprintf(err, errlen, "writing the trace failed: %m");
        return -1;
    }
    return 0;
}

void hs_stats_free(hs_daemon *d)
{
    struct hs_run_stats *r = d->stats;
    if (!r)
        return;
    if (r->trace)
        fclose(r->trace);
    free(r->trace_path);
    for (uint32_t i = 0; i < r->ngpus; i++) {
        free(r->gpus[i].spans);
        hs_u64map_free(&r->gpus[i].stream_tid);
    }
    free(r->gpus);
    for (size_t i = 1; i < r->nlabels; i++)
        free(r->labels[i]);
    free(r->labels);
    hs_u64map_free(&r->label_of);
    hs_u64map_free(&r->host_named);
    free(r->links);
    free(r);
    d->stats = NULL;
}
