/*
 * The Unix-socket transport (transport.h): endpoint "unix:/path/to/socket".
 * "tcp:" endpoints are handed to transport_tcp.c.
 */
#include "transport.h"
#include "error_text.h"
#include "transport_tcp.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define UNIX_PREFIX    "unix:"
#define LISTEN_BACKLOG 128

/* Fills sa from "unix:/path"; 0, or -1 with err. */
static int parse_endpoint(const char *endpoint, struct sockaddr_un *sa, char *err, size_t errlen)
{
    const size_t plen = sizeof UNIX_PREFIX - 1;
    if (!endpoint || strncmp(endpoint, UNIX_PREFIX, plen) != 0 || endpoint[plen] == '\0') {
        hs_error_format(err, errlen, "unsupported endpoint \"%s\" (expected unix:/path or tcp:HOST:PORT)",
                        endpoint ? endpoint : "(null)");
        return -1;
    }
    const char *path = endpoint + plen;
    size_t n = strlen(path);
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    if (n >= sizeof sa->sun_path) {
        hs_error_format(err, errlen, "socket path too long (%zu bytes, at most %zu): %s", n, sizeof sa->sun_path - 1,
                        path);
        return -1;
    }
    memcpy(sa->sun_path, path, n + 1);
    return 0;
}

/* connect() that survives EINTR: the connection then completes on its own. */
static int connect_eintr(int fd, const struct sockaddr_un *sa)
{
    if (connect(fd, (const struct sockaddr *)sa, sizeof *sa) == 0)
        return 0;
    if (errno != EINTR)
        return -1;
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        int r = poll(&pfd, 1, -1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
            return -1;
        if (soerr) {
            errno = soerr;
            return -1;
        }
        return 0;
    }
}

/*
 * After bind found the path taken: replace it only when it is a socket nobody
 * listens on (a daemon that died without unlinking). 0 when it was removed.
 */
static int remove_stale(const struct sockaddr_un *sa, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(sa->sun_path, &st) < 0) {
        if (errno == ENOENT) /* gone in between */
            return 0;
        hs_error_format(err, errlen, "cannot listen on %s: %s", sa->sun_path, strerror(errno));
        return -1;
    }
    if (!S_ISSOCK(st.st_mode)) {
        hs_error_format(err, errlen, "cannot listen on %s: the path exists and is not a socket", sa->sun_path);
        return -1;
    }
    int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (probe < 0) {
        hs_error_format(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    int rc = connect_eintr(probe, sa);
    int cerr = errno;
    close(probe);
    if (rc == 0) {
        hs_error_format(err, errlen, "cannot listen on %s: another process is listening there", sa->sun_path);
        return -1;
    }
    if (cerr != ECONNREFUSED) {
        hs_error_format(err, errlen, "cannot listen on %s: it exists and probing it failed: %s", sa->sun_path,
                        strerror(cerr));
        return -1;
    }
    if (unlink(sa->sun_path) < 0 && errno != ENOENT) {
        hs_error_format(err, errlen, "cannot remove stale socket %s: %s", sa->sun_path, strerror(errno));
        return -1;
    }
    return 0;
}

int hs_transport_listen(const char *endpoint, char *err, size_t errlen)
{
    if (hs_tcp_is_endpoint(endpoint))
        return hs_tcp_listen(endpoint, err, errlen);
    struct sockaddr_un sa;
    if (parse_endpoint(endpoint, &sa, err, errlen) < 0)
        return -1;
    /* Non-blocking, so that hs_transport_accept returns -1 when nothing is pending. */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        hs_error_format(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    int rc = bind(fd, (const struct sockaddr *)&sa, sizeof sa);
    if (rc < 0 && errno == EADDRINUSE) {
        if (remove_stale(&sa, err, errlen) < 0) {
            close(fd);
            return -1;
        }
        rc = bind(fd, (const struct sockaddr *)&sa, sizeof sa);
    }
    if (rc < 0) {
        hs_error_format(err, errlen, "cannot bind %s: %s", sa.sun_path, strerror(errno));
        close(fd);
        return -1;
    }
    if (listen(fd, LISTEN_BACKLOG) < 0) {
        hs_error_format(err, errlen, "cannot listen on %s: %s", sa.sun_path, strerror(errno));
        close(fd);
        unlink(sa.sun_path);
        return -1;
    }
    return fd;
}

int hs_transport_accept(int listen_fd)
{
    for (;;) {
        int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0)
            hs_tcp_nodelay(fd); /* a no-op error on Unix sockets */
        if (fd >= 0 || errno != EINTR)
            return fd;
    }
}

int hs_transport_connect(const char *endpoint, char *err, size_t errlen)
{
    if (hs_tcp_is_endpoint(endpoint))
        return hs_tcp_connect(endpoint, err, errlen);
    struct sockaddr_un sa;
    if (parse_endpoint(endpoint, &sa, err, errlen) < 0)
        return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        hs_error_format(err, errlen, "cannot connect to %s: socket: %s", endpoint, strerror(errno));
        return -1;
    }
    if (connect_eintr(fd, &sa) < 0) {
        hs_error_format(err, errlen, "cannot connect to %s: %s", endpoint, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int hs_transport_bound_endpoint(int listen_fd, const char *endpoint, char *out, size_t len, char *err, size_t errlen)
{
    if (hs_tcp_is_endpoint(endpoint))
        return hs_tcp_bound_endpoint(listen_fd, endpoint, out, len, err, errlen);
    if (strlen(endpoint) >= len) {
        hs_error_format(err, errlen, "endpoint too long: %s", endpoint);
        return -1;
    }
    memcpy(out, endpoint, strlen(endpoint) + 1);
    return 0;
}

void hs_transport_unlink(const char *endpoint)
{
    struct sockaddr_un sa;
    if (parse_endpoint(endpoint, &sa, NULL, 0) == 0)
        unlink(sa.sun_path);
}
