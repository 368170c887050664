/*
 * hysimd speculation, run.mode: optimistic: a blocking call exact rules
 * cannot answer yet is answered by a forked copy of the simulation that runs
 * ahead; the answers are checked against the authoritative simulation
 * (docs/time.md, "Optimistic mode in detail").
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon_internal.h"
#include "run_stats.h"

/* One speculative answer, kept until the authoritative simulation knows the true one. */
typedef struct hs_spec_rec {
    bool query;
    uint64_t host_ns; /* of the Wait */
    hs_op **covered;  /* the condition holds once all are done (refs) */
    size_t ncovered;
    hs_op **timed; /* the event records the answer timed (refs; NULL: never recorded) */
    size_t ntimed;
    /* what was answered */
    uint64_t n_ns;
    bool done;
    uint8_t *ev_done;
    uint64_t *ev_ps;
} hs_spec_rec;

struct hs_spec {
    uint64_t fault_fork; /* HYSIM_FAULT_FORK: 0 none */
    uint64_t forks;
    hs_spec_rec *recs;
    size_t nrecs, caprecs;
    /* the last speculation's predicted completions for its session's tails and event records */
    const hs_session *pred_s;
    uint64_t pred_mark; /* work_mark() then: valid while it is unchanged */
    const hs_op **pred_ops;
    uint64_t *pred_ps;
    size_t npred, cappred;
};

/* What the child sends: this header, then nev × hs_spec_ev, npred × hs_spec_pred. */
enum { HS_SPEC_ANSWERED = 1, HS_SPEC_NONE = 0, HS_SPEC_FAILED = -1 };
typedef struct hs_spec_msg {
    int32_t status;
    uint8_t done;
    uint64_t n_ns;
    uint64_t nev;
    uint64_t npred;
} hs_spec_msg;

typedef struct hs_spec_ev {
    uint8_t done;
    uint64_t time_ps;
} hs_spec_ev;

/* A predicted completion: the op's address is the same in the parent (fork). */
typedef struct hs_spec_pred {
    uint64_t op;
    uint64_t done_ps;
} hs_spec_pred;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------- setup */

int hs_spec_init(hs_daemon *d, char *err, size_t errlen)
{
    struct hs_spec *sp = hs_xcalloc(1, sizeof(*sp));
    d->spec = sp;
    const char *v = getenv("HYSIM_FAULT_FORK");
    if (v && *v) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(v, &end, 10);
        if (errno || *end || v[0] == '-' || n == 0) {
            snprintf(err, errlen, "hysimd: HYSIM_FAULT_FORK=\"%s\" is not a positive number (the fork to fail)", v);
            return -1;
        }
        sp->fault_fork = n;
    }
    const char *w = getenv("HYSIM_FABRIC_WORKER");
    if (d->sc.run.mode == HS_MODE_OPTIMISTIC && w && strcmp(w, "1") == 0) {
        snprintf(err, errlen,
                 "hysimd: run.mode: optimistic does not work with the worker-mode fabric (HYSIM_FABRIC_WORKER=1): "
                 "a speculation forks the daemon, and the worker process cannot be shared by two copies; "
                 "unset HYSIM_FABRIC_WORKER or use run.mode: exact");
        return -1;
    }
    return 0;
}

pid_t hs_spec_fork(hs_daemon *d)
{
    struct hs_spec *sp = d->spec;
    if (sp && sp->fault_fork && ++sp->forks == sp->fault_fork) {
        errno = EAGAIN;
        return -1;
    }
    fflush(NULL); /* the child must not inherit unwritten output it might write again */
    return fork();
}

static void rec_free(hs_spec_rec *r)
{
    for (size_t i = 0; i < r->ncovered; i++)
        hs_op_unref(r->covered[i]);
    for (size_t i = 0; i < r->ntimed; i++)
        hs_op_unref(r->timed[i]);
    free(r->covered);
    free(r->timed);
    free(r->ev_done);
    free(r->ev_ps);
}

void hs_spec_free(hs_daemon *d)
{
    struct hs_spec *sp = d->spec;
    if (!sp)
        return;
    for (size_t i = 0; i < sp->nrecs; i++)
        rec_free(&sp->recs[i]);
    free(sp->recs);
    free(sp->pred_ops);
    free(sp->pred_ps);
    free(sp);
    d->spec = NULL;
}

/* ------------------------------------------------------------- child */

static void write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            _exit(2);
        p += n;
        len -= (size_t)n;
    }
}

static int g_answer_fd = -1;       /* the child's end of the pipe */
static const hs_session *g_target; /* the session the child answers */
static hs_spec_msg g_msg;          /* its answer, once given */
static hs_spec_ev *g_ev;

void hs_spec_child_answered(hs_daemon *d, const hs_session *s, const hs_answer *r)
{
    (void)d;
    if (s != g_target || g_msg.status == HS_SPEC_ANSWERED)
        return; /* another waiting process: it issues nothing more in here either */
    g_msg.status = HS_SPEC_ANSWERED;
    g_msg.done = r->done;
    g_msg.n_ns = r->now_ns;
    g_msg.nev = r->nevent_times;
    g_ev = hs_xcalloc(r->nevent_times ? r->nevent_times : 1, sizeof(*g_ev));
    for (size_t i = 0; i < r->nevent_times; i++)
        g_ev[i] = (hs_spec_ev){.done = r->event_times[i].done, .time_ps = r->event_times[i].time_ps};
}

static void add_pred(hs_spec_pred **p, size_t *n, size_t *cap, const hs_op *op)
{
    if (!op || !op->done)
        return;
    hs_grow((void **)p, cap, *n + 1, sizeof(**p));
    (*p)[(*n)++] = (hs_spec_pred){.op = (uint64_t)(uintptr_t)op, .done_ps = op->done_ps};
}

/* The completions simulated for the target's stream tails and event records. */
static hs_spec_pred *predictions(const hs_session *s, size_t *n)
{
    hs_spec_pred *p = NULL;
    size_t cap = 0;
    *n = 0;
    for (uint32_t g = 0; g < s->gpu_count; g++) {
        add_pred(&p, n, &cap, s->gpus[g].legacy.tail);
        for (size_t i = 0; i < s->gpus[g].nall; i++)
            add_pred(&p, n, &cap, s->gpus[g].all[i]->tail);
    }
    for (size_t i = 0; i < s->events.cap; i++)
        if (s->events.used[i])
            add_pred(&p, n, &cap, s->events.vals[i]);
    return p;
}

/* Every descriptor but the pipe and stdio now reads and writes /dev/null: sockets, trace, --stats files. */
static void silence_fds(int keep)
{
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    DIR *dir = opendir("/proc/self/fd");
    if (null < 0 || !dir)
        _exit(3);
    int self = dirfd(dir);
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        int fd = atoi(e->d_name);
        if (fd > 2 && fd != keep && fd != self && fd != null)
            dup2(null, fd);
    }
    closedir(dir);
    close(null);
}

static void child_main(hs_daemon *d, hs_session *target, int fd, pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(0);
    signal(SIGINT, SIG_IGN); /* a ^C is the daemon's to handle; we die with it */
    signal(SIGTERM, SIG_DFL);
    silence_fds(fd);
    g_answer_fd = fd;
    g_target = target;
    d->spec_child = true;
    d->stats = NULL; /* fresh statistics: no trace file, no progress line */
    for (size_t i = 0; i < d->nsessions; i++)
        d->sessions[i]->fd = -1; /* never read nor answered here */
    hs_loop_advance(d);          /* everything issued so far: nothing bounds it here */
    if (g_msg.status != HS_SPEC_ANSWERED) {
        /* not answered: it needs work nobody has issued; or the simulation
         * failed, which the authoritative one will report in its turn */
        g_msg.status = d->failed ? HS_SPEC_FAILED : HS_SPEC_NONE;
        write_all(fd, &g_msg, sizeof(g_msg));
        _exit(0);
    }
    size_t npred = 0;
    hs_spec_pred *pred = d->failed ? NULL : predictions(target, &npred);
    g_msg.npred = npred;
    write_all(fd, &g_msg, sizeof(g_msg));
    write_all(fd, g_ev, g_msg.nev * sizeof(*g_ev));
    write_all(fd, pred, npred * sizeof(*pred));
    _exit(0);
}

/* ------------------------------------------------------------- parent */

static bool read_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

static void add_covered(hs_op ***ops, size_t *n, size_t *cap, hs_op *op)
{
    if (!op)
        return;
    hs_grow((void **)ops, cap, *n + 1, sizeof(**ops));
    (*ops)[(*n)++] = op;
}

/* The ops a GPU's idleness waits for: streams run in order, so their tails. */
static void cover_gpu(hs_op ***ops, size_t *n, size_t *cap, hs_sgpu *g)
{
    add_covered(ops, n, cap, g->legacy.tail);
    for (size_t i = 0; i < g->nall; i++)
        add_covered(ops, n, cap, g->all[i]->tail);
}

/* The ops whose completion the wait's condition is (no refs taken). */
static hs_op **covered_ops(hs_session *s, size_t *n)
{
    const hs_wait *w = &s->wait;
    hs_op **ops = NULL;
    size_t cap = 0;
    *n = 0;
    switch (w->cond) {
    case HS_WAIT_STREAM_IDLE:
    case HS_WAIT_EVENT_DONE: add_covered(&ops, n, &cap, w->target); break;
    case HS_WAIT_DEVICE_IDLE: cover_gpu(&ops, n, &cap, &s->gpus[w->gpu - s->first_gpu]); break;
    default: /* PROCESS_IDLE */
        for (uint32_t g = 0; g < s->gpu_count; g++)
            cover_gpu(&ops, n, &cap, &s->gpus[g]);
        break;
    }
    return ops;
}

/* Takes over the session's wait as a record of what was answered. */
static void keep_record(hs_daemon *d, hs_session *s, const hs_spec_msg *m, const hs_spec_ev *ev)
{
    struct hs_spec *sp = d->spec;
    hs_grow((void **)&sp->recs, &sp->caprecs, sp->nrecs + 1, sizeof(*sp->recs));
    hs_spec_rec *r = &sp->recs[sp->nrecs++];
    memset(r, 0, sizeof(*r));
    hs_wait *w = &s->wait;
    r->query = w->query;
    r->host_ns = w->host_ns;
    r->covered = covered_ops(s, &r->ncovered);
    for (size_t i = 0; i < r->ncovered; i++)
        hs_op_ref(r->covered[i]);
    r->ntimed = w->ntimed;
    r->timed = hs_xcalloc(w->ntimed ? w->ntimed : 1, sizeof(*r->timed));
    r->ev_done = hs_xcalloc(w->ntimed ? w->ntimed : 1, sizeof(*r->ev_done));
    r->ev_ps = hs_xcalloc(w->ntimed ? w->ntimed : 1, sizeof(*r->ev_ps));
    for (size_t i = 0; i < w->ntimed; i++) {
        r->timed[i] = hs_u64map_get(&s->events, w->timed[i]);
        if (r->timed[i])
            hs_op_ref(r->timed[i]);
        r->ev_done[i] = ev[i].done;
        r->ev_ps[i] = ev[i].time_ps;
    }
    r->n_ns = m->n_ns;
    r->done = m->done;
}

/* Replies to s with the speculation's answer; s runs again from that host time. */
static void answer_speculatively(hs_daemon *d, hs_session *s, const hs_spec_msg *m, const hs_spec_ev *ev)
{
    hs_wait *w = &s->wait;
    hs_event_time *et = hs_xcalloc(w->ntimed ? w->ntimed : 1, sizeof(*et));
    for (size_t i = 0; i < w->ntimed; i++)
        et[i] = (hs_event_time){.event = w->timed[i],
                                .recorded = hs_u64map_get(&s->events, w->timed[i]) != NULL,
                                .done = ev[i].done,
                                .time_ps = ev[i].time_ps};
    hs_session_reply(
        s, &(hs_answer){.now_ns = m->n_ns, .done = m->done, .id = w->id, .event_times = et, .nevent_times = w->ntimed});
    free(et);

    char what[128];
    hs_stats_wait_answered(d, s, hs_wait_describe(w, what, sizeof(what)), w->host_ns, m->n_ns);
    keep_record(d, s, m, ev);
    d->sum.optimistic_answers++;
    hs_session_wait_answered(s, 0, m->n_ns); /* one wait at a time in this mode (session.c) */
    hs_loop_saw(d, hs_ns_to_ps(m->n_ns));
}

/* Work issued so far: a speculation that found no answer is tried again once this grows. */
static uint64_t work_mark(const hs_daemon *d)
{
    uint64_t m = 1 + d->nsessions;
    for (size_t i = 0; i < d->nsessions; i++)
        m += d->sessions[i]->next_seq;
    return m;
}

/* ------------------------------------------------------------- predictions */

static void keep_predictions(hs_daemon *d, const hs_session *s, const hs_spec_pred *p, size_t n)
{
    struct hs_spec *sp = d->spec;
    sp->pred_s = s;
    sp->pred_mark = work_mark(d);
    sp->npred = 0;
    for (size_t i = 0; i < n; i++) {
        size_t cap = sp->cappred;
        hs_grow((void **)&sp->pred_ops, &sp->cappred, sp->npred + 1, sizeof(*sp->pred_ops));
        hs_grow((void **)&sp->pred_ps, &cap, sp->npred + 1, sizeof(*sp->pred_ps));
        sp->pred_ops[sp->npred] = (const hs_op *)(uintptr_t)p[i].op;
        sp->pred_ps[sp->npred++] = p[i].done_ps;
    }
}

/* The op's completion: done already, or predicted. False when neither. */
static bool completion(const struct hs_spec *sp, const hs_op *op, uint64_t *t)
{
    if (op->done) {
        *t = op->done_ps;
        return true;
    }
    for (size_t i = 0; i < sp->npred; i++)
        if (sp->pred_ops[i] == op) {
            *t = sp->pred_ps[i];
            return true;
        }
    return false;
}

/*
 * The answer the last speculation's simulation gives s's wait (as sim_loop.c
 * answer() would), while no work has been issued since. False when it does not know.
 */
static bool predicted_answer(hs_daemon *d, hs_session *s, hs_spec_msg *m, hs_spec_ev **evp)
{
    const struct hs_spec *sp = d->spec;
    const hs_wait *w = &s->wait;
    if (sp->pred_s != s || sp->pred_mark != work_mark(d))
        return false;
    size_t n;
    hs_op **cov = covered_ops(s, &n);
    uint64_t t = 0, ti;
    bool known = true;
    for (size_t i = 0; i < n && known; i++) {
        known = completion(sp, cov[i], &ti);
        t = hs_max_u64(t, known ? ti : 0);
    }
    free(cov);
    if (!known)
        return false;
    memset(m, 0, sizeof(*m));
    m->status = HS_SPEC_ANSWERED;
    m->n_ns = w->query ? w->host_ns : hs_max_u64(w->host_ns, hs_ps_to_ns_ceil(t));
    uint64_t now_ps = hs_ns_to_ps(m->n_ns);
    m->done = t <= now_ps;
    m->nev = w->ntimed;
    hs_spec_ev *ev = hs_xcalloc(w->ntimed ? w->ntimed : 1, sizeof(*ev));
    for (size_t i = 0; i < w->ntimed; i++) {
        const hs_op *rec = hs_u64map_get(&s->events, w->timed[i]);
        if (rec && !completion(sp, rec, &ti)) {
            free(ev);
            return false;
        }
        ev[i].done = rec && ti <= now_ps;
        ev[i].time_ps = ev[i].done ? ti : 0;
    }
    *evp = ev;
    return true;
}

/* ------------------------------------------------------------- forking */

/* Forks a speculation for s. 1: answered; 0: no answer (s waits on); -1: the run failed. */
static int speculate(hs_daemon *d, hs_session *s)
{
    char who[256], what[128];
    hs_spec_msg m;
    hs_spec_ev *ev = NULL;
    if (predicted_answer(d, s, &m, &ev)) {
        answer_speculatively(d, s, &m, ev);
        free(ev);
        return 1;
    }
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        hs_daemon_fail(d, "hysim: cannot speculate (run.mode: optimistic): pipe: %s", strerror(errno));
        return -1;
    }
    uint64_t t0 = mono_ns();
    pid_t parent = getpid();
    pid_t pid = hs_spec_fork(d);
    uint64_t t1 = mono_ns();
    if (pid == 0) {
        close(p[0]);
        child_main(d, s, p[1], parent);
    }
    close(p[1]);
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        hs_daemon_fail(d, "hysim: fork failed (run.mode: optimistic, speculating the answer to %s waiting for %s): %s",
                       hs_session_name(s, who, sizeof(who)), hs_wait_describe(&s->wait, what, sizeof(what)),
                       strerror(e));
        return -1;
    }
    d->sum.speculations++;
    d->sum.fork_wall_ns += t1 - t0;
    hs_spec_pred *pred = NULL;
    bool ok = read_all(p[0], &m, sizeof(m));
    if (ok && m.status == HS_SPEC_ANSWERED) {
        ok = m.nev == s->wait.ntimed;
        ev = hs_xcalloc(m.nev ? m.nev : 1, sizeof(*ev));
        pred = hs_xcalloc(m.npred ? m.npred : 1, sizeof(*pred));
        ok = ok && read_all(p[0], ev, m.nev * sizeof(*ev)) && read_all(p[0], pred, m.npred * sizeof(*pred));
    }
    close(p[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    d->sum.speculation_wall_ns += mono_ns() - t0;
    int rc = 0;
    if (!ok) {
        hs_daemon_fail(d, "hysim: the speculation process %d (answering %s) died: %s %d", (int)pid,
                       hs_session_name(s, who, sizeof(who)), WIFSIGNALED(st) ? "signal" : "exit status",
                       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
        rc = -1;
    } else if (m.status == HS_SPEC_ANSWERED) {
        keep_predictions(d, s, pred, m.npred);
        answer_speculatively(d, s, &m, ev);
        rc = 1;
    } else {
        s->wait.spec_mark = work_mark(d); /* as in exact mode, until more work is issued */
    }
    free(ev);
    free(pred);
    return rc;
}

/* ------------------------------------------------------------- revisions */

static bool all_done(hs_op *const *ops, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ops[i] && !ops[i]->done)
            return false;
    return true;
}

static uint64_t abs_diff(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

/*
 * The true answer by exact rules (sim_loop.c answer()), compared with the one
 * given: returns the revision in ns, -1 when nothing changed.
 */
static int64_t revision_ns(const hs_spec_rec *r)
{
    uint64_t t = 0; /* the condition's true completion */
    for (size_t i = 0; i < r->ncovered; i++)
        t = hs_max_u64(t, r->covered[i]->done_ps);
    uint64_t n_ns = r->query ? r->host_ns : hs_max_u64(r->host_ns, hs_ps_to_ns_ceil(t));
    uint64_t now_ps = hs_ns_to_ps(n_ns);
    bool done = t <= now_ps;
    bool changed = n_ns != r->n_ns || done != r->done;
    uint64_t rev_ps = hs_ns_to_ps(abs_diff(n_ns, r->n_ns));
    if (done != r->done) /* a query: the condition held at a time other than it was said to */
        rev_ps = hs_max_u64(rev_ps, abs_diff(t, now_ps));
    for (size_t i = 0; i < r->ntimed; i++) {
        const hs_op *rec = r->timed[i];
        bool ev_done = rec && rec->done && rec->done_ps <= now_ps;
        uint64_t ev_ps = ev_done ? rec->done_ps : 0;
        if (ev_done == (bool)r->ev_done[i] && ev_ps == r->ev_ps[i])
            continue;
        changed = true;
        /* an event not done by the answer's time counts as at that time */
        uint64_t a = ev_done ? ev_ps : now_ps, b = r->ev_done[i] ? r->ev_ps[i] : hs_ns_to_ps(r->n_ns);
        rev_ps = hs_max_u64(rev_ps, abs_diff(a, b));
    }
    return changed ? (int64_t)hs_ps_to_ns_ceil(rev_ps) : -1;
}

/* Compares and drops the records whose ops have all completed. */
static void resolve(hs_daemon *d)
{
    struct hs_spec *sp = d->spec;
    size_t keep = 0;
    for (size_t i = 0; i < sp->nrecs; i++) {
        hs_spec_rec *r = &sp->recs[i];
        if (!all_done(r->covered, r->ncovered) || !all_done(r->timed, r->ntimed)) {
            sp->recs[keep++] = *r;
            continue;
        }
        int64_t rev = revision_ns(r);
        if (rev >= 0) {
            d->sum.answers_revised++;
            d->sum.max_revision_ns = hs_max_u64(d->sum.max_revision_ns, (uint64_t)rev);
        }
        rec_free(r);
    }
    sp->nrecs = keep;
}

int hs_spec_step(hs_daemon *d)
{
    if (d->spec_child || !d->spec || d->failed)
        return 0;
    if (d->spec->nrecs)
        resolve(d);
    if (d->sc.run.mode != HS_MODE_OPTIMISTIC)
        return 0;
    int answered = 0;
    uint64_t mark = work_mark(d);
    for (size_t i = 0; i < d->nsessions && !d->failed; i++) {
        hs_session *s = d->sessions[i];
        if (s->state != HS_SESS_WAITING || s->fd < 0 || s->wait.spec_mark == mark)
            continue;
        int r = speculate(d, s);
        if (r > 0)
            answered++;
    }
    return answered;
}
