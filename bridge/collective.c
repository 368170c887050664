/*
 * hysimd collectives: communicators learnt from CommInit ops, and each
 * collective (all ranks' parts with one (comm_key, seq)) expanded into fabric
 * flows.
 *
 * ALL_REDUCE runs as NCCL's ring in rank order: 2(n−1) steps; in step k rank r
 * sends ceil(bytes/n) to rank (r+1)%n. Flow (k, r) starts once ranks r and r+1
 * have both reached the collective on their streams and, for k > 0, flow
 * (k−1, r−1) has completed. Rank r's part completes when its last incoming and
 * last outgoing flows are done. Other kinds fail the run, by name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_internal.h"

typedef struct hs_comm_rank {
    hs_session *s;
    uint32_t gpu;
    bool joined;
    uint64_t next_seq; /* the seq this rank's next collective must carry */
} hs_comm_rank;

typedef struct hs_comm {
    uint64_t key;
    uint32_t nranks;
    hs_comm_rank *ranks;
    hs_u64map colls; /* seq → hs_coll*, unfinished ones */
} hs_comm;

enum { FLOW_IDLE = 0, FLOW_RUNNING = 1, FLOW_DONE = 2 };

typedef struct hs_coll {
    hs_comm *comm;
    uint64_t seq;
    Hysim__CollKind kind;
    uint64_t bytes;
    uint32_t n;            /* ranks */
    uint32_t nparts;       /* parts issued */
    uint32_t parts_done;
    hs_op **parts;         /* [n], by rank (ref) */
    uint32_t nsteps;
    uint64_t chunk;        /* bytes per flow */
    uint8_t *fstate;       /* [nsteps × n]: flow (k, r) at k * n + r */
    uint64_t flows_running;
} hs_coll;

static const char *kind_name(Hysim__CollKind k)
{
    switch (k) {
    case HYSIM__COLL_KIND__ALL_REDUCE: return "AllReduce";
    case HYSIM__COLL_KIND__ALL_GATHER: return "AllGather";
    case HYSIM__COLL_KIND__REDUCE_SCATTER: return "ReduceScatter";
    case HYSIM__COLL_KIND__BROADCAST: return "Broadcast";
    case HYSIM__COLL_KIND__REDUCE: return "Reduce";
    case HYSIM__COLL_KIND__SEND: return "Send";
    case HYSIM__COLL_KIND__RECV: return "Recv";
    case HYSIM__COLL_KIND__ALL_TO_ALL: return "AllToAll";
    default: return "an unknown collective kind";
    }
}

/* ------------------------------------------------------------- communicators */

int hs_coll_comm_init(hs_daemon *d, hs_session *s, const Hysim__Op *m)
{
    const Hysim__CommInit *ci = m->comm_init;
    char who[256];
    if (ci->nranks == 0 || ci->rank >= ci->nranks) {
        hs_daemon_fail(d, "hysim: %s: CommInit of comm 0x%llx with rank %u of %u ranks",
                       hs_session_name(s, who, sizeof(who)), (unsigned long long)ci->comm_key, ci->rank,
                       ci->nranks);
        return -1;
    }
    hs_comm *c = hs_u64map_get(&d->comms, ci->comm_key);
    if (!c) {
        c = hs_xcalloc(1, sizeof(*c));
        c->key = ci->comm_key;
        c->nranks = ci->nranks;
        c->ranks = hs_xcalloc(c->nranks, sizeof(*c->ranks));
        hs_u64map_put(&d->comms, c->key, c);
    } else if (c->nranks != ci->nranks) {
        hs_daemon_fail(d, "hysim: %s: CommInit of comm 0x%llx with %u ranks, but other ranks said %u",
                       hs_session_name(s, who, sizeof(who)), (unsigned long long)ci->comm_key, ci->nranks,
                       c->nranks);
        return -1;
    }
    hs_comm_rank *r = &c->ranks[ci->rank];
    if (r->joined) {
        hs_daemon_fail(d, "hysim: %s: rank %u of comm 0x%llx joined twice",
                       hs_session_name(s, who, sizeof(who)), ci->rank, (unsigned long long)ci->comm_key);
        return -1;
    }
    r->s = s;
    r->gpu = m->gpu;
    r->joined = true;
    return 0;
}

int hs_coll_comm_destroy(hs_daemon *d, hs_session *s, const Hysim__Op *m)
{
    const Hysim__CommDestroy *cd = m->comm_destroy;
    hs_comm *c = hs_u64map_get(&d->comms, cd->comm_key);
    if (!c || cd->rank >= c->nranks || !c->ranks[cd->rank].joined || c->ranks[cd->rank].s != s) {
        char who[256];
        hs_daemon_fail(d, "hysim: %s: CommDestroy of rank %u of comm 0x%llx, which it never joined",
                       hs_session_name(s, who, sizeof(who)), cd->rank, (unsigned long long)cd->comm_key);
        return -1;
    }
    /* collectives already issued still run; the rank may join again later */
    c->ranks[cd->rank].joined = false;
    c->ranks[cd->rank].next_seq = 0;
    return 0;
}

/* ------------------------------------------------------------- collectives */

static void coll_free(hs_coll *c)
{
    for (uint32_t r = 0; r < c->n; r++)
        hs_op_unref(c->parts[r]);
    free(c->parts);
    free(c->fstate);
    free(c);
}

int hs_coll_attach(hs_daemon *d, hs_session *s, const Hysim__Op *m, hs_op *op)
{
    const Hysim__Collective *k = m->collective;
    char who[256];
    hs_session_name(s, who, sizeof(who));
    hs_comm *c = hs_u64map_get(&d->comms, k->comm_key);
    if (!c || k->rank >= c->nranks || !c->ranks[k->rank].joined || c->ranks[k->rank].s != s) {
        hs_daemon_fail(d, "hysim: %s: collective on comm 0x%llx as rank %u, which it never joined (no CommInit)",
                       who, (unsigned long long)k->comm_key, k->rank);
        return -1;
    }
    hs_comm_rank *cr = &c->ranks[k->rank];
    if (cr->gpu != m->gpu) {
        hs_daemon_fail(d, "hysim: %s: rank %u of comm 0x%llx joined on GPU %u but issues a collective on GPU %u",
                       who, k->rank, (unsigned long long)k->comm_key, cr->gpu, m->gpu);
        return -1;
    }
    if (k->kind != HYSIM__COLL_KIND__ALL_REDUCE) {
        hs_daemon_fail(d, "hysim: %s is not supported yet", kind_name(k->kind));
        return -1;
    }
    if (k->seq != cr->next_seq) {
        hs_daemon_fail(d, "hysim: %s: collective seq %llu on comm 0x%llx rank %u, expected seq %llu",
                       who, (unsigned long long)k->seq, (unsigned long long)k->comm_key, k->rank,
                       (unsigned long long)cr->next_seq);
        return -1;
    }
    hs_coll *co = hs_u64map_get(&c->colls, k->seq);
    if (!co) {
        co = hs_xcalloc(1, sizeof(*co));
        co->comm = c;
        co->seq = k->seq;
        co->kind = k->kind;
        co->bytes = k->bytes;
        co->n = c->nranks;
        co->parts = hs_xcalloc(co->n, sizeof(*co->parts));
        co->nsteps = 2 * (co->n - 1);
        co->chunk = co->bytes / co->n + (co->bytes % co->n != 0);
        if (co->n > 1 && co->bytes > 0)
            co->fstate = hs_xcalloc((size_t)co->nsteps * co->n, 1);
        hs_u64map_put(&c->colls, co->seq, co);
    } else if (co->kind != k->kind || co->bytes != k->bytes) {
        hs_daemon_fail(d, "hysim: %s: rank %u's part of collective seq %llu on comm 0x%llx is %s of %llu bytes, "
                          "but another rank's is %s of %llu bytes",
                       who, k->rank, (unsigned long long)k->seq, (unsigned long long)k->comm_key,
                       kind_name(k->kind), (unsigned long long)k->bytes, kind_name(co->kind),
                       (unsigned long long)co->bytes);
        return -1;
    }
    cr->next_seq++;
    hs_op_ref(op);
    co->parts[k->rank] = op;
    co->nparts++;
    op->coll = co;
    op->rank = k->rank;
    op->bytes = k->bytes;
    return 0;
}

/* Frees the collective once every part and every flow is done. */
static void maybe_finish(hs_daemon *d, hs_coll *co)
{
    if (co->parts_done < co->n || co->flows_running > 0)
        return;
    d->sum.collectives++;
    hs_u64map_del(&co->comm->colls, co->seq);
    coll_free(co);
}

static void part_done(hs_daemon *d, hs_coll *co, uint32_t r, uint64_t t)
{
    hs_tl_op_complete(d, co->parts[r], t);
    co->parts_done++;
}

static uint8_t *flow_at(hs_coll *co, uint32_t k, uint32_t r) { return &co->fstate[(size_t)k * co->n + r]; }

static bool reached(const hs_coll *co, uint32_t r) { return co->parts[r] && co->parts[r]->started; }

static void try_launch(hs_daemon *d, hs_coll *co, uint32_t k, uint32_t r, uint64_t t)
{
    uint32_t n = co->n, next = (r + 1) % n, prev = (r + n - 1) % n;
    if (*flow_at(co, k, r) != FLOW_IDLE || !reached(co, r) || !reached(co, next))
        return;
    if (k > 0 && *flow_at(co, k - 1, prev) != FLOW_DONE)
        return;
    uint32_t src = co->parts[r]->gpu, dst = co->parts[next]->gpu;
    if (src == dst) {
        hs_daemon_fail(d, "hysim: ranks %u and %u of comm 0x%llx are both on GPU %u: not supported yet",
                       r, next, (unsigned long long)co->comm->key, src);
        return;
    }
    *flow_at(co, k, r) = FLOW_RUNNING;
    co->flows_running++;
    hs_flow f = {.owner = HS_FLOW_RING, .coll = co, .step = k, .rank = r};
    hs_clock_start_flow(d, &f, src, dst, co->chunk, t);
}

void hs_coll_reached(hs_daemon *d, hs_op *op, uint64_t t)
{
    hs_coll *co = op->coll;
    uint32_t r = op->rank, n = co->n;
    if (n == 1 || co->bytes == 0) {
        /* nothing moves: the part is done once its stream reaches it */
        part_done(d, co, r, t);
        maybe_finish(d, co);
        return;
    }
    for (uint32_t k = 0; k < co->nsteps && !d->failed; k++) {
        try_launch(d, co, k, r, t);
        try_launch(d, co, k, (r + n - 1) % n, t);
    }
}

void hs_coll_flow_done(hs_daemon *d, hs_coll *co, uint32_t k, uint32_t r, uint64_t t)
{
    uint32_t n = co->n, next = (r + 1) % n, last = co->nsteps - 1;
    *flow_at(co, k, r) = FLOW_DONE;
    co->flows_running--;
    if (k + 1 < co->nsteps)
        try_launch(d, co, k + 1, next, t);
    if (k == last) {
        /* r's last outgoing and next's last incoming flow: check both parts */
        uint32_t cand[2] = {r, next};
        for (int i = 0; i < 2; i++) {
            uint32_t x = cand[i], xprev = (x + n - 1) % n;
            hs_op *p = co->parts[x];
            if (!p->done && *flow_at(co, last, x) == FLOW_DONE && *flow_at(co, last, xprev) == FLOW_DONE)
                part_done(d, co, x, t);
        }
    }
    maybe_finish(d, co);
}

/* ------------------------------------------------------------- reports */

static size_t appendf(char *buf, size_t len, size_t at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static size_t appendf(char *buf, size_t len, size_t at, const char *fmt, ...)
{
    if (at >= len)
        return at;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + at, len - at, fmt, ap);
    va_end(ap);
    return w < 0 ? at : at + (size_t)w;
}

/* Sorted keys of a map, so that reports do not depend on hash order. */
static uint64_t *sorted_keys(const hs_u64map *m, size_t *n)
{
    uint64_t *k = hs_xcalloc(m->len, sizeof(*k));
    size_t j = 0;
    for (size_t i = 0; i < m->cap; i++)
        if (m->used[i])
            k[j++] = m->keys[i];
    for (size_t a = 1; a < j; a++)
        for (size_t b = a; b > 0 && k[b - 1] > k[b]; b--) {
            uint64_t x = k[b];
            k[b] = k[b - 1];
            k[b - 1] = x;
        }
    *n = j;
    return k;
}

static size_t rank_list(char *buf, size_t len, size_t at, const hs_coll *co, bool joined)
{
    bool first = true;
    at = appendf(buf, len, at, "[");
    for (uint32_t r = 0; r < co->n; r++)
        if ((co->parts[r] != NULL) == joined) {
            at = appendf(buf, len, at, first ? "%u" : ", %u", r);
            first = false;
        }
    return appendf(buf, len, at, "]");
}

size_t hs_coll_describe_unfinished(const hs_daemon *d, char *buf, size_t len)
{
    size_t at = strlen(buf), count = 0, ncomms;
    uint64_t *comms = sorted_keys(&d->comms, &ncomms);
    for (size_t i = 0; i < ncomms; i++) {
        const hs_comm *c = hs_u64map_get(&d->comms, comms[i]);
        size_t nseq;
        uint64_t *seqs = sorted_keys(&c->colls, &nseq);
        for (size_t j = 0; j < nseq; j++) {
            const hs_coll *co = hs_u64map_get(&c->colls, seqs[j]);
            at = appendf(buf, len, at, "\n  %s on comm 0x%llx, seq %llu: ranks joined ", kind_name(co->kind),
                         (unsigned long long)c->key, (unsigned long long)co->seq);
            at = rank_list(buf, len, at, co, true);
            at = appendf(buf, len, at, ", missing ");
            at = rank_list(buf, len, at, co, false);
            count++;
        }
        free(seqs);
    }
    free(comms);
    return count;
}

void hs_coll_free(hs_daemon *d)
{
    for (size_t i = 0; i < d->comms.cap; i++) {
        if (!d->comms.used[i])
            continue;
        hs_comm *c = d->comms.vals[i];
        for (size_t j = 0; j < c->colls.cap; j++)
            if (c->colls.used[j])
                coll_free(c->colls.vals[j]);
        hs_u64map_free(&c->colls);
        free(c->ranks);
        free(c);
    }
    hs_u64map_free(&d->comms);
}
