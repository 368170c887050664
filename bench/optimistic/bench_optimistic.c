/*
 * Exact vs optimistic mode (run.mode, bridge/speculation/speculate.c): wall time of one
 * multi-server workload whose processes issue at different real speeds, with
 * late flows sharing bottlenecks; the answers optimistic mode revised.
 *
 * 2 servers × 8 GPUs, 4 processes of 4 GPUs (2 per server), packet-level
 * fabric, host_time: zero. Every iteration each process launches a kernel on
 * each of its GPUs, copies COPY_KIB from each into the other server (both
 * processes of a server into the same 4 GPUs: they share those GPUs' links),
 * and synchronises its streams. Process p stalls SLOW_MS of real time on the
 * iterations k with k % 4 == p (a data loader's hiccup, say) and FAST_MS on
 * the others. In exact mode every synchronisation waits for the slowest
 * process; in optimistic mode a speculation answers it at once. Exact mode
 * runs again with the fabric in a worker process, without and with
 * speculation (run.fabric, bridge/speculation/fabric_speculation.c): same results.
 *
 * usage: bench_optimistic [ITERATIONS [SLOW_MS [FAST_MS [COPY_KIB]]]]   (16 30 2 4096)
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon_test.h"

#define PROCS         4
#define GPUS_PER_PROC 4

typedef struct bench_args {
    int iterations, slow_ms, fast_ms;
    uint64_t copy_bytes;
} bench_args;

static const char SCENARIO[] = "name: optimistic bench, 2 servers x 8 H200\n"
                               "gpu: {model: H200}\n"
                               "servers: {count: 2, gpus_per_server: 8}\n"
                               "nics: {per_server: 8, gbps: 400}\n"
                               "fabric: {topology: single_switch}\n"
                               "run: {host_time: zero, seed: 1}\n";

void dt_scenario(hs_scenario *sc)
{
    char err[512];
    CHECK(hs_scenario_parse(SCENARIO, sizeof(SCENARIO) - 1, "bench", sc, err, sizeof(err)) == 0, "%s", err);
}

static void child(const char *ep, int idx, void *arg)
{
    const bench_args *a = arg;
    uint32_t first = (uint32_t)idx * GPUS_PER_PROC, server = first / 8;
    dt_client c;
    dt_connect(&c, ep, server, first, GPUS_PER_PROC, 0);
    uint64_t host = 0;
    for (int k = 0; k < a->iterations; k++) {
        usleep((useconds_t)(k % PROCS == idx ? a->slow_ms : a->fast_ms) * 1000);
        for (uint32_t i = 0; i < GPUS_PER_PROC; i++) {
            uint32_t g = first + i, dst = (server == 0 ? 8 : 0) + i;
            dt_kernel(&c, host, g, 0);
            dt_peer_copy(&c, host, g, 0, a->copy_bytes, dst, false);
        }
        for (uint32_t i = 0; i < GPUS_PER_PROC; i++)
            host = dt_sync_stream(&c, host, first + i, 0);
    }
    dt_record(idx, host);
    dt_bye(&c, host, NULL, 0);
}

/* fabric: 0 in-process, 1 worker process, 2 worker process speculating (run.fabric) */
static dt_result *run(enum hs_run_mode mode, int fabric, bench_args *a)
{
    hs_scenario sc;
    dt_scenario(&sc);
    sc.run.mode = mode;
    sc.run.fabric.process = fabric ? HS_FABRIC_PROCESS_WORKER : HS_FABRIC_PROCESS_INLINE;
    sc.run.fabric.speculate = fabric == 2;
    dt_result *r = dt_run(&sc, PROCS, child, a);
    CHECK(r->rc == 0, "run failed: %s", r->sum.error);
    for (int i = 0; i < PROCS; i++)
        CHECK(WIFEXITED(r->status[i]) && WEXITSTATUS(r->status[i]) == 0, "process %d failed", i);
    return r;
}

static void row(const char *name, const dt_result *r)
{
    uint64_t n = r->sum.speculations;
    printf("%-10s | %8.3f | %10.3f | %9llu | %7llu | %10llu | %12llu | %8.3f | %9.3f\n", name, r->wall_s,
           (double)r->sum.sim_end_ps * 1e-6, (unsigned long long)r->sum.optimistic_answers,
           (unsigned long long)r->sum.answers_revised, (unsigned long long)r->sum.max_revision_ns,
           (unsigned long long)n, n ? (double)r->sum.speculation_wall_ns * 1e-6 / (double)n : 0.0,
           n ? (double)r->sum.fork_wall_ns * 1e-6 / (double)n : 0.0);
}

int main(int argc, char **argv)
{
    bench_args a = {.iterations = argc > 1 ? atoi(argv[1]) : 16,
                    .slow_ms = argc > 2 ? atoi(argv[2]) : 30,
                    .fast_ms = argc > 3 ? atoi(argv[3]) : 2,
                    .copy_bytes = (argc > 4 ? strtoull(argv[4], NULL, 10) : 4096) << 10};
    printf("2 servers x 8 GPUs, %d processes x %d GPUs, %d iterations, stall %d ms (1 in %d) / %d ms, copies of %llu "
           "KiB\n",
           PROCS, GPUS_PER_PROC, a.iterations, a.slow_ms, PROCS, a.fast_ms, (unsigned long long)(a.copy_bytes >> 10));
    printf(
        "mode       | wall (s) | sim end us | optimistic | revised | largest ns | speculations | ms each | fork ms\n");
    dt_result *ex = run(HS_MODE_EXACT, 0, &a);
    row("exact", ex);
    dt_result *op = run(HS_MODE_OPTIMISTIC, 0, &a);
    row("optimistic", op);
    dt_result *wk = run(HS_MODE_EXACT, 1, &a);
    row("worker", wk);
    dt_result *ws = run(HS_MODE_EXACT, 2, &a);
    row("worker+spec", ws);
    printf("speed-up of optimistic over exact: %.2fx\n", ex->wall_s / op->wall_s);
    /* exact with a speculating worker fabric: the same results (checked), other wall time */
    for (int i = 0; i < PROCS; i++)
        CHECK(ws->values[i][0] == ex->values[i][0] && wk->values[i][0] == ex->values[i][0],
              "process %d ended at another time with the worker fabric", i);
    printf("exact, speculating worker fabric: %.2fx the in-process wall time (worker alone %.2fx); "
           "%llu completions computed ahead, %llu withdrawn, %llu rollbacks, %llu flows replayed; "
           "results identical\n",
           ws->wall_s / ex->wall_s, wk->wall_s / ex->wall_s, (unsigned long long)ws->sum.fabric_speculative_completions,
           (unsigned long long)ws->sum.fabric_withdrawn, (unsigned long long)ws->sum.fabric_rollbacks,
           (unsigned long long)ws->sum.fabric_replayed_flows);
    dt_free(ex);
    dt_free(op);
    dt_free(wk);
    dt_free(ws);
    return 0;
}
