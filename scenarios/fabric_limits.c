/*
 * What the packet-level fabric (ns3-glue/model/topology.cc, ethernet.cc, fabric.cc)
 * requires of a scenario it builds, computed here so that the loader reports
 * a scenario the fabric would refuse at the offending key, before any run.
 * The constants and formulas mirror the fabric's; keep the two in step.
 */
#include <math.h>
#include <stdio.h>

#include "scenario_internal.h"

#define HS_FABRIC_RESERVE_BYTES 4096.0             /* ethernet.cc kReserveBytes: per ingress link */
#define HS_FABRIC_HEADROOM_RTTS 3.0                /* ethernet.cc kHeadroomRtts */
#define HS_FABRIC_HEADROOM_MTUS 2.0                /* ethernet.cc kHeadroomMtus */
#define HS_EXACT_DOUBLE         9007199254740992.0 /* 2^53: past it a sum is far beyond any buffer */

int hs_scn_fat_tree_k(int leaves, int spines)
{
    int k = (int)lround(sqrt(2.0 * leaves));
    return k >= 2 && k % 2 == 0 && leaves == k * k / 2 && spines == k * k / 4 ? k : 0;
}

/* Leaf (edge, rail) switches and spines (cores) as topology.cc builds them. */
static void tiers(const hs_scenario *sc, uint64_t *leaves, uint64_t *spines)
{
    enum hs_topology t = sc->fabric.topology;
    *leaves = t == HS_TOPOLOGY_SINGLE_SWITCH    ? 1
              : t == HS_TOPOLOGY_RAIL_OPTIMIZED ? (uint64_t)sc->nics.per_server
                                                : (uint64_t)sc->fabric.leaves;
    *spines = *leaves > 1 ? (uint64_t)sc->fabric.spines : 0;
}

uint64_t hs_scn_fabric_links(const hs_scenario *sc)
{
    uint64_t n = (uint64_t)sc->servers.count * (uint64_t)sc->servers.gpus_per_server;
    if (sc->servers.count < 2)
        return 2 * n;
    uint64_t nnics = (uint64_t)sc->servers.count * (uint64_t)sc->nics.per_server, L, S;
    tiers(sc, &L, &S);
    uint64_t between =
        sc->fabric.topology == HS_TOPOLOGY_FAT_TREE ? 4 * L * (uint64_t)llround(sqrt((double)S)) : 2 * L * S;
    return 4 * n + 2 * nnics + between;
}

/* The bytes one ingress link takes from its switch's buffer: reserve, and with PFC its headroom. */
static double link_need(const hs_scenario *sc, double gbps)
{
    if (!sc->fabric.pfc)
        return HS_FABRIC_RESERVE_BYTES;
    double bytes_per_ps = gbps * 1e9 / 8.0 / 1e12;
    double h = HS_FABRIC_HEADROOM_RTTS * bytes_per_ps * (double)(sc->fabric.link_latency_ns * 1000);
    if (!(h < HS_EXACT_DOUBLE))
        return HS_EXACT_DOUBLE;
    return HS_FABRIC_RESERVE_BYTES + (double)llround(h) + HS_FABRIC_HEADROOM_MTUS * sc->fabric.mtu;
}

/* NICs on leaf `l` of L: NIC i sits on i % rails (rail_optimized) or i * L / nnics (the others). */
static uint64_t nics_on_leaf(const hs_scenario *sc, uint64_t l, uint64_t L, uint64_t nnics)
{
    if (sc->fabric.topology == HS_TOPOLOGY_RAIL_OPTIMIZED)
        return (uint64_t)sc->servers.count;
    /* i * L / nnics == l for i from ceil(l * nnics / L) up to ceil((l + 1) * nnics / L) - 1 */
    uint64_t lo = (l * nnics + L - 1) / L, hi = ((l + 1) * nnics + L - 1) / L;
    return hi - lo;
}

double hs_scn_buffer_need(const hs_scenario *sc, char *which, size_t len)
{
    uint64_t nnics = (uint64_t)sc->servers.count * (uint64_t)sc->nics.per_server, L, S;
    tiers(sc, &L, &S);
    const double nic = sc->nics.gbps;
    const double oversub = sc->fabric.oversubscription > 0 ? sc->fabric.oversubscription : 1.0;
    const bool fat = sc->fabric.topology == HS_TOPOLOGY_FAT_TREE;
    const char *leaf_name = sc->fabric.topology == HS_TOPOLOGY_SINGLE_SWITCH    ? "sw"
                            : sc->fabric.topology == HS_TOPOLOGY_RAIL_OPTIMIZED ? "rail"
                            : fat                                               ? "edge"
                                                                                : "leaf";
    double worst = 0, busiest = 0;
    for (uint64_t l = 0; l < L; l++)
        busiest = fmax(busiest, (double)nics_on_leaf(sc, l, L, nnics));
    const uint64_t h = fat ? (uint64_t)hs_scn_fat_tree_k(sc->fabric.leaves, sc->fabric.spines) / 2 : 0;
    /* A fat tree's switch-to-switch links all run at (busiest edge's NIC Gb/s) / oversubscription / (k/2). */
    const double fat_gbps = fat ? busiest * nic / oversub / (double)h : 0;
    double spine = 0; /* into a spine (every spine alike): one link from each leaf */
    for (uint64_t l = 0; l < L; l++) {
        double n = (double)nics_on_leaf(sc, l, L, nnics);
        double down = n * link_need(sc, nic);
        if (fat)
            down += (double)h * link_need(sc, fat_gbps); /* from its aggregation switches */
        else if (S)
            down += (double)S * link_need(sc, n * nic / oversub / (double)S); /* from every spine */
        if (!fat && S)
            spine += link_need(sc, n * nic / oversub / (double)S);
        if (down > worst) {
            worst = down;
            snprintf(which, len, "%s%llu", leaf_name, (unsigned long long)l);
        }
    }
    if (spine > worst) {
        worst = spine;
        snprintf(which, len, "spine0");
    }
    /* a fat tree's aggregation switch: k/2 edges below, k/2 cores above; a core: k aggregation switches */
    if (fat && 2.0 * (double)h * link_need(sc, fat_gbps) > worst) {
        worst = 2.0 * (double)h * link_need(sc, fat_gbps);
        snprintf(which, len, "agg0");
    }
    return worst;
}

uint64_t hs_scn_flow_segments(const hs_scenario *sc, uint32_t src, uint32_t dst, uint64_t bytes)
{
    uint32_t per = (uint32_t)sc->servers.gpus_per_server;
    uint64_t seg = src / per == dst / per ? sc->nvlink.segment_bytes : sc->fabric.mtu;
    return seg ? (bytes + seg - 1) / seg : 0;
}
