/*
 * Scenarios filled in C for tests and benchmarks that do not go through the
 * YAML loader: the figures a test's arithmetic relies on, by name.
 *
 *   hs_scenario sc;
 *   hs_test_scenario_fill(&sc, &(hs_test_scenario){.name = "x", .servers = 1, .gpus_per_server = 4,
 *                                                  .nvlink_gbps = 800, .nvlink_latency_ns = 500});
 *
 * A parameter left at zero (false, NULL) leaves the field as the starting
 * point has it: hs_scenario_defaults when `defaults` is set and the scenario
 * library is linked (HS_HAVE_SCENARIO_LIB), else all zero. Header-only, so
 * that tests built without the scenario library can use it.
 */
#ifndef HYSIM_TESTS_COMMON_TEST_SCENARIO_H
#define HYSIM_TESTS_COMMON_TEST_SCENARIO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hysim/scenario.h"

typedef struct hs_test_scenario {
    const char *name;
    bool defaults;         /* start from hs_scenario_defaults (when linked) */
    const char *gpu_model; /* cudaDeviceProp.name */
    bool h200;             /* an H200's memory, SM count and compute capability */
    double hbm_gbps;
    int servers, gpus_per_server;
    double nvlink_gbps;
    uint64_t nvlink_latency_ns;
    uint32_t segment_bytes; /* NVLink store-and-forward segment */
    int pcie_gen, pcie_lanes;
    double pcie_gbps;
    uint64_t pcie_latency_ns;
    double pcie_copy_gbps, pcie_pageable_gbps;
    uint64_t pcie_copy_latency_ns;
    int nics_per_server;
    double nic_gbps;
    bool rail_aligned;
    bool fabric;  /* a switched fabric between servers */
    int topology; /* enum hs_topology */
    int spines;
    uint64_t link_latency_ns;
    uint32_t mtu;
    double oversubscription;
    uint32_t switch_buffer_mib;
    bool roce; /* PFC and DCQCN on */
    uint64_t default_kernel_ns;
    bool host_time_zero; /* run.host_time: zero (timing tests must not depend on load) */
    uint64_t seed;
    int nccl_algo, nccl_proto; /* with nccl_channels: a fixed, uncalibrated NCCL plan */
    int nccl_channels;
} hs_test_scenario;

#define HS_TS_SET(field, value) \
    do {                        \
        if (value)              \
            field = value;      \
    } while (0)

static inline void hs_test_scenario_fill(hs_scenario *sc, const hs_test_scenario *p)
{
#ifdef HS_HAVE_SCENARIO_LIB
    if (p->defaults)
        hs_scenario_defaults(sc); /* what a real fabric needs besides the figures given */
    else
#endif
        memset(sc, 0, sizeof *sc);
    if (p->name)
        snprintf(sc->name, sizeof sc->name, "%s", p->name);
    if (p->gpu_model)
        snprintf(sc->gpu.model, sizeof sc->gpu.model, "%s", p->gpu_model);
    if (p->h200) {
        sc->gpu.memory_bytes = 141ull << 30;
        sc->gpu.sm_count = 132;
        sc->gpu.cc_major = 9;
        sc->gpu.cc_minor = 0;
    }
    HS_TS_SET(sc->gpu.hbm_gbps, p->hbm_gbps);
    HS_TS_SET(sc->servers.count, p->servers);
    HS_TS_SET(sc->servers.gpus_per_server, p->gpus_per_server);
    HS_TS_SET(sc->nvlink.gbps_per_gpu, p->nvlink_gbps);
    HS_TS_SET(sc->nvlink.latency_ns, p->nvlink_latency_ns);
    HS_TS_SET(sc->nvlink.segment_bytes, p->segment_bytes);
    HS_TS_SET(sc->pcie.gen, p->pcie_gen);
    HS_TS_SET(sc->pcie.lanes, p->pcie_lanes);
    HS_TS_SET(sc->pcie.gbps, p->pcie_gbps);
    HS_TS_SET(sc->pcie.latency_ns, p->pcie_latency_ns);
    HS_TS_SET(sc->pcie.copy_gbps, p->pcie_copy_gbps);
    HS_TS_SET(sc->pcie.copy_latency_ns, p->pcie_copy_latency_ns);
    HS_TS_SET(sc->pcie.pageable_gbps, p->pcie_pageable_gbps);
    HS_TS_SET(sc->nics.per_server, p->nics_per_server);
    HS_TS_SET(sc->nics.gbps, p->nic_gbps);
    HS_TS_SET(sc->nics.rail_aligned, p->rail_aligned);
    HS_TS_SET(sc->fabric.present, p->fabric);
    HS_TS_SET(sc->fabric.topology, (enum hs_topology)p->topology);
    HS_TS_SET(sc->fabric.spines, p->spines);
    HS_TS_SET(sc->fabric.link_latency_ns, p->link_latency_ns);
    HS_TS_SET(sc->fabric.mtu, p->mtu);
    HS_TS_SET(sc->fabric.oversubscription, p->oversubscription);
    HS_TS_SET(sc->fabric.switch_buffer_mib, p->switch_buffer_mib);
    if (p->roce)
        sc->fabric.pfc = sc->fabric.dcqcn = true;
    HS_TS_SET(sc->compute.default_kernel_ns, p->default_kernel_ns);
    if (p->host_time_zero) {
        sc->run.mode = HS_MODE_EXACT;
        sc->run.host_time = HS_HOST_TIME_ZERO;
    }
    HS_TS_SET(sc->run.seed, p->seed);
    if (p->nccl_channels) {
        sc->nccl.algo = (enum hs_nccl_algo)p->nccl_algo;
        sc->nccl.proto = (enum hs_nccl_proto)p->nccl_proto;
        sc->nccl.channels = p->nccl_channels;
        sc->nccl.calibrated = false;
    }
}

#undef HS_TS_SET

#endif
