/*
 * k-ary fat tree (ns3-glue/model/topology.cc), k = 4: 16 hosts with one 400G NIC
 * each, 8 edge, 8 aggregation and 4 core switches, no oversubscription.
 * Checks the link count (k^3 switch-to-switch directions), the hops a flow
 * takes inside a pod and between pods (with its bytes on exactly those links),
 * the time of a lone flow against bytes / NIC rate, ECMP over the cores, and
 * the clear refusal of leaves/spines that make no fat tree.
 */
#include "fabric_test_util.h"

#define MIB (1024ull * 1024ull)

static void fat_tree_scenario(hs_scenario *sc, int leaves, int spines)
{
    fab_test_scenario(sc, 64 * 1024);
    sc->servers.count = 16;
    sc->servers.gpus_per_server = 1;
    sc->nics.per_server = 1;
    sc->pcie.gbps = 512.0;
    sc->fabric.present = true;
    sc->fabric.topology = HS_TOPOLOGY_FAT_TREE;
    sc->fabric.leaves = leaves;
    sc->fabric.spines = spines;
    sc->fabric.switch_buffer_mib = 32;
    sc->fabric.pfc = true;
    sc->run.seed = 3;
}

/* Ethernet links (names without gpu/nvs) that carried bytes; how many name a core. */
static int busy_links(const hs_fabric *f, int *cores, uint64_t want_bytes)
{
    int n = 0;
    *cores = 0;
    for (size_t i = 0; i < hs_fabric_link_count(f); i++) {
        hs_fabric_link_stats st;
        hs_fabric_get_link_stats(f, i, &st);
        if (st.bytes == 0 || strstr(st.name, "gpu") || strstr(st.name, "nvs"))
            continue;
        n++;
        *cores += strstr(st.name, "core") != NULL;
        /* data links carry the flow's bytes (the reverse direction only ACKs) */
        FAB_CHECK(st.bytes <= want_bytes, "%s carried %" PRIu64 " bytes of %" PRIu64, st.name, st.bytes, want_bytes);
    }
    return n;
}

static int lone_flow(uint32_t dst, int want_hops, int want_cores)
{
    hs_scenario sc;
    fat_tree_scenario(&sc, 8, 4);
    hs_fabric *f = fab_test_create(&sc);
    FAB_CHECK(hs_fabric_link_count(f) == 2 * 16 + 2 * 16 + 2 * 16 + 64, "%zu links", hs_fabric_link_count(f));
    const uint64_t bytes = 16 * MIB;
    fab_test_add(f, 1, 0, dst, bytes, 0);
    hs_flow_done d;
    FAB_CHECK(hs_fabric_next_completion(f, UINT64_MAX, &d) == 1, "no completion");
    const double ideal = bytes * 8.0 / 400e9 * 1e12;
    int cores = 0;
    /* data direction links + the ACK path back (same count) */
    int n = busy_links(f, &cores, bytes + bytes / 10);
    printf("GPU 0 -> GPU %u: %.3f us (16 MiB at 400G: %.3f us), %d busy Ethernet links, %d via a core\n", dst,
           d.finish_ps / 1e6, ideal / 1e6, n, cores);
    FAB_CHECK(n == 2 * want_hops, "%d busy links, expected %d each way", n, want_hops);
    FAB_CHECK(cores == 2 * want_cores, "%d core links, expected %d each way", cores, want_cores);
    FAB_CHECK(fab_rel((double)d.finish_ps, ideal) < 0.03, "%" PRIu64 " ps vs %.0f", d.finish_ps, ideal);
    hs_fabric_destroy(f);
    FAB_TEST_END();
}

/* 1024 one-packet flows pod 0 -> pod 3: how many cross each core (within ±25 % of 256). */
static int case_ecmp(void)
{
    hs_scenario sc;
    fat_tree_scenario(&sc, 8, 4);
    hs_fabric *f = fab_test_create(&sc);
    for (uint32_t i = 0; i < 1024; i++)
        fab_test_add(f, i, i % 4, 12 + i % 4, 4096, i * 1000ull);
    hs_flow_done d;
    int done = 0;
    while (hs_fabric_next_completion(f, UINT64_MAX, &d) == 1)
        done++;
    FAB_CHECK(done == 1024, "%d flows done", done);
    double per_core[4] = {0};
    for (size_t i = 0; i < hs_fabric_link_count(f); i++) {
        hs_fabric_link_stats st;
        hs_fabric_get_link_stats(f, i, &st);
        unsigned a, c;
        if (sscanf(st.name, "agg%u>core%u", &a, &c) == 2 && a < 2 && c < 4)
            per_core[c] += (double)st.bytes / 4096;
    }
    for (int c = 0; c < 4; c++) {
        printf("core %d: %.1f flows\n", c, per_core[c]);
        FAB_CHECK(fabs(per_core[c] - 256) <= 64, "core %d carried %.1f flows of 1024 (even: 256)", c, per_core[c]);
    }
    hs_fabric_destroy(f);
    FAB_TEST_END();
}

static int case_refused(void)
{
    hs_scenario sc;
    char err[512] = "";
    fat_tree_scenario(&sc, 8, 2);
    FAB_CHECK(hs_fabric_create(&sc, err, sizeof err) == NULL, "8 leaves, 2 spines accepted");
    FAB_CHECK(strstr(err, "k^2/2 edge switches") != NULL, "message: %s", err);
    fat_tree_scenario(&sc, 2, 1); /* k = 2 holds 2 NICs, not 16 */
    FAB_CHECK(hs_fabric_create(&sc, err, sizeof err) == NULL, "k = 2 with 16 NICs accepted");
    FAB_CHECK(strstr(err, "holds 2 NICs") != NULL, "message: %s", err);
    printf("refused: %s\n", err);
    FAB_TEST_END();
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "same_edge"))
        return lone_flow(1, 2, 0); /* nic > edge > nic */
    if (argc == 2 && !strcmp(argv[1], "same_pod"))
        return lone_flow(2, 4, 0); /* + edge > agg > edge */
    if (argc == 2 && !strcmp(argv[1], "across_pods"))
        return lone_flow(15, 6, 2); /* + agg > core > agg */
    if (argc == 2 && !strcmp(argv[1], "ecmp"))
        return case_ecmp();
    if (argc == 2 && !strcmp(argv[1], "refused"))
        return case_refused();
    fprintf(stderr, "usage: test_fat_tree same_edge|same_pod|across_pods|ecmp|refused\n");
    return 2;
}
