/*
 * hysimd on a TCP endpoint with a run token: a Register with a wrong token,
 * a frame above HS_FRAME_MAX and a message from a connection that never
 * registered are each refused and counted, without failing the run; the
 * program's process, with the right token, runs to the end. Then a
 * registered process that sends an oversized frame fails the run.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "messages.h"
#include "hysimd.h"
#include "transport.h"

/* a failed check in the parent is counted and reported at the end */
#define HS_CHECK_COUNTS
static int failures;
#include "test_check.h"

/* In the child: a failed check ends it with status 1 (the parent checks the status). */
#define CHILD_CHECK(cond, ...)                                   \
    do {                                                         \
        if (!(cond)) {                                           \
            fprintf(stderr, "child: CHECK(%s) failed: ", #cond); \
            fprintf(stderr, __VA_ARGS__);                        \
            fputc('\n', stderr);                                 \
            _exit(1);                                            \
        }                                                        \
    } while (0)

static const char SCENARIO[] = "servers: {count: 1, gpus_per_server: 1}\nrun: {host_time: zero}\n";
static const char TOKEN[] = "the-run-token";

static int connect_to(const char *ep)
{
    char err[256];
    int fd = hs_transport_connect(ep, err, sizeof err);
    CHILD_CHECK(fd >= 0, "%s", err);
    return fd;
}

static void send_register(int fd, const char *token)
{
    Hysim__Register reg = HYSIM__REGISTER__INIT;
    reg.pid = (uint32_t)getpid();
    reg.gpu_count = 1;
    reg.program = "test_tcp";
    reg.token = (char *)token;
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_REGISTER;
    m.register_ = &reg;
    char err[256];
    CHILD_CHECK(hs_frame_send_client_msg(fd, &m, err, sizeof err) == 0, "%s", err);
}

static Hysim__Reply *read_reply(int fd)
{
    uint8_t *body;
    size_t len;
    char err[256];
    if (hs_frame_read_blocking(fd, &body, &len, err, sizeof err) != HS_FRAME_OK)
        return NULL;
    Hysim__Reply *r = hs_frame_decode_reply(body, len, err, sizeof err);
    free(body);
    return r;
}

/* The daemon closed the connection: the next read sees the end. */
static void expect_closed(int fd, const char *what)
{
    Hysim__Reply *r = read_reply(fd);
    CHILD_CHECK(r == NULL, "%s: the connection stayed open (a reply came)", what);
    close(fd);
}

static void send_bye(int fd)
{
    Hysim__Bye bye = HYSIM__BYE__INIT;
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_BYE;
    m.bye = &bye;
    char err[256];
    CHILD_CHECK(hs_frame_send_client_msg(fd, &m, err, sizeof err) == 0, "%s", err);
}

static void oversized_header(int fd)
{
    uint32_t n = HS_FRAME_MAX + 1;
    uint8_t hdr[4] = {(uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24)};
    CHILD_CHECK(write(fd, hdr, sizeof hdr) == (ssize_t)sizeof hdr, "write: %s", strerror(errno));
}

/* The strangers, then the real process. */
static void child_strangers(const char *ep)
{
    /* 1. a wrong token: an error reply naming the token, then the end */
    int fd = connect_to(ep);
    send_register(fd, "not-the-token");
    Hysim__Reply *r = read_reply(fd);
    CHILD_CHECK(r && r->error && strstr(r->error, "HYSIM_TOKEN"), "wrong token: %s",
                r && r->error ? r->error : "(no reply)");
    if (r)
        hysim__reply__free_unpacked(r, NULL);
    expect_closed(fd, "wrong token");

    /* 2. a frame above the limit, before any Register */
    fd = connect_to(ep);
    oversized_header(fd);
    expect_closed(fd, "oversized frame");

    /* 3. a Bye from a connection that never registered */
    fd = connect_to(ep);
    send_bye(fd);
    expect_closed(fd, "message before Register");

    /* the program's process: the right token is welcome */
    fd = connect_to(ep);
    send_register(fd, TOKEN);
    r = read_reply(fd);
    CHILD_CHECK(r && (!r->error || !r->error[0]) && r->setup, "right token: %s",
                r && r->error ? r->error : "(no reply)");
    if (r)
        hysim__reply__free_unpacked(r, NULL);
    send_bye(fd);
    close(fd);
    _exit(0);
}

static void child_registered_oversize(const char *ep)
{
    int fd = connect_to(ep);
    send_register(fd, TOKEN);
    Hysim__Reply *r = read_reply(fd);
    CHILD_CHECK(r && r->setup, "no Setup");
    hysim__reply__free_unpacked(r, NULL);
    oversized_header(fd);
    while ((r = read_reply(fd)) != NULL)
        hysim__reply__free_unpacked(r, NULL);
    _exit(0);
}

static int run_one(void (*child)(const char *), hs_run_summary *sum, int *status)
{
    hs_scenario sc;
    char err[1024] = "";
    if (hs_scenario_parse(SCENARIO, sizeof SCENARIO - 1, "tcp.yaml", &sc, err, sizeof err)) {
        fprintf(stderr, "%s", err);
        exit(2);
    }
    hs_daemon *d = hs_daemon_create(&sc, "tcp:127.0.0.1:0", err, sizeof err);
    CHECK(d != NULL, "%s", err);
    if (!d)
        exit(1);
    const char *ep = hs_daemon_endpoint(d);
    CHECK(strncmp(ep, "tcp:127.0.0.1:", 14) == 0 && atoi(ep + 14) > 0, "bound endpoint %s", ep);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        child(ep);
    memset(sum, 0, sizeof *sum);
    int rc = hs_daemon_run(d, &pid, 1, status, sum);
    hs_daemon_destroy(d);
    return rc;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    setenv("HYSIM_TOKEN", TOKEN, 1);
    hs_run_summary sum;
    int status = 0;

    int rc = run_one(child_strangers, &sum, &status);
    CHECK(rc == 0, "the strangers failed the run: %s", sum.error);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the client's checks failed (status 0x%x)", status);
    CHECK(sum.sessions == 1, "%llu sessions registered, expected 1", (unsigned long long)sum.sessions);
    CHECK(sum.rejected_token == 1, "rejected_token %llu, expected 1", (unsigned long long)sum.rejected_token);
    CHECK(sum.rejected_oversize == 1, "rejected_oversize %llu, expected 1", (unsigned long long)sum.rejected_oversize);
    CHECK(sum.rejected_unknown == 1, "rejected_unknown %llu, expected 1", (unsigned long long)sum.rejected_unknown);

    rc = run_one(child_registered_oversize, &sum, &status);
    CHECK(rc == -1 && strstr(sum.error, "bad frame (too large)"), "registered oversize: rc %d, error \"%s\"", rc,
          sum.error);
    CHECK(sum.rejected_oversize == 1, "rejected_oversize %llu, expected 1", (unsigned long long)sum.rejected_oversize);

    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
