/*
 * Link sampling (hs_fabric_sample_links): samples fall on every multiple of
 * the interval with no gap (idle stretches included), their byte counts add
 * up to the link's counter and give the utilisation arithmetic says, queue
 * samples stay within the deepest queue, and sampling changes no flow's
 * timing (the same RoCE incast with and without it finishes bit-identically).
 */
#include "fabric_test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#define MIB         (1024ull * 1024ull)
#define MAX_SAMPLES 100000

struct rec {
    size_t link; /* the link watched */
    size_t n;
    uint64_t t[MAX_SAMPLES], bytes[MAX_SAMPLES], queue[MAX_SAMPLES];
};

static struct rec g_rec;

static void on_sample(void *ctx, uint64_t t_ps, const hs_fabric_link_sample *links, size_t n)
{
    struct rec *r = ctx;
    if (r->n >= MAX_SAMPLES || r->link >= n)
        return;
    r->t[r->n] = t_ps;
    r->bytes[r->n] = links[r->link].bytes;
    r->queue[r->n] = links[r->link].queue_bytes;
    r->n++;
}

static size_t link_index(const hs_fabric *f, const char *name)
{
    hs_fabric_link_stats st;
    for (size_t i = 0; i < hs_fabric_link_count(f); i++)
        if (hs_fabric_get_link_stats(f, i, &st) == 0 && strcmp(st.name, name) == 0)
            return i;
    fprintf(stderr, "no link named %s\n", name);
    exit(1);
}

/* One 64 MiB NVLink flow, an idle stretch, then a second flow elsewhere. */
static int case_single_flow(void)
{
    hs_scenario sc;
    fab_test_scenario(&sc, 256 * 1024);
    hs_fabric *f = fab_test_create(&sc);
    const uint64_t interval = 10 * 1000 * 1000; /* 10 us */
    char err[256] = "";
    g_rec.link = link_index(f, "gpu0>nvs0");
    FAB_CHECK(hs_fabric_sample_links(f, 0, on_sample, &g_rec, err, sizeof err) == -1, "interval 0 accepted");
    FAB_CHECK(hs_fabric_sample_links(f, interval, on_sample, &g_rec, err, sizeof err) == 0, "%s", err);
    const uint64_t bytes = 64 * MIB;
    fab_test_add(f, 1, 0, 1, bytes, 0);
    hs_flow_done d;
    FAB_CHECK(hs_fabric_next_completion(f, UINT64_MAX, &d) == 1, "no completion");
    /* idle until 5 intervals after the finish, then a flow between GPUs 2 and 3 */
    const uint64_t idle_to = (d.finish_ps / interval + 5) * interval + interval / 2;
    FAB_CHECK(hs_fabric_next_completion(f, idle_to, &d) == 0, "a completion while idle");
    fab_test_add(f, 2, 2, 3, 8 * MIB, idle_to + 3 * interval);
    FAB_CHECK(hs_fabric_next_completion(f, UINT64_MAX, &d) == 1, "no second completion");
    const uint64_t end = d.finish_ps;

    FAB_CHECK(g_rec.n >= end / interval, "%zu samples up to %" PRIu64 " ps", g_rec.n, end);
    for (size_t i = 0; i < g_rec.n; i++)
        FAB_CHECK(g_rec.t[i] == (i + 1) * interval, "sample %zu at %" PRIu64 " ps", i, g_rec.t[i]);
    hs_fabric_link_stats st;
    hs_fabric_get_link_stats(f, g_rec.link, &st);
    FAB_CHECK(st.bytes == bytes, "link bytes %" PRIu64, st.bytes);
    FAB_CHECK(g_rec.bytes[g_rec.n - 1] == bytes, "last sample %" PRIu64 " bytes", g_rec.bytes[g_rec.n - 1]);
    /* 64 MiB at 3600 Gb/s takes ~149 us: intervals 2..13 are full, at line rate. A
     * segment counts when its transmission starts: one interval may hold one more or less. */
    int full = 0;
    const double line = 3600e9 / 8.0 * interval * 1e-12, seg = 256 * 1024;
    double sum = 0;
    for (size_t i = 1; i + 1 < g_rec.n && g_rec.t[i] < 140 * 1000000ull; i++) {
        double got = (double)(g_rec.bytes[i] - g_rec.bytes[i - 1]);
        FAB_CHECK(fabs(got - line) <= seg, "%.0f bytes in the interval ending at %" PRIu64 " (line rate: %.0f)", got,
                  g_rec.t[i], line);
        sum += got / line;
        full++;
    }
    FAB_CHECK(full >= 12, "only %d full intervals", full);
    FAB_CHECK(fab_rel(sum / full, 1.0) < 0.01, "mean utilisation %.4f", sum / full);
    size_t idle = 0;
    for (size_t i = 1; i < g_rec.n; i++)
        idle += g_rec.t[i] > 160 * 1000000ull && g_rec.bytes[i] == g_rec.bytes[i - 1];
    FAB_CHECK(idle >= 5, "%zu idle samples of gpu0>nvs0 after its flow", idle);
    printf("%zu samples, %d full intervals at line rate, %zu idle\n", g_rec.n, full, idle);
    hs_fabric_destroy(f);
    FAB_TEST_END();
}

/* 4 -> 1 RoCE incast with PFC; finish times written to fd. */
static void incast(int sample, int fd)
{
    hs_scenario sc;
    fab_test_roce_switch(&sc, 5, 1, 2);
    sc.fabric.ecn.kmin_kb = 100;
    sc.fabric.ecn.kmax_kb = 400;
    sc.fabric.ecn.pmax = 0.2;
    hs_fabric *f = fab_test_create(&sc);
    char err[256] = "";
    g_rec.link = link_index(f, "sw0>nic4");
    if (sample && hs_fabric_sample_links(f, 1000 * 1000, on_sample, &g_rec, err, sizeof err) != 0)
        _exit(2);
    for (uint32_t i = 0; i < 4; i++)
        fab_test_add(f, i, i, 4, 4 * MIB + i * 1000, i * 100000);
    uint64_t out[4 + 3];
    hs_flow_done d;
    for (int i = 0; i < 4; i++)
        out[i] = hs_fabric_next_completion(f, UINT64_MAX, &d) == 1 ? d.finish_ps ^ (d.flow_id << 56) : 0;
    hs_fabric_link_stats st;
    hs_fabric_get_link_stats(f, g_rec.link, &st);
    out[4] = st.pfc_pauses + st.ecn_marks;
    out[5] = st.max_queue_bytes;
    uint64_t qmax = 0;
    for (size_t i = 0; i < g_rec.n; i++)
        qmax = g_rec.queue[i] > qmax ? g_rec.queue[i] : qmax;
    out[6] = sample ? qmax : 0;
    if (write(fd, out, sizeof out) != (ssize_t)sizeof out)
        _exit(3);
    hs_fabric_destroy(f);
    _exit(0);
}

static void run_incast(int sample, uint64_t out[7])
{
    int p[2];
    if (pipe(p) != 0)
        exit(1);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        incast(sample, p[1]);
    }
    close(p[1]);
    FAB_CHECK(read(p[0], out, 7 * sizeof *out) == (ssize_t)(7 * sizeof *out), "no result from the child");
    close(p[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    FAB_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed");
}

static int case_no_timing_change(void)
{
    uint64_t plain[7] = {0}, sampled[7] = {0};
    run_incast(0, plain);
    run_incast(1, sampled);
    for (int i = 0; i < 6; i++)
        FAB_CHECK(plain[i] == sampled[i], "result %d: %" PRIu64 " without sampling, %" PRIu64 " with", i, plain[i],
                  sampled[i]);
    FAB_CHECK(plain[0] != 0 && plain[3] != 0, "flows did not complete");
    FAB_CHECK(sampled[6] > 0 && sampled[6] <= sampled[5], "sampled queue peak %" PRIu64 " vs deepest queue %" PRIu64,
              sampled[6], sampled[5]);
    printf("identical finish times with and without sampling; queue peak sampled %" PRIu64 " of %" PRIu64 " B\n",
           sampled[6], sampled[5]);
    FAB_TEST_END();
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "single_flow"))
        return case_single_flow();
    if (argc == 2 && !strcmp(argv[1], "no_timing_change"))
        return case_no_timing_change();
    fprintf(stderr, "usage: test_sampling single_flow|no_timing_change\n");
    return 2;
}
