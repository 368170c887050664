/*
 * Transports between application processes and hysimd. An endpoint is a
 * string: "unix:/path/to/socket", or "tcp:HOST:PORT" (HOST a name or an
 * address, IPv6 in brackets; PORT 0 lets the system choose one when listening).
 */
#ifndef HYSIM_BRIDGE_TRANSPORT_H
#define HYSIM_BRIDGE_TRANSPORT_H

#include <stddef.h>

/* Creates a listening socket for the endpoint; returns the fd or -1 with err. */
int hs_transport_listen(const char *endpoint, char *err, size_t errlen);

/* Accepts one connection, non-blocking and close-on-exec; -1 when none is pending or on error. */
int hs_transport_accept(int listen_fd);

/* Connects (blocking, close-on-exec); -1 with a message naming the endpoint. */
int hs_transport_connect(const char *endpoint, char *err, size_t errlen);

/*
 * The endpoint a client should use to reach listen_fd, bound for `endpoint`:
 * the same string, except that a TCP port 0 becomes the port bound. 0, or -1 with err.
 */
int hs_transport_bound_endpoint(int listen_fd, const char *endpoint, char *out, size_t len, char *err, size_t errlen);

/* Removes what listen created (the socket file). */
void hs_transport_unlink(const char *endpoint);

#endif
