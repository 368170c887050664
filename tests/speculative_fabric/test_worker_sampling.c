/*
 * Link sampling with a worker-process fabric (ns3-glue/worker/fabric_proxy.cc): the
 * worker runs ahead and is rolled back by late flows, so the samples it takes
 * ahead may change; the proxy must deliver each sample once, in time order,
 * never above the safe time the caller has declared, and with the counters of
 * a run that had every flow from the start. Each case hands random flows over
 * out of order (about 40 % late) to a sampling worker and compares every
 * sample of every link bit for bit with an in-process run.
 */
#include "fabric_test_util.h"

#define KIB 1024ull
#define US  1000000ull /* ps */

/* Every sample of every link, in delivery order. */
typedef struct {
    uint64_t *t;
    hs_fabric_link_sample *links; /* nlinks per sample */
    size_t n, cap, nlinks;
    uint64_t safe_ps;    /* the worker run's safe time: no sample above it may arrive */
    uint64_t above_safe; /* samples delivered above it */
    hs_fabric *fabric;   /* read from the sampling function, as hysimd does */
    uint64_t unnamed;    /* links it could not read there */
} sample_log;

static void on_sample(void *ctx, uint64_t t_ps, const hs_fabric_link_sample *links, size_t n)
{
    sample_log *g = ctx;
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 256;
        g->t = realloc(g->t, g->cap * sizeof *g->t);
        g->links = realloc(g->links, g->cap * n * sizeof *g->links);
        if (!g->t || !g->links)
            exit(1);
    }
    g->nlinks = n;
    g->above_safe += t_ps > g->safe_ps;
    hs_fabric_link_stats ls;
    for (size_t i = 0; g->fabric && i < n; i++) /* a worker's proxy answers this while it delivers */
        g->unnamed += hs_fabric_get_link_stats(g->fabric, i, &ls) != 0 || !ls.name[0];
    g->t[g->n] = t_ps;
    memcpy(g->links + g->n * n, links, n * sizeof *links);
    g->n++;
}

static hs_fabric *create(const hs_scenario *sc, int worker, uint64_t interval_ps, sample_log *g, uint64_t sample_ps)
{
    hs_fabric_options o = {.worker = worker, .checkpoint_interval_ps = interval_ps, .checkpoints_max = 32};
    char err[512] = "";
    hs_fabric *f = hs_fabric_create_opts(sc, &o, err, sizeof err);
    if (!f || hs_fabric_sample_links(f, sample_ps, on_sample, g, err, sizeof err) != 0) {
        fprintf(stderr, "%s fabric: %s\n", worker ? "worker" : "in-process", err);
        exit(1);
    }
    g->fabric = f;
    return f;
}

static int by_arrival(const void *a, const void *b)
{
    const fab_test_flow *x = a, *y = b;
    if (x->arrive != y->arrive)
        return x->arrive < y->arrive ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static void add(hs_fabric *f, const fab_test_flow *fl)
{
    char err[512] = "";
    if (hs_fabric_add_flow(f, fl->id, fl->src, fl->dst, fl->bytes, fl->start, err, sizeof err) != 0) {
        fprintf(stderr, "add_flow(%" PRIu64 "): %s\n", fl->id, err);
        exit(1);
    }
}

/* Reference: every flow known at time 0, in this process. */
static void run_reference(const hs_scenario *sc, const fab_test_flow *fl, size_t n, uint64_t sample_ps, sample_log *g)
{
    hs_fabric *f = create(sc, 0, 0, g, sample_ps);
    for (size_t i = 0; i < n; i++)
        add(f, &fl[i]);
    hs_flow_done d;
    while (hs_fabric_next_completion(f, UINT64_MAX, &d) == 1) {}
    g->fabric = NULL;
    hs_fabric_destroy(f);
}

/*
 * Flows handed over at their arrival time to a worker that runs ahead to each
 * arrival, so a late one rolls it back; the safe time is the earliest start
 * still to come, and at the end the fabric's time (no flow is left).
 */
static uint64_t run_speculative(const hs_scenario *sc, fab_test_flow *fl, size_t n, uint64_t interval_ps,
                                uint64_t sample_ps, sample_log *g, hs_fabric_checkpoint_stats *cs)
{
    qsort(fl, n, sizeof *fl, by_arrival);
    uint64_t *suffix_min = malloc((n + 1) * sizeof *suffix_min);
    suffix_min[n] = UINT64_MAX;
    for (size_t i = n; i-- > 0;)
        suffix_min[i] = fl[i].start < suffix_min[i + 1] ? fl[i].start : suffix_min[i + 1];
    hs_fabric *f = create(sc, 1, interval_ps, g, sample_ps);
    char err[512];
    hs_flow_done d;
    uint64_t late = 0;
    for (size_t i = 0; i < n; i++) {
        while (hs_fabric_next_completion(f, fl[i].arrive, &d) == 1) {}
        late += fl[i].start < hs_fabric_now_ps(f);
        add(f, &fl[i]);
        g->safe_ps = suffix_min[i + 1] == UINT64_MAX ? fl[i].arrive : suffix_min[i + 1];
        if (hs_fabric_set_safe_time(f, g->safe_ps, err, sizeof err) != 0) {
            fprintf(stderr, "set_safe_time: %s\n", err);
            exit(1);
        }
    }
    while (hs_fabric_next_completion(f, UINT64_MAX, &d) == 1) {}
    FAB_CHECK(hs_fabric_flows_in_flight(f) == 0, "flows in flight at the end");
    g->safe_ps = hs_fabric_now_ps(f);
    FAB_CHECK(hs_fabric_set_safe_time(f, g->safe_ps, err, sizeof err) == 0, "%s", err);
    hs_fabric_get_checkpoint_stats(f, cs);
    g->fabric = NULL;
    hs_fabric_destroy(f);
    free(suffix_min);
    return late;
}

static int compare_runs(const hs_scenario *sc, size_t n, uint64_t span_ps, uint64_t min_b, uint64_t max_b,
                        uint64_t max_late_ps, uint64_t interval_ps, uint64_t sample_ps)
{
    const uint32_t ngpus = sc->servers.count * sc->servers.gpus_per_server;
    fab_test_flow *fl = calloc(n, sizeof *fl);
    fab_test_random_flows(fl, n, ngpus, span_ps, min_b, max_b, max_late_ps);
    sample_log got = {.safe_ps = 0}, want = {.safe_ps = UINT64_MAX};
    hs_fabric_checkpoint_stats cs;
    uint64_t late = run_speculative(sc, fl, n, interval_ps, sample_ps, &got, &cs);
    run_reference(sc, fl, n, sample_ps, &want);

    FAB_CHECK(got.above_safe == 0, "%" PRIu64 " samples delivered above the safe time", got.above_safe);
    FAB_CHECK(got.unnamed == 0 && want.unnamed == 0, "links unread in the sampling function: %" PRIu64 ", %" PRIu64,
              got.unnamed, want.unnamed);
    FAB_CHECK(got.n == want.n && got.nlinks == want.nlinks, "%zu samples of %zu links, want %zu of %zu", got.n,
              got.nlinks, want.n, want.nlinks);
    size_t same = 0, first_bad = SIZE_MAX;
    uint64_t busy = 0;
    for (size_t i = 0; i < got.n && i < want.n && got.nlinks == want.nlinks; i++) {
        const hs_fabric_link_sample *a = got.links + i * got.nlinks, *b = want.links + i * want.nlinks;
        bool eq = got.t[i] == want.t[i];
        for (size_t k = 0; k < got.nlinks; k++) {
            eq = eq && a[k].bytes == b[k].bytes && a[k].queue_bytes == b[k].queue_bytes &&
                 a[k].pfc_paused_ps == b[k].pfc_paused_ps;
            busy += b[k].queue_bytes > 0 || b[k].pfc_paused_ps > 0;
        }
        same += eq;
        if (!eq && first_bad == SIZE_MAX)
            first_bad = i;
    }
    FAB_CHECK(first_bad == SIZE_MAX, "sample %zu (at %" PRIu64 " ps) differs from the in-process run", first_bad,
              first_bad < got.n ? got.t[first_bad] : 0);
    for (size_t i = 0; i < want.n; i++)
        FAB_CHECK(want.t[i] == (i + 1) * sample_ps, "in-process sample %zu at %" PRIu64 " ps", i, want.t[i]);
    printf("%zu flows, %" PRIu64 " late, %" PRIu64 " rollbacks; %zu samples of %zu links, %zu identical; "
           "%" PRIu64 " link samples with a queue or a pause\n",
           n, late, cs.rollbacks, got.n, got.nlinks, same, busy);
    FAB_CHECK(cs.rollbacks >= n / 10, "only %" PRIu64 " rollbacks: the test exercises too few", cs.rollbacks);
    FAB_CHECK(want.n >= span_ps / sample_ps, "only %zu samples", want.n);
    free(fl);
    free(got.t);
    free(got.links);
    free(want.t);
    free(want.links);
    FAB_TEST_END();
}

/* NVLink only: samples every 3 us, checkpoints every 10 us, with idle stretches. */
static int case_nvlink(void)
{
    hs_scenario sc;
    fab_test_scenario(&sc, 64 * KIB);
    fab_test_rng_state = 11;
    return compare_runs(&sc, 120, 300 * US, 16 * KIB, 2048 * KIB, 30 * US, 10 * US, 3 * US);
}

/* RoCE with PFC: queues and pauses in the samples. */
static int case_roce(void)
{
    hs_scenario sc;
    fab_test_roce_switch(&sc, 4, 2, 1);
    fab_test_rng_state = 5;
    return compare_runs(&sc, 150, 100 * US, 4 * KIB, 512 * KIB, 20 * US, 5 * US, 2 * US);
}

/* Refused as in-process once a flow is added (batched flows count). */
static int case_refusals(void)
{
    hs_scenario sc;
    fab_test_scenario(&sc, 64 * KIB);
    sample_log g = {.safe_ps = UINT64_MAX};
    char err[512] = "";
    hs_fabric_options o = {.worker = 1};
    hs_fabric *f = hs_fabric_create_opts(&sc, &o, err, sizeof err);
    FAB_CHECK(f != NULL, "%s", err);
    add(f, &(fab_test_flow){.id = 1, .src = 0, .dst = 1, .bytes = KIB, .start = 0});
    FAB_CHECK(hs_fabric_sample_links(f, US, on_sample, &g, err, sizeof err) == -1 &&
                  strstr(err, "before the first flow") != NULL,
              "enabled after a flow: %s", err);
    hs_fabric_destroy(f);
    FAB_TEST_END();
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    if (!strcmp(c, "nvlink"))
        return case_nvlink();
    if (!strcmp(c, "roce"))
        return case_roce();
    if (!strcmp(c, "refusals"))
        return case_refusals();
    fprintf(stderr, "usage: %s nvlink|roce|refusals\n", argv[0]);
    return 2;
}
