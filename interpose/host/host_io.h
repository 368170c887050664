/*
 * Blocking I/O under hysim (host_io.c): a thread blocked in a socket, a
 * pipe or poll is outside the simulation until the call returns.
 */
#ifndef HS_HOST_IO_H
#define HS_HOST_IO_H

#include <poll.h>
#include <sys/select.h>

typedef int (*poll_fn_t)(struct pollfd *, nfds_t, int);
typedef int (*select_fn_t)(int, fd_set *, fd_set *, fd_set *, struct timeval *);

/* poll and select on descriptors (sleep.c hands them over): listed as blocked while they wait. */
int hs_io_poll(struct pollfd *fds, nfds_t nfds, int timeout_ms);
int hs_io_select(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, struct timeval *timeout);

#endif
