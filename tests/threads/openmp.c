/*
 * OpenMP threads, one GPU each, that synchronise their streams and meet in
 * libgomp's team barriers (interpose/host/openmp.c), on barrier_gpus.yaml: every
 * kernel K_NS long, host time zero, so every time below is exact. The
 * threads' syncs end at different simulated times; a barrier opens once the
 * last one's has, which hysimd can simulate only if the threads already in
 * it count as waiting (before: the first to arrive held the others' syncs
 * back, and the run stalled).
 *
 *   openmp barrier   a parallel region of NT threads: thread g runs g + 1
 *                    kernels and a sync, meets the others at an explicit
 *                    `omp barrier` (all leave at NT K), runs NT - g more and
 *                    a sync; the region ends at 2 NT K
 *   openmp loop      `omp for schedule(dynamic, 1)` over NT items, item i
 *                    on GPU i (i + 1 kernels and a sync), inside a region:
 *                    every thread leaves the loop's barrier at NT K
 *   openmp for       `omp parallel for` over NT items, item i on GPU i
 *                    (i + 1 kernels and a sync): the region ends at NT K
 *   openmp critical  each thread runs 2 kernels and a sync on its GPU
 *                    inside `omp critical`, then inside `omp critical(named)`:
 *                    the threads take turns, so the first sections end at
 *                    2 K, 4 K, ... 2 NT K, in whichever order the threads
 *                    got in, and the named ones, which each thread enters
 *                    as it leaves the first, at 4 K, 6 K, ... (2 NT + 2) K
 *   openmp lock      the same with an omp_lock_t, then an omp_nest_lock_t
 *                    set twice (and tested once more: depth 2 after one
 *                    unset) around the second batch
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "test_check.h"
#include "gpu_thread_kit.h"

#define NT   3
#define K_NS 1000000ll /* barrier_gpus.yaml: compute.default_kernel_us */

static cudaStream_t g_stream[NT];
static long long g_start;

/* n kernels on GPU g's stream and a sync; the time it returned, from the start. */
static long long work(int g, int n)
{
    CHECK(cudaSetDevice(g) == cudaSuccess, "cudaSetDevice(%d)", g);
    launch(g_stream[g], n);
    CHECK(cudaStreamSynchronize(g_stream[g]) == cudaSuccess, "sync of GPU %d", g);
    return now_ns() - g_start;
}

static int by_time(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static void expect(const char *what, int g, long long t, long long want)
{
    printf("%s %d: +%lld ns\n", what, g, t);
    CHECK(t == want, "%s %d at %lld ns, not %lld", what, g, t, want);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    register_kernel();
    for (int g = 0; g < NT; g++)
        CHECK(cudaSetDevice(g) == cudaSuccess && cudaStreamCreate(&g_stream[g]) == cudaSuccess, "stream %d", g);
    long long sync[NT] = {0}, met[NT] = {0};
    g_start = now_ns();
    if (!strcmp(mode, "barrier")) {
#pragma omp parallel num_threads(NT)
        {
            int g = omp_get_thread_num();
            sync[g] = work(g, g + 1);
#pragma omp barrier
            met[g] = now_ns() - g_start;
            work(g, NT - g);
        }
        for (int g = 0; g < NT; g++) {
            expect("sync of thread", g, sync[g], (g + 1) * K_NS);
            expect("barrier left by thread", g, met[g], NT * K_NS);
        }
        expect("region ended, thread", 0, now_ns() - g_start, 2 * NT * K_NS);
    } else if (!strcmp(mode, "loop")) {
#pragma omp parallel num_threads(NT)
        {
#pragma omp for schedule(dynamic, 1)
            for (int i = 0; i < NT; i++)
                sync[i] = work(i, i + 1);
            met[omp_get_thread_num()] = now_ns() - g_start;
        }
        for (int g = 0; g < NT; g++) {
            expect("sync of item", g, sync[g], (g + 1) * K_NS);
            expect("loop left by thread", g, met[g], NT * K_NS);
        }
    } else if (!strcmp(mode, "for")) {
#pragma omp parallel for num_threads(NT)
        for (int i = 0; i < NT; i++)
            sync[i] = work(i, i + 1);
        for (int g = 0; g < NT; g++)
            expect("sync of item", g, sync[g], (g + 1) * K_NS);
        expect("region ended, thread", 0, now_ns() - g_start, NT * K_NS);
    } else if (!strcmp(mode, "critical")) {
#pragma omp parallel num_threads(NT)
        {
            int g = omp_get_thread_num();
#pragma omp critical
            sync[g] = work(g, 2);
#pragma omp critical(named)
            met[g] = work(g, 2);
        }
        qsort(sync, NT, sizeof sync[0], by_time);
        qsort(met, NT, sizeof met[0], by_time);
        for (int k = 0; k < NT; k++) {
            expect("critical section ended, turn", k, sync[k], 2 * (k + 1) * K_NS);
            expect("named critical section ended, turn", k, met[k], 2 * (k + 2) * K_NS);
        }
    } else if (!strcmp(mode, "lock")) {
        omp_lock_t lock;
        omp_nest_lock_t nest;
        omp_init_lock(&lock);
        omp_init_nest_lock(&nest);
#pragma omp parallel num_threads(NT)
        {
            int g = omp_get_thread_num();
            omp_set_lock(&lock);
            sync[g] = work(g, 2);
            omp_unset_lock(&lock);
            omp_set_nest_lock(&nest);
            omp_set_nest_lock(&nest);
            met[g] = work(g, 2);
            omp_unset_nest_lock(&nest);
            CHECK(omp_test_nest_lock(&nest) == 2, "the owner's test of its nest lock");
            omp_unset_nest_lock(&nest);
            omp_unset_nest_lock(&nest);
        }
        CHECK(omp_test_lock(&lock) == 1, "omp_test_lock of a free lock");
        omp_unset_lock(&lock);
        omp_destroy_lock(&lock);
        omp_destroy_nest_lock(&nest);
        qsort(sync, NT, sizeof sync[0], by_time);
        qsort(met, NT, sizeof met[0], by_time);
        for (int k = 0; k < NT; k++) {
            expect("locked section ended, turn", k, sync[k], 2 * (k + 1) * K_NS);
            expect("nested section ended, turn", k, met[k], 2 * (k + 2) * K_NS);
        }
    } else {
        fprintf(stderr, "usage: openmp barrier|loop|for|critical|lock\n");
        return 2;
    }
    printf("openmp %s done\n", mode);
    return 0;
}
