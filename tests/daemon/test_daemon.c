/*
 * hysimd protocol tests: the daemon runs in a runner process, forked children
 * act as the application and check the daemon's answers by arithmetic.
 *
 * The scenario (dt_scenario): default kernel 10 µs; PCIe 500 Gb/s + 1 µs
 * (1 MB = 16 µs + 1 µs); HBM 4800 GB/s (4.8 MB memset = 1 µs); NVLink
 * 800 Gb/s + 500 ns (1 MB = 10 µs + 0.5 µs, with the analytic test fabric).
 *
 * usage: test_daemon CASE
 */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collective_tuner.h"
#include "daemon_test.h"
#include "test_scenario.h"
#include "transport.h"

#define KERNEL_NS 10000ull
#define COMM      0xC0FFEEull

void dt_scenario(hs_scenario *sc)
{
    hs_test_scenario_fill(sc, &(hs_test_scenario){
                                  .name = "hysimd tests",
                                  .defaults = true, /* what a real fabric needs besides the figures below */
                                  .gpu_model = "NVIDIA H200",
                                  .h200 = true,
                                  .hbm_gbps = 4800,
                                  .servers = 1,
                                  .gpus_per_server = 4,
                                  .nvlink_gbps = 800,
                                  .nvlink_latency_ns = 500,
                                  .segment_bytes = 16 << 10, /* store-and-forward adds one segment: 164 ns */
                                  .pcie_gen = 5,
                                  .pcie_lanes = 16,
                                  .pcie_gbps = 500,
                                  .pcie_latency_ns = 1000,
                                  .pcie_copy_gbps = 500,
                                  .pcie_copy_latency_ns = 1000,
                                  .pcie_pageable_gbps = 100,
                                  .nics_per_server = 4,
                                  .nic_gbps = 400,
                                  .default_kernel_ns = KERNEL_NS,
                                  .host_time_zero = true,
                                  .seed = 1,
                                  /* the bare link model the arithmetic below asserts: one ring, Simple,
                                   * no NCCL latencies */
                                  .nccl_algo = HS_NCCL_ALGO_RING,
                                  .nccl_proto = HS_NCCL_PROTO_SIMPLE,
                                  .nccl_channels = 1,
                              });
    sc->compute.kernel_gap_ns = 0; /* the stream arithmetic below has no launch gap; kernel_gap checks it */
}

bool dt_fake_fabric(void)
{
#ifdef HS_FAKE_FABRIC
    return true;
#else
    return false;
#endif
}

/* A time that went through the fabric: exact with the analytic fabric; with
 * the packet model no less than the analytic figure and within 3 % of it
 * (store-and-forward of one 16 KiB segment per hop adds 164 ns a flow). */
static void check_fabric_ns(uint64_t got, uint64_t analytic, const char *what)
{
    if (dt_fake_fabric())
        CHECK(got == analytic, "%s: %llu ns, expected %llu ns", what, (unsigned long long)got,
              (unsigned long long)analytic);
    else
        CHECK(got >= analytic && got <= analytic + analytic * 3 / 100, "%s: %llu ns, analytic %llu ns", what,
              (unsigned long long)got, (unsigned long long)analytic);
    printf("%s: %llu ns (analytic %llu ns)\n", what, (unsigned long long)got, (unsigned long long)analytic);
}

/* As check_fabric_ns, with the packet model's allowance in percent. */
static void check_fabric_ns_within(uint64_t got, uint64_t analytic, unsigned pct, const char *what)
{
    if (dt_fake_fabric())
        CHECK(got == analytic, "%s: %llu ns, expected %llu ns", what, (unsigned long long)got,
              (unsigned long long)analytic);
    else
        CHECK(got >= analytic && got <= analytic + analytic * pct / 100, "%s: %llu ns, analytic %llu ns (+%u %%)", what,
              (unsigned long long)got, (unsigned long long)analytic, pct);
    printf("%s: %llu ns (analytic %llu ns)\n", what, (unsigned long long)got, (unsigned long long)analytic);
}

static void expect_ok(const dt_result *r)
{
    CHECK(r->rc == 0, "run failed: %s", r->sum.error);
    CHECK(r->sum.error[0] == 0, "error set: %s", r->sum.error);
    for (int i = 0; i < r->nchildren; i++)
        CHECK(WIFEXITED(r->status[i]) && WEXITSTATUS(r->status[i]) == 0, "child %d: status 0x%x", i, r->status[i]);
}

static void expect_error(const dt_result *r, const char *needle)
{
    CHECK(r->rc == -1, "run did not fail (rc %d), expected \"%s\"", r->rc, needle);
    CHECK(strstr(r->sum.error, needle), "error \"%s\" lacks \"%s\"", r->sum.error, needle);
}

static uint64_t wait_now(dt_client *c, uint64_t host, Hysim__Wait__Cond cond, uint32_t gpu, uint64_t stream)
{
    Hysim__Reply *r = dt_wait(c, host, cond, gpu, stream, 0, false, NULL, 0);
    CHECK(!r->error[0] && r->done, "wait: error \"%s\" done %d", r->error, r->done);
    uint64_t now = r->now_ns;
    hysim__reply__free_unpacked(r, NULL);
    return now;
}

/* ------------------------------------------------------------- kernels and streams */

static void child_kernel_sync(const char *ep, int idx, void *arg)
{
    (void)arg;
    dt_client c;
    dt_connect(&c, ep, 0, 0, 1, 0);
    CHECK_EQ(c.setup.gpu_memory_bytes, 141ull << 30);
    CHECK_EQ(c.setup.sm_count, 132);
    CHECK_EQ(c.setup.cc_major, 9);
    CHECK_EQ(c.setup.cc_minor, 0);
    CHECK_EQ(c.setup.gpus_per_server, 4);
    CHECK_EQ(c.setup.total_gpus, 4);
    CHECK_EQ(c.setup.host_time, HS_HOST_TIME_ZERO);
    CHECK_EQ(c.setup.epoch_ns, 0);
    dt_kernel(&c, 1000, 0, 0);
    uint64_t now = dt_sync_stream(&c, 1000, 0, 0);
    CHECK_EQ(now, 1000 + KERNEL_NS);
    dt_record(idx, now);
    dt_bye(&c, now, NULL, 0);
}

static void test_kernel_sync(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    dt_result *r = dt_run(&sc, 1, child_kernel_sync, NULL);
    expect_ok(r);
    CHECK_EQ(r->nvalues[0], 1);
    CHECK_EQ(r->sum.sessions, 1);
    CHECK_EQ(r->sum.kernels, 1);
    CHECK_EQ(r->sum.kernels_default, 1);
    CHECK_EQ(r->sum.sim_end_ps, (1000 + KERNEL_NS) * 1000);
    dt_free(r);
}

static void child_streams(const char *ep, int idx, void *arg)
{
    (void)arg;
    (void)idx;
    dt_client c;
    dt_connect(&c, ep, 0, 0, 1, 0);
    /* one stream serialises */
    dt_kernel(&c, 0, 0, 0);
    dt_kernel(&c, 0, 0, 0);
    CHECK_EQ(dt_sync_stream(&c, 0, 0, 0), 2 * KERNEL_NS);
    uint64_t h = 2 * KERNEL_NS;
    /* two streams overlap */
    dt_stream_create(&c, h, 0, 1, false);
    dt_stream_create(&c, h, 0, 2, false);
    dt_stream_create(&c, h, 0, 3, true);
    dt_kernel(&c, h, 0, 1);
    dt_kernel(&c, h, 0, 2);
    CHECK_EQ(wait_now(&c, h, HYSIM__WAIT__COND__DEVICE_IDLE, 0, 0), h + KERNEL_NS);
    h += KERNEL_NS; /* 30 µs */
    /* legacy default stream: waits for blocking streams, later blocking work waits for it */
    dt_kernel(&c, h, 0, 1); /* 30..40 */
    dt_kernel(&c, h, 0, 0); /* waits for stream 1: 40..50 */
    dt_kernel(&c, h, 0, 3); /* non-blocking: 30..40 */
    dt_kernel(&c, h, 0, 2); /* blocking, after the legacy kernel: 50..60 */
    CHECK_EQ(dt_sync_stream(&c, h, 0, 3), h + KERNEL_NS);
    CHECK_EQ(dt_sync_stream(&c, h + KERNEL_NS, 0, 0), h + 2 * KERNEL_NS);
    CHECK_EQ(dt_sync_stream(&c, h + 2 * KERNEL_NS, 0, 2), h + 3 * KERNEL_NS);
    /* already idle: answered at the host time */
    CHECK_EQ(dt_sync_stream(&c, h + 3 * KERNEL_NS, 0, 1), h + 3 * KERNEL_NS);
    CHECK_EQ(wait_now(&c, h + 3 * KERNEL_NS, HYSIM__WAIT__COND__PROCESS_IDLE, 0, 0), h + 3 * KERNEL_NS);
    dt_bye(&c, h + 3 * KERNEL_NS, NULL, 0);
}

static void test_streams(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    dt_result *r = dt_run(&sc, 1, child_streams, NULL);
    expect_ok(r);
    CHECK_EQ(r->sum.kernels, 8);
    CHECK_EQ(r->sum.sim_end_ps, 60 * KERNEL_NS / 10 * 1000);
    dt_free(r);
}

/* ------------------------------------------------------------- launch gap */

#define GAP_NS 1500ull

static void child_kernel_gap(const char *ep, int idx, void *arg)
{
    (void)arg;
    (void)idx;
    dt_client c;
    dt_connect(&c, ep, 0, 0, 1, 0);
    /* back to back on one stream: the second starts a gap after the first; the first, on an idle stream, at once */
    dt_kernel(&c, 0, 0, 0);
    dt_kernel(&c, 0, 0, 0);
    CHECK_EQ(dt_sync_stream(&c, 0, 0, 0), 2 * KERNEL_NS + GAP_NS);
    uint64_t h = 2 * KERNEL_NS + GAP_NS;
    /* behind an event record (zero length) as behind a kernel: one gap; the record itself has none */
    dt_stream_create(&c, h, 0, 1, true);
    dt_stream_create(&c, h, 0, 2, true);
    dt_kernel(&c, h, 0, 1);
    dt_record_event(&c, h, 0, 1, 7);
    dt_kernel(&c, h, 0, 1);
    uint64_t timed[] = {7};
    Hysim__Reply *r = dt_wait(&c, h, HYSIM__WAIT__COND__EVENT_DONE, 0, 0, 7, false, timed, 1);
    CHECK(r->done && !r->error[0], "event wait");
    CHECK_EQ(r->event_times[0]->time_ps, (h + KERNEL_NS) * 1000);
    hysim__reply__free_unpacked(r, NULL);
    /* behind a wait for another stream's event: one gap after the event, as the wait is the op before it */
    dt_wait_event(&c, h + KERNEL_NS, 0, 2, 7);
    dt_kernel(&c, h + KERNEL_NS, 0, 2);
    CHECK_EQ(dt_sync_stream(&c, h + KERNEL_NS, 0, 2), h + 2 * KERNEL_NS + GAP_NS);
    CHECK_EQ(dt_sync_stream(&c, h + 2 * KERNEL_NS + GAP_NS, 0, 1), h + 2 * KERNEL_NS + GAP_NS);
    h += 2 * KERNEL_NS + GAP_NS;
    /* a CUDA graph's kernel nodes run back to back */
    dt_graph_kernel(&c, h, 0, 1);
    dt_graph_kernel(&c, h, 0, 1);
    dt_graph_kernel(&c, h, 0, 1);
    CHECK_EQ(dt_sync_stream(&c, h, 0, 1), h + 3 * KERNEL_NS);
    h += 3 * KERNEL_NS;
    /* a kernel issued after its stream went idle starts at its issue time */
    dt_kernel(&c, h + 5000, 0, 1);
    CHECK_EQ(dt_sync_stream(&c, h + 5000, 0, 1), h + 5000 + KERNEL_NS);
    h += 5000 + KERNEL_NS;
    /* or when it reaches its GPU (Op.reach_ns: the rest of its call's host cost and the submission latency) */
    dt_kernel(&c, h + 5000, 0, 1);
    c.ops[c.nops - 1]->reach_ns = 7000;
    CHECK_EQ(dt_sync_stream(&c, h + 5000, 0, 1), h + 12000 + KERNEL_NS);
    h += 12000 + KERNEL_NS;
    dt_bye(&c, h, NULL, 0);
    dt_record(0, h);
}

static void test_kernel_gap(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    sc.compute.kernel_gap_ns = GAP_NS;
    dt_result *r = dt_run(&sc, 1, child_kernel_gap, NULL);
    expect_ok(r);
    CHECK_EQ(r->sum.kernels, 10);
    CHECK_EQ(r->nvalues[0], 1);
    CHECK_EQ(r->sum.sim_end_ps, r->values[0][0] * 1000);
    dt_free(r);
}

/* ------------------------------------------------------------- events */

static const Hysim__EventTime *event_time(const Hysim__Reply *r, size_t i, uint64_t event)
{
    CHECK(i < r->n_event_times, "reply has %zu event times, wanted #%zu", r->n_event_times, i);
    CHECK_EQ(r->event_times[i]->event, event);
    return r->event_times[i];
}

static void child_events(const char *ep, int idx, void *arg)
{
    (void)arg;
    (void)idx;
    dt_client c;
    dt_connect(&c, ep, 0, 0, 1, 0);
    dt_stream_create(&c, 0, 0, 1, true);
    dt_record_event(&c, 0, 0, 1, 1);
    dt_kernel(&c, 0, 0, 1);
    dt_record_event(&c, 0, 0, 1, 2);
    uint64_t timed[] = {1, 2, 9};
    Hysim__Reply *r = dt_wait(&c, 0, HYSIM__WAIT__COND__EVENT_DONE, 0, 0, 2, false, timed, 3);
    CHECK(r->done && !r->error[0], "event wait");
    CHECK_EQ(r->now_ns, KERNEL_NS);
    const Hysim__EventTime *e1 = event_time(r, 0, 1), *e2 = event_time(r, 1, 2), *e9 = event_time(r, 2, 9);
    CHECK(e1->recorded && e1->done && e2->recorded && e2->done, "events 1 and 2 done");
    CHECK_EQ(e1->time_ps, 0);
    CHECK_EQ(e2->time_ps - e1->time_ps, KERNEL_NS * 1000); /* cudaEventElapsedTime around one kernel */
    CHECK(!e9->recorded && !e9->done, "event 9 was never recorded");
    hysim__reply__free_unpacked(r, NULL);

    /* queries: not done before the kernel ends; done at exactly its end */
    uint64_t h = KERNEL_NS;
    dt_kernel(&c, h, 0, 1);
    uint64_t q[][2] = {{h, 0}, {h + KERNEL_NS / 2, 0}, {h + KERNEL_NS, 1}};
    for (int i = 0; i < 3; i++) {
        r = dt_wait(&c, q[i][0], HYSIM__WAIT__COND__STREAM_IDLE, 0, 1, 0, true, NULL, 0);
        CHECK(!r->error[0], "query: %s", r->error);
        CHECK_EQ(r->now_ns, q[i][0]);
        CHECK_EQ(r->done, q[i][1]);
        hysim__reply__free_unpacked(r, NULL);
    }
    h += KERNEL_NS; /* 20 µs */
    dt_kernel(&c, h, 0, 1);
    dt_record_event(&c, h, 0, 1, 3); /* completes at 30 µs */
    uint64_t t3[] = {3};
    r = dt_wait(&c, h + 5000, HYSIM__WAIT__COND__EVENT_DONE, 0, 0, 3, true, t3, 1);
    CHECK(!r->done && r->now_ns == h + 5000, "query event 3 at 25 µs");
    CHECK(event_time(r, 0, 3)->recorded && !event_time(r, 0, 3)->done, "event 3 recorded, not done");
    hysim__reply__free_unpacked(r, NULL);
    r = dt_wait(&c, h + 5000, HYSIM__WAIT__COND__EVENT_DONE, 0, 0, 3, false, t3, 1);
    CHECK(r->done && r->now_ns == h + KERNEL_NS, "event 3 at 30 µs, got %llu", (unsigned long long)r->now_ns);
    CHECK(event_time(r, 0, 3)->done && event_time(r, 0, 3)->time_ps == (h + KERNEL_NS) * 1000, "event 3 time");
    hysim__reply__free_unpacked(r, NULL);
    h += KERNEL_NS; /* 30 µs */
    /* a never-recorded event is done at once */
    r = dt_wait(&c, h, HYSIM__WAIT__COND__EVENT_DONE, 0, 0, 77, false, NULL, 0);
    CHECK(r->done && r->now_ns == h, "never-recorded event");
    hysim__reply__free_unpacked(r, NULL);
    /* a wait on an event follows its most recent record */
    dt_kernel(&c, h, 0, 1);
    dt_record_event(&c, h, 0, 1, 1);
    r = dt_wait(&c, h, HYSIM__WAIT__COND__EVENT_DONE, 0, 0, 1, false, NULL, 0);
    CHECK(r->done && r->now_ns == h + KERNEL_NS, "re-recorded event 1");
    hysim__reply__free_unpacked(r, NULL);
    dt_bye(&c, h + KERNEL_NS, NULL, 0);
}

static void test_events(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    dt_result *r = dt_run(&sc, 1, child_events, NULL);
    expect_ok(r);
    CHECK_EQ(r->sum.kernels, 4);
    dt_free(r);
}

static void child_wait_event(const char *ep, int idx, void *arg)
{
    (void)arg;
    (void)idx;
    dt_client c;
    dt_connect(&c, ep, 0, 0, 1, 0);
    for (uint64_t s = 1; s <= 4; s++)
        dt_stream_create(&c, 0, 0, s, true);
    dt_kernel(&c, 0, 0, 1);          /* A: 0..10 */
    dt_record_event(&c, 0, 0, 1, 5); /* e at 10 */
    dt_wait_event(&c, 0, 0, 2, 5);
    dt_kernel(&c, 0, 0, 2);          /* B: 10..20 */
    dt_kernel(&c, 0, 0, 1);          /* C: 10..20 */
    dt_record_event(&c, 0, 0, 1, 5); /* e again, at 20: B does not care */
    dt_wait_event(&c, 0, 0, 3, 5);
    dt_kernel(&c, 0, 0, 3);         /* D: 20..30 */
    dt_wait_event(&c, 0, 0, 4, 99); /* never recorded: no wait */
    dt_kernel(&c, 0, 0, 4);         /* E: 0..10 */
    CHECK_EQ(dt_sync_stream(&c, 0, 0, 4), KERNEL_NS);
    CHECK_EQ(dt_sync_stream(&c, KERNEL_NS, 0, 2), 2 * KERNEL_NS);
    CHECK_EQ(dt_sync_stream(&c, 2 * KERNEL_NS, 0, 3), 3 * KERNEL_NS);
    dt_bye(&c, 3 * KERNEL_NS, NULL, 0);
}

static void test_wait_event(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    dt_result *r = dt_run(&sc, 1, child_wait_event, NULL);
    expect_ok(r);
    CHECK_EQ(r->sum.kernels, 5);
    dt_free(r);
}

/* ------------------------------------------------------------- copies */

static void child_copies(const char *ep, int idx, void *arg)
{
    (void)arg;
    dt_client c;
    dt_connect(&c, ep, 0, 0, 2, 0);
    uint64_t h = 0;
    dt_copy(&c, h, 0, 0, HYSIM__COPY_KIND__H2D, 1000000, 0);
    CHECK_EQ(h = dt_sync_stream(&c, h, 0, 0), 17000); /* 16 µs + 1 µs */
    dt_copy(&c, h, 0, 0, HYSIM__COPY_KIND__D2H, 1000000, 0);
    CHECK_EQ(h = dt_sync_stream(&c, h, 0, 0), 34000);
    dt_memset(&c, h, 0, 0, 4560000);
    CHECK_EQ(h = dt_sync_stream(&c, h, 0, 0), 40500); /* 5.5 µs + 4.56 MB at 95 % of 4800 GB/s */
    dt_memset(&c, h, 0, 0, 456);
    CHECK_EQ(h = dt_sync_stream(&c, h, 0, 0), 43301); /* up to 4 KiB: 2.8 µs + 0.1 ns, answered in whole ns */
    dt_copy(&c, h, 0, 0, HYSIM__COPY_KIND__D2D, 20880000, 0);
    CHECK_EQ(h = dt_sync_stream(&c, h, 0, 0), 53301); /* read + write at 87 % of 4800 GB/s: 10 µs */
    dt_copy(&c, h, 0, 0, HYSIM__COPY_KIND__D2D, 4096, 0);
    CHECK_EQ(h = dt_sync_stream(&c, h, 0, 0), 58801); /* at least 5.5 µs */
    dt_copy(&c, h, 0, 0, HYSIM__COPY_KIND__D2D, 1000000, 1);
    uint64_t t = dt_sync_stream(&c, h, 0, 0);
    dt_record(idx, t - h);
    h = t;
    dt_copy(&c, h, 1, 0, HYSIM__COPY_KIND__H2H, 1000000000, 0);
    CHECK_EQ(dt_sync_stream(&c, h, 1, 0), h);
    uint64_t before = h;
    dt_pageable_copy(&c, h, 0, 0, HYSIM__COPY_KIND__H2D, 1000000); /* staged by the host: 80 µs + 1 µs */
    CHECK_EQ(h = dt_sync_stream(&c, h, 0, 0), before + 81000);
    dt_pageable_copy(&c, h, 0, 0, HYSIM__COPY_KIND__D2H, 1000000);
    CHECK_EQ(h = dt_sync_stream(&c, h, 0, 0), before + 2 * 81000);
    /* a memset queued behind other work of its stream takes 1.5 us of its fixed cost, the rest done meanwhile */
    before = h;
    dt_memset(&c, h, 0, 0, 4560000);
    dt_memset(&c, h, 0, 0, 4560000);
    CHECK_EQ(h = dt_sync_stream(&c, h, 0, 0), before + 6500 + 2500); /* 5.5 + 1 us, then 1.5 + 1 us */
    dt_copy(&c, h, 0, 0, HYSIM__COPY_KIND__H2D, 1000000, 0);
    dt_memset(&c, h, 0, 0, 4560000);
    CHECK_EQ(h = dt_sync_stream(&c, h, 0, 0), before + 9000 + 17000 + 2500); /* behind a copy */
    dt_bye(&c, h, NULL, 0);
}

/* A host copy behind another on its stream: 2.7 us of its 4 us fixed cost remain (the rest overlaps). */
static void child_queued_copies(const char *ep, int idx, void *arg)
{
    (void)arg, (void)idx;
    dt_client c;
    dt_connect(&c, ep, 0, 0, 1, 0);
    uint64_t h = 0;
    dt_copy(&c, h, 0, 0, HYSIM__COPY_KIND__H2D, 1000000, 0);
    CHECK_EQ(h = dt_sync_stream(&c, h, 0, 0), 20000); /* alone: 16 us + 4 us */
    dt_copy(&c, h, 0, 0, HYSIM__COPY_KIND__H2D, 1000000, 0);
    dt_copy(&c, h, 0, 0, HYSIM__COPY_KIND__D2H, 1000000, 0);
    CHECK_EQ(h = dt_sync_stream(&c, h, 0, 0), 20000 + 20000 + 18700); /* then one behind the other */
    dt_bye(&c, h, NULL, 0);
}

static void test_queued_copies(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    sc.pcie.copy_latency_ns = 4000;
    dt_result *r = dt_run(&sc, 1, child_queued_copies, NULL);
    expect_ok(r);
    dt_free(r);
}

static void test_copies(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    dt_result *r = dt_run(&sc, 1, child_copies, NULL);
    expect_ok(r);
    check_fabric_ns(r->values[0][0], 10500, "peer copy of 1 MB");
    CHECK_EQ(r->sum.copies, 9); /* memsets are not copies */
    CHECK_EQ(r->sum.flows, 1);
    dt_free(r);
}

/* ------------------------------------------------------------- all-reduce */

#define AR_BYTES 4000000ull

typedef struct ar_arg {
    int n;
    bool jitter; /* children sleep a little at different points: wall-clock order changes */
} ar_arg;

static void jitter(const ar_arg *a, int idx, int point)
{
    if (a->jitter)
        usleep((useconds_t)(((idx + point) % 4) * 3000));
}

static void child_allreduce(const char *ep, int idx, void *arg)
{
    const ar_arg *a = arg;
    dt_client c;
    dt_connect(&c, ep, 0, (uint32_t)idx, 1, 0);
    dt_comm_init(&c, 0, (uint32_t)idx, COMM, (uint32_t)idx, (uint32_t)a->n);
    dt_collective(&c, 0, (uint32_t)idx, 0, COMM, (uint32_t)idx, 0, HYSIM__COLL_KIND__ALL_REDUCE, AR_BYTES);
    uint64_t t1 = dt_sync_stream(&c, 0, (uint32_t)idx, 0);
    dt_collective(&c, t1, (uint32_t)idx, 0, COMM, (uint32_t)idx, 1, HYSIM__COLL_KIND__ALL_REDUCE, AR_BYTES);
    uint64_t t2 = dt_sync_stream(&c, t1, (uint32_t)idx, 0);
    dt_record(idx, t1);
    dt_record(idx, t2);
    dt_bye(&c, t2, NULL, 0);
}

static uint64_t ring_ns(int n, uint64_t bytes)
{
    uint64_t chunk = (bytes + (uint64_t)n - 1) / (uint64_t)n;
    uint64_t step_ps = chunk * 8000 / 800 + 500 * 1000; /* 800 Gb/s NVLink + 500 ns */
    return 2 * (uint64_t)(n - 1) * step_ps / 1000;
}

static void run_allreduce(int n)
{
    hs_scenario sc;
    dt_scenario(&sc);
    ar_arg a = {.n = n};
    dt_result *r = dt_run(&sc, n, child_allreduce, &a);
    expect_ok(r);
    uint64_t want = ring_ns(n, AR_BYTES);
    for (int i = 0; i < n; i++) {
        CHECK_EQ(r->nvalues[i], 2);
        CHECK_EQ(r->values[i][0], r->values[0][0]); /* a symmetric ring ends at once for all */
        CHECK_EQ(r->values[i][1], r->values[0][1]);
    }
    char what[64];
    snprintf(what, sizeof(what), "%d-rank ring all-reduce", n);
    check_fabric_ns(r->values[0][0], want, what);
    check_fabric_ns(r->values[0][1] - r->values[0][0], want, "second all-reduce");
    CHECK_EQ(r->sum.collectives, 2);
    CHECK_EQ(r->sum.flows, 2 * 2 * (uint64_t)(n - 1) * (uint64_t)n);
    CHECK(r->sum.packet_hops > 0, "no packet hops");
    dt_free(r);
}

static void test_allreduce2(void) { run_allreduce(2); }
static void test_allreduce4(void) { run_allreduce(4); }

/* Both ranks in one process, each on its own GPU; plus a 1-rank communicator. */
static void child_allreduce_one_process(const char *ep, int idx, void *arg)
{
    (void)arg;
    dt_client c;
    dt_connect(&c, ep, 0, 0, 2, 0);
    dt_comm_init(&c, 0, 0, COMM, 0, 2);
    dt_comm_init(&c, 0, 1, COMM, 1, 2);
    dt_comm_init(&c, 0, 0, COMM + 1, 0, 1);
    dt_collective(&c, 0, 0, 0, COMM + 1, 0, 0, HYSIM__COLL_KIND__ALL_REDUCE, AR_BYTES);
    dt_collective(&c, 0, 0, 0, COMM, 0, 0, HYSIM__COLL_KIND__ALL_REDUCE, AR_BYTES);
    dt_collective(&c, 0, 1, 0, COMM, 1, 0, HYSIM__COLL_KIND__ALL_REDUCE, AR_BYTES);
    uint64_t t = wait_now(&c, 0, HYSIM__WAIT__COND__PROCESS_IDLE, 0, 0);
    dt_record(idx, t);
    dt_bye(&c, t, NULL, 0);
}

/* Rank 0 sleeps 50 µs before its all-reduce, rank 1 calls it at once: both finish a ring's time after 50 µs. */
static void child_sleep(const char *ep, int idx, void *arg)
{
    (void)arg;
    dt_client c;
    dt_connect(&c, ep, 0, (uint32_t)idx, 1, 0);
    dt_comm_init(&c, 0, (uint32_t)idx, COMM, (uint32_t)idx, 2);
    uint64_t h = 0;
    if (idx == 0) {
        h = dt_sleep_until(&c, 0, 50000);
        dt_record(idx, h);
        CHECK_EQ(dt_sleep_until(&c, h, 1000), h); /* an end already past: answered at the host time */
    }
    dt_collective(&c, h, (uint32_t)idx, 0, COMM, (uint32_t)idx, 0, HYSIM__COLL_KIND__ALL_REDUCE, AR_BYTES);
    uint64_t t = dt_sync_stream(&c, h, (uint32_t)idx, 0);
    dt_record(idx, t);
    dt_bye(&c, t, NULL, 0);
}

static void test_sleep(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    dt_result *r = dt_run(&sc, 2, child_sleep, NULL);
    expect_ok(r);
    CHECK_EQ(r->nvalues[0], 2);
    CHECK_EQ(r->nvalues[1], 1);
    CHECK_EQ(r->values[0][0], 50000);
    check_fabric_ns(r->values[0][1] - 50000, ring_ns(2, AR_BYTES), "all-reduce after rank 0's sleep");
    CHECK_EQ(r->values[1][0], r->values[0][1]);
    dt_free(r);
}

/* A timed wait (UNTIL, id) of one of two threads, which the other wakes at wake_ns; returns the reply. */
static Hysim__Reply *timed_wait_woken(dt_client *c, uint64_t id, uint64_t host_ns, uint64_t until_ns, uint64_t wake_ns)
{
    Hysim__Wait w = HYSIM__WAIT__INIT;
    w.host_ns = host_ns;
    w.cond = HYSIM__WAIT__COND__UNTIL;
    w.until_ns = until_ns;
    w.id = id;
    w.threads = 2;
    Hysim__Wake k = HYSIM__WAKE__INIT;
    k.host_ns = wake_ns;
    k.id = id;
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_WAIT;
    m.wait = &w;
    dt_send(c, &m);
    m.msg_case = HYSIM__CLIENT_MSG__MSG_WAKE;
    m.wake = &k;
    dt_send(c, &m);
    Hysim__Reply *r = dt_read_reply(c);
    CHECK(r && !r->error[0] && r->id == id, "timed wait %llu: no answer", (unsigned long long)id);
    return r;
}

/* A timed wait woken before its deadline is answered at the Wake, not done; one woken after it, at it, done. */
static void child_wake(const char *ep, int idx, void *arg)
{
    (void)arg;
    (void)idx;
    dt_client c;
    dt_connect(&c, ep, 0, 0, 1, 0);
    Hysim__Reply *r = timed_wait_woken(&c, 1, 0, 50000, 20000);
    dt_record(0, r->now_ns);
    dt_record(0, r->done);
    hysim__reply__free_unpacked(r, NULL);
    r = timed_wait_woken(&c, 2, 20000, 30000, 40000); /* the other thread ran past the deadline first */
    dt_record(0, r->now_ns);
    dt_record(0, r->done);
    hysim__reply__free_unpacked(r, NULL);
    Hysim__Wake k = HYSIM__WAKE__INIT; /* a Wake for a Wait already answered: ignored */
    k.host_ns = 40000;
    k.id = 2;
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_WAKE;
    m.wake = &k;
    dt_send(&c, &m);
    dt_bye(&c, 40000, NULL, 0);
}

static void test_wake(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    dt_result *r = dt_run(&sc, 1, child_wake, NULL);
    expect_ok(r);
    CHECK_EQ(r->nvalues[0], 4);
    CHECK_EQ(r->values[0][0], 20000);
    CHECK_EQ(r->values[0][1], 0);
    CHECK_EQ(r->values[0][2], 30000);
    CHECK_EQ(r->values[0][3], 1);
    dt_free(r);
}

/*
 * Process 0 sleeps to 10 µs, then computes for 300 ms of real time before it sends anything; process 1
 * sleeps to 100 µs. Process 0 may still send work at 10 µs, so process 1's sleep is answered only once
 * process 0 has said Bye, not in the pass that answered process 0 (the bound it had before).
 */
static void child_answer_order(const char *ep, int idx, void *arg)
{
    (void)arg;
    dt_client c;
    dt_connect(&c, ep, 0, (uint32_t)idx, 1, 0);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    uint64_t h = dt_sleep_until(&c, 0, idx == 0 ? 10000 : 100000);
    clock_gettime(CLOCK_MONOTONIC, &b);
    dt_record(idx, h);
    if (idx == 0) {
        usleep(300000);
    } else {
        double waited = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
        dt_record(idx, waited >= 0.2);
    }
    dt_bye(&c, h, NULL, 0);
}

static void test_answer_order(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    dt_result *r = dt_run(&sc, 2, child_answer_order, NULL);
    expect_ok(r);
    CHECK_EQ(r->values[0][0], 10000);
    CHECK_EQ(r->values[1][0], 100000);
    CHECK(r->values[1][1] == 1, "process 1's sleep to 100 us was answered while process 0 ran at 10 us");
    dt_free(r);
}

/*
 * A small collective's values (a COLL_VALUES Wait) are answered no earlier than the last rank's part was
 * issued: rank 0 asks at 1 µs, rank 1 issues its part at 500 µs (and 200 ms of real time later). Answered at
 * its own 1 µs, rank 0 would run on from a time the simulation may already have passed.
 */
static void child_values_time(const char *ep, int idx, void *arg)
{
    (void)arg;
    uint32_t g = (uint32_t)idx;
    dt_client c;
    dt_connect(&c, ep, 0, g, 1, 0);
    dt_comm_init(&c, 0, g, COMM, g, 2);
    if (idx == 0) {
        dt_collective(&c, 1000, 0, 0, COMM, 0, 0, HYSIM__COLL_KIND__ALL_REDUCE, 8);
        Hysim__Wait w = HYSIM__WAIT__INIT;
        w.host_ns = 1000;
        w.cond = HYSIM__WAIT__COND__COLL_VALUES;
        w.comm_key = COMM;
        w.coll_seq = 0;
        w.coll_rank = 0;
        Hysim__Reply *r = dt_wait_msg(&c, &w);
        CHECK(r && !r->error[0], "values wait: %s", r ? r->error : "no reply");
        uint64_t t = r ? r->now_ns : 0;
        dt_record(idx, t);
        if (r)
            hysim__reply__free_unpacked(r, NULL);
        t = dt_sync_stream(&c, t, 0, 0);
        dt_bye(&c, t, NULL, 0);
        return;
    }
    dt_flush(&c);
    usleep(200000);
    dt_collective(&c, 500000, 1, 0, COMM, 1, 0, HYSIM__COLL_KIND__ALL_REDUCE, 8);
    uint64_t t = dt_sync_stream(&c, 500000, 1, 0);
    dt_bye(&c, t, NULL, 0);
}

static void test_values_time(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    dt_result *r = dt_run(&sc, 2, child_values_time, NULL);
    expect_ok(r);
    CHECK(r->nvalues[0] == 1 && r->values[0][0] == 500000, "values answered at %llu ns, not at rank 1's 500000",
          r->nvalues[0] ? (unsigned long long)r->values[0][0] : 0ull);
    dt_free(r);
}

static void test_allreduce_one_process(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    dt_result *r = dt_run(&sc, 1, child_allreduce_one_process, NULL);
    expect_ok(r);
    check_fabric_ns(r->values[0][0], ring_ns(2, AR_BYTES), "2-rank all-reduce in one process");
    CHECK_EQ(r->sum.collectives, 2);
    CHECK_EQ(r->sum.flows, 4);
    dt_free(r);
}

/* A query is answered only once no other process can still change it: rank 1
 * joins the all-reduce late in wall-clock time, early in simulated time. */
static void child_query_exact(const char *ep, int idx, void *arg)
{
    (void)arg;
    uint32_t g = (uint32_t)idx;
    dt_client c;
    dt_connect(&c, ep, 0, g, 1, 0);
    dt_comm_init(&c, 0, g, COMM, g, 2);
    if (idx == 0) {
        dt_collective(&c, 0, 0, 0, COMM, 0, 0, HYSIM__COLL_KIND__ALL_REDUCE, AR_BYTES);
        Hysim__Reply *r = dt_wait(&c, 100000, HYSIM__WAIT__COND__STREAM_IDLE, 0, 0, 0, true, NULL, 0);
        CHECK(!r->error[0], "query: %s", r->error);
        dt_record(idx, r->done);
        dt_record(idx, r->now_ns);
        hysim__reply__free_unpacked(r, NULL);
        dt_bye(&c, 100000, NULL, 0);
        return;
    }
    dt_flush(&c);
    usleep(100000);
    dt_collective(&c, 10000, 1, 0, COMM, 1, 0, HYSIM__COLL_KIND__ALL_REDUCE, AR_BYTES);
    uint64_t t = dt_sync_stream(&c, 10000, 1, 0);
    dt_record(idx, t);
    dt_bye(&c, t, NULL, 0);
}

static void test_query_exact(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    dt_result *r = dt_run(&sc, 2, child_query_exact, NULL);
    expect_ok(r);
    CHECK_EQ(r->values[0][0], 1); /* done by 100 µs: the all-reduce ends at 10 + 41 µs */
    CHECK_EQ(r->values[0][1], 100000);
    check_fabric_ns(r->values[1][0] - 10000, ring_ns(2, AR_BYTES), "late-joined all-reduce");
    dt_free(r);
}

/* ------------------------------------------------------------- other collectives */

/* One flow of `bytes` alone on an 800 Gb/s NVLink + 500 ns, in ps. */
static uint64_t flow_ps(uint64_t bytes) { return bytes * 8000 / 800 + 500 * 1000; }

static uint64_t ps_to_ns_ceil(uint64_t ps) { return (ps + 999) / 1000; }

typedef struct coll_arg {
    int n;
    Hysim__CollKind kind;
    uint64_t bytes;
    int32_t root;
} coll_arg;

/* Each child is one rank on its own GPU: one collective, then a sync. */
static void child_coll(const char *ep, int idx, void *arg)
{
    const coll_arg *a = arg;
    uint32_t g = (uint32_t)idx;
    dt_client c;
    dt_connect(&c, ep, 0, g, 1, 0);
    dt_comm_init(&c, 0, g, COMM, g, (uint32_t)a->n);
    dt_collective_ex(&c, 0, g, 0, COMM, g, 0, a->kind, a->bytes, a->root, 0);
    uint64_t t = dt_sync_stream(&c, 0, g, 0);
    dt_record(idx, t);
    dt_bye(&c, t, NULL, 0);
}

static dt_result *run_coll(const coll_arg *a)
{
    hs_scenario sc;
    dt_scenario(&sc);
    dt_result *r = dt_run(&sc, a->n, child_coll, (void *)a);
    expect_ok(r);
    CHECK_EQ(r->sum.collectives, 1);
    for (int i = 0; i < a->n; i++)
        CHECK_EQ(r->nvalues[i], 1);
    return r;
}

/* AllGather and ReduceScatter: a ring of n−1 steps, each moving one rank's share. */
static void run_ring_share(Hysim__CollKind kind, const char *what)
{
    coll_arg a = {.n = 4, .kind = kind, .bytes = 1000000};
    dt_result *r = run_coll(&a);
    uint64_t want = ps_to_ns_ceil(3 * flow_ps(a.bytes));
    for (int i = 0; i < a.n; i++)
        CHECK_EQ(r->values[i][0], r->values[0][0]);
    check_fabric_ns(r->values[0][0], want, what);
    CHECK_EQ(r->sum.flows, 3 * 4);
    dt_free(r);
}

static void test_allgather4(void)
{
    run_ring_share(HYSIM__COLL_KIND__ALL_GATHER, "4-rank ring all-gather of 1 MB shares");
}

static void test_reduce_scatter4(void)
{
    run_ring_share(HYSIM__COLL_KIND__REDUCE_SCATTER, "4-rank ring reduce-scatter of 1 MB shares");
}

/*
 * Broadcast and Reduce: a chain of n−1 hops in 512 KiB chunks, one chunk per
 * hop at a time. Chunk c crosses hop h during [(c+h)T, (c+h+1)T]; the rank at
 * chain position p is done at (C + min(p, n−2))·T. The packet model adds one
 * 16 KiB segment's store-and-forward (164 ns) to each 5.7 µs chunk: 2.9 %.
 */
static void run_chain(Hysim__CollKind kind, int32_t root, uint32_t first, const char *what)
{
    coll_arg a = {.n = 4, .kind = kind, .bytes = 4u << 20, .root = root};
    dt_result *r = run_coll(&a);
    uint64_t chunks = 8, t = flow_ps(512u << 10);
    for (uint32_t p = 0; p < 4; p++) {
        uint32_t rank = (first + p) % 4;
        char line[128];
        snprintf(line, sizeof(line), "%s: rank %u (chain position %u)", what, rank, p);
        check_fabric_ns_within(r->values[rank][0], ps_to_ns_ceil((chunks + (p < 2 ? p : 2)) * t), 4, line);
    }
    CHECK_EQ(r->sum.flows, chunks * 3);
    dt_free(r);
}

static void test_broadcast4(void) { run_chain(HYSIM__COLL_KIND__BROADCAST, 1, 1, "broadcast from rank 1"); }
static void test_reduce4(void) { run_chain(HYSIM__COLL_KIND__REDUCE, 2, 3, "reduce to rank 2"); }

/* AllToAll: all 12 flows at once. Alone on their links with the analytic
 * fabric; in the packet model each GPU's link carries 3 of them. */
static void test_alltoall4(void)
{
    coll_arg a = {.n = 4, .kind = HYSIM__COLL_KIND__ALL_TO_ALL, .bytes = 1000000};
    dt_result *r = run_coll(&a);
    uint64_t want = dt_fake_fabric() ? flow_ps(a.bytes) : flow_ps(3 * a.bytes);
    for (int i = 0; i < a.n; i++)
        check_fabric_ns(r->values[i][0], ps_to_ns_ceil(want), "4-rank all-to-all of 1 MB per pair");
    CHECK_EQ(r->sum.flows, 12);
    dt_free(r);
}

/*
 * Send/Recv: rank 0 issues Send then Recv, rank 1 Recv then Send, each pair
 * in one NCCL group on one stream: they run at once (unordered, they would
 * wait for each other forever). Then two Sends 0 → 1 outside groups, matched
 * to rank 1's Recvs in order (1 MB, then 2 MB).
 */
static void child_sendrecv(const char *ep, int idx, void *arg)
{
    (void)arg;
    uint32_t g = (uint32_t)idx, peer = 1 - g;
    dt_client c;
    dt_connect(&c, ep, 0, g, 1, 0);
    dt_comm_init(&c, 0, g, COMM, g, 2);
    Hysim__CollKind first = idx == 0 ? HYSIM__COLL_KIND__SEND : HYSIM__COLL_KIND__RECV;
    Hysim__CollKind second = idx == 0 ? HYSIM__COLL_KIND__RECV : HYSIM__COLL_KIND__SEND;
    dt_collective_ex(&c, 0, g, 0, COMM, g, 0, first, 1000000, (int32_t)peer, 5 + g);
    dt_collective_ex(&c, 0, g, 0, COMM, g, 0, second, 1000000, (int32_t)peer, 5 + g);
    uint64_t t1 = dt_sync_stream(&c, 0, g, 0);
    Hysim__CollKind k = idx == 0 ? HYSIM__COLL_KIND__SEND : HYSIM__COLL_KIND__RECV;
    dt_collective_ex(&c, t1, g, 0, COMM, g, 1, k, 1000000, (int32_t)peer, 0);
    dt_collective_ex(&c, t1, g, 0, COMM, g, 2, k, 2000000, (int32_t)peer, 0);
    uint64_t t2 = dt_sync_stream(&c, t1, g, 0);
    dt_record(idx, t1);
    dt_record(idx, t2);
    dt_bye(&c, t2, NULL, 0);
}

static void test_sendrecv(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    dt_result *r = dt_run(&sc, 2, child_sendrecv, NULL);
    expect_ok(r);
    for (int i = 0; i < 2; i++) {
        CHECK_EQ(r->values[i][0], r->values[0][0]);
        CHECK_EQ(r->values[i][1], r->values[0][1]);
    }
    check_fabric_ns(r->values[0][0], ps_to_ns_ceil(flow_ps(1000000)), "grouped Send/Recv both ways");
    check_fabric_ns(r->values[0][1] - r->values[0][0], ps_to_ns_ceil(flow_ps(1000000) + flow_ps(2000000)),
                    "two Sends matched in order");
    CHECK_EQ(r->sum.collectives, 4);
    CHECK_EQ(r->sum.flows, 4);
    dt_free(r);
}

/*
 * Send/Recv of a rank to itself: a copy within its GPU, 2 × bytes through HBM
 * (4.8 MB at 4800 GB/s: 2 µs), both parts ending together, no fabric flow.
 * (1) AllToAll as grouped Sends and Recvs to every rank, itself included: the
 * self copy hides under the 1 MB flows between the two ranks. (2) A self pair
 * alone in a group. (3) Outside groups on two streams, the Recv issued 500 ns
 * after the Send: both end 2 µs after the later one.
 */
#define SELF_BYTES   4800000ull
#define SELF_COPY_NS 2000ull

static void child_sendrecv_self(const char *ep, int idx, void *arg)
{
    (void)arg;
    uint32_t g = (uint32_t)idx;
    dt_client c;
    dt_connect(&c, ep, 0, g, 1, 0);
    dt_comm_init(&c, 0, g, COMM, g, 2);
    for (uint32_t peer = 0; peer < 2; peer++)
        dt_collective_ex(&c, 0, g, 0, COMM, g, 0, HYSIM__COLL_KIND__SEND, 1000000, (int32_t)peer, 5 + g);
    for (uint32_t peer = 0; peer < 2; peer++)
        dt_collective_ex(&c, 0, g, 0, COMM, g, 0, HYSIM__COLL_KIND__RECV, 1000000, (int32_t)peer, 5 + g);
    uint64_t t1 = dt_sync_stream(&c, 0, g, 0);
    dt_collective_ex(&c, t1, g, 0, COMM, g, 1, HYSIM__COLL_KIND__SEND, SELF_BYTES, (int32_t)g, 7 + g);
    dt_collective_ex(&c, t1, g, 0, COMM, g, 1, HYSIM__COLL_KIND__RECV, SELF_BYTES, (int32_t)g, 7 + g);
    uint64_t t2 = dt_sync_stream(&c, t1, g, 0);
    dt_stream_create(&c, t2, g, 1, true);
    dt_stream_create(&c, t2, g, 2, true);
    dt_collective_ex(&c, t2, g, 1, COMM, g, 2, HYSIM__COLL_KIND__SEND, SELF_BYTES, (int32_t)g, 0);
    dt_collective_ex(&c, t2 + 500, g, 2, COMM, g, 2, HYSIM__COLL_KIND__RECV, SELF_BYTES, (int32_t)g, 0);
    uint64_t t3 = dt_sync_stream(&c, t2 + 500, g, 1);
    uint64_t t4 = dt_sync_stream(&c, t3, g, 2);
    dt_record(idx, t1);
    dt_record(idx, t2);
    dt_record(idx, t3);
    dt_record(idx, t4);
    dt_bye(&c, t4, NULL, 0);
}

static void test_sendrecv_self(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    dt_result *r = dt_run(&sc, 2, child_sendrecv_self, NULL);
    expect_ok(r);
    for (int i = 0; i < 2; i++) {
        const uint64_t *v = r->values[i];
        check_fabric_ns(v[0], ps_to_ns_ceil(flow_ps(1000000)), "AllToAll as Sends/Recvs, self included");
        CHECK_EQ(v[1] - v[0], SELF_COPY_NS);
        CHECK_EQ(v[2], v[1] + 500 + SELF_COPY_NS);
        CHECK_EQ(v[3], v[2]);
    }
    CHECK_EQ(r->sum.collectives, 8);
    CHECK_EQ(r->sum.flows, 2);
    dt_free(r);
}

/*
 * A peer copy's direction: GPU 0 → GPU 1 (on GPU 1's stream, from_peer) and
 * GPU 2 → GPU 1 (on GPU 2's stream) at once. In the packet model both enter
 * GPU 1's link and share it; read the other way they would not meet.
 */
static void child_copy_direction(const char *ep, int idx, void *arg)
{
    (void)arg;
    dt_client c;
    dt_connect(&c, ep, 0, 0, 3, 0);
    dt_peer_copy(&c, 0, 1, 0, 1000000, 0, true);
    dt_peer_copy(&c, 0, 2, 0, 1000000, 1, false);
    uint64_t t = wait_now(&c, 0, HYSIM__WAIT__COND__PROCESS_IDLE, 0, 0);
    dt_record(idx, t);
    dt_bye(&c, t, NULL, 0);
}

static void test_copy_direction(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    dt_result *r = dt_run(&sc, 1, child_copy_direction, NULL);
    expect_ok(r);
    uint64_t want = dt_fake_fabric() ? flow_ps(1000000) : flow_ps(2000000);
    check_fabric_ns(r->values[0][0], ps_to_ns_ceil(want), "two peer copies into GPU 1");
    CHECK_EQ(r->sum.copies, 2);
    dt_free(r);
}

/* ------------------------------------------------------------- failures */

static void child_deadlock(const char *ep, int idx, void *arg)
{
    (void)arg;
    dt_client c;
    dt_connect(&c, ep, 0, (uint32_t)idx, 1, 0);
    dt_comm_init(&c, 0, (uint32_t)idx, COMM, (uint32_t)idx, 2);
    if (idx == 0) {
        signal(SIGTERM, SIG_IGN); /* the daemon sends the error, then SIGTERM: record it first */
        dt_collective(&c, 0, 0, 0, COMM, 0, 0, HYSIM__COLL_KIND__ALL_REDUCE, AR_BYTES);
        Hysim__Reply *r = dt_wait(&c, 0, HYSIM__WAIT__COND__STREAM_IDLE, 0, 0, 0, false, NULL, 0);
        CHECK(strstr(r->error, "deadlock"), "expected a deadlock error, got \"%s\"", r->error);
        hysim__reply__free_unpacked(r, NULL);
        dt_record(idx, 1);
        return;
    }
    /* rank 1 never joins the collective: it syncs (nothing to do) and leaves */
    CHECK_EQ(wait_now(&c, 0, HYSIM__WAIT__COND__PROCESS_IDLE, 0, 0), 0);
    dt_bye(&c, 0, NULL, 0);
}

static void test_deadlock(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    dt_result *r = dt_run(&sc, 2, child_deadlock, NULL);
    expect_error(r, "deadlock");
    char who[64];
    snprintf(who, sizeof(who), "process %d (server 0", (int)r->pid[0]);
    expect_error(r, who);
    expect_error(r, "waits for stream 0 of GPU 0");
    expect_error(r, "AllReduce on comm 0xc0ffee, seq 0: ranks joined [0], missing [1]");
    CHECK_EQ(r->nvalues[0], 1); /* rank 0 got the error as its reply */
    dt_free(r);
}

/* A Send whose Recv never comes: the deadlock report names the pair. */
static void child_unmatched_send(const char *ep, int idx, void *arg)
{
    (void)arg;
    dt_client c;
    dt_connect(&c, ep, 0, (uint32_t)idx, 1, 0);
    dt_comm_init(&c, 0, (uint32_t)idx, COMM, (uint32_t)idx, 2);
    if (idx == 0) {
        signal(SIGTERM, SIG_IGN);
        dt_collective_ex(&c, 0, 0, 0, COMM, 0, 0, HYSIM__COLL_KIND__SEND, AR_BYTES, 1, 0);
        Hysim__Reply *r = dt_wait(&c, 0, HYSIM__WAIT__COND__STREAM_IDLE, 0, 0, 0, false, NULL, 0);
        CHECK(strstr(r->error, "deadlock"), "expected a deadlock error, got \"%s\"", r->error);
        hysim__reply__free_unpacked(r, NULL);
        dt_record(idx, 1);
        return;
    }
    CHECK_EQ(wait_now(&c, 0, HYSIM__WAIT__COND__PROCESS_IDLE, 0, 0), 0);
    dt_bye(&c, 0, NULL, 0);
}

static void test_unmatched_send(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    dt_result *r = dt_run(&sc, 2, child_unmatched_send, NULL);
    expect_error(r, "deadlock");
    expect_error(r, "Send #0 from rank 0 to rank 1 on comm 0xc0ffee: its Recv is missing");
    CHECK_EQ(r->nvalues[0], 1);
    dt_free(r);
}

static void child_killed(const char *ep, int idx, void *arg)
{
    (void)arg;
    dt_client c;
    dt_connect(&c, ep, 0, (uint32_t)idx, 1, 0);
    dt_comm_init(&c, 0, (uint32_t)idx, COMM, (uint32_t)idx, 2);
    if (idx == 0) {
        dt_collective(&c, 0, 0, 0, COMM, 0, 0, HYSIM__COLL_KIND__ALL_REDUCE, AR_BYTES);
        Hysim__Reply *r = dt_wait(&c, 0, HYSIM__WAIT__COND__STREAM_IDLE, 0, 0, 0, false, NULL, 0);
        CHECK(r->error[0], "expected an error reply");
        hysim__reply__free_unpacked(r, NULL);
        return;
    }
    dt_flush(&c);
    raise(SIGKILL);
}

static void test_killed(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    dt_result *r = dt_run(&sc, 2, child_killed, NULL);
    char who[64];
    snprintf(who, sizeof(who), "process %d (server 0", (int)r->pid[1]);
    expect_error(r, who);
    expect_error(r, "signal 9");
    CHECK(WIFSIGNALED(r->status[1]) && WTERMSIG(r->status[1]) == SIGKILL, "child 1 status 0x%x", r->status[1]);
    dt_free(r);
}

static void child_escalation(const char *ep, int idx, void *arg)
{
    (void)arg;
    if (idx == 0) {
        signal(SIGTERM, SIG_IGN);
        dt_client c;
        dt_connect(&c, ep, 0, 0, 1, 0);
        dt_record(0, 1);
        for (;;)
            pause();
    }
    while (dt_nvalues(0) < 1)
        usleep(1000);
    _exit(3);
}

static void test_kill_escalation(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    dt_result *r = dt_run(&sc, 2, child_escalation, NULL);
    char who[96];
    snprintf(who, sizeof(who), "process %d (server unknown: it never registered) exited with status 3", (int)r->pid[1]);
    expect_error(r, who);
    CHECK(WIFSIGNALED(r->status[0]) && WTERMSIG(r->status[0]) == SIGKILL, "child 0 status 0x%x", r->status[0]);
    CHECK(r->wall_s >= 1.9 && r->wall_s < 10, "SIGKILL after %.2f s, expected 2 s", r->wall_s);
    dt_free(r);
}

static void child_no_bye(const char *ep, int idx, void *arg)
{
    (void)arg;
    (void)idx;
    dt_client c;
    dt_connect(&c, ep, 0, 0, 1, 0);
    dt_kernel(&c, 0, 0, 0);
    dt_flush(&c);
    _exit(0);
}

static void test_no_bye(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    dt_result *r = dt_run(&sc, 1, child_no_bye, NULL);
    char who[64];
    snprintf(who, sizeof(who), "process %d (server 0", (int)r->pid[0]);
    expect_error(r, who);
    expect_error(r, "closed its connection without Bye");
    dt_free(r);
}

/* One protocol violation per run; the daemon must fail the run, not crash. */
typedef struct violation {
    const char *name, *expect;
} violation;

static const violation violations[] = {
    {"op before Register", NULL}, /* refused without failing the run */
    {"GPU out of range", "op on GPU 2, outside its GPUs 0..0"},
    {"host time backwards", "host time went backwards"},
    {"garbage frame", "undecodable frame"},
    {"oversized frame", "bad frame (too large)"},
    {"Register out of range", "Register of server 0, GPUs 3..4"},
    {"op without kind", "op without a kind"},
    {"unknown stream", "op on stream 7 of GPU 0, which was never created"},
    {"message while waiting", "a message while its Wait is unanswered"},
    {"collective without CommInit", "which it never joined (no CommInit)"},
    {"wrong seq", "expected seq 0"},
    {"unsupported collective", "hysim: collective kind 99 is not supported yet"},
    {"send to a peer out of range", "Send on comm 0xc0ffee with peer 2 of 2 ranks"},
    {"broadcast root out of range", "Broadcast on comm 0xc0ffee with root 5 of 2 ranks"},
    {"op reaching its GPU too late", "op reaches its GPU 1000000001 ns after its host time, more than a second"},
    {"sleep as a query", "an UNTIL Wait (a sleep) cannot be a query"},
};

static void child_violation(const char *ep, int idx, void *arg)
{
    (void)idx;
    int which = *(const int *)arg;
    dt_client c;
    char err[256];
    if (which == 0) {
        memset(&c, 0, sizeof(c));
        c.fd = hs_transport_connect(ep, err, sizeof(err));
        CHECK(c.fd >= 0, "%s", err);
        dt_kernel(&c, 0, 0, 0);
        dt_flush(&c);
    } else if (which == 5) {
        memset(&c, 0, sizeof(c));
        c.fd = hs_transport_connect(ep, err, sizeof(err));
        Hysim__Register reg = HYSIM__REGISTER__INIT;
        reg.first_gpu = 3;
        reg.gpu_count = 2;
        Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
        m.msg_case = HYSIM__CLIENT_MSG__MSG_REGISTER;
        m.register_ = &reg;
        CHECK(hs_frame_send_client_msg(c.fd, &m, err, sizeof(err)) == 0, "%s", err);
    } else {
        dt_connect(&c, ep, 0, 0, 1, 0);
        switch (which) {
        case 1: dt_kernel(&c, 0, 2, 0); break;
        case 2:
            dt_kernel(&c, 1000, 0, 0);
            dt_kernel(&c, 500, 0, 0);
            break;
        case 3: dt_send_raw(&c, "\x05\x00\x00\x00\xff\xff\xff\xff\xff", 9); break;
        case 4: dt_send_raw(&c, "\xff\xff\xff\xff", 4); break;
        case 6: dt_raw_op(&c, 0, 0); break;
        case 7: dt_kernel(&c, 0, 0, 7); break;
        case 8: {
            /* a Wait, then at once (one write: they arrive together) a Bye */
            Hysim__Wait w = HYSIM__WAIT__INIT;
            w.cond = HYSIM__WAIT__COND__PROCESS_IDLE;
            Hysim__Bye b = HYSIM__BYE__INIT;
            Hysim__ClientMsg m[2] = {HYSIM__CLIENT_MSG__INIT, HYSIM__CLIENT_MSG__INIT};
            m[0].msg_case = HYSIM__CLIENT_MSG__MSG_WAIT;
            m[0].wait = &w;
            m[1].msg_case = HYSIM__CLIENT_MSG__MSG_BYE;
            m[1].bye = &b;
            uint8_t buf[256];
            size_t at = 0;
            for (int i = 0; i < 2; i++) {
                size_t n = hysim__client_msg__pack(&m[i], buf + at + 4);
                buf[at] = (uint8_t)n; /* small: one length byte, then three zeros */
                buf[at + 1] = buf[at + 2] = buf[at + 3] = 0;
                at += 4 + n;
            }
            dt_send_raw(&c, buf, at);
            break;
        }
        case 9: dt_collective(&c, 0, 0, 0, COMM, 0, 0, HYSIM__COLL_KIND__ALL_REDUCE, 8); break;
        case 10:
            dt_comm_init(&c, 0, 0, COMM, 0, 1);
            dt_collective(&c, 0, 0, 0, COMM, 0, 3, HYSIM__COLL_KIND__ALL_REDUCE, 8);
            break;
        case 11:
            dt_comm_init(&c, 0, 0, COMM, 0, 1);
            dt_collective(&c, 0, 0, 0, COMM, 0, 0, (Hysim__CollKind)99, 8);
            break;
        case 12:
        case 13:
            dt_comm_init(&c, 0, 0, COMM, 0, 2); /* rank 1 never needed: both fail on attach */
            if (which == 12)
                dt_collective_ex(&c, 0, 0, 0, COMM, 0, 0, HYSIM__COLL_KIND__SEND, 8, 2, 0);
            else
                dt_collective_ex(&c, 0, 0, 0, COMM, 0, 0, HYSIM__COLL_KIND__BROADCAST, 8, 5, 0);
            break;
        case 14:
            dt_kernel(&c, 0, 0, 0);
            c.ops[c.nops - 1]->reach_ns = 1000000001;
            break;
        case 15: {
            Hysim__Reply *r = dt_wait(&c, 0, HYSIM__WAIT__COND__UNTIL, 0, 0, 0, true, NULL, 0);
            hysim__reply__free_unpacked(r, NULL);
            break;
        }
        }
        dt_flush(&c);
    }
    /* wait for the daemon to drop us (it may also answer a pending Wait with the error) */
    Hysim__Reply *r;
    while ((r = dt_read_reply(&c)) != NULL)
        hysim__reply__free_unpacked(r, NULL);
}

static void test_violations(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    for (int i = 0; i < (int)(sizeof(violations) / sizeof(violations[0])); i++) {
        printf("violation: %s\n", violations[i].name);
        dt_result *r = dt_run(&sc, 1, child_violation, &i);
        if (i == 0) {
            /* A connection that never registered is not known to be the program's: it is
             * refused and counted, and the run goes on (tests/reliability covers more). */
            CHECK(r->rc == 0 && r->sum.rejected_unknown == 1, "op before Register: rc %d, rejected %llu, \"%s\"", r->rc,
                  (unsigned long long)r->sum.rejected_unknown, r->sum.error);
        } else {
            expect_error(r, violations[i].expect);
        }
        dt_free(r);
    }
}

/* ------------------------------------------------------------- setup and summary */

static void child_setup(const char *ep, int idx, void *arg)
{
    (void)arg;
    (void)idx;
    dt_client c;
    dt_connect(&c, ep, 0, 1, 3, 0);
    CHECK_EQ(c.setup.epoch_ns, 1234567890123ull);
    uint64_t peaks[] = {5, 900, 7};
    dt_bye(&c, 123456, peaks, 3);
}

static void test_setup_summary(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    setenv("HYSIM_EPOCH_NS", "1234567890123", 1);
    dt_result *r = dt_run(&sc, 1, child_setup, NULL);
    expect_ok(r);
    CHECK_EQ(r->sum.peak_memory_bytes_max, 900);
    CHECK_EQ(r->sum.sim_end_ps, 123456000);
    CHECK_EQ(r->sum.sessions, 1);
    dt_free(r);

    char err[256] = "";
    setenv("HYSIM_EPOCH_NS", "soon", 1);
    CHECK(hs_daemon_create(&sc, "unix:/tmp/hysimd-test-epoch.sock", err, sizeof(err)) == NULL, "bad epoch");
    CHECK(strstr(err, "HYSIM_EPOCH_NS"), "err: %s", err);
    unsetenv("HYSIM_EPOCH_NS");
}

/* ------------------------------------------------------------- determinism */

/* Ranks reach the collectives at different times, mixed with kernels, events and peer copies. */
static void child_mixed(const char *ep, int idx, void *arg)
{
    const ar_arg *a = arg;
    uint32_t g = (uint32_t)idx;
    dt_client c;
    jitter(a, idx, 0);
    dt_connect(&c, ep, 0, g, 1, 0);
    dt_comm_init(&c, 0, g, COMM, g, (uint32_t)a->n);
    dt_stream_create(&c, 0, g, 1, true);
    for (int k = 0; k <= idx; k++)
        dt_kernel(&c, (uint64_t)k * 100, g, 1);
    dt_flush(&c);
    jitter(a, idx, 1);
    dt_record_event(&c, 500, g, 1, 1);
    dt_wait_event(&c, 500, g, 0, 1);
    dt_record_event(&c, 500, g, 0, 2);
    dt_collective(&c, 500, g, 0, COMM, g, 0, HYSIM__COLL_KIND__ALL_REDUCE, 3000000 + 1);
    dt_record_event(&c, 500, g, 0, 3);
    dt_copy(&c, 600, g, 1, HYSIM__COPY_KIND__D2D, 500000, (g + 1) % (uint32_t)a->n);
    dt_flush(&c);
    jitter(a, idx, 2);
    dt_collective(&c, 700, g, 0, COMM, g, 1, HYSIM__COLL_KIND__ALL_REDUCE, 65536);
    uint64_t timed[] = {2, 3};
    Hysim__Reply *r = dt_wait(&c, 700, HYSIM__WAIT__COND__EVENT_DONE, 0, 0, 3, false, timed, 2);
    CHECK(r->done && r->n_event_times == 2, "event wait: %s", r->error);
    uint64_t h = r->now_ns;
    dt_record(idx, h);
    dt_record(idx, r->event_times[0]->time_ps);
    dt_record(idx, r->event_times[1]->time_ps);
    hysim__reply__free_unpacked(r, NULL);
    jitter(a, idx, 3);
    uint64_t t = wait_now(&c, h, HYSIM__WAIT__COND__DEVICE_IDLE, g, 0);
    dt_record(idx, t);
    dt_bye(&c, t, NULL, 0);
}

static void test_determinism(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    ar_arg a = {.n = 4}, b = {.n = 4, .jitter = true};
    dt_result *r1 = dt_run(&sc, 4, child_mixed, &a);
    dt_result *r2 = dt_run(&sc, 4, child_mixed, &b);
    expect_ok(r1);
    expect_ok(r2);
    for (int i = 0; i < 4; i++) {
        CHECK_EQ(r1->nvalues[i], 4);
        CHECK_EQ(r2->nvalues[i], 4);
        for (int j = 0; j < 4; j++) {
            CHECK_EQ(r1->values[i][j], r2->values[i][j]);
            printf("rank %d value %d: %llu\n", i, j, (unsigned long long)r1->values[i][j]);
        }
    }
    CHECK_EQ(r1->sum.sim_end_ps, r2->sum.sim_end_ps);
    CHECK_EQ(r1->sum.flows, r2->sum.flows);
    CHECK_EQ(r1->sum.packet_hops, r2->sum.packet_hops);
    CHECK_EQ(r1->sum.collectives, 2);
    CHECK_EQ(r1->sum.kernels, 1 + 2 + 3 + 4);
    CHECK_EQ(r1->sum.copies, 4);
    dt_free(r1);
    dt_free(r2);
}

/* ------------------------------------------------------------- main */

/*
 * Frames that hysimd reads while it simulates (it drains the sockets every so
 * many events so that clients never block on a full socket) must be handled
 * before it sleeps in poll: a Wait that arrived during a long stretch of
 * simulation once sat in the session's reader while the client waited forever.
 */
#define BUFFERED_OPS 100000ull

static void child_buffered_wait(const char *ep, int idx, void *arg)
{
    (void)idx;
    (void)arg;
    dt_client c;
    dt_connect(&c, ep, 0, 0, 1, 0);
    /* Event records complete at their host time, so the daemon simulates
     * while the small frames stream in, and reads the Wait mid-simulation. */
    uint64_t h = 0;
    for (int round = 0; round < 5; round++) {
        for (uint64_t i = 0; i < BUFFERED_OPS; i++) {
            h += 100;
            dt_record_event(&c, h, 0, 0, 1);
            if (c.nops == 256)
                dt_flush(&c);
        }
        CHECK_EQ(dt_sync_stream(&c, h, 0, 0), h);
    }
    dt_bye(&c, h, NULL, 0);
}

static void test_buffered_wait(void)
{
    hs_scenario sc;
    dt_scenario(&sc);
    dt_result *r = dt_run(&sc, 1, child_buffered_wait, NULL);
    expect_ok(r);
    dt_free(r);
}

/* ------------------------------------------------------------- NCCL tuner */

static hs_nccl_plan tuner_plan(const hs_scenario *sc, enum hs_coll_kind k, uint64_t bytes, uint32_t n, uint32_t nodes,
                               uint32_t env_algo, uint32_t env_proto)
{
    hs_nccl_plan p;
    char err[256] = "";
    CHECK(hs_tuner_plan(sc, k, bytes, n, nodes, env_algo, env_proto, &p, err, sizeof err) == 0, "tuner: %s", err);
    return p;
}

/*
 * The tuner against NCCL 2.28's logged choice on 2 × H200
 * (bench/real/data/allreduce_nccl_debug_h200x2.txt): AllReduce RING/LL up to
 * 1 MiB, RING/SIMPLE from 4 MiB; 8 channels at 64 KiB, all 24 from 1 MiB.
 * Then the overrides, the channels across servers, and the wire factors.
 */
static void test_tuner(void)
{
    hs_scenario sc;
    memset(&sc, 0, sizeof sc);
    sc.servers.count = 1;
    sc.servers.gpus_per_server = 2;
    sc.nvlink.gbps_per_gpu = 3600;
    sc.nics.per_server = 8;
    sc.nics.gbps = 400;
    sc.nccl.calibrated = true;
    const enum hs_coll_kind AR = HS_COLL_ALL_REDUCE;
    static const struct {
        uint64_t bytes;
        enum hs_nccl_proto proto;
        uint32_t channels;
    } want[] = {
        {64 << 10, HS_NCCL_PROTO_LL, 8},
        {1 << 20, HS_NCCL_PROTO_LL, 24},
        {4 << 20, HS_NCCL_PROTO_SIMPLE, 24},
        {1ull << 30, HS_NCCL_PROTO_SIMPLE, 24},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        hs_nccl_plan p = tuner_plan(&sc, AR, want[i].bytes, 2, 1, 0, 0);
        CHECK_EQ(p.algo, HS_NCCL_ALGO_RING);
        CHECK_EQ(p.proto, want[i].proto);
        CHECK_EQ(p.channels, want[i].channels);
    }
    /* NCCL_PROTO=LL128 from the environment; the scenario's proto wins over it */
    CHECK_EQ(tuner_plan(&sc, AR, 1ull << 30, 2, 1, 0, HS_NCCL_PROTO_LL128).proto, HS_NCCL_PROTO_LL128);
    sc.nccl.proto = HS_NCCL_PROTO_SIMPLE;
    CHECK_EQ(tuner_plan(&sc, AR, 64 << 10, 2, 1, 0, HS_NCCL_PROTO_LL).proto, HS_NCCL_PROTO_SIMPLE);
    sc.nccl.proto = HS_NCCL_PROTO_AUTO;
    /* across servers: one channel per NIC rail; a forced count wins */
    CHECK_EQ(tuner_plan(&sc, AR, 1ull << 30, 16, 2, 0, 0).channels, 8);
    sc.nccl.channels = 3;
    CHECK_EQ(tuner_plan(&sc, AR, 1ull << 30, 16, 2, 0, 0).channels, 3);
    /* bare link model: LL doubles the bytes, LL128 adds 8 in 128, no latencies */
    sc.nccl.calibrated = false;
    hs_nccl_plan ll = tuner_plan(&sc, AR, 1ull << 30, 2, 1, 0, HS_NCCL_PROTO_LL);
    CHECK(ll.wire_factor == 2.0 && ll.start_ps == 0 && ll.hop_ps == 0, "LL bare: factor %g", ll.wire_factor);
    CHECK(tuner_plan(&sc, AR, 1ull << 30, 2, 1, 0, HS_NCCL_PROTO_LL128).wire_factor == 128.0 / 120.0, "LL128 factor");
    /* Tree forced for an all-reduce across servers (tests/nccl_algos checks its flows) */
    CHECK_EQ(tuner_plan(&sc, AR, 1 << 20, 16, 2, HS_NCCL_ALGO_TREE, 0).algo, HS_NCCL_ALGO_TREE);
}

static const dt_case cases[] = {
    {"nccl_tuner", test_tuner},
    {"kernel_sync", test_kernel_sync},
    {"buffered_wait", test_buffered_wait},
    {"streams", test_streams},
    {"kernel_gap", test_kernel_gap},
    {"events", test_events},
    {"wait_event", test_wait_event},
    {"copies", test_copies},
    {"queued_copies", test_queued_copies},
    {"allreduce2", test_allreduce2},
    {"allreduce4", test_allreduce4},
    {"allreduce_one_process", test_allreduce_one_process},
    {"query_exact", test_query_exact},
    {"allgather4", test_allgather4},
    {"reduce_scatter4", test_reduce_scatter4},
    {"broadcast4", test_broadcast4},
    {"reduce4", test_reduce4},
    {"alltoall4", test_alltoall4},
    {"sendrecv", test_sendrecv},
    {"sendrecv_self", test_sendrecv_self},
    {"copy_direction", test_copy_direction},
    {"deadlock", test_deadlock},
    {"unmatched_send", test_unmatched_send},
    {"killed", test_killed},
    {"kill_escalation", test_kill_escalation},
    {"no_bye", test_no_bye},
    {"sleep", test_sleep},
    {"wake", test_wake},
    {"answer_order", test_answer_order},
    {"values_time", test_values_time},
    {"violations", test_violations},
    {"setup_summary", test_setup_summary},
    {"determinism", test_determinism},
};

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    return dt_main(argc, argv, cases, DT_NCASES(cases));
}
