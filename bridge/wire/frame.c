/*
 * Framing for the hysim wire protocol (frame.h): a 4-byte little-endian
 * length, then one message's bytes (messages.c encodes them). Nothing a peer sends can make this code
 * crash or allocate more than it has actually received (plus a header and
 * HS_FRAME_MAX as the hard bound).
 */
#include "frame.h"
#include "error_text.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define HDR 4u
/* First allocation of a reader's buffer; it doubles from there. */
#define READER_MIN_CAP 4096u

static uint32_t get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static int length_ok(uint32_t len) { return len != 0 && len <= HS_FRAME_MAX; }

static size_t reader_limit(const hs_frame_reader *r) { return r->limit ? r->limit : HS_FRAME_MAX; }

static int reader_length_ok(const hs_frame_reader *r, uint32_t len) { return len != 0 && len <= reader_limit(r); }

/* ---- non-blocking reader ---- */

void hs_frame_reader_init(hs_frame_reader *r) { memset(r, 0, sizeof *r); }

void hs_frame_reader_free(hs_frame_reader *r)
{
    free(r->buf);
    memset(r, 0, sizeof *r);
}

void hs_frame_reader_set_limit(hs_frame_reader *r, size_t max_body)
{
    r->limit = max_body < HS_FRAME_MAX ? max_body : 0;
}

long hs_frame_reader_fill(hs_frame_reader *r, int fd)
{
    /* Drop what hs_frame_reader_next has handed out; the bodies it returned
     * are only valid until this call. */
    if (r->off > 0) {
        memmove(r->buf, r->buf + r->off, r->len - r->off);
        r->len -= r->off;
        r->off = 0;
    }
    const size_t max_cap = (size_t)HDR + reader_limit(r);
    if (r->len == r->cap) {
        /* Grow with what has arrived, never to what a header announces. */
        size_t cap = r->cap ? r->cap * 2 : READER_MIN_CAP;
        if (cap > max_cap)
            cap = max_cap;
        if (cap == r->cap) {
            /* Full at the bound: the buffer already holds a whole frame (or an
             * oversized header) that hs_frame_reader_next will return. */
            errno = EAGAIN;
            return -1;
        }
        uint8_t *nb = realloc(r->buf, cap);
        if (!nb) {
            errno = ENOMEM;
            return HS_FRAME_IO;
        }
        r->buf = nb;
        r->cap = cap;
    }
    for (;;) {
        ssize_t n = read(fd, r->buf + r->len, r->cap - r->len);
        if (n > 0) {
            r->len += (size_t)n;
            return (long)n;
        }
        if (n == 0)
            return 0;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return -1;
        return HS_FRAME_IO;
    }
}

int hs_frame_reader_next(hs_frame_reader *r, const uint8_t **body, size_t *body_len)
{
    size_t avail = r->len - r->off;
    if (avail < HDR)
        return 1;
    uint32_t n = get_le32(r->buf + r->off);
    if (!reader_length_ok(r, n))
        return HS_FRAME_TOO_LARGE;
    if (avail - HDR < n)
        return 1;
    *body = r->buf + r->off + HDR;
    *body_len = n;
    r->off += HDR + n;
    if (r->off == r->len) /* all consumed: next fill starts at 0 without a memmove */
        r->off = r->len = 0;
    return HS_FRAME_OK;
}

int hs_frame_reader_ready(const hs_frame_reader *r)
{
    size_t avail = r->len - r->off;
    if (avail < HDR)
        return 0;
    uint32_t n = get_le32(r->buf + r->off);
    return !reader_length_ok(r, n) || avail - HDR >= n;
}

int hs_frame_reader_at_eof(const hs_frame_reader *r) { return r->len > r->off ? HS_FRAME_TRUNCATED : HS_FRAME_EOF; }

/* ---- blocking side ---- */

/* Reads exactly len bytes; returns bytes read before EOF (< len) or -1 on error. */
static ssize_t read_full(int fd, uint8_t *p, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, p + got, len - got);
        if (n > 0)
            got += (size_t)n;
        else if (n == 0)
            break;
        else if (errno != EINTR)
            return -1;
    }
    return (ssize_t)got;
}

int hs_frame_read_blocking(int fd, uint8_t **body, size_t *body_len, char *err, size_t errlen)
{
    *body = NULL;
    *body_len = 0;
    uint8_t hdr[HDR];
    ssize_t got = read_full(fd, hdr, HDR);
    if (got < 0) {
        hs_error_format(err, errlen, "reading frame header: %s", strerror(errno));
        return HS_FRAME_IO;
    }
    if (got == 0) {
        hs_error_format(err, errlen, "connection closed");
        return HS_FRAME_EOF;
    }
    if ((size_t)got < HDR) {
        hs_error_format(err, errlen, "connection closed inside a frame header (%zd of %u bytes)", got, HDR);
        return HS_FRAME_TRUNCATED;
    }
    uint32_t n = get_le32(hdr);
    if (!length_ok(n)) {
        hs_error_format(err, errlen, "frame length %u out of range (1..%u bytes)", n, HS_FRAME_MAX);
        return HS_FRAME_TOO_LARGE;
    }
    uint8_t *b = malloc(n);
    if (!b) {
        hs_error_format(err, errlen, "cannot allocate %u bytes for a frame", n);
        return HS_FRAME_IO;
    }
    got = read_full(fd, b, n);
    if (got < 0) {
        hs_error_format(err, errlen, "reading frame body: %s", strerror(errno));
        free(b);
        return HS_FRAME_IO;
    }
    if ((size_t)got < n) {
        hs_error_format(err, errlen, "connection closed inside a frame (%zd of %u body bytes)", got, n);
        free(b);
        return HS_FRAME_TRUNCATED;
    }
    *body = b;
    *body_len = n;
    return HS_FRAME_OK;
}

/*
 * Writes all of iov. On a socket, sendmsg with MSG_NOSIGNAL makes a closed
 * peer an EPIPE error instead of SIGPIPE; anything else (a pipe) gets writev.
 */
static int write_all(int fd, struct iovec *iov, int iovcnt, char *err, size_t errlen)
{
    int use_send = 1;
    while (iovcnt > 0) {
        ssize_t n;
        if (use_send) {
            struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)iovcnt};
            n = sendmsg(fd, &mh, MSG_NOSIGNAL);
            if (n < 0 && errno == ENOTSOCK) {
                use_send = 0;
                continue;
            }
        } else {
            n = writev(fd, iov, iovcnt);
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                /* A non-blocking fd (hysimd's sessions) with a full buffer:
                 * wait for room, since a frame is written whole or not at all. */
                struct pollfd pfd = {.fd = fd, .events = POLLOUT};
                if (poll(&pfd, 1, -1) >= 0 || errno == EINTR)
                    continue;
            }
            hs_error_format(err, errlen, "writing frame: %s", strerror(errno));
            return HS_FRAME_IO;
        }
        size_t left = (size_t)n;
        while (iovcnt > 0 && left >= iov->iov_len) {
            left -= iov->iov_len;
            iov++;
            iovcnt--;
        }
        if (iovcnt > 0) {
            iov->iov_base = (uint8_t *)iov->iov_base + left;
            iov->iov_len -= left;
        }
    }
    return HS_FRAME_OK;
}

int hs_frame_write(int fd, const uint8_t *body, size_t body_len, char *err, size_t errlen)
{
    if (body_len == 0 || body_len > HS_FRAME_MAX) {
        hs_error_format(err, errlen, "refusing to send a frame of %zu bytes (allowed 1..%u)", body_len, HS_FRAME_MAX);
        return HS_FRAME_TOO_LARGE;
    }
    uint8_t hdr[HDR];
    put_le32(hdr, (uint32_t)body_len);
    struct iovec iov[2] = {{hdr, HDR}, {(void *)body, body_len}};
    return write_all(fd, iov, 2, err, errlen);
}

const char *hs_frame_status_name(int status)
{
    switch (status) {
    case HS_FRAME_OK: return "ok";
    case HS_FRAME_EOF: return "eof";
    case HS_FRAME_TRUNCATED: return "truncated";
    case HS_FRAME_TOO_LARGE: return "too large";
    case HS_FRAME_GARBAGE: return "garbage";
    case HS_FRAME_IO: return "i/o error";
    }
    return "unknown frame status";
}
