/*
 * A program that sleeps, beside a watchdog thread (interpose/host/sleep.c,
 * timed_waits.c). The main thread issues GPU work (memsets), then sleeps
 * with usleep(200 ms), nanosleep(300 ms) and sleep(1), reading
 * CLOCK_MONOTONIC around each; a watchdog thread that makes no CUDA call
 * loops on a 100 ms pthread_cond_clockwait until the main thread is done,
 * as PyTorch's and many servers' watchdogs do (std::condition_variable::
 * wait_for). Prints what each sleep read on the program's clock and how
 * often the watchdog woke; `hysim run` prints the wall time.
 *
 *   hysim run scenarios/h200x8.yaml -- build/bin/sleep_watchdog     # with the watchdog
 *   hysim run scenarios/h200x8.yaml -- build/bin/sleep_watchdog 0   # without
 *
 * On a real machine the sleeps read their lengths and the watchdog wakes
 * about 15 times (1.5 s / 100 ms).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_stop;
static long g_wakeups;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void *watchdog(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&g_mu);
    while (!g_stop) {
        struct timespec d;
        clock_gettime(CLOCK_MONOTONIC, &d);
        d.tv_nsec += 100000000;
        if (d.tv_nsec >= 1000000000) {
            d.tv_sec++;
            d.tv_nsec -= 1000000000;
        }
        pthread_cond_clockwait(&g_cv, &g_mu, CLOCK_MONOTONIC, &d);
        g_wakeups++;
    }
    pthread_mutex_unlock(&g_mu);
    return NULL;
}

int main(int argc, char **argv)
{
    int with_watchdog = argc < 2 || atoi(argv[1]) != 0;
    void *p;
    if (cudaMalloc(&p, 1 << 30) != cudaSuccess) {
        fprintf(stderr, "sleep_watchdog: cudaMalloc failed\n");
        return 1;
    }
    pthread_t t;
    if (with_watchdog)
        pthread_create(&t, NULL, watchdog, NULL);
    double t0 = now_ms();
    for (int i = 0; i < 50; i++)
        cudaMemset(p, 0, 1 << 30);
    cudaDeviceSynchronize();
    double t1 = now_ms();
    usleep(200000);
    double t2 = now_ms();
    struct timespec d = {0, 300000000};
    nanosleep(&d, NULL);
    double t3 = now_ms();
    sleep(1);
    double t4 = now_ms();
    pthread_mutex_lock(&g_mu);
    g_stop = 1;
    pthread_cond_signal(&g_cv);
    pthread_mutex_unlock(&g_mu);
    if (with_watchdog)
        pthread_join(t, NULL);
    printf("GPU work %.3f ms; usleep(200 ms) read %.3f ms, nanosleep(300 ms) %.3f ms, sleep(1) %.3f ms; "
           "watchdog woke %ld times\n",
           t1 - t0, t2 - t1, t3 - t2, t4 - t3, g_wakeups);
    cudaFree(p);
    return 0;
}
