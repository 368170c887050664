/*
 * Threads that meet outside CUDA: NT threads, one GPU each, every kernel
 * K_NS long (barrier_gpus.yaml). Each iteration, thread g launches g + 1
 * kernels on its stream, cudaStreamSynchronize's it (its sync ends g + 1
 * kernels after the iteration began), then meets the others in a barrier
 * and reads CLOCK_MONOTONIC. The threads' syncs end at different simulated
 * times: the barrier only opens once the last one's has, which hysimd can
 * simulate only if the threads already in the barrier count as waiting.
 * The main thread issues no GPU work: it starts the threads and joins them.
 *
 *   barrier_gpus barrier   a pthread_barrier_t
 *   barrier_gpus condvar   a barrier of a mutex and a condition variable
 *                          (a generation count, as nccl-tests -t builds it)
 *   barrier_gpus sem       GPU 0's thread collects NT - 1 sem_posts, then
 *                          posts NT - 1 times to let the others go
 *   barrier_gpus futex     a barrier on a futex, made through syscall(2) as
 *                          libstdc++'s std::barrier and std::latch are: a
 *                          generation word that the last to arrive bumps
 *                          and wakes (FUTEX_WAKE, INT_MAX; without the
 *                          private flag, as Debian 12's libstdc++ calls it)
 *   barrier_gpus loader    barrier, and before each iteration a thread takes
 *                          an item that a thread making no CUDA call hands
 *                          out (NT per iteration, under a condition
 *                          variable): a thread blocked waiting for it is
 *                          released by a thread hysimd does not see
 *   barrier_gpus quiet     the main thread does the GPU work alone (GPU 0,
 *                          NT kernels, then a sync, each iteration) while NT
 *                          threads that never make a CUDA call meet in a
 *                          condition-variable barrier and a pthread_barrier_t
 *
 * Prints, per iteration and thread, the host clock when its sync returned and
 * when it left the barrier (quiet: the main thread's clock after each sync),
 * relative to the clock when the threads first met; check_barrier_gpus.sh
 * checks them against the kernel lengths.
 */
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "test_check.h"
#include "gpu_thread_kit.h"

#define NT    3
#define ITERS 4

enum mode { M_BARRIER, M_CONDVAR, M_SEM, M_LOADER, M_QUIET, M_FUTEX };
static enum mode g_mode;

static pthread_barrier_t g_barrier;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_arrived;
static unsigned g_generation;
static sem_t g_in, g_out;
static pthread_cond_t g_item_cv = PTHREAD_COND_INITIALIZER;
static int g_items, g_taken; /* loader: items on offer, items taken */

static long long g_start_ns[NT];       /* when each thread left the first meeting */
static long long g_sync_ns[NT][ITERS]; /* when its sync returned */
static long long g_met_ns[NT][ITERS];  /* when it left the barrier after it */
static long long g_quiet_ns[ITERS];    /* quiet: the main thread's clock after each sync */
static unsigned long g_quiet_sum[NT];

/* The mutex + condition variable barrier: the last of NT to arrive starts a new generation. */
static void cond_barrier(void)
{
    pthread_mutex_lock(&g_mu);
    unsigned gen = g_generation;
    if (++g_arrived == NT) {
        g_arrived = 0;
        g_generation++;
        pthread_cond_broadcast(&g_cv);
    } else {
        while (gen == g_generation)
            pthread_cond_wait(&g_cv, &g_mu);
    }
    pthread_mutex_unlock(&g_mu);
}

/* The futex barrier: the last of NT to arrive bumps the generation word and wakes every waiter on it. */
static uint32_t g_futex_generation, g_futex_arrived;

static void futex_barrier(void)
{
    uint32_t gen = __atomic_load_n(&g_futex_generation, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&g_futex_arrived, 1, __ATOMIC_ACQ_REL) == NT) {
        __atomic_store_n(&g_futex_arrived, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&g_futex_generation, gen + 1, __ATOMIC_RELEASE);
        syscall(SYS_futex, &g_futex_generation, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
        return;
    }
    while (__atomic_load_n(&g_futex_generation, __ATOMIC_ACQUIRE) == gen)
        syscall(SYS_futex, &g_futex_generation, FUTEX_WAIT, gen, NULL, NULL, 0);
}

/* Thread 0 gathers the others' posts on g_in, then releases them on g_out. */
static void sem_barrier(int g)
{
    if (g == 0) {
        for (int i = 1; i < NT; i++)
            CHECK(sem_wait(&g_in) == 0, "sem_wait");
        for (int i = 1; i < NT; i++)
            CHECK(sem_post(&g_out) == 0, "sem_post");
    } else {
        CHECK(sem_post(&g_in) == 0, "sem_post");
        CHECK(sem_wait(&g_out) == 0, "sem_wait");
    }
}

/* loader mode: the loader offers NT items once the previous NT are taken */
static void *loader_thread(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&g_mu);
    for (int k = 0; k < ITERS; k++) {
        while (g_items > 0)
            pthread_cond_wait(&g_item_cv, &g_mu);
        g_items = NT;
        pthread_cond_broadcast(&g_item_cv);
    }
    pthread_mutex_unlock(&g_mu);
    return NULL;
}

static void take_item(void)
{
    pthread_mutex_lock(&g_mu);
    while (g_items == 0)
        pthread_cond_wait(&g_item_cv, &g_mu);
    g_items--;
    g_taken++;
    pthread_cond_broadcast(&g_item_cv);
    pthread_mutex_unlock(&g_mu);
}

static void meet(int g)
{
    switch (g_mode) {
    case M_LOADER:
    case M_BARRIER: {
        int rc = pthread_barrier_wait(&g_barrier);
        CHECK(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD, "pthread_barrier_wait: %d", rc);
        break;
    }
    case M_CONDVAR: cond_barrier(); break;
    case M_SEM: sem_barrier(g); break;
    case M_FUTEX: futex_barrier(); break;
    case M_QUIET: break;
    }
}

static void *gpu_thread(void *arg)
{
    int g = (int)(long)arg;
    cudaStream_t s;
    CHECK(cudaSetDevice(g) == cudaSuccess, "cudaSetDevice(%d)", g);
    CHECK(cudaStreamCreate(&s) == cudaSuccess, "stream of GPU %d", g); /* its first work */
    meet(g);
    g_start_ns[g] = now_ns();
    for (int k = 0; k < ITERS; k++) {
        if (g_mode == M_LOADER)
            take_item();
        launch(s, g + 1);
        CHECK(cudaStreamSynchronize(s) == cudaSuccess, "sync of GPU %d", g);
        g_sync_ns[g][k] = now_ns();
        meet(g);
        g_met_ns[g][k] = now_ns();
    }
    return NULL;
}

/* quiet mode: host work between meetings, never a CUDA call */
static void *quiet_thread(void *arg)
{
    int g = (int)(long)arg;
    volatile unsigned long x = 0;
    for (int k = 0; k < 50; k++) {
        for (unsigned long i = 0; i < 20000; i++)
            x += i;
        cond_barrier();
        int rc = pthread_barrier_wait(&g_barrier);
        CHECK(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD, "pthread_barrier_wait: %d", rc);
    }
    g_quiet_sum[g] = x;
    return NULL;
}

static void run_quiet(void)
{
    pthread_t t[NT];
    cudaStream_t s;
    CHECK(cudaSetDevice(0) == cudaSuccess && cudaStreamCreate(&s) == cudaSuccess, "stream of GPU 0");
    for (long g = 0; g < NT; g++)
        CHECK(pthread_create(&t[g], NULL, quiet_thread, (void *)g) == 0, "thread %ld", g);
    long long start = now_ns();
    for (int k = 0; k < ITERS; k++) {
        launch(s, NT);
        CHECK(cudaStreamSynchronize(s) == cudaSuccess, "sync");
        g_quiet_ns[k] = now_ns() - start;
    }
    for (int g = 0; g < NT; g++)
        CHECK(pthread_join(t[g], NULL) == 0 && g_quiet_sum[g] == 50ul * 199990000ul, "quiet thread %d", g);
    for (int k = 0; k < ITERS; k++)
        printf("quiet iteration %d: main thread's sync returned at +%lld ns\n", k, g_quiet_ns[k]);
}

static void run_gpu_threads(void)
{
    pthread_t t[NT], loader;
    if (g_mode == M_LOADER)
        CHECK(pthread_create(&loader, NULL, loader_thread, NULL) == 0, "loader");
    for (long g = 0; g < NT; g++)
        CHECK(pthread_create(&t[g], NULL, gpu_thread, (void *)g) == 0, "thread %ld", g);
    for (int g = 0; g < NT; g++)
        CHECK(pthread_join(t[g], NULL) == 0, "join of thread %d", g);
    if (g_mode == M_LOADER)
        CHECK(pthread_join(loader, NULL) == 0 && g_taken == NT * ITERS, "loader: %d items taken", g_taken);
    for (int g = 1; g < NT; g++)
        CHECK(g_start_ns[g] == g_start_ns[0], "thread %d left the first meeting at %lld ns, thread 0 at %lld ns", g,
              g_start_ns[g], g_start_ns[0]);
    for (int k = 0; k < ITERS; k++)
        for (int g = 0; g < NT; g++)
            printf("iteration %d gpu %d: sync returned at +%lld ns, left the barrier at +%lld ns\n", k, g,
                   g_sync_ns[g][k] - g_start_ns[0], g_met_ns[g][k] - g_start_ns[0]);
}

int main(int argc, char **argv)
{
    static const char *names[] = {"barrier", "condvar", "sem", "loader", "quiet", "futex"};
    int m = -1;
    for (int i = 0; argc == 2 && i < 6; i++)
        if (!strcmp(argv[1], names[i]))
            m = i;
    CHECK(m >= 0, "usage: %s barrier|condvar|sem|loader|quiet|futex", argv[0]);
    g_mode = (enum mode)m;
    register_kernel();
    int n = 0;
    CHECK(cudaGetDeviceCount(&n) == cudaSuccess && n >= NT, "needs %d GPUs, has %d", NT, n);
    CHECK(pthread_barrier_init(&g_barrier, NULL, NT) == 0, "pthread_barrier_init");
    CHECK(sem_init(&g_in, 0, 0) == 0 && sem_init(&g_out, 0, 0) == 0, "sem_init");
    if (g_mode == M_QUIET)
        run_quiet();
    else
        run_gpu_threads();
    printf("barrier_gpus %s done\n", names[m]);
    return 0;
}
