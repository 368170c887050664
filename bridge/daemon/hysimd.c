/*
 * hysimd: create/run/destroy (the fabric in-process or in a worker process),
 * the listening socket and the poll loop over it, the sessions' sockets and
 * one pidfd per child; failure handling (no hangs: a failed run terminates
 * the children, SIGKILL after 2 s). SIGINT, SIGTERM and SIGHUP stop a run,
 * and a child's death fails it, within about HS_INTERRUPT_CHECK_MS even
 * inside a long stretch of simulation: the simulation loop calls
 * hs_daemon_interrupted regularly.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon_internal.h"
#include "background.h"
#include "hysim/fabric_interrupt.h"
#include "kernel_time.h"
#include "run_stats.h"
#include "stats_output.h"
#include "transport.h"

#define HS_KILL_GRACE_MS    2000
#define HS_LOST_GRACE_MS    200 /* how long to wait for a lost session's process to exit */
#define HS_NO_PIDFD_POLL_MS 50
/* Inside a stretch of simulation: children are looked at every this many ms, the clock every so many steps. */
#define HS_INTERRUPT_CHECK_MS    100
#define HS_INTERRUPT_CLOCK_EVERY 256
#pragma weak hs_fabric_set_interrupt

int64_t hs_daemon_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t now_ms(void) { return hs_daemon_now_ms(); }

void hs_daemon_fail(hs_daemon *d, const char *fmt, ...)
{
    if (d->failed)
        return;
    d->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->error, sizeof(d->error), fmt, ap);
    va_end(ap);
}

void hs_daemon_drain_all(hs_daemon *d)
{
    for (size_t i = 0; i < d->nsessions; i++)
        hs_session_drain(d->sessions[i]);
}

/* ------------------------------------------------------------- create/destroy */

static int parse_epoch(uint64_t *out, char *err, size_t errlen)
{
    const char *v = getenv("HYSIM_EPOCH_NS");
    *out = 0;
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end || v[0] == '-') {
        snprintf(err, errlen, "hysimd: HYSIM_EPOCH_NS=\"%s\" is not a number of nanoseconds", v);
        return -1;
    }
    *out = x;
    return 0;
}

static int read_token(hs_daemon *d, char *err, size_t errlen)
{
    const char *t = getenv("HYSIM_TOKEN");
    if (!t)
        return 0;
    if (strlen(t) >= sizeof(d->token)) {
        snprintf(err, errlen, "hysimd: HYSIM_TOKEN is longer than %zu bytes", sizeof(d->token) - 1);
        return -1;
    }
    snprintf(d->token, sizeof(d->token), "%s", t);
    return 0;
}

static bool worker_wanted(const hs_scenario *sc)
{
    if (sc->run.fabric.process != HS_FABRIC_PROCESS_DEFAULT)
        return sc->run.fabric.process == HS_FABRIC_PROCESS_WORKER;
    const char *w = getenv("HYSIM_FABRIC_WORKER");
    return w && strcmp(w, "1") == 0;
}

/* d->fabric as run.fabric and HYSIM_FABRIC_WORKER say: in-process or a worker process, speculating
 * (fabric_speculation.c). 0, or -1 with the reason in err. */
static int create_fabric(hs_daemon *d, char *err, size_t errlen)
{
    const hs_scenario *sc = &d->sc;
    hs_fabric_options o = {.worker = worker_wanted(sc)};
    if (o.worker && sc->run.mode == HS_MODE_OPTIMISTIC) {
        snprintf(err, errlen,
                 "hysimd: run.mode: optimistic does not work with run.fabric.process: worker: a speculation "
                 "forks the daemon, and the worker process cannot be shared by two copies");
        return -1;
    }
    d->fabric = hs_fabric_create_opts(sc, &o, err, errlen);
    if (!d->fabric)
        return -1;
    hs_fspec_init(d, o.worker);
    return 0;
}

hs_daemon *hs_daemon_create(const hs_scenario *sc, const char *endpoint, char *err, size_t errlen)
{
    if (hs_scenario_gpu_count(sc) <= 0) {
        snprintf(err, errlen, "hysimd: the scenario has no GPUs (%d servers × %d GPUs)", sc->servers.count,
                 sc->servers.gpus_per_server);
        return NULL;
    }
    if (strlen(endpoint) >= sizeof(((hs_daemon *)0)->endpoint)) {
        snprintf(err, errlen, "hysimd: endpoint too long: %s", endpoint);
        return NULL;
    }
    hs_daemon *d = hs_xcalloc(1, sizeof(*d));
    d->sc = *sc;
    d->total_gpus = (uint32_t)hs_scenario_gpu_count(sc);
    d->listen_fd = d->spare_fd = -1;
    snprintf(d->endpoint, sizeof(d->endpoint), "%s", endpoint);
    if (parse_epoch(&d->epoch_ns, err, errlen) < 0 || read_token(d, err, errlen) < 0 ||
        hs_admit_init(d, err, errlen) < 0 || hs_spec_init(d, err, errlen) < 0)
        goto fail;
    if (create_fabric(d, err, errlen) < 0)
        goto fail;
    d->bg = hs_bg_create(sc);
    hs_fspec_configure(d);
    if (hs_kernel_time_init(d, err, errlen) < 0)
        goto fail;
    d->listen_fd = hs_transport_listen(endpoint, err, errlen);
    if (d->listen_fd < 0)
        goto fail;
    if (hs_transport_bound_endpoint(d->listen_fd, endpoint, d->endpoint, sizeof(d->endpoint), err, errlen) < 0)
        goto fail;
    int fl = fcntl(d->listen_fd, F_GETFL);
    if (fl < 0 || fcntl(d->listen_fd, F_SETFL, fl | O_NONBLOCK) < 0) {
        snprintf(err, errlen, "hysimd: %s: cannot make the socket non-blocking: %s", endpoint, strerror(errno));
        goto fail;
    }
    return d;
fail:
    hs_daemon_destroy(d);
    return NULL;
}

const char *hs_daemon_endpoint(const hs_daemon *d) { return d->endpoint; }

int hs_daemon_expect_remote(hs_daemon *d, const unsigned char *remote, int nservers, char *err, size_t errlen)
{
    if (nservers != d->sc.servers.count) {
        snprintf(err, errlen, "hysimd: %d servers named, the scenario has %d", nservers, d->sc.servers.count);
        return -1;
    }
    free(d->remote_pending);
    d->remote_pending = hs_xcalloc((size_t)nservers, 1);
    d->remote_missing = 0;
    for (int s = 0; s < nservers; s++)
        d->remote_missing += d->remote_pending[s] = remote[s] != 0;
    return 0;
}

void hs_daemon_destroy(hs_daemon *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->nsessions; i++)
        hs_session_free(d->sessions[i]);
    free(d->sessions);
    free(d->rank_seen);
    free(d->remote_pending);
    for (size_t i = 0; i < d->ndefaults; i++)
        free(d->defaults[i].name);
    free(d->defaults);
    hs_u64map_free(&d->default_of);
    hs_spec_free(d); /* before the timeline: its records hold ops */
    hs_fspec_free(d);
    hs_stats_free(d);
    hs_statsout_free(d);
    hs_bg_free(d->bg);
    hs_kernel_time_free(d);
    hs_tl_free(d);
    hs_coll_free(d);
    for (uint64_t id = 0; id < d->next_flow_id; id++)
        if (d->flows[id].owner == HS_FLOW_PEER_COPY)
            hs_op_unref(d->flows[id].op);
    free(d->flows);
    free(d->children);
    if (d->listen_fd >= 0) {
        close(d->listen_fd);
        hs_transport_unlink(d->endpoint);
    }
    hs_admit_fini(d);
    if (d->fabric)
        hs_fabric_destroy(d->fabric);
    free(d);
}

/* ------------------------------------------------------------- children */

static int pidfd_open_compat(pid_t pid)
{
#ifdef SYS_pidfd_open
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd >= 0)
        fcntl(fd, F_SETFD, FD_CLOEXEC);
    return fd;
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

static hs_child *child_of(hs_daemon *d, uint32_t pid)
{
    for (int i = 0; i < d->nchildren; i++)
        if ((uint32_t)d->children[i].pid == pid)
            return &d->children[i];
    return NULL;
}

static const char *status_text(int status, char *buf, size_t len)
{
    if (WIFSIGNALED(status))
        snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
    return buf;
}

/* "process 1234 (server 1, ./train; GPUs/ranks 8..15)": which ranks a lost process took with it */
static const char *session_name_ranks(const hs_session *s, char *buf, size_t len)
{
    char who[256];
    hs_session_name(s, who, sizeof(who));
    size_t n = strlen(who);
    if (s->registered && n > 0 && who[n - 1] == ')')
        snprintf(buf, len, "%.*s; GPUs/ranks %u..%u)", (int)(n - 1), who, s->first_gpu,
                 s->first_gpu + s->gpu_count - 1);
    else
        snprintf(buf, len, "%s", who);
    return buf;
}

static const char *child_name(hs_daemon *d, const hs_child *c, char *buf, size_t len)
{
    for (size_t i = 0; i < d->nsessions; i++)
        if (d->sessions[i]->registered && d->sessions[i]->pid == (uint32_t)c->pid)
            return session_name_ranks(d->sessions[i], buf, len);
    snprintf(buf, len, "process %d (server unknown: it never registered)", (int)c->pid);
    return buf;
}

static bool others_running(const hs_daemon *d, const hs_child *c)
{
    for (int i = 0; i < d->nchildren; i++)
        if (&d->children[i] != c && !d->children[i].exited)
            return true;
    return false;
}

/* Reaps child c if it has exited; true if it has. */
static bool reap(hs_daemon *d, hs_child *c)
{
    int status;
    pid_t r = waitpid(c->pid, &status, WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR))
        return false;
    c->exited = true;
    c->status = r == c->pid ? status : 0;
    if (c->pidfd >= 0) {
        close(c->pidfd);
        c->pidfd = -1;
    }
    bool bad = !WIFEXITED(c->status) || WEXITSTATUS(c->status) != 0;
    if (bad && others_running(d, c) && !d->failed) {
        char who[320], how[128];
        hs_daemon_fail(d, "hysim: %s %s while other processes still run", child_name(d, c, who, sizeof(who)),
                       status_text(c->status, how, sizeof(how)));
        d->sum.program_failed = true;
    }
    return true;
}

void hs_daemon_session_lost(hs_daemon *d, hs_session *s, const char *how)
{
    char who[320], st[128] = "";
    hs_child *c = child_of(d, s->pid);
    if (s->registered && c && !c->exited) {
        /* give the exit status a moment to show, for a better message */
        int64_t until = now_ms() + HS_LOST_GRACE_MS;
        while (!c->exited && now_ms() < until) {
            if (c->pidfd >= 0) {
                struct pollfd p = {.fd = c->pidfd, .events = POLLIN};
                poll(&p, 1, (int)(until - now_ms()));
            } else {
                usleep(10000);
            }
            if (!d->failed)
                reap(d, c);
        }
    }
    if (d->failed)
        return; /* reap() named it already */
    if (s->registered && c && c->exited) {
        char t[100];
        snprintf(st, sizeof(st), " (it %s)", status_text(c->status, t, sizeof(t)));
        d->sum.program_failed = !WIFEXITED(c->status) || WEXITSTATUS(c->status) != 0;
    }
    hs_daemon_fail(d, "hysim: %s %s%s", session_name_ranks(s, who, sizeof(who)), how, st);
}

/* ------------------------------------------------------------- interruptions */

/* Signals that stop a run; the handlers they had before (the caller's) still run. */
static const int g_stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define HS_NSTOP (sizeof(g_stop_signals) / sizeof(g_stop_signals[0]))
static struct sigaction g_prev_action[HS_NSTOP];
static bool g_installed[HS_NSTOP];
static volatile sig_atomic_t g_stop_signal; /* the last stop signal received, 0 if none */

static void on_stop_signal(int sig)
{
    g_stop_signal = sig;
    for (size_t i = 0; i < HS_NSTOP; i++) {
        const struct sigaction *a = &g_prev_action[i];
        if (g_stop_signals[i] == sig && !(a->sa_flags & SA_SIGINFO) && a->sa_handler != SIG_DFL &&
            a->sa_handler != SIG_IGN)
            a->sa_handler(sig); /* e.g. `hysim run` passing it on to the program */
    }
}

static void install_stop_handlers(void)
{
    g_stop_signal = 0;
    for (size_t i = 0; i < HS_NSTOP; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_stop_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART; /* poll still returns at once; reads and writes are not cut short */
        g_installed[i] = sigaction(g_stop_signals[i], NULL, &g_prev_action[i]) == 0 &&
                         g_prev_action[i].sa_handler != SIG_IGN && /* nohup: stays ignored */
                         sigaction(g_stop_signals[i], &sa, NULL) == 0;
    }
}

static void restore_stop_handlers(void)
{
    for (size_t i = 0; i < HS_NSTOP; i++)
        if (g_installed[i])
            sigaction(g_stop_signals[i], &g_prev_action[i], NULL);
}

/* A stop signal arrived: fail the run naming it; the poll loop then stops the children. */
static bool check_stop_signal(hs_daemon *d)
{
    int sig = g_stop_signal;
    if (sig == 0)
        return false;
    uint64_t t = hs_max_u64(d->processed_ps, hs_fspec_now(d)); /* the fabric may be inside a step */
    hs_daemon_fail(d, "hysim: stopped by signal %d (%s) at simulated time %.6f s", sig, strsignal(sig),
                   (double)t * 1e-12);
    return true;
}

static const hs_session *session_of(const hs_daemon *d, pid_t pid)
{
    for (size_t i = 0; i < d->nsessions; i++)
        if (d->sessions[i]->registered && d->sessions[i]->pid == (uint32_t)pid)
            return d->sessions[i];
    return NULL;
}

/* A child whose pidfd is readable: reaped, and the run failed if it failed without ending its session. */
static void child_ended(hs_daemon *d, hs_child *c)
{
    if (!reap(d, c) || d->failed) /* reap names it where others still run */
        return;
    const hs_session *s = session_of(d, c->pid);
    bool bad = !WIFEXITED(c->status) || WEXITSTATUS(c->status) != 0;
    if (bad && !(s && s->said_bye)) {
        char who[320], how[128];
        hs_daemon_fail(d, "hysim: %s %s during the simulation", child_name(d, c, who, sizeof(who)),
                       status_text(c->status, how, sizeof(how)));
        d->sum.program_failed = true;
    }
}

/*
 * Inside a stretch of simulation: reaps the children that have ended. One
 * that failed (a signal, a nonzero status) without ending its session fails
 * the run now rather than when the stretch is over; the poll loop would
 * reach the same verdict through its lost connection.
 */
static void check_children(hs_daemon *d)
{
    enum { BATCH = 64 };
    for (int first = 0; first < d->nchildren && !d->failed; first += BATCH) {
        struct pollfd p[BATCH];
        int idx[BATCH], n = 0;
        for (int i = first; i < d->nchildren && i < first + BATCH; i++)
            if (!d->children[i].exited && d->children[i].pidfd >= 0) {
                p[n] = (struct pollfd){.fd = d->children[i].pidfd, .events = POLLIN};
                idx[n++] = i;
            }
        if (n == 0 || poll(p, (nfds_t)n, 0) <= 0)
            continue;
        for (int j = 0; j < n && !d->failed; j++)
            if (p[j].revents & (POLLIN | POLLHUP))
                child_ended(d, &d->children[idx[j]]);
    }
}

static int64_t g_children_checked_ms;

/* A stop signal, or (every HS_INTERRUPT_CHECK_MS) a child that died or, from the simulation loop, a stall:
 * fails the run; true once it has failed. */
static bool interrupted_now(hs_daemon *d, bool in_loop)
{
    if (d->failed || d->spec_child) /* a speculation's parent watches signals and children */
        return d->failed;
    if (check_stop_signal(d))
        return true;
    int64_t now = now_ms();
    if (now - g_children_checked_ms >= HS_INTERRUPT_CHECK_MS) {
        g_children_checked_ms = now;
        check_children(d);
        if (in_loop) /* not inside one fabric step: the simulated time it reaches is known only after */
            hs_stall_check(d, now);
    }
    return d->failed;
}

bool hs_daemon_interrupted(hs_daemon *d)
{
    static unsigned calls;
    if (d->failed)
        return true;
    if (g_stop_signal == 0 && ++calls % HS_INTERRUPT_CLOCK_EVERY != 0)
        return false;
    return interrupted_now(d, true);
}

/* Inside one long fabric step (include/hysim/fabric_interrupt.h). */
static int fabric_interrupted(void *d) { return interrupted_now(d, false); }

/* The fabric's test doubles need not provide the hook: it is only a faster way out. */
static void set_fabric_interrupt(hs_daemon *d)
{
    if (hs_fabric_set_interrupt)
        hs_fabric_set_interrupt(d ? fabric_interrupted : NULL, d);
}

/* ------------------------------------------------------------- run */

/* Sessions of the program still open: a connection that never registered keeps no run alive. */
static bool open_sessions(const hs_daemon *d)
{
    for (size_t i = 0; i < d->nsessions; i++)
        if (d->sessions[i]->fd >= 0 && d->sessions[i]->registered)
            return true;
    return false;
}

static bool frames_buffered(const hs_daemon *d)
{
    for (size_t i = 0; i < d->nsessions; i++)
        if (d->sessions[i]->fd >= 0 && hs_frame_reader_ready(&d->sessions[i]->rd))
            return true;
    return false;
}

static bool children_left(const hs_daemon *d)
{
    for (int i = 0; i < d->nchildren; i++)
        if (!d->children[i].exited)
            return true;
    return false;
}

/* After a failure: tell the waiting processes why, close every session, stop the children. */
static void shut_down(hs_daemon *d)
{
    for (size_t i = 0; i < d->nsessions; i++) {
        hs_session *s = d->sessions[i];
        if (s->state == HS_SESS_WAITING && s->fd >= 0) {
            hs_session_reply(s, &(hs_answer){.error = d->error});
        }
        hs_session_close(s);
    }
    for (int i = 0; i < d->nchildren; i++)
        if (!d->children[i].exited)
            kill(d->children[i].pid, SIGTERM);
}

/* The run went through: simulate what is left, then check that all work finished. */
static void finish(hs_daemon *d)
{
    hs_loop_advance(d);
    if (d->failed)
        return;
    char msg[sizeof(d->error)];
    snprintf(msg, sizeof(msg), "hysim: the processes ended with collectives that can never complete:");
    if (hs_coll_describe_unfinished(d, msg, sizeof(msg)) > 0)
        hs_daemon_fail(d, "%s", msg);
}

int hs_daemon_run(hs_daemon *d, const pid_t *children, int nchildren, int *exit_status, hs_run_summary *summary)
{
    free(d->children);
    d->children = hs_xcalloc((size_t)(nchildren > 0 ? nchildren : 1), sizeof(*d->children));
    d->nchildren = nchildren;
    bool have_all_pidfds = true;
    for (int i = 0; i < nchildren; i++) {
        d->children[i].pid = children[i];
        d->children[i].pidfd = pidfd_open_compat(children[i]);
        have_all_pidfds &= d->children[i].pidfd >= 0;
    }

    struct pollfd *pfd = NULL;
    size_t pfdcap = 0;
    bool shut = false, killed = false;
    int64_t kill_at = 0;
    install_stop_handlers();
    set_fabric_interrupt(d);
    hs_stall_start(d, now_ms());
    while (children_left(d) || open_sessions(d) || (d->remote_missing > 0 && !d->failed)) {
        if (nchildren > 0 && !children_left(d))
            hs_admit_close_strangers(d);
        check_stop_signal(d);
        if (d->failed && !shut) {
            shut_down(d);
            shut = true;
            kill_at = now_ms() + HS_KILL_GRACE_MS;
            continue; /* perhaps nothing is left to wait for */
        }
        if (shut && !killed && now_ms() >= kill_at) {
            for (int i = 0; i < d->nchildren; i++)
                if (!d->children[i].exited)
                    kill(d->children[i].pid, SIGKILL);
            killed = true;
        }

        size_t n = 0;
        hs_grow((void **)&pfd, &pfdcap, 1 + d->nsessions + (size_t)d->nchildren, sizeof(*pfd));
        pfd[n++] = (struct pollfd){.fd = shut ? -1 : d->listen_fd, .events = POLLIN};
        /* only what can still be read: a run may see more connections over its life than it may have open */
        for (size_t i = 0; i < d->nsessions; i++) {
            hs_session *s = d->sessions[i];
            if (s->fd >= 0 && !s->eof && !s->io_error)
                pfd[n++] = (struct pollfd){.fd = s->fd, .events = POLLIN};
        }
        for (int i = 0; i < d->nchildren; i++)
            if (!d->children[i].exited && d->children[i].pidfd >= 0)
                pfd[n++] = (struct pollfd){.fd = d->children[i].pidfd, .events = POLLIN};

        int timeout = shut ? -1 : hs_stall_check(d, now_ms());
        if (d->failed && !shut)
            continue; /* stalled: shut down at the top of the loop */
        int silent = shut ? -1 : hs_admit_close_silent(d, now_ms());
        if (silent >= 0 && (timeout < 0 || silent < timeout))
            timeout = silent;
        if (!have_all_pidfds && (timeout < 0 || timeout > HS_NO_PIDFD_POLL_MS))
            timeout = HS_NO_PIDFD_POLL_MS;
        if (shut && !killed) {
            int64_t left = kill_at - now_ms();
            timeout = left < 0 ? 0 : (timeout >= 0 && timeout < left ? timeout : (int)left);
        }
        /* hs_loop_advance drains the sockets into the readers while it
         * simulates: frames already read must be handled before sleeping */
        if (!shut && frames_buffered(d))
            timeout = 0;
        /* the fabric can run ahead while nothing arrives: look again at once */
        if (!shut && hs_fspec_more(d))
            timeout = 0;
        if (poll(pfd, n, timeout) < 0 && errno != EINTR) {
            hs_daemon_fail(d, "hysimd: poll: %s", strerror(errno));
            continue;
        }

        /* children first: a killed child's exit status makes the better message */
        for (int i = 0; i < d->nchildren; i++)
            if (!d->children[i].exited)
                reap(d, &d->children[i]);
        if (shut)
            continue;
        hs_admit_accept(d);
        for (size_t i = 0; i < d->nsessions && !d->failed; i++)
            hs_session_process(d->sessions[i]);
        hs_admit_forget_closed(d);
        hs_loop_advance(d);
        hs_stats_tick(d);
        hs_loop_check_deadlock(d);
    }
    free(pfd);
    if (!d->failed)
        finish(d);
    set_fabric_interrupt(NULL);
    restore_stop_handlers();
    hs_statsout_finish(d); /* also after a failure: the files show how far it got */

    for (int i = 0; i < nchildren; i++)
        if (exit_status)
            exit_status[i] = d->children[i].status;
    hs_fabric_stats st;
    hs_fabric_get_stats(d->fabric, &st);
    d->sum.packet_hops = st.packet_hops;
    hs_fspec_summarize(d);
    if (summary) {
        *summary = d->sum;
        snprintf(summary->error, sizeof(summary->error), "%s", d->error);
    }
    return d->failed ? -1 : 0;
}
