/*
 * hysimd collective algorithms: how each kind of collective becomes fabric
 * flows, as NCCL runs it (ring, chain, tree, NVLS, pairs, p2p): docs/nccl.md,
 * "The flows in detail".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collective.h"

/*
 * Broadcast and Reduce chunk: NCCL's Simple protocol step, the default
 * NCCL_BUFFSIZE (4 MiB) over NCCL_STEPS (8) slots, times BROADCAST_CHUNKSTEPS
 * = REDUCE_CHUNKSTEPS = 1 (NCCL src/include/collectives.h). NCCL keeps up to
 * NCCL_STEPS chunks in flight per hop and so hides each chunk's latency; here
 * one is in flight per hop, which costs one link latency per chunk.
 */
#define HS_CHAIN_CHUNK_BYTES (512ull << 10)

/*
 * Tree chunks per channel: enough for the pipeline to hide all but about one
 * chunk per hop, few enough to bound the flows (channels × chunks × 2n).
 * NCCL's own chunks are smaller (a 512 KiB Simple step); a chunk here is
 * at least HS_TREE_MIN_CHUNK_BYTES.
 */
#define HS_TREE_MAX_CHUNKS      16
#define HS_TREE_MIN_CHUNK_BYTES (64ull << 10)

static uint8_t *fs(hs_coll *co, uint32_t ch, uint32_t row, uint32_t col)
{
    return &co->fstate[((size_t)ch * co->rows + row) * co->cols + col];
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

/* One flow per ordered pair of ranks, each rank done with its 2(n−1): all-to-all, and NVLS. */
static bool is_pairs(const hs_coll *co) { return co->kind == HS_COLL_ALL_TO_ALL || co->plan.algo == HS_NCCL_ALGO_NVLS; }

/*
 * NVLS: bytes each pair of GPUs exchanges through the switch so that every GPU's link carries what NVLS moves
 * (docs/nccl.md, "NVLS"): all-reduce (n+1)/n × bytes each way (its contributions reduced by the switch, then
 * its reduced share multicast), spread over its n−1 peers; all-gather and reduce-scatter (n−1)/n of the
 * whole buffer, a rank's chunk (`bytes`) per peer.
 */
static uint64_t nvls_pair_bytes(enum hs_coll_kind kind, uint64_t bytes, uint32_t n)
{
    if (kind != HS_COLL_ALL_REDUCE)
        return bytes;
    return (uint64_t)((double)bytes * (n + 1) / ((double)n * (n - 1)) + 0.5);
}

/*
 * Ring orders: ranks in communicator order, each server's run of ranks
 * rotated by the channel, every other server's run reversed, so that the hop
 * between two servers joins local ranks of the same index (one NIC rail):
 * channel c leaves server 0 from local c−1 and server 1 from local c. With an
 * odd number of servers the wrap-around hop crosses rails.
 */
static void ring_orders(hs_coll *co, const uint32_t *server)
{
    uint32_t n = co->n, nch = co->plan.channels;
    co->order = hs_xcalloc((size_t)nch * n, sizeof(*co->order));
    co->pos = hs_xcalloc((size_t)nch * n, sizeof(*co->pos));
    for (uint32_t ch = 0; ch < nch; ch++) {
        uint32_t run = 0;
        for (uint32_t lo = 0; lo < n; run++) {
            uint32_t hi = lo + 1;
            while (hi < n && server[hi] == server[lo])
                hi++;
            uint32_t len = hi - lo;
            for (uint32_t i = 0; i < len; i++) {
                uint32_t j = run % 2 ? len - 1 - i : i;
                co->order[ch * n + lo + j] = lo + (i + ch) % len;
            }
            lo = hi;
        }
        for (uint32_t p = 0; p < n; p++)
            co->pos[ch * n + co->order[ch * n + p]] = p;
    }
}

/* ncclGetBtree's parent of `rank` of n (NCCL src/graph/trees.cc); −1 at the root, rank 0. */
static int btree_parent(int n, int rank)
{
    if (rank == 0)
        return -1;
    int bit = 1;
    while (bit < n && !(bit & rank))
        bit <<= 1;
    int up = (rank ^ bit) | (bit << 1);
    return up < n ? up : rank ^ bit;
}

/* ncclGetDtree: tree 1 is tree 0 mirrored (n even) or shifted by one (n odd). */
static int dtree_parent(int n, int tree, int rank)
{
    if (tree == 0)
        return btree_parent(n, rank);
    if (n % 2) {
        int u = btree_parent(n, (rank - 1 + n) % n);
        return u < 0 ? -1 : (u + 1) % n;
    }
    int u = btree_parent(n, n - 1 - rank);
    return u < 0 ? -1 : n - 1 - u;
}

/*
 * Each channel's tree as parent links: servers numbered in order of their
 * first rank, each server's ranks (in rank order) a chain rotated by the
 * channel whose first rank, the head, joins the inter-server tree.
 */
static void tree_build(hs_coll *co, const uint32_t *server)
{
    uint32_t n = co->n, nch = co->plan.channels, nodes = 0;
    uint32_t *node = hs_xcalloc(n, sizeof(*node)), *count = hs_xcalloc(n, sizeof(*count));
    uint32_t *start = hs_xcalloc(n + 1, sizeof(*start)), *members = hs_xcalloc(n, sizeof(*members));
    for (uint32_t r = 0; r < n; r++) {
        uint32_t v = 0;
        while (v < r && server[v] != server[r])
            v++;
        node[r] = v < r ? node[v] : nodes++;
        count[node[r]]++;
    }
    for (uint32_t v = 0; v < nodes; v++)
        start[v + 1] = start[v] + count[v];
    memset(count, 0, n * sizeof(*count));
    for (uint32_t r = 0; r < n; r++)
        members[start[node[r]] + count[node[r]]++] = r;
    co->parent = hs_xcalloc((size_t)nch * n, sizeof(*co->parent));
    co->tdone = hs_xcalloc((size_t)nch * n, 1);
    for (uint32_t ch = 0; ch < nch; ch++) {
        uint32_t *par = &co->parent[(size_t)ch * n];
        for (uint32_t v = 0; v < nodes; v++) {
            const uint32_t *m = &members[start[v]];
            uint32_t len = count[v];
            for (uint32_t i = 1; i < len; i++)
                par[m[(i + ch) % len]] = m[(i - 1 + ch) % len];
            int pv = dtree_parent((int)nodes, (int)(ch % 2), (int)v);
            par[m[ch % len]] = pv < 0 ? HS_TREE_ROOT : members[start[pv] + ch % count[pv]];
        }
    }
    free(node);
    free(count);
    free(start);
    free(members);
}

int hs_algo_setup(hs_daemon *d, hs_coll *co, const uint32_t *server, uint32_t env_algo, uint32_t env_proto)
{
    uint32_t n = co->n, nnodes = 1;
    for (uint32_t r = 1; r < n; r++)
        nnodes += server[r] != server[r - 1];
    char err[256];
    /* a Send/Recv pair's p2p channels depend on its communicator's size, not the pair's */
    uint32_t ranks = co->kind == HS_COLL_SEND && co->comm_ranks ? co->comm_ranks : n;
    if (hs_tuner_plan(&d->sc, co->kind, co->bytes, ranks, nnodes, env_algo, env_proto, &co->plan, err, sizeof err) <
        0) {
        hs_daemon_fail(d, "hysim: %s on comm 0x%llx: %s", hs_coll_kind_name(co->kind), (unsigned long long)co->comm_key,
                       err);
        return -1;
    }
    if (co->plan.nvls_refused && !d->said_nvls_refused && !d->spec_child) {
        d->said_nvls_refused = true;
        fprintf(stderr,
                "hysim: NVLS forced (NCCL_ALGO or nccl.algo) for %s on %u GPU%s of %u server%s, where NCCL has no "
                "NVLS (one NVSwitch server of more than 2 Hopper GPUs, nccl.nvls and NCCL_NVLS_ENABLE not off): "
                "the tuner chooses instead\n",
                hs_coll_kind_name(co->kind), n, n == 1 ? "" : "s", nnodes, nnodes == 1 ? "" : "s");
    }
    if (n < 2 || co->bytes == 0)
        return 0; /* nothing moves */
    uint32_t nch = co->plan.channels;
    if (co->plan.algo == HS_NCCL_ALGO_NVLS) {
        co->rows = co->cols = n; /* one flow per ordered pair, on channel 0 */
        co->chunk = nvls_pair_bytes(co->kind, co->bytes, n);
    } else if (co->plan.algo == HS_NCCL_ALGO_TREE) {
        co->ch_bytes = ceil_div(co->bytes, nch);
        uint64_t chunks = ceil_div(co->ch_bytes, HS_TREE_MIN_CHUNK_BYTES);
        co->rows = (uint32_t)(chunks < HS_TREE_MAX_CHUNKS ? chunks : HS_TREE_MAX_CHUNKS);
        co->chunk = ceil_div(co->ch_bytes, co->rows);
        co->cols = 2 * n;
        tree_build(co, server);
    } else if (hs_coll_kind_ring(co->kind)) {
        co->rows = co->kind == HS_COLL_ALL_REDUCE ? 2 * (n - 1) : n - 1;
        co->cols = n;
        co->chunk = co->kind == HS_COLL_ALL_REDUCE ? ceil_div(co->bytes, (uint64_t)n * nch) : ceil_div(co->bytes, nch);
        ring_orders(co, server);
    } else if (hs_coll_kind_rooted(co->kind)) {
        co->ch_bytes = ceil_div(co->bytes, nch);
        co->chunk = HS_CHAIN_CHUNK_BYTES < co->ch_bytes ? HS_CHAIN_CHUNK_BYTES : co->ch_bytes;
        co->rows = (uint32_t)ceil_div(co->ch_bytes, co->chunk);
        co->cols = n - 1;
    } else if (co->kind == HS_COLL_ALL_TO_ALL) {
        co->rows = co->cols = n;
    } else {
        co->rows = co->cols = 1; /* Send/Recv */
    }
    co->left = hs_xcalloc(n, sizeof(*co->left));
    for (uint32_t r = 0; r < n; r++)
        co->left[r] = is_pairs(co) ? 2 * (n - 1) : nch;
    co->fstate = hs_xcalloc((size_t)nch * co->rows * co->cols, 1);
    if (co->plan.channel_gbps > 0)
        co->fmin = hs_xcalloc((size_t)nch * co->rows * co->cols, sizeof(*co->fmin));
    return 0;
}

/* Starts flow (ch, row, col) of `bytes` payload from part src's GPU to part dst's, `delay` after t. */
static void start_flow(hs_daemon *d, hs_coll *co, uint32_t ch, uint32_t row, uint32_t col, uint32_t src, uint32_t dst,
                       uint64_t bytes, uint64_t t, uint64_t delay)
{
    uint32_t sg = co->parts[src]->gpu, dg = co->parts[dst]->gpu;
    if (sg == dg) {
        hs_daemon_fail(d, "hysim: %s on comm 0x%llx: two ranks on GPU %u: not supported yet",
                       hs_coll_kind_name(co->kind), (unsigned long long)co->comm_key, sg);
        return;
    }
    *fs(co, ch, row, col) = HS_FLOW_RUNNING;
    co->flows_running++;
    hs_flow f = {.owner = HS_FLOW_COLL, .coll = co, .step = ch * co->rows + row, .rank = col};
    uint64_t wire = (uint64_t)((double)bytes * co->plan.wire_factor + 0.5), start = t + delay + co->plan.hop_ps;
    if (co->fmin) /* bytes / (GB/s) = ns; × 1000 = ps */
        co->fmin[((size_t)ch * co->rows + row) * co->cols + col] =
            start + (uint64_t)((double)wire * 1000.0 / co->plan.channel_gbps + 0.5);
    hs_loop_start_flow(d, &f, sg, dg, wire ? wire : 1, start);
}

/* Rank r has finished channel ch: done with its last channel. */
static void channel_done(hs_daemon *d, hs_coll *co, uint32_t r, uint64_t t)
{
    if (--co->left[r] == 0)
        hs_coll_part_done(d, co, r, t);
}

/* ------------------------------------------------------------- ring */

static uint32_t ring_rank(const hs_coll *co, uint32_t ch, uint32_t p) { return co->order[ch * co->n + p % co->n]; }

static void ring_try(hs_daemon *d, hs_coll *co, uint32_t ch, uint32_t k, uint32_t p, uint64_t t)
{
    uint32_t n = co->n, from = ring_rank(co, ch, p), to = ring_rank(co, ch, p + 1);
    if (*fs(co, ch, k, p) != HS_FLOW_IDLE || !hs_coll_part_reached(co, from) || !hs_coll_part_reached(co, to))
        return;
    if (k > 0 && *fs(co, ch, k - 1, (p + n - 1) % n) != HS_FLOW_DONE)
        return;
    start_flow(d, co, ch, k, p, from, to, co->chunk, t, k == 0 ? co->plan.start_ps : 0);
}

static void ring_reached(hs_daemon *d, hs_coll *co, uint32_t r, uint64_t t)
{
    uint32_t n = co->n;
    for (uint32_t ch = 0; ch < co->plan.channels && !d->failed; ch++) {
        uint32_t p = co->pos[ch * n + r];
        for (uint32_t k = 0; k < co->rows && !d->failed; k++) {
            ring_try(d, co, ch, k, p, t);
            ring_try(d, co, ch, k, (p + n - 1) % n, t);
        }
    }
}

static void ring_flow_done(hs_daemon *d, hs_coll *co, uint32_t ch, uint32_t k, uint32_t p, uint64_t t)
{
    uint32_t n = co->n, last = co->rows - 1;
    if (k + 1 < co->rows)
        ring_try(d, co, ch, k + 1, (p + 1) % n, t);
    if (k != last)
        return;
    /* positions p (last outgoing) and p+1 (last incoming): each done once both its flows are */
    uint32_t cand[2] = {p, (p + 1) % n};
    for (int i = 0; i < 2; i++) {
        uint32_t x = cand[i], xprev = (x + n - 1) % n;
        if (*fs(co, ch, last, x) == HS_FLOW_DONE && *fs(co, ch, last, xprev) == HS_FLOW_DONE)
            channel_done(d, co, ring_rank(co, ch, x), t);
    }
}

/* ------------------------------------------------------------- chain */

/* Rank at chain position p, and back. */
static uint32_t chain_rank(const hs_coll *co, uint32_t p)
{
    uint32_t first = co->kind == HS_COLL_BROADCAST ? (uint32_t)co->root : (uint32_t)co->root + 1;
    return (first + p) % co->n;
}

static uint32_t chain_pos(const hs_coll *co, uint32_t r)
{
    uint32_t first = chain_rank(co, 0);
    return (r + co->n - first) % co->n;
}

static void chain_try(hs_daemon *d, hs_coll *co, uint32_t ch, uint32_t c, uint32_t h, uint64_t t)
{
    uint32_t from = chain_rank(co, h), to = chain_rank(co, h + 1);
    if (*fs(co, ch, c, h) != HS_FLOW_IDLE || !hs_coll_part_reached(co, from) || !hs_coll_part_reached(co, to))
        return;
    if ((h > 0 && *fs(co, ch, c, h - 1) != HS_FLOW_DONE) || (c > 0 && *fs(co, ch, c - 1, h) != HS_FLOW_DONE))
        return;
    /* the last channel may hold less than the others (bytes not a multiple of C) */
    uint64_t ch_off = (uint64_t)ch * co->ch_bytes, off = ch_off + (uint64_t)c * co->chunk;
    uint64_t end = hs_min_u64(ch_off + co->ch_bytes, co->bytes);
    uint64_t len = off < end ? hs_min_u64(co->chunk, end - off) : 0;
    start_flow(d, co, ch, c, h, from, to, len, t, c == 0 && h == 0 ? co->plan.start_ps : 0);
}

static void chain_reached(hs_daemon *d, hs_coll *co, uint32_t r, uint64_t t)
{
    /* a later chunk waits for an earlier one on the same hop: only chunk 0 can start now */
    uint32_t p = chain_pos(co, r);
    for (uint32_t ch = 0; ch < co->plan.channels && !d->failed; ch++) {
        if (p > 0)
            chain_try(d, co, ch, 0, p - 1, t);
        if (p + 1 < co->n && !d->failed)
            chain_try(d, co, ch, 0, p, t);
    }
}

/* Position p is done with channel ch once its last chunk has crossed its hops in and out. */
static void chain_check_part(hs_daemon *d, hs_coll *co, uint32_t ch, uint32_t p, uint64_t t)
{
    uint32_t last = co->rows - 1;
    if (p > 0 && *fs(co, ch, last, p - 1) != HS_FLOW_DONE)
        return;
    if (p + 1 < co->n && *fs(co, ch, last, p) != HS_FLOW_DONE)
        return;
    channel_done(d, co, chain_rank(co, p), t);
}

static void chain_flow_done(hs_daemon *d, hs_coll *co, uint32_t ch, uint32_t c, uint32_t h, uint64_t t)
{
    if (h + 1 < co->cols)
        chain_try(d, co, ch, c, h + 1, t);
    if (c + 1 < co->rows && !d->failed)
        chain_try(d, co, ch, c + 1, h, t);
    if (c != co->rows - 1)
        return;
    /* an inner position is checked by its two hops' completions; count it on the second only */
    uint32_t ends[2] = {h, h + 1};
    for (int i = 0; i < 2; i++) {
        uint32_t p = ends[i];
        uint32_t other = p == h ? h - 1 : h + 1; /* the position's other hop */
        bool has_other = p == h ? p > 0 : p + 1 < co->n;
        if (has_other && *fs(co, ch, co->rows - 1, other) != HS_FLOW_DONE)
            continue; /* that hop's completion will count it */
        chain_check_part(d, co, ch, p, t);
    }
}

/* ------------------------------------------------------------- tree */

static uint32_t tree_parent(const hs_coll *co, uint32_t ch, uint32_t r) { return co->parent[(size_t)ch * co->n + r]; }

/* Chunk c of channel ch: its bytes (the last channel and chunk may hold less). */
static uint64_t tree_len(const hs_coll *co, uint32_t ch, uint32_t c)
{
    uint64_t ch_off = (uint64_t)ch * co->ch_bytes, off = ch_off + (uint64_t)c * co->chunk;
    uint64_t end = hs_min_u64(ch_off + co->ch_bytes, co->bytes);
    return off < end ? hs_min_u64(co->chunk, end - off) : 0;
}

/* Every child of r has sent chunk c up (leaves: vacuously). */
static bool tree_children_up(hs_coll *co, uint32_t ch, uint32_t c, uint32_t r)
{
    for (uint32_t x = 0; x < co->n; x++)
        if (tree_parent(co, ch, x) == r && *fs(co, ch, c, x) != HS_FLOW_DONE)
            return false;
    return true;
}

static bool tree_is_leaf(const hs_coll *co, uint32_t ch, uint32_t r)
{
    for (uint32_t x = 0; x < co->n; x++)
        if (tree_parent(co, ch, x) == r)
            return false;
    return true;
}

/* Starts a flow of chunk c between parts a → b; hops between servers pay the NET latency. */
static void tree_start(hs_daemon *d, hs_coll *co, uint32_t ch, uint32_t c, uint32_t col, uint32_t a, uint32_t b,
                       uint64_t t, uint64_t delay)
{
    uint32_t per = d->sc.servers.gpus_per_server > 0 ? (uint32_t)d->sc.servers.gpus_per_server : 1;
    if (co->parts[a]->gpu / per != co->parts[b]->gpu / per && co->plan.hop_net_ps > co->plan.hop_ps)
        delay += co->plan.hop_net_ps - co->plan.hop_ps;
    start_flow(d, co, ch, c, col, a, b, tree_len(co, ch, c), t, delay);
}

/* Chunk c up from r to its parent, once r has it from all its children. */
static void tree_try_up(hs_daemon *d, hs_coll *co, uint32_t ch, uint32_t c, uint32_t r, uint64_t t)
{
    uint32_t p = tree_parent(co, ch, r);
    if (p == HS_TREE_ROOT || *fs(co, ch, c, r) != HS_FLOW_IDLE || !hs_coll_part_reached(co, r) ||
        !hs_coll_part_reached(co, p))
        return;
    if ((c > 0 && *fs(co, ch, c - 1, r) != HS_FLOW_DONE) || !tree_children_up(co, ch, c, r))
        return;
    bool first = c == 0 && tree_is_leaf(co, ch, r);
    tree_start(d, co, ch, c, r, r, p, t, first ? co->plan.start_ps : 0);
}

/* Chunk c down to r, once its parent has the result. */
static void tree_try_down(hs_daemon *d, hs_coll *co, uint32_t ch, uint32_t c, uint32_t r, uint64_t t)
{
    uint32_t n = co->n, p = tree_parent(co, ch, r);
    if (p == HS_TREE_ROOT || *fs(co, ch, c, n + r) != HS_FLOW_IDLE || !hs_coll_part_reached(co, r) ||
        !hs_coll_part_reached(co, p))
        return;
    if (c > 0 && *fs(co, ch, c - 1, n + r) != HS_FLOW_DONE)
        return;
    bool have =
        tree_parent(co, ch, p) == HS_TREE_ROOT ? tree_children_up(co, ch, c, p) : *fs(co, ch, c, n + p) == HS_FLOW_DONE;
    if (have)
        tree_start(d, co, ch, c, n + r, p, r, t, 0);
}

/* Tries chunk c's flows down from r to each of its children. */
static void tree_try_children_down(hs_daemon *d, hs_coll *co, uint32_t ch, uint32_t c, uint32_t r, uint64_t t)
{
    for (uint32_t x = 0; x < co->n && !d->failed; x++)
        if (tree_parent(co, ch, x) == r)
            tree_try_down(d, co, ch, c, x, t);
}

static void tree_reached(hs_daemon *d, hs_coll *co, uint32_t r, uint64_t t)
{
    /* a later chunk waits for an earlier one on the same hop: only chunk 0 can start now */
    for (uint32_t ch = 0; ch < co->plan.channels && !d->failed; ch++) {
        tree_try_up(d, co, ch, 0, r, t);
        for (uint32_t x = 0; x < co->n && !d->failed; x++)
            if (tree_parent(co, ch, x) == r)
                tree_try_up(d, co, ch, 0, x, t);
        tree_try_down(d, co, ch, 0, r, t);
        tree_try_children_down(d, co, ch, 0, r, t);
    }
}

/* Rank r is done with channel ch once the last chunk has crossed each of its hops both ways. */
static void tree_check_done(hs_daemon *d, hs_coll *co, uint32_t ch, uint32_t r, uint64_t t)
{
    uint32_t n = co->n, last = co->rows - 1;
    uint8_t *done = &co->tdone[(size_t)ch * n + r];
    if (*done)
        return;
    if (tree_parent(co, ch, r) != HS_TREE_ROOT &&
        (*fs(co, ch, last, r) != HS_FLOW_DONE || *fs(co, ch, last, n + r) != HS_FLOW_DONE))
        return;
    for (uint32_t x = 0; x < n; x++)
        if (tree_parent(co, ch, x) == r &&
            (*fs(co, ch, last, x) != HS_FLOW_DONE || *fs(co, ch, last, n + x) != HS_FLOW_DONE))
            return;
    *done = 1;
    channel_done(d, co, r, t);
}

static void tree_flow_done(hs_daemon *d, hs_coll *co, uint32_t ch, uint32_t c, uint32_t col, uint64_t t)
{
    uint32_t n = co->n;
    bool up = col < n;
    uint32_t r = up ? col : col - n, p = tree_parent(co, ch, r);
    if (up) {
        if (tree_parent(co, ch, p) == HS_TREE_ROOT)
            tree_try_children_down(d, co, ch, c, p, t); /* the root has the result once all sent it up */
        else
            tree_try_up(d, co, ch, c, p, t);
        if (c + 1 < co->rows && !d->failed)
            tree_try_up(d, co, ch, c + 1, r, t);
    } else {
        tree_try_children_down(d, co, ch, c, r, t);
        if (c + 1 < co->rows && !d->failed)
            tree_try_down(d, co, ch, c + 1, r, t);
    }
    if (c + 1 == co->rows && !d->failed) {
        tree_check_done(d, co, ch, r, t);
        tree_check_done(d, co, ch, p, t);
    }
}

/* ------------------------------------------------------------- pairs, p2p */

static void pair_try(hs_daemon *d, hs_coll *co, uint32_t a, uint32_t b, uint64_t t)
{
    if (a == b || *fs(co, 0, a, b) != HS_FLOW_IDLE || !hs_coll_part_reached(co, a) || !hs_coll_part_reached(co, b))
        return;
    start_flow(d, co, 0, a, b, a, b, co->bytes, t, co->plan.start_ps);
}

/* NVLS: the switch reduces and multicasts once every rank has joined; then every pair's flow runs at once. */
static void nvls_reached(hs_daemon *d, hs_coll *co, uint64_t t)
{
    for (uint32_t r = 0; r < co->n; r++)
        if (!hs_coll_part_reached(co, r))
            return;
    for (uint32_t a = 0; a < co->n && !d->failed; a++)
        for (uint32_t b = 0; b < co->n && !d->failed; b++)
            if (a != b && *fs(co, 0, a, b) == HS_FLOW_IDLE)
                start_flow(d, co, 0, a, b, a, b, co->chunk, t, co->plan.start_ps);
}

static void pairs_reached(hs_daemon *d, hs_coll *co, uint32_t r, uint64_t t)
{
    for (uint32_t x = 0; x < co->n && !d->failed; x++) {
        pair_try(d, co, r, x, t);
        pair_try(d, co, x, r, t);
    }
}

/*
 * A rank's Send to itself is, as in NCCL, a copy within its GPU's memory: it
 * takes what a same-GPU cudaMemcpy of its bytes takes, and ends both parts
 * at once, like a flow (hs_coll_flow_done of flow 0, 0).
 */
static void local_copy_start(hs_daemon *d, hs_coll *co, uint64_t t)
{
    *fs(co, 0, 0, 0) = HS_FLOW_RUNNING;
    co->flows_running++;
    uint64_t dur = hs_tl_local_copy_ps(d, co->bytes);
    hs_tl_local_copy_at(d, co->parts[0], co, t > HS_TIME_INF - dur ? HS_TIME_INF : t + dur);
}

static void p2p_reached(hs_daemon *d, hs_coll *co, uint64_t t)
{
    if (*fs(co, 0, 0, 0) != HS_FLOW_IDLE || !hs_coll_part_reached(co, 0) || !hs_coll_part_reached(co, 1))
        return;
    if (co->local)
        local_copy_start(d, co, t);
    else
        start_flow(d, co, 0, 0, 0, 0, 1, co->bytes, t, co->plan.start_ps);
}

/* ------------------------------------------------------------- dispatch */

void hs_algo_reached(hs_daemon *d, hs_coll *co, uint32_t idx, uint64_t t)
{
    if (co->plan.algo == HS_NCCL_ALGO_NVLS)
        nvls_reached(d, co, t);
    else if (co->plan.algo == HS_NCCL_ALGO_TREE)
        tree_reached(d, co, idx, t);
    else if (hs_coll_kind_ring(co->kind))
        ring_reached(d, co, idx, t);
    else if (hs_coll_kind_rooted(co->kind))
        chain_reached(d, co, idx, t);
    else if (co->kind == HS_COLL_ALL_TO_ALL)
        pairs_reached(d, co, idx, t);
    else
        p2p_reached(d, co, t);
}

/* A part of co that has been issued, to hold while a capped flow waits (the first, for determinism). */
static hs_op *any_part(const hs_coll *co)
{
    uint32_t r = 0;
    while (r + 1 < co->n && !co->parts[r])
        r++;
    return co->parts[r];
}

void hs_algo_flow_done(hs_daemon *d, hs_coll *co, uint32_t step, uint32_t col, uint64_t t)
{
    uint32_t ch = step / co->rows, row = step % co->rows;
    if (co->fmin && t < co->fmin[(size_t)step * co->cols + col]) {
        /* the fabric moved it faster than the channel can: done at the cap (still running till then) */
        hs_tl_coll_flow_at(d, any_part(co), co, step, col, co->fmin[(size_t)step * co->cols + col]);
        return;
    }
    *fs(co, ch, row, col) = HS_FLOW_DONE;
    co->flows_running--;
    if (is_pairs(co)) {
        channel_done(d, co, row, t);
        channel_done(d, co, col, t);
    } else if (co->plan.algo == HS_NCCL_ALGO_TREE) {
        tree_flow_done(d, co, ch, row, col, t);
    } else if (hs_coll_kind_ring(co->kind)) {
        ring_flow_done(d, co, ch, row, col, t);
    } else if (hs_coll_kind_rooted(co->kind)) {
        chain_flow_done(d, co, ch, row, col, t);
    } else {
        hs_coll_part_done(d, co, 0, t);
        hs_coll_part_done(d, co, 1, t);
    }
}
