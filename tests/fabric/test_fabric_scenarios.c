/*
 * The fabric builds every scenario we ship that it supports: loads each YAML
 * given on the command line with the scenario loader, builds the fabric in a
 * child process (one ns-3 per process) and sends one 64 MiB flow from GPU 0 to
 * the last GPU (across servers where there are several).
 */
#include "fabric_test_util.h"

#include <sys/wait.h>
#include <unistd.h>

static int one(const char *path)
{
    static hs_scenario sc;
    char err[4096] = "";
    if (hs_scenario_load(path, &sc, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", path, err);
        return 1;
    }
    hs_fabric *f = hs_fabric_create(&sc, err, sizeof err);
    if (!f) {
        fprintf(stderr, "%s: hs_fabric_create: %s\n", path, err);
        return 1;
    }
    uint32_t last = (uint32_t)hs_scenario_gpu_count(&sc) - 1;
    const uint64_t bytes = 64ull << 20;
    if (hs_fabric_add_flow(f, 1, 0, last, bytes, 0, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", path, err);
        return 1;
    }
    hs_flow_done d;
    if (hs_fabric_next_completion(f, UINT64_MAX, &d) != 1 || d.flow_id != 1) {
        fprintf(stderr, "%s: no completion\n", path);
        return 1;
    }
    double bottleneck = sc.servers.count > 1 ? sc.nics.gbps : sc.nvlink.gbps_per_gpu;
    double at_rate = bytes * 8.0 / (bottleneck * 1e9) * 1e12;
    hs_fabric_stats st;
    hs_fabric_get_stats(f, &st);
    printf("%s: %d x %d GPUs, 64 MiB GPU0 -> GPU%u: %.3f us (%.3f us at %.0f Gb/s), %" PRIu64 " packet-hops\n", path,
           sc.servers.count, sc.servers.gpus_per_server, last, d.finish_ps / 1e6, at_rate / 1e6, bottleneck,
           st.packet_hops);
    int bad = d.finish_ps < at_rate || d.finish_ps > at_rate * 1.05;
    if (bad)
        fprintf(stderr, "%s: finish time out of range\n", path);
    hs_fabric_destroy(f);
    return bad;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int failed = 0;
    for (int i = 1; i < argc; i++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0)
            _exit(one(argv[i]));
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            failed++;
    }
    if (failed) {
        fprintf(stderr, "%d scenario(s) failed\n", failed);
        return 1;
    }
    printf("ok\n");
    return 0;
}
