/*
 * hysimd's connections before they are the program's: accepting them, the
 * caps on those that have not registered (how many, how long, how many bytes
 * each), refusing past the open-file limit without spinning, and forgetting
 * the closed ones. docs/architecture.md, "Connections", says why each bound
 * is what it is.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "daemon_internal.h"
#include "transport.h"

/* Accepted per turn of the loop: a flood of connections cannot keep the loop from its other work. */
#define ACCEPT_BATCH 64

/* One descriptor held back, so that a connection past the limit can still be accepted and closed. */
static int open_spare(hs_daemon *d)
{
    d->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    return d->spare_fd;
}

int hs_admit_init(hs_daemon *d, char *err, size_t errlen)
{
    /* a large job opens a connection per process: take what the hard limit allows */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (open_spare(d) < 0) {
        snprintf(err, errlen, "hysimd: cannot open /dev/null: %s", strerror(errno));
        return -1;
    }
    return 0;
}

void hs_admit_fini(hs_daemon *d)
{
    if (d->spare_fd >= 0)
        close(d->spare_fd);
    d->spare_fd = -1;
}

/* The unregistered connection accepted first (it has had the longest to register), or NULL. */
static hs_session *oldest_unregistered(const hs_daemon *d, size_t *open)
{
    hs_session *oldest = NULL;
    *open = 0;
    for (size_t i = 0; i < d->nsessions; i++) {
        hs_session *s = d->sessions[i];
        if (s->registered || s->fd < 0)
            continue;
        (*open)++;
        if (!oldest || s->index < oldest->index)
            oldest = s;
    }
    return oldest;
}

/* Closes a stranger to make room (the oldest: the program's own processes register at once, so they are never
 * it); false when there is none. */
static bool make_room(hs_daemon *d, hs_session *oldest)
{
    if (!oldest)
        return false;
    hs_session_close(oldest);
    d->sum.refused_connections++;
    return true;
}

/* Out of descriptors and no stranger to close: the pending connection takes the spare one and is closed. */
static void refuse_past_limit(hs_daemon *d)
{
    if (d->spare_fd < 0)
        return;
    close(d->spare_fd);
    int fd = hs_transport_accept(d->listen_fd);
    if (fd >= 0) {
        close(fd);
        d->sum.refused_connections++;
    }
    open_spare(d);
}

void hs_admit_accept(hs_daemon *d)
{
    for (int n = 0; n < ACCEPT_BATCH && !d->failed; n++) {
        int fd = hs_transport_accept(d->listen_fd);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE) {
                size_t open;
                if (!make_room(d, oldest_unregistered(d, &open)))
                    refuse_past_limit(d);
                if (d->spare_fd < 0)
                    hs_daemon_fail(d, "hysimd: out of file descriptors: cannot accept connections (ulimit -n)");
                continue;
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNABORTED && errno != EPROTO)
                hs_daemon_fail(d, "hysimd: accept on %s: %s", d->endpoint, strerror(errno));
            return;
        }
        size_t open;
        hs_session *oldest = oldest_unregistered(d, &open);
        if (open >= HS_UNREGISTERED_MAX)
            make_room(d, oldest);
        hs_session *s = hs_session_new(d, fd);
        hs_session_process(s); /* its Register has usually arrived: it then never counts as a stranger */
    }
}

int hs_admit_close_silent(hs_daemon *d, int64_t now_ms)
{
    int64_t next = -1;
    for (size_t i = 0; i < d->nsessions; i++) {
        hs_session *s = d->sessions[i];
        if (s->registered || s->fd < 0)
            continue;
        int64_t left = s->connected_ms + HS_REGISTER_GRACE_MS - now_ms;
        if (left <= 0) {
            d->sum.rejected_unknown++;
            hs_session_close(s);
        } else if (next < 0 || left < next) {
            next = left;
        }
    }
    return (int)next;
}

void hs_admit_close_strangers(hs_daemon *d)
{
    for (size_t i = 0; i < d->nsessions; i++) {
        hs_session *s = d->sessions[i];
        if (!s->registered && s->fd >= 0) {
            d->sum.rejected_unknown += s->rd.len > 0;
            hs_session_close(s);
        }
    }
}

void hs_admit_forget_closed(hs_daemon *d)
{
    size_t kept = 0;
    for (size_t i = 0; i < d->nsessions; i++) {
        hs_session *s = d->sessions[i];
        if (s->fd < 0)
            hs_frame_reader_free(&s->rd); /* a closed session reads no more */
        if (s->fd < 0 && !s->registered)
            hs_session_free(s); /* never part of the program: nothing refers to it */
        else
            d->sessions[kept++] = s;
    }
    d->nsessions = kept;
}
