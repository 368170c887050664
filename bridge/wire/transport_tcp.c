/*
 * The TCP transport (transport_tcp.h): "tcp:HOST:PORT". `hysim run` binds the
 * loopback address unless told otherwise; anyone who can reach the port can
 * connect, so hysimd also checks the run's token in Register (hysimd.h).
 */
#include "transport_tcp.h"
#include "error_text.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define LISTEN_BACKLOG 128

bool hs_tcp_is_endpoint(const char *endpoint)
{
    return endpoint && strncmp(endpoint, HS_TCP_PREFIX, sizeof HS_TCP_PREFIX - 1) == 0;
}

/* Splits "tcp:HOST:PORT" (HOST may be "[v6]") into host and port; 0, or -1 with err. */
static int split(const char *endpoint, char *host, size_t hostlen, char *port, size_t portlen, char *err, size_t errlen)
{
    const char *rest = endpoint + sizeof HS_TCP_PREFIX - 1;
    const char *colon = strrchr(rest, ':');
    const char *h = rest, *hend = colon;
    if (colon && rest[0] == '[') {
        h = rest + 1;
        hend = colon > rest && colon[-1] == ']' ? colon - 1 : NULL;
    }
    if (!colon || !hend || hend <= h || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
        (size_t)(hend - h) >= hostlen || strlen(colon + 1) >= portlen) {
        hs_error_format(err, errlen, "bad endpoint \"%s\" (expected tcp:HOST:PORT, e.g. tcp:127.0.0.1:0)", endpoint);
        return -1;
    }
    memcpy(host, h, (size_t)(hend - h));
    host[hend - h] = '\0';
    snprintf(port, portlen, "%s", colon + 1);
    return 0;
}

static struct addrinfo *resolve(const char *endpoint, bool passive, char *err, size_t errlen)
{
    char host[256], port[16];
    if (split(endpoint, host, sizeof host, port, sizeof port, err, errlen) < 0)
        return NULL;
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0)};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        hs_error_format(err, errlen, "cannot resolve %s: %s", endpoint, gai_strerror(rc));
        return NULL;
    }
    return res;
}

void hs_tcp_nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

int hs_tcp_listen(const char *endpoint, char *err, size_t errlen)
{
    struct addrinfo *res = resolve(endpoint, true, err, errlen);
    if (!res)
        return -1;
    int fd = -1, saved = 0;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
            saved = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0)
        hs_error_format(err, errlen, "cannot listen on %s: %s", endpoint, strerror(saved));
    return fd;
}

int hs_tcp_connect(const char *endpoint, char *err, size_t errlen)
{
    struct addrinfo *res = resolve(endpoint, false, err, errlen);
    if (!res)
        return -1;
    int fd = -1, saved = 0;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        int rc;
        while ((rc = connect(fd, ai->ai_addr, ai->ai_addrlen)) < 0 && errno == EINTR)
            ;
        if (rc < 0 && errno != EISCONN) {
            saved = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        hs_error_format(err, errlen, "cannot connect to %s: %s", endpoint, strerror(saved));
        return -1;
    }
    hs_tcp_nodelay(fd);
    return fd;
}

int hs_tcp_bound_endpoint(int listen_fd, const char *endpoint, char *out, size_t len, char *err, size_t errlen)
{
    char host[256], port[16];
    if (split(endpoint, host, sizeof host, port, sizeof port, err, errlen) < 0)
        return -1;
    struct sockaddr_storage sa;
    socklen_t salen = sizeof sa;
    if (getsockname(listen_fd, (struct sockaddr *)&sa, &salen) < 0) {
        hs_error_format(err, errlen, "%s: getsockname: %s", endpoint, strerror(errno));
        return -1;
    }
    unsigned bound = sa.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&sa)->sin6_port)
                                              : ntohs(((struct sockaddr_in *)&sa)->sin_port);
    bool v6 = strchr(host, ':') != NULL;
    int n = snprintf(out, len, "%s%s%s%s:%u", HS_TCP_PREFIX, v6 ? "[" : "", host, v6 ? "]" : "", bound);
    if (n < 0 || (size_t)n >= len) {
        hs_error_format(err, errlen, "%s: endpoint too long", endpoint);
        return -1;
    }
    return 0;
}
