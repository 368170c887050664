/*
 * run.mode: optimistic against exact (bridge/speculation/speculate.c), through the hysimd
 * protocol harness (tests/daemon/harness.c) and the packet-level fabric.
 *
 * Two processes copy 1 MB into GPUs over NVLink. Process A waits for its copy;
 * process B, in optimistic mode, issues its copy only once A has its answer
 * (so the answer is a speculation's), in exact mode at once. When both copies
 * go into the same GPU they share its link: the exact answer includes B's
 * late flow, the optimistic one does not, and the run must count that answer
 * as revised by exactly the difference. Into different GPUs nothing is
 * revised and both modes end at the same simulated time.
 *
 * usage: test_optimistic CASE
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon_test.h"
#include "test_scenario.h"

#define COPY_BYTES 1000000ull

void dt_scenario(hs_scenario *sc)
{
    hs_test_scenario_fill(sc, &(hs_test_scenario){
                                  .name = "optimistic tests",
                                  .defaults = true,
                                  .servers = 1,
                                  .gpus_per_server = 4,
                                  .nvlink_gbps = 800,
                                  .nvlink_latency_ns = 500,
                                  .host_time_zero = true,
                                  .seed = 1,
                              });
}

typedef struct pair_args {
    bool optimistic;
    uint32_t b_dst; /* where B copies to (A copies GPU 0 → GPU 2) */
} pair_args;

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A on GPU 0 (server 0), B on GPU 1; each records the host time its stream sync returned. */
static void child_pair(const char *ep, int idx, void *arg)
{
    const pair_args *a = arg;
    dt_client c;
    dt_connect(&c, ep, 0, (uint32_t)idx, 1, 0);
    if (idx == 1 && a->optimistic) {
        double until = wall_s() + 30;
        while (dt_nvalues(0) < 1) { /* A has been answered without our flow */
            CHECK(wall_s() < until, "process A got no optimistic answer in 30 s");
            usleep(1000);
        }
    }
    if (idx == 0)
        signal(SIGTERM, SIG_IGN); /* a failed run sends the error, then SIGTERM: record it first */
    dt_peer_copy(&c, 0, (uint32_t)idx, 0, COPY_BYTES, idx == 0 ? 2 : a->b_dst, false);
    Hysim__Reply *r = dt_wait(&c, 0, HYSIM__WAIT__COND__STREAM_IDLE, (uint32_t)idx, 0, 0, false, NULL, 0);
    if (r->error[0]) {
        dt_record(idx, UINT64_MAX); /* lets B go on; the test reads the run's error */
        hysim__reply__free_unpacked(r, NULL);
        return;
    }
    CHECK(r->done, "stream sync not done");
    uint64_t t = r->now_ns;
    hysim__reply__free_unpacked(r, NULL);
    dt_record(idx, t);
    dt_bye(&c, t, NULL, 0);
}

static dt_result *run_pair(bool optimistic, uint32_t b_dst)
{
    hs_scenario sc;
    dt_scenario(&sc);
    sc.run.mode = optimistic ? HS_MODE_OPTIMISTIC : HS_MODE_EXACT;
    pair_args a = {.optimistic = optimistic, .b_dst = b_dst};
    dt_result *r = dt_run(&sc, 2, child_pair, &a);
    return r;
}

static void expect_ok(const dt_result *r)
{
    CHECK(r->rc == 0, "run failed: %s", r->sum.error);
    for (int i = 0; i < r->nchildren; i++)
        CHECK(WIFEXITED(r->status[i]) && WEXITSTATUS(r->status[i]) == 0, "child %d: status 0x%x", i, r->status[i]);
}

static void show(const char *what, const dt_result *r)
{
    printf("%s: A %llu ns, B %llu ns, end %llu ps; optimistic answers %llu, revised %llu, largest %llu ns, "
           "speculations %llu (%.3f ms, fork %.3f ms)\n",
           what, (unsigned long long)r->values[0][0], (unsigned long long)r->values[1][0],
           (unsigned long long)r->sum.sim_end_ps, (unsigned long long)r->sum.optimistic_answers,
           (unsigned long long)r->sum.answers_revised, (unsigned long long)r->sum.max_revision_ns,
           (unsigned long long)r->sum.speculations, r->sum.speculation_wall_ns * 1e-6, r->sum.fork_wall_ns * 1e-6);
}

/* Late flow into the same GPU: the optimistic answer is earlier and counted as revised by the difference. */
static void test_late_flow(void)
{
    dt_result *ex = run_pair(false, 2), *op = run_pair(true, 2);
    expect_ok(ex);
    expect_ok(op);
    show("exact", ex);
    show("optimistic", op);
    uint64_t a_exact = ex->values[0][0], a_opt = op->values[0][0];
    CHECK_EQ(ex->sum.optimistic_answers, 0);
    CHECK_EQ(ex->sum.answers_revised, 0);
    CHECK(op->sum.optimistic_answers >= 1, "no optimistic answer");
    CHECK(a_opt < a_exact, "optimistic answer %llu ns is not earlier than the exact %llu ns", (unsigned long long)a_opt,
          (unsigned long long)a_exact);
    CHECK_EQ(op->sum.answers_revised, 1);
    CHECK_EQ(op->sum.max_revision_ns, a_exact - a_opt);
    /* B's answer includes both flows either way; the authoritative simulation is the exact one */
    CHECK_EQ(op->values[1][0], ex->values[1][0]);
    dt_free(ex);
    dt_free(op);
}

/* No shared link: nothing revised, the same simulated end. */
static void test_no_contention(void)
{
    dt_result *ex = run_pair(false, 3), *op = run_pair(true, 3);
    expect_ok(ex);
    expect_ok(op);
    show("exact", ex);
    show("optimistic", op);
    CHECK(op->sum.optimistic_answers >= 1, "no optimistic answer");
    CHECK_EQ(op->sum.answers_revised, 0);
    CHECK_EQ(op->sum.max_revision_ns, 0);
    CHECK_EQ(op->values[0][0], ex->values[0][0]);
    CHECK_EQ(op->sum.sim_end_ps, ex->sum.sim_end_ps);
    dt_free(ex);
    dt_free(op);
}

/* HYSIM_FAULT_FORK=1: the speculation's fork fails; the run fails naming it, nobody hangs. */
static void test_fork_fails(void)
{
    setenv("HYSIM_FAULT_FORK", "1", 1);
    double t0 = wall_s();
    dt_result *r = run_pair(true, 2);
    unsetenv("HYSIM_FAULT_FORK");
    printf("error after %.2f s: %s\n", wall_s() - t0, r->sum.error);
    CHECK(r->rc == -1, "the run did not fail (rc %d)", r->rc);
    CHECK(strstr(r->sum.error, "hysim: fork failed (run.mode: optimistic"), "error: %s", r->sum.error);
    CHECK(strstr(r->sum.error, "Resource temporarily unavailable"), "error: %s", r->sum.error);
    CHECK_EQ(r->values[0][0], UINT64_MAX); /* A's Wait was answered with the error */
    CHECK_EQ(r->sum.optimistic_answers, 0);
    dt_free(r);
}

/* Optimistic with the worker-mode fabric is refused at create, with the reason. */
static void test_worker_refused(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    sc.run.mode = HS_MODE_OPTIMISTIC;
    setenv("HYSIM_FABRIC_WORKER", "1", 1);
    char err[512] = "";
    hs_daemon *d = hs_daemon_create(&sc, "unix:/tmp/hysim-optimistic-refused.sock", err, sizeof(err));
    unsetenv("HYSIM_FABRIC_WORKER");
    printf("%s\n", err);
    CHECK(!d, "optimistic with HYSIM_FABRIC_WORKER=1 was accepted");
    CHECK(strstr(err, "optimistic") && strstr(err, "HYSIM_FABRIC_WORKER=1"), "error: %s", err);
}

int main(int argc, char **argv)
{
    static const dt_case cases[] = {
        {"late_flow", test_late_flow},
        {"no_contention", test_no_contention},
        {"fork_fails", test_fork_fails},
        {"worker_refused", test_worker_refused},
    };
    return dt_main(argc, argv, cases, DT_NCASES(cases));
}
