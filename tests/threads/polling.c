/*
 * Loops that poll cudaStreamQuery / cudaEventQuery until the work is done,
 * or read the clock until a deadline, under barrier_gpus.yaml's host_time
 * zero (polls and clock reads cost no host time) and kernels K_NS long:
 * each loop must end, at the simulated time its work does
 * (interpose/core/ops.c, query_locked) or at its deadline
 * (interpose/host/host_clock.c, note_clock_read). Before, the host clock never
 * moved in the loop, the simulation could not pass it, and the loop spun
 * forever.
 *
 *   polling stream   3 kernels, then cudaStreamQuery until done: 3 K
 *   polling event    2 more kernels and an event, cudaEventQuery until
 *                    done: 5 K
 *   polling round    2 kernels on GPU 0's stream, 4 on GPU 1's, and a loop
 *                    that queries both in turn until both are done: 4 K
 *   polling clock    3 kernels and a sync, then a loop that reads
 *                    CLOCK_MONOTONIC until SPIN_NS have passed: it ends
 *                    at 3 K + SPIN_NS (a multiple of the clock's step)
 */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "test_check.h"
#include "gpu_thread_kit.h"

#define K_NS    1000000ll /* barrier_gpus.yaml: compute.default_kernel_us */
#define SPIN_NS 1000000ll

static long long g_start;

static void ends_at(const char *what, long long kernels, long polls)
{
    long long t = now_ns() - g_start;
    printf("%s: done at +%lld ns after %ld unfinished polls\n", what, t, polls);
    CHECK(t == kernels * K_NS, "%s ended at %lld ns, not %lld", what, t, kernels * K_NS);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    register_kernel();
    cudaStream_t s[2];
    CHECK(cudaSetDevice(0) == cudaSuccess && cudaStreamCreate(&s[0]) == cudaSuccess, "stream of GPU 0");
    CHECK(cudaSetDevice(1) == cudaSuccess && cudaStreamCreate(&s[1]) == cudaSuccess, "stream of GPU 1");
    CHECK(cudaSetDevice(0) == cudaSuccess, "cudaSetDevice(0)");
    g_start = now_ns();
    long polls = 0;
    cudaError_t e;
    if (!strcmp(mode, "stream") || !strcmp(mode, "event")) {
        launch(s[0], 3);
        while ((e = cudaStreamQuery(s[0])) == cudaErrorNotReady)
            polls++;
        CHECK(e == cudaSuccess, "cudaStreamQuery: %d", (int)e);
        ends_at("stream", 3, polls);
    }
    if (!strcmp(mode, "event")) {
        cudaEvent_t ev;
        CHECK(cudaEventCreate(&ev) == cudaSuccess, "event");
        launch(s[0], 2);
        CHECK(cudaEventRecord(ev, s[0]) == cudaSuccess, "record");
        polls = 0;
        while ((e = cudaEventQuery(ev)) == cudaErrorNotReady)
            polls++;
        CHECK(e == cudaSuccess, "cudaEventQuery: %d", (int)e);
        ends_at("event", 5, polls);
    } else if (!strcmp(mode, "round")) {
        launch(s[0], 2);
        CHECK(cudaSetDevice(1) == cudaSuccess, "cudaSetDevice(1)");
        launch(s[1], 4);
        while (cudaStreamQuery(s[0]) == cudaErrorNotReady || cudaStreamQuery(s[1]) == cudaErrorNotReady)
            polls++;
        ends_at("round", 4, polls);
    } else if (!strcmp(mode, "clock")) {
        launch(s[0], 3);
        CHECK(cudaStreamSynchronize(s[0]) == cudaSuccess, "sync");
        long long from = now_ns(), t;
        while ((t = now_ns()) - from < SPIN_NS)
            polls++;
        printf("clock: the loop ended at +%lld ns after %ld reads\n", t - g_start, polls);
        CHECK(t - g_start == 3 * K_NS + SPIN_NS, "the loop ended at %lld ns, not %lld", t - g_start,
              3 * K_NS + SPIN_NS);
    } else if (strcmp(mode, "stream")) {
        fprintf(stderr, "usage: polling stream|event|round|clock\n");
        return 2;
    }
    printf("polling %s done\n", mode);
    return 0;
}
