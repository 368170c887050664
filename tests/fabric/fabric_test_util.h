/* Helpers for the fabric tests: an hs_scenario filled by hand (the scenario
 * loader is a separate module; tests/common/test_scenario.h) and small checks. */
#ifndef HYSIM_TESTS_FABRIC_UTIL_H
#define HYSIM_TESTS_FABRIC_UTIL_H

#include "hysim/fabric.h"
#include "test_scenario.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One H200-like server: 8 GPUs, NVLink 3600 Gb/s per GPU each way, 500 ns GPU->GPU. */
static inline void fab_test_scenario(hs_scenario *sc, uint32_t segment_bytes)
{
    hs_test_scenario_fill(sc, &(hs_test_scenario){
                                  .name = "fabric-test-h200x8",
                                  .gpu_model = "NVIDIA H200",
                                  .servers = 1,
                                  .gpus_per_server = 8,
                                  .nvlink_gbps = 3600.0,
                                  .nvlink_latency_ns = 500,
                                  .segment_bytes = segment_bytes,
                                  .pcie_gen = 5,
                                  .pcie_lanes = 16,
                                  .pcie_gbps = 512.0,
                                  .pcie_latency_ns = 1000,
                                  .nics_per_server = 8,
                                  .nic_gbps = 400.0,
                                  .rail_aligned = true,
                                  .topology = HS_TOPOLOGY_RAIL_OPTIMIZED,
                                  .link_latency_ns = 1000,
                                  .mtu = 4096,
                                  .oversubscription = 1.0,
                              });
}

/* RoCE on one switch: `servers` × `gpus_per_server` GPUs (fab_test_scenario's, 64 KiB segments),
 * one NIC per server, a switch of `buffer_mib` MiB, PFC and DCQCN on, seed 7. */
static inline void fab_test_roce_switch(hs_scenario *sc, int servers, int gpus_per_server, double buffer_mib)
{
    fab_test_scenario(sc, 64 * 1024);
    sc->servers.count = servers;
    sc->servers.gpus_per_server = gpus_per_server;
    sc->nics.per_server = 1;
    sc->fabric.present = true;
    sc->fabric.topology = HS_TOPOLOGY_SINGLE_SWITCH;
    sc->fabric.leaves = 1;
    sc->fabric.switch_buffer_mib = buffer_mib;
    sc->fabric.pfc = true;
    sc->fabric.dcqcn = true;
    sc->run.seed = 7;
}

static int fab_test_failures __attribute__((unused));

#define FAB_CHECK(cond, ...)                                                   \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: FAILED: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            fab_test_failures++;                                               \
        }                                                                      \
    } while (0)

/* Ideal time of one flow through two NVLink hops: bytes at line rate + GPU->GPU latency. */
static inline double fab_ideal_ps(const hs_scenario *sc, uint64_t bytes)
{
    return (double)bytes * 8.0 / (sc->nvlink.gbps_per_gpu * 1e9) * 1e12 + (double)sc->nvlink.latency_ns * 1000.0;
}

static inline double fab_rel(double got, double want) { return fabs(got - want) / want; }

static inline hs_fabric *fab_test_create(const hs_scenario *sc)
{
    char err[512] = "";
    hs_fabric *f = hs_fabric_create(sc, err, sizeof err);
    if (!f) {
        fprintf(stderr, "hs_fabric_create: %s\n", err);
        exit(1);
    }
    return f;
}

static inline void fab_test_add(hs_fabric *f, uint64_t id, uint32_t s, uint32_t d, uint64_t bytes, uint64_t start)
{
    char err[512] = "";
    if (hs_fabric_add_flow(f, id, s, d, bytes, start, err, sizeof err) != 0) {
        fprintf(stderr, "hs_fabric_add_flow(%" PRIu64 "): %s\n", id, err);
        exit(1);
    }
}

#define FAB_TEST_END()                                                  \
    do {                                                                \
        if (fab_test_failures) {                                        \
            fprintf(stderr, "%d check(s) failed\n", fab_test_failures); \
            return 1;                                                   \
        }                                                               \
        printf("ok\n");                                                 \
        return 0;                                                       \
    } while (0)

/* A flow of the rollback tests: it starts at `start`, but the fabric learns
 * of it only at `arrive` (arrive > start: a late flow, which rolls back). */
typedef struct {
    uint64_t id, bytes, start, arrive;
    uint32_t src, dst;
} fab_test_flow;

/* The tests' own generator (an LCG), so a seed gives the same flows everywhere. */
static uint64_t fab_test_rng_state;

static inline uint64_t fab_test_rng(void)
{
    fab_test_rng_state = fab_test_rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return fab_test_rng_state >> 17;
}

static inline uint64_t fab_test_rng_range(uint64_t lo, uint64_t hi) /* [lo, hi] */
{
    return lo + fab_test_rng() % (hi - lo + 1);
}

/* n random flows among ngpus GPUs, of min_b..max_b bytes, starting in [0, span_ps];
 * about 40 % late by up to max_late_ps. */
static inline void fab_test_random_flows(fab_test_flow *fl, size_t n, uint32_t ngpus, uint64_t span_ps, uint64_t min_b,
                                         uint64_t max_b, uint64_t max_late_ps)
{
    for (size_t i = 0; i < n; i++) {
        fl[i].id = i;
        fl[i].src = (uint32_t)fab_test_rng_range(0, ngpus - 1);
        fl[i].dst = (uint32_t)((fl[i].src + fab_test_rng_range(1, ngpus - 1)) % ngpus);
        fl[i].bytes = fab_test_rng_range(min_b, max_b);
        fl[i].start = fab_test_rng_range(0, span_ps);
        fl[i].arrive = fl[i].start + (fab_test_rng() % 10 < 4 ? fab_test_rng_range(1, max_late_ps) : 0);
    }
}

#endif
