/*
 * I/O between processes. Blocking calls: poll, ppoll, select, pselect,
 * epoll_wait, epoll_pwait, accept, accept4, and recv, recvfrom, recvmsg,
 * read and readv on sockets and pipes. A thread blocked in one
 * cannot issue GPU work until it returns, so it is listed as blocked
 * (hs_client_io_block): a process whose every thread blocks so, as a rank
 * waiting on a TCPStore key another rank sets after its own GPU work, does
 * not hold the simulation back. On return the process joins again and its
 * clock moves to where the simulation is. A call that would not block (a
 * probe with no timeout says so) runs as it is. docs/time.md, "Outside CUDA".
 *
 * poll and select with no descriptor are sleeps (sleep.c), which calls
 * hs_io_poll / hs_io_select here for the others.
 *
 * Writes to sockets and pipes (send, sendto, sendmsg, write, writev) and
 * reads from them carry the sender's clock to the reader
 * (message_clocks.c).
 */
#include "host_io.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "internal.h"
#include "message_clocks.h"
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
typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*readv_fn)(int, const struct iovec *, int);
typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*writev_fn)(int, const struct iovec *, int);
typedef ssize_t (*sendto_fn)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
typedef ssize_t (*sendmsg_fn)(int, const struct msghdr *, int);

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
    read_fn read;
    readv_fn readv;
    write_fn write;
    writev_fn writev;
    sendto_fn sendto;
    sendmsg_fn sendmsg;
} real; /* libc's, found by the constructor */

#define STORE(field, name) __atomic_store_n(&real.field, hs_next_symbol(name, NULL), __ATOMIC_RELEASE)

__attribute__((constructor)) static void host_io_init(void)
{
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
    STORE(read, "read");
    STORE(readv, "readv");
    STORE(write, "write");
    STORE(writev, "writev");
    STORE(sendto, "sendto");
    STORE(sendmsg, "sendmsg");
}

#define REAL(field) (__atomic_load_n(&real.field, __ATOMIC_ACQUIRE))

/* Whether a read of fd would block now: nothing to read on a descriptor in blocking mode. */
static int would_block(int fd, int flags)
{
    if (flags & MSG_DONTWAIT)
        return 0;
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || (fl & O_NONBLOCK))
        return 0;
    struct pollfd p = {fd, POLLIN, 0};
    return REAL(poll)(&p, 1, 0) == 0;
}

/* Runs call (a blocking I/O call's real form) into out with the thread listed as blocked; errno kept. */
#define RUN_LISTED(out, call)                  \
    do {                                       \
        hs_parked p_;                          \
        int listed_ = hs_client_io_block(&p_); \
        out = (call);                          \
        int e_ = errno;                        \
        if (listed_)                           \
            hs_client_io_unblock(&p_);         \
        errno = e_;                            \
    } while (0)

/* Returns call's result, run listed as blocked (RUN_LISTED). */
#define BLOCKING(type, call)   \
    do {                       \
        type rc_;              \
        RUN_LISTED(rc_, call); \
        return rc_;            \
    } while (0)

int hs_io_poll(struct pollfd *fds, nfds_t nfds, int timeout_ms)
{
    int rc = REAL(poll)(fds, nfds, 0);
    if (rc != 0 || timeout_ms == 0)
        return rc;
    BLOCKING(int, REAL(poll)(fds, nfds, timeout_ms));
}

int hs_io_select(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, struct timeval *timeout)
{
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

HS_API int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout, const sigset_t *sigmask)
{
    if (!hs_clock_simulated() || nfds == 0 || (timeout && timeout->tv_sec == 0 && timeout->tv_nsec == 0))
        return REAL(ppoll)(fds, nfds, timeout, sigmask);
    int rc = REAL(poll)(fds, nfds, 0);
    if (rc != 0)
        return rc;
    BLOCKING(int, REAL(ppoll)(fds, nfds, timeout, sigmask));
}

HS_API int pselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, const struct timespec *timeout,
                   const sigset_t *sigmask)
{
    if (!hs_clock_simulated() || nfds == 0)
        return REAL(pselect)(nfds, readfds, writefds, exceptfds, timeout, sigmask);
    BLOCKING(int, REAL(pselect)(nfds, readfds, writefds, exceptfds, timeout, sigmask));
}

HS_API int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout_ms)
{
    if (!hs_clock_simulated() || timeout_ms == 0)
        return REAL(epoll_wait)(epfd, events, maxevents, timeout_ms);
    int rc = REAL(epoll_wait)(epfd, events, maxevents, 0);
    if (rc != 0)
        return rc;
    BLOCKING(int, REAL(epoll_wait)(epfd, events, maxevents, timeout_ms));
}

HS_API int epoll_pwait(int epfd, struct epoll_event *events, int maxevents, int timeout_ms, const sigset_t *sigmask)
{
    if (!hs_clock_simulated() || timeout_ms == 0)
        return REAL(epoll_pwait)(epfd, events, maxevents, timeout_ms, sigmask);
    int rc = REAL(epoll_wait)(epfd, events, maxevents, 0);
    if (rc != 0)
        return rc;
    BLOCKING(int, REAL(epoll_pwait)(epfd, events, maxevents, timeout_ms, sigmask));
}

HS_API int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
    if (!hs_clock_simulated() || !would_block(fd, 0))
        return REAL(accept)(fd, addr, len);
    BLOCKING(int, REAL(accept)(fd, addr, len));
}

HS_API int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
    if (!hs_clock_simulated() || !would_block(fd, 0))
        return REAL(accept4)(fd, addr, len, flags);
    BLOCKING(int, REAL(accept4)(fd, addr, len, flags));
}

/* Whether fd is a pipe or a socket, what carries messages between processes; *st its fstat. */
static int carries_messages(int fd, struct stat *st)
{
    return fstat(fd, st) == 0 && (S_ISFIFO(st->st_mode) || S_ISSOCK(st->st_mode));
}

/* Runs a read-like call on fd: listed as blocked when it would block; its data then moves the clock. */
#define RECEIVING(fd, flags, call)                                \
    do {                                                          \
        struct stat st_;                                          \
        if (!hs_clock_simulated() || !carries_messages(fd, &st_)) \
            return (call);                                        \
        ssize_t n_;                                               \
        if (would_block(fd, flags))                               \
            RUN_LISTED(n_, call);                                 \
        else                                                      \
            n_ = (call);                                          \
        int e_ = errno;                                           \
        hs_messages_received(fd, &st_, n_);                       \
        errno = e_;                                               \
        return n_;                                                \
    } while (0)

/* Runs a write-like call on fd, its clock recorded first when fd carries messages. */
#define SENDING(fd, call)                                         \
    do {                                                          \
        struct stat st_;                                          \
        if (hs_clock_simulated() && carries_messages(fd, &st_)) { \
            int e_ = errno;                                       \
            hs_messages_sending(fd, &st_);                        \
            errno = e_;                                           \
        }                                                         \
        return (call);                                            \
    } while (0)

/* The real call, or the system call while the constructor has not found libc's yet. */
#define REAL_OR(field, ...) (REAL(field) ? REAL(field)(__VA_ARGS__) : syscall(SYS_##field, __VA_ARGS__))

HS_API ssize_t recv(int fd, void *buf, size_t len, int flags) { RECEIVING(fd, flags, REAL(recv)(fd, buf, len, flags)); }

HS_API ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *addr, socklen_t *alen)
{
    RECEIVING(fd, flags, REAL(recvfrom)(fd, buf, len, flags, addr, alen));
}

HS_API ssize_t recvmsg(int fd, struct msghdr *msg, int flags) { RECEIVING(fd, flags, REAL(recvmsg)(fd, msg, flags)); }

HS_API ssize_t read(int fd, void *buf, size_t len) { RECEIVING(fd, 0, REAL_OR(read, fd, buf, len)); }

HS_API ssize_t readv(int fd, const struct iovec *iov, int n) { RECEIVING(fd, 0, REAL_OR(readv, fd, iov, n)); }

HS_API ssize_t write(int fd, const void *buf, size_t len) { SENDING(fd, REAL_OR(write, fd, buf, len)); }

HS_API ssize_t writev(int fd, const struct iovec *iov, int n) { SENDING(fd, REAL_OR(writev, fd, iov, n)); }

HS_API ssize_t send(int fd, const void *buf, size_t len, int flags)
{
    SENDING(fd, REAL_OR(sendto, fd, buf, len, flags, NULL, 0));
}

HS_API ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *addr, socklen_t alen)
{
    SENDING(fd, REAL_OR(sendto, fd, buf, len, flags, addr, alen));
}

HS_API ssize_t sendmsg(int fd, const struct msghdr *msg, int flags) { SENDING(fd, REAL_OR(sendmsg, fd, msg, flags)); }
