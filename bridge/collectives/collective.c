/*
 * hysimd collectives: communicators learnt from CommInit ops; ranks' parts
 * matched into collectives by (comm_key, seq), and Sends matched to Recvs in
 * order per (comm, sender, receiver), a rank's Sends to itself included;
 * each part's completion. How a kind becomes fabric flows is
 * collective_algos.c's business.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collective.h"
#include "run_stats.h"

typedef struct hs_comm_rank {
    hs_session *s;
    uint32_t gpu;
    bool joined;
    uint64_t next_seq; /* the seq this rank's next collective must carry */
} hs_comm_rank;

/* Sends from one rank to another on a communicator, matched in order to Recvs. */
typedef struct hs_p2p_chan {
    uint32_t from, to;
    uint64_t nsend, nrecv; /* Sends and Recvs issued so far */
    hs_u64map pairs;       /* k → hs_coll*: the k-th Send and Recv, unfinished */
} hs_p2p_chan;

typedef struct hs_comm {
    uint64_t key;
    uint32_t nranks;
    hs_comm_rank *ranks;
    hs_u64map colls; /* seq → hs_coll*, unfinished ones */
    hs_u64map p2p;   /* from << 32 | to → hs_p2p_chan* */
} hs_comm;

const char *hs_coll_kind_name(enum hs_coll_kind k)
{
    switch (k) {
    case HS_COLL_ALL_REDUCE: return "AllReduce";
    case HS_COLL_ALL_GATHER: return "AllGather";
    case HS_COLL_REDUCE_SCATTER: return "ReduceScatter";
    case HS_COLL_BROADCAST: return "Broadcast";
    case HS_COLL_REDUCE: return "Reduce";
    case HS_COLL_SEND: return "Send";
    case HS_COLL_RECV: return "Recv";
    case HS_COLL_ALL_TO_ALL: return "AllToAll";
    default: return "an unknown collective kind";
    }
}

/* ------------------------------------------------------------- communicators */

int hs_coll_comm_init(hs_daemon *d, hs_session *s, const hs_issued_op *m)
{
    const uint64_t key = m->comm.key;
    const uint32_t rank = m->comm.rank, nranks = m->comm.nranks;
    char who[256];
    if (nranks == 0 || rank >= nranks) {
        hs_daemon_fail(d, "hysim: %s: CommInit of comm 0x%llx with rank %u of %u ranks",
                       hs_session_name(s, who, sizeof(who)), (unsigned long long)key, rank, nranks);
        return -1;
    }
    hs_comm *c = hs_u64map_get(&d->comms, key);
    if (!c) {
        c = hs_xcalloc(1, sizeof(*c));
        c->key = key;
        c->nranks = nranks;
        c->ranks = hs_xcalloc(c->nranks, sizeof(*c->ranks));
        hs_u64map_put(&d->comms, c->key, c);
    } else if (c->nranks != nranks) {
        hs_daemon_fail(d, "hysim: %s: CommInit of comm 0x%llx with %u ranks, but other ranks said %u",
                       hs_session_name(s, who, sizeof(who)), (unsigned long long)key, nranks, c->nranks);
        return -1;
    }
    hs_comm_rank *r = &c->ranks[rank];
    if (r->joined) {
        hs_daemon_fail(d, "hysim: %s: rank %u of comm 0x%llx joined twice", hs_session_name(s, who, sizeof(who)), rank,
                       (unsigned long long)key);
        return -1;
    }
    r->s = s;
    r->gpu = m->gpu;
    r->joined = true;
    return 0;
}

int hs_coll_comm_destroy(hs_daemon *d, hs_session *s, const hs_issued_op *m)
{
    const uint64_t key = m->comm.key;
    const uint32_t rank = m->comm.rank;
    hs_comm *c = hs_u64map_get(&d->comms, key);
    if (!c || rank >= c->nranks || !c->ranks[rank].joined || c->ranks[rank].s != s) {
        char who[256];
        hs_daemon_fail(d, "hysim: %s: CommDestroy of rank %u of comm 0x%llx, which it never joined",
                       hs_session_name(s, who, sizeof(who)), rank, (unsigned long long)key);
        return -1;
    }
    /* collectives already issued still run; the rank may join again later */
    c->ranks[rank].joined = false;
    c->ranks[rank].next_seq = 0;
    return 0;
}

/*
 * Whether every rank of comm `key` (of nranks) has joined, in any process;
 * ranks[0..*mine) get the ranks session s joined (ranks: room for nranks).
 */
bool hs_coll_comm_joined(const hs_daemon *d, uint64_t key, uint32_t nranks, const hs_session *s, uint32_t *ranks,
                         uint32_t *mine)
{
    const hs_comm *c = hs_u64map_get(&d->comms, key);
    bool all = c && c->nranks == nranks;
    *mine = 0;
    for (uint32_t r = 0; c && r < c->nranks && r < nranks; r++) {
        all = all && c->ranks[r].joined;
        if (c->ranks[r].joined && c->ranks[r].s == s)
            ranks[(*mine)++] = r;
    }
    return all;
}

/* ------------------------------------------------------------- collectives */

static void coll_free(hs_coll *c)
{
    for (uint32_t r = 0; r < c->n; r++)
        hs_op_unref(c->parts[r]);
    free(c->parts);
    free(c->pstate);
    free(c->fstate);
    free(c->fmin);
    free(c->left);
    free(c->order);
    free(c->pos);
    free(c->parent);
    free(c->tdone);
    free(c);
}

/*
 * Server of each of the collective's n parts (ring ranks, or Send/Recv's
 * from/to), from the GPUs the ranks joined on. A rank that has not joined yet
 * (another process's CommInit still on its way) is placed as if the
 * communicator filled servers in rank order.
 */
static void part_servers(const hs_daemon *d, const hs_comm *c, const uint32_t *ranks, uint32_t n, uint32_t *server)
{
    uint32_t per = (uint32_t)d->sc.servers.gpus_per_server;
    for (uint32_t i = 0; i < n; i++) {
        const hs_comm_rank *cr = &c->ranks[ranks ? ranks[i] : i];
        server[i] = (cr->joined ? cr->gpu : (ranks ? ranks[i] : i)) / (per ? per : 1);
    }
}

static hs_coll *coll_new(hs_daemon *d, hs_comm *c, uint64_t seq, const hs_coll_call *k, uint32_t n,
                         const uint32_t *ranks)
{
    hs_coll *co = hs_xcalloc(1, sizeof(*co));
    co->comm = c;
    co->comm_key = c->key;
    co->seq = seq;
    co->kind = k->kind == HS_COLL_RECV ? HS_COLL_SEND : k->kind;
    co->bytes = k->bytes;
    co->root = k->root;
    co->n = n;
    co->comm_ranks = c->nranks;
    co->parts = hs_xcalloc(n, sizeof(*co->parts));
    co->pstate = hs_xcalloc(n, 1);
    uint32_t *server = hs_xcalloc(n, sizeof(*server));
    part_servers(d, c, ranks, n, server);
    int rc = hs_algo_setup(d, co, server, k->algo, k->proto);
    free(server);
    if (rc < 0) {
        coll_free(co);
        return NULL;
    }
    return co;
}

static bool known_kind(enum hs_coll_kind k) { return (unsigned)k <= HS_COLL_ALL_TO_ALL; }

/* The collective (comm, seq) the part belongs to, created by its first part; NULL after failing. */
static hs_coll *find_collective(hs_daemon *d, const char *who, hs_comm *c, const hs_coll_call *k)
{
    hs_comm_rank *cr = &c->ranks[k->rank];
    if (k->seq != cr->next_seq) {
        hs_daemon_fail(d, "hysim: %s: collective seq %llu on comm 0x%llx rank %u, expected seq %llu", who,
                       (unsigned long long)k->seq, (unsigned long long)k->comm_key, k->rank,
                       (unsigned long long)cr->next_seq);
        return NULL;
    }
    bool rooted = hs_coll_kind_rooted(k->kind);
    if (rooted && (k->root < 0 || (uint32_t)k->root >= c->nranks)) {
        hs_daemon_fail(d, "hysim: %s: %s on comm 0x%llx with root %d of %u ranks", who, hs_coll_kind_name(k->kind),
                       (unsigned long long)k->comm_key, k->root, c->nranks);
        return NULL;
    }
    hs_coll *co = hs_u64map_get(&c->colls, k->seq);
    if (!co) {
        co = coll_new(d, c, k->seq, k, c->nranks, NULL);
        if (!co)
            return NULL;
        hs_u64map_put(&c->colls, co->seq, co);
    } else if (co->kind != k->kind || co->bytes != k->bytes || (rooted && co->root != k->root)) {
        hs_daemon_fail(d,
                       "hysim: %s: rank %u's part of collective seq %llu on comm 0x%llx is %s of %llu bytes "
                       "(root %d), but another rank's is %s of %llu bytes (root %d)",
                       who, k->rank, (unsigned long long)k->seq, (unsigned long long)k->comm_key,
                       hs_coll_kind_name(k->kind), (unsigned long long)k->bytes, k->root, hs_coll_kind_name(co->kind),
                       (unsigned long long)co->bytes, co->root);
        return NULL;
    }
    cr->next_seq++;
    return co;
}

/* The Send/Recv pair the part belongs to (part index in *idx); NULL after failing. */
static hs_coll *find_pair(hs_daemon *d, const char *who, hs_comm *c, const hs_coll_call *k, uint32_t *idx)
{
    bool send = k->kind == HS_COLL_SEND;
    if (k->root < 0 || (uint32_t)k->root >= c->nranks) {
        hs_daemon_fail(d, "hysim: %s: %s on comm 0x%llx with peer %d of %u ranks", who, hs_coll_kind_name(k->kind),
                       (unsigned long long)k->comm_key, k->root, c->nranks);
        return NULL;
    }
    uint32_t from = send ? k->rank : (uint32_t)k->root, to = send ? (uint32_t)k->root : k->rank;
    uint64_t key = (uint64_t)from << 32 | to;
    hs_p2p_chan *ch = hs_u64map_get(&c->p2p, key);
    if (!ch) {
        ch = hs_xcalloc(1, sizeof(*ch));
        ch->from = from;
        ch->to = to;
        hs_u64map_put(&c->p2p, key, ch);
    }
    uint64_t *count = send ? &ch->nsend : &ch->nrecv;
    if (k->seq != *count) {
        hs_daemon_fail(d, "hysim: %s: %s seq %llu from rank %u to rank %u on comm 0x%llx, expected seq %llu", who,
                       hs_coll_kind_name(k->kind), (unsigned long long)k->seq, from, to,
                       (unsigned long long)k->comm_key, (unsigned long long)*count);
        return NULL;
    }
    hs_coll *co = hs_u64map_get(&ch->pairs, k->seq);
    if (!co) {
        uint32_t ends[2] = {from, to};
        co = coll_new(d, c, k->seq, k, 2, ends);
        if (!co)
            return NULL;
        co->chan = ch;
        co->local = from == to;
        hs_u64map_put(&ch->pairs, co->seq, co);
    } else if (co->bytes != k->bytes) {
        hs_daemon_fail(d,
                       "hysim: %s: Send #%llu from rank %u to rank %u on comm 0x%llx: one side has %llu bytes, "
                       "the other %llu",
                       who, (unsigned long long)k->seq, from, to, (unsigned long long)k->comm_key,
                       (unsigned long long)k->bytes, (unsigned long long)co->bytes);
        return NULL;
    }
    (*count)++;
    *idx = send ? 0 : 1;
    return co;
}

int hs_coll_attach(hs_daemon *d, hs_session *s, const hs_issued_op *m, hs_op *op)
{
    const hs_coll_call *k = &m->coll;
    char who[256];
    hs_session_name(s, who, sizeof(who));
    hs_comm *c = hs_u64map_get(&d->comms, k->comm_key);
    if (!c || k->rank >= c->nranks || !c->ranks[k->rank].joined || c->ranks[k->rank].s != s) {
        hs_daemon_fail(d, "hysim: %s: collective on comm 0x%llx as rank %u, which it never joined (no CommInit)", who,
                       (unsigned long long)k->comm_key, k->rank);
        return -1;
    }
    hs_comm_rank *cr = &c->ranks[k->rank];
    if (cr->gpu != m->gpu) {
        hs_daemon_fail(d, "hysim: %s: rank %u of comm 0x%llx joined on GPU %u but issues a collective on GPU %u", who,
                       k->rank, (unsigned long long)k->comm_key, cr->gpu, m->gpu);
        return -1;
    }
    if (!known_kind(k->kind)) {
        hs_daemon_fail(d, "hysim: collective kind %d is not supported yet", (int)k->kind);
        return -1;
    }
    uint32_t idx = k->rank;
    hs_coll *co = hs_coll_kind_p2p(k->kind) ? find_pair(d, who, c, k, &idx) : find_collective(d, who, c, k);
    if (!co)
        return -1;
    hs_cvals_part(d, c->nranks, k, hs_ns_to_ps(m->host_ns));
    if (op->nparts == 0 && (hs_coll_kind_ring(co->kind) || hs_coll_kind_rooted(co->kind))) {
        /* the trace names what NCCL's tuner would run: "AllReduce Tree/LL" */
        char label[64];
        snprintf(label, sizeof label, "%s %s/%s", hs_coll_kind_name(co->kind), hs_tuner_algo_name(co->plan.algo),
                 hs_tuner_proto_name(co->plan.proto));
        op->label = hs_stats_label(d, label);
    }
    hs_op_ref(op);
    co->parts[idx] = op;
    co->nparts++;
    op->parts = hs_xrealloc(op->parts, op->nparts + 1, sizeof(*op->parts)); /* a few at most */
    op->parts[op->nparts++] = (hs_op_part){.coll = co, .idx = idx};
    op->parts_left++;
    op->bytes += k->bytes;
    return 0;
}

/* Frees the collective once every part and every flow is done. */
static void maybe_finish(hs_daemon *d, hs_coll *co)
{
    if (co->parts_done < co->n || co->flows_running > 0)
        return;
    d->sum.collectives++;
    if (co->chan)
        hs_u64map_del(&co->chan->pairs, co->seq);
    else
        hs_u64map_del(&co->comm->colls, co->seq);
    coll_free(co);
}

void hs_coll_part_done(hs_daemon *d, hs_coll *co, uint32_t idx, uint64_t t)
{
    if (co->pstate[idx] & HS_PART_DONE)
        return;
    co->pstate[idx] |= HS_PART_DONE;
    co->parts_done++;
    hs_tl_part_done(d, co->parts[idx], t);
}

void hs_coll_reached(hs_daemon *d, hs_op *op, uint32_t first, uint64_t t)
{
    for (uint32_t i = first; i < op->nparts && !d->failed; i++) {
        hs_coll *co = op->parts[i].coll;
        uint32_t idx = op->parts[i].idx;
        co->pstate[idx] |= HS_PART_REACHED;
        if (co->n == 1 || co->bytes == 0)
            hs_coll_part_done(d, co, idx, t); /* nothing moves: done once its stream reaches it */
        else
            hs_algo_reached(d, co, idx, t);
        maybe_finish(d, co);
    }
}

void hs_coll_flow_done(hs_daemon *d, hs_coll *co, uint32_t step, uint32_t rank, uint64_t t)
{
    hs_algo_flow_done(d, co, step, rank, t);
    maybe_finish(d, co);
}

/* ------------------------------------------------------------- reports */

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
    at = hs_appendf(buf, len, at, "[");
    for (uint32_t r = 0; r < co->n; r++)
        if ((co->parts[r] != NULL) == joined) {
            at = hs_appendf(buf, len, at, first ? "%u" : ", %u", r);
            first = false;
        }
    return hs_appendf(buf, len, at, "]");
}

/* Unfinished Send/Recv pairs of one communicator, by (sender, receiver, number). */
static size_t describe_pairs(const hs_comm *c, char *buf, size_t len, size_t at, size_t *count)
{
    size_t nch;
    uint64_t *chans = sorted_keys(&c->p2p, &nch);
    for (size_t i = 0; i < nch; i++) {
        const hs_p2p_chan *ch = hs_u64map_get(&c->p2p, chans[i]);
        size_t npairs;
        uint64_t *ks = sorted_keys(&ch->pairs, &npairs);
        for (size_t j = 0; j < npairs; j++) {
            const hs_coll *co = hs_u64map_get(&ch->pairs, ks[j]);
            at = hs_appendf(buf, len, at, "\n  Send #%llu from rank %u to rank %u on comm 0x%llx: %s",
                            (unsigned long long)co->seq, ch->from, ch->to, (unsigned long long)c->key,
                            !co->parts[0]   ? "its Send is missing"
                            : !co->parts[1] ? "its Recv is missing"
                                            : "both issued");
            (*count)++;
        }
        free(ks);
    }
    free(chans);
    return at;
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
            at = hs_appendf(buf, len, at, "\n  %s on comm 0x%llx, seq %llu: ranks joined ", hs_coll_kind_name(co->kind),
                            (unsigned long long)c->key, (unsigned long long)co->seq);
            at = rank_list(buf, len, at, co, true);
            at = hs_appendf(buf, len, at, ", missing ");
            at = rank_list(buf, len, at, co, false);
            count++;
        }
        free(seqs);
        at = describe_pairs(c, buf, len, at, &count);
    }
    free(comms);
    return count + hs_split_describe_unfinished(d, buf, len);
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
        for (size_t j = 0; j < c->p2p.cap; j++) {
            if (!c->p2p.used[j])
                continue;
            hs_p2p_chan *ch = c->p2p.vals[j];
            for (size_t k = 0; k < ch->pairs.cap; k++)
                if (ch->pairs.used[k])
                    coll_free(ch->pairs.vals[k]);
            hs_u64map_free(&ch->pairs);
            free(ch);
        }
        hs_u64map_free(&c->p2p);
        free(c->ranks);
        free(c);
    }
    hs_u64map_free(&d->comms);
    hs_cvals_free(d);
    hs_split_free(d);
}
