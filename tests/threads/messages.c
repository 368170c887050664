/*
 * A message between two processes orders their clocks
 * (interpose/host/message_clocks.c), on messages.yaml: every intercepted call
 * costs 1 ms of host time, so the sender's clock runs far ahead of what
 * has been simulated by reading itself, without waiting. The reader, a
 * process that did GPU work and then blocks reading, wakes past the
 * sender's clock at sending, not where the simulation was.
 *
 *   messages pipe    the parent writes its clock to a pipe; the child reads it
 *   messages tcp     ... over a TCP connection on the loopback; the child polls, then recvs
 *   messages unix    ... over a Unix stream socket bound to a path
 *   messages relay   ... through a middle process that does no GPU work and
 *                    passes the bytes from one pipe to another (a store server)
 *
 * Each prints how far past the sender's clock the reader's first clock
 * read lies, in whole ms (the same in every run), and fails when it lies
 * before it.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "test_check.h"
#include "gpu_thread_kit.h"

#define AHEAD_READS 200 /* the sender's clock reads before it sends: 200 ms ahead */

static void read_full(int fd, void *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)p + got, n - got);
        CHECK(r > 0, "read: %zd", r);
        got += (size_t)r;
    }
}

static void write_full(int fd, const void *p, size_t n) { CHECK(write(fd, p, n) == (ssize_t)n, "write"); }

/* The sender: GPU work on GPU 0, its clock run ahead, then its clock sent on fd. */
static void send_clock(int fd)
{
    CHECK(cudaSetDevice(0) == cudaSuccess, "cudaSetDevice(0)");
    CHECK(cudaDeviceSynchronize() == cudaSuccess, "sync");
    for (int i = 0; i < AHEAD_READS; i++)
        (void)now_ns();
    long long sent = now_ns();
    write_full(fd, &sent, sizeof sent);
}

/* The reader: GPU work on GPU 1, then the sender's clock read from fd (after a poll when asked). */
static void receive_clock(const char *mode, int fd, int poll_first)
{
    CHECK(cudaSetDevice(1) == cudaSuccess, "cudaSetDevice(1)");
    CHECK(cudaDeviceSynchronize() == cudaSuccess, "sync");
    if (poll_first) {
        struct pollfd p = {fd, POLLIN, 0};
        CHECK(poll(&p, 1, -1) == 1, "poll");
    }
    long long sent;
    if (poll_first)
        CHECK(recv(fd, &sent, sizeof sent, MSG_WAITALL) == (ssize_t)sizeof sent, "recv");
    else
        read_full(fd, &sent, sizeof sent);
    long long now = now_ns();
    CHECK(now >= sent, "%s: the reader's clock (%lld ns) is before the sender's at sending (%lld ns)", mode, now, sent);
    printf("%s: the reader's clock is %lld ms past the sender's\n", mode, (now - sent) / 1000000);
    fflush(stdout);
}

static void wait_child(pid_t pid)
{
    int status;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed");
}

static void over_pipe(void)
{
    int p[2];
    CHECK(pipe(p) == 0, "pipe");
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        close(p[1]);
        receive_clock("pipe", p[0], 0);
        exit(0);
    }
    close(p[0]);
    send_clock(p[1]);
    wait_child(pid);
}

/* A listening socket (TCP on the loopback, or Unix at path), the child connected and reading. */
static void over_socket(const char *mode, int tcp, const char *path)
{
    struct sockaddr_in in = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    struct sockaddr *addr = tcp ? (struct sockaddr *)&in : (struct sockaddr *)&un;
    socklen_t len = tcp ? sizeof in : sizeof un;
    int l = socket(tcp ? AF_INET : AF_UNIX, SOCK_STREAM, 0);
    CHECK(l >= 0, "socket");
    if (!tcp) {
        snprintf(un.sun_path, sizeof un.sun_path, "%s", path);
        unlink(path);
    }
    CHECK(bind(l, addr, len) == 0 && listen(l, 1) == 0 && getsockname(l, addr, &len) == 0, "listen");
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        close(l);
        int c = socket(tcp ? AF_INET : AF_UNIX, SOCK_STREAM, 0);
        CHECK(c >= 0 && connect(c, addr, len) == 0, "connect");
        receive_clock(mode, c, tcp);
        exit(0);
    }
    int s = accept(l, NULL, NULL);
    CHECK(s >= 0, "accept");
    send_clock(s);
    wait_child(pid);
    if (!tcp)
        unlink(path);
}

static void through_relay(void)
{
    int in[2], out[2];
    CHECK(pipe(in) == 0 && pipe(out) == 0, "pipe");
    pid_t relay = fork();
    CHECK(relay >= 0, "fork");
    if (relay == 0) { /* no GPU work: passes the bytes on */
        close(in[1]);
        close(out[0]);
        long long v;
        read_full(in[0], &v, sizeof v);
        write_full(out[1], &v, sizeof v);
        exit(0);
    }
    pid_t reader = fork();
    CHECK(reader >= 0, "fork");
    if (reader == 0) {
        close(in[0]);
        close(in[1]);
        close(out[1]);
        receive_clock("relay", out[0], 0);
        exit(0);
    }
    close(in[0]);
    close(out[0]);
    close(out[1]);
    send_clock(in[1]);
    wait_child(relay);
    wait_child(reader);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "pipe"))
        over_pipe();
    else if (!strcmp(mode, "tcp"))
        over_socket(mode, 1, NULL);
    else if (!strcmp(mode, "unix"))
        over_socket(mode, 0, "messages.sock");
    else if (!strcmp(mode, "relay"))
        through_relay();
    else
        CHECK(0, "usage: messages pipe|tcp|unix|relay");
    printf("messages %s done\n", mode);
    return 0;
}
