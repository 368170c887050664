/*
 * hysimd background traffic (background.h). Every source of background
 * flows — an explicit flow (once, or every repeat period) or one sender of a
 * pattern (a message every message×8/(load × NIC rate), from a random phase
 * seeded by run.seed, until start + duration) — has its next start time; the
 * next flow is the earliest over sources, ties broken by source index.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "background.h"
#include "daemon_internal.h"
#include "stats_output.h"

typedef struct hs_bg_source {
    uint32_t src, dst;
    uint64_t bytes;
    uint64_t next_ps;   /* UINT64_MAX: exhausted */
    uint64_t period_ps; /* 0: once */
    uint64_t end_ps;    /* no start at or after this; UINT64_MAX: none */
} hs_bg_source;

struct hs_background {
    hs_bg_source *src;
    size_t nsrc;
    uint64_t injected, done;
};

static uint64_t rng_next(uint64_t *state)
{
    uint64_t x = (*state += 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void add_explicit(struct hs_background *bg, const hs_scenario *sc)
{
    for (int i = 0; i < sc->background.nflows; i++) {
        const struct hs_bg_flow *f = &sc->background.flows[i];
        bg->src[bg->nsrc++] = (hs_bg_source){
            .src = f->src_gpu,
            .dst = f->dst_gpu,
            .bytes = f->bytes,
            .next_ps = f->start_ns * 1000,
            .period_ps = f->repeat_ns * 1000,
            .end_ps = UINT64_MAX,
        };
    }
}

/* Destination of GPU g in a permutation: another server (a random shift), a random local GPU. */
static void permutation(const hs_scenario *sc, uint64_t *rng, uint32_t *dst_of)
{
    uint32_t servers = (uint32_t)sc->servers.count, per = (uint32_t)sc->servers.gpus_per_server;
    uint32_t shift = 1 + (uint32_t)(rng_next(rng) % (servers - 1));
    uint32_t *local = hs_xcalloc(per, sizeof(*local));
    for (uint32_t i = 0; i < per; i++)
        local[i] = i;
    for (uint32_t i = per; i > 1; i--) { /* Fisher–Yates */
        uint32_t j = (uint32_t)(rng_next(rng) % i), t = local[i - 1];
        local[i - 1] = local[j];
        local[j] = t;
    }
    for (uint32_t g = 0; g < servers * per; g++)
        dst_of[g] = ((g / per + shift) % servers) * per + local[g % per];
    free(local);
}

static void add_pattern(struct hs_background *bg, const hs_scenario *sc)
{
    uint32_t gpus = (uint32_t)hs_scenario_gpu_count(sc), per = (uint32_t)sc->servers.gpus_per_server;
    uint64_t rng = sc->run.seed ^ 0x6267747261666663ull; /* a stream of its own */
    uint32_t *dst_of = hs_xcalloc(gpus, sizeof(*dst_of));
    if (sc->background.pattern == HS_BG_PERMUTATION) {
        permutation(sc, &rng, dst_of);
    } else {
        for (uint32_t g = 0; g < gpus; g++) /* incast: every GPU of another server */
            dst_of[g] = g / per == sc->background.target_gpu / per ? g : sc->background.target_gpu;
    }
    /* each sender offers load × NIC rate: one message every this many ps */
    double ps = (double)sc->background.message_bytes * 8.0 / (sc->background.load * sc->nics.gbps) * 1000.0;
    uint64_t period = ps < 1.0 ? 1 : (uint64_t)ps;
    uint64_t start = sc->background.start_ns * 1000, end = start + sc->background.duration_ns * 1000;
    for (uint32_t g = 0; g < gpus; g++) {
        if (dst_of[g] == g)
            continue;
        bg->src[bg->nsrc++] = (hs_bg_source){
            .src = g,
            .dst = dst_of[g],
            .bytes = sc->background.message_bytes,
            .next_ps = start + rng_next(&rng) % period,
            .period_ps = period,
            .end_ps = end,
        };
        if (bg->src[bg->nsrc - 1].next_ps >= end)
            bg->src[bg->nsrc - 1].next_ps = UINT64_MAX;
    }
    free(dst_of);
}

struct hs_background *hs_bg_create(const hs_scenario *sc)
{
    if (sc->background.nflows == 0 && sc->background.pattern == HS_BG_NONE)
        return NULL;
    struct hs_background *bg = hs_xcalloc(1, sizeof(*bg));
    bg->src = hs_xcalloc((size_t)sc->background.nflows + (size_t)hs_scenario_gpu_count(sc), sizeof(*bg->src));
    add_explicit(bg, sc);
    if (sc->background.pattern != HS_BG_NONE && sc->servers.count > 1)
        add_pattern(bg, sc);
    return bg;
}

void hs_bg_free(struct hs_background *bg)
{
    if (!bg)
        return;
    free(bg->src);
    free(bg);
}

/* The source with the earliest next start (lowest index on ties); NULL when all are exhausted. */
static hs_bg_source *earliest(struct hs_background *bg)
{
    hs_bg_source *best = NULL;
    for (size_t i = 0; i < bg->nsrc; i++)
        if (bg->src[i].next_ps != UINT64_MAX && (!best || bg->src[i].next_ps < best->next_ps))
            best = &bg->src[i];
    return best;
}

static void advance(hs_bg_source *s)
{
    uint64_t next = s->period_ps && s->next_ps <= UINT64_MAX - s->period_ps ? s->next_ps + s->period_ps : UINT64_MAX;
    s->next_ps = next >= s->end_ps ? UINT64_MAX : next;
}

int hs_bg_inject(hs_daemon *d, uint64_t *next_ps)
{
    struct hs_background *bg = d->bg;
    *next_ps = UINT64_MAX;
    if (!bg)
        return 0;
    uint64_t now = hs_fabric_now_ps(d->fabric);
    hs_bg_source *s;
    while ((s = earliest(bg)) && s->next_ps <= now) {
        /* never in the fabric's past: a start before `now` would have been injected by an earlier step */
        uint64_t id = HS_BG_FLOW_BASE + bg->injected++;
        char err[512] = "";
        if (hs_fabric_add_flow(d->fabric, id, s->src, s->dst, s->bytes, now > s->next_ps ? now : s->next_ps, err,
                               sizeof(err)) < 0) {
            hs_daemon_fail(d, "hysim: background traffic: %s", err);
            return -1;
        }
        hs_statsout_flow_started(d, id, HS_FLOWKIND_BACKGROUND, s->src, s->dst, s->bytes, s->next_ps);
        advance(s);
    }
    *next_ps = s ? s->next_ps : UINT64_MAX;
    return 0;
}

void hs_bg_flow_done(hs_daemon *d, const hs_flow_done *done)
{
    if (d->bg)
        d->bg->done++;
    hs_statsout_flow_done(d, done->flow_id, done->finish_ps);
}

uint64_t hs_bg_in_flight(const hs_daemon *d) { return d->bg ? d->bg->injected - d->bg->done : 0; }

uint64_t hs_bg_injected(const hs_daemon *d) { return d->bg ? d->bg->injected : 0; }
