/*
 * Transports between application processes and hysimd. An endpoint is a
 * string: "unix:/path/to/socket" (the only transport so far).
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

/* Removes what listen created (the socket file). */
void hs_transport_unlink(const char *endpoint);

#endif
