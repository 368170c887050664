/*
 * A program that never runs under hysim but has libhysim.so loaded (preloaded
 * or linked, no HYSIM_ENDPOINT) must meet its threads exactly as libc does:
 * the wrapped pthread_cond_wait/signal/broadcast, pthread_barrier_* and
 * sem_wait/sem_post pass straight through. NT threads, ROUNDS rounds each:
 *   - a condition-variable barrier with a generation count (broadcast),
 *     and a ping-pong between pairs with pthread_cond_signal;
 *   - a pthread barrier, counting PTHREAD_BARRIER_SERIAL_THREAD returns;
 *   - a semaphore handing one token around the ring of threads;
 *   - a producer posting ROUNDS items, more than the consumer waits for at
 *     once, on a semaphore posted before anyone waits;
 *   - timed waits that time out (a deadline 20 ms ahead on the real clock:
 *     they return ETIMEDOUT, not earlier) and one that is signalled.
 * Prints the counts it checked: the same text with and without libhysim.so
 * (check_plain_sync.sh compares them).
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "test_check.h"

#define NT     4
#define ROUNDS 2000

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_arrived;
static unsigned g_generation;
static pthread_barrier_t g_barrier;
static int g_serial; /* PTHREAD_BARRIER_SERIAL_THREAD returns, under g_mu */
static sem_t g_ring[NT];
static long g_ring_sum;
static pthread_cond_t g_pair_cv[NT / 2];
static int g_pair_turn[NT / 2];

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

/* Threads 2p and 2p + 1 take turns: each waits for its turn, then signals the other. */
static void ping_pong(int id)
{
    int pair = id / 2, me = id % 2;
    pthread_mutex_lock(&g_mu);
    while (g_pair_turn[pair] != me)
        pthread_cond_wait(&g_pair_cv[pair], &g_mu);
    g_pair_turn[pair] = 1 - me;
    pthread_cond_signal(&g_pair_cv[pair]);
    pthread_mutex_unlock(&g_mu);
}

static void *worker(void *arg)
{
    int id = (int)(long)arg;
    for (int r = 0; r < ROUNDS; r++) {
        cond_barrier();
        ping_pong(id);
        int rc = pthread_barrier_wait(&g_barrier);
        CHECK(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD, "pthread_barrier_wait: %d", rc);
        if (rc == PTHREAD_BARRIER_SERIAL_THREAD) {
            pthread_mutex_lock(&g_mu);
            g_serial++;
            pthread_mutex_unlock(&g_mu);
        }
        CHECK(sem_wait(&g_ring[id]) == 0, "sem_wait");
        g_ring_sum += id; /* the token's holder alone */
        CHECK(sem_post(&g_ring[(id + 1) % NT]) == 0, "sem_post");
    }
    return NULL;
}

static sem_t g_items;
static void *producer(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++)
        CHECK(sem_post(&g_items) == 0, "producer's sem_post");
    return NULL;
}

static long long real_ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000ll + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static struct timespec ahead(clockid_t clock, long ms)
{
    struct timespec t;
    clock_gettime(clock, &t);
    t.tv_nsec += ms * 1000000l;
    t.tv_sec += t.tv_nsec / 1000000000l;
    t.tv_nsec %= 1000000000l;
    return t;
}

static int g_flag;
static void *flag_setter(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&g_mu);
    g_flag = 1;
    pthread_cond_signal(&g_cv);
    pthread_mutex_unlock(&g_mu);
    return NULL;
}

static void timed_waits(void)
{
    struct timespec t0, dl;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_mutex_lock(&g_mu);
    dl = ahead(CLOCK_REALTIME, 20);
    int rc = pthread_cond_timedwait(&g_cv, &g_mu, &dl);
    pthread_mutex_unlock(&g_mu);
    CHECK(rc == ETIMEDOUT && real_ms_since(&t0) >= 19, "pthread_cond_timedwait: %d after %lld ms", rc,
          real_ms_since(&t0));
    sem_t s;
    CHECK(sem_init(&s, 0, 0) == 0, "sem_init");
    clock_gettime(CLOCK_MONOTONIC, &t0);
    dl = ahead(CLOCK_REALTIME, 20);
    CHECK(sem_timedwait(&s, &dl) == -1 && errno == ETIMEDOUT && real_ms_since(&t0) >= 19, "sem_timedwait");
    sem_destroy(&s);
    pthread_t t;
    pthread_mutex_lock(&g_mu);
    CHECK(pthread_create(&t, NULL, flag_setter, NULL) == 0, "flag setter");
    dl = ahead(CLOCK_REALTIME, 60000);
    while (!g_flag)
        CHECK(pthread_cond_timedwait(&g_cv, &g_mu, &dl) == 0, "timedwait signalled in time");
    pthread_mutex_unlock(&g_mu);
    CHECK(pthread_join(t, NULL) == 0, "join");
    printf("timed waits: two timed out, one signalled\n");
}

int main(void)
{
    pthread_t t[NT], p;
    CHECK(pthread_barrier_init(&g_barrier, NULL, NT) == 0, "pthread_barrier_init");
    for (int i = 0; i < NT; i++)
        CHECK(sem_init(&g_ring[i], 0, i == 0) == 0, "sem_init");
    for (int i = 0; i < NT / 2; i++)
        pthread_cond_init(&g_pair_cv[i], NULL);
    for (long i = 0; i < NT; i++)
        CHECK(pthread_create(&t[i], NULL, worker, (void *)i) == 0, "worker %ld", i);
    for (int i = 0; i < NT; i++)
        CHECK(pthread_join(t[i], NULL) == 0, "join");
    CHECK(pthread_barrier_destroy(&g_barrier) == 0, "pthread_barrier_destroy");
    printf("condition-variable barrier: %u generations\n", g_generation);
    printf("pthread barrier: %d serial threads\n", g_serial);
    printf("semaphore ring: sum %ld\n", g_ring_sum);
    printf("ping-pong: turns %d %d\n", g_pair_turn[0], g_pair_turn[1]);

    CHECK(sem_init(&g_items, 0, 0) == 0, "sem_init");
    for (int i = 0; i < 3; i++) /* posted before anyone waits */
        CHECK(sem_post(&g_items) == 0, "sem_post");
    CHECK(pthread_create(&p, NULL, producer, NULL) == 0, "producer");
    for (int i = 0; i < ROUNDS; i++)
        CHECK(sem_wait(&g_items) == 0, "consumer's sem_wait");
    CHECK(pthread_join(p, NULL) == 0, "join");
    int left = -1;
    CHECK(sem_getvalue(&g_items, &left) == 0, "sem_getvalue");
    printf("semaphore: %d items consumed, %d left\n", ROUNDS, left);
    timed_waits();
    printf("plain_sync done\n");
    return 0;
}
