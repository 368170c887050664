/*
 * bench_rollback: cost of late flows in a worker-mode fabric. A multi-server
 * workload (S servers x 8 GPUs, one 400G NIC per GPU, rail-optimised with
 * spines, PFC + DCQCN) of random flows, a share of them handed over late, is
 * run three ways, and the completion times of all three must agree bit for bit:
 *   known:       every flow handed over at time 0, in-process (no rollback);
 *   checkpoints: handed over at arrival; a late flow resumes the newest
 *                checkpoint (one every --interval-us) at or before its start;
 *   from zero:   the same, but the only checkpoint is time 0, so every late
 *                flow re-simulates from the beginning (replay from time zero).
 *
 * usage: bench_rollback [--servers S] [--flows N] [--late-pct P] [--span-us U]
 *                       [--max-late-us L] [--kib K] [--interval-us T] [--seed X]
 */
#include "hysim/fabric.h"
#include "test_scenario.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define US 1000000ull

typedef struct {
    uint64_t id, bytes, start, arrive;
    uint32_t src, dst;
} flow;

static uint64_t rng_state = 1;

static uint64_t rng(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return rng_state >> 17;
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what, const char *err)
{
    fprintf(stderr, "bench_rollback: %s: %s\n", what, err);
    exit(1);
}

static int by_arrival(const void *a, const void *b)
{
    const flow *x = a, *y = b;
    if (x->arrive != y->arrive)
        return x->arrive < y->arrive ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static void scenario(hs_scenario *sc, uint32_t servers)
{
    hs_test_scenario_fill(sc, &(hs_test_scenario){
                                  .name = "bench-rollback",
                                  .servers = (int)servers,
                                  .gpus_per_server = 8,
                                  .nvlink_gbps = 3600.0,
                                  .nvlink_latency_ns = 500,
                                  .segment_bytes = 64 * 1024,
                                  .pcie_gbps = 512.0,
                                  .pcie_latency_ns = 1000,
                                  .nics_per_server = 8,
                                  .nic_gbps = 400.0,
                                  .rail_aligned = true,
                                  .fabric = true,
                                  .topology = HS_TOPOLOGY_RAIL_OPTIMIZED,
                                  .spines = 2,
                                  .link_latency_ns = 1000,
                                  .mtu = 4096,
                                  .oversubscription = 1.0,
                                  .switch_buffer_mib = 32,
                                  .roce = true,
                                  .seed = 1,
                              });
}

/* Every flow known at time 0, in this process. */
static double run_known(const hs_scenario *sc, const flow *fl, size_t n, uint64_t *fin)
{
    char err[512] = "";
    hs_fabric_options o = {0};
    const double t0 = wall_s();
    hs_fabric *f = hs_fabric_create_opts(sc, &o, err, sizeof err);
    if (!f)
        die("create", err);
    for (size_t i = 0; i < n; i++)
        if (hs_fabric_add_flow(f, fl[i].id, fl[i].src, fl[i].dst, fl[i].bytes, fl[i].start, err, sizeof err) != 0)
            die("add", err);
    hs_flow_done d;
    while (hs_fabric_next_completion(f, UINT64_MAX, &d) == 1)
        fin[d.flow_id] = d.finish_ps;
    hs_fabric_destroy(f);
    return wall_s() - t0;
}

/* Flows handed over in arrival order (fl sorted by arrival); returns wall seconds. */
static double run_late(const hs_scenario *sc, const flow *fl, size_t n, uint64_t interval_ps, uint32_t max, int safe,
                       uint64_t *fin, hs_fabric_checkpoint_stats *cs)
{
    char err[512] = "";
    hs_fabric_options o = {.worker = 1, .checkpoint_interval_ps = interval_ps, .checkpoints_max = max};
    const double t0 = wall_s();
    hs_fabric *f = hs_fabric_create_opts(sc, &o, err, sizeof err);
    if (!f)
        die("create", err);
    uint64_t min_after = UINT64_MAX;
    hs_flow_done d;
    for (size_t i = 0; i < n; i++) {
        while (hs_fabric_next_completion(f, fl[i].arrive, &d) == 1)
            fin[d.flow_id] = d.finish_ps;
        if (hs_fabric_add_flow(f, fl[i].id, fl[i].src, fl[i].dst, fl[i].bytes, fl[i].start, err, sizeof err) != 0)
            die("add", err);
        hs_flow_done w;
        while (hs_fabric_next_revision(f, &w) == 1)
            fin[w.flow_id] = UINT64_MAX;
        if (safe) {
            min_after = UINT64_MAX;
            for (size_t j = i + 1; j < n; j++)
                min_after = fl[j].start < min_after ? fl[j].start : min_after;
            if (hs_fabric_set_safe_time(f, min_after == UINT64_MAX ? fl[i].arrive : min_after, err, sizeof err) != 0)
                die("safe time", err);
        }
    }
    while (hs_fabric_next_completion(f, UINT64_MAX, &d) == 1)
        fin[d.flow_id] = d.finish_ps;
    hs_fabric_get_checkpoint_stats(f, cs);
    hs_fabric_destroy(f);
    return wall_s() - t0;
}

int main(int argc, char **argv)
{
    uint32_t servers = 4, late_pct = 20;
    size_t n = 256;
    uint64_t span_us = 200, max_late_us = 50, kib = 1024, interval_us = 20;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i];
        const uint64_t v = strtoull(argv[i + 1], NULL, 0);
        if (!strcmp(k, "--servers"))
            servers = (uint32_t)v;
        else if (!strcmp(k, "--flows"))
            n = v;
        else if (!strcmp(k, "--late-pct"))
            late_pct = (uint32_t)v;
        else if (!strcmp(k, "--span-us"))
            span_us = v;
        else if (!strcmp(k, "--max-late-us"))
            max_late_us = v;
        else if (!strcmp(k, "--kib"))
            kib = v;
        else if (!strcmp(k, "--interval-us"))
            interval_us = v;
        else if (!strcmp(k, "--seed"))
            rng_state = v;
        else {
            fprintf(stderr, "bench_rollback: unknown option %s\n", k);
            return 2;
        }
    }
    hs_scenario sc;
    scenario(&sc, servers);
    const uint32_t ngpus = servers * 8;
    flow *fl = calloc(n, sizeof *fl);
    size_t late = 0;
    for (size_t i = 0; i < n; i++) {
        fl[i].id = i;
        fl[i].src = (uint32_t)(rng() % ngpus);
        fl[i].dst = (uint32_t)((fl[i].src + 1 + rng() % (ngpus - 1)) % ngpus);
        fl[i].bytes = kib * 1024 / 2 + rng() % (kib * 1024);
        fl[i].start = rng() % (span_us * US);
        const int is_late = rng() % 100 < late_pct;
        fl[i].arrive = fl[i].start + (is_late ? 1 + rng() % (max_late_us * US) : 0);
        late += is_late;
    }
    qsort(fl, n, sizeof *fl, by_arrival);
    uint64_t *a = malloc(n * 8), *b = malloc(n * 8), *c = malloc(n * 8);
    hs_fabric_checkpoint_stats cb, cc;
    const double t_known = run_known(&sc, fl, n, a);
    const double t_ckpt = run_late(&sc, fl, n, interval_us * US, 64, 1, b, &cb);
    const double t_zero = run_late(&sc, fl, n, UINT64_MAX / 4, 1, 0, c, &cc);
    size_t same = 0;
    for (size_t i = 0; i < n; i++)
        same += a[i] == b[i] && b[i] == c[i];
    printf("workload     %u servers x 8 GPUs, %zu flows of %" PRIu64 " KiB avg, %zu late "
           "(up to %" PRIu64 " us), starts over %" PRIu64 " us\n",
           servers, n, kib, late, max_late_us, span_us);
    printf("known        %.3f s (every flow at time 0, in-process)\n", t_known);
    printf("checkpoints  %.3f s (every %" PRIu64 " us: %" PRIu64 " taken, %" PRIu64 " rollbacks, %" PRIu64
           " flows replayed)\n",
           t_ckpt, interval_us, cb.taken, cb.rollbacks, cb.replayed_flows);
    printf("from zero    %.3f s (%" PRIu64 " rollbacks to time 0, %" PRIu64 " flows replayed)\n", t_zero, cc.rollbacks,
           cc.replayed_flows);
    printf("identical    %zu of %zu completion times\n", same, n);
    return same == n ? 0 : 1;
}
