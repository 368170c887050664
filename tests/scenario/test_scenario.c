/*
 * Tests of the scenario loader (scenarios/). One program, one case per run:
 *
 *   test_scenario expect FILE   FILE (relative to this folder) must fail to load
 *                               with exactly one problem per leading
 *                               "# expect: TEXT" comment, each TEXT found in the
 *                               messages, every message "PATH:LINE:COL: ...".
 *   test_scenario defaults      defaults, derived values, presets, overrides
 *   test_scenario shipped       every .yaml in scenarios/ loads without a problem
 *   test_scenario api           hs_scenario_parse/load edge cases, describe, names
 *   test_scenario hostile       nesting 200,000 levels deep (flow and block style)
 *                               and a FIFO as the scenario: refused, not hung on
 *
 * HS_TEST_DATA_DIR (this folder) and HS_SHIPPED_DIR (scenarios/) come from
 * compile definitions, so the tests do not depend on the working directory.
 */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hysim/scenario.h"

static int failures;

#define HS_CHECK_COUNTS
#include "test_check.h"

#define NEAR(a, b) (fabs((double)(a) - (double)(b)) <= 1e-9 * (fabs((double)(b)) + 1))

static char errbuf[16384];

/* ------------------------------------------------------------- expect FILE */

/* Every line of errbuf looks like "PATH:LINE:COL: message" with LINE, COL >= 1, in file order. */
static void check_lines(const char *path, const char *errs)
{
    size_t plen = strlen(path);
    unsigned long prev_l = 0, prev_c = 0;
    for (const char *line = errs; *line;) {
        const char *end = strchr(line, '\n');
        CHECK(end != NULL, "message not ended by a newline: %s", line);
        if (!end)
            return;
        unsigned long l = 0, c = 0;
        int used = 0;
        CHECK(!strncmp(line, path, plen) && sscanf(line + plen, ":%lu:%lu: %n", &l, &c, &used) == 2 && used > 0 &&
                  l >= 1 && c >= 1 && line + plen + used < end,
              "not \"%s:LINE:COL: message\": %.*s", path, (int)(end - line), line);
        CHECK(l > prev_l || (l == prev_l && c >= prev_c), "out of file order: %.*s", (int)(end - line), line);
        prev_l = l;
        prev_c = c;
        line = end + 1;
    }
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static int case_expect(const char *rel)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", HS_TEST_DATA_DIR, rel);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    char expects[32][512];
    int nexp = 0;
    char line[1024];
    while (nexp < 32 && fgets(line, sizeof line, f) && !strncmp(line, "# expect: ", 10)) {
        line[strcspn(line, "\n")] = 0;
        snprintf(expects[nexp++], sizeof expects[0], "%.500s", line + 10);
    }
    fclose(f);
    CHECK(nexp > 0, "%s: the first line must be \"# expect: <substring>\"", rel);

    hs_scenario sc;
    int n = hs_scenario_load(path, &sc, errbuf, sizeof errbuf);
    fprintf(stderr, "%s: %d problem(s):\n%s", rel, n, errbuf);
    CHECK(n > 0, "%s loaded without a problem", rel);
    CHECK(n == nexp, "%s: %d problems reported, %d expected", rel, n, nexp);
    CHECK(count_lines(errbuf) == n, "%d message lines for %d problems", count_lines(errbuf), n);
    for (int i = 0; i < nexp; i++)
        CHECK(strstr(errbuf, expects[i]) != NULL, "%s: no message contains \"%s\"", rel, expects[i]);
    check_lines(path, errbuf);
    return failures != 0;
}

/* ---------------------------------------------------------------- defaults */

static int parse(const char *text, hs_scenario *sc)
{
    int n = hs_scenario_parse(text, strlen(text), "mem.yaml", sc, errbuf, sizeof errbuf);
    if (n)
        fprintf(stderr, "unexpected problems in:\n%s\n--\n%s", text, errbuf);
    return n;
}

static void check_h200(const hs_scenario *sc)
{
    CHECK(!strcmp(sc->gpu.model, "NVIDIA H200"), "model %s", sc->gpu.model);
    CHECK(sc->gpu.memory_bytes == 141ull << 30, "memory %llu", (unsigned long long)sc->gpu.memory_bytes);
    CHECK(sc->gpu.bf16_tflops == 989 && sc->gpu.fp32_tflops == 67, "tflops %g %g", sc->gpu.bf16_tflops,
          sc->gpu.fp32_tflops);
    CHECK(sc->gpu.hbm_gbps == 4800, "hbm %g", sc->gpu.hbm_gbps);
    CHECK(sc->gpu.sm_count == 132, "sms %d", sc->gpu.sm_count);
    CHECK(sc->gpu.cc_major == 9 && sc->gpu.cc_minor == 0, "cc %d.%d", sc->gpu.cc_major, sc->gpu.cc_minor);
}

static void check_defaults(const hs_scenario *sc)
{
    check_h200(sc);
    CHECK(sc->nvlink.gbps_per_gpu == 3600, "%g", sc->nvlink.gbps_per_gpu);
    CHECK(sc->nvlink.latency_ns == 500, "%llu", (unsigned long long)sc->nvlink.latency_ns);
    CHECK(sc->nvlink.segment_bytes == 262144, "%u", sc->nvlink.segment_bytes);
    CHECK(sc->pcie.gen == 5 && sc->pcie.lanes == 16, "gen %d lanes %d", sc->pcie.gen, sc->pcie.lanes);
    CHECK(NEAR(sc->pcie.gbps, 32.0 * 16 * 128 / 130), "pcie %.6f", sc->pcie.gbps);
    CHECK(fabs(sc->pcie.gbps - 504.123) < 0.001, "pcie %.6f", sc->pcie.gbps); /* 32 GT/s × 16 × 128/130 */
    CHECK(sc->pcie.latency_ns == 1000, "%llu", (unsigned long long)sc->pcie.latency_ns);
    /* host copies: the measured share of the link, a fixed 4 us, pageable memory at the host's 12 GB/s */
    CHECK(NEAR(sc->pcie.copy_gbps, 0.876 * sc->pcie.gbps), "copy %.6f", sc->pcie.copy_gbps);
    CHECK(sc->pcie.copy_latency_ns == 4000, "%llu", (unsigned long long)sc->pcie.copy_latency_ns);
    CHECK(sc->pcie.pageable_gbps == 96, "pageable %g", sc->pcie.pageable_gbps);
    CHECK(sc->nics.gbps == 400 && sc->nics.rail_aligned, "%g", sc->nics.gbps);
    CHECK(sc->fabric.topology == HS_TOPOLOGY_SINGLE_SWITCH, "%d", sc->fabric.topology);
    CHECK(sc->fabric.leaves == 1 && sc->fabric.spines == 0, "%d %d", sc->fabric.leaves, sc->fabric.spines);
    CHECK(sc->fabric.oversubscription == 1.0, "%g", sc->fabric.oversubscription);
    CHECK(sc->fabric.link_latency_ns == 600, "%llu", (unsigned long long)sc->fabric.link_latency_ns);
    CHECK(sc->fabric.switch_buffer_mib == 32, "%g", sc->fabric.switch_buffer_mib);
    CHECK(sc->fabric.mtu == 4096, "%u", sc->fabric.mtu);
    CHECK(NEAR(sc->fabric.ecn.kmin_kb, 800) && NEAR(sc->fabric.ecn.kmax_kb, 3200), "%g %g", sc->fabric.ecn.kmin_kb,
          sc->fabric.ecn.kmax_kb);
    CHECK(sc->fabric.ecn.pmax == 0.2, "%g", sc->fabric.ecn.pmax);
    CHECK(sc->fabric.pfc && sc->fabric.dcqcn, "pfc/dcqcn");
    CHECK(sc->fabric.rto_ns == 1000000, "rto %llu", (unsigned long long)sc->fabric.rto_ns);
    CHECK(sc->compute.default_kernel_ns == 10000, "%llu", (unsigned long long)sc->compute.default_kernel_ns);
    CHECK(sc->compute.kernel_gap_ns == 1000, "%llu", (unsigned long long)sc->compute.kernel_gap_ns);
    CHECK(sc->run.mode == HS_MODE_EXACT, "mode");
    CHECK(sc->run.host_time == HS_HOST_TIME_REAL, "host_time");
    CHECK(sc->run.host_time_scale == 1.0 && sc->run.host_time_fixed_ns == 0, "host time knobs");
    CHECK(sc->run.seed == 1, "seed");
    CHECK(sc->values.routing == HS_ROUTING_BALANCED, "routing");
}

static int case_defaults(void)
{
    hs_scenario sc;
    hs_scenario_defaults(&sc);
    check_defaults(&sc);
    CHECK(sc.servers.count == 1 && sc.servers.gpus_per_server == 8 && sc.nics.per_server == 8, "servers");
    CHECK(!sc.fabric.present, "fabric present");
    CHECK(sc.path[0] == 0, "path %s", sc.path);

    /* The smallest valid file: everything else is a default; the name is the file's. */
    CHECK(parse("servers: {count: 1, gpus_per_server: 4}\n", &sc) == 0, "minimal");
    check_defaults(&sc);
    CHECK(sc.servers.count == 1 && sc.servers.gpus_per_server == 4, "servers");
    CHECK(sc.nics.per_server == 4, "nics.per_server follows gpus_per_server: %d", sc.nics.per_server);
    CHECK(!sc.fabric.present, "fabric present");
    CHECK(!strcmp(sc.name, "mem"), "name %s", sc.name);
    CHECK(hs_scenario_gpu_count(&sc) == 4, "gpu count");

    /* A fabric section with nothing in it is present, with defaults. */
    CHECK(parse("servers: {count: 3, gpus_per_server: 8}\nfabric:\n", &sc) == 0, "empty fabric");
    CHECK(sc.fabric.present && sc.fabric.topology == HS_TOPOLOGY_SINGLE_SWITCH, "fabric");
    CHECK(hs_scenario_gpu_count(&sc) == 24, "gpu count");

    /* ECN thresholds scale with the NIC rate unless given; given ones stay. */
    CHECK(parse("servers: {count: 2, gpus_per_server: 8}\nnics: {gbps: 200}\nfabric: {topology: leaf_spine, "
                "leaves: 2, spines: 1}\n",
                &sc) == 0,
          "ecn 200");
    CHECK(NEAR(sc.fabric.ecn.kmin_kb, 400) && NEAR(sc.fabric.ecn.kmax_kb, 1600), "%g %g", sc.fabric.ecn.kmin_kb,
          sc.fabric.ecn.kmax_kb);
    CHECK(sc.fabric.topology == HS_TOPOLOGY_LEAF_SPINE && sc.fabric.leaves == 2 && sc.fabric.spines == 1, "topo");
    CHECK(parse("servers: {count: 2, gpus_per_server: 8}\nnics: {gbps: 800}\nfabric:\n  ecn: {kmax_kb: 9000}\n", &sc) ==
              0,
          "ecn 800");
    CHECK(NEAR(sc.fabric.ecn.kmin_kb, 1600) && NEAR(sc.fabric.ecn.kmax_kb, 9000), "%g %g", sc.fabric.ecn.kmin_kb,
          sc.fabric.ecn.kmax_kb);

    /* The retransmission timeout in us, fractions allowed: NCCL's NCCL_IB_TIMEOUT 20 is 4.096 us x 2^20. */
    CHECK(parse("servers: {count: 2, gpus_per_server: 8}\nfabric: {rto_us: 4294967.296}\n", &sc) == 0, "rto");
    CHECK(sc.fabric.rto_ns == 4294967296ull, "rto %llu", (unsigned long long)sc.fabric.rto_ns);
    CHECK(parse("servers: {count: 2, gpus_per_server: 8}\nfabric: {rto_us: 1e9}\n", &sc) == 0, "rto max");
    CHECK(sc.fabric.rto_ns == 1000000000000ull, "rto %llu", (unsigned long long)sc.fabric.rto_ns);

    /* rail_optimized: one leaf per NIC unless given, no spines unless given. */
    CHECK(parse("servers: {count: 4, gpus_per_server: 8}\nnics: {per_server: 4}\nfabric: {topology: rail_optimized}\n",
                &sc) == 0,
          "rail");
    CHECK(sc.fabric.leaves == 4 && sc.fabric.spines == 0, "%d %d", sc.fabric.leaves, sc.fabric.spines);

    /* PCIe rate derived from generation and lanes; given rate wins. */
    CHECK(parse("servers: {count: 1, gpus_per_server: 8}\npcie: {gen: 4, lanes: 8}\n", &sc) == 0, "pcie4");
    CHECK(NEAR(sc.pcie.gbps, 16.0 * 8 * 128 / 130), "%.6f", sc.pcie.gbps);
    CHECK(parse("servers: {count: 1, gpus_per_server: 8}\npcie: {gen: 6, lanes: 16}\n", &sc) == 0, "pcie6");
    CHECK(NEAR(sc.pcie.gbps, 64.0 * 16 * 128 / 130), "%.6f", sc.pcie.gbps);
    CHECK(parse("servers: {count: 1, gpus_per_server: 8}\npcie: {gen: 3, lanes: 16, gbps: 100.5, latency_ns: 0}\n",
                &sc) == 0,
          "pcie given");
    CHECK(sc.pcie.gbps == 100.5 && sc.pcie.latency_ns == 0, "%g", sc.pcie.gbps);
    CHECK(NEAR(sc.pcie.copy_gbps, 0.876 * 100.5), "copies follow the link given: %g", sc.pcie.copy_gbps);
    CHECK(parse("servers: {count: 1, gpus_per_server: 8}\n"
                "pcie: {copy_gbps: 400, copy_latency_ns: 2500, pageable_gbps: 200}\n",
                &sc) == 0,
          "copy keys");
    CHECK(sc.pcie.copy_gbps == 400 && sc.pcie.copy_latency_ns == 2500 && sc.pcie.pageable_gbps == 200,
          "copy %g latency %llu pageable %g", sc.pcie.copy_gbps, (unsigned long long)sc.pcie.copy_latency_ns,
          sc.pcie.pageable_gbps);

    /* Presets, overrides, unknown models, numbers written as decimals. */
    CHECK(parse("servers: {count: 1, gpus_per_server: 8}\ngpu: {model: h100, memory_gib: 94}\n", &sc) == 0, "h100");
    CHECK(!strcmp(sc.gpu.model, "NVIDIA H100 80GB HBM3") && sc.gpu.memory_bytes == 94ull << 30 &&
              sc.gpu.hbm_gbps == 3350 && sc.gpu.bf16_tflops == 989,
          "h100 %s", sc.gpu.model);
    /* A preset by the full name it reports (what `hysim validate` prints and the GPU says), any case. */
    CHECK(parse("servers: {count: 1, gpus_per_server: 8}\ngpu: {model: H100}\n", &sc) == 0, "h100 key");
    hs_scenario by_key = sc;
    CHECK(parse("servers: {count: 1, gpus_per_server: 8}\ngpu: {model: \"NVIDIA H200\"}\n", &sc) == 0, "full name");
    check_h200(&sc);
    CHECK(parse("servers: {count: 1, gpus_per_server: 8}\ngpu: {model: nvidia h100 80gb HBM3}\n", &sc) == 0,
          "full name, other case");
    CHECK(!strcmp(sc.gpu.model, "NVIDIA H100 80GB HBM3") && !memcmp(&sc.gpu, &by_key.gpu, sizeof sc.gpu),
          "full name %s", sc.gpu.model);
    CHECK(parse("servers: {count: 1, gpus_per_server: 8}\ngpu: {model: NVIDIA H200 NVL, memory_gib: 141, "
                "bf16_tflops: 835}\n",
                &sc) == 0,
          "a longer name is no preset");
    CHECK(!strcmp(sc.gpu.model, "NVIDIA H200 NVL") && sc.gpu.bf16_tflops == 835, "%s", sc.gpu.model);

    /* The upper bounds themselves are allowed. */
    CHECK(parse("servers: {count: 1, gpus_per_server: 8}\nnvlink: {gbps_per_gpu: 1e6}\n"
                "gpu: {bf16_tflops: 1000000, hbm_gbps: 1e6}\n",
                &sc) == 0,
          "largest rates");
    CHECK(sc.nvlink.gbps_per_gpu == 1e6 && sc.gpu.bf16_tflops == 1e6 && sc.gpu.hbm_gbps == 1e6, "largest rates");

    CHECK(parse("servers: {count: 1, gpus_per_server: 8}\n"
                "gpu: {model: B200, memory_gib: 180, bf16_tflops: 2250, compute_capability: \"10.0\", sm_count: 148}\n",
                &sc) == 0,
          "b200");
    CHECK(!strcmp(sc.gpu.model, "B200") && sc.gpu.memory_bytes == 180ull << 30 && sc.gpu.bf16_tflops == 2250 &&
              sc.gpu.cc_major == 10 && sc.gpu.cc_minor == 0 && sc.gpu.sm_count == 148,
          "b200 %s", sc.gpu.model);
    CHECK(parse("servers: {count: 1.0, gpus_per_server: 8e0}\ngpu: {memory_gib: 0.5, compute_capability: 8.6}\n"
                "nvlink: {segment_kib: 0.5, latency_ns: 0}\ncompute: {default_kernel_us: 2.5, kernel_gap_us: 0.75}\n",
                &sc) == 0,
          "decimals");
    CHECK(sc.servers.count == 1 && sc.servers.gpus_per_server == 8, "decimal ints");
    CHECK(sc.gpu.memory_bytes == 512ull << 20 && sc.gpu.cc_major == 8 && sc.gpu.cc_minor == 6, "gpu decimals");
    CHECK(sc.nvlink.segment_bytes == 512 && sc.nvlink.latency_ns == 0, "%u", sc.nvlink.segment_bytes);
    CHECK(sc.compute.default_kernel_ns == 2500, "%llu", (unsigned long long)sc.compute.default_kernel_ns);
    CHECK(sc.compute.kernel_gap_ns == 750, "%llu", (unsigned long long)sc.compute.kernel_gap_ns);

    /* run: modes, every host_time form, 64-bit seeds. */
    CHECK(parse("servers: {count: 1, gpus_per_server: 8}\nrun: {mode: optimistic, host_time: \"fixed:250\", "
                "seed: 18446744073709551615}\n",
                &sc) == 0,
          "fixed");
    CHECK(sc.run.mode == HS_MODE_OPTIMISTIC && sc.run.host_time == HS_HOST_TIME_FIXED &&
              sc.run.host_time_fixed_ns == 250 && sc.run.seed == UINT64_MAX,
          "fixed");
    CHECK(parse("servers: {count: 1, gpus_per_server: 8}\nrun: {host_time: scaled:0.5}\n", &sc) == 0, "scaled");
    CHECK(sc.run.host_time == HS_HOST_TIME_SCALED && sc.run.host_time_scale == 0.5, "scaled");
    CHECK(parse("servers: {count: 1, gpus_per_server: 8}\nrun: {host_time: zero}\n", &sc) == 0, "zero");
    CHECK(sc.run.host_time == HS_HOST_TIME_ZERO, "zero");

    /* Every fabric key given. */
    CHECK(parse("name: all fabric keys\n"
                "servers: {count: 16, gpus_per_server: 8}\n"
                "nics: {per_server: 8, gbps: 400, rail_aligned: false}\n"
                "fabric:\n"
                "  topology: fat_tree\n  leaves: 32\n  spines: 16\n  oversubscription: 2\n"
                "  link_latency_ns: 1000\n  switch_buffer_mib: 64.5\n  mtu: 9000\n"
                "  ecn: {kmin_kb: 100, kmax_kb: 400, pmax: 1}\n  pfc: false\n  dcqcn: False\n",
                &sc) == 0,
          "fabric keys");
    CHECK(!strcmp(sc.name, "all fabric keys"), "%s", sc.name);
    CHECK(sc.fabric.topology == HS_TOPOLOGY_FAT_TREE && sc.fabric.leaves == 32 && sc.fabric.spines == 16 &&
              sc.fabric.oversubscription == 2 && sc.fabric.link_latency_ns == 1000 &&
              sc.fabric.switch_buffer_mib == 64.5 && sc.fabric.mtu == 9000 && sc.fabric.ecn.kmin_kb == 100 &&
              sc.fabric.ecn.kmax_kb == 400 && sc.fabric.ecn.pmax == 1 && !sc.fabric.pfc && !sc.fabric.dcqcn &&
              !sc.nics.rail_aligned,
          "fabric keys");
    return failures != 0;
}

/* ----------------------------------------------------------------- shipped */

static int case_shipped(void)
{
    DIR *d = opendir(HS_SHIPPED_DIR);
    CHECK(d != NULL, "cannot open %s", HS_SHIPPED_DIR);
    if (!d)
        return 1;
    int loaded = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".yaml"))
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", HS_SHIPPED_DIR, e->d_name);
        hs_scenario sc;
        int n = hs_scenario_load(path, &sc, errbuf, sizeof errbuf);
        CHECK(n == 0, "%s: %d problem(s):\n%s", e->d_name, n, errbuf);
        char desc[256];
        hs_scenario_describe(&sc, desc, sizeof desc);
        fprintf(stderr, "%s: %s: %s\n", e->d_name, sc.name, desc);
        loaded++;
    }
    closedir(d);
    CHECK(loaded >= 3, "only %d scenarios in %s", loaded, HS_SHIPPED_DIR);

    hs_scenario a, b, c;
    CHECK(hs_scenario_load(HS_SHIPPED_DIR "/h200x8.yaml", &a, errbuf, sizeof errbuf) == 0, "%s", errbuf);
    CHECK(hs_scenario_load(HS_SHIPPED_DIR "/h200x8-deterministic.yaml", &b, errbuf, sizeof errbuf) == 0, "%s", errbuf);
    CHECK(hs_scenario_load(HS_SHIPPED_DIR "/h200x16-2srv.yaml", &c, errbuf, sizeof errbuf) == 0, "%s", errbuf);
    CHECK(!strcmp(a.path, HS_SHIPPED_DIR "/h200x8.yaml"), "path %s", a.path);

    check_defaults(&a);
    CHECK(a.servers.count == 1 && a.servers.gpus_per_server == 8 && !a.fabric.present, "h200x8 shape");
    CHECK(hs_scenario_gpu_count(&a) == 8, "h200x8 gpus");

    /* The deterministic one differs from the default only in host_time (and its name). */
    CHECK(a.run.host_time == HS_HOST_TIME_REAL && b.run.host_time == HS_HOST_TIME_ZERO, "host_time %s / %s",
          hs_host_time_name(a.run.host_time), hs_host_time_name(b.run.host_time));
    b.run.host_time = a.run.host_time;
    CHECK(!memcmp(&a.gpu, &b.gpu, sizeof a.gpu) && !memcmp(&a.servers, &b.servers, sizeof a.servers) &&
              !memcmp(&a.nvlink, &b.nvlink, sizeof a.nvlink) && !memcmp(&a.pcie, &b.pcie, sizeof a.pcie) &&
              !memcmp(&a.nics, &b.nics, sizeof a.nics) && !memcmp(&a.fabric, &b.fabric, sizeof a.fabric) &&
              !memcmp(&a.compute, &b.compute, sizeof a.compute) && !memcmp(&a.run, &b.run, sizeof a.run),
          "h200x8-deterministic differs from h200x8 in more than host_time");

    check_h200(&c);
    CHECK(c.servers.count == 2 && c.servers.gpus_per_server == 8 && hs_scenario_gpu_count(&c) == 16, "2srv shape");
    CHECK(c.fabric.present && c.fabric.topology == HS_TOPOLOGY_RAIL_OPTIMIZED, "2srv fabric");
    CHECK(c.nics.per_server == 8 && c.nics.gbps == 400 && c.nics.rail_aligned, "2srv nics");
    CHECK(c.fabric.leaves == 8 && c.fabric.spines == 0 && c.fabric.mtu == 4096 && c.fabric.pfc && c.fabric.dcqcn,
          "2srv fabric keys");
    return failures != 0;
}

/* --------------------------------------------------------------------- api */

static int count_bad_files(void)
{
    DIR *d = opendir(HS_TEST_DATA_DIR "/bad");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strlen(e->d_name) > 5 && !strcmp(e->d_name + strlen(e->d_name) - 5, ".yaml");
    if (d)
        closedir(d);
    return n;
}

static int case_api(void)
{
    hs_scenario sc;
    int n;

    CHECK(count_bad_files() >= 14, "only %d files in bad/", count_bad_files());

    /* values.routing: zipf:S */
    const char *zipf = "servers: {count: 1, gpus_per_server: 2}\nvalues: {routing: \"zipf:1.5\"}\n";
    n = hs_scenario_parse(zipf, strlen(zipf), "z.yaml", &sc, errbuf, sizeof errbuf);
    CHECK(n == 0 && sc.values.routing == HS_ROUTING_ZIPF && sc.values.routing_zipf_s == 1.5, "%d %s", n, errbuf);

    /* A file that cannot be opened, and a directory. */
    n = hs_scenario_load(HS_TEST_DATA_DIR "/no-such-file.yaml", &sc, errbuf, sizeof errbuf);
    CHECK(n == 1 && strstr(errbuf, "no-such-file.yaml: cannot open: No such file or directory\n"), "%d %s", n, errbuf);
    check_defaults(&sc);
    n = hs_scenario_load(HS_TEST_DATA_DIR "/bad", &sc, errbuf, sizeof errbuf);
    CHECK(n == 1 && strstr(errbuf, "/bad: cannot open: Is a directory\n"), "%d %s", n, errbuf);

    /* An empty text, text with no NUL after it, NULL and tiny error buffers. */
    n = hs_scenario_parse("", 0, "empty.yaml", &sc, errbuf, sizeof errbuf);
    CHECK(n == 1 && strstr(errbuf, "empty.yaml:1:1: empty file"), "%d %s", n, errbuf);
    static const char unterminated[] = {'s', 'e', 'r', 'v', 'e', 'r', 's', ':', ' ', '{', 'c', 'o', 'u',
                                        'n', 't', ':', ' ', '1', ',', ' ', 'g', 'p', 'u', 's', '_', 'p',
                                        'e', 'r', '_', 's', 'e', 'r', 'v', 'e', 'r', ':', ' ', '2', '}'};
    CHECK(hs_scenario_parse(unterminated, sizeof unterminated, "x.yaml", &sc, errbuf, sizeof errbuf) == 0, "%s",
          errbuf);
    CHECK(sc.servers.gpus_per_server == 2, "%d", sc.servers.gpus_per_server);
    const char *three = "servers: {count: 0, gpus_per_server: 0}\nnvlink: {latency_ns: -1}\n";
    CHECK(hs_scenario_parse(three, strlen(three), "t.yaml", &sc, NULL, 0) == 3, "NULL errbuf");
    char tiny[24];
    memset(tiny, 'x', sizeof tiny);
    CHECK(hs_scenario_parse(three, strlen(three), "t.yaml", &sc, tiny, sizeof tiny) == 3, "tiny errbuf");
    CHECK(memchr(tiny, 0, sizeof tiny) != NULL && !strncmp(tiny, "t.yaml:1:", 9), "tiny: %.24s", tiny);
    CHECK(hs_scenario_parse(three, strlen(three), NULL, &sc, errbuf, sizeof errbuf) == 3 &&
              !strncmp(errbuf, "<memory>:1:", 11),
          "%s", errbuf);
    /* On failure the valid parts are kept. */
    const char *partly = "servers: {count: 2, gpus_per_server: 4}\nfabric: {mtu: 1}\nnics: {gbps: 100}\n";
    CHECK(hs_scenario_parse(partly, strlen(partly), "p.yaml", &sc, errbuf, sizeof errbuf) == 1, "%s", errbuf);
    CHECK(sc.servers.count == 2 && sc.servers.gpus_per_server == 4 && sc.nics.gbps == 100 && sc.fabric.present &&
              sc.fabric.mtu == 4096,
          "partly");

    /* Names and the description. */
    CHECK(!strcmp(hs_topology_name(HS_TOPOLOGY_RAIL_OPTIMIZED), "rail_optimized"), "topology name");
    CHECK(!strcmp(hs_topology_name(HS_TOPOLOGY_SINGLE_SWITCH), "single_switch"), "topology name");
    CHECK(!strcmp(hs_topology_name(HS_TOPOLOGY_LEAF_SPINE), "leaf_spine"), "topology name");
    CHECK(!strcmp(hs_topology_name(HS_TOPOLOGY_FAT_TREE), "fat_tree"), "topology name");
    CHECK(!strcmp(hs_host_time_name(HS_HOST_TIME_REAL), "real") &&
              !strcmp(hs_host_time_name(HS_HOST_TIME_ZERO), "zero") &&
              !strcmp(hs_host_time_name(HS_HOST_TIME_FIXED), "fixed") &&
              !strcmp(hs_host_time_name(HS_HOST_TIME_SCALED), "scaled"),
          "host time names");
    char desc[128];
    hs_scenario_defaults(&sc);
    hs_scenario_describe(&sc, desc, sizeof desc);
    CHECK(!strcmp(desc, "1 server \u00d7 8 NVIDIA H200, NVLink 3600 Gb/s"), "%s", desc);
    hs_scenario_describe(&sc, desc, 5);
    CHECK(!strcmp(desc, "1 se"), "%s", desc);
    hs_scenario_describe(&sc, NULL, 0);
    return failures != 0;
}

/* ------------------------------------------------------ background, stats */

static int case_background(void)
{
    static const char text[] = "servers: {count: 2, gpus_per_server: 8}\n"
                               "nics: {gbps: 200}\n"
                               "fabric: {topology: single_switch}\n"
                               "background:\n"
                               "  flows:\n"
                               "    - {src: 1, dst: 9, bytes: 65536, start_us: 2.5, repeat_us: 40}\n"
                               "    - {src: 15, dst: 0, bytes: 1}\n"
                               "  pattern: incast\n"
                               "  target: 12\n"
                               "  load: 0.25\n"
                               "  message_kib: 64\n"
                               "  start_us: 10\n"
                               "  duration_us: 500\n"
                               "stats: {interval_us: 7.5}\n";
    hs_scenario sc;
    int n = hs_scenario_parse(text, sizeof text - 1, "bg.yaml", &sc, errbuf, sizeof errbuf);
    CHECK(n == 0, "%s", errbuf);
    CHECK(sc.background.nflows == 2, "%d flows", sc.background.nflows);
    CHECK(sc.background.flows[0].src_gpu == 1 && sc.background.flows[0].dst_gpu == 9, "flow 0 endpoints");
    CHECK(sc.background.flows[0].bytes == 65536 && sc.background.flows[0].start_ns == 2500 &&
              sc.background.flows[0].repeat_ns == 40000,
          "flow 0 size and times");
    CHECK(sc.background.flows[1].repeat_ns == 0 && sc.background.flows[1].start_ns == 0, "flow 1 defaults");
    CHECK(sc.background.pattern == HS_BG_INCAST && sc.background.target_gpu == 12, "pattern");
    CHECK(NEAR(sc.background.load, 0.25) && sc.background.message_bytes == 65536, "load, message");
    CHECK(sc.background.start_ns == 10000 && sc.background.duration_ns == 500000, "start, duration");
    CHECK(sc.stats.interval_ns == 7500, "interval %llu ns", (unsigned long long)sc.stats.interval_ns);
    hs_scenario_defaults(&sc);
    CHECK(sc.background.nflows == 0 && sc.background.pattern == HS_BG_NONE && sc.stats.interval_ns == 0,
          "background and stats are off by default");
    CHECK(sc.background.message_bytes == 256 * 1024, "default message %llu",
          (unsigned long long)sc.background.message_bytes);
    return failures != 0;
}

/* Text nested `levels` deep: "[[[...]]]" (flow), or "a:\n a:\n  a:..." (block, one more space per level). */
static char *nested(int levels, int block, size_t *len)
{
    size_t cap = block ? (size_t)levels * ((size_t)levels + 5) / 2 + 1 : 2 * (size_t)levels + 1; /* i spaces + "a:\n" */
    char *t = malloc(cap), *p = t;
    if (!t)
        return NULL;
    for (int i = 0; i < levels; i++) {
        if (block) {
            memset(p, ' ', (size_t)i);
            p += i;
            memcpy(p, "a:\n", 3);
            p += 3;
        } else {
            *p++ = '[';
        }
    }
    for (int i = 0; !block && i < levels; i++)
        *p++ = ']';
    *p = '\0';
    *len = (size_t)(p - t);
    return t;
}

static int case_hostile(void)
{
    /* 200,000 levels took the YAML loader forever; block style at 3,000 levels is a 4.5 MB file */
    const int levels[2] = {200000, 3000};
    for (int block = 0; block < 2; block++) {
        size_t len;
        char *text = nested(levels[block], block, &len);
        CHECK(text != NULL, "out of memory");
        if (!text)
            return 1;
        hs_scenario sc;
        int n = hs_scenario_parse(text, len, "deep.yaml", &sc, errbuf, sizeof errbuf);
        CHECK(n == 1 && strstr(errbuf, "deep.yaml:") && strstr(errbuf, "nested deeper than 32 levels"),
              "%s nesting: %d problems: %s", block ? "block" : "flow", n, errbuf);
        free(text);
    }
    char dir[] = "/tmp/hysim-scenario-test-XXXXXX", fifo[64];
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(fifo, sizeof fifo, "%s/fifo.yaml", dir);
    CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
    hs_scenario sc;
    int n = hs_scenario_load(fifo, &sc, errbuf, sizeof errbuf); /* blocked in open() before */
    CHECK(n == 1 && strstr(errbuf, "fifo.yaml: not a regular file (a FIFO or pipe)"), "FIFO: %d problems: %s", n,
          errbuf);
    n = hs_scenario_load("/dev/null", &sc, errbuf, sizeof errbuf);
    CHECK(n == 1 && strstr(errbuf, "/dev/null: not a regular file (a character device)"), "/dev/null: %s", errbuf);
    unlink(fifo);
    rmdir(dir);
    return failures != 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "hostile"))
        return case_hostile();
    if (argc == 2 && !strcmp(argv[1], "background"))
        return case_background();
    if (argc == 3 && !strcmp(argv[1], "expect"))
        return case_expect(argv[2]);
    if (argc == 2 && !strcmp(argv[1], "defaults"))
        return case_defaults();
    if (argc == 2 && !strcmp(argv[1], "shipped"))
        return case_shipped();
    if (argc == 2 && !strcmp(argv[1], "api"))
        return case_api();
    fprintf(stderr, "usage: %s expect FILE | defaults | shipped | api | background | hostile\n", argv[0]);
    return 2;
}
