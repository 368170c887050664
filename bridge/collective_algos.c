/*
 * hysimd collective algorithms: how each kind of collective becomes fabric
 * flows, as NCCL runs it (one channel; ranks in communicator order).
 *
 *   ring   ALL_REDUCE: 2(n−1) steps moving ceil(bytes/n); ALL_GATHER and
 *          REDUCE_SCATTER: n−1 steps moving one rank's share (bytes). In step
 *          k rank r sends to r+1; flow (k, r) starts once r and r+1 have
 *          reached the collective and, for k > 0, flow (k−1, r−1) is done.
 *          A rank is done when its last outgoing and last incoming flows are.
 *   chain  BROADCAST: root → root+1 → … → root+n−1; REDUCE: root+1 → … →
 *          root+n−1 → root. The buffer moves in chunks (NCCL's Simple
 *          protocol pipelines them); chunk c crosses hop h once it has crossed
 *          hop h−1 and chunk c−1 has crossed hop h: one chunk per hop at a
 *          time. A rank is done when the last chunk has left and reached it.
 *   pairs  ALL_TO_ALL: all n(n−1) flows of `bytes` at once, each starting
 *          when both its ranks have reached the collective.
 *   p2p    a Send and its Recv: one flow, once both have been reached.
 *
 * Flow grid (rows × cols): ring (step, rank), chain (chunk, hop), pairs
 * (sender, receiver), p2p 1 × 1.
 */
#include <stdlib.h>

#include "collective.h"

/*
 * Broadcast and Reduce chunk: NCCL's Simple protocol step, the default
 * NCCL_BUFFSIZE (4 MiB) over NCCL_STEPS (8) slots, times BROADCAST_CHUNKSTEPS
 * = REDUCE_CHUNKSTEPS = 1 (NCCL src/include/collectives.h). NCCL keeps up to
 * NCCL_STEPS chunks in flight per hop and so hides each chunk's latency; here
 * one is in flight per hop, which costs one link latency per chunk.
 */
#define HS_CHAIN_CHUNK_BYTES (512ull << 10)

static uint8_t *fs(hs_coll *co, uint32_t row, uint32_t col) { return &co->fstate[(size_t)row * co->cols + col]; }

static bool is_ring(Hysim__CollKind k)
{
    return k == HYSIM__COLL_KIND__ALL_REDUCE || k == HYSIM__COLL_KIND__ALL_GATHER ||
           k == HYSIM__COLL_KIND__REDUCE_SCATTER;
}

static bool is_chain(Hysim__CollKind k)
{
    return k == HYSIM__COLL_KIND__BROADCAST || k == HYSIM__COLL_KIND__REDUCE;
}

void hs_algo_setup(hs_coll *co)
{
    uint32_t n = co->n;
    if (n < 2 || co->bytes == 0)
        return; /* nothing moves */
    if (co->kind == HYSIM__COLL_KIND__ALL_REDUCE) {
        co->rows = 2 * (n - 1);
        co->cols = n;
        co->chunk = co->bytes / n + (co->bytes % n != 0);
    } else if (is_ring(co->kind)) {
        co->rows = n - 1;
        co->cols = n;
        co->chunk = co->bytes;
    } else if (is_chain(co->kind)) {
        co->chunk = HS_CHAIN_CHUNK_BYTES;
        co->rows = (uint32_t)(co->bytes / co->chunk + (co->bytes % co->chunk != 0));
        co->cols = n - 1;
    } else if (co->kind == HYSIM__COLL_KIND__ALL_TO_ALL) {
        co->rows = co->cols = n;
        co->left = hs_xcalloc(n, sizeof(*co->left));
        for (uint32_t r = 0; r < n; r++)
            co->left[r] = 2 * (n - 1);
    } else {
        co->rows = co->cols = 1; /* Send/Recv */
    }
    co->fstate = hs_xcalloc((size_t)co->rows * co->cols, 1);
}

/* Starts flow (row, col) of `bytes` from part src's GPU to part dst's at time t. */
static void start_flow(hs_daemon *d, hs_coll *co, uint32_t row, uint32_t col, uint32_t src, uint32_t dst,
                       uint64_t bytes, uint64_t t)
{
    uint32_t sg = co->parts[src]->gpu, dg = co->parts[dst]->gpu;
    if (sg == dg) {
        hs_daemon_fail(d, "hysim: %s on comm 0x%llx: two ranks on GPU %u: not supported yet",
                       hs_coll_kind_name(co->kind), (unsigned long long)co->comm_key, sg);
        return;
    }
    *fs(co, row, col) = HS_FLOW_RUNNING;
    co->flows_running++;
    hs_flow f = {.owner = HS_FLOW_COLL, .coll = co, .step = row, .rank = col};
    hs_clock_start_flow(d, &f, sg, dg, bytes, t);
}

/* ------------------------------------------------------------- ring */

static void ring_try(hs_daemon *d, hs_coll *co, uint32_t k, uint32_t r, uint64_t t)
{
    uint32_t n = co->n, next = (r + 1) % n, prev = (r + n - 1) % n;
    if (*fs(co, k, r) != HS_FLOW_IDLE || !hs_coll_part_reached(co, r) || !hs_coll_part_reached(co, next))
        return;
    if (k > 0 && *fs(co, k - 1, prev) != HS_FLOW_DONE)
        return;
    start_flow(d, co, k, r, r, next, co->chunk, t);
}

static void ring_reached(hs_daemon *d, hs_coll *co, uint32_t r, uint64_t t)
{
    for (uint32_t k = 0; k < co->rows && !d->failed; k++) {
        ring_try(d, co, k, r, t);
        ring_try(d, co, k, (r + co->n - 1) % co->n, t);
    }
}

static void ring_flow_done(hs_daemon *d, hs_coll *co, uint32_t k, uint32_t r, uint64_t t)
{
    uint32_t n = co->n, next = (r + 1) % n, last = co->rows - 1;
    if (k + 1 < co->rows)
        ring_try(d, co, k + 1, next, t);
    if (k != last)
        return;
    /* r's last outgoing and next's last incoming flow: check both parts */
    uint32_t cand[2] = {r, next};
    for (int i = 0; i < 2; i++) {
        uint32_t x = cand[i], xprev = (x + n - 1) % n;
        if (!hs_coll_part_is_done(co, x) && *fs(co, last, x) == HS_FLOW_DONE && *fs(co, last, xprev) == HS_FLOW_DONE)
            hs_coll_part_done(d, co, x, t);
    }
}

/* ------------------------------------------------------------- chain */

/* Rank at chain position p, and back. */
static uint32_t chain_rank(const hs_coll *co, uint32_t p)
{
    uint32_t first = co->kind == HYSIM__COLL_KIND__BROADCAST ? (uint32_t)co->root : (uint32_t)co->root + 1;
    return (first + p) % co->n;
}

static uint32_t chain_pos(const hs_coll *co, uint32_t r)
{
    uint32_t first = chain_rank(co, 0);
    return (r + co->n - first) % co->n;
}

static void chain_try(hs_daemon *d, hs_coll *co, uint32_t c, uint32_t h, uint64_t t)
{
    uint32_t from = chain_rank(co, h), to = chain_rank(co, h + 1);
    if (*fs(co, c, h) != HS_FLOW_IDLE || !hs_coll_part_reached(co, from) || !hs_coll_part_reached(co, to))
        return;
    if ((h > 0 && *fs(co, c, h - 1) != HS_FLOW_DONE) || (c > 0 && *fs(co, c - 1, h) != HS_FLOW_DONE))
        return;
    uint64_t off = (uint64_t)c * co->chunk;
    start_flow(d, co, c, h, from, to, hs_min_u64(co->chunk, co->bytes - off), t);
}

static void chain_reached(hs_daemon *d, hs_coll *co, uint32_t r, uint64_t t)
{
    /* a later chunk waits for an earlier one on the same hop: only chunk 0 can start now */
    uint32_t p = chain_pos(co, r);
    if (p > 0)
        chain_try(d, co, 0, p - 1, t);
    if (p + 1 < co->n && !d->failed)
        chain_try(d, co, 0, p, t);
}

/* Position p is done once the last chunk has crossed its hops in and out. */
static void chain_check_part(hs_daemon *d, hs_coll *co, uint32_t p, uint64_t t)
{
    uint32_t last = co->rows - 1, r = chain_rank(co, p);
    if (hs_coll_part_is_done(co, r))
        return;
    if (p > 0 && *fs(co, last, p - 1) != HS_FLOW_DONE)
        return;
    if (p + 1 < co->n && *fs(co, last, p) != HS_FLOW_DONE)
        return;
    hs_coll_part_done(d, co, r, t);
}

static void chain_flow_done(hs_daemon *d, hs_coll *co, uint32_t c, uint32_t h, uint64_t t)
{
    if (h + 1 < co->cols)
        chain_try(d, co, c, h + 1, t);
    if (c + 1 < co->rows && !d->failed)
        chain_try(d, co, c + 1, h, t);
    if (c == co->rows - 1) {
        chain_check_part(d, co, h, t);
        chain_check_part(d, co, h + 1, t);
    }
}

/* ------------------------------------------------------------- pairs, p2p */

static void pair_try(hs_daemon *d, hs_coll *co, uint32_t a, uint32_t b, uint64_t t)
{
    if (a == b || *fs(co, a, b) != HS_FLOW_IDLE || !hs_coll_part_reached(co, a) || !hs_coll_part_reached(co, b))
        return;
    start_flow(d, co, a, b, a, b, co->bytes, t);
}

static void pairs_reached(hs_daemon *d, hs_coll *co, uint32_t r, uint64_t t)
{
    for (uint32_t x = 0; x < co->n && !d->failed; x++) {
        pair_try(d, co, r, x, t);
        pair_try(d, co, x, r, t);
    }
}

static void pairs_flow_done(hs_daemon *d, hs_coll *co, uint32_t a, uint32_t b, uint64_t t)
{
    if (--co->left[a] == 0)
        hs_coll_part_done(d, co, a, t);
    if (--co->left[b] == 0)
        hs_coll_part_done(d, co, b, t);
}

static void p2p_reached(hs_daemon *d, hs_coll *co, uint64_t t)
{
    if (*fs(co, 0, 0) == HS_FLOW_IDLE && hs_coll_part_reached(co, 0) && hs_coll_part_reached(co, 1))
        start_flow(d, co, 0, 0, 0, 1, co->bytes, t);
}

/* ------------------------------------------------------------- dispatch */

void hs_algo_reached(hs_daemon *d, hs_coll *co, uint32_t idx, uint64_t t)
{
    if (is_ring(co->kind))
        ring_reached(d, co, idx, t);
    else if (is_chain(co->kind))
        chain_reached(d, co, idx, t);
    else if (co->kind == HYSIM__COLL_KIND__ALL_TO_ALL)
        pairs_reached(d, co, idx, t);
    else
        p2p_reached(d, co, t);
}

void hs_algo_flow_done(hs_daemon *d, hs_coll *co, uint32_t row, uint32_t col, uint64_t t)
{
    *fs(co, row, col) = HS_FLOW_DONE;
    co->flows_running--;
    if (is_ring(co->kind)) {
        ring_flow_done(d, co, row, col, t);
    } else if (is_chain(co->kind)) {
        chain_flow_done(d, co, row, col, t);
    } else if (co->kind == HYSIM__COLL_KIND__ALL_TO_ALL) {
        pairs_flow_done(d, co, row, col, t);
    } else {
        hs_coll_part_done(d, co, 0, t);
        hs_coll_part_done(d, co, 1, t);
    }
}
