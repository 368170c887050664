/*
 * Messages between the run's processes order their clocks
 * (message_clocks.c): a pipe or stream-socket write records the sender's
 * clock, a read that returns data moves the reader's clock past it.
 */
#ifndef HS_MESSAGE_CLOCKS_H
#define HS_MESSAGE_CLOCKS_H

#include <sys/stat.h>
#include <sys/types.h>

/* Before a write to fd, a pipe or socket (st: its fstat): records the sender's host clock on its outgoing direction. */
void hs_messages_sending(int fd, const struct stat *st);
/* After a read of n bytes from fd (nothing when n <= 0): clock = max(clock, the latest send on it). */
void hs_messages_received(int fd, const struct stat *st, ssize_t n);

#endif
