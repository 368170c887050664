/*
 * The speculative fabric (run.fabric: {process: worker, speculate: true};
 * bridge/speculation/fabric_speculation.c) against the in-process fabric, through the
 * hysimd protocol harness (tests/daemon/harness.c) and the packet model.
 *
 * Two processes copy into the same GPU over NVLink, so their flows share a
 * link, for several rounds. Process B stalls (wall time) before every copy
 * while it still holds the safe time at its host time: the speculating
 * fabric meanwhile runs A's flow ahead to its completion, and B's copy then
 * arrives in the fabric's past: a rollback that withdraws A's held
 * completion. Every time a process was told must equal the in-process run's,
 * and the speculative run must show rollbacks and withdrawn completions (it
 * is retried a few times when a loaded machine let B in before the fabric
 * ran ahead; every try must still be identical).
 *
 * usage: test_speculative_fabric CASE
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon_test.h"

#define COPY_BYTES 2000000ull
#define ROUNDS     4
#define STALL_US   100000 /* B's wall-time stall before each copy */
#define TRIES      3

void dt_scenario(hs_scenario *sc)
{
    hs_scenario_defaults(sc);
    snprintf(sc->name, sizeof(sc->name), "speculative fabric tests");
    sc->servers.count = 1;
    sc->servers.gpus_per_server = 4;
    sc->nvlink.gbps_per_gpu = 800;
    sc->nvlink.latency_ns = 500;
    sc->run.host_time = HS_HOST_TIME_ZERO;
    sc->run.seed = 1;
    /* checkpoints every 5 us: rollbacks resume checkpoints past time 0 too */
    sc->run.checkpoint_interval_us = 5;
    sc->run.checkpoints_max = 16;
}

/* A (idx 0, GPU 0) and B (idx 1, GPU 1) copy into GPU 2, ROUNDS times; each records its sync's host time. */
static void child_rounds(const char *ep, int idx, void *arg)
{
    (void)arg;
    dt_client c;
    dt_connect(&c, ep, 0, (uint32_t)idx, 1, 0);
    uint64_t t = 0;
    for (int r = 0; r < ROUNDS; r++) {
        if (idx == 1)
            usleep(STALL_US); /* still running at host time t: the bound stays there */
        dt_peer_copy(&c, t, (uint32_t)idx, 0, COPY_BYTES + (uint64_t)r * 100000, 2, false);
        t = dt_sync_stream(&c, t, (uint32_t)idx, 0);
        dt_record(idx, t);
    }
    dt_bye(&c, t, NULL, 0);
}

static dt_result *run(bool speculate)
{
    hs_scenario sc;
    dt_scenario(&sc);
    sc.run.fabric.process = speculate ? HS_FABRIC_PROCESS_WORKER : HS_FABRIC_PROCESS_INLINE;
    sc.run.fabric.speculate = speculate;
    dt_result *r = dt_run(&sc, 2, child_rounds, NULL);
    CHECK(r->rc == 0, "run failed: %s", r->sum.error);
    for (int i = 0; i < r->nchildren; i++)
        CHECK(WIFEXITED(r->status[i]) && WEXITSTATUS(r->status[i]) == 0, "child %d: status 0x%x", i, r->status[i]);
    printf("%s: A", speculate ? "worker+speculation" : "inline");
    for (int i = 0; i < r->nvalues[0]; i++)
        printf(" %llu", (unsigned long long)r->values[0][i]);
    printf(" ns, B");
    for (int i = 0; i < r->nvalues[1]; i++)
        printf(" %llu", (unsigned long long)r->values[1][i]);
    printf(" ns, end %llu ps; speculative completions %llu, withdrawn %llu, rollbacks %llu, replayed %llu\n",
           (unsigned long long)r->sum.sim_end_ps, (unsigned long long)r->sum.fabric_speculative_completions,
           (unsigned long long)r->sum.fabric_withdrawn, (unsigned long long)r->sum.fabric_rollbacks,
           (unsigned long long)r->sum.fabric_replayed_flows);
    return r;
}

static void expect_same(const dt_result *a, const dt_result *b)
{
    for (int i = 0; i < 2; i++) {
        CHECK_EQ(b->nvalues[i], a->nvalues[i]);
        for (int k = 0; k < a->nvalues[i]; k++)
            CHECK(a->values[i][k] == b->values[i][k], "process %d, round %d: %llu ns with speculation, %llu inline", i,
                  k, (unsigned long long)b->values[i][k], (unsigned long long)a->values[i][k]);
    }
    CHECK_EQ(b->sum.sim_end_ps, a->sum.sim_end_ps);
    CHECK_EQ(b->sum.flows, a->sum.flows);
    CHECK_EQ(b->sum.copies, a->sum.copies);
    CHECK_EQ(b->sum.packet_hops, a->sum.packet_hops);
}

/* Late flows roll the speculating fabric back; every time equals the in-process run's. */
static void test_late_flows(void)
{
    dt_result *in = run(false);
    CHECK_EQ(in->sum.fabric_speculative_completions, 0);
    CHECK_EQ(in->sum.fabric_rollbacks, 0);
    /* the rounds share GPU 2's link: B's late flow delays A, so a held completion of A was wrong */
    CHECK(in->values[0][0] > 0, "no time");
    bool seen = false;
    for (int t = 0; t < TRIES && !seen; t++) {
        dt_result *sp = run(true);
        expect_same(in, sp);
        CHECK(sp->sum.fabric_withdrawn <= sp->sum.fabric_speculative_completions, "more withdrawn than computed");
        seen = sp->sum.fabric_rollbacks > 0 && sp->sum.fabric_withdrawn > 0;
        dt_free(sp);
    }
    CHECK(seen, "in %d tries the fabric never rolled back a speculation (B's stall is %d us of wall time)", TRIES,
          STALL_US);
    dt_free(in);
}

/* speculate: true with the in-process fabric (the loader refuses it in a file) does nothing: nothing can roll back. */
static void test_no_worker_no_speculation(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    sc.run.fabric.process = HS_FABRIC_PROCESS_INLINE;
    sc.run.fabric.speculate = true; /* ignored in-process: nothing can roll back */
    dt_result *r = dt_run(&sc, 2, child_rounds, NULL);
    CHECK(r->rc == 0, "run failed: %s", r->sum.error);
    CHECK_EQ(r->sum.fabric_speculative_completions, 0);
    CHECK_EQ(r->sum.fabric_rollbacks, 0);
    dt_free(r);
}

/* The scenario key run.fabric: parsed, defaults, and speculate without a worker refused with the reason. */
static void test_scenario_key(void)
{
    static const char base[] = "name: k\nservers: {count: 1, gpus_per_server: 2}\n";
    char text[512], err[1024] = "";
    hs_scenario sc;
    snprintf(text, sizeof(text), "%s", base);
    CHECK(hs_scenario_parse(text, strlen(text), "t", &sc, err, sizeof(err)) == 0, "%s", err);
    CHECK(sc.run.fabric.process == HS_FABRIC_PROCESS_DEFAULT && sc.run.fabric.speculate, "defaults");
    CHECK(sc.run.fabric.speculate_window_us == 1000.0, "default window %g", sc.run.fabric.speculate_window_us);
    snprintf(text, sizeof(text), "%srun: {fabric: {process: worker, speculate: false, speculate_window_us: 250}}\n",
             base);
    CHECK(hs_scenario_parse(text, strlen(text), "t", &sc, err, sizeof(err)) == 0, "%s", err);
    CHECK(sc.run.fabric.process == HS_FABRIC_PROCESS_WORKER && !sc.run.fabric.speculate, "worker, no speculation");
    CHECK(sc.run.fabric.speculate_window_us == 250.0, "window %g", sc.run.fabric.speculate_window_us);
    snprintf(text, sizeof(text), "%srun: {fabric: {process: inline, speculate: true}}\n", base);
    CHECK(hs_scenario_parse(text, strlen(text), "t", &sc, err, sizeof(err)) != 0, "speculate in-process accepted");
    printf("%s\n", err);
    CHECK(strstr(err, "run.fabric.speculate: true needs run.fabric.process: worker"), "error: %s", err);
    snprintf(text, sizeof(text), "%srun: {fabric: {process: elsewhere}}\n", base);
    CHECK(hs_scenario_parse(text, strlen(text), "t", &sc, err, sizeof(err)) != 0, "process: elsewhere accepted");
    CHECK(strstr(err, "run.fabric.process"), "error: %s", err);
}

int main(int argc, char **argv)
{
    static const dt_case cases[] = {
        {"late_flows", test_late_flows},
        {"inline_never_speculates", test_no_worker_no_speculation},
        {"scenario_key", test_scenario_key},
    };
    setvbuf(stdout, NULL, _IONBF, 0);
    return dt_main(argc, argv, cases, DT_NCASES(cases));
}
