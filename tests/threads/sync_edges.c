/*
 * The edges of threads meeting outside CUDA (interpose/host/host_sync.c): NT
 * threads, one GPU each, every kernel K_NS long (barrier_gpus.yaml), as in
 * barrier_gpus.c: each iteration thread g launches g + 1 kernels, syncs its
 * stream and meets the others; what differs is how they meet and what else
 * happens around it. In every mode thread g's sync must return g + 1
 * kernels after the iteration began and every thread must leave the
 * meeting NT kernels after it (check_sync_edges.sh).
 *
 *   sync_edges mix      a condition-variable barrier woken for nothing: each
 *                       arrival broadcasts with no state change (the waiters
 *                       re-check and wait again); the last one starts the
 *                       next generation with a broadcast (even iterations)
 *                       or NT - 1 signals (odd ones)
 *   sync_edges timed    pthread barrier; thread 0 also makes timed waits
 *                       (not wrapped) that time out (pthread_cond_timedwait,
 *                       pthread_cond_clockwait, sem_timedwait with deadlines
 *                       already past) and a pthread_cond_timedwait that
 *                       thread 1 signals before it works
 *   sync_edges sem      every thread takes an item per iteration that a
 *                       thread making no CUDA call hands out through
 *                       semaphores (a request posted, an item waited for),
 *                       and a token from a semaphore the main thread posted
 *                       NT * ITERS + 1 times before the threads started
 *   sync_edges fork     pthread barrier; thread NT - 1 forks after its sync
 *                       of iteration 1, while the others block in the
 *                       barrier: the child's threads meet through a condition
 *                       variable, a barrier and a semaphore of its own, and
 *                       the child cannot use the GPUs
 *   sync_edges forks    no GPU threads: two threads initialise and destroy
 *                       barriers over and over while the main thread forks
 *                       FORKS times; each child initialises, waits at and destroys
 *                       a barrier of its own (libhysim.so's lock on its map
 *                       of barriers must not be left taken in the child)
 *   sync_edges pshared  the main thread launches NT kernels, waits on a
 *                       process-shared semaphore, condition variable or
 *                       barrier, which a child process (forked, no GPU)
 *                       releases a while later in real time, and syncs,
 *                       three times, while a helper thread syncs 10 NT
 *                       kernels on GPU 1: no thread of the process can
 *                       release it, so it counts as running meanwhile, and
 *                       each sync returns NT kernels after the previous one
 *                       (not once the helper's sync has)
 *   sync_edges cancel   before the threads start, threads that made a CUDA
 *                       call are cancelled: A blocked in pthread_cond_wait;
 *                       B with its cancel pending (the main thread blocked in
 *                       its join) as it signals a second A, which must return
 *                       (pthread_cond_signal is no cancellation point), then
 *                       in sem_wait. Then the threads meet in a condition-
 *                       variable barrier and a pthread barrier in turn
 *
 * Prints, per iteration and thread, the host clock when its sync returned and
 * when it left the meeting, relative to when the threads first met.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "test_check.h"
#include "gpu_thread_kit.h"

#define NT    3
#define ITERS 4

enum mode { M_MIX, M_TIMED, M_SEM, M_FORK, M_CANCEL, M_FORKS, M_PSHARED };
static enum mode g_mode;

static pthread_barrier_t g_barrier;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_arrived;
static unsigned g_generation;

static long long g_start_ns[NT];
static long long g_sync_ns[NT][ITERS];
static long long g_met_ns[NT][ITERS];

static void pbarrier(void)
{
    int rc = pthread_barrier_wait(&g_barrier);
    CHECK(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD, "pthread_barrier_wait: %d", rc);
}

/* A condition-variable barrier; mix: woken for nothing, released by broadcast or by signals (iteration k). */
static void cond_barrier(int noisy, int k)
{
    pthread_mutex_lock(&g_mu);
    unsigned gen = g_generation;
    if (noisy)
        pthread_cond_broadcast(&g_cv); /* no state change: every waiter wakes and waits again */
    if (++g_arrived == NT) {
        g_arrived = 0;
        g_generation++;
        if (!noisy || k % 2 == 0)
            pthread_cond_broadcast(&g_cv);
        else
            for (int i = 1; i < NT; i++)
                pthread_cond_signal(&g_cv);
    } else {
        while (gen == g_generation)
            pthread_cond_wait(&g_cv, &g_mu);
    }
    pthread_mutex_unlock(&g_mu);
}

/* ---- timed: timed waits, not wrapped, behave as libc's ---- */

static pthread_cond_t g_timed_cv = PTHREAD_COND_INITIALIZER;
static int g_timed_flag[ITERS];

static struct timespec after(clockid_t clock, long long ns)
{
    struct timespec t;
    clock_gettime(clock, &t);
    long long v = t.tv_sec * 1000000000ll + t.tv_nsec + ns;
    if (v < 0)
        v = 0;
    return (struct timespec){v / 1000000000ll, v % 1000000000ll};
}

static void timed_waits(int g, int k)
{
    if (g == 1) { /* signals thread 0's timed wait before it works: thread 0 counts as running meanwhile */
        pthread_mutex_lock(&g_mu);
        g_timed_flag[k] = 1;
        pthread_cond_signal(&g_timed_cv);
        pthread_mutex_unlock(&g_mu);
    }
    if (g != 0)
        return;
    static pthread_cond_t quiet_cv = PTHREAD_COND_INITIALIZER; /* never signalled: these must time out */
    pthread_mutex_lock(&g_mu);
    struct timespec past = after(CLOCK_REALTIME, -1000000000ll);
    CHECK(pthread_cond_timedwait(&quiet_cv, &g_mu, &past) == ETIMEDOUT, "timedwait with a past deadline");
    past = after(CLOCK_MONOTONIC, -1000000000ll);
    CHECK(pthread_cond_clockwait(&quiet_cv, &g_mu, CLOCK_MONOTONIC, &past) == ETIMEDOUT,
          "clockwait with a past deadline");
    struct timespec far = after(CLOCK_REALTIME, 3600ll * 1000000000ll);
    while (!g_timed_flag[k])
        CHECK(pthread_cond_timedwait(&g_timed_cv, &g_mu, &far) == 0, "timedwait signalled in time");
    pthread_mutex_unlock(&g_mu);
    sem_t s;
    CHECK(sem_init(&s, 0, 0) == 0, "sem_init");
    past = after(CLOCK_REALTIME, -1000000000ll);
    CHECK(sem_timedwait(&s, &past) == -1 && errno == ETIMEDOUT, "sem_timedwait with a past deadline");
    sem_destroy(&s);
}

/* ---- sem: a thread making no CUDA call hands out items through semaphores ---- */

static sem_t g_request, g_item, g_tokens;
static int g_served;

static void *loader_thread(void *arg)
{
    (void)arg;
    for (int k = 0; k < ITERS; k++) {
        for (int i = 0; i < NT; i++)
            CHECK(sem_wait(&g_request) == 0, "loader's sem_wait");
        g_served += NT;
        for (int i = 0; i < NT; i++)
            CHECK(sem_post(&g_item) == 0, "loader's sem_post");
    }
    return NULL;
}

static void take_item(void)
{
    CHECK(sem_wait(&g_tokens) == 0, "a token (posted before)");
    CHECK(sem_post(&g_request) == 0, "request");
    CHECK(sem_wait(&g_item) == 0, "item");
}

/* ---- fork: the child's threads meet on their own; the child has no GPUs ---- */

static pthread_barrier_t g_child_barrier;
static sem_t g_child_sem;
static int g_child_count;

static void *child_thread(void *arg)
{
    int id = (int)(long)arg;
    for (int r = 0; r < 100; r++) {
        pthread_mutex_lock(&g_mu);
        g_child_count++;
        pthread_cond_broadcast(&g_cv);
        while (g_child_count < 2 * (r + 1))
            pthread_cond_wait(&g_cv, &g_mu);
        pthread_mutex_unlock(&g_mu);
        int rc = pthread_barrier_wait(&g_child_barrier);
        if (rc != 0 && rc != PTHREAD_BARRIER_SERIAL_THREAD)
            return (void *)1;
        if (id == 0)
            sem_post(&g_child_sem);
        else
            sem_wait(&g_child_sem);
    }
    return NULL;
}

static void fork_child_checks(void)
{
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) { /* only this thread lives on; the parent's blocked threads are not here */
        g_child_count = 0;
        pthread_mutex_init(&g_mu, NULL); /* the parent's other threads may have held it: not here */
        pthread_cond_init(&g_cv, NULL);
        CHECK(pthread_barrier_init(&g_child_barrier, NULL, 2) == 0 && sem_init(&g_child_sem, 0, 0) == 0, "child init");
        pthread_t t[2];
        void *ret[2];
        for (long i = 0; i < 2; i++)
            CHECK(pthread_create(&t[i], NULL, child_thread, (void *)i) == 0, "child thread");
        for (int i = 0; i < 2; i++)
            CHECK(pthread_join(t[i], &ret[i]) == 0 && ret[i] == NULL, "child thread %d", i);
        CHECK(g_child_count == 200, "child: %d", g_child_count);
        CHECK(cudaStreamQuery(NULL) != cudaSuccess, "the child used its parent's GPUs");
        _exit(0);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
}

/* ---- forks: a fork while other threads take libhysim.so's locks ---- */

#define FORKS 300
static int g_spin_stop;

/* Initialises and destroys barriers of its own until told to stop: libhysim.so's map of barriers is busy. */
static void *barrier_spinner(void *arg)
{
    (void)arg;
    pthread_barrier_t b[64];
    while (!__atomic_load_n(&g_spin_stop, __ATOMIC_ACQUIRE)) {
        for (int i = 0; i < 64; i++)
            CHECK(pthread_barrier_init(&b[i], NULL, 2) == 0, "pthread_barrier_init");
        for (int i = 0; i < 64; i++)
            CHECK(pthread_barrier_destroy(&b[i]) == 0, "pthread_barrier_destroy");
    }
    return NULL;
}

static void fork_storm(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&t[i], NULL, barrier_spinner, NULL) == 0, "spinner %d", i);
    int ok = 0;
    for (int f = 0; f < FORKS; f++) {
        pid_t pid = fork();
        CHECK(pid >= 0, "fork");
        if (pid == 0) {
            alarm(3); /* a lock left taken would hang it: it dies by SIGALRM instead */
            pthread_barrier_t b;
            int rc = pthread_barrier_init(&b, NULL, 1);
            rc = rc ? rc : pthread_barrier_wait(&b) != PTHREAD_BARRIER_SERIAL_THREAD;
            rc = rc ? rc : pthread_barrier_destroy(&b);
            _exit(rc ? 3 : 0);
        }
        int status = 0;
        CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d of %d: status %#x (%s)", f, FORKS, status,
              WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? "it hung" : "it failed");
        ok++;
    }
    __atomic_store_n(&g_spin_stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 2; i++)
        CHECK(pthread_join(t[i], NULL) == 0, "join of spinner %d", i);
    printf("forks: %d children met at a barrier of their own\n", ok);
}

/* ---- pshared: objects shared with another process, which releases them ---- */

struct shared_objects {
    sem_t sem;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int flag;
    pthread_barrier_t barrier;
};

static void real_sleep_ms(int ms)
{
    struct timespec t = {0, ms * 1000000l};
    syscall(SYS_nanosleep, &t, NULL); /* the real clock: libc's sleeps are simulated time */
}

/* The child: releases each of the parent's waits in turn, a while after the parent began it. */
static void pshared_child(struct shared_objects *o)
{
    real_sleep_ms(50);
    sem_post(&o->sem);
    real_sleep_ms(50);
    pthread_mutex_lock(&o->mu);
    o->flag = 1;
    pthread_cond_signal(&o->cv);
    pthread_mutex_unlock(&o->mu);
    real_sleep_ms(50);
    pthread_barrier_wait(&o->barrier);
    _exit(0);
}

/* pshared: a second GPU thread, 10 NT kernels on GPU 1 and a sync, while the main thread waits on the child. */
static void *pshared_helper(void *arg)
{
    (void)arg;
    cudaStream_t s;
    CHECK(cudaSetDevice(1) == cudaSuccess && cudaStreamCreate(&s) == cudaSuccess, "helper's stream");
    launch(s, 10 * NT);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess, "helper's sync");
    return NULL;
}

static void pshared(void)
{
    struct shared_objects *o = mmap(NULL, sizeof *o, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(o != MAP_FAILED, "mmap");
    pthread_mutexattr_t ma;
    pthread_condattr_t ca;
    pthread_barrierattr_t ba;
    CHECK(pthread_mutexattr_init(&ma) == 0 && pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED) == 0 &&
              pthread_mutex_init(&o->mu, &ma) == 0,
          "shared mutex");
    CHECK(pthread_condattr_init(&ca) == 0 && pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED) == 0 &&
              pthread_cond_init(&o->cv, &ca) == 0,
          "shared condition variable");
    CHECK(pthread_barrierattr_init(&ba) == 0 && pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED) == 0 &&
              pthread_barrier_init(&o->barrier, &ba, 2) == 0,
          "shared barrier");
    CHECK(sem_init(&o->sem, 1, 0) == 0, "shared semaphore");
    cudaStream_t s;
    CHECK(cudaSetDevice(0) == cudaSuccess && cudaStreamCreate(&s) == cudaSuccess, "stream");
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0)
        pshared_child(o);
    long long start = now_ns();
    pthread_t helper;
    CHECK(pthread_create(&helper, NULL, pshared_helper, NULL) == 0, "helper");
    for (int w = 0; w < 3; w++) {
        launch(s, NT);
        if (w == 0) {
            CHECK(sem_wait(&o->sem) == 0, "sem_wait");
        } else if (w == 1) {
            pthread_mutex_lock(&o->mu);
            while (!o->flag)
                pthread_cond_wait(&o->cv, &o->mu);
            pthread_mutex_unlock(&o->mu);
        } else {
            int rc = pthread_barrier_wait(&o->barrier);
            CHECK(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD, "pthread_barrier_wait: %d", rc);
        }
        CHECK(cudaStreamSynchronize(s) == cudaSuccess, "sync");
        printf("pshared %s: sync returned at +%lld ns\n",
               w == 0   ? "semaphore"
               : w == 1 ? "condvar"
                        : "barrier",
               now_ns() - start);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: %#x", status);
    CHECK(pthread_join(helper, NULL) == 0, "join of the helper");
}

/* ---- cancel: threads cancelled while blocked, or with a cancel pending ---- */

static pthread_cond_t g_never_cv = PTHREAD_COND_INITIALIZER;
static sem_t g_never_sem;
static int g_victim_ready, g_a_go, g_b_signalled;
static int g_main_joins; /* atomic: the main thread is about to join victim B */

static void unlock_mu(void *arg)
{
    (void)arg;
    pthread_mutex_unlock(&g_mu);
}

static void victim_work(void)
{
    CHECK(cudaSetDevice(NT) == cudaSuccess && cudaStreamQuery(NULL) == cudaSuccess, "victim's query");
}

/* Blocks in pthread_cond_wait until cancelled (first) or, the second time, until B lets it go. */
static void *victim_a(void *arg)
{
    int until_go = (int)(long)arg;
    victim_work();
    pthread_mutex_lock(&g_mu);
    g_victim_ready = 1;
    pthread_cond_broadcast(&g_cv);
    pthread_cleanup_push(unlock_mu, NULL);
    while (!until_go || !g_a_go)
        pthread_cond_wait(&g_never_cv, &g_mu);
    pthread_cleanup_pop(1);
    return NULL;
}

/*
 * Its cancel is pending before it goes on, once the main thread blocks in
 * its join: it signals A (no cancellation point: it must return), then is
 * cancelled in sem_wait.
 */
static void *victim_b(void *arg)
{
    (void)arg;
    victim_work();
    while (!__atomic_load_n(&g_main_joins, __ATOMIC_ACQUIRE))
        sched_yield();
    for (int i = 0; i < 2000; i++) /* the main thread blocks in the join meanwhile; not cancellation points */
        sched_yield();
    pthread_mutex_lock(&g_mu);
    g_a_go = 1;
    pthread_cond_signal(&g_never_cv);
    pthread_mutex_unlock(&g_mu);
    g_b_signalled = 1;
    sem_wait(&g_never_sem); /* never posted */
    return NULL;
}

static pthread_t start_a(int until_go)
{
    pthread_t a;
    g_victim_ready = 0;
    CHECK(pthread_create(&a, NULL, victim_a, (void *)(long)until_go) == 0, "victim A");
    pthread_mutex_lock(&g_mu);
    while (!g_victim_ready)
        pthread_cond_wait(&g_cv, &g_mu);
    pthread_mutex_unlock(&g_mu); /* A waits on g_never_cv now: it released g_mu in it */
    return a;
}

static void cancel_victims(void)
{
    void *ret = NULL;
    CHECK(sem_init(&g_never_sem, 0, 0) == 0, "sem_init");
    pthread_t a = start_a(0); /* cancelled while blocked in pthread_cond_wait */
    CHECK(pthread_cancel(a) == 0, "cancel of A");
    CHECK(pthread_join(a, &ret) == 0 && ret == PTHREAD_CANCELED, "A not cancelled");
    a = start_a(1);
    pthread_t b;
    CHECK(pthread_create(&b, NULL, victim_b, NULL) == 0, "victim B");
    CHECK(pthread_cancel(b) == 0, "cancel of B");
    __atomic_store_n(&g_main_joins, 1, __ATOMIC_RELEASE);
    CHECK(pthread_join(b, &ret) == 0 && ret == PTHREAD_CANCELED, "B not cancelled");
    CHECK(g_b_signalled, "B was cancelled in pthread_cond_signal");
    CHECK(pthread_join(a, &ret) == 0 && ret == NULL, "A did not return");
}

/* ---- the GPU threads ---- */

static void meet(int k)
{
    switch (g_mode) {
    case M_MIX: cond_barrier(1, k); break;
    case M_CANCEL:
        if (k % 2)
            cond_barrier(0, k);
        else
            pbarrier();
        break;
    default: pbarrier(); break;
    }
}

static void *gpu_thread(void *arg)
{
    int g = (int)(long)arg;
    cudaStream_t s;
    CHECK(cudaSetDevice(g) == cudaSuccess, "cudaSetDevice(%d)", g);
    CHECK(cudaStreamCreate(&s) == cudaSuccess, "stream of GPU %d", g);
    meet(0);
    g_start_ns[g] = now_ns();
    for (int k = 0; k < ITERS; k++) {
        if (g_mode == M_TIMED)
            timed_waits(g, k);
        if (g_mode == M_SEM)
            take_item();
        launch(s, g + 1);
        CHECK(cudaStreamSynchronize(s) == cudaSuccess, "sync of GPU %d", g);
        g_sync_ns[g][k] = now_ns();
        if (g_mode == M_FORK && k == 1 && g == NT - 1)
            fork_child_checks();
        meet(k);
        g_met_ns[g][k] = now_ns();
    }
    return NULL;
}

int main(int argc, char **argv)
{
    static const char *names[] = {"mix", "timed", "sem", "fork", "cancel", "forks", "pshared"};
    int m = -1;
    for (int i = 0; argc == 2 && i < 7; i++)
        if (!strcmp(argv[1], names[i]))
            m = i;
    CHECK(m >= 0, "usage: %s mix|timed|sem|fork|cancel|forks|pshared", argv[0]);
    g_mode = (enum mode)m;
    setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    register_kernel();
    int n = 0;
    CHECK(cudaGetDeviceCount(&n) == cudaSuccess && n > NT, "needs %d GPUs, has %d", NT + 1, n);
    CHECK(pthread_barrier_init(&g_barrier, NULL, NT) == 0, "pthread_barrier_init");
    CHECK(sem_init(&g_request, 0, 0) == 0 && sem_init(&g_item, 0, 0) == 0 && sem_init(&g_tokens, 0, 0) == 0,
          "sem_init");
    for (int i = 0; i < NT * ITERS + 1; i++) /* posts before any wait, more than will be taken */
        CHECK(sem_post(&g_tokens) == 0, "token");
    if (g_mode == M_CANCEL)
        cancel_victims();
    if (g_mode == M_FORKS || g_mode == M_PSHARED) {
        if (g_mode == M_FORKS)
            fork_storm();
        else
            pshared();
        printf("sync_edges %s done\n", names[m]);
        return 0;
    }
    pthread_t t[NT], loader;
    if (g_mode == M_SEM)
        CHECK(pthread_create(&loader, NULL, loader_thread, NULL) == 0, "loader");
    for (long g = 0; g < NT; g++)
        CHECK(pthread_create(&t[g], NULL, gpu_thread, (void *)g) == 0, "thread %ld", g);
    for (int g = 0; g < NT; g++)
        CHECK(pthread_join(t[g], NULL) == 0, "join of thread %d", g);
    if (g_mode == M_SEM) {
        int left = -1;
        CHECK(pthread_join(loader, NULL) == 0 && g_served == NT * ITERS, "loader served %d", g_served);
        CHECK(sem_getvalue(&g_tokens, &left) == 0 && left == (g_mode == M_SEM ? 1 : NT * ITERS + 1), "%d tokens left",
              left);
    }
    for (int g = 1; g < NT; g++)
        CHECK(g_start_ns[g] == g_start_ns[0], "thread %d left the first meeting at %lld ns, thread 0 at %lld ns", g,
              g_start_ns[g], g_start_ns[0]);
    for (int k = 0; k < ITERS; k++)
        for (int g = 0; g < NT; g++)
            printf("iteration %d gpu %d: sync returned at +%lld ns, left the barrier at +%lld ns\n", k, g,
                   g_sync_ns[g][k] - g_start_ns[0], g_met_ns[g][k] - g_start_ns[0]);
    printf("sync_edges %s done\n", names[m]);
    return 0;
}
