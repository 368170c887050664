/*
 * A peer that ends inside a frame, announces a length out of range, or has
 * gone away gives the right status and a message: no crash, no SIGPIPE death,
 * and no allocation of the announced size.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bridge_test.h"

/*
 * Every malloc/realloc/calloc made from this executable's objects (the test and
 * libhysim_bridge.a) goes through these (-Wl,--wrap); the largest request is kept.
 */
void *__real_malloc(size_t);
void *__real_realloc(void *, size_t);
void *__real_calloc(size_t, size_t);
static size_t largest_alloc;
static void note(size_t n)
{
    if (n > largest_alloc)
        largest_alloc = n;
}
void *__wrap_malloc(size_t n)
{
    note(n);
    return __real_malloc(n);
}
void *__wrap_realloc(void *p, size_t n)
{
    note(n);
    return __real_realloc(p, n);
}
void *__wrap_calloc(size_t k, size_t n)
{
    note(k * n);
    return __real_calloc(k, n);
}

static char err[512];

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Sends `bytes` then closes; returns the reading end. */
static int stream_of(const uint8_t *bytes, size_t n)
{
    int sv[2];
    bt_socketpair(sv);
    if (n)
        bt_write_all(sv[0], bytes, n);
    close(sv[0]);
    return sv[1];
}

static int blocking_status(const uint8_t *bytes, size_t n)
{
    int fd = stream_of(bytes, n);
    uint8_t *body = (uint8_t *)1;
    size_t len = 1;
    err[0] = '\0';
    int rc = hs_frame_read_blocking(fd, &body, &len, err, sizeof err);
    if (rc != HS_FRAME_OK)
        CHECK(body == NULL && len == 0, "failed read leaves a body");
    else
        free(body);
    close(fd);
    CHECK(rc == HS_FRAME_OK || err[0], "status %s without a message", hs_frame_status_name(rc));
    return rc;
}

/* Feeds the bytes to a reader until EOF; returns the first non-OK status. */
static int reader_status(const uint8_t *bytes, size_t n, size_t *cap)
{
    int fd = stream_of(bytes, n);
    CHECK(fcntl(fd, F_SETFL, O_NONBLOCK) == 0, "O_NONBLOCK");
    hs_frame_reader rd;
    hs_frame_reader_init(&rd);
    int status;
    for (;;) {
        long f = hs_frame_reader_fill(&rd, fd);
        CHECK(f >= 0, "fill %ld: %s", f, strerror(errno));
        const uint8_t *body;
        size_t len;
        int rc;
        while ((rc = hs_frame_reader_next(&rd, &body, &len)) == HS_FRAME_OK)
            ;
        if (rc != 1) {
            status = rc;
            break;
        }
        if (f == 0) {
            status = hs_frame_reader_at_eof(&rd);
            break;
        }
    }
    *cap = rd.cap;
    hs_frame_reader_free(&rd);
    close(fd);
    return status;
}

static void case_truncated(void)
{
    const Hysim__ClientMsg **msgs;
    bt_sample_client_msgs(&msgs);
    size_t n;
    uint8_t *body = bt_pack(&msgs[0]->base, &n);
    uint8_t *frame = malloc(4 + n);
    put_le32(frame, (uint32_t)n);
    memcpy(frame + 4, body, n);
    size_t cap;

    CHECK(blocking_status(frame, 0) == HS_FRAME_EOF, "empty stream");
    CHECK(reader_status(frame, 0, &cap) == HS_FRAME_EOF, "empty stream (reader)");
    for (size_t k = 1; k < 4; k++) {
        int rc = blocking_status(frame, k);
        CHECK(rc == HS_FRAME_TRUNCATED, "%zu header bytes: %s", k, hs_frame_status_name(rc));
        CHECK(strstr(err, "header"), "message: %s", err);
        CHECK(reader_status(frame, k, &cap) == HS_FRAME_TRUNCATED, "%zu header bytes (reader)", k);
    }
    for (size_t k = 4; k < 4 + n; k++) {
        int rc = blocking_status(frame, k);
        CHECK(rc == HS_FRAME_TRUNCATED, "%zu of %zu bytes: %s", k, 4 + n, hs_frame_status_name(rc));
        CHECK(reader_status(frame, k, &cap) == HS_FRAME_TRUNCATED, "%zu bytes (reader)", k);
    }
    CHECK(blocking_status(frame, 4 + n) == HS_FRAME_OK, "whole frame");
    CHECK(reader_status(frame, 4 + n, &cap) == HS_FRAME_EOF, "whole frame (reader)");
    /* A whole frame, then part of the next. */
    uint8_t two[2 * 4 + 2 * 64];
    CHECK(4 + n <= 64 + 4, "sample too big");
    memcpy(two, frame, 4 + n);
    memcpy(two + 4 + n, frame, 3 + n);
    CHECK(reader_status(two, 2 * (4 + n) - 1, &cap) == HS_FRAME_TRUNCATED, "second frame cut");
    free(frame);
    free(body);
}

static void case_oversized(void)
{
    const uint32_t lengths[] = {HS_FRAME_MAX + 1, 0xFFFFFFFFu, 0x80000000u, 0};
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        /* A header and some body bytes: the reader must stop at the header. */
        uint8_t bytes[4 + 100];
        put_le32(bytes, lengths[i]);
        memset(bytes + 4, 0x5a, 100);
        largest_alloc = 0;
        int rc = blocking_status(bytes, sizeof bytes);
        CHECK(rc == HS_FRAME_TOO_LARGE, "length %u: %s", lengths[i], hs_frame_status_name(rc));
        CHECK(strstr(err, "out of range"), "length %u message: %s", lengths[i], err);
        CHECK(largest_alloc < 4096, "length %u: blocking read allocated %zu bytes", lengths[i], largest_alloc);
        size_t cap;
        largest_alloc = 0;
        rc = reader_status(bytes, sizeof bytes, &cap);
        CHECK(rc == HS_FRAME_TOO_LARGE, "length %u (reader): %s", lengths[i], hs_frame_status_name(rc));
        CHECK(cap <= 4096 && largest_alloc <= 4096, "length %u: reader allocated %zu (cap %zu)", lengths[i],
              largest_alloc, cap);
        /* Only the header is needed to refuse it. */
        largest_alloc = 0;
        CHECK(reader_status(bytes, 4, &cap) == HS_FRAME_TOO_LARGE, "header alone");
        CHECK(largest_alloc <= 4096, "header alone: allocated %zu", largest_alloc);
    }
    /* The largest legal length is announced but never sent: the reader grows
     * with what arrives, not with the announcement. */
    static uint8_t bytes[4 + 10000];
    put_le32(bytes, HS_FRAME_MAX);
    memset(bytes + 4, 1, sizeof bytes - 4);
    size_t cap;
    largest_alloc = 0;
    CHECK(reader_status(bytes, 4 + 10, &cap) == HS_FRAME_TRUNCATED, "announced max");
    CHECK(cap <= 4096 && largest_alloc <= 4096, "announced max: allocated %zu", largest_alloc);
    largest_alloc = 0;
    CHECK(reader_status(bytes, sizeof bytes, &cap) == HS_FRAME_TRUNCATED, "announced max");
    CHECK(cap <= 2 * sizeof bytes && largest_alloc <= 2 * sizeof bytes,
          "announced max, %zu bytes sent: allocated %zu (cap %zu)", sizeof bytes, largest_alloc, cap);
}

static void case_closed_peer(void)
{
    signal(SIGPIPE, SIG_DFL); /* a SIGPIPE would kill the test */
    const Hysim__ClientMsg **msgs;
    bt_sample_client_msgs(&msgs);
    const Hysim__Reply **replies;
    bt_sample_replies(&replies);
    int sv[2];
    bt_socketpair(sv);
    close(sv[1]);
    err[0] = '\0';
    int rc = hs_frame_send_client_msg(sv[0], msgs[1], err, sizeof err);
    CHECK(rc == HS_FRAME_IO, "send to closed peer: %s", hs_frame_status_name(rc));
    CHECK(strstr(err, strerror(EPIPE)), "message: %s", err);
    err[0] = '\0';
    CHECK(hs_frame_send_reply(sv[0], replies[0], err, sizeof err) == HS_FRAME_IO && err[0], "reply to closed peer");
    uint8_t b[100] = {1};
    err[0] = '\0';
    CHECK(hs_frame_write(sv[0], b, sizeof b, err, sizeof err) == HS_FRAME_IO && err[0], "write to closed peer");
    close(sv[0]);

    /* The peer goes away while a large frame is half written. */
    bt_socketpair(sv);
    size_t n = 8u << 20;
    uint8_t *big = calloc(1, n);
    CHECK(big, "calloc");
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        close(sv[0]);
        uint8_t buf[1000];
        CHECK(read(sv[1], buf, sizeof buf) > 0, "child read");
        _exit(0); /* closes sv[1] mid-frame */
    }
    close(sv[1]);
    err[0] = '\0';
    rc = hs_frame_write(sv[0], big, n, err, sizeof err);
    CHECK(rc == HS_FRAME_IO && err[0], "peer gone mid-frame: %s %s", hs_frame_status_name(rc), err);
    free(big);
    close(sv[0]);

    /* A read error (not a socket at all) carries errno's text. */
    uint8_t *body;
    size_t len;
    err[0] = '\0';
    rc = hs_frame_read_blocking(-1, &body, &len, err, sizeof err);
    CHECK(rc == HS_FRAME_IO && strstr(err, strerror(EBADF)), "bad fd: %s", err);
    err[0] = '\0';
    CHECK(hs_frame_write(-1, b, sizeof b, err, sizeof err) == HS_FRAME_IO && strstr(err, strerror(EBADF)),
          "write bad fd: %s", err);
    hs_frame_reader rd;
    hs_frame_reader_init(&rd);
    CHECK(hs_frame_reader_fill(&rd, -1) == HS_FRAME_IO && errno == EBADF, "fill bad fd");
    hs_frame_reader_free(&rd);
}

/* Writes go through pipes as well (write, not send). */
static void case_pipe(void)
{
    int p[2];
    CHECK(pipe(p) == 0, "pipe");
    const Hysim__Reply **replies;
    bt_sample_replies(&replies);
    CHECK(hs_frame_send_reply(p[1], replies[0], err, sizeof err) == 0, "%s", err);
    close(p[1]);
    uint8_t *body;
    size_t len;
    CHECK(hs_frame_read_blocking(p[0], &body, &len, err, sizeof err) == 0, "%s", err);
    Hysim__Reply *m = hs_frame_decode_reply(body, len, err, sizeof err);
    CHECK(m && bt_same_message(&m->base, &replies[0]->base), "reply through a pipe");
    hysim__reply__free_unpacked(m, NULL);
    free(body);
    close(p[0]);
}

static void case_status_names(void)
{
    const int all[] = {HS_FRAME_OK,        HS_FRAME_EOF,     HS_FRAME_TRUNCATED,
                       HS_FRAME_TOO_LARGE, HS_FRAME_GARBAGE, HS_FRAME_IO};
    const char *seen[6];
    for (size_t i = 0; i < 6; i++) {
        seen[i] = hs_frame_status_name(all[i]);
        CHECK(seen[i] && seen[i][0] && !strstr(seen[i], "unknown"), "status %d has no name", all[i]);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(seen[i], seen[j]) != 0, "statuses %d and %d share a name", all[i], all[j]);
    }
    CHECK(strstr(hs_frame_status_name(77), "unknown"), "unknown status");
}

int main(int argc, char **argv)
{
    CHECK(argc == 2, "usage: %s CASE", argv[0]);
    static const struct {
        const char *name;
        void (*fn)(void);
    } cases[] = {
        {"truncated", case_truncated}, {"oversized", case_oversized},       {"closed_peer", case_closed_peer},
        {"pipe", case_pipe},           {"status_names", case_status_names},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(argv[1], cases[i].name) == 0) {
            cases[i].fn();
            printf("%s: ok\n", argv[1]);
            return 0;
        }
    CHECK(0, "unknown case %s", argv[1]);
}
