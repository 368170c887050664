/*
 * Small collectives' values (docs/values.md): each rank's part may carry its
 * send bytes; once every rank's part has come, each rank's receive bytes
 * are computed from all of them, as the GPUs would have, and kept for the
 * COLL_VALUES Waits that ask for them. A Send's bytes are its Recv's. Kept
 * per communicator for its last HS_CVALS_KEEP collectives, and per pair of
 * ranks for its last HS_CVALS_KEEP sends.
 */
#include <stdlib.h>
#include <string.h>

#include "daemon_internal.h"
#include "element_reduce.h"

#define HS_CVALS_KEEP 256u

typedef struct cvals {
    uint32_t nranks, arrived;
    uint64_t last_ps; /* the latest part's issue time: no rank has the result before it */
    bool complete;    /* every part came, each with its values */
    enum hs_coll_kind kind;
    uint32_t dtype, redop;
    int32_t root;
    uint64_t share; /* bytes of one rank's call (hs_coll_call.bytes) */
    uint8_t **in;   /* [nranks] each rank's send bytes, NULL: none came */
    size_t in_bytes;
    uint8_t *out; /* once complete: [nranks] receive buffers of out_bytes each, rank-major */
    size_t out_bytes;
} cvals;

/* One Send and its Recv. */
typedef struct p2p_vals {
    bool sent;        /* the Send's part came */
    uint64_t last_ps; /* the later of the two parts' issue times */
    uint8_t *bytes;   /* the Send's bytes; NULL: none came */
    size_t len;
} p2p_vals;

typedef struct comm_vals {
    hs_u64map by_seq; /* seq → cvals* */
    hs_u64map pairs;  /* from << 32 | to → hs_u64map* of seq → p2p_vals* */
} comm_vals;

static void cvals_free(cvals *v)
{
    for (uint32_t r = 0; r < v->nranks; r++)
        free(v->in[r]);
    free(v->in);
    free(v->out);
    free(v);
}

/* Every rank's receive bytes from every rank's send bytes. */
static void compute(cvals *v)
{
    v->out_bytes = hs_coll_out_bytes(v->kind, v->share, (int)v->nranks);
    v->out = hs_xcalloc(v->nranks, v->out_bytes);
    const void **in = hs_xcalloc(v->nranks, sizeof(*in));
    for (uint32_t k = 0; k < v->nranks; k++)
        in[k] = v->in[k];
    for (uint32_t r = 0; r < v->nranks; r++)
        hs_coll_receive(v->kind, (int)v->dtype, (int)v->redop, v->share, (int)v->nranks, (int)r, v->root, in,
                        v->out + r * v->out_bytes);
    free(in);
}

static uint64_t pair_key(uint32_t from, uint32_t to) { return (uint64_t)from << 32 | to; }

static void p2p_vals_free(p2p_vals *v)
{
    free(v->bytes);
    free(v);
}

/* A Send's or Recv's part: the pair's record of that seq, made by whichever came first. */
static void p2p_part(comm_vals *cv, uint32_t nranks, const hs_coll_call *k, uint64_t issue_ps)
{
    bool send = k->kind == HS_COLL_SEND;
    if (k->root < 0 || (uint32_t)k->root >= nranks)
        return;
    uint64_t key = send ? pair_key(k->rank, (uint32_t)k->root) : pair_key((uint32_t)k->root, k->rank);
    hs_u64map *seqs = hs_u64map_get(&cv->pairs, key);
    if (!seqs) {
        seqs = hs_xcalloc(1, sizeof(*seqs));
        hs_u64map_put(&cv->pairs, key, seqs);
    }
    p2p_vals *v = hs_u64map_get(seqs, k->seq);
    if (!v) {
        if (k->seq >= HS_CVALS_KEEP) {
            p2p_vals *old = hs_u64map_del(seqs, k->seq - HS_CVALS_KEEP);
            if (old)
                p2p_vals_free(old);
        }
        v = hs_xcalloc(1, sizeof(*v));
        hs_u64map_put(seqs, k->seq, v);
    }
    v->last_ps = v->last_ps > issue_ps ? v->last_ps : issue_ps;
    if (!send || v->sent)
        return;
    v->sent = true;
    if (k->has_values && k->values_len == k->bytes) {
        v->bytes = hs_xcalloc(1, k->values_len ? k->values_len : 1);
        memcpy(v->bytes, k->values, k->values_len);
        v->len = k->values_len;
    }
}

static const uint8_t *p2p_get(const comm_vals *cv, uint64_t seq, uint32_t rank, int32_t peer, bool *ready,
                              uint64_t *ready_ps, size_t *len)
{
    const hs_u64map *seqs = cv ? hs_u64map_get(&cv->pairs, pair_key((uint32_t)peer, rank)) : NULL;
    const p2p_vals *v = seqs ? hs_u64map_get(seqs, seq) : NULL;
    *ready = !v || v->sent;
    *ready_ps = v ? v->last_ps : 0;
    *len = v && v->sent && v->bytes ? v->len : 0;
    return *len ? v->bytes : NULL;
}

void hs_cvals_part(hs_daemon *d, uint32_t nranks, const hs_coll_call *k, uint64_t issue_ps)
{
    if (nranks == 0 || k->rank >= nranks)
        return;
    comm_vals *cv = hs_u64map_get(&d->coll_values, k->comm_key);
    if (!cv) {
        cv = hs_xcalloc(1, sizeof(*cv));
        hs_u64map_put(&d->coll_values, k->comm_key, cv);
    }
    if (hs_coll_kind_p2p(k->kind)) {
        p2p_part(cv, nranks, k, issue_ps);
        return;
    }
    cvals *v = hs_u64map_get(&cv->by_seq, k->seq);
    if (!v) {
        if (k->seq >= HS_CVALS_KEEP) {
            cvals *old = hs_u64map_del(&cv->by_seq, k->seq - HS_CVALS_KEEP);
            if (old)
                cvals_free(old);
        }
        v = hs_xcalloc(1, sizeof(*v));
        v->nranks = nranks;
        v->kind = k->kind;
        v->dtype = k->dtype;
        v->redop = k->redop;
        v->root = k->root;
        v->share = k->bytes;
        v->in_bytes = hs_coll_in_bytes(k->kind, k->bytes, (int)nranks);
        v->in = hs_xcalloc(nranks, sizeof(*v->in));
        hs_u64map_put(&cv->by_seq, k->seq, v);
    }
    if (v->in[k->rank] || v->arrived == v->nranks)
        return; /* collective.c refuses a rank's second part */
    v->arrived++;
    v->last_ps = v->last_ps > issue_ps ? v->last_ps : issue_ps;
    if (k->has_values && k->values_len == v->in_bytes && v->root >= 0 && (uint32_t)v->root < nranks) {
        v->in[k->rank] = hs_xcalloc(1, v->in_bytes ? v->in_bytes : 1);
        memcpy(v->in[k->rank], k->values, k->values_len);
    }
    if (v->arrived < v->nranks)
        return;
    v->complete = true;
    for (uint32_t r = 0; r < v->nranks; r++) /* a Broadcast needs its root's bytes alone */
        v->complete = v->complete && (v->in[r] || (v->kind == HS_COLL_BROADCAST && (int32_t)r != v->root));
    v->complete = v->complete && (v->kind != HS_COLL_BROADCAST || v->in[v->root]);
    if (v->complete)
        compute(v);
}

const uint8_t *hs_cvals_get(const hs_daemon *d, uint64_t comm_key, uint64_t seq, uint32_t rank, int32_t peer,
                            bool *ready, uint64_t *ready_ps, size_t *len)
{
    const comm_vals *cv = hs_u64map_get(&d->coll_values, comm_key);
    if (peer >= 0)
        return p2p_get(cv, seq, rank, peer, ready, ready_ps, len);
    const cvals *v = cv ? hs_u64map_get(&cv->by_seq, seq) : NULL;
    *ready = !v || v->arrived == v->nranks; /* forgotten, or every part came */
    *ready_ps = v ? v->last_ps : 0;
    *len = 0;
    if (!v || !v->complete || rank >= v->nranks || (v->kind == HS_COLL_REDUCE && (uint32_t)v->root != rank))
        return NULL;
    *len = v->out_bytes;
    return v->out + rank * v->out_bytes;
}

void hs_cvals_free(hs_daemon *d)
{
    for (size_t i = 0; i < d->coll_values.cap; i++) {
        if (!d->coll_values.used[i])
            continue;
        comm_vals *cv = d->coll_values.vals[i];
        for (size_t j = 0; j < cv->by_seq.cap; j++)
            if (cv->by_seq.used[j])
                cvals_free(cv->by_seq.vals[j]);
        hs_u64map_free(&cv->by_seq);
        for (size_t j = 0; j < cv->pairs.cap; j++) {
            if (!cv->pairs.used[j])
                continue;
            hs_u64map *seqs = cv->pairs.vals[j];
            for (size_t k = 0; k < seqs->cap; k++)
                if (seqs->used[k])
                    p2p_vals_free(seqs->vals[k]);
            hs_u64map_free(seqs);
            free(seqs);
        }
        hs_u64map_free(&cv->pairs);
        free(cv);
    }
    hs_u64map_free(&d->coll_values);
}
