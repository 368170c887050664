/*
 * Worker-mode fabric (ns3-glue/worker/fabric_proxy.cc, fabric_worker.cc): checkpoints
 * and rollback. The determinism cases hand hundreds of flows over out of
 * order (many late by random amounts, on shared bottlenecks) to a worker-mode
 * fabric, and compare every completion time, after all rollbacks, bit for bit
 * with an in-process run that had every flow from the start.
 */
#include "fabric_test_util.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define KIB 1024ull
#define US  1000000ull /* ps */

static hs_fabric *create_worker(const hs_scenario *sc, uint64_t interval_ps, uint32_t max)
{
    hs_fabric_options o = {.worker = 1, .checkpoint_interval_ps = interval_ps, .checkpoints_max = max};
    char err[512] = "";
    hs_fabric *f = hs_fabric_create_opts(sc, &o, err, sizeof err);
    if (!f) {
        fprintf(stderr, "hs_fabric_create_opts: %s\n", err);
        exit(1);
    }
    return f;
}

/* Reference: every flow known at time 0, in this process. */
static void run_reference(const hs_scenario *sc, const fab_test_flow *fl, size_t n, uint64_t *fin)
{
    hs_fabric_options o = {0};
    char err[512] = "";
    hs_fabric *f = hs_fabric_create_opts(sc, &o, err, sizeof err);
    if (!f) {
        fprintf(stderr, "reference: %s\n", err);
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        fab_test_add(f, fl[i].id, fl[i].src, fl[i].dst, fl[i].bytes, fl[i].start);
    hs_flow_done d;
    while (hs_fabric_next_completion(f, UINT64_MAX, &d) == 1)
        fin[d.flow_id] = d.finish_ps;
    hs_fabric_destroy(f);
}

static int by_arrival(const void *a, const void *b)
{
    const fab_test_flow *x = a, *y = b;
    if (x->arrive != y->arrive)
        return x->arrive < y->arrive ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * Speculative driver: flows are handed over at their arrival time; the fabric
 * runs ahead to each arrival, so a late flow (arrival > start) rolls it back.
 * The safe time handed over is the earliest start still to come.
 */
static void run_speculative(hs_fabric *f, fab_test_flow *fl, size_t n, uint64_t *fin, uint64_t *late)
{
    qsort(fl, n, sizeof *fl, by_arrival);
    uint64_t *suffix_min = malloc((n + 1) * sizeof *suffix_min);
    suffix_min[n] = UINT64_MAX;
    for (size_t i = n; i-- > 0;)
        suffix_min[i] = fl[i].start < suffix_min[i + 1] ? fl[i].start : suffix_min[i + 1];
    char err[512];
    hs_flow_done d;
    for (size_t i = 0; i < n; i++) {
        while (hs_fabric_next_completion(f, fl[i].arrive, &d) == 1) {
            FAB_CHECK(fin[d.flow_id] == UINT64_MAX, "flow %" PRIu64 " reported twice", d.flow_id);
            fin[d.flow_id] = d.finish_ps;
        }
        if (fl[i].start < hs_fabric_now_ps(f))
            (*late)++;
        const uint64_t gen = hs_fabric_generation(f);
        if (hs_fabric_add_flow(f, fl[i].id, fl[i].src, fl[i].dst, fl[i].bytes, fl[i].start, err, sizeof err) != 0) {
            fprintf(stderr, "add_flow(%" PRIu64 "): %s\n", fl[i].id, err);
            exit(1);
        }
        FAB_CHECK(hs_fabric_now_ps(f) <= fl[i].start || hs_fabric_generation(f) == gen,
                  "after a rollback the fabric is at or before the late start");
        hs_flow_done w;
        while (hs_fabric_next_revision(f, &w) == 1) {
            FAB_CHECK(fin[w.flow_id] == w.finish_ps,
                      "withdrawn flow %" PRIu64 ": %" PRIu64 " reported, %" PRIu64 " withdrawn", w.flow_id,
                      fin[w.flow_id], w.finish_ps);
            fin[w.flow_id] = UINT64_MAX;
        }
        if (hs_fabric_set_safe_time(f, suffix_min[i + 1] == UINT64_MAX ? fl[i].arrive : suffix_min[i + 1], err,
                                    sizeof err) != 0) {
            fprintf(stderr, "set_safe_time: %s\n", err);
            exit(1);
        }
    }
    while (hs_fabric_next_completion(f, UINT64_MAX, &d) == 1) {
        FAB_CHECK(fin[d.flow_id] == UINT64_MAX, "flow %" PRIu64 " reported twice", d.flow_id);
        fin[d.flow_id] = d.finish_ps;
    }
    FAB_CHECK(hs_fabric_flows_in_flight(f) == 0, "%" PRIu64 " flows in flight at the end",
              hs_fabric_flows_in_flight(f));
    free(suffix_min);
}

static int compare_runs(const hs_scenario *sc, size_t n, uint64_t span_ps, uint64_t min_b, uint64_t max_b,
                        uint64_t max_late_ps, uint64_t interval_ps)
{
    const uint32_t ngpus = sc->servers.count * sc->servers.gpus_per_server;
    fab_test_flow *fl = calloc(n, sizeof *fl);
    uint64_t *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
    for (size_t i = 0; i < n; i++)
        want[i] = got[i] = UINT64_MAX;
    fab_test_random_flows(fl, n, ngpus, span_ps, min_b, max_b, max_late_ps);

    hs_fabric *f = create_worker(sc, interval_ps, 32);
    uint64_t late = 0;
    run_speculative(f, fl, n, got, &late);
    hs_fabric_checkpoint_stats cs;
    hs_fabric_get_checkpoint_stats(f, &cs);
    hs_fabric_destroy(f);
    run_reference(sc, fl, n, want);

    size_t same = 0;
    for (size_t i = 0; i < n; i++) {
        same += got[i] == want[i];
        FAB_CHECK(got[i] == want[i], "flow %zu: %" PRIu64 " ps after rollbacks, %" PRIu64 " ps with every flow known",
                  i, got[i], want[i]);
    }
    printf("%zu flows, %" PRIu64 " late, %" PRIu64 " rollbacks, %" PRIu64 " flows replayed, %" PRIu64
           " checkpoints taken: %zu identical\n",
           n, late, cs.rollbacks, cs.replayed_flows, cs.taken, same);
    FAB_CHECK(cs.rollbacks >= n / 10, "only %" PRIu64 " rollbacks: the test exercises too few", cs.rollbacks);
    FAB_CHECK(cs.taken > cs.rollbacks, "checkpoints taken: %" PRIu64, cs.taken);
    /* each rollback hands its replayed flows over in one message (fewer than 2048 here) */
    FAB_CHECK(cs.replay_messages <= cs.rollbacks && cs.replayed_flows > cs.replay_messages,
              "%" PRIu64 " replay messages for %" PRIu64 " rollbacks, %" PRIu64 " flows", cs.replay_messages,
              cs.rollbacks, cs.replayed_flows);
    free(fl);
    free(want);
    free(got);
    FAB_TEST_END();
}

static int case_nvlink_random(void)
{
    hs_scenario sc;
    fab_test_scenario(&sc, 64 * KIB);
    return compare_runs(&sc, 300, 200 * US, 16 * KIB, 4096 * KIB, 30 * US, 10 * US);
}

static int case_roce_random(void)
{
    hs_scenario sc;
    fab_test_roce_switch(&sc, 4, 2, 32);
    return compare_runs(&sc, 200, 100 * US, 4 * KIB, 256 * KIB, 20 * US, 5 * US);
}

/* Revisions: a late flow on a shared link delays a completion already reported. */
static int case_revisions(void)
{
    hs_scenario sc;
    fab_test_scenario(&sc, 64 * KIB);
    hs_fabric *f = create_worker(&sc, 1 * US, 8);
    fab_test_add(f, 1, 0, 1, 4096 * KIB, 0);
    hs_flow_done d, w;
    FAB_CHECK(hs_fabric_next_completion(f, UINT64_MAX, &d) == 1 && d.flow_id == 1, "flow 1 done");
    const uint64_t first = d.finish_ps;
    FAB_CHECK(hs_fabric_next_revision(f, &w) == 0, "no revision before a rollback");
    fab_test_add(f, 2, 2, 1, 4096 * KIB, 3 * US + 17); /* late: GPU 1's link is shared */
    FAB_CHECK(hs_fabric_generation(f) == 1, "generation %" PRIu64, hs_fabric_generation(f));
    FAB_CHECK(hs_fabric_now_ps(f) == 3 * US, "resumed at the checkpoint 3 us, not %" PRIu64, hs_fabric_now_ps(f));
    FAB_CHECK(hs_fabric_flows_in_flight(f) == 2, "both flows in flight again");
    FAB_CHECK(hs_fabric_next_revision(f, &w) == 1 && w.flow_id == 1 && w.finish_ps == first,
              "flow 1's completion is withdrawn");
    FAB_CHECK(hs_fabric_next_revision(f, &w) == 0, "one revision only");
    FAB_CHECK(hs_fabric_next_completion(f, UINT64_MAX, &d) == 1 && d.flow_id == 1, "flow 1 again");
    FAB_CHECK(d.finish_ps > first, "flow 1 now finishes later: %" PRIu64 " vs %" PRIu64, d.finish_ps, first);
    FAB_CHECK(hs_fabric_next_completion(f, UINT64_MAX, &d) == 1 && d.flow_id == 2, "flow 2");

    char err[512] = "";
    FAB_CHECK(hs_fabric_set_safe_time(f, 5 * US, err, sizeof err) == 0, "%s", err);
    FAB_CHECK(hs_fabric_add_flow(f, 3, 0, 1, KIB, 4 * US, err, sizeof err) == -1 && strstr(err, "safe time") != NULL,
              "a start before the safe time is refused: %s", err);
    FAB_CHECK(hs_fabric_add_flow(f, 2, 0, 1, KIB, 9 * US, err, sizeof err) == -1 && strstr(err, "duplicate") != NULL,
              "duplicate id: %s", err);
    hs_fabric_checkpoint_stats cs;
    hs_fabric_get_checkpoint_stats(f, &cs);
    FAB_CHECK(cs.live >= 1 && cs.live <= 8, "live %" PRIu64, cs.live);
    hs_fabric_destroy(f);

    /* In-process fabrics keep refusing late flows. */
    f = fab_test_create(&sc);
    fab_test_add(f, 1, 0, 1, KIB, 0);
    FAB_CHECK(hs_fabric_next_completion(f, UINT64_MAX, &d) == 1, "in-process step");
    FAB_CHECK(hs_fabric_add_flow(f, 2, 0, 1, KIB, 0, err, sizeof err) == -1 && strstr(err, "in the past") != NULL,
              "in-process late flow: %s", err);
    FAB_CHECK(hs_fabric_generation(f) == 0, "in-process generation");
    hs_fabric_destroy(f);
    FAB_TEST_END();
}

/*
 * Batches: flows added before a step reach the worker together, and a rollback
 * hands every flow after the resumed checkpoint over with the late flow, 2048
 * a message; completions equal an in-process run's.
 */
static int case_batched_replay(void)
{
    enum { N = 2500 }; /* more than one message's worth */
    hs_scenario sc;
    fab_test_scenario(&sc, 64 * KIB);
    fab_test_flow *fl = calloc(N + 1, sizeof *fl);
    uint64_t *want = malloc((N + 1) * sizeof *want), *got = malloc((N + 1) * sizeof *got);
    for (size_t i = 0; i <= N; i++) {
        fl[i] = (fab_test_flow){.id = i,
                                .bytes = fab_test_rng_range(KIB, 16 * KIB),
                                .start = 2 * US + i * 1000,
                                .src = (uint32_t)(i % 8),
                                .dst = (uint32_t)((i + 1 + i / 8 % 7) % 8)};
        want[i] = got[i] = UINT64_MAX;
    }
    fl[N].start = US / 2; /* the late one */
    hs_fabric *f = create_worker(&sc, 1 * US, 16);
    for (size_t i = 0; i < N; i++)
        fab_test_add(f, fl[i].id, fl[i].src, fl[i].dst, fl[i].bytes, fl[i].start);
    FAB_CHECK(hs_fabric_flows_in_flight(f) == N, "%" PRIu64 " in flight before the first step",
              hs_fabric_flows_in_flight(f));
    hs_flow_done d;
    FAB_CHECK(hs_fabric_next_completion(f, 3 * US / 2, &d) == 0, "nothing done by 1.5 us");
    hs_fabric_checkpoint_stats cs;
    hs_fabric_get_checkpoint_stats(f, &cs);
    FAB_CHECK(cs.flow_messages == 2 && cs.replay_messages == 0, "%" PRIu64 " messages for %d flows", cs.flow_messages,
              N);
    fab_test_add(f, fl[N].id, fl[N].src, fl[N].dst, fl[N].bytes, fl[N].start);
    hs_fabric_get_checkpoint_stats(f, &cs);
    FAB_CHECK(cs.rollbacks == 1 && hs_fabric_now_ps(f) == 0, "rolled back to 0: %" PRIu64 " ps", hs_fabric_now_ps(f));
    FAB_CHECK(cs.replayed_flows == N, "replayed %" PRIu64, cs.replayed_flows);
    FAB_CHECK(cs.replay_messages == 2 && cs.flow_messages == 4,
              "%" PRIu64 " replay messages, %" PRIu64 " in all: one per 2048 flows", cs.replay_messages,
              cs.flow_messages);
    while (hs_fabric_next_completion(f, UINT64_MAX, &d) == 1)
        got[d.flow_id] = d.finish_ps;
    hs_fabric_destroy(f);
    run_reference(&sc, fl, N + 1, want);
    for (size_t i = 0; i <= N; i++)
        FAB_CHECK(got[i] == want[i] && got[i] != UINT64_MAX,
                  "flow %zu: %" PRIu64 " ps replayed, %" PRIu64 " ps in-process", i, got[i], want[i]);
    free(fl);
    free(want);
    free(got);
    FAB_TEST_END();
}

/* Bounded count: the oldest checkpoints go, and a rollback behind them fails cleanly. */
static int case_pruning(void)
{
    hs_scenario sc;
    fab_test_scenario(&sc, 64 * KIB);
    hs_fabric *f = create_worker(&sc, 1 * US, 3);
    fab_test_add(f, 1, 0, 1, 16384 * KIB, 0);
    hs_flow_done d;
    FAB_CHECK(hs_fabric_next_completion(f, 20 * US, &d) == 0, "runs to 20 us");
    hs_fabric_checkpoint_stats cs;
    hs_fabric_get_checkpoint_stats(f, &cs);
    FAB_CHECK(cs.live == 3 && cs.oldest_ps == 17 * US, "live %" PRIu64 ", oldest %" PRIu64, cs.live, cs.oldest_ps);
    FAB_CHECK(cs.taken == 20, "taken %" PRIu64 " (0..19 us)", cs.taken);
    char err[512] = "";
    FAB_CHECK(hs_fabric_add_flow(f, 2, 2, 3, KIB, 5 * US, err, sizeof err) == -1 &&
                  strstr(err, "oldest checkpoint") != NULL,
              "too old a start: %s", err);
    FAB_CHECK(hs_fabric_generation(f) == 0, "nothing rolled back");
    FAB_CHECK(hs_fabric_add_flow(f, 2, 2, 3, KIB, 18 * US, err, sizeof err) == 0, "%s", err);
    FAB_CHECK(hs_fabric_now_ps(f) == 18 * US, "at 18 us: %" PRIu64, hs_fabric_now_ps(f));
    /* Safe time 18 us: the checkpoint at 17 us can no longer be needed. */
    hs_fabric_get_checkpoint_stats(f, &cs);
    FAB_CHECK(cs.live == 2 && cs.oldest_ps == 17 * US, "live %" PRIu64, cs.live);
    FAB_CHECK(hs_fabric_set_safe_time(f, 18 * US, err, sizeof err) == 0, "%s", err);
    hs_fabric_get_checkpoint_stats(f, &cs);
    FAB_CHECK(cs.live == 1 && cs.oldest_ps == 18 * US, "live %" PRIu64 ", oldest %" PRIu64, cs.live, cs.oldest_ps);
    hs_fabric_destroy(f);
    FAB_TEST_END();
}

/* Options left 0 take the scenario's run.checkpoint_interval_us and run.checkpoints_max. */
static int case_scenario_keys(void)
{
    hs_scenario sc;
    fab_test_scenario(&sc, 64 * KIB);
    sc.run.checkpoint_interval_us = 2.0;
    sc.run.checkpoints_max = 3;
    hs_fabric *f = create_worker(&sc, 0, 0);
    fab_test_add(f, 1, 0, 1, 16384 * KIB, 0);
    hs_flow_done d;
    FAB_CHECK(hs_fabric_next_completion(f, 11 * US, &d) == 0, "runs to 11 us");
    hs_fabric_checkpoint_stats cs;
    hs_fabric_get_checkpoint_stats(f, &cs);
    FAB_CHECK(cs.taken == 6 && cs.live == 3 && cs.oldest_ps == 6 * US,
              "every 2 us, 3 kept: taken %" PRIu64 ", live %" PRIu64 ", oldest %" PRIu64, cs.taken, cs.live,
              cs.oldest_ps);
    hs_fabric_destroy(f);
    FAB_TEST_END();
}

/* A worker that dies is an error with a message, not a hang. */
static int case_worker_dies(void)
{
    hs_scenario sc;
    fab_test_scenario(&sc, 64 * KIB);
    hs_fabric *f = create_worker(&sc, 1 * US, 4);
    fab_test_add(f, 1, 0, 1, 1024 * KIB, 0);
    hs_flow_done d;
    hs_fabric_next_completion(f, 2 * US, &d);
    hs_fabric_checkpoint_stats cs;
    hs_fabric_get_checkpoint_stats(f, &cs);
    FAB_CHECK(cs.worker_pid != 0 && cs.worker_pid != (uint64_t)getpid(), "worker pid");
    kill((pid_t)cs.worker_pid, SIGKILL);
    FAB_CHECK(hs_fabric_next_completion(f, UINT64_MAX, &d) == 0, "no completion from a dead worker");
    char err[512] = "";
    FAB_CHECK(hs_fabric_add_flow(f, 2, 0, 1, KIB, 3 * US, err, sizeof err) == -1 && strstr(err, "worker") != NULL,
              "message names the worker: %s", err);
    hs_fabric_destroy(f);
    FAB_TEST_END();
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(void);
    } cases[] = {{"nvlink_random", case_nvlink_random},  {"roce_random", case_roce_random},
                 {"revisions", case_revisions},          {"pruning", case_pruning},
                 {"worker_dies", case_worker_dies},      {"scenario_keys", case_scenario_keys},
                 {"batched_replay", case_batched_replay}};
    fab_test_rng_state = argc > 2 ? strtoull(argv[2], NULL, 0) : 12345;
    for (size_t i = 0; argc > 1 && i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(argv[1], cases[i].name) == 0)
            return cases[i].fn();
    fprintf(stderr, "usage: %s CASE [SEED]\n", argv[0]);
    return 2;
}
