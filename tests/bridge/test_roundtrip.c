/*
 * Frames carry every ClientMsg kind and Reply unchanged, through the blocking
 * reader and through the non-blocking one fed a byte at a time; the sender
 * refuses what the framing cannot carry.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bridge_test.h"

static char err[512];

/* Reads one frame with hs_frame_read_blocking and decodes it as a ClientMsg. */
static Hysim__ClientMsg *read_client_msg(int fd)
{
    uint8_t *body;
    size_t len;
    int rc = hs_frame_read_blocking(fd, &body, &len, err, sizeof err);
    CHECK(rc == HS_FRAME_OK, "read: %s (%s)", hs_frame_status_name(rc), err);
    Hysim__ClientMsg *m = hs_frame_decode_client_msg(body, len, err, sizeof err);
    CHECK(m, "decode: %s", err);
    free(body);
    return m;
}

static void case_client_msgs(void)
{
    const Hysim__ClientMsg **msgs;
    int n = bt_sample_client_msgs(&msgs);
    int sv[2];
    bt_socketpair(sv);
    for (int i = 0; i < n; i++) {
        int rc = hs_frame_send_client_msg(sv[0], msgs[i], err, sizeof err);
        CHECK(rc == HS_FRAME_OK, "send %d: %s", i, err);
    }
    for (int i = 0; i < n; i++) {
        Hysim__ClientMsg *m = read_client_msg(sv[1]);
        CHECK(m->msg_case == msgs[i]->msg_case, "msg %d: case %d, want %d", i, m->msg_case, msgs[i]->msg_case);
        CHECK(bt_same_message(&m->base, &msgs[i]->base), "msg %d differs after the round trip", i);
        if (m->msg_case == HYSIM__CLIENT_MSG__MSG_BATCH) {
            CHECK(m->batch->n_ops == 10, "%zu ops", m->batch->n_ops);
            for (size_t k = 0; k < m->batch->n_ops; k++)
                CHECK(m->batch->ops[k]->kind_case == msgs[i]->batch->ops[k]->kind_case, "op %zu kind", k);
            CHECK(strcmp(m->batch->ops[0]->kernel->name, "_Z6matmulPfS_S_i") == 0, "kernel name");
            CHECK(m->batch->ops[9]->collective->root == -1, "collective root");
        }
        if (m->msg_case == HYSIM__CLIENT_MSG__MSG_REGISTER)
            CHECK(strcmp(m->register_->program, "train.py") == 0, "program");
        hysim__client_msg__free_unpacked(m, NULL);
    }
    /* Then the writer closes: a clean end of stream. */
    close(sv[0]);
    uint8_t *body = (uint8_t *)1;
    size_t len = 1;
    int rc = hs_frame_read_blocking(sv[1], &body, &len, err, sizeof err);
    CHECK(rc == HS_FRAME_EOF, "after close: %s", hs_frame_status_name(rc));
    CHECK(body == NULL && len == 0, "EOF leaves no body");
    close(sv[1]);
}

static void case_replies(void)
{
    const Hysim__Reply **replies;
    int n = bt_sample_replies(&replies);
    int sv[2];
    bt_socketpair(sv);
    for (int i = 0; i < n; i++) {
        int rc = hs_frame_send_reply(sv[0], replies[i], err, sizeof err);
        CHECK(rc == HS_FRAME_OK, "send reply %d: %s", i, err);
    }
    for (int i = 0; i < n; i++) {
        uint8_t *body;
        size_t len;
        int rc = hs_frame_read_blocking(sv[1], &body, &len, err, sizeof err);
        CHECK(rc == HS_FRAME_OK, "read reply %d: %s", i, err);
        CHECK(len > 0, "reply %d: empty body", i);
        Hysim__Reply *m = hs_frame_decode_reply(body, len, err, sizeof err);
        CHECK(m, "decode reply %d: %s", i, err);
        CHECK(bt_same_message(&m->base, &replies[i]->base), "reply %d differs", i);
        CHECK(m->now_ns == replies[i]->now_ns && m->done == replies[i]->done, "reply %d fields", i);
        if (i == 0) {
            CHECK(m->setup && strcmp(m->setup->gpu_model, "H100-SXM5-80GB") == 0, "setup");
            CHECK(m->setup->host_time_scale == 0.5, "scale");
            CHECK(m->n_event_times == 2 && m->event_times[0]->time_ps == 123456789012ull, "event times");
            CHECK(strcmp(m->error, "no such stream") == 0, "error string");
        }
        if (i == 2) /* the all-default reply still travels (as an explicit now_ns = 0) */
            CHECK(!m->setup && m->n_event_times == 0 && m->error[0] == '\0', "default reply");
        hysim__reply__free_unpacked(m, NULL);
        free(body);
    }
    close(sv[0]);
    close(sv[1]);
}

/* The same stream through hs_frame_reader, fed one byte per fill. */
static void case_reader_bytewise(void)
{
    const Hysim__ClientMsg **msgs;
    int n = bt_sample_client_msgs(&msgs);
    const Hysim__Reply **replies;
    int nr = bt_sample_replies(&replies);
    const int rounds = 3;
    int sv[2];
    bt_socketpair(sv);
    /* Client messages then replies, `rounds` times, all into one stream. */
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < n; i++)
            CHECK(hs_frame_send_client_msg(sv[0], msgs[i], err, sizeof err) == 0, "%s", err);
        for (int i = 0; i < nr; i++)
            CHECK(hs_frame_send_reply(sv[0], replies[i], err, sizeof err) == 0, "%s", err);
    }
    close(sv[0]);
    /* A pipe carries the bytes into the reader one at a time. */
    int p[2];
    CHECK(pipe2(p, O_NONBLOCK | O_CLOEXEC) == 0, "pipe2");
    hs_frame_reader rd;
    hs_frame_reader_init(&rd);
    const uint8_t *body;
    size_t len;
    CHECK(hs_frame_reader_next(&rd, &body, &len) == 1, "empty reader wants bytes");
    CHECK(hs_frame_reader_fill(&rd, p[0]) == -1 && errno == EAGAIN, "nothing to read yet");
    int got = 0, total = rounds * (n + nr);
    size_t bytes = 0;
    for (;;) {
        uint8_t c;
        ssize_t k = read(sv[1], &c, 1);
        CHECK(k >= 0, "read: %s", strerror(errno));
        if (k == 0)
            break;
        bytes++;
        bt_write_all(p[1], &c, 1);
        long f = hs_frame_reader_fill(&rd, p[0]);
        CHECK(f == 1, "fill returned %ld", f);
        int rc;
        while ((rc = hs_frame_reader_next(&rd, &body, &len)) == HS_FRAME_OK) {
            int idx = got % (n + nr);
            if (idx < n) {
                Hysim__ClientMsg *m = hs_frame_decode_client_msg(body, len, err, sizeof err);
                CHECK(m, "frame %d: %s", got, err);
                CHECK(bt_same_message(&m->base, &msgs[idx]->base), "frame %d differs", got);
                hysim__client_msg__free_unpacked(m, NULL);
            } else {
                Hysim__Reply *m = hs_frame_decode_reply(body, len, err, sizeof err);
                CHECK(m, "frame %d: %s", got, err);
                CHECK(bt_same_message(&m->base, &replies[idx - n]->base), "frame %d differs", got);
                hysim__reply__free_unpacked(m, NULL);
            }
            got++;
        }
        CHECK(rc == 1, "next: %s", hs_frame_status_name(rc));
        CHECK(rd.cap <= 4096, "reader grew to %zu bytes for small frames", rd.cap);
    }
    CHECK(got == total, "got %d frames of %d (%zu bytes)", got, total, bytes);
    close(p[1]);
    CHECK(hs_frame_reader_fill(&rd, p[0]) == 0, "EOF");
    CHECK(hs_frame_reader_at_eof(&rd) == HS_FRAME_EOF, "clean EOF between frames");
    hs_frame_reader_free(&rd);
    close(p[0]);
    close(sv[1]);
}

/* Sender and receiver of frames too big for the socket buffer: the child writes. */
static pid_t spawn_writer(int fd, void (*write_fn)(int fd))
{
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        write_fn(fd);
        _exit(0);
    }
    return pid;
}

static void reap(pid_t pid)
{
    int st;
    CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer failed (status %d)", st);
}

#define BIG_OPS 20000
static Hysim__ClientMsg *big_batch(void)
{
    static Hysim__Kernel k = HYSIM__KERNEL__INIT;
    static Hysim__Op ops[BIG_OPS], *ptrs[BIG_OPS];
    static Hysim__Batch b = HYSIM__BATCH__INIT;
    static Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    k.name = "_Z4stepv";
    k.grid_x = k.block_x = 128;
    for (int i = 0; i < BIG_OPS; i++) {
        hysim__op__init(&ops[i]);
        ops[i].host_ns = (uint64_t)i * 1000;
        ops[i].kind_case = HYSIM__OP__KIND_KERNEL;
        ops[i].kernel = &k;
        ptrs[i] = &ops[i];
    }
    b.n_ops = BIG_OPS;
    b.ops = ptrs;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_BATCH;
    m.batch = &b;
    return &m;
}

static void write_big(int fd)
{
    CHECK(hs_frame_send_client_msg(fd, big_batch(), err, sizeof err) == 0, "%s", err);
    /* and a body of exactly HS_FRAME_MAX bytes */
    uint8_t *body = malloc(HS_FRAME_MAX);
    CHECK(body, "malloc");
    for (size_t i = 0; i < HS_FRAME_MAX; i++)
        body[i] = (uint8_t)(i * 7);
    CHECK(hs_frame_write(fd, body, HS_FRAME_MAX, err, sizeof err) == 0, "%s", err);
    free(body);
    close(fd);
}

static void check_max_body(const uint8_t *body, size_t len)
{
    CHECK(len == HS_FRAME_MAX, "max frame: %zu bytes", len);
    for (size_t i = 0; i < HS_FRAME_MAX; i++)
        if (body[i] != (uint8_t)(i * 7))
            CHECK(0, "max frame byte %zu", i);
}

static void case_large_blocking(void)
{
    int sv[2];
    bt_socketpair(sv);
    pid_t pid = spawn_writer(sv[0], write_big);
    close(sv[0]);
    Hysim__ClientMsg *m = read_client_msg(sv[1]);
    CHECK(bt_same_message(&m->base, &big_batch()->base), "big batch differs");
    hysim__client_msg__free_unpacked(m, NULL);
    uint8_t *body;
    size_t len;
    int rc = hs_frame_read_blocking(sv[1], &body, &len, err, sizeof err);
    CHECK(rc == HS_FRAME_OK, "max frame: %s", err);
    check_max_body(body, len);
    free(body);
    CHECK(hs_frame_read_blocking(sv[1], &body, &len, err, sizeof err) == HS_FRAME_EOF, "EOF");
    reap(pid);
    close(sv[1]);
}

static void case_large_reader(void)
{
    int sv[2];
    bt_socketpair(sv);
    pid_t pid = spawn_writer(sv[0], write_big);
    close(sv[0]);
    CHECK(fcntl(sv[1], F_SETFL, O_NONBLOCK) == 0, "O_NONBLOCK");
    hs_frame_reader rd;
    hs_frame_reader_init(&rd);
    int got = 0;
    for (;;) {
        long f = hs_frame_reader_fill(&rd, sv[1]);
        CHECK(f >= -1, "fill: %s", strerror(errno));
        CHECK(rd.cap <= 4 + (size_t)HS_FRAME_MAX, "reader buffer %zu above the bound", rd.cap);
        const uint8_t *body;
        size_t len;
        int rc;
        while ((rc = hs_frame_reader_next(&rd, &body, &len)) == HS_FRAME_OK) {
            if (got == 0) {
                Hysim__ClientMsg *m = hs_frame_decode_client_msg(body, len, err, sizeof err);
                CHECK(m, "%s", err);
                CHECK(bt_same_message(&m->base, &big_batch()->base), "big batch differs");
                hysim__client_msg__free_unpacked(m, NULL);
            } else {
                check_max_body(body, len);
            }
            got++;
        }
        CHECK(rc == 1, "next: %s", hs_frame_status_name(rc));
        if (f == 0)
            break;
        if (f == -1) {
            struct pollfd pfd = {.fd = sv[1], .events = POLLIN};
            CHECK(poll(&pfd, 1, 10000) == 1, "no bytes for 10 s");
        }
    }
    CHECK(got == 2, "%d frames", got);
    CHECK(hs_frame_reader_at_eof(&rd) == HS_FRAME_EOF, "clean EOF");
    hs_frame_reader_free(&rd);
    reap(pid);
    close(sv[1]);
}

/* What the framing cannot carry is refused before anything is written. */
static void case_refuse(void)
{
    int sv[2];
    bt_socketpair(sv);
    /* A Bye above HS_FRAME_MAX: 2M peaks of 10-byte varints. */
    size_t np = 2u << 20;
    uint64_t *peaks = malloc(np * sizeof *peaks);
    CHECK(peaks, "malloc");
    for (size_t i = 0; i < np; i++)
        peaks[i] = UINT64_MAX - i;
    Hysim__Bye bye = HYSIM__BYE__INIT;
    bye.n_peak_memory_bytes = np;
    bye.peak_memory_bytes = peaks;
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_BYE;
    m.bye = &bye;
    err[0] = '\0';
    int rc = hs_frame_send_client_msg(sv[0], &m, err, sizeof err);
    CHECK(rc == HS_FRAME_TOO_LARGE, "oversized send: %s", hs_frame_status_name(rc));
    CHECK(strstr(err, "exceeds") && strstr(err, "hysim.ClientMsg"), "message: %s", err);
    free(peaks);

    Hysim__ClientMsg empty = HYSIM__CLIENT_MSG__INIT;
    err[0] = '\0';
    rc = hs_frame_send_client_msg(sv[0], &empty, err, sizeof err);
    CHECK(rc == HS_FRAME_TOO_LARGE && strstr(err, "empty"), "empty ClientMsg: %d %s", rc, err);

    uint8_t b = 0;
    err[0] = '\0';
    CHECK(hs_frame_write(sv[0], &b, 0, err, sizeof err) == HS_FRAME_TOO_LARGE && err[0], "0-byte frame");
    err[0] = '\0';
    CHECK(hs_frame_write(sv[0], &b, (size_t)HS_FRAME_MAX + 1, err, sizeof err) == HS_FRAME_TOO_LARGE && err[0],
          "HS_FRAME_MAX+1 frame");
    /* Nothing reached the peer. */
    ssize_t k = recv(sv[1], &b, 1, MSG_DONTWAIT);
    CHECK(k < 0 && errno == EAGAIN, "refused frames left bytes in the socket");
    close(sv[0]);
    close(sv[1]);
}

int main(int argc, char **argv)
{
    CHECK(argc == 2, "usage: %s CASE", argv[0]);
    static const struct {
        const char *name;
        void (*fn)(void);
    } cases[] = {
        {"client_msgs", case_client_msgs},         {"replies", case_replies},
        {"reader_bytewise", case_reader_bytewise}, {"large_blocking", case_large_blocking},
        {"large_reader", case_large_reader},       {"refuse", case_refuse},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(argv[1], cases[i].name) == 0) {
            cases[i].fn();
            printf("%s: ok\n", argv[1]);
            return 0;
        }
    CHECK(0, "unknown case %s", argv[1]);
}
