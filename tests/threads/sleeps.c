/*
 * Sleeps and timed waits under hysim (interpose/host/sleep.c, timed_waits.c), on
 * barrier_gpus.yaml: every kernel K_NS long, host time zero, so that the
 * host clock moves only by sleeps and answered waits and every time below
 * is exact. Each mode checks its own times and prints them (relative to its
 * start) for check_sleeps.sh to compare across two runs.
 *
 *   sleeps alone     one thread: a real sleep before its first GPU work,
 *                    then nanosleep, usleep, sleep (an hour: a real one
 *                    would outlast the test), clock_nanosleep relative
 *                    and absolute on CLOCK_MONOTONIC and CLOCK_REALTIME,
 *                    select and poll on no descriptor,
 *                    one whose deadline has passed, a sleep while kernels
 *                    run, and the errors of bad lengths
 *   sleeps threads   two threads, one GPU each: A runs three kernels, one
 *                    sync each, while B sleeps, runs a kernel and sleeps
 *                    to an absolute time; neither's times move the other's
 *   sleeps fresh     the main thread issued work, starts a thread and sleeps
 *                    at once: the new thread's first work, 20 ms of real
 *                    time later, comes at the start time, not after the sleep
 *   sleeps timedcv   two threads, one GPU each: one waits on a condition
 *                    variable with a 10 ms deadline, which the other signals
 *                    after its kernels (+3 ms): it wakes then; its next waits
 *                    (no signal) time out at their simulated deadlines
 *   sleeps timedsem  the same with a semaphore: sem_timedwait with a 10 ms
 *                    deadline returns 0 when the other thread posts after
 *                    its kernels (+3 ms); an unposted sem_timedwait (2 ms)
 *                    and sem_clockwait (1 ms) fail with ETIMEDOUT at their
 *                    simulated deadlines; a token posted before the wait
 *                    is taken at once
 *   sleeps handoff   the GPU thread tells four helpers that issued no GPU
 *                    work to stop and waits, with a 10 s deadline, until
 *                    each has taken the mutex it holds, counted itself out
 *                    and signalled (PyTorch's autograd engine at exit), 20
 *                    times: every wait returns at once (the helpers ran in
 *                    real time while hysimd reached the deadline; runs of a
 *                    DDP script ended 10 s late, or not)
 *   sleeps timed     timed waits whose deadlines were read on the simulated
 *                    clock wait their length in real time (read by system
 *                    call, not through the interposed clock), not days less
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "test_check.h"
#include "cuda_test_check.h"
#include "gpu_thread_kit.h"
#include "real_sleep.h"

#define K_NS 1000000ll /* barrier_gpus.yaml's kernel */
#define MS   1000000ll

static struct timespec ts_of(long long ns) { return (struct timespec){ns / 1000000000ll, ns % 1000000000ll}; }

static long long clock_ns(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec * 1000000000ll + t.tv_nsec;
}

/* The machine's own monotonic clock, past the interposer. */
static long long real_ns(void)
{
    struct timespec t;
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000ll + t.tv_nsec;
}

static void expect_at(const char *what, long long t0, long long want)
{
    long long got = now_ns() - t0;
    printf("%s: +%lld ns\n", what, got);
    CHECK(got == want, "%s at +%lld ns, want +%lld", what, got, want);
}

/* ---- alone ---- */

static void alone(void)
{
    struct timespec d = ts_of(30 * MS);
    long long r0 = real_ns(), t0 = now_ns();
    CHECK(nanosleep(&d, NULL) == 0, "nanosleep before any work");
    CHECK(real_ns() - r0 >= 30 * MS, "a sleep before the process's first GPU work is a real one");
    expect_at("nanosleep 30 ms before any work", t0, 0);
    CHECK_CUDA(cudaSetDevice(0), cudaSuccess);
    CHECK_CUDA(cudaDeviceSynchronize(), cudaSuccess); /* the process's first work: its sleeps are simulated now */
    t0 = now_ns();
    d = ts_of(1500000);
    CHECK(nanosleep(&d, NULL) == 0, "nanosleep");
    expect_at("nanosleep 1.5 ms", t0, 1500000);
    CHECK(usleep(250) == 0, "usleep");
    expect_at("usleep 250 us", t0, 1750000);
    CHECK(sleep(3600) == 0, "sleep");
    expect_at("sleep 3600 s", t0, 1750000 + 3600 * 1000000000ll);
    t0 = now_ns();
    d = ts_of(2 * MS);
    CHECK(clock_nanosleep(CLOCK_MONOTONIC, 0, &d, NULL) == 0, "clock_nanosleep relative");
    expect_at("clock_nanosleep monotonic 2 ms", t0, 2 * MS);
    struct timespec at = ts_of(clock_ns(CLOCK_MONOTONIC) + 3 * MS);
    CHECK(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == 0, "clock_nanosleep absolute");
    expect_at("clock_nanosleep monotonic until +5 ms", t0, 5 * MS);
    at = ts_of(clock_ns(CLOCK_REALTIME) + 4 * MS);
    CHECK(clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &at, NULL) == 0, "clock_nanosleep realtime");
    expect_at("clock_nanosleep realtime until +9 ms", t0, 9 * MS);
    at = ts_of(clock_ns(CLOCK_MONOTONIC) - 1 * MS);
    CHECK(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == 0, "clock_nanosleep past");
    expect_at("clock_nanosleep until a time passed", t0, 9 * MS);
    struct timeval tv = {0, 2000};
    CHECK(select(0, NULL, NULL, NULL, &tv) == 0 && tv.tv_sec == 0 && tv.tv_usec == 0, "select as a sleep");
    expect_at("select on no descriptor, 2 ms", t0, 11 * MS);
    CHECK(poll(NULL, 0, 3) == 0, "poll as a sleep");
    expect_at("poll on no descriptor, 3 ms", t0, 14 * MS);

    /* kernels run while the host sleeps: the sync returns when they end, not a sleep later */
    t0 = now_ns();
    launch(0, 3);
    d = ts_of(1 * MS);
    CHECK(nanosleep(&d, NULL) == 0, "nanosleep with kernels");
    expect_at("nanosleep 1 ms while 3 kernels run", t0, 1 * MS);
    CHECK_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    expect_at("sync of 3 kernels", t0, 3 * K_NS);
    d = ts_of(5 * MS);
    CHECK(nanosleep(&d, NULL) == 0, "nanosleep after work");
    expect_at("nanosleep 5 ms after the sync", t0, 3 * K_NS + 5 * MS);

    struct timespec bad = {0, 1000000000};
    errno = 0;
    CHECK(nanosleep(&bad, NULL) == -1 && errno == EINVAL, "nanosleep of tv_nsec 1e9: EINVAL");
    CHECK(clock_nanosleep(CLOCK_MONOTONIC, 0, &bad, NULL) == EINVAL, "clock_nanosleep of tv_nsec 1e9: EINVAL");
    bad = (struct timespec){-1, 0};
    CHECK(nanosleep(&bad, NULL) == -1 && errno == EINVAL, "nanosleep of a negative length: EINVAL");
    expect_at("after the refused sleeps", t0, 3 * K_NS + 5 * MS);
}

/* ---- threads ---- */

static pthread_barrier_t g_met;
static long long g_t0;
static char g_lines[2][4][96];

/* The calling thread's GPU is dev, on which it issued work; then it meets the others (g_met). */
static void meet_on_gpu(int dev)
{
    CHECK_CUDA(cudaSetDevice(dev), cudaSuccess);
    CHECK_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    pthread_barrier_wait(&g_met);
}

/* n kernels on the legacy stream, waited for. */
static void run_kernels(int n)
{
    launch(0, n);
    CHECK_CUDA(cudaStreamSynchronize(0), cudaSuccess);
}

static void *thread_a(void *unused)
{
    (void)unused;
    meet_on_gpu(0);
    for (int i = 0; i < 3; i++) {
        run_kernels(1);
        long long t = now_ns() - g_t0;
        snprintf(g_lines[0][i], sizeof g_lines[0][i], "A sync %d: +%lld ns", i, t);
        CHECK(t == (i + 1) * K_NS, "A's sync %d at +%lld ns, want +%lld", i, t, (i + 1) * K_NS);
    }
    return NULL;
}

static void *thread_b(void *unused)
{
    (void)unused;
    meet_on_gpu(1);
    struct timespec d = ts_of(2500000);
    CHECK(nanosleep(&d, NULL) == 0, "B's nanosleep");
    long long t = now_ns() - g_t0;
    snprintf(g_lines[1][0], sizeof g_lines[1][0], "B slept 2.5 ms: +%lld ns", t);
    CHECK(t == 2500000, "B woke at +%lld ns, want +2500000", t);
    launch(0, 1);
    CHECK_CUDA(cudaStreamSynchronize(0), cudaSuccess);
    t = now_ns() - g_t0;
    snprintf(g_lines[1][1], sizeof g_lines[1][1], "B sync: +%lld ns", t);
    CHECK(t == 2500000 + K_NS, "B's sync at +%lld ns, want +%lld", t, 2500000 + K_NS);
    struct timespec at = ts_of(g_t0 + 5 * MS);
    CHECK(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == 0, "B's absolute sleep");
    t = now_ns() - g_t0;
    snprintf(g_lines[1][2], sizeof g_lines[1][2], "B slept until +5 ms: +%lld ns", t);
    CHECK(t == 5 * MS, "B woke at +%lld ns, want +%lld", t, 5 * MS);
    return NULL;
}

static void threads(void)
{
    CHECK(pthread_barrier_init(&g_met, NULL, 3) == 0, "barrier");
    pthread_t a, b;
    CHECK(pthread_create(&a, NULL, thread_a, NULL) == 0, "thread A");
    CHECK(pthread_create(&b, NULL, thread_b, NULL) == 0, "thread B");
    g_t0 = now_ns(); /* both threads issued work and wait in the barrier: the clock stands still until it opens */
    pthread_barrier_wait(&g_met);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++)
            if (g_lines[i][j][0])
                printf("%s\n", g_lines[i][j]);
}

/* ---- timedcv ---- */

static pthread_mutex_t g_cv_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER, g_cv_quiet = PTHREAD_COND_INITIALIZER;
static int g_flag;

static void *signaller(void *unused)
{
    (void)unused;
    meet_on_gpu(0);
    run_kernels(3);
    pthread_mutex_lock(&g_cv_mu);
    g_flag = 1;
    pthread_cond_signal(&g_cv); /* at +3 ms: the waiter's deadline is +10 ms */
    pthread_mutex_unlock(&g_cv_mu);
    run_kernels(1);
    return NULL;
}

static void *timed_waiter(void *unused)
{
    (void)unused;
    meet_on_gpu(1);
    pthread_mutex_lock(&g_cv_mu);
    struct timespec at = ts_of(clock_ns(CLOCK_MONOTONIC) + 10 * MS);
    int rc = 0;
    while (!g_flag && rc == 0)
        rc = pthread_cond_clockwait(&g_cv, &g_cv_mu, CLOCK_MONOTONIC, &at);
    long long t = now_ns() - g_t0;
    snprintf(g_lines[0][0], sizeof g_lines[0][0], "signalled wait returned %d at +%lld ns", rc, t);
    CHECK(rc == 0 && g_flag && t == 3 * K_NS, "the signalled wait returned %d at +%lld ns, want 0 at +%lld", rc, t,
          3 * K_NS);
    at = ts_of(clock_ns(CLOCK_MONOTONIC) + 2 * MS);
    rc = pthread_cond_clockwait(&g_cv_quiet, &g_cv_mu, CLOCK_MONOTONIC, &at);
    t = now_ns() - g_t0;
    snprintf(g_lines[0][1], sizeof g_lines[0][1], "unsignalled 2 ms wait returned %d at +%lld ns", rc, t);
    CHECK(rc == ETIMEDOUT && t == 5 * MS, "the unsignalled wait returned %d at +%lld ns, want ETIMEDOUT at +%lld", rc,
          t, 5 * MS);
    at = ts_of(clock_ns(CLOCK_REALTIME) + 1 * MS);
    rc = pthread_cond_timedwait(&g_cv_quiet, &g_cv_mu, &at);
    t = now_ns() - g_t0;
    snprintf(g_lines[0][2], sizeof g_lines[0][2], "realtime 1 ms wait returned %d at +%lld ns", rc, t);
    CHECK(rc == ETIMEDOUT && t == 6 * MS, "the realtime wait returned %d at +%lld ns, want ETIMEDOUT at +%lld", rc, t,
          6 * MS);
    pthread_mutex_unlock(&g_cv_mu);
    return NULL;
}

/* Runs a waker and a waiter, which meet the main thread first (g_t0), and prints the waiter's lines. */
static void run_waker_and_waiter(void *(*waker)(void *), void *(*waiter)(void *), int lines)
{
    CHECK(pthread_barrier_init(&g_met, NULL, 3) == 0, "barrier");
    pthread_t a, b;
    CHECK(pthread_create(&a, NULL, waker, NULL) == 0, "waker");
    CHECK(pthread_create(&b, NULL, waiter, NULL) == 0, "waiter");
    g_t0 = now_ns();
    pthread_barrier_wait(&g_met);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    for (int j = 0; j < lines; j++)
        printf("%s\n", g_lines[0][j]);
}

static void timedcv(void) { run_waker_and_waiter(signaller, timed_waiter, 3); }

/* ---- timedsem ---- */

static sem_t g_sem, g_sem_quiet;

static void *poster(void *unused)
{
    (void)unused;
    meet_on_gpu(0);
    run_kernels(3);
    CHECK(sem_post(&g_sem) == 0, "sem_post"); /* at +3 ms: the waiter's deadline is +10 ms */
    run_kernels(1);
    return NULL;
}

/* errno of a failed semaphore wait, 0 for success */
static int sem_error(int r) { return r == 0 ? 0 : errno; }

static void *sem_waiter(void *unused)
{
    (void)unused;
    meet_on_gpu(1);
    struct timespec at = ts_of(clock_ns(CLOCK_REALTIME) + 10 * MS);
    int rc = sem_error(sem_timedwait(&g_sem, &at));
    long long t = now_ns() - g_t0;
    snprintf(g_lines[0][0], sizeof g_lines[0][0], "posted sem_timedwait returned %d at +%lld ns", rc, t);
    CHECK(rc == 0 && t == 3 * K_NS, "the posted wait returned %d at +%lld ns, want 0 at +%lld", rc, t, 3 * K_NS);
    at = ts_of(clock_ns(CLOCK_REALTIME) + 2 * MS);
    rc = sem_error(sem_timedwait(&g_sem_quiet, &at));
    t = now_ns() - g_t0;
    snprintf(g_lines[0][1], sizeof g_lines[0][1], "unposted 2 ms sem_timedwait returned %d at +%lld ns", rc, t);
    CHECK(rc == ETIMEDOUT && t == 5 * MS, "the unposted wait returned %d at +%lld ns, want ETIMEDOUT at +%lld", rc, t,
          5 * MS);
    at = ts_of(clock_ns(CLOCK_MONOTONIC) + 1 * MS);
    rc = sem_error(sem_clockwait(&g_sem_quiet, CLOCK_MONOTONIC, &at));
    t = now_ns() - g_t0;
    snprintf(g_lines[0][2], sizeof g_lines[0][2], "unposted 1 ms sem_clockwait returned %d at +%lld ns", rc, t);
    CHECK(rc == ETIMEDOUT && t == 6 * MS, "the sem_clockwait returned %d at +%lld ns, want ETIMEDOUT at +%lld", rc, t,
          6 * MS);
    CHECK(sem_post(&g_sem_quiet) == 0, "sem_post");
    at = ts_of(clock_ns(CLOCK_REALTIME) + 5 * MS);
    rc = sem_error(sem_timedwait(&g_sem_quiet, &at));
    t = now_ns() - g_t0;
    snprintf(g_lines[0][3], sizeof g_lines[0][3], "a token there already: returned %d at +%lld ns", rc, t);
    CHECK(rc == 0 && t == 6 * MS, "the wait on a posted semaphore returned %d at +%lld ns", rc, t);
    return NULL;
}

static void timedsem(void)
{
    CHECK(sem_init(&g_sem, 0, 0) == 0 && sem_init(&g_sem_quiet, 0, 0) == 0, "sem_init");
    run_waker_and_waiter(poster, sem_waiter, 4);
}

/* ---- handoff ---- */

#define HANDOFF_ROUNDS  20
#define HANDOFF_HELPERS 4

static pthread_mutex_t g_ho_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_ho_go = PTHREAD_COND_INITIALIZER, g_ho_done = PTHREAD_COND_INITIALIZER;
static int g_ho_stop, g_ho_running;

/* A thread that issues no GPU work: told to stop, it takes the mutex, counts itself out and signals. */
static void *handoff_helper(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&g_ho_mu);
    while (!g_ho_stop)
        pthread_cond_wait(&g_ho_go, &g_ho_mu);
    g_ho_running--;
    pthread_cond_broadcast(&g_ho_done);
    pthread_mutex_unlock(&g_ho_mu);
    return NULL;
}

static void handoff(void)
{
    CHECK_CUDA(cudaSetDevice(0), cudaSuccess);
    run_kernels(1); /* the process issued GPU work: this thread's timed waits wait in hysimd */
    long long longest = 0;
    int timeouts = 0;
    for (int round = 0; round < HANDOFF_ROUNDS; round++) {
        pthread_t h[HANDOFF_HELPERS];
        g_ho_stop = 0;
        g_ho_running = HANDOFF_HELPERS;
        for (int i = 0; i < HANDOFF_HELPERS; i++)
            CHECK(pthread_create(&h[i], NULL, handoff_helper, NULL) == 0, "helper");
        real_sleep_us(5000); /* they block in the condition variable */
        long long from = now_ns();
        pthread_mutex_lock(&g_ho_mu);
        g_ho_stop = 1;
        pthread_cond_broadcast(&g_ho_go);
        struct timespec at = ts_of(clock_ns(CLOCK_MONOTONIC) + 10000 * MS);
        int rc = 0;
        while (g_ho_running && rc == 0)
            rc = pthread_cond_clockwait(&g_ho_done, &g_ho_mu, CLOCK_MONOTONIC, &at);
        pthread_mutex_unlock(&g_ho_mu);
        timeouts += rc == ETIMEDOUT;
        longest = now_ns() - from > longest ? now_ns() - from : longest;
        for (int i = 0; i < HANDOFF_HELPERS; i++)
            pthread_join(h[i], NULL);
    }
    printf("%d rounds of %d helpers: %d timed out, the longest wait %lld ns\n", HANDOFF_ROUNDS, HANDOFF_HELPERS,
           timeouts, longest);
    CHECK(timeouts == 0 && longest == 0, "a wait timed out or took simulated time; want each answered at once");
}

/* ---- fresh ---- */

static void *fresh_worker(void *unused)
{
    (void)unused;
    real_sleep_us(20000); /* starts late in real time: the main thread's sleep must not pass it meanwhile */
    CHECK_CUDA(cudaSetDevice(1), cudaSuccess);
    launch(0, 2);
    CHECK_CUDA(cudaStreamSynchronize(0), cudaSuccess);
    long long t = now_ns() - g_t0;
    snprintf(g_lines[0][0], sizeof g_lines[0][0], "new thread's 2 kernels: +%lld ns", t);
    CHECK(t == 2 * K_NS, "the new thread's sync at +%lld ns, want +%lld", t, 2 * K_NS);
    return NULL;
}

static void fresh(void)
{
    CHECK_CUDA(cudaDeviceSynchronize(),
               cudaSuccess); /* the main thread issued work: the threads it starts are new to hysimd */
    g_t0 = now_ns();
    pthread_t w;
    CHECK(pthread_create(&w, NULL, fresh_worker, NULL) == 0, "worker");
    struct timespec d = ts_of(1000 * MS);
    CHECK(nanosleep(&d, NULL) == 0, "main's nanosleep");
    expect_at("main slept 1 s", g_t0, 1000 * MS);
    pthread_join(w, NULL);
    printf("%s\n", g_lines[0][0]);
}

/* ---- timed ---- */

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

/* A timed wait that times out after `ms` of the simulated clock `c`, as a real wait of that long. */
#define EXPECT_REAL_WAIT(what, ms, call)                                                                        \
    do {                                                                                                        \
        long long r0 = real_ns();                                                                               \
        int rc_ = (call);                                                                                       \
        long long waited = real_ns() - r0;                                                                      \
        printf("%s: %s\n", what, rc_ == ETIMEDOUT ? "timed out" : "returned");                                  \
        CHECK(rc_ == ETIMEDOUT, "%s returned %d, not ETIMEDOUT", what, rc_);                                    \
        CHECK(waited >= (ms)*MS, "%s returned after %lld ns of real time, before its %d ms", what, waited, ms); \
    } while (0)

static int sem_rc(int r) { return r == 0 ? 0 : errno; }

static void *hold_mutex(void *locked)
{
    pthread_mutex_lock(&g_mu);
    sem_post(locked);
    struct timespec d = ts_of(1000 * MS);
    nanosleep(&d, NULL); /* a thread that issued no work while the main thread runs: a real sleep */
    pthread_mutex_unlock(&g_mu);
    return NULL;
}

static void timed(void)
{
    pthread_cond_t cv_rt = PTHREAD_COND_INITIALIZER, cv_mono;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&cv_mono, &ca);
    pthread_mutex_lock(&g_mu);
    struct timespec at = ts_of(clock_ns(CLOCK_MONOTONIC) + 30 * MS);
    EXPECT_REAL_WAIT("pthread_cond_clockwait monotonic 30 ms", 30,
                     pthread_cond_clockwait(&cv_rt, &g_mu, CLOCK_MONOTONIC, &at));
    at = ts_of(clock_ns(CLOCK_MONOTONIC) + 30 * MS);
    EXPECT_REAL_WAIT("pthread_cond_timedwait on a monotonic condvar 30 ms", 30,
                     pthread_cond_timedwait(&cv_mono, &g_mu, &at));
    at = ts_of(clock_ns(CLOCK_REALTIME) + 30 * MS);
    EXPECT_REAL_WAIT("pthread_cond_timedwait realtime 30 ms", 30, pthread_cond_timedwait(&cv_rt, &g_mu, &at));
    pthread_mutex_unlock(&g_mu);

    sem_t s;
    sem_init(&s, 0, 0);
    at = ts_of(clock_ns(CLOCK_REALTIME) + 30 * MS);
    EXPECT_REAL_WAIT("sem_timedwait 30 ms", 30, sem_rc(sem_timedwait(&s, &at)));
    at = ts_of(clock_ns(CLOCK_MONOTONIC) + 30 * MS);
    EXPECT_REAL_WAIT("sem_clockwait monotonic 30 ms", 30, sem_rc(sem_clockwait(&s, CLOCK_MONOTONIC, &at)));

    pthread_t holder;
    CHECK(pthread_create(&holder, NULL, hold_mutex, &s) == 0, "holder");
    sem_wait(&s);
    at = ts_of(clock_ns(CLOCK_REALTIME) + 30 * MS);
    EXPECT_REAL_WAIT("pthread_mutex_timedlock 30 ms", 30, pthread_mutex_timedlock(&g_mu, &at));
    at = ts_of(clock_ns(CLOCK_MONOTONIC) + 30 * MS);
    EXPECT_REAL_WAIT("pthread_mutex_clocklock monotonic 30 ms", 30,
                     pthread_mutex_clocklock(&g_mu, CLOCK_MONOTONIC, &at));
    pthread_join(holder, NULL);
    sem_destroy(&s);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    register_kernel();
    if (!strcmp(mode, "alone"))
        alone();
    else if (!strcmp(mode, "threads"))
        threads();
    else if (!strcmp(mode, "fresh"))
        fresh();
    else if (!strcmp(mode, "timedcv"))
        timedcv();
    else if (!strcmp(mode, "timedsem"))
        timedsem();
    else if (!strcmp(mode, "handoff"))
        handoff();
    else if (!strcmp(mode, "timed"))
        timed();
    else {
        fprintf(stderr, "usage: sleeps alone|threads|fresh|timedcv|timedsem|handoff|timed\n");
        return 2;
    }
    printf("sleeps %s done\n", mode);
    return 0;
}
