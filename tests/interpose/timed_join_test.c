/*
 * glibc's other joins under hysim (interpose/host/threads.c): pthread_tryjoin_np,
 * pthread_timedjoin_np and pthread_clockjoin_np, whose deadlines a program
 * computes from the clocks it reads, which are simulated. Run by `hysim run`
 * on timed_join.yaml: every kernel K = 1 ms, host time zero, so the host
 * clock moves only when a wait is answered. The main thread issues GPU work
 * first: its joins are those hysimd must see.
 *
 * usage: timed_join_test semantics | late timed|clock | idle
 *   semantics  tryjoin of a running thread: EBUSY, then 0 and its value once
 *              it exits; timed joins of a running thread with a deadline at
 *              or before the clock: ETIMEDOUT at once, the clock unmoved; bad
 *              deadlines and clocks: EINVAL; a thread that has exited: 0 and
 *              its value, even past the deadline; a running thread that
 *              works on the GPU for KERNELS kernels and exits before the
 *              deadline: 0 and its value, returning at the simulated time it
 *              exited (the join waited in hysimd: counted as running, the
 *              main thread would stall the run); no deadline: as pthread_join.
 *              Prints "timed_join semantics: ok".
 *   late       a thread still working on the GPU at the deadline (1 ms ahead,
 *              its kernels take KERNELS ms): pthread_timedjoin_np ("timed") or
 *              pthread_clockjoin_np on CLOCK_MONOTONIC ("clock") returns
 *              ETIMEDOUT at the deadline in simulated time; a pthread_join
 *              afterwards returns when the thread exits. Prints
 *              "timed_join late: ok".
 *   idle       the main thread, which never touches the GPU, joins a thread
 *              still working on it at the deadline: hysimd does not see the
 *              joiner, so pthread_timedjoin_np cannot time out in simulated
 *              time; the process ends with the "not supported yet" message,
 *              never returning from the join.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "test_check.h"
#include "real_sleep.h"

void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize);

#define NS_PER_S 1000000000ll
#define K_NS     1000000ll /* timed_join.yaml's kernel */
#define KERNELS  5

static void kernel_stub(void) {}

static void register_kernel(void)
{
    static char fatbin[64];
    void **module = __cudaRegisterFatBinary(fatbin);
    __cudaRegisterFunction(module, (const char *)kernel_stub, "_Z4workv", "_Z4workv", -1, NULL, NULL, NULL, NULL, NULL);
}

static long long now_ns(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec * NS_PER_S + t.tv_nsec;
}

static struct timespec at_ns(long long ns)
{
    struct timespec t = {ns / NS_PER_S, ns % NS_PER_S};
    return t;
}

/* KERNELS kernels on a stream of GPU 0, then a synchronize: KERNELS * K of simulated time. */
static void gpu_work(void)
{
    cudaStream_t s;
    CHECK(cudaSetDevice(0) == cudaSuccess, "cudaSetDevice");
    CHECK(cudaStreamCreate(&s) == cudaSuccess, "cudaStreamCreate");
    for (int i = 0; i < KERNELS; i++)
        CHECK(cudaLaunchKernel((const void *)kernel_stub, (dim3){1, 1, 1}, (dim3){32, 1, 1}, NULL, 0, s) == cudaSuccess,
              "kernel %d", i);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
    CHECK(cudaStreamDestroy(s) == cudaSuccess, "cudaStreamDestroy");
}

/* gpu_worker's host clock (CLOCK_MONOTONIC) as it returns */
static long long g_worker_exit_ns;

static void *gpu_worker(void *arg)
{
    gpu_work();
    g_worker_exit_ns = now_ns(CLOCK_MONOTONIC);
    return arg;
}

static sem_t g_go;

/* Runs until the main thread posts g_go; never touches the GPU. */
static void *held_worker(void *arg)
{
    while (sem_wait(&g_go) != 0)
        CHECK(errno == EINTR, "sem_wait: %s", strerror(errno));
    return arg;
}

static pid_t g_quick_tid;

static void *quick_worker(void *arg)
{
    __atomic_store_n(&g_quick_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
    return arg;
}

/* Sleeps 1 ms of real time. */
static void real_pause(void) { real_sleep_us(1000); }

/* Starts quick_worker and returns once the kernel has reaped its task: it has exited, not been joined. */
static pthread_t exited_thread(void *value)
{
    pthread_t t;
    __atomic_store_n(&g_quick_tid, 0, __ATOMIC_RELEASE);
    CHECK(pthread_create(&t, NULL, quick_worker, value) == 0, "pthread_create");
    pid_t tid;
    while ((tid = __atomic_load_n(&g_quick_tid, __ATOMIC_ACQUIRE)) == 0)
        real_pause();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d", (int)tid);
    for (int i = 0; access(path, F_OK) == 0; i++) {
        CHECK(i < 60000, "thread %d did not exit within a minute", (int)tid);
        real_pause();
    }
    return t;
}

static void check_running(void)
{
    pthread_t t;
    void *v = NULL;
    CHECK(sem_init(&g_go, 0, 0) == 0, "sem_init");
    CHECK(pthread_create(&t, NULL, held_worker, (void *)7) == 0, "pthread_create");
    long long mono = now_ns(CLOCK_MONOTONIC), real = now_ns(CLOCK_REALTIME);

    CHECK(pthread_tryjoin_np(t, &v) == EBUSY, "tryjoin of a running thread is not EBUSY");
    struct timespec d = at_ns(real);
    int rc = pthread_timedjoin_np(t, &v, &d);
    CHECK(rc == ETIMEDOUT, "timedjoin at the clock's present returned %d, not ETIMEDOUT", rc);
    d = at_ns(real - NS_PER_S);
    rc = pthread_timedjoin_np(t, &v, &d);
    CHECK(rc == ETIMEDOUT, "timedjoin 1 s in the past returned %d, not ETIMEDOUT", rc);
    d = at_ns(mono);
    rc = pthread_clockjoin_np(t, &v, CLOCK_MONOTONIC, &d);
    CHECK(rc == ETIMEDOUT, "clockjoin at the monotonic clock's present returned %d, not ETIMEDOUT", rc);
    d = at_ns(real + NS_PER_S);
    d.tv_nsec = NS_PER_S;
    CHECK(pthread_timedjoin_np(t, &v, &d) == EINVAL, "tv_nsec = 1e9 is not EINVAL");
    d.tv_nsec = -1;
    CHECK(pthread_clockjoin_np(t, &v, CLOCK_REALTIME, &d) == EINVAL, "tv_nsec = -1 is not EINVAL");
    d = at_ns(mono + NS_PER_S);
    CHECK(pthread_clockjoin_np(t, &v, CLOCK_PROCESS_CPUTIME_ID, &d) == EINVAL, "a CPU-time clock is not EINVAL");
    CHECK(now_ns(CLOCK_MONOTONIC) == mono, "the failed joins moved the host clock from %lld to %lld ns", mono,
          now_ns(CLOCK_MONOTONIC));

    CHECK(sem_post(&g_go) == 0, "sem_post");
    for (int i = 0; (rc = pthread_tryjoin_np(t, &v)) == EBUSY; i++) {
        CHECK(i < 60000, "tryjoin still EBUSY a minute after the thread was let go");
        real_pause();
    }
    CHECK(rc == 0 && v == (void *)7, "tryjoin of the exited thread: %d, value %p", rc, v);
    CHECK(sem_destroy(&g_go) == 0, "sem_destroy");
}

static void check_exited(void)
{
    void *v = NULL;
    pthread_t t = exited_thread((void *)42);
    struct timespec past = at_ns(now_ns(CLOCK_REALTIME) - NS_PER_S);
    int rc = pthread_timedjoin_np(t, &v, &past);
    CHECK(rc == 0 && v == (void *)42, "timedjoin of an exited thread, deadline passed: %d, value %p", rc, v);
    t = exited_thread((void *)43);
    struct timespec zero = {0, 0};
    rc = pthread_clockjoin_np(t, &v, CLOCK_MONOTONIC, &zero);
    CHECK(rc == 0 && v == (void *)43, "clockjoin of an exited thread, deadline 0: %d, value %p", rc, v);
}

/* join(t, value) joins a gpu_worker started now; it must return 0 and its value when the worker exited. */
static void check_gpu_join(const char *what, int (*join)(pthread_t, void **))
{
    pthread_t t;
    void *v = NULL;
    long long before = now_ns(CLOCK_MONOTONIC);
    CHECK(pthread_create(&t, NULL, gpu_worker, (void *)99) == 0, "pthread_create");
    int rc = join(t, &v);
    long long after = now_ns(CLOCK_MONOTONIC);
    CHECK(rc == 0 && v == (void *)99, "%s of a GPU worker: %d, value %p", what, rc, v);
    CHECK(after == g_worker_exit_ns, "%s returned at %lld ns, the worker exited at %lld ns", what, after,
          g_worker_exit_ns);
    CHECK(after - before >= KERNELS * K_NS, "%s returned %lld ns after it began, before the worker's %d kernels", what,
          after - before, KERNELS);
    printf("%s: returned %lld ns after it began\n", what, after - before);
}

static int timed_1s(pthread_t t, void **v)
{
    struct timespec d = at_ns(now_ns(CLOCK_REALTIME) + NS_PER_S);
    return pthread_timedjoin_np(t, v, &d);
}

static int clock_1s(pthread_t t, void **v)
{
    struct timespec d = at_ns(now_ns(CLOCK_MONOTONIC) + NS_PER_S);
    return pthread_clockjoin_np(t, v, CLOCK_MONOTONIC, &d);
}

static int timed_null(pthread_t t, void **v) { return pthread_timedjoin_np(t, v, NULL); }

static void run_semantics(void)
{
    gpu_work(); /* the main thread has issued work: hysimd knows of its joins */
    check_running();
    check_exited();
    check_gpu_join("timedjoin 1 s ahead", timed_1s);
    check_gpu_join("clockjoin 1 s ahead", clock_1s);
    check_gpu_join("timedjoin without deadline", timed_null);
    printf("timed_join semantics: ok\n");
}

static void run_late(int clock)
{
    gpu_work();
    pthread_t t;
    void *v = NULL;
    CHECK(pthread_create(&t, NULL, gpu_worker, (void *)5) == 0, "pthread_create");
    clockid_t id = clock ? CLOCK_MONOTONIC : CLOCK_REALTIME;
    struct timespec d = at_ns(now_ns(id) + K_NS); /* the worker's kernels take KERNELS * K */
    printf("timed_join late: joining\n");
    fflush(stdout);
    long long before = now_ns(id);
    int rc = clock ? pthread_clockjoin_np(t, &v, id, &d) : pthread_timedjoin_np(t, &v, &d);
    long long after = now_ns(id);
    printf("timed_join late: returned %s %lld ns after it began\n", rc == ETIMEDOUT ? "ETIMEDOUT" : "other",
           after - before);
    CHECK(rc == ETIMEDOUT && after - before == K_NS,
          "the timed join returned %d after %lld ns, want ETIMEDOUT after %lld", rc, after - before, (long long)K_NS);
    CHECK(pthread_join(t, &v) == 0 && v == (void *)5, "the join afterwards");
    CHECK(now_ns(CLOCK_MONOTONIC) == g_worker_exit_ns, "the join afterwards returned when the worker exited");
    printf("timed_join late: ok\n");
}

static void run_idle(void)
{
    pthread_t t;
    void *v = NULL;
    CHECK(pthread_create(&t, NULL, gpu_worker, (void *)5) == 0, "pthread_create");
    struct timespec d = at_ns(now_ns(CLOCK_REALTIME) + K_NS);
    printf("timed_join idle: joining\n");
    fflush(stdout);
    int rc = pthread_timedjoin_np(t, &v, &d);
    printf("timed_join idle: returned %d\n", rc); /* the check script fails on this line */
}

int main(int argc, char **argv)
{
    register_kernel();
    if (argc == 2 && !strcmp(argv[1], "semantics"))
        run_semantics();
    else if (argc == 3 && !strcmp(argv[1], "late") && (!strcmp(argv[2], "timed") || !strcmp(argv[2], "clock")))
        run_late(!strcmp(argv[2], "clock"));
    else if (argc == 2 && !strcmp(argv[1], "idle"))
        run_idle();
    else
        CHECK(0, "usage: %s semantics | late timed|clock | idle", argv[0]);
    return 0;
}
