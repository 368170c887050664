/*
 * The TCP transport, "tcp:HOST:PORT": used by transport_unix.c's
 * hs_transport_* functions when an endpoint starts with "tcp:".
 */
#ifndef HYSIM_BRIDGE_TRANSPORT_TCP_H
#define HYSIM_BRIDGE_TRANSPORT_TCP_H

#include <stdbool.h>
#include <stddef.h>

#define HS_TCP_PREFIX "tcp:"

bool hs_tcp_is_endpoint(const char *endpoint);
/* Listening socket, non-blocking and close-on-exec; -1 with err. */
int hs_tcp_listen(const char *endpoint, char *err, size_t errlen);
/* Connected socket (blocking, close-on-exec, no Nagle delay); -1 with err naming the endpoint. */
int hs_tcp_connect(const char *endpoint, char *err, size_t errlen);
/* Disables Nagle's algorithm: every frame is a request waiting for its answer. */
void hs_tcp_nodelay(int fd);
/* "tcp:HOST:PORT" with the port listen_fd is bound to. 0, or -1 with err. */
int hs_tcp_bound_endpoint(int listen_fd, const char *endpoint, char *out, size_t len, char *err, size_t errlen);

#endif
