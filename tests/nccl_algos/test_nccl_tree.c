/*
 * NCCL's Tree all-reduce (double binary tree across servers, a chain within
 * each) in hysimd, against the analytic test fabric (every flow alone at its
 * link's rate plus the link latency), and the tuner's choice between Tree and
 * Ring with NCCL's constants (bridge/collectives/collective_tuner.c).
 *
 *   tree_tuner     the choice: never Tree on one server, Tree for small
 *                  all-reduces across 4 servers, Ring for 1 GiB on 2;
 *                  NCCL_ALGO overrides; other kinds fall back to Ring
 *   tree_latency   a small all-reduce on 2 and 4 servers: up the chain and the
 *                  tree, then down: 2 · ((m−1) NVLink hops + log2(servers) NIC hops)
 *   tree_pipeline  a large one on 2 servers: K chunks pipelined over an up and
 *                  a down hop take (K+1) chunk times, not 2K
 *   tree_vs_ring   NCCL's latencies on: Tree beats Ring at 64 KiB on 4 servers
 *   tree_env_algo  Collective.algo (NCCL_ALGO) picks Tree; the scenario's ring wins
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "collective_tuner.h"
#include "daemon_test.h"
#include "test_scenario.h"

#define COMM       0x7ee0ull
#define NV_GBPS    800
#define NV_LAT_NS  500
#define NIC_GBPS   400
#define NIC_LAT_NS 1000

void dt_scenario(hs_scenario *sc)
{
    hs_test_scenario_fill(sc, &(hs_test_scenario){
                                  .name = "tree tests",
                                  .defaults = true,
                                  .gpu_model = "NVIDIA H200",
                                  .h200 = true,
                                  .servers = 2,
                                  .gpus_per_server = 2,
                                  .nvlink_gbps = NV_GBPS,
                                  .nvlink_latency_ns = NV_LAT_NS,
                                  .pcie_gbps = 500,
                                  .nics_per_server = 2,
                                  .nic_gbps = NIC_GBPS,
                                  .link_latency_ns = NIC_LAT_NS,
                                  .default_kernel_ns = 1000,
                                  .host_time_zero = true,
                                  .seed = 1,
                                  .nccl_algo = HS_NCCL_ALGO_TREE,
                                  .nccl_proto = HS_NCCL_PROTO_SIMPLE,
                                  .nccl_channels = 2,
                              });
}

bool dt_fake_fabric(void) { return true; }

static void expect_ok(const dt_result *r)
{
    CHECK(r->rc == 0, "run failed: %s", r->sum.error);
    for (int i = 0; i < r->nchildren; i++)
        CHECK(WIFEXITED(r->status[i]) && WEXITSTATUS(r->status[i]) == 0, "child %d: status 0x%x", i, r->status[i]);
}

/* ------------------------------------------------------------- tuner */

static hs_nccl_plan plan(const hs_scenario *sc, enum hs_coll_kind k, uint64_t bytes, uint32_t n, uint32_t nodes,
                         uint32_t env_algo, uint32_t env_proto)
{
    hs_nccl_plan p;
    char err[256] = "";
    CHECK(hs_tuner_plan(sc, k, bytes, n, nodes, env_algo, env_proto, &p, err, sizeof err) == 0, "tuner: %s", err);
    return p;
}

/* The H200 servers of bench/real: NVLink 3600 Gb/s, 8 NICs of 400 Gb/s, NCCL's latencies. */
static void h200_servers(hs_scenario *sc, int gpus)
{
    memset(sc, 0, sizeof(*sc));
    sc->servers.gpus_per_server = gpus;
    sc->nvlink.gbps_per_gpu = 3600;
    sc->nics.per_server = 8;
    sc->nics.gbps = 400;
    sc->nccl.calibrated = true;
}

static void test_tuner(void)
{
    hs_scenario sc;
    const enum hs_coll_kind AR = HS_COLL_ALL_REDUCE;
    /* one server: Ring at every size (the calibrated single-server figures rest on it) */
    for (uint32_t n = 2; n <= 8; n *= 2) {
        h200_servers(&sc, (int)n);
        for (uint64_t b = 1 << 10; b <= 1ull << 30; b <<= 2)
            CHECK(plan(&sc, AR, b, n, 1, 0, 0).algo == HS_NCCL_ALGO_RING, "%u GPUs, %llu B: Tree on one server", n,
                  (unsigned long long)b);
    }
    /* 4 servers × 8: Tree for small all-reduces (2·(7 NVLink + 2 NET) hops against ring's 62 steps) */
    h200_servers(&sc, 8);
    hs_nccl_plan small = plan(&sc, AR, 64 << 10, 32, 4, 0, 0);
    CHECK_EQ(small.algo, HS_NCCL_ALGO_TREE);
    CHECK(small.channels >= 2 && small.hop_net_ps > small.hop_ps, "tree plan: %u channels, hops %llu/%llu ps",
          small.channels, (unsigned long long)small.hop_ps, (unsigned long long)small.hop_net_ps);
    /* 2 servers × 8: Ring at 1 GiB (NCCL's tree algorithm bandwidth is half its bus bandwidth) */
    CHECK_EQ(plan(&sc, AR, 1ull << 30, 16, 2, 0, 0).algo, HS_NCCL_ALGO_RING);
    /* NCCL_ALGO overrides, both ways, with the protocol still tuned */
    CHECK_EQ(plan(&sc, AR, 1ull << 30, 16, 2, HS_NCCL_ALGO_TREE, 0).algo, HS_NCCL_ALGO_TREE);
    CHECK_EQ(plan(&sc, AR, 64 << 10, 32, 4, HS_NCCL_ALGO_RING, 0).algo, HS_NCCL_ALGO_RING);
    /* the scenario's algo wins over NCCL_ALGO */
    sc.nccl.algo = HS_NCCL_ALGO_RING;
    CHECK_EQ(plan(&sc, AR, 64 << 10, 32, 4, HS_NCCL_ALGO_TREE, 0).algo, HS_NCCL_ALGO_RING);
    sc.nccl.algo = HS_NCCL_ALGO_AUTO;
    /* no tree for the other kinds: Ring, the forced protocol kept (NCCL ≥ 2.22) */
    hs_nccl_plan ag = plan(&sc, HS_COLL_ALL_GATHER, 1 << 20, 16, 2, HS_NCCL_ALGO_TREE, HS_NCCL_PROTO_LL128);
    CHECK(ag.algo == HS_NCCL_ALGO_RING && ag.proto == HS_NCCL_PROTO_LL128, "AllGather with Tree: %s/%s",
          hs_tuner_algo_name(ag.algo), hs_tuner_proto_name(ag.proto));
    CHECK_EQ(plan(&sc, HS_COLL_BROADCAST, 1 << 20, 16, 2, HS_NCCL_ALGO_TREE, 0).algo, HS_NCCL_ALGO_RING);
    /* a single Tree channel is never planned: both trees of the pair run */
    sc.nccl.channels = 1;
    CHECK_EQ(plan(&sc, AR, 1 << 20, 16, 2, HS_NCCL_ALGO_TREE, 0).channels, 2);
}

/* ------------------------------------------------------------- runs */

typedef struct tree_arg {
    int servers, gpus; /* one child per server, one rank per GPU */
    uint64_t bytes;
    uint32_t env_algo; /* Collective.algo, as the interposer reads NCCL_ALGO */
} tree_arg;

/* Child = server idx: its ranks' parts on their GPUs, then each GPU's completion time. */
static void child_tree(const char *ep, int idx, void *arg)
{
    const tree_arg *a = arg;
    uint32_t first = (uint32_t)(idx * a->gpus), n = (uint32_t)(a->servers * a->gpus);
    dt_client c;
    dt_connect(&c, ep, (uint32_t)idx, first, (uint32_t)a->gpus, 0);
    for (uint32_t g = first; g < first + (uint32_t)a->gpus; g++)
        dt_comm_init(&c, 0, g, COMM, g, n);
    for (uint32_t g = first; g < first + (uint32_t)a->gpus; g++) {
        dt_collective(&c, 0, g, 0, COMM, g, 0, HYSIM__COLL_KIND__ALL_REDUCE, a->bytes);
        c.ops[c.nops - 1]->collective->algo = a->env_algo;
    }
    uint64_t last = 0;
    for (uint32_t g = first; g < first + (uint32_t)a->gpus; g++)
        last = dt_sync_stream(&c, last, g, 0); /* answered at the later of its host time and the stream's end */
    dt_record(idx, last);
    dt_bye(&c, last, NULL, 0);
}

/* The all-reduce's time: the last rank's completion over all servers. */
static uint64_t run_tree(const hs_scenario *sc, const tree_arg *a, uint64_t *flows)
{
    dt_result *r = dt_run(sc, a->servers, child_tree, (void *)a);
    expect_ok(r);
    uint64_t t = 0;
    for (int i = 0; i < a->servers; i++) {
        CHECK_EQ(r->nvalues[i], 1);
        t = r->values[i][0] > t ? r->values[i][0] : t;
    }
    CHECK_EQ(r->sum.collectives, 1);
    if (flows)
        *flows = r->sum.flows;
    dt_free(r);
    return t;
}

/* Simulated ps as the daemon answers them: whole ns, rounded up. */
static uint64_t ns_ceil(uint64_t ps) { return (ps + 999) / 1000; }

/* One flow of `bytes` on the analytic fabric, in ps. */
static uint64_t hop_ps(uint64_t bytes, bool nic)
{
    return bytes * 8000 / (nic ? NIC_GBPS : NV_GBPS) + (nic ? NIC_LAT_NS : NV_LAT_NS) * 1000ull;
}

static void check_latency(int servers, int gpus, int depth)
{
    hs_scenario sc;
    dt_scenario(&sc);
    sc.servers.count = servers;
    sc.servers.gpus_per_server = gpus;
    tree_arg a = {.servers = servers, .gpus = gpus, .bytes = 64 << 10};
    uint64_t flows, got = run_tree(&sc, &a, &flows);
    /* two channels of 32 KiB, one chunk each: up the longest path, then down it */
    uint64_t chunk = a.bytes / 2;
    uint64_t want = ns_ceil(2 * ((uint64_t)(gpus - 1) * hop_ps(chunk, false) + (uint64_t)depth * hop_ps(chunk, true)));
    printf("tree all-reduce of 64 KiB, %d servers x %d GPUs: %llu ns (analytic %llu ns), %llu flows\n", servers, gpus,
           (unsigned long long)got, (unsigned long long)want, (unsigned long long)flows);
    CHECK_EQ(got, want);
    /* every rank but the root sends one chunk up and gets one down, per channel */
    CHECK_EQ(flows, 2 * 2 * (uint64_t)(servers * gpus - 1));
}

static void test_latency(void)
{
    check_latency(2, 2, 1);
    check_latency(4, 2, 2);
    check_latency(4, 3, 2);
}

static void test_pipeline(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    sc.servers.gpus_per_server = 1;
    tree_arg a = {.servers = 2, .gpus = 1, .bytes = 64ull << 20};
    uint64_t got = run_tree(&sc, &a, NULL);
    /* 2 channels of 32 MiB in 16 chunks of 2 MiB: chunk c is down at (c + 2) chunk times */
    uint64_t want = ns_ceil(17 * hop_ps(2ull << 20, true));
    printf("tree all-reduce of 64 MiB, 2 servers: %llu ns (pipelined %llu ns, unpipelined %llu ns)\n",
           (unsigned long long)got, (unsigned long long)want,
           (unsigned long long)(32 * hop_ps(2ull << 20, true) / 1000));
    CHECK_EQ(got, want);
}

static void test_vs_ring(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    sc.servers.count = 4;
    sc.nccl.calibrated = true; /* NCCL's base and per-hop latencies */
    sc.nccl.proto = HS_NCCL_PROTO_LL;
    tree_arg a = {.servers = 4, .gpus = 2, .bytes = 64 << 10};
    uint64_t tree = run_tree(&sc, &a, NULL);
    sc.nccl.algo = HS_NCCL_ALGO_RING;
    uint64_t ring = run_tree(&sc, &a, NULL);
    printf("64 KiB all-reduce on 4 servers x 2 GPUs, LL: tree %llu ns, ring %llu ns\n", (unsigned long long)tree,
           (unsigned long long)ring);
    CHECK(tree < ring, "tree %llu ns is not faster than ring %llu ns", (unsigned long long)tree,
          (unsigned long long)ring);
}

static void test_env_algo(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    sc.nccl.algo = HS_NCCL_ALGO_AUTO;
    tree_arg a = {.servers = 2, .gpus = 2, .bytes = 64 << 10, .env_algo = HS_NCCL_ALGO_TREE};
    uint64_t flows;
    uint64_t t = run_tree(&sc, &a, &flows);
    CHECK_EQ(flows, 2 * 2 * 3);       /* the tree's: 3 up and 3 down per channel */
    sc.nccl.algo = HS_NCCL_ALGO_RING; /* the scenario wins over NCCL_ALGO */
    uint64_t ring = run_tree(&sc, &a, &flows);
    CHECK_EQ(flows, 2 * 2 * 3 * 4); /* the ring's: 2(n−1) steps of n flows per channel */
    printf("NCCL_ALGO=Tree: %llu ns; with the scenario's ring: %llu ns\n", (unsigned long long)t,
           (unsigned long long)ring);
}

static const dt_case cases[] = {
    {"tree_tuner", test_tuner},     {"tree_latency", test_latency},   {"tree_pipeline", test_pipeline},
    {"tree_vs_ring", test_vs_ring}, {"tree_env_algo", test_env_algo},
};

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    return dt_main(argc, argv, cases, DT_NCASES(cases));
}
