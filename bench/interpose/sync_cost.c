/*
 * sync_cost: what libhysim.so's wrapped condition variables and barriers
 * (interpose/host/host_sync.c) cost two threads that meet outside CUDA. Two
 * threads play ROUNDS rounds of
 *   - a condition-variable ping-pong (a turn under a mutex, each waits for
 *     its turn in pthread_cond_wait and signals the other's): one round trip
 *     is A -> B -> A;
 *   - a pthread_barrier_t of 2;
 *   - a mutex locked and unlocked by one thread while the other waits
 *     (uncontended: the wrapped pthread_mutex_lock's fast path, interpose/host/mutex.c),
 *     in nanoseconds per lock + unlock;
 *   - a mutex both threads lock and unlock in turn as fast as they can
 *     (contended: a thread that finds it taken blocks listed, mutex.c).
 * The wall time per round, on the real clock (a raw clock_gettime system
 * call: under hysim the libc clocks read simulated time), in microseconds.
 *
 *   sync_cost quiet [ROUNDS]   the threads make no CUDA call
 *   sync_cost gpu [ROUNDS]     each first makes one (cudaStreamQuery), so
 *                              under hysim they count as GPU threads whose
 *                              blocked waits hysimd is told of
 *
 * sync_cost links our libcudart.so.13, so libhysim.so's wrappers are in it
 * even when run plain (they pass straight through then); sync_cost_libc is
 * the same program without CUDA or libhysim.so (quiet only): libc's own
 * cost. Run both plain and sync_cost under `hysim run
 * bench/interpose/sync_cost.yaml --`; bench/RESULTS.md has the figures.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef SYNC_COST_NO_CUDA
#include <cuda_runtime_api.h>
#endif

static int g_rounds = 20000;
static int g_gpu;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv[2] = {PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER};
static int g_turn;
static pthread_barrier_t g_barrier, g_start;
static pthread_mutex_t g_shared = PTHREAD_MUTEX_INITIALIZER;
static long g_count;
static double g_pingpong_us, g_barrier_us, g_mutex_ns, g_contended_us;

static double real_us(void)
{
    struct timespec t;
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static void *player(void *arg)
{
    int me = (int)(long)arg;
#ifndef SYNC_COST_NO_CUDA
    if (g_gpu) /* its one CUDA call: under hysim it counts as a GPU thread from here */
        (void)cudaStreamQuery(NULL);
#endif
    pthread_barrier_wait(&g_start);
    double t0 = real_us();
    for (int r = 0; r < g_rounds; r++) {
        pthread_mutex_lock(&g_mu);
        while (g_turn != me)
            pthread_cond_wait(&g_cv[me], &g_mu);
        g_turn = 1 - me;
        pthread_cond_signal(&g_cv[1 - me]);
        pthread_mutex_unlock(&g_mu);
    }
    double t1 = real_us();
    pthread_barrier_wait(&g_start);
    for (int r = 0; r < g_rounds; r++)
        pthread_barrier_wait(&g_barrier);
    double t2 = real_us();
    pthread_barrier_wait(&g_start);
    double t3 = real_us();
    if (me == 0) /* uncontended: the other waits in the barrier below */
        for (int r = 0; r < 100 * g_rounds; r++) {
            pthread_mutex_lock(&g_shared);
            g_count++;
            pthread_mutex_unlock(&g_shared);
        }
    double t4 = real_us();
    pthread_barrier_wait(&g_start);
    double t5 = real_us();
    for (int r = 0; r < g_rounds; r++) { /* contended: both at once */
        pthread_mutex_lock(&g_shared);
        g_count++;
        pthread_mutex_unlock(&g_shared);
    }
    double t6 = real_us();
    if (me == 0) {
        g_pingpong_us = (t1 - t0) / g_rounds;
        g_barrier_us = (t2 - t1) / g_rounds;
        g_mutex_ns = (t4 - t3) * 1e3 / (100.0 * g_rounds);
        g_contended_us = (t6 - t5) / g_rounds;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "quiet") && strcmp(argv[1], "gpu")) || (argc > 2 && atoi(argv[2]) <= 0)) {
        fprintf(stderr, "usage: sync_cost quiet|gpu [ROUNDS]\n");
        return 2;
    }
    g_gpu = !strcmp(argv[1], "gpu");
#ifdef SYNC_COST_NO_CUDA
    if (g_gpu) {
        fprintf(stderr, "sync_cost_libc: no CUDA here; use sync_cost gpu\n");
        return 2;
    }
#endif
    if (argc > 2)
        g_rounds = atoi(argv[2]);
    pthread_barrier_init(&g_barrier, NULL, 2);
    pthread_barrier_init(&g_start, NULL, 2);
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, player, (void *)i) != 0) {
            fprintf(stderr, "sync_cost: pthread_create failed\n");
            return 1;
        }
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("sync_cost %s, %d rounds: condvar ping-pong %.3f us per round trip, barrier of 2 %.3f us per round, "
           "mutex lock + unlock %.1f ns alone, %.3f us contended by 2\n",
           argv[1], g_rounds, g_pingpong_us, g_barrier_us, g_mutex_ns, g_contended_us);
    if (g_count != 102L * g_rounds) {
        fprintf(stderr, "sync_cost: the mutex counted %ld, not %ld\n", g_count, 102L * g_rounds);
        return 1;
    }
    return 0;
}
