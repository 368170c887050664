/*
 * hysimd's speculative fabric (run.fabric.speculate): a worker-process
 * fabric runs ahead of the safe time while hysimd would wait, its results
 * held back until exact rules allow them; rollback and back-off
 * (docs/time.md, "Speculation in detail").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_internal.h"
#include "background.h"

/* Re-reports (see fresh()) one run-ahead step may skip before it returns to poll(). */
#define HS_FSPEC_REREPORTS_PER_STEP 8
/* Simulated time one run-ahead step may cover: the window in this many steps. */
#define HS_FSPEC_STEPS_PER_WINDOW 16
/* Back-off (see above). */
#define HS_FSPEC_CLEAN_TO_GROW      8
#define HS_FSPEC_MAX_STRIKES        2
#define HS_FSPEC_MIN_WINDOW_SHIFT   5   /* the window never goes below 1/32 of the configured one */
#define HS_FSPEC_PAUSE_COMPLETIONS  256 /* the first pause */
#define HS_FSPEC_PAUSE_GROWTH_SHIFT 4   /* each pause in a row is 16 times the one before */
#define HS_FSPEC_MAX_PAUSE_SHIFT    16  /* at most 65536 times the first: speculation is off */
#define HS_FSPEC_REPLAYS_PER_STRIKE 256 /* a rollback that re-simulates many flows counts more */
#define HS_FSPEC_PAUSE_PER_REPLAYED 4   /* and pauses for 4 completions per flow it re-simulated */

typedef struct hs_done_list {
    hs_flow_done *v;
    size_t head, len, cap; /* entries v[head .. len-1] */
} hs_done_list;

struct hs_fspec {
    bool on;
    uint64_t window_ps;     /* how far the fabric may be ahead of `applied_ps` now (back-off) */
    uint64_t window_max_ps; /* the configured window */
    uint32_t clean;         /* held completions applied since the last rollback or growth */
    uint32_t strikes;       /* rollbacks since the last clean stretch */
    uint32_t pauses;        /* pauses in a row (no clean stretch at full window between) */
    uint64_t pause_left;    /* completions to apply before running ahead again */
    uint64_t replayed;      /* the fabric's replayed_flows when last weighed */
    bool weigh;             /* a rollback since: weigh its replayed flows */
    uint64_t chunk_ps;      /* simulated time per run-ahead step */
    uint64_t applied_ps;    /* every completion before it is applied (the fabric time the clock sees) */
    uint64_t safe_sent_ps;  /* the last safe time told to the worker */
    hs_done_list held;      /* computed ahead, not applied: finish >= applied_ps */
    hs_done_list reapply;   /* applied, withdrawn by a rollback: the fabric reports them again */
};

/* ------------------------------------------------------------- lists */

static size_t list_size(const hs_done_list *l) { return l->len - l->head; }

static void list_push(hs_done_list *l, const hs_flow_done *x)
{
    if (l->head > 0 && l->len == l->cap) { /* compact before growing */
        memmove(l->v, l->v + l->head, list_size(l) * sizeof(*l->v));
        l->len -= l->head;
        l->head = 0;
    }
    hs_grow((void **)&l->v, &l->cap, l->len + 1, sizeof(*l->v));
    l->v[l->len++] = *x;
}

/* Index of flow `id` in the list, or SIZE_MAX. */
static size_t list_find(const hs_done_list *l, uint64_t id)
{
    for (size_t i = l->head; i < l->len; i++)
        if (l->v[i].flow_id == id)
            return i;
    return SIZE_MAX;
}

static void list_remove(hs_done_list *l, size_t i)
{
    memmove(l->v + i, l->v + i + 1, (l->len - i - 1) * sizeof(*l->v));
    l->len--;
}

/* ------------------------------------------------------------- back-off */

static void set_window(struct hs_fspec *fs, uint64_t window)
{
    uint64_t floor = hs_max_u64(fs->window_max_ps >> HS_FSPEC_MIN_WINDOW_SHIFT, 1);
    fs->window_ps = hs_min_u64(hs_max_u64(window, floor), fs->window_max_ps);
    fs->chunk_ps = hs_max_u64(fs->window_ps / HS_FSPEC_STEPS_PER_WINDOW, 1);
}

static void strike(struct hs_fspec *fs, uint64_t weight)
{
    fs->strikes = (uint32_t)hs_min_u64(fs->strikes + weight, HS_FSPEC_MAX_STRIKES);
    if (weight == 0 || fs->strikes < HS_FSPEC_MAX_STRIKES)
        return;
    fs->strikes = 0;
    fs->pause_left = (uint64_t)HS_FSPEC_PAUSE_COMPLETIONS
                     << hs_min_u64((uint64_t)fs->pauses * HS_FSPEC_PAUSE_GROWTH_SHIFT, HS_FSPEC_MAX_PAUSE_SHIFT);
    fs->pauses++;
}

static void backoff_rollback(struct hs_fspec *fs)
{
    fs->clean = 0;
    fs->weigh = true;
    set_window(fs, fs->window_ps / 2);
    strike(fs, 1);
}

/* The flows the rollbacks since the last call replayed, as extra strikes. Not in
 * hs_fspec_add_flow: reading the counts hands the worker the flows logged so
 * far, and late flows added together should cost one resume. */
static void backoff_weigh(hs_daemon *d)
{
    struct hs_fspec *fs = d->fspec;
    if (!fs->weigh)
        return;
    fs->weigh = false;
    hs_fabric_checkpoint_stats cs;
    hs_fabric_get_checkpoint_stats(d->fabric, &cs);
    uint64_t replayed = cs.replayed_flows - fs->replayed;
    fs->replayed = cs.replayed_flows;
    strike(fs, replayed / HS_FSPEC_REPLAYS_PER_STRIKE);
    /* re-simulating them cost about as much as simulating them: keep that under a quarter of the simulation */
    if (fs->pause_left > 0)
        fs->pause_left = hs_max_u64(fs->pause_left, replayed * HS_FSPEC_PAUSE_PER_REPLAYED);
}

/* A completion applied; `held`: one computed ahead that no rollback withdrew. */
static void backoff_applied(struct hs_fspec *fs, bool held)
{
    if (fs->pause_left > 0)
        fs->pause_left--;
    if (!held || ++fs->clean < HS_FSPEC_CLEAN_TO_GROW)
        return;
    fs->clean = 0;
    fs->strikes = 0;
    if (fs->window_ps == fs->window_max_ps)
        fs->pauses = 0; /* a clean stretch at the full window: speculation pays again */
    set_window(fs, fs->window_ps * 2);
}

/* ------------------------------------------------------------- setup */

void hs_fspec_init(hs_daemon *d, bool worker)
{
    const hs_scenario *sc = &d->sc;
    if (!worker || !sc->run.fabric.speculate)
        return;
    /* a checkpoint at or before the applied time must outlive the window: the
     * worker keeps the newest checkpoints_max, one every interval */
    uint64_t interval = (uint64_t)(sc->run.checkpoint_interval_us * 1e6);
    uint32_t kept = sc->run.checkpoints_max ? sc->run.checkpoints_max : 1;
    uint64_t window = (uint64_t)(sc->run.fabric.speculate_window_us * 1e6);
    window = hs_min_u64(window, interval * (kept - 1));
    if (window == 0)
        return; /* a single checkpoint: nothing could be rolled back */
    struct hs_fspec *fs = hs_xcalloc(1, sizeof(*fs));
    fs->on = true;
    fs->window_max_ps = window;
    set_window(fs, window);
    d->fspec = fs;
}

void hs_fspec_configure(hs_daemon *d)
{
    /* background sources are handed over at the fabric's time (background.c):
     * ahead of the applied time that would be the wrong time */
    if (d->fspec && d->bg)
        d->fspec->on = false;
}

void hs_fspec_free(hs_daemon *d)
{
    if (!d->fspec)
        return;
    free(d->fspec->held.v);
    free(d->fspec->reapply.v);
    free(d->fspec);
    d->fspec = NULL;
}

static bool speculating(const hs_daemon *d) { return d->fspec && d->fspec->on; }

/* ------------------------------------------------------------- queries */

uint64_t hs_fspec_now(const hs_daemon *d)
{
    return speculating(d) ? d->fspec->applied_ps : hs_fabric_now_ps(d->fabric);
}

uint64_t hs_fspec_in_flight(const hs_daemon *d)
{
    uint64_t n = hs_fabric_flows_in_flight(d->fabric);
    if (!speculating(d))
        return n;
    /* in flight in the fabric, or held: not applied; re-simulating ones were applied */
    return n + list_size(&d->fspec->held) - list_size(&d->fspec->reapply);
}

/* ------------------------------------------------------------- rollback */

/* Takes the completions a rollback withdrew: held ones are dropped, applied ones will be reported again. */
static void take_withdrawn(hs_daemon *d)
{
    struct hs_fspec *fs = d->fspec;
    hs_flow_done w;
    while (hs_fabric_next_revision(d->fabric, &w)) {
        size_t i = list_find(&fs->held, w.flow_id);
        if (i != SIZE_MAX) {
            list_remove(&fs->held, i);
            d->sum.fabric_withdrawn++;
        } else {
            list_push(&fs->reapply, &w);
        }
    }
}

int hs_fspec_add_flow(hs_daemon *d, uint64_t id, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t start_ps,
                      char *err, size_t errlen)
{
    uint64_t gen = hs_fabric_generation(d->fabric);
    if (hs_fabric_add_flow(d->fabric, id, src, dst, bytes, start_ps, err, errlen) < 0)
        return -1;
    if (speculating(d) && hs_fabric_generation(d->fabric) != gen) {
        take_withdrawn(d);
        backoff_rollback(d->fspec);
    }
    return 0;
}

/*
 * A completion the fabric has just reported: false when it is the re-report
 * of one applied before a rollback (skip it). A re-report that differs means
 * the rollback was not exact: the run fails.
 */
static bool fresh(hs_daemon *d, const hs_flow_done *done)
{
    struct hs_fspec *fs = d->fspec;
    size_t i = list_find(&fs->reapply, done->flow_id);
    if (i == SIZE_MAX)
        return true;
    if (fs->reapply.v[i].finish_ps != done->finish_ps)
        hs_daemon_fail(d,
                       "hysim: internal error: after a rollback the fabric re-reported flow %llu at %llu ps, "
                       "not at %llu ps as applied",
                       (unsigned long long)done->flow_id, (unsigned long long)done->finish_ps,
                       (unsigned long long)fs->reapply.v[i].finish_ps);
    list_remove(&fs->reapply, i);
    return false;
}

/* ------------------------------------------------------------- stepping */

static int next_completion(hs_daemon *d, uint64_t limit_ps, hs_flow_done *done)
{
    if (!speculating(d))
        return hs_fabric_next_completion(d->fabric, limit_ps, done);
    struct hs_fspec *fs = d->fspec;
    if (limit_ps <= fs->applied_ps)
        return 0;
    backoff_weigh(d);
    /* held completions are in report order: the earliest first */
    if (list_size(&fs->held) > 0 && fs->held.v[fs->held.head].finish_ps < limit_ps) {
        *done = fs->held.v[fs->held.head++];
        fs->applied_ps = done->finish_ps;
        backoff_applied(fs, true);
        return 1;
    }
    /* every completion before the fabric's time has been reported, so none below the limit is left */
    while (!d->failed && hs_fabric_now_ps(d->fabric) < limit_ps) {
        if (hs_fabric_next_completion(d->fabric, limit_ps, done) != 1)
            break;
        if (fresh(d, done)) {
            fs->applied_ps = done->finish_ps;
            backoff_applied(fs, false);
            return 1;
        }
    }
    if (d->failed)
        return 0;
    if (hs_fabric_now_ps(d->fabric) < limit_ps)
        hs_daemon_fail(d, "hysim: internal error: the fabric stopped at %llu ps, short of %llu ps",
                       (unsigned long long)hs_fabric_now_ps(d->fabric), (unsigned long long)limit_ps);
    else
        fs->applied_ps = limit_ps;
    return 0;
}

int hs_fspec_next_completion(hs_daemon *d, uint64_t limit_ps, hs_flow_done *done)
{
    int got = next_completion(d, limit_ps, done);
    /* no flow starts before the applied time: a worker delivers the link samples up to it */
    char err[512] = "";
    if (!d->failed && hs_fabric_set_safe_time(d->fabric, hs_fspec_now(d), err, sizeof(err)) < 0)
        hs_daemon_fail(d, "hysim: the fabric worker: %s", err);
    return got;
}

/* Not paused, nothing held yet, program flows the clock still waits for, the fabric simulating something, within the window. */
static bool worth_running_ahead(const hs_daemon *d)
{
    const struct hs_fspec *fs = d->fspec;
    uint64_t now = hs_fabric_now_ps(d->fabric);
    return fs->pause_left == 0 && list_size(&fs->held) == 0 && hs_fspec_in_flight(d) > hs_bg_in_flight(d) &&
           hs_fabric_flows_in_flight(d->fabric) > 0 && now < fs->applied_ps + fs->window_ps &&
           now < HS_TIME_INF - fs->window_ps;
}

bool hs_fspec_more(const hs_daemon *d)
{
    return speculating(d) && !d->failed && !d->spec_child && worth_running_ahead(d);
}

void hs_fspec_run_ahead(hs_daemon *d)
{
    if (d->fspec && d->fspec->on)
        backoff_weigh(d);
    if (!hs_fspec_more(d))
        return;
    struct hs_fspec *fs = d->fspec;
    char err[512] = "";
    /* no flow will start before the applied time: older checkpoints may go */
    if (fs->applied_ps > fs->safe_sent_ps) {
        if (hs_fabric_set_safe_time(d->fabric, fs->applied_ps, err, sizeof(err)) < 0) {
            hs_daemon_fail(d, "hysim: the fabric worker: %s", err);
            return;
        }
        fs->safe_sent_ps = fs->applied_ps;
    }
    uint64_t now = hs_fabric_now_ps(d->fabric);
    uint64_t limit = hs_min_u64(fs->applied_ps + fs->window_ps, now + fs->chunk_ps);
    for (int i = 0; i < HS_FSPEC_REREPORTS_PER_STEP && !d->failed; i++) {
        hs_flow_done done;
        if (hs_fabric_next_completion(d->fabric, limit, &done) != 1) {
            if (hs_fabric_now_ps(d->fabric) < limit)
                hs_daemon_fail(d, "hysim: internal error: the fabric stopped at %llu ps, short of %llu ps",
                               (unsigned long long)hs_fabric_now_ps(d->fabric), (unsigned long long)limit);
            return;
        }
        if (!fresh(d, &done))
            continue;
        list_push(&fs->held, &done);
        d->sum.fabric_speculative_completions++;
        return; /* up to the next completion */
    }
}

void hs_fspec_summarize(hs_daemon *d)
{
    hs_fabric_checkpoint_stats cs;
    hs_fabric_get_checkpoint_stats(d->fabric, &cs);
    d->sum.fabric_rollbacks = cs.rollbacks;
    d->sum.fabric_replayed_flows = cs.replayed_flows;
}
