/*
 * bench_fabric: cost of the packet-level fabric model (ns3-glue/) on a ring
 * all-reduce pattern inside one 8-GPU H200-like server, or (--leaf-spine) on
 * a RoCE leaf-spine of single-GPU hosts.
 *
 * A ring all-reduce of S bytes over N GPUs is 2(N-1) steps; in each step GPU i
 * sends S/N bytes to GPU (i+1)%N, and a step starts when every flow of the
 * previous step has finished. Default: 1 GiB over 8 GPUs = 14 steps × 8 flows
 * of 128 MiB, NVLink 3600 Gb/s per GPU, 500 ns, 64 KiB segments.
 *
 * --leaf-spine: 16 hosts (one GPU, one 400G NIC, PCIe Gen5 x16 each) on 2
 * leaves and 2 spines, 1 us links, MTU 4096, 32 MiB switch buffers, PFC, ECN
 * (800 / 3200 KB, pmax 0.2) and DCQCN on; 16 flows of 64 MiB, host i to host
 * (i + 8) % 16, all at time 0 (every flow crosses a spine).
 * --incast: hosts 1..15 all send to host 0 instead; --qps Q: Q flows (queue
 * pairs) per sender, each of the given size. A congested incast with many
 * queue pairs keeps DCQCN's per-flow timers busy while most flows wait.
 *
 * usage: bench_fabric [--gib X] [--gpus N] [--segment-kib K] [--gbps R] [--latency-ns L]
 *        bench_fabric --leaf-spine [--mib-per-flow M] [--no-pfc] [--no-dcqcn] [--incast] [--qps Q]
 */
#include "hysim/fabric.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void print_cost(double wall, double cpu, double sim, const hs_fabric_stats *st)
{
    printf("wall time           %.3f s\n", wall);
    printf("cpu time            %.3f s\n", cpu);
    printf("flows               %" PRIu64 "\n", st->flows_done);
    printf("packet-hops         %" PRIu64 "\n", st->packet_hops);
    printf("events              %" PRIu64 "\n", st->events);
    printf("cpu us/packet-hop   %.3f\n", cpu * 1e6 / (double)st->packet_hops);
    printf("events/s            %.3f M\n", st->events / wall / 1e6);
    printf("slowdown            %.0f x (wall / simulated)\n", wall / sim);
}

static int leaf_spine(int argc, char **argv)
{
    double mib = 64;
    int pfc = 1, dcqcn = 1, incast = 0, qps = 1;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--no-pfc"))
            pfc = 0;
        else if (!strcmp(argv[i], "--incast"))
            incast = 1;
        else if (!strcmp(argv[i], "--qps") && i + 1 < argc && atoi(argv[i + 1]) > 0)
            qps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-dcqcn"))
            dcqcn = 0;
        else if (!strcmp(argv[i], "--mib-per-flow") && i + 1 < argc)
            mib = atof(argv[++i]);
        else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    const int hosts = 16;
    hs_scenario sc;
    memset(&sc, 0, sizeof sc);
    snprintf(sc.name, sizeof sc.name, "bench-leaf-spine");
    sc.servers.count = hosts;
    sc.servers.gpus_per_server = 1;
    sc.nvlink.gbps_per_gpu = 3600;
    sc.nvlink.latency_ns = 500;
    sc.nvlink.segment_bytes = 256 * 1024;
    sc.pcie.gbps = 32 * 16 * 128.0 / 130.0; /* Gen5 x16 */
    sc.pcie.latency_ns = 1000;
    sc.nics.per_server = 1;
    sc.nics.gbps = 400;
    sc.fabric.present = true;
    sc.fabric.topology = HS_TOPOLOGY_LEAF_SPINE;
    sc.fabric.leaves = 2;
    sc.fabric.spines = 2;
    sc.fabric.oversubscription = 1.0;
    sc.fabric.link_latency_ns = 1000;
    sc.fabric.switch_buffer_mib = 32;
    sc.fabric.mtu = 4096;
    sc.fabric.ecn.kmin_kb = 800;
    sc.fabric.ecn.kmax_kb = 3200;
    sc.fabric.ecn.pmax = 0.2;
    sc.fabric.pfc = pfc;
    sc.fabric.dcqcn = dcqcn;
    sc.run.seed = 1;
    const uint64_t bytes = (uint64_t)(mib * 1048576);

    double w0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
    char err[512] = "";
    hs_fabric *f = hs_fabric_create(&sc, err, sizeof err);
    if (!f) {
        fprintf(stderr, "hs_fabric_create: %s\n", err);
        return 1;
    }
    int nflows = 0;
    for (int i = incast ? 1 : 0; i < hosts; i++)
        for (int q = 0; q < qps; q++, nflows++)
            if (hs_fabric_add_flow(f, (uint64_t)nflows, (uint32_t)i, incast ? 0u : (uint32_t)((i + hosts / 2) % hosts),
                                   bytes, 0, err, sizeof err) != 0) {
                fprintf(stderr, "hs_fabric_add_flow: %s\n", err);
                return 1;
            }
    hs_flow_done d;
    uint64_t t = 0;
    for (int i = 0; i < nflows; i++) {
        if (hs_fabric_next_completion(f, UINT64_MAX, &d) != 1) {
            fprintf(stderr, "missing completion\n");
            return 1;
        }
        t = d.finish_ps;
    }
    double w1 = now_s(CLOCK_MONOTONIC), c1 = now_s(CLOCK_PROCESS_CPUTIME_ID);
    hs_fabric_stats st;
    hs_fabric_get_stats(f, &st);
    uint64_t pauses = 0, marks = 0, drops = 0, retx = 0, cnps = 0;
    for (size_t i = 0; i < hs_fabric_link_count(f); i++) {
        hs_fabric_link_stats ls;
        hs_fabric_get_link_stats(f, i, &ls);
        pauses += ls.pfc_pauses;
        marks += ls.ecn_marks;
        drops += ls.drops;
        retx += ls.retransmissions;
        cnps += ls.cnps;
    }
    hs_fabric_destroy(f);
    const double sim = t / 1e12;
    printf("leaf-spine: %d hosts x 400G, 2 leaves, 2 spines, MTU 4096, PFC %s, DCQCN %s: "
           "%d flows of %g MiB%s\n",
           hosts, pfc ? "on" : "off", dcqcn ? "on" : "off", nflows, mib, incast ? ", incast into host 0" : "");
    printf("simulated time      %.3f us (one flow at 400G: %.3f us)\n", sim * 1e6, bytes * 8 / 400e9 * 1e6);
    printf("pauses / marks / drops / retransmissions  %" PRIu64 " / %" PRIu64 " / %" PRIu64 " / %" PRIu64 "\n", pauses,
           marks, drops, retx);
    printf("CNPs                %" PRIu64 "\n", cnps);
    print_cost(w1 - w0, c1 - c0, sim, &st);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--leaf-spine"))
        return leaf_spine(argc, argv);
    double gib = 1.0, gbps = 3600.0, seg_kib = 64;
    int gpus = 8;
    uint64_t lat_ns = 500;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "missing value for %s\n", a);
            return 2;
        }
        if (!strcmp(a, "--gib"))
            gib = atof(v);
        else if (!strcmp(a, "--gpus"))
            gpus = atoi(v);
        else if (!strcmp(a, "--segment-kib"))
            seg_kib = atof(v);
        else if (!strcmp(a, "--gbps"))
            gbps = atof(v);
        else if (!strcmp(a, "--latency-ns"))
            lat_ns = strtoull(v, NULL, 10);
        else {
            fprintf(stderr, "unknown option %s\n", a);
            return 2;
        }
        i++;
    }
    if (gpus < 2 || gib <= 0 || seg_kib <= 0) {
        fprintf(stderr, "bad arguments\n");
        return 2;
    }

    hs_scenario sc;
    memset(&sc, 0, sizeof sc);
    snprintf(sc.name, sizeof sc.name, "bench-ring-allreduce");
    sc.servers.count = 1;
    sc.servers.gpus_per_server = gpus;
    sc.nvlink.gbps_per_gpu = gbps;
    sc.nvlink.latency_ns = lat_ns;
    sc.nvlink.segment_bytes = (uint32_t)(seg_kib * 1024);

    const uint64_t total = (uint64_t)(gib * 1024 * 1024 * 1024);
    const uint64_t chunk = total / (uint64_t)gpus;
    const int steps = 2 * (gpus - 1);

    double w0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
    char err[512] = "";
    hs_fabric *f = hs_fabric_create(&sc, err, sizeof err);
    if (!f) {
        fprintf(stderr, "hs_fabric_create: %s\n", err);
        return 1;
    }
    uint64_t id = 0, t = 0;
    for (int s = 0; s < steps; s++) {
        for (int g = 0; g < gpus; g++) {
            if (hs_fabric_add_flow(f, id++, (uint32_t)g, (uint32_t)((g + 1) % gpus), chunk, t, err, sizeof err) != 0) {
                fprintf(stderr, "hs_fabric_add_flow: %s\n", err);
                return 1;
            }
        }
        hs_flow_done d;
        for (int g = 0; g < gpus; g++) {
            if (hs_fabric_next_completion(f, UINT64_MAX, &d) != 1) {
                fprintf(stderr, "step %d: missing completion\n", s);
                return 1;
            }
            t = d.finish_ps;
        }
    }
    double w1 = now_s(CLOCK_MONOTONIC), c1 = now_s(CLOCK_PROCESS_CPUTIME_ID);
    hs_fabric_stats st;
    hs_fabric_get_stats(f, &st);
    hs_fabric_destroy(f);

    const double wall = w1 - w0, cpu = c1 - c0, sim = t / 1e12;
    const double ideal = steps * ((double)chunk * 8 / (gbps * 1e9) + lat_ns * 1e-9);
    printf("ring all-reduce %.3f GiB over %d GPUs: %d steps x %d flows of %.1f MiB, "
           "NVLink %.0f Gb/s, %" PRIu64 " ns, segment %.0f KiB\n",
           gib, gpus, steps, gpus, chunk / 1048576.0, gbps, lat_ns, seg_kib);
    printf("simulated time      %.3f us (ideal %.3f us, %+.3f %%)\n", sim * 1e6, ideal * 1e6,
           100 * (sim - ideal) / ideal);
    print_cost(wall, cpu, sim, &st);
    return 0;
}
