/*
 * Blocking I/O: poll, ppoll, select, pselect, epoll_wait, epoll_pwait,
 * accept, accept4, recv, recvfrom and recvmsg. A thread blocked in one
 * cannot issue GPU work until it returns, so it is listed as blocked
 * (hs_client_io_block): a process whose every thread blocks so, as a rank
 * waiting on a TCPStore key another rank sets after its own GPU work, does
 * not hold the simulation back. On return the process joins again and its
 * clock moves to where the simulation is. A call that would not block (a
 * probe with no timeout says so) runs as it is. docs/time.md, "Outside CUDA".
 *
 * poll and select with no descriptor are sleeps (sleep.c), which calls
 * hs_io_poll / hs_io_select here for the others.
 */
#include "host_io.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "internal.h"
#include "threads.h"

typedef int (*ppoll_fn)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
typedef int (*pselect_fn)(int, fd_set *, fd_set *, fd_set *, const struct timespec *, const sigset_t *);
typedef int (*epoll_wait_fn)(int, struct epoll_event *, int, int);
typedef int (*epoll_pwait_fn)(int, struct epoll_event *, int, int, const sigset_t *);
typedef int (*accept_fn)(int, struct sockaddr *, socklen_t *);
typedef int (*accept4_fn)(int, struct sockaddr *, socklen_t *, int);
typedef ssize_t (*recv_fn)(int, void *, size_t, int);
typedef ssize_t (*recvfrom_fn)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
typedef ssize_t (*recvmsg_fn)(int, struct msghdr *, int);

static struct {
    poll_fn_t poll;
    select_fn_t select;
    ppoll_fn ppoll;
    pselect_fn pselect;
    epoll_wait_fn epoll_wait;
    epoll_pwait_fn epoll_pwait;
    accept_fn accept;
    accept4_fn accept4;
    recv_fn recv;
    recvfrom_fn recvfrom;
    recvmsg_fn recvmsg;
} real; /* libc's, found by the constructor */

#define STORE(field, name) __atomic_store_n(&real.field, hs_next_symbol(name, NULL), __ATOMIC_RELEASE)

__attribute__((constructor)) static void host_io_init(void) {
    STORE(poll, "poll");
    STORE(select, "select");
    STORE(ppoll, "ppoll");
    STORE(pselect, "pselect");
    STORE(epoll_wait, "epoll_wait");
    STORE(epoll_pwait, "epoll_pwait");
    STORE(accept, "accept");
    STORE(accept4, "accept4");
    STORE(recv, "recv");
    STORE(recvfrom, "recvfrom");
    STORE(recvmsg, "recvmsg");
}

#define REAL(field) (__atomic_load_n(&real.field, __ATOMIC_ACQUIRE))

/* Whether a read of fd would block now: nothing to read on a descriptor in blocking mode. */
static int would_block(int fd, int flags) {
    if (flags & MSG_DONTWAIT)
        return 0;
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || (fl & O_NONBLOCK))
        return 0;
    struct pollfd p = {fd, POLLIN, 0};
    return REAL(poll)(&p, 1, 0) == 0;
}

/* Runs call (a blocking I/O call's real form) with the thread listed as blocked; errno kept. */
#define BLOCKING(type, call)                                                                                 \
    do {                                                                                                     \
        hs_parked p_;                                                                                        \
        int listed_ = hs_client_io_block(&p_);                                                               \
        type rc_ = (call);                                                                                   \
        int e_ = errno;                                                                                      \
        if (listed_)                                                                                         \
            hs_client_io_unblock(&p_);                                                                       \
        errno = e_;                                                                                          \
        return rc_;                                                                                          \
    } while (0)

int hs_io_poll(struct pollfd *fds, nfds_t nfds, int timeout_ms) {
    int rc = REAL(poll)(fds, nfds, 0);
    if (rc != 0 || timeout_ms == 0)
        return rc;
    BLOCKING(int, REAL(poll)(fds, nfds, timeout_ms));
}

int hs_io_select(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, struct timeval *timeout) {
    if (timeout && timeout->tv_sec == 0 && timeout->tv_usec == 0)
        return REAL(select)(nfds, readfds, writefds, exceptfds, timeout);
    fd_set r, w, x; /* the probe overwrites the sets: keep them for the real call */
    if (readfds)
        r = *readfds;
    if (writefds)
        w = *writefds;
    if (exceptfds)
        x = *exceptfds;
    struct timeval zero = {0, 0};
    int rc = REAL(select)(nfds, readfds, writefds, exceptfds, &zero);
    if (rc != 0)
        return rc;
    if (readfds)
        *readfds = r;
    if (writefds)
        *writefds = w;
    if (exceptfds)
        *exceptfds = x;
    BLOCKING(int, REAL(select)(nfds, readfds, writefds, exceptfds, timeout));
}

HS_API int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout, const sigset_t *sigmask) {
    if (!hs_clock_simulated() || nfds == 0 || (timeout && timeout->tv_sec == 0 && timeout->tv_nsec == 0))
        return REAL(ppoll)(fds, nfds, timeout, sigmask);
    int rc = REAL(poll)(fds, nfds, 0);
    if (rc != 0)
        return rc;
    BLOCKING(int, REAL(ppoll)(fds, nfds, timeout, sigmask));
}

HS_API int pselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, const struct timespec *timeout,
                   const sigset_t *sigmask) {
    if (!hs_clock_simulated() || nfds == 0)
        return REAL(pselect)(nfds, readfds, writefds, exceptfds, timeout, sigmask);
    BLOCKING(int, REAL(pselect)(nfds, readfds, writefds, exceptfds, timeout, sigmask));
}

HS_API int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout_ms) {
    if (!hs_clock_simulated() || timeout_ms == 0)
        return REAL(epoll_wait)(epfd, events, maxevents, timeout_ms);
    int rc = REAL(epoll_wait)(epfd, events, maxevents, 0);
    if (rc != 0)
        return rc;
    BLOCKING(int, REAL(epoll_wait)(epfd, events, maxevents, timeout_ms));
}

HS_API int epoll_pwait(int epfd, struct epoll_event *events, int maxevents, int timeout_ms, const sigset_t *sigmask) {
    if (!hs_clock_simulated() || timeout_ms == 0)
        return REAL(epoll_pwait)(epfd, events, maxevents, timeout_ms, sigmask);
    int rc = REAL(epoll_wait)(epfd, events, maxevents, 0);
    if (rc != 0)
        return rc;
    BLOCKING(int, REAL(epoll_pwait)(epfd, events, maxevents, timeout_ms, sigmask));
}

HS_API int accept(int fd, struct sockaddr *addr, socklen_t *len) {
    if (!hs_clock_simulated() || !would_block(fd, 0))
        return REAL(accept)(fd, addr, len);
    BLOCKING(int, REAL(accept)(fd, addr, len));
}

HS_API int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
    if (!hs_clock_simulated() || !would_block(fd, 0))
        return REAL(accept4)(fd, addr, len, flags);
    BLOCKING(int, REAL(accept4)(fd, addr, len, flags));
}

HS_API ssize_t recv(int fd, void *buf, size_t len, int flags) {
    if (!hs_clock_simulated() || !would_block(fd, flags))
        return REAL(recv)(fd, buf, len, flags);
    BLOCKING(ssize_t, REAL(recv)(fd, buf, len, flags));
}

HS_API ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *addr, socklen_t *alen) {
    if (!hs_clock_simulated() || !would_block(fd, flags))
        return REAL(recvfrom)(fd, buf, len, flags, addr, alen);
    BLOCKING(ssize_t, REAL(recvfrom)(fd, buf, len, flags, addr, alen));
}

HS_API ssize_t recvmsg(int fd, struct msghdr *msg, int flags) {
    if (!hs_clock_simulated() || !would_block(fd, flags))
        return REAL(recvmsg)(fd, msg, flags);
    BLOCKING(ssize_t, REAL(recvmsg)(fd, msg, flags));
}
