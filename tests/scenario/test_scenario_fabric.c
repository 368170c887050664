/*
 * The loader's fabric checks (scenarios/fabric_limits.c) agree with the fabric
 * model itself (ns3-glue/): for each topology, the loader names the bytes the
 * links into the fullest switch take from its buffer (reserve and PFC
 * headroom); the fabric must refuse a buffer of exactly that many bytes and
 * build one a byte larger, and the loader must do the same. Topologies the
 * loader refuses by shape or size, the fabric refuses too. Each fabric is
 * built in a child process (one ns-3 per process).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hysim/fabric.h"
#include "hysim/scenario.h"
#include "test_check.h"

static char errbuf[16384];

/* Loads `text` with "BUFFER" replaced by `buffer`; returns the loader's problem count. */
static int load(const char *text, const char *buffer, hs_scenario *sc)
{
    char yaml[2048];
    const char *at = strstr(text, "BUFFER");
    CHECK(at != NULL, "no BUFFER in %s", text);
    snprintf(yaml, sizeof yaml, "%.*s%s%s", (int)(at - text), text, buffer, at + 6);
    return hs_scenario_parse(yaml, strlen(yaml), "t.yaml", sc, errbuf, sizeof errbuf);
}

/* 1 when the fabric builds `sc`, 0 when it refuses it with a message containing `why`. */
static int fabric_builds(const hs_scenario *sc, const char *why)
{
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        char err[1024] = "";
        hs_fabric *f = hs_fabric_create(sc, err, sizeof err);
        if (f) {
            hs_fabric_destroy(f);
            _exit(1);
        }
        fprintf(stderr, "  fabric: %s\n", err);
        _exit(why && strstr(err, why) ? 0 : 2);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status), "child");
    CHECK(WEXITSTATUS(status) != 2, "the fabric refused it for another reason than \"%s\"", why);
    return WEXITSTATUS(status) == 1;
}

/* The buffer of exactly the bytes the loader names is refused by both; a byte more is built by both. */
static void buffer_edge(const char *text)
{
    hs_scenario sc;
    CHECK(load(text, "0.001", &sc) == 1, "a 1 KiB buffer loaded: %s", errbuf);
    const char *p = strstr(errbuf, "switch_buffer_mib");
    p = p ? strchr(p, '(') : NULL;
    CHECK(p != NULL, "no byte count in %s", errbuf);
    uint64_t need = strtoull(p + 1, NULL, 10);
    fprintf(stderr, "%s  needs %" PRIu64 " bytes\n", text, need);
    CHECK(need > 4096, "need %" PRIu64, need);

    char mib[64];
    snprintf(mib, sizeof mib, "%.17g", (double)need / 1048576.0);
    CHECK(load(text, mib, &sc) == 1 && strstr(errbuf, "smaller than the"), "%s MiB: %s", mib, errbuf);
    CHECK(!fabric_builds(&sc, "smaller than the PFC headroom"), "the fabric built a buffer of %" PRIu64 " bytes", need);
    snprintf(mib, sizeof mib, "%.17g", (double)(need + 1) / 1048576.0);
    CHECK(load(text, mib, &sc) == 0, "%s MiB: %s", mib, errbuf);
    CHECK(fabric_builds(&sc, NULL), "the fabric refused a buffer of %" PRIu64 " bytes", need + 1);
}

/* A scenario the loader refuses (with `loader_says`), and the fabric too (with `fabric_says`). */
static void both_refuse(const char *text, const char *loader_says, const char *fabric_says)
{
    hs_scenario sc;
    CHECK(load(text, "64", &sc) == 1 && strstr(errbuf, loader_says), "loader: %s", errbuf);
    fprintf(stderr, "%s", errbuf);
    CHECK(!fabric_builds(&sc, fabric_says), "the fabric built %s", text);
}

int main(void)
{
    /* rail_optimized without and with spines; uneven leaves; a fat tree; no PFC; jumbo MTU, longer links */
    buffer_edge("servers: {count: 2, gpus_per_server: 8}\n"
                "fabric: {topology: rail_optimized, switch_buffer_mib: BUFFER}\n");
    buffer_edge("servers: {count: 3, gpus_per_server: 4}\nnics: {gbps: 200}\n"
                "fabric: {topology: rail_optimized, spines: 2, oversubscription: 3, switch_buffer_mib: BUFFER}\n");
    buffer_edge("servers: {count: 3, gpus_per_server: 8}\n"
                "fabric: {topology: leaf_spine, leaves: 5, spines: 2, oversubscription: 0.5, "
                "switch_buffer_mib: BUFFER}\n");
    buffer_edge("servers: {count: 2, gpus_per_server: 8}\n"
                "fabric: {topology: fat_tree, leaves: 8, spines: 4, oversubscription: 2, switch_buffer_mib: BUFFER}\n");
    buffer_edge("servers: {count: 4, gpus_per_server: 8}\n"
                "fabric: {topology: single_switch, pfc: false, switch_buffer_mib: BUFFER}\n");
    buffer_edge("servers: {count: 2, gpus_per_server: 2}\nnics: {gbps: 800}\n"
                "fabric: {topology: leaf_spine, leaves: 4, spines: 1, mtu: 9000, link_latency_ns: 2500, "
                "switch_buffer_mib: BUFFER}\n");

    both_refuse("servers: {count: 2, gpus_per_server: 8}\nnics: {per_server: 3}\n"
                "fabric: {topology: rail_optimized, leaves: 8, switch_buffer_mib: BUFFER}\n",
                "one leaf (rail switch) per NIC", "one leaf per rail");
    both_refuse("servers: {count: 2, gpus_per_server: 8}\n"
                "fabric: {topology: fat_tree, leaves: 8, spines: 2, switch_buffer_mib: BUFFER}\n",
                "k-ary fat_tree", "k-ary fat_tree");
    both_refuse("servers: {count: 4, gpus_per_server: 8}\n"
                "fabric: {topology: fat_tree, leaves: 8, spines: 4, switch_buffer_mib: BUFFER}\n",
                "holds 16 NICs", "holds 16 NICs");
    both_refuse("servers: {count: 2, gpus_per_server: 1}\nnics: {per_server: 1}\n"
                "fabric: {topology: leaf_spine, leaves: 3, spines: 1, switch_buffer_mib: BUFFER}\n",
                "leaf_spine needs 1 to 2 leaves", "leaf_spine needs 1 to 2 leaves");
    both_refuse("servers: {count: 40000, gpus_per_server: 8}\n"
                "fabric: {topology: rail_optimized, switch_buffer_mib: BUFFER}\n",
                "links", "too many links");
    fprintf(stderr, "ok\n");
    return 0;
}
