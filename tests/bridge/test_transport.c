/*
 * The Unix-socket transport over real socket files in a temporary directory:
 * listen/connect/accept and frames both ways, stale sockets replaced, live
 * ones and other files left alone, and errors that name what failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "bridge_test.h"
#include "transport.h"

static char err[512];
static char dir[256];

static void make_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/hysim-bridge-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    CHECK(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
}

static void endpoint_in_dir(char *ep, size_t n, const char *name) { snprintf(ep, n, "unix:%s/%s", dir, name); }

static int path_exists(const char *ep) { return access(ep + 5, F_OK) == 0; }

static int has_flag(int fd, int get, int flag)
{
    int f = fcntl(fd, get);
    CHECK(f >= 0, "fcntl: %s", strerror(errno));
    return (f & flag) != 0;
}

static void case_exchange(void)
{
    make_dir();
    char ep[400];
    endpoint_in_dir(ep, sizeof ep, "hysimd.sock");
    int lfd = hs_transport_listen(ep, err, sizeof err);
    CHECK(lfd >= 0, "listen: %s", err);
    CHECK(has_flag(lfd, F_GETFD, FD_CLOEXEC), "listening socket is not close-on-exec");
    struct stat st;
    CHECK(stat(ep + 5, &st) == 0 && S_ISSOCK(st.st_mode), "no socket file at %s", ep + 5);
    errno = 0;
    CHECK(hs_transport_accept(lfd) == -1 && (errno == EAGAIN || errno == EWOULDBLOCK), "accept with nothing pending");

    const Hysim__ClientMsg **msgs;
    int nm = bt_sample_client_msgs(&msgs);
    const Hysim__Reply **replies;
    bt_sample_replies(&replies);
    enum { NCLIENTS = 3 };
    int cfd[NCLIENTS], sfd[NCLIENTS];
    for (int c = 0; c < NCLIENTS; c++) {
        cfd[c] = hs_transport_connect(ep, err, sizeof err);
        CHECK(cfd[c] >= 0, "connect %d: %s", c, err);
        CHECK(has_flag(cfd[c], F_GETFD, FD_CLOEXEC), "client socket is not close-on-exec");
        CHECK(!has_flag(cfd[c], F_GETFL, O_NONBLOCK), "client socket is non-blocking");
    }
    for (int c = 0; c < NCLIENTS; c++) {
        struct pollfd pfd = {.fd = lfd, .events = POLLIN};
        CHECK(poll(&pfd, 1, 5000) == 1, "no pending connection");
        sfd[c] = hs_transport_accept(lfd);
        CHECK(sfd[c] >= 0, "accept %d: %s", c, strerror(errno));
        CHECK(has_flag(sfd[c], F_GETFD, FD_CLOEXEC), "accepted socket is not close-on-exec");
        CHECK(has_flag(sfd[c], F_GETFL, O_NONBLOCK), "accepted socket is blocking");
    }
    /* Each client sends every kind; the server reads them non-blocking and
     * answers each with a reply the client reads blocking. */
    for (int c = 0; c < NCLIENTS; c++)
        for (int i = 0; i < nm; i++)
            CHECK(hs_frame_send_client_msg(cfd[c], msgs[i], err, sizeof err) == 0, "%s", err);
    for (int c = 0; c < NCLIENTS; c++) {
        hs_frame_reader rd;
        hs_frame_reader_init(&rd);
        int got = 0;
        while (got < nm) {
            struct pollfd pfd = {.fd = sfd[c], .events = POLLIN};
            CHECK(poll(&pfd, 1, 5000) == 1, "client %d: no data", c);
            long f = hs_frame_reader_fill(&rd, sfd[c]);
            CHECK(f > 0, "client %d: fill %ld", c, f);
            const uint8_t *body;
            size_t len;
            while (hs_frame_reader_next(&rd, &body, &len) == HS_FRAME_OK) {
                Hysim__ClientMsg *m = hs_frame_decode_client_msg(body, len, err, sizeof err);
                CHECK(m && bt_same_message(&m->base, &msgs[got]->base), "client %d msg %d", c, got);
                hysim__client_msg__free_unpacked(m, NULL);
                CHECK(hs_frame_send_reply(sfd[c], replies[got % 3], err, sizeof err) == 0, "%s", err);
                got++;
            }
        }
        hs_frame_reader_free(&rd);
    }
    for (int c = 0; c < NCLIENTS; c++) {
        for (int i = 0; i < nm; i++) {
            uint8_t *body;
            size_t len;
            CHECK(hs_frame_read_blocking(cfd[c], &body, &len, err, sizeof err) == 0, "%s", err);
            Hysim__Reply *r = hs_frame_decode_reply(body, len, err, sizeof err);
            CHECK(r && bt_same_message(&r->base, &replies[i % 3]->base), "reply %d", i);
            hysim__reply__free_unpacked(r, NULL);
            free(body);
        }
        close(cfd[c]);
        /* The server sees the client's end as a clean EOF. */
        hs_frame_reader rd;
        hs_frame_reader_init(&rd);
        struct pollfd pfd = {.fd = sfd[c], .events = POLLIN};
        CHECK(poll(&pfd, 1, 5000) == 1, "no EOF");
        CHECK(hs_frame_reader_fill(&rd, sfd[c]) == 0, "EOF");
        CHECK(hs_frame_reader_at_eof(&rd) == HS_FRAME_EOF, "clean EOF");
        hs_frame_reader_free(&rd);
        close(sfd[c]);
    }
    close(lfd);
    hs_transport_unlink(ep);
    CHECK(!path_exists(ep), "unlink left %s", ep + 5);
    CHECK(rmdir(dir) == 0, "rmdir %s: %s", dir, strerror(errno));
}

static void case_stale(void)
{
    make_dir();
    char ep[400];
    endpoint_in_dir(ep, sizeof ep, "stale.sock");
    /* What a daemon that died leaves behind: a socket file nobody listens on. */
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    CHECK(strlen(ep + 5) < sizeof sa.sun_path, "temp path too long");
    memcpy(sa.sun_path, ep + 5, strlen(ep + 5) + 1);
    CHECK(bind(s, (struct sockaddr *)&sa, sizeof sa) == 0, "bind: %s", strerror(errno));
    close(s);
    CHECK(path_exists(ep), "stale socket file missing");
    int lfd = hs_transport_listen(ep, err, sizeof err);
    CHECK(lfd >= 0, "listen over a stale socket: %s", err);
    int c = hs_transport_connect(ep, err, sizeof err);
    CHECK(c >= 0, "connect to the replacement: %s", err);
    close(c);

    /* A live listener is not replaced, and keeps working. */
    err[0] = '\0';
    int l2 = hs_transport_listen(ep, err, sizeof err);
    CHECK(l2 == -1, "second listen on a live endpoint succeeded");
    CHECK(strstr(err, ep + 5) && strstr(err, "listening"), "message: %s", err);
    c = hs_transport_connect(ep, err, sizeof err);
    CHECK(c >= 0, "first listener lost its socket: %s", err);
    close(c);
    close(lfd);
    hs_transport_unlink(ep);

    /* A file that is not a socket is never removed. */
    char fep[400];
    endpoint_in_dir(fep, sizeof fep, "not-a-socket");
    int f = open(fep + 5, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    CHECK(f >= 0, "create: %s", strerror(errno));
    close(f);
    err[0] = '\0';
    CHECK(hs_transport_listen(fep, err, sizeof err) == -1, "listen over a regular file");
    CHECK(strstr(err, fep + 5) && strstr(err, "not a socket"), "message: %s", err);
    CHECK(path_exists(fep), "regular file was removed");
    CHECK(unlink(fep + 5) == 0, "unlink");
    CHECK(rmdir(dir) == 0, "rmdir %s: %s", dir, strerror(errno));
}

static void case_errors(void)
{
    make_dir();
    char ep[400];
    endpoint_in_dir(ep, sizeof ep, "missing.sock");
    err[0] = '\0';
    CHECK(hs_transport_connect(ep, err, sizeof err) == -1, "connect to a missing path");
    CHECK(strstr(err, ep) && strstr(err, strerror(ENOENT)), "message: %s", err);

    const char *bad[] = {"udp:127.0.0.1:5000", "/tmp/x.sock", "unix:", "", "unix", "UNIX:/tmp/x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        CHECK(hs_transport_listen(bad[i], err, sizeof err) == -1, "listen on \"%s\"", bad[i]);
        CHECK(strstr(err, "unsupported endpoint") && strstr(err, "(expected unix:/path or tcp:HOST:PORT)") &&
                  strstr(err, bad[i]),
              "listen \"%s\": %s", bad[i], err);
        err[0] = '\0';
        CHECK(hs_transport_connect(bad[i], err, sizeof err) == -1, "connect to \"%s\"", bad[i]);
        CHECK(strstr(err, "unsupported endpoint") && strstr(err, bad[i]), "connect \"%s\": %s", bad[i], err);
        hs_transport_unlink(bad[i]); /* harmless */
    }

    /* TCP endpoints without a host or a numeric port name the expected form */
    const char *bad_tcp[] = {"tcp:", "tcp:127.0.0.1", "tcp::5000", "tcp:127.0.0.1:http", "tcp:[::1:5000"};
    for (size_t i = 0; i < sizeof bad_tcp / sizeof bad_tcp[0]; i++) {
        err[0] = '\0';
        CHECK(hs_transport_listen(bad_tcp[i], err, sizeof err) == -1, "listen on \"%s\"", bad_tcp[i]);
        CHECK(strstr(err, "expected tcp:HOST:PORT") && strstr(err, bad_tcp[i]), "listen \"%s\": %s", bad_tcp[i], err);
    }

    /* sun_path holds 107 bytes and a NUL. */
    char longp[400];
    snprintf(longp, sizeof longp, "unix:%s/", dir);
    while (strlen(longp) < 5 + sizeof(((struct sockaddr_un *)0)->sun_path))
        strcat(longp, "x");
    err[0] = '\0';
    CHECK(hs_transport_listen(longp, err, sizeof err) == -1, "listen on a too-long path");
    CHECK(strstr(err, "too long") && strstr(err, longp + 5), "message: %s", err);
    err[0] = '\0';
    CHECK(hs_transport_connect(longp, err, sizeof err) == -1, "connect to a too-long path");
    CHECK(strstr(err, "too long") && strstr(err, longp + 5), "message: %s", err);
    longp[strlen(longp) - 1] = '\0'; /* 107 bytes: fits */
    int l = hs_transport_listen(longp, err, sizeof err);
    CHECK(l >= 0, "107-byte path: %s", err);
    close(l);
    hs_transport_unlink(longp);

    char nodir[400];
    snprintf(nodir, sizeof nodir, "unix:%s/no/such/dir.sock", dir);
    err[0] = '\0';
    CHECK(hs_transport_listen(nodir, err, sizeof err) == -1, "listen in a missing directory");
    CHECK(strstr(err, nodir + 5) && strstr(err, strerror(ENOENT)), "message: %s", err);
    CHECK(rmdir(dir) == 0, "rmdir %s: %s", dir, strerror(errno));
}

int main(int argc, char **argv)
{
    CHECK(argc == 2, "usage: %s CASE", argv[0]);
    static const struct {
        const char *name;
        void (*fn)(void);
    } cases[] = {
        {"transport_exchange", case_exchange},
        {"transport_stale", case_stale},
        {"transport_errors", case_errors},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(argv[1], cases[i].name) == 0) {
            cases[i].fn();
            printf("%s: ok\n", argv[1]);
            return 0;
        }
    CHECK(0, "unknown case %s", argv[1]);
}
