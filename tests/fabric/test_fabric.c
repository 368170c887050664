/*
 * Fabric model tests (ns3-glue/, include/hysim/fabric.h). One case per
 * process (ns-3 is a process-wide singleton): `test_fabric CASE`.
 */
#include "fabric_test_util.h"

#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#define KIB 1024ull
#define MIB (1024ull * 1024ull)
#define SEG (64 * KIB)

/* Runs the fabric to the end, storing finish times by flow id (ids 0..n-1). */
static void run_all(hs_fabric *f, uint64_t *finish, size_t n)
{
    hs_flow_done d;
    while (hs_fabric_next_completion(f, UINT64_MAX, &d) == 1) {
        if (d.flow_id < n)
            finish[d.flow_id] = d.finish_ps;
    }
}

/* Collects exactly `count` completions (fabric time stays at the last one). */
static void run_count(hs_fabric *f, uint64_t *finish, size_t n, int count)
{
    hs_flow_done d;
    for (int i = 0; i < count; i++) {
        if (hs_fabric_next_completion(f, UINT64_MAX, &d) != 1) {
            fprintf(stderr, "completion %d of %d missing\n", i, count);
            exit(1);
        }
        if (d.flow_id < n)
            finish[d.flow_id] = d.finish_ps;
    }
}

/* (a) one 256 MiB flow between two GPUs: bytes*8/rate + latency within 1 %. */
static int case_single_flow(void)
{
    hs_scenario sc;
    fab_test_scenario(&sc, SEG);
    hs_fabric *f = fab_test_create(&sc);
    const uint64_t bytes = 256 * MIB;
    fab_test_add(f, 42, 0, 5, bytes, 0);
    FAB_CHECK(hs_fabric_flows_in_flight(f) == 1, "in flight %" PRIu64, hs_fabric_flows_in_flight(f));

    hs_flow_done d = {0, 0};
    int r = hs_fabric_next_completion(f, UINT64_MAX, &d);
    FAB_CHECK(r == 1, "next_completion returned %d", r);
    double ideal = fab_ideal_ps(&sc, bytes);
    printf("single 256 MiB flow GPU0->GPU5: simulated %.3f us, bytes*8/rate + latency %.3f us "
           "(%+.4f %%)\n",
           d.finish_ps / 1e6, ideal / 1e6, 100.0 * (d.finish_ps - ideal) / ideal);
    FAB_CHECK(d.flow_id == 42, "flow id %" PRIu64, d.flow_id);
    FAB_CHECK(fab_rel(d.finish_ps, ideal) < 0.01, "finish %" PRIu64 " vs %.0f", d.finish_ps, ideal);
    FAB_CHECK(d.finish_ps >= ideal, "faster than line rate: %" PRIu64 " < %.0f", d.finish_ps, ideal);
    FAB_CHECK(hs_fabric_now_ps(f) == d.finish_ps, "now %" PRIu64, hs_fabric_now_ps(f));
    FAB_CHECK(hs_fabric_flows_in_flight(f) == 0, "in flight %" PRIu64, hs_fabric_flows_in_flight(f));

    hs_fabric_stats st;
    hs_fabric_get_stats(f, &st);
    printf("stats: flows %" PRIu64 "/%" PRIu64 ", packet-hops %" PRIu64 ", events %" PRIu64 ", bytes %" PRIu64 "\n",
           st.flows_done, st.flows_added, st.packet_hops, st.events, st.bytes_delivered);
    FAB_CHECK(st.flows_added == 1 && st.flows_done == 1, "flows");
    FAB_CHECK(st.bytes_delivered == bytes, "bytes delivered %" PRIu64, st.bytes_delivered);
    FAB_CHECK(st.packet_hops == 2 * (bytes / SEG), "packet hops %" PRIu64, st.packet_hops);
    FAB_CHECK(st.events > st.packet_hops, "events %" PRIu64, st.events);

    /* Nothing left: a further call runs to the limit. */
    r = hs_fabric_next_completion(f, d.finish_ps + 1000000, &d);
    FAB_CHECK(r == 0, "returned %d with nothing in flight", r);
    hs_fabric_destroy(f);
    FAB_TEST_END();
}

/* (b) two flows into one GPU: each ≈ 2× the single time (2 %), equal (1 %). */
static int case_incast(void)
{
    hs_scenario sc;
    fab_test_scenario(&sc, SEG);
    hs_fabric *f = fab_test_create(&sc);
    const uint64_t bytes = 256 * MIB;
    fab_test_add(f, 0, 1, 0, bytes, 0);
    fab_test_add(f, 1, 2, 0, bytes, 0);
    uint64_t fin[2] = {0, 0};
    run_all(f, fin, 2);
    double single = fab_ideal_ps(&sc, bytes);
    printf("incast 2 x 256 MiB into GPU0: flow0 %.3f us, flow1 %.3f us, 2 x single %.3f us\n", fin[0] / 1e6,
           fin[1] / 1e6, 2 * single / 1e6);
    for (int i = 0; i < 2; i++)
        FAB_CHECK(fab_rel(fin[i], 2 * single) < 0.02, "flow %d: %" PRIu64 " vs %.0f", i, fin[i], 2 * single);
    FAB_CHECK(fab_rel(fin[0], fin[1]) < 0.01, "unequal: %" PRIu64 " vs %" PRIu64, fin[0], fin[1]);
    hs_fabric_destroy(f);
    FAB_TEST_END();
}

/* (c) 8 flows GPU i -> GPU (i+1)%8 at once: each at the single-flow time (1 %). */
static int case_ring(void)
{
    hs_scenario sc;
    fab_test_scenario(&sc, SEG);
    hs_fabric *f = fab_test_create(&sc);
    const uint64_t bytes = 256 * MIB;
    for (uint32_t i = 0; i < 8; i++)
        fab_test_add(f, i, i, (i + 1) % 8, bytes, 0);
    uint64_t fin[8] = {0};
    run_all(f, fin, 8);
    double single = fab_ideal_ps(&sc, bytes);
    for (int i = 0; i < 8; i++) {
        printf("ring flow %d: %.3f us (single %.3f us)\n", i, fin[i] / 1e6, single / 1e6);
        FAB_CHECK(fab_rel(fin[i], single) < 0.01, "flow %d: %" PRIu64 " vs %.0f", i, fin[i], single);
    }
    hs_fabric_destroy(f);
    FAB_TEST_END();
}

/* (d) determinism: upfront vs. stepwise injection give identical completions. */

#define DET_N 96

struct det_flow {
    uint64_t id;
    uint32_t src, dst;
    uint64_t bytes, start;
};

static struct det_flow det_flows[DET_N];
/* 0: one 8-GPU server; 1: two servers, rail_optimized, unbounded switch queues;
 * 2: two servers on a leaf-spine with PFC, ECN and DCQCN (pauses and marks);
 * 3: the same without PFC and with a small buffer (drops and go-back-N). */
static int det_multi;
#define DET_VARIANTS 4

static uint64_t det_rng = 0x9e3779b97f4a7c15ull;
static uint64_t det_next(void)
{
    det_rng ^= det_rng << 13;
    det_rng ^= det_rng >> 7;
    det_rng ^= det_rng << 17;
    return det_rng;
}

static void multi_scenario(hs_scenario *sc, enum hs_topology topo);

static void det_make_flows(void)
{
    /* Many equal-time ties: few distinct start times, a handful of sizes
     * (some not a multiple of the segment), several flows per source port
     * and per destination port. */
    static const uint64_t sizes[] = {4 * MIB, 4 * MIB + 1000, 1 * MIB, 8 * MIB, 200 * KIB};
    static const uint64_t starts_us[] = {0, 0, 0, 5, 5, 12, 20};
    const uint32_t ngpu = det_multi ? 16 : 8;
    for (int i = 0; i < DET_N; i++) {
        struct det_flow *d = &det_flows[i];
        d->id = 1000 + (uint64_t)i * 7; /* ids not in add order */
        d->src = (uint32_t)(det_next() % ngpu);
        do
            d->dst = (uint32_t)(det_next() % ngpu);
        while (d->dst == d->src);
        d->bytes = sizes[det_next() % 5] / (det_multi ? 4 : 1);
        d->start = starts_us[det_next() % 7] * 1000000ull;
    }
}

static void det_shuffle(int *order, int n, uint64_t seed)
{
    uint64_t s = seed | 1;
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        int j = (int)(s % (uint64_t)(i + 1));
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/* Dependent flows, added when another flow's completion is reported (as the
 * daemon does for the next step of a collective): they start at that time. */
#define DET_NB 32
struct det_dep {
    struct det_flow f;
    uint64_t dep_id;
};
static struct det_dep det_b[DET_NB];
static uint64_t det_b_start[DET_NB]; /* from the dependent run, for the upfront replay */

static void det_make_deps(void)
{
    for (int k = 0; k < DET_NB; k++) {
        struct det_dep *b = &det_b[k];
        /* a few distinct dependencies, so several flows start at one time */
        int j = (int)(det_next() % (uint64_t)(8 + k));
        const struct det_flow *dep = j < 8 ? &det_flows[j * 5] : &det_b[j - 8].f;
        if (j >= 8 && j - 8 >= k)
            dep = &det_flows[0];
        b->dep_id = dep->id;
        b->f.id = 5000 + (uint64_t)k * 3;
        b->f.src = (det_next() & 1) ? dep->dst : dep->src; /* a port that was just busy */
        do
            b->f.dst = (uint32_t)(det_next() % (det_multi ? 16 : 8));
        while (b->f.dst == b->f.src);
        b->f.bytes = (1 * MIB + det_next() % (3 * MIB)) / (det_multi ? 4 : 1);
        b->f.start = 0; /* known only when the dependency completes */
    }
}

#define DET_MAX (DET_N + DET_NB)
struct det_result {
    hs_flow_done done[DET_MAX];
    int n;
    uint64_t b_start[DET_NB];
    uint64_t pauses, marks, drops, retx; /* summed over every link */
};

static void det_link_totals(const hs_fabric *f, struct det_result *r)
{
    for (size_t i = 0; i < hs_fabric_link_count(f); i++) {
        hs_fabric_link_stats st;
        if (hs_fabric_get_link_stats(f, i, &st) != 0)
            continue;
        r->pauses += st.pfc_pauses;
        r->marks += st.ecn_marks;
        r->drops += st.drops;
        r->retx += st.retransmissions;
    }
}

/* Variants 2 and 3: 2 servers x 8 GPUs, NIC i on leaf i / 8, 2 spines. */
static void det_roce_scenario(hs_scenario *sc, int pfc)
{
    multi_scenario(sc, HS_TOPOLOGY_LEAF_SPINE);
    sc->fabric.leaves = 2;
    sc->fabric.spines = 2;
    sc->fabric.pfc = pfc;
    sc->fabric.dcqcn = true;
    sc->fabric.switch_buffer_mib = pfc ? 4.0 : 1.0;
    sc->fabric.ecn.kmin_kb = 50;
    sc->fabric.ecn.kmax_kb = 200;
    sc->fabric.ecn.pmax = 0.2;
    sc->run.seed = 7;
}

static void det_record(struct det_result *r, const hs_flow_done *d)
{
    if (r->n < DET_MAX)
        r->done[r->n] = *d;
    r->n++;
}

/* mode 0: all up front in id order; 1: all up front, shuffled; 2: each added at
 * its start time (ties shuffled) by stepping to it; 3: like 2 plus many small
 * extra steps in between; 4: the flows up front, plus the dependent flows each
 * added when its dependency's completion is reported; 5: the same flows as 4,
 * all up front (start times from run 4), shuffled. */
static void det_run(int mode, struct det_result *res)
{
    hs_scenario sc;
    if (det_multi >= 2)
        det_roce_scenario(&sc, det_multi == 2);
    else if (det_multi)
        multi_scenario(&sc, HS_TOPOLOGY_RAIL_OPTIMIZED);
    else
        fab_test_scenario(&sc, 16 * KIB);
    hs_fabric *f = fab_test_create(&sc);
    int order[DET_N];
    det_shuffle(order, DET_N, mode == 0 ? 0 : 0x1234567ull * (uint64_t)mode);
    if (mode == 0)
        for (int i = 0; i < DET_N; i++)
            order[i] = i;
    memset(res, 0, sizeof *res);
    hs_flow_done d;
    if (mode == 4) {
        for (int k = 0; k < DET_N; k++) {
            const struct det_flow *x = &det_flows[order[k]];
            fab_test_add(f, x->id, x->src, x->dst, x->bytes, x->start);
        }
        int border[DET_NB];
        det_shuffle(border, DET_NB, 0xabcdef);
        while (hs_fabric_next_completion(f, UINT64_MAX, &d) == 1) {
            det_record(res, &d);
            for (int k = 0; k < DET_NB; k++) {
                const struct det_dep *b = &det_b[border[k]];
                if (b->dep_id == d.flow_id) {
                    fab_test_add(f, b->f.id, b->f.src, b->f.dst, b->f.bytes, d.finish_ps);
                    res->b_start[border[k]] = d.finish_ps;
                }
            }
        }
    } else if (mode == 5) {
        int all[DET_MAX];
        det_shuffle(all, DET_MAX, 0x55aa55);
        for (int k = 0; k < DET_MAX; k++) {
            int i = all[k];
            if (i < DET_N)
                fab_test_add(f, det_flows[i].id, det_flows[i].src, det_flows[i].dst, det_flows[i].bytes,
                             det_flows[i].start);
            else
                fab_test_add(f, det_b[i - DET_N].f.id, det_b[i - DET_N].f.src, det_b[i - DET_N].f.dst,
                             det_b[i - DET_N].f.bytes, det_b_start[i - DET_N]);
        }
        while (hs_fabric_next_completion(f, UINT64_MAX, &d) == 1)
            det_record(res, &d);
    } else if (mode <= 1) {
        for (int k = 0; k < DET_N; k++) {
            const struct det_flow *x = &det_flows[order[k]];
            fab_test_add(f, x->id, x->src, x->dst, x->bytes, x->start);
        }
        while (hs_fabric_next_completion(f, UINT64_MAX, &d) == 1)
            det_record(res, &d);
    } else {
        int added[DET_N] = {0};
        int left = DET_N;
        while (left > 0) {
            /* next start time among flows not yet added */
            uint64_t t = UINT64_MAX;
            for (int i = 0; i < DET_N; i++)
                if (!added[i] && det_flows[i].start < t)
                    t = det_flows[i].start;
            /* step to t, collecting completions (optionally in small steps) */
            for (;;) {
                uint64_t now = hs_fabric_now_ps(f);
                uint64_t lim = t;
                if (mode == 3 && now < t) {
                    uint64_t step = 1 + det_next() % 700000; /* up to 0.7 us */
                    if (now + step < t)
                        lim = now + step;
                }
                int r = hs_fabric_next_completion(f, lim, &d);
                if (r == 1) {
                    det_record(res, &d);
                    continue;
                }
                if (lim == t)
                    break;
            }
            if (hs_fabric_now_ps(f) != t) {
                fprintf(stderr, "stepwise: now %" PRIu64 " != %" PRIu64 "\n", hs_fabric_now_ps(f), t);
                exit(1);
            }
            for (int k = 0; k < DET_N; k++) {
                int i = order[k];
                if (!added[i] && det_flows[i].start == t) {
                    fab_test_add(f, det_flows[i].id, det_flows[i].src, det_flows[i].dst, det_flows[i].bytes, t);
                    added[i] = 1;
                    left--;
                }
            }
        }
        while (hs_fabric_next_completion(f, UINT64_MAX, &d) == 1)
            det_record(res, &d);
    }
    det_link_totals(f, res);
    hs_fabric_destroy(f);
}

/* Each run in its own forked process (one ns-3 per process); results come back on a pipe. */
static void det_run(int mode, struct det_result *res);
static void det_targeted(int mode, struct det_result *res);

static int det_fork(void (*fn)(int, struct det_result *), int mode, struct det_result *res)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(fd[0]);
        static struct det_result r;
        fn(mode, &r);
        const char *p = (const char *)&r;
        size_t left = sizeof r;
        while (left > 0) {
            ssize_t w = write(fd[1], p, left);
            if (w <= 0)
                _exit(2);
            p += w;
            left -= (size_t)w;
        }
        _exit(0);
    }
    close(fd[1]);
    char *p = (char *)res;
    size_t left = sizeof *res;
    while (left > 0) {
        ssize_t r = read(fd[0], p, left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        p += r;
        left -= (size_t)r;
    }
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (left != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    return 0;
}

static int det_run_forked(int mode, struct det_result *res) { return det_fork(det_run, mode, res); }

/* A flow added at a completion time t from a GPU whose port finishes sending a
 * segment at exactly t, with two other flows queued there: whether it joins
 * the round-robin before or after that port picks its next segment changes
 * the result, so "added on completion" must act exactly like "added up front".
 * 45000 B segments at 3600 Gb/s take exactly 100 ns. mode 0: W added when X's
 * completion is reported; 1: W added up front. */
static void det_targeted(int mode, struct det_result *res)
{
    hs_scenario sc;
    fab_test_scenario(&sc, 45000);
    hs_fabric *f = fab_test_create(&sc);
    memset(res, 0, sizeof *res);
    const uint64_t t_x = 11 * 100000ull + 500000ull; /* X: 10 segments, done at 1.6 us */
    fab_test_add(f, 1, 1, 2, 10 * 45000ull, 0);      /* X */
    fab_test_add(f, 2, 3, 4, 100 * 45000ull, 0);     /* Y, GPU3's port: done at 16 x 100 ns */
    fab_test_add(f, 3, 3, 5, 100 * 45000ull, 0);     /* Z, same port */
    if (mode == 1)
        fab_test_add(f, 4, 3, 6, 20 * 45000ull, t_x); /* W */
    hs_flow_done d;
    while (hs_fabric_next_completion(f, UINT64_MAX, &d) == 1) {
        det_record(res, &d);
        if (mode == 0 && d.flow_id == 1) {
            if (d.finish_ps != t_x) {
                fprintf(stderr, "X finished at %" PRIu64 ", expected %" PRIu64 "\n", d.finish_ps, t_x);
                exit(1);
            }
            fab_test_add(f, 4, 3, 6, 20 * 45000ull, d.finish_ps);
        }
    }
    hs_fabric_destroy(f);
}

static int det_diff(const struct det_result *a, const struct det_result *b)
{
    int n = 0;
    if (a->n != b->n || a->pauses != b->pauses || a->marks != b->marks || a->drops != b->drops || a->retx != b->retx)
        return DET_MAX;
    for (int i = 0; i < a->n; i++)
        if (a->done[i].flow_id != b->done[i].flow_id || a->done[i].finish_ps != b->done[i].finish_ps)
            n++;
    return n;
}

static int case_determinism(void)
{
    {
        static struct det_result on_done, up_front;
        FAB_CHECK(det_fork(det_targeted, 0, &on_done) == 0, "targeted run 0 failed");
        FAB_CHECK(det_fork(det_targeted, 1, &up_front) == 0, "targeted run 1 failed");
        int d = det_diff(&on_done, &up_front);
        printf("flow added at a completion time onto a port finishing a segment then: ");
        for (int i = 0; i < on_done.n; i++)
            printf("%s%" PRIu64 "@%" PRIu64, i ? ", " : "", on_done.done[i].flow_id, on_done.done[i].finish_ps);
        printf("; vs. up front: %d of %d differ\n", d, on_done.n);
        FAB_CHECK(on_done.n == 4 && d == 0, "targeted: %d completions, %d differ", on_done.n, d);
    }
    for (det_multi = 0; det_multi < DET_VARIANTS; det_multi++) {
        static const char *variants[] = {"one server, 8 GPUs, 16 KiB segments",
                                         "two servers, rail_optimized, MTU 4096 (inter-server flows)",
                                         "two servers, leaf_spine 2 x 2, PFC + ECN + DCQCN, 4 MiB buffers",
                                         "two servers, leaf_spine 2 x 2, no PFC, ECN + DCQCN, 1 MiB buffers (drops)"};
        printf("--- %s\n", variants[det_multi]);
        det_rng = 0x9e3779b97f4a7c15ull;
        det_make_flows();
        static struct det_result res[4], fifo[2];
        static const char *names[] = {"upfront, id order", "upfront, shuffled", "stepwise, added at start",
                                      "stepwise, small random steps"};
        for (int m = 0; m < 4; m++) {
            FAB_CHECK(det_run_forked(m, &res[m]) == 0, "run %d failed", m);
            printf("%-30s: %d completions, last at %.6f us\n", names[m], res[m].n,
                   res[m].n ? res[m].done[res[m].n - 1].finish_ps / 1e6 : 0.0);
            FAB_CHECK(res[m].n == DET_N, "mode %d: %d completions", m, res[m].n);
        }
        printf("links: %" PRIu64 " PFC pauses, %" PRIu64 " ECN marks, %" PRIu64 " drops, %" PRIu64 " retransmissions\n",
               res[0].pauses, res[0].marks, res[0].drops, res[0].retx);
        if (det_multi == 2)
            FAB_CHECK(res[0].pauses > 0 && res[0].marks > 0 && res[0].drops == 0,
                      "PFC variant: pauses %" PRIu64 ", marks %" PRIu64 ", drops %" PRIu64, res[0].pauses, res[0].marks,
                      res[0].drops);
        if (det_multi == 3)
            FAB_CHECK(res[0].drops > 0 && res[0].retx > 0 && res[0].pauses == 0,
                      "lossy variant: drops %" PRIu64 ", retransmissions %" PRIu64, res[0].drops, res[0].retx);
        for (int m = 1; m < 4; m++) {
            int d = det_diff(&res[0], &res[m]);
            printf("'%s' vs '%s': %d of %d completions differ\n", names[0], names[m], d, DET_N);
            FAB_CHECK(d == 0, "mode %d differs in %d completions", m, d);
        }
        /* Completions come out in time order, equal times in flow-id order. */
        int ties = 0;
        for (int i = 1; i < res[0].n; i++) {
            const hs_flow_done *p = &res[0].done[i - 1], *q = &res[0].done[i];
            FAB_CHECK(p->finish_ps < q->finish_ps || (p->finish_ps == q->finish_ps && p->flow_id < q->flow_id),
                      "order at %d", i);
            ties += p->finish_ps == q->finish_ps;
        }
        printf("completions at an equal time as the previous one: %d\n", ties);

        /* The case must be sensitive to tie order: with ns-3's insertion-order
     * tie-break (diagnostic switch) the upfront and shuffled runs differ. */
        setenv("HYSIM_FABRIC_TIES", "insertion", 1);
        FAB_CHECK(det_run_forked(0, &fifo[0]) == 0, "fifo run 0 failed");
        FAB_CHECK(det_run_forked(1, &fifo[1]) == 0, "fifo run 1 failed");
        unsetenv("HYSIM_FABRIC_TIES");
        int d = det_diff(&fifo[0], &fifo[1]);
        printf("with insertion-order ties instead (diagnostic): %d of %d completions differ\n", d, DET_N);
        FAB_CHECK(d > 0, "the scenario does not exercise equal-time ordering");

        /* dependent flows added at the completion time just reported vs. up front */
        det_make_deps();
        static struct det_result dep_res, dep_up;
        FAB_CHECK(det_run_forked(4, &dep_res) == 0, "dependent run failed");
        memcpy(det_b_start, dep_res.b_start, sizeof det_b_start);
        FAB_CHECK(det_run_forked(5, &dep_up) == 0, "upfront replay failed");
        int same_start = 0;
        for (int k = 0; k < DET_NB; k++)
            for (int j = 0; j < k; j++)
                if (det_b_start[j] == det_b_start[k]) {
                    same_start++;
                    break;
                }
        d = det_diff(&dep_res, &dep_up);
        printf("%d flows added at the completion of another (%d sharing a start time): added on "
               "completion vs. all up front: %d of %d completions differ\n",
               DET_NB, same_start, d, dep_res.n);
        FAB_CHECK(dep_res.n == DET_MAX, "dependent run: %d completions", dep_res.n);
        FAB_CHECK(d == 0, "dependent flows: %d completions differ", d);
    }
    FAB_TEST_END();
}

/* (e) errors return -1 (or NULL) with a message. */
static int expect_add_error(hs_fabric *f, uint64_t id, uint32_t s, uint32_t d, uint64_t bytes, uint64_t start,
                            const char *word)
{
    char err[256] = "";
    int r = hs_fabric_add_flow(f, id, s, d, bytes, start, err, sizeof err);
    printf("add_flow(id=%" PRIu64 ", %u->%u, %" PRIu64 " B, start %" PRIu64 ") = %d: %s\n", id, s, d, bytes, start, r,
           err);
    FAB_CHECK(r == -1, "returned %d", r);
    FAB_CHECK(err[0] != '\0', "no message");
    FAB_CHECK(strstr(err, word) != NULL, "message '%s' lacks '%s'", err, word);
    return r;
}

static int case_errors(void)
{
    hs_scenario sc;
    char err[256];

    /* creation errors */
    fab_test_scenario(&sc, SEG);
    sc.servers.count = 2;
    sc.fabric.present = true;
    sc.fabric.topology = HS_TOPOLOGY_FAT_TREE;
    err[0] = '\0';
    FAB_CHECK(hs_fabric_create(&sc, err, sizeof err) == NULL, "fat_tree without leaves accepted");
    printf("create(2 servers, fat_tree, no leaves): %s\n", err);
    FAB_CHECK(strstr(err, "a k-ary fat_tree has leaves = k^2/2 edge switches"), "message: %s", err);

    /* a leaf_spine without leaves, a buffer smaller than the PFC headroom */
    fab_test_scenario(&sc, SEG);
    sc.servers.count = 2;
    sc.fabric.present = true;
    sc.fabric.topology = HS_TOPOLOGY_LEAF_SPINE;
    err[0] = '\0';
    FAB_CHECK(hs_fabric_create(&sc, err, sizeof err) == NULL, "leaf_spine, 0 leaves accepted");
    printf("create(leaf_spine, 0 leaves): %s\n", err);
    FAB_CHECK(strstr(err, "leaf_spine needs 1 to 16 leaves"), "message: %s", err);
    sc.fabric.topology = HS_TOPOLOGY_SINGLE_SWITCH;
    sc.fabric.pfc = true;
    sc.fabric.switch_buffer_mib = 0.5;
    err[0] = '\0';
    FAB_CHECK(hs_fabric_create(&sc, err, sizeof err) == NULL, "tiny PFC buffer accepted");
    printf("create(16 NICs, PFC, 0.5 MiB buffer): %s\n", err);
    FAB_CHECK(strstr(err, "smaller than the PFC headroom"), "message: %s", err);

    fab_test_scenario(&sc, SEG);
    sc.nvlink.gbps_per_gpu = 0;
    err[0] = '\0';
    FAB_CHECK(hs_fabric_create(&sc, err, sizeof err) == NULL, "zero rate accepted");
    printf("create(nvlink 0 Gb/s): %s\n", err);
    FAB_CHECK(err[0] != '\0', "no message");

    fab_test_scenario(&sc, 0);
    err[0] = '\0';
    FAB_CHECK(hs_fabric_create(&sc, err, sizeof err) == NULL, "zero segment accepted");
    printf("create(segment 0): %s\n", err);

    err[0] = '\0';
    FAB_CHECK(hs_fabric_create(NULL, err, sizeof err) == NULL, "NULL scenario accepted");

    fab_test_scenario(&sc, SEG);
    hs_fabric *f = fab_test_create(&sc);
    err[0] = '\0';
    FAB_CHECK(hs_fabric_create(&sc, err, sizeof err) == NULL, "second fabric accepted");
    printf("create(second fabric): %s\n", err);
    FAB_CHECK(err[0] != '\0', "no message");

    /* flow errors */
    expect_add_error(f, 1, 8, 0, MIB, 0, "unknown GPU");
    expect_add_error(f, 1, 0, 99, MIB, 0, "unknown GPU");
    expect_add_error(f, 1, 3, 3, MIB, 0, "GPU 3");
    expect_add_error(f, 1, 0, 1, 0, 0, "zero bytes");
    fab_test_add(f, 1, 0, 1, MIB, 0);
    expect_add_error(f, 1, 2, 3, MIB, 0, "duplicate");
    hs_flow_done d;
    FAB_CHECK(hs_fabric_next_completion(f, 100000000, &d) == 1, "flow 1 did not complete");
    expect_add_error(f, 1, 2, 3, MIB, hs_fabric_now_ps(f), "duplicate"); /* id used before */
    FAB_CHECK(hs_fabric_next_completion(f, 100000000, &d) == 0, "unexpected completion");
    FAB_CHECK(hs_fabric_now_ps(f) == 100000000, "now %" PRIu64, hs_fabric_now_ps(f));
    expect_add_error(f, 2, 0, 1, MIB, 99999999, "in the past");
    expect_add_error(f, 2, 0, 1, MIB, 0, "in the past");
    /* a failed add leaves no trace: the id is still free */
    fab_test_add(f, 2, 0, 1, MIB, 100000000);
    FAB_CHECK(hs_fabric_flows_in_flight(f) == 1, "in flight %" PRIu64, hs_fabric_flows_in_flight(f));
    hs_fabric_stats st;
    hs_fabric_get_stats(f, &st);
    FAB_CHECK(st.flows_added == 2, "flows_added %" PRIu64, st.flows_added);
    hs_fabric_destroy(f);
    FAB_TEST_END();
}

/* (f) later starts and stepping with limits. */
static int case_stepping(void)
{
    hs_scenario sc;
    fab_test_scenario(&sc, SEG);
    hs_fabric *f = fab_test_create(&sc);
    hs_flow_done d;
    const uint64_t us = 1000000;
    const uint64_t bytes = 16 * MIB;

    FAB_CHECK(hs_fabric_now_ps(f) == 0, "now %" PRIu64, hs_fabric_now_ps(f));
    fab_test_add(f, 5, 0, 1, bytes, 10 * us); /* starts later */

    /* step to 5 us: nothing completes, the fabric is at the limit */
    FAB_CHECK(hs_fabric_next_completion(f, 5 * us, &d) == 0, "completion before 5 us");
    FAB_CHECK(hs_fabric_now_ps(f) == 5 * us, "now %" PRIu64, hs_fabric_now_ps(f));
    /* limit == now: nothing to do */
    FAB_CHECK(hs_fabric_next_completion(f, 5 * us, &d) == 0, "completion at limit == now");
    FAB_CHECK(hs_fabric_now_ps(f) == 5 * us, "now %" PRIu64, hs_fabric_now_ps(f));
    /* a limit before now changes nothing */
    FAB_CHECK(hs_fabric_next_completion(f, 1 * us, &d) == 0, "completion at limit < now");
    FAB_CHECK(hs_fabric_now_ps(f) == 5 * us, "now %" PRIu64, hs_fabric_now_ps(f));

    /* the flow starts at 10 us; step to just before its ideal finish */
    const double dur = fab_ideal_ps(&sc, bytes);
    const uint64_t before = 10 * us + (uint64_t)dur - 1000;
    FAB_CHECK(hs_fabric_next_completion(f, before, &d) == 0, "completed before %" PRIu64, before);
    FAB_CHECK(hs_fabric_now_ps(f) == before, "now %" PRIu64, hs_fabric_now_ps(f));
    FAB_CHECK(hs_fabric_flows_in_flight(f) == 1, "in flight");
    /* many tiny steps still land exactly on each limit */
    for (int i = 1; i <= 50; i++) {
        uint64_t lim = before + (uint64_t)i * 7;
        int r = hs_fabric_next_completion(f, lim, &d);
        if (r == 1) {
            FAB_CHECK(0, "unexpected completion at %" PRIu64, d.finish_ps);
            break;
        }
        FAB_CHECK(hs_fabric_now_ps(f) == lim, "now %" PRIu64 " != %" PRIu64, hs_fabric_now_ps(f), lim);
    }
    FAB_CHECK(hs_fabric_next_completion(f, 100 * us, &d) == 1, "no completion");
    printf("flow 5 (16 MiB from 10 us): finish %.6f us, start + ideal %.6f us\n", d.finish_ps / 1e6,
           (10 * us + dur) / 1e6);
    FAB_CHECK(d.flow_id == 5, "id %" PRIu64, d.flow_id);
    FAB_CHECK(fab_rel(d.finish_ps - 10 * us, dur) < 0.01, "duration %" PRIu64, d.finish_ps - 10 * us);
    FAB_CHECK(hs_fabric_now_ps(f) == d.finish_ps, "now %" PRIu64, hs_fabric_now_ps(f));
    const uint64_t dur5 = d.finish_ps - 10 * us; /* exact duration of a lone flow */

    /* two flows on disjoint ports finish at the same picosecond: reported one
     * call at a time, in flow-id order, without time moving */
    uint64_t t0 = hs_fabric_now_ps(f) + 3 * us;
    fab_test_add(f, 9, 2, 3, bytes, t0);
    fab_test_add(f, 7, 4, 5, bytes, t0);
    fab_test_add(f, 8, 6, 7, bytes, t0);
    uint64_t want = t0 + dur5;
    /* a limit exactly at the completion time: not reported (events at limit have not run) */
    FAB_CHECK(hs_fabric_next_completion(f, want, &d) == 0, "completion reported at its limit");
    FAB_CHECK(hs_fabric_now_ps(f) == want, "now %" PRIu64, hs_fabric_now_ps(f));
    FAB_CHECK(hs_fabric_flows_in_flight(f) == 3, "in flight %" PRIu64, hs_fabric_flows_in_flight(f));
    uint64_t ids[3];
    for (int i = 0; i < 3; i++) {
        FAB_CHECK(hs_fabric_next_completion(f, want + 1, &d) == 1, "completion %d missing", i);
        ids[i] = d.flow_id;
        FAB_CHECK(d.finish_ps == want, "finish %" PRIu64 " != %" PRIu64, d.finish_ps, want);
        FAB_CHECK(hs_fabric_now_ps(f) == want, "now %" PRIu64, hs_fabric_now_ps(f));
    }
    printf("equal-time completions at %.6f us: %" PRIu64 ", %" PRIu64 ", %" PRIu64 "\n", want / 1e6, ids[0], ids[1],
           ids[2]);
    FAB_CHECK(ids[0] == 7 && ids[1] == 8 && ids[2] == 9, "order %" PRIu64 " %" PRIu64 " %" PRIu64, ids[0], ids[1],
              ids[2]);
    /* a flow added right at the completion time, from a GPU that was just busy */
    fab_test_add(f, 10, 2, 3, bytes, hs_fabric_now_ps(f));
    FAB_CHECK(hs_fabric_next_completion(f, want + 1, &d) == 0, "completion");
    FAB_CHECK(hs_fabric_now_ps(f) == want + 1, "now %" PRIu64, hs_fabric_now_ps(f));
    FAB_CHECK(hs_fabric_next_completion(f, UINT64_MAX, &d) == 1, "flow 10 missing");
    FAB_CHECK(d.flow_id == 10 && d.finish_ps == want + dur5, "flow %" PRIu64 " at %" PRIu64, d.flow_id, d.finish_ps);
    FAB_CHECK(hs_fabric_flows_in_flight(f) == 0, "in flight");
    hs_fabric_destroy(f);
    FAB_TEST_END();
}

/* (g) stretch: two servers joined by a rail-optimised or single-switch Ethernet fabric. */
static void multi_scenario(hs_scenario *sc, enum hs_topology topo)
{
    fab_test_scenario(sc, SEG);
    sc->servers.count = 2;
    sc->fabric.present = true;
    sc->fabric.topology = topo;
    sc->fabric.mtu = 4096;
    sc->fabric.link_latency_ns = 600;
    sc->nics.per_server = 8;
    sc->nics.gbps = 400.0;
    sc->pcie.gbps = 512.0;
    sc->pcie.latency_ns = 1000;
}

/* bytes at the NIC rate + PCIe and Ethernet latencies, both ends */
static double multi_ideal_ps(const hs_scenario *sc, uint64_t bytes)
{
    return (double)bytes * 8.0 / (sc->nics.gbps * 1e9) * 1e12 +
           2.0 * (sc->pcie.latency_ns + sc->fabric.link_latency_ns) * 1000.0;
}

static int case_multi_server(void)
{
    hs_scenario sc;
    const uint64_t bytes = 16 * MIB;
    static const struct {
        enum hs_topology topo;
        const char *name;
    } topos[] = {{HS_TOPOLOGY_RAIL_OPTIMIZED, "rail_optimized"}, {HS_TOPOLOGY_SINGLE_SWITCH, "single_switch"}};
    for (int t = 0; t < 2; t++) {
        multi_scenario(&sc, topos[t].topo);
        /* one ns-3 per process: each topology in its own child */
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            hs_fabric *f = fab_test_create(&sc);
            double single = multi_ideal_ps(&sc, bytes);
            uint64_t fin[32] = {0};
            /* same rail (GPU0 -> GPU8), cross rail (GPU0 -> GPU11), one at a time */
            fab_test_add(f, 0, 0, 8, bytes, 0);
            run_count(f, fin, 32, 1);
            uint64_t t1 = hs_fabric_now_ps(f);
            fab_test_add(f, 1, 0, 11, bytes, t1);
            run_count(f, fin, 32, 1);
            printf("%s: GPU0->GPU8 %.3f us, GPU0->GPU11 %.3f us, ideal %.3f us\n", topos[t].name, fin[0] / 1e6,
                   (fin[1] - t1) / 1e6, single / 1e6);
            FAB_CHECK(fab_rel(fin[0], single) < 0.01, "same rail %" PRIu64, fin[0]);
            FAB_CHECK(fab_rel(fin[1] - t1, single) < 0.01, "cross rail %" PRIu64, fin[1] - t1);
            FAB_CHECK(fin[0] >= single, "faster than the NIC");
            /* 8 flows GPU i -> GPU 8+i at once: 8 independent rails / switch ports */
            uint64_t t2 = hs_fabric_now_ps(f);
            for (uint32_t i = 0; i < 8; i++)
                fab_test_add(f, 10 + i, i, 8 + i, bytes, t2);
            /* and an intra-server flow next to them, over NVLink */
            fab_test_add(f, 20, 9, 10, bytes, t2);
            run_count(f, fin, 32, 9);
            for (int i = 0; i < 8; i++)
                FAB_CHECK(fab_rel(fin[10 + i] - t2, single) < 0.01, "flow %d: %" PRIu64, 10 + i, fin[10 + i] - t2);
            FAB_CHECK(fab_rel(fin[20] - t2, fab_ideal_ps(&sc, bytes)) < 0.01, "nvlink flow %" PRIu64, fin[20] - t2);
            printf("%s: 8 parallel inter-server flows: %.3f .. %.3f us; NVLink flow %.3f us\n", topos[t].name,
                   (fin[10] - t2) / 1e6, (fin[17] - t2) / 1e6, (fin[20] - t2) / 1e6);
            /* two flows out of one NIC (GPU0 -> GPU8 and GPU1 -> GPU8 share NIC 0 on
             * rail_optimized; on single_switch both end at NIC 8's port) */
            uint64_t t3 = hs_fabric_now_ps(f);
            fab_test_add(f, 21, 0, 8, bytes, t3);
            fab_test_add(f, 22, 1, 8, bytes, t3);
            run_count(f, fin, 32, 2);
            printf("%s: 2 flows into GPU8: %.3f, %.3f us (2 x single %.3f us)\n", topos[t].name, (fin[21] - t3) / 1e6,
                   (fin[22] - t3) / 1e6, 2 * single / 1e6);
            FAB_CHECK(fab_rel(fin[21] - t3, 2 * single) < 0.02, "flow 21 %" PRIu64, fin[21] - t3);
            FAB_CHECK(fab_rel(fin[22] - t3, 2 * single) < 0.02, "flow 22 %" PRIu64, fin[22] - t3);
            hs_fabric_stats st;
            hs_fabric_get_stats(f, &st);
            FAB_CHECK(st.bytes_delivered == 13 * bytes, "bytes %" PRIu64, st.bytes_delivered);
            hs_fabric_destroy(f);
            fflush(stdout);
            _exit(fab_test_failures ? 1 : 0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        FAB_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s failed", topos[t].name);
    }
    /* leaves and spines that make no k-ary fat tree (test_fat_tree builds real ones) */
    char err[256] = "";
    multi_scenario(&sc, HS_TOPOLOGY_FAT_TREE);
    FAB_CHECK(hs_fabric_create(&sc, err, sizeof err) == NULL, "fat_tree with %d leaves, %d spines accepted",
              sc.fabric.leaves, sc.fabric.spines);
    printf("create(2 servers, fat_tree): %s\n", err);
    FAB_CHECK(strstr(err, "a k-ary fat_tree has leaves = k^2/2 edge switches"), "%s", err);
    FAB_TEST_END();
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 2) {
        fprintf(stderr, "usage: %s single_flow|incast|ring|determinism|errors|stepping|multi_server\n", argv[0]);
        return 2;
    }
    const char *c = argv[1];
    if (!strcmp(c, "single_flow"))
        return case_single_flow();
    if (!strcmp(c, "incast"))
        return case_incast();
    if (!strcmp(c, "ring"))
        return case_ring();
    if (!strcmp(c, "determinism"))
        return case_determinism();
    if (!strcmp(c, "errors"))
        return case_errors();
    if (!strcmp(c, "stepping"))
        return case_stepping();
    if (!strcmp(c, "multi_server"))
        return case_multi_server();
    fprintf(stderr, "unknown case %s\n", c);
    return 2;
}
