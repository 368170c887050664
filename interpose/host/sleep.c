/*
 * Sleeps in simulated time (nanosleep, clock_nanosleep, usleep, sleep, and
 * select and poll on no descriptor): docs/client.md, "Sleeps", says when a
 * sleep waits in hysimd and when in real time.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sys/select.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "host_io.h"
#include "internal.h"

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
 * Sleeps until the host clock reads until_ns: 0, or an error number (EINTR:
 * a signal cut a real sleep short; *rem, when given, then holds what was
 * left of it). Inside an intercepted call.
 */
static int sleep_until(uint64_t until_ns, struct timespec *rem)
{
    if (hs_client_sleep_until(until_ns) == HS_SLEEP_DONE)
        return 0;
    uint64_t now = hs_clock_now();
    uint64_t left = until_ns > now ? until_ns - now : 0;
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
