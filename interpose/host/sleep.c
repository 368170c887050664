/*
 * Sleeps in simulated time (nanosleep, clock_nanosleep, usleep, sleep, and
 * select and poll on no descriptor): docs/client.md, "Sleeps", says when a
 * sleep waits in hysimd and when in real time.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/select.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "host_io.h"
#include "internal.h"
#include "job_placement.h"

#define NS_PER_S 1000000000ull

typedef int (*nanosleep_fn)(const struct timespec *, struct timespec *);
typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *, struct timespec *);
typedef int (*select_fn)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
typedef int (*poll_fn)(struct pollfd *, nfds_t, int);

static struct {
    nanosleep_fn nanosleep;
    clock_nanosleep_fn clock_nanosleep;
    select_fn select;
    poll_fn poll;
} real; /* libc's, read and written with atomics */

static void resolve(void)
{
    if (__atomic_load_n(&real.clock_nanosleep, __ATOMIC_ACQUIRE))
        return;
    __atomic_store_n(&real.select, (select_fn)hs_next_symbol("select", NULL), __ATOMIC_RELEASE);
    __atomic_store_n(&real.poll, (poll_fn)hs_next_symbol("poll", NULL), __ATOMIC_RELEASE);
    __atomic_store_n(&real.nanosleep, (nanosleep_fn)hs_next_symbol("nanosleep", NULL), __ATOMIC_RELEASE);
    __atomic_store_n(&real.clock_nanosleep, (clock_nanosleep_fn)hs_next_symbol("clock_nanosleep", NULL),
                     __ATOMIC_RELEASE);
}

#define REAL(field) (resolve(), __atomic_load_n(&real.field, __ATOMIC_ACQUIRE))

static struct timespec timespec_of(uint64_t ns)
{
    return (struct timespec){(time_t)(ns / NS_PER_S), (long)(ns % NS_PER_S)};
}

static int valid_length(const struct timespec *t)
{
    return t && t->tv_sec >= 0 && t->tv_nsec >= 0 && t->tv_nsec < (long)NS_PER_S;
}

/* t's length in ns, saturated. */
static uint64_t length_ns(const struct timespec *t)
{
    if ((uint64_t)t->tv_sec >= UINT64_MAX / NS_PER_S - 1)
        return UINT64_MAX;
    return (uint64_t)t->tv_sec * NS_PER_S + (uint64_t)t->tv_nsec;
}

static uint64_t add_saturated(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

void hs_client_real_sleep_ns(uint64_t ns)
{
    struct timespec left = timespec_of(ns);
    while (syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &left, &left) != 0 && errno == EINTR) {}
}

/*
 * A real sleep leaves the clock where it is (docs/client.md, "Sleeps"), so a
 * loop that sleeps until the clock passes a deadline (a library's start-up
 * timing itself, a launcher's timeout) would never end: the clock moves only
 * by the little CPU time between the sleeps. Once a thread has slept
 * HS_STUCK_SLEEP_NS of real time while its process issued nothing, each
 * further real sleep moves the clock by its length (once told, on stderr).
 * Only in the ranks of a job started whole (mpirun: Debian's Open MPI loads
 * PSM and PSM2, whose start-up times itself so); short polls never get there.
 */
#define HS_STUCK_SLEEP_NS 1000000000ull

static __thread uint64_t t_sleep_issued; /* the process's issued count at this thread's last real sleep */
static __thread uint64_t t_slept_ns;     /* real sleep since then, nothing issued */
static _Atomic int g_sleep_told;

static void real_sleep_done(uint64_t slept_ns)
{
    /* Only in a job a launcher started whole (docs/launchers.md): elsewhere a process that waits before its first
     * GPU work (a rank at its rendezvous) must start the simulation at the clock every run gives it. */
    if (hs_job_server() < 0)
        return;
    uint64_t issued = hs_client_issued();
    if (issued != t_sleep_issued) {
        t_sleep_issued = issued;
        t_slept_ns = 0;
    }
    t_slept_ns = add_saturated(t_slept_ns, slept_ns);
    if (t_slept_ns <= HS_STUCK_SLEEP_NS)
        return;
    if (!atomic_exchange(&g_sleep_told, 1))
        fprintf(stderr,
                "hysim: a thread slept %.1f s in real time while its process issued nothing for hysimd to time its "
                "sleeps by: it waits for time to pass; its real sleeps now move the clock by their length\n",
                (double)t_slept_ns * 1e-9);
    hs_clock_advance_to(add_saturated(hs_clock_now(), slept_ns));
}

/*
 * Sleeps until the host clock reads until_ns: 0, or an error number (EINTR:
 * a signal cut a real sleep short; *rem, when given, then holds what was
 * left of it). Inside an intercepted call.
 */
static int sleep_until(uint64_t until_ns, struct timespec *rem)
{
    if (hs_client_sleep_until(until_ns) == HS_SLEEP_DONE)
        return 0;
    uint64_t now = hs_clock_now();
    uint64_t left = until_ns > now ? until_ns - now : 0, length = left;
    /* a real sleep in slices: between them, a process that never registered looks whether its run is over */
    do {
        uint64_t slice = left < HS_RUN_CHECK_NS ? left : HS_RUN_CHECK_NS;
        struct timespec t = timespec_of(slice), cut = {0, 0};
        int rc = REAL(clock_nanosleep)(CLOCK_MONOTONIC, 0, &t, &cut);
        left -= slice;
        if (rc != 0) {
            if (rem)
                *rem = timespec_of(add_saturated(length_ns(&cut), left));
            return rc;
        }
        hs_client_check_run();
    } while (left > 0);
    real_sleep_done(length);
    return 0;
}

/* A sleep of length ns from now, as one intercepted call. */
static int sleep_for(uint64_t ns, struct timespec *rem)
{
    pthread_testcancel(); /* a cancellation point, as libc's sleeps (a simulated one is one only here) */
    hs_client_enter();
    int rc = sleep_until(add_saturated(hs_clock_now(), ns), rem);
    hs_client_leave();
    return rc;
}

HS_API int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req, struct timespec *rem)
{
    if (!hs_clock_reads_simulated(clock))
        return REAL(clock_nanosleep)(clock, flags, req, rem);
    if (!valid_length(req))
        return EINVAL;
    if (!(flags & TIMER_ABSTIME))
        return sleep_for(length_ns(req), rem);
    pthread_testcancel();
    hs_client_enter();
    int rc = sleep_until(hs_clock_host_deadline(clock, req), NULL); /* an absolute sleep leaves rem alone */
    hs_client_leave();
    return rc;
}

HS_API int nanosleep(const struct timespec *req, struct timespec *rem)
{
    if (!hs_clock_reads_simulated(CLOCK_MONOTONIC))
        return REAL(nanosleep)(req, rem);
    int rc = valid_length(req) ? sleep_for(length_ns(req), rem) : EINVAL;
    if (rc == 0)
        return 0;
    errno = rc;
    return -1;
}

HS_API int usleep(useconds_t usec)
{
    struct timespec t = timespec_of((uint64_t)usec * 1000);
    return nanosleep(&t, NULL);
}

HS_API unsigned int sleep(unsigned int seconds)
{
    struct timespec t = {(time_t)seconds, 0}, rem = {0, 0};
    if (nanosleep(&t, &rem) == 0)
        return 0;
    return (unsigned)rem.tv_sec + (rem.tv_nsec > 0); /* a signal cut it short: what was left, rounded up */
}

/* select and poll on no file descriptor are sleeps (older code's portable sleep); on any, real waits. */
HS_API int select(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, struct timeval *timeout)
{
    if (nfds != 0 && hs_clock_simulated())
        return hs_io_select(nfds, readfds, writefds, exceptfds, timeout); /* a wait on descriptors */
    if (nfds != 0 || readfds || writefds || exceptfds || !timeout || !hs_clock_reads_simulated(CLOCK_MONOTONIC))
        return REAL(select)(nfds, readfds, writefds, exceptfds, timeout);
    if (timeout->tv_sec < 0 || timeout->tv_usec < 0 || timeout->tv_usec >= 1000000) {
        errno = EINVAL;
        return -1;
    }
    struct timespec left = {timeout->tv_sec, timeout->tv_usec * 1000};
    int rc = sleep_for(length_ns(&left), &left);
    if (rc != 0) { /* a real sleep cut short: as select, EINTR and what was left */
        timeout->tv_sec = left.tv_sec;
        timeout->tv_usec = left.tv_nsec / 1000;
        errno = rc;
        return -1;
    }
    timeout->tv_sec = 0; /* Linux's select leaves the time not slept */
    timeout->tv_usec = 0;
    return 0;
}

HS_API int poll(struct pollfd *fds, nfds_t nfds, int timeout_ms)
{
    if (nfds != 0 && timeout_ms != 0 && hs_clock_simulated())
        return hs_io_poll(fds, nfds, timeout_ms); /* a wait on descriptors */
    if (nfds != 0 || timeout_ms <= 0 || !hs_clock_reads_simulated(CLOCK_MONOTONIC))
        return REAL(poll)(fds, nfds, timeout_ms);
    int rc = sleep_for((uint64_t)timeout_ms * 1000000, NULL);
    if (rc == 0)
        return 0;
    errno = rc;
    return -1;
}

/* libc's calls are looked up here, not lazily: dlsym may allocate, which a sanitizer's own threads must not see. */
__attribute__((constructor)) static void sleep_init(void) { resolve(); }

/*
 * sched_yield: a thread that yields in a loop waits for another process on
 * this machine, as MPI's progress loop does between two ranks' GPU work when
 * the ranks outnumber the cores (Open MPI then yields). Nothing it does tells
 * hysimd, so the simulation could not pass its clock while the rank it waits
 * for waits in hysimd. After HS_YIELD_SPIN yields in a row with nothing
 * issued, the thread counts as waiting outside hysimd, as one blocked in a
 * socket read does, until its next intercepted call other than a yield
 * (docs/launchers.md, "MPI's waits").
 */
#define HS_YIELD_SPIN 1000u

static __thread uint64_t t_yield_issued; /* the process's issued count at this thread's last yield */
static __thread unsigned t_yields;       /* yields in a row since then */

HS_API int sched_yield(void)
{
    if (!hs_clock_simulated())
        return (int)syscall(SYS_sched_yield);
    uint64_t issued = hs_client_issued();
    if (issued != t_yield_issued) {
        t_yield_issued = issued;
        t_yields = 0;
    }
    if (++t_yields == HS_YIELD_SPIN) {
        hs_client_spin_outside();
        t_yield_issued = hs_client_issued(); /* its own message is not the process's work */
    }
    return (int)syscall(SYS_sched_yield);
}
