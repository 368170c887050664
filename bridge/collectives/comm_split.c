/*
 * hysimd's side of ncclCommSplit across processes (hs_split_request).
 * The split is collective over the parent communicator: each process sends
 * the calls of its ranks once and blocks; the split is kept here, keyed by
 * (parent, split number), until every parent rank has called. Then each new
 * communicator is the ranks of one color ordered by (key, parent rank), its
 * key derived from (parent, split number, color) so that every process gets
 * the same one, and every calling process is answered at once, at the latest
 * host time of the calls (a split is a synchronisation of its ranks).
 * A process waiting here stays RUNNING (it may be the only one, and a rank
 * that never calls is then caught by the stall watchdog, which names the
 * split and its missing ranks), but its host time is parked far ahead: it
 * issues nothing before the answer, and the answer comes no earlier than the
 * call of a rank still to call, whose own host time (or Wait) bounds the
 * clock. Otherwise a process blocked here would hold the clock at its call,
 * and another's Wait before its own call could never be answered.
 * A CommSplit without calls is a question, answered at once: which of the
 * parent's ranks the process holds, once every rank has joined (a process
 * whose threads each initialise a rank cannot count them itself).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_internal.h"

#define NOCOLOR (-1) /* NCCL_SPLIT_NOCOLOR */
/* The host time of a process waiting for its split's answer (see above); ps fit in 64 bits. */
#define PARKED_NS (UINT64_MAX / 4000)

typedef struct hs_split {
    uint64_t parent, gen;
    uint32_t nranks, called;
    uint64_t latest_ns;   /* the latest host time of the calls so far */
    hs_session **by;      /* [nranks] the process that called for each rank; NULL: not yet */
    uint32_t *order;      /* [nranks] the rank's place among its process's calls */
    int32_t *color, *key; /* [nranks] */
} hs_split;

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* The same derivation as the interposer's single-process split (interpose/nccl/nccl.c). */
static uint64_t split_comm_key(uint64_t parent, uint64_t gen, int32_t color)
{
    return mix64(parent ^ mix64(gen * 0x9e3779b97f4a7c15ull + (uint32_t)color + 1));
}

static uint64_t map_key(uint64_t parent, uint64_t gen) { return mix64(parent ^ mix64(gen + 0x51d)); }

static void split_free(hs_split *sp)
{
    free(sp->by);
    free(sp->order);
    free(sp->color);
    free(sp->key);
    free(sp);
}

/* Rank r's place in its new communicator, and the communicator's size. */
static void new_rank(const hs_split *sp, uint32_t r, uint32_t *rank, uint32_t *n)
{
    *rank = *n = 0;
    for (uint32_t j = 0; j < sp->nranks; j++) {
        if (sp->color[j] != sp->color[r])
            continue;
        (*n)++;
        if (sp->key[j] < sp->key[r] || (sp->key[j] == sp->key[r] && j < r))
            (*rank)++;
    }
}

/* Answers process s: one SplitRank per rank it called for, in its calls' order. */
static void answer(hs_daemon *d, hs_split *sp, hs_session *s)
{
    uint32_t mine = 0;
    for (uint32_t r = 0; r < sp->nranks; r++)
        mine += sp->by[r] == s;
    hs_split_rank *res = hs_xcalloc(mine ? mine : 1, sizeof(*res));
    for (uint32_t r = 0; r < sp->nranks; r++) {
        if (sp->by[r] != s)
            continue;
        hs_split_rank *x = &res[sp->order[r]];
        x->none = sp->color[r] == NOCOLOR;
        if (!x->none) {
            x->comm_key = split_comm_key(sp->parent, sp->gen, sp->color[r]);
            new_rank(sp, r, &x->rank, &x->nranks);
        }
    }
    s->host_ns = sp->latest_ns; /* parked until now; its own call was no later */
    s->split_waiting = false;
    hs_session_reply(s, &(hs_answer){.now_ns = s->host_ns, .done = true, .split = res, .nsplit = mine});
    free(res);
    (void)d;
}

/* Every rank has called: every calling process is answered, once. */
static void resolve(hs_daemon *d, hs_split *sp)
{
    hs_loop_saw(d, hs_ns_to_ps(sp->latest_ns));
    for (uint32_t r = 0; r < sp->nranks; r++) {
        uint32_t first = 0;
        while (sp->by[first] != sp->by[r])
            first++;
        if (first == r)
            answer(d, sp, sp->by[r]);
    }
}

static hs_split *split_new(uint64_t parent, uint64_t gen, uint32_t nranks)
{
    hs_split *sp = hs_xcalloc(1, sizeof(*sp));
    sp->parent = parent;
    sp->gen = gen;
    sp->nranks = nranks;
    sp->by = hs_xcalloc(nranks, sizeof(*sp->by));
    sp->order = hs_xcalloc(nranks, sizeof(*sp->order));
    sp->color = hs_xcalloc(nranks, sizeof(*sp->color));
    sp->key = hs_xcalloc(nranks, sizeof(*sp->key));
    return sp;
}

/*
 * A CommSplit without calls asks which ranks of the parent the process holds,
 * answered at once: done once every rank of the parent has joined (until then
 * a rank still to join may be one of the process's own threads'), with one
 * SplitRank per rank of the process (its parent rank in `rank`).
 */
static void answer_local_ranks(hs_daemon *d, hs_session *s, const hs_split_request *m)
{
    uint32_t *ranks = hs_xcalloc(m->parent_nranks, sizeof(*ranks)), mine;
    bool all = hs_coll_comm_joined(d, m->parent_key, m->parent_nranks, s, ranks, &mine);
    hs_split_rank *res = hs_xcalloc(mine ? mine : 1, sizeof(*res));
    for (uint32_t i = 0; i < mine; i++)
        res[i].rank = ranks[i];
    s->host_ns = m->host_ns;
    hs_session_reply(s, &(hs_answer){.now_ns = m->host_ns, .done = all, .split = res, .nsplit = all ? mine : 0});
    free(res);
    free(ranks);
}

void hs_split_call(hs_daemon *d, hs_session *s, const hs_split_request *m)
{
    char who[256];
    hs_session_name(s, who, sizeof(who));
    if (m->parent_nranks > 0 && m->ncalls == 0) {
        answer_local_ranks(d, s, m);
        return;
    }
    if (m->parent_nranks == 0) {
        hs_daemon_fail(d, "hysim: %s: CommSplit of comm 0x%llx with %u ranks and %zu calls", who,
                       (unsigned long long)m->parent_key, m->parent_nranks, m->ncalls);
        return;
    }
    uint64_t k = map_key(m->parent_key, m->gen);
    hs_split *sp = hs_u64map_get(&d->splits, k);
    if (!sp) {
        sp = split_new(m->parent_key, m->gen, m->parent_nranks);
        hs_u64map_put(&d->splits, k, sp);
    } else if (sp->parent != m->parent_key || sp->gen != m->gen || sp->nranks != m->parent_nranks) {
        hs_daemon_fail(d, "hysim: %s: split #%llu of comm 0x%llx with %u ranks, but other ranks said %u", who,
                       (unsigned long long)m->gen, (unsigned long long)m->parent_key, m->parent_nranks, sp->nranks);
        return;
    }
    for (size_t i = 0; i < m->ncalls; i++) {
        const hs_split_rank_call *c = &m->calls[i];
        if (c->rank >= sp->nranks || sp->by[c->rank] || (c->color < 0 && c->color != NOCOLOR)) {
            hs_daemon_fail(d,
                           "hysim: %s: split #%llu of comm 0x%llx: rank %u (of %u) called twice, or is out of "
                           "range, or gave the negative color %d",
                           who, (unsigned long long)m->gen, (unsigned long long)m->parent_key, c->rank, sp->nranks,
                           c->color);
            return;
        }
        sp->by[c->rank] = s;
        sp->order[c->rank] = (uint32_t)i;
        sp->color[c->rank] = c->color;
        sp->key[c->rank] = c->key;
        sp->called++;
    }
    sp->latest_ns = hs_max_u64(sp->latest_ns, m->host_ns);
    s->host_ns = PARKED_NS;
    s->split_waiting = true;
    if (sp->called < sp->nranks)
        return;
    hs_u64map_del(&d->splits, k);
    resolve(d, sp);
    split_free(sp);
}

static size_t rank_list(char *buf, size_t len, size_t at, const hs_split *sp, bool called)
{
    bool first = true;
    at = hs_appendf(buf, len, at, "[");
    for (uint32_t r = 0; r < sp->nranks; r++)
        if ((sp->by[r] != NULL) == called) {
            at = hs_appendf(buf, len, at, first ? "%u" : ", %u", r);
            first = false;
        }
    return hs_appendf(buf, len, at, "]");
}

size_t hs_split_describe_unfinished(const hs_daemon *d, char *buf, size_t len)
{
    /* in (parent, split number) order, so that the message does not depend on hash order */
    size_t count = 0;
    const hs_split *prev = NULL;
    for (;;) {
        const hs_split *next = NULL;
        for (size_t i = 0; i < d->splits.cap; i++) {
            const hs_split *sp = d->splits.used[i] ? d->splits.vals[i] : NULL;
            bool after =
                sp && (!prev || sp->parent > prev->parent || (sp->parent == prev->parent && sp->gen > prev->gen));
            if (after && (!next || sp->parent < next->parent || (sp->parent == next->parent && sp->gen < next->gen)))
                next = sp;
        }
        if (!next)
            return count;
        size_t at = strlen(buf);
        at = hs_appendf(buf, len, at, "\n  ncclCommSplit #%llu of comm 0x%llx: ranks called ",
                        (unsigned long long)next->gen, (unsigned long long)next->parent);
        at = rank_list(buf, len, at, next, true);
        at = hs_appendf(buf, len, at, ", missing ");
        rank_list(buf, len, at, next, false);
        count++;
        prev = next;
    }
}

void hs_split_free(hs_daemon *d)
{
    for (size_t i = 0; i < d->splits.cap; i++)
        if (d->splits.used[i])
            split_free(d->splits.vals[i]);
    hs_u64map_free(&d->splits);
}
