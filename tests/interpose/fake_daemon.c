/*
 * A small stand-in for hysimd, enough to test the interposer against the
 * wire protocol (bridge/wire/hysim.proto) without the real daemon.
 *
 * It answers Register with a Setup (H200-like, memory per --memory-bytes),
 * and a Wait with now_ns = host_ns + WAIT_NS (--wait-ns; a query Wait with
 * now_ns = host_ns). Every op "finishes" WORK_NS (--work-ns) after it was
 * issued, which decides query answers and event times: an event recorded at
 * host time h completes at (h + WORK_NS) ns. Everything it receives is logged,
 * one line each, to --log (flushed before any reply), for the tests to read.
 *
 * Failure injection: --drop-after N closes a session after its N-th message;
 * --wait-error TEXT answers every blocking Wait with that error;
 * --register-error TEXT refuses Register.
 *
 * It serves sessions until all that connected have closed (after at least
 * one), or --timeout seconds.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "messages.h"
#include "transport.h"

#define MAX_SESSIONS 16
#define MAX_EVENTS   4096
#define MAX_QUEUES   256

typedef struct queue {
    uint32_t gpu;
    uint64_t stream;
    uint64_t done_ns; /* when its last op finishes */
} queue;

typedef struct session {
    int fd;
    hs_frame_reader rd;
    unsigned messages;
    uint64_t event_done[MAX_EVENTS]; /* 0: never recorded */
    queue queues[MAX_QUEUES];
    int nqueues;
} session;

static struct {
    const char *endpoint, *log_path, *wait_error, *register_error;
    uint64_t memory_bytes, wait_ns, work_ns;
    uint32_t gpus_per_server, total_gpus, host_time, drop_after;
    uint64_t host_time_fixed_ns;
    int timeout_s;
} opt = {
    .memory_bytes = 80ull << 30,
    .wait_ns = 5000000,
    .work_ns = 1000000,
    .gpus_per_server = 8,
    .total_gpus = 16,
    .timeout_s = 60,
};

static FILE *g_log;

static void die(const char *fmt, const char *arg)
{
    fprintf(stderr, "fake_daemon: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(2);
}

static queue *queue_of(session *s, uint32_t gpu, uint64_t stream)
{
    for (int i = 0; i < s->nqueues; i++)
        if (s->queues[i].gpu == gpu && s->queues[i].stream == stream)
            return &s->queues[i];
    if (s->nqueues == MAX_QUEUES)
        die("%s", "too many streams");
    queue *q = &s->queues[s->nqueues++];
    q->gpu = gpu;
    q->stream = stream;
    q->done_ns = 0;
    return q;
}

static const char *copy_kind(Hysim__CopyKind k)
{
    switch (k) {
    case HYSIM__COPY_KIND__H2D: return "H2D";
    case HYSIM__COPY_KIND__D2H: return "D2H";
    case HYSIM__COPY_KIND__D2D: return "D2D";
    case HYSIM__COPY_KIND__H2H: return "H2H";
    default: return "?";
    }
}

static void log_op(session *s, const Hysim__Op *op)
{
    fprintf(g_log, "op host=%" PRIu64 " gpu=%u stream=%" PRIu64 " ", op->host_ns, op->gpu, op->stream);
    uint64_t done = op->host_ns + opt.work_ns;
    queue_of(s, op->gpu, op->stream)->done_ns = done;
    switch (op->kind_case) {
    case HYSIM__OP__KIND_KERNEL: {
        const Hysim__Kernel *k = op->kernel;
        fprintf(g_log, "kernel name=%s grid=%u,%u,%u block=%u,%u,%u shared=%" PRIu64, k->name, k->grid_x, k->grid_y,
                k->grid_z, k->block_x, k->block_y, k->block_z, k->shared_bytes);
        if (k->gemm) /* a library GEMM: its shape, type and leading dimensions */
            fprintf(g_log,
                    " gemm=%" PRIu64 "x%" PRIu64 "x%" PRIu64 " batch=%" PRIu64 " dtype=%d ld=%" PRIu64 ",%" PRIu64
                    ",%" PRIu64,
                    k->gemm->m, k->gemm->n, k->gemm->k, k->gemm->batch, (int)k->gemm->dtype, k->gemm->lda, k->gemm->ldb,
                    k->gemm->ldc);
        fputc('\n', g_log);
        break;
    }
    case HYSIM__OP__KIND_COPY:
        fprintf(g_log, "copy kind=%s bytes=%" PRIu64 " peer=%u%s", copy_kind(op->copy->kind), op->copy->bytes,
                op->copy->peer_gpu, op->copy->pageable ? " pageable" : "");
        if (op->copy->rows > 1)
            fprintf(g_log, " rows=%" PRIu64, op->copy->rows);
        fputc('\n', g_log);
        break;
    case HYSIM__OP__KIND_MEMSET:
        fprintf(g_log, "memset bytes=%" PRIu64, op->memset->bytes);
        if (op->memset->rows > 1)
            fprintf(g_log, " rows=%" PRIu64, op->memset->rows);
        fputc('\n', g_log);
        break;
    case HYSIM__OP__KIND_EVENT_RECORD:
        fprintf(g_log, "event_record event=%" PRIu64 "\n", op->event_record->event);
        if (op->event_record->event < MAX_EVENTS)
            s->event_done[op->event_record->event] = done;
        break;
    case HYSIM__OP__KIND_WAIT_EVENT: fprintf(g_log, "wait_event event=%" PRIu64 "\n", op->wait_event->event); break;
    case HYSIM__OP__KIND_STREAM_CREATE:
        fprintf(g_log, "stream_create nonblocking=%d priority=%d\n", op->stream_create->non_blocking,
                op->stream_create->priority);
        break;
    case HYSIM__OP__KIND_STREAM_DESTROY: fprintf(g_log, "stream_destroy\n"); break;
    case HYSIM__OP__KIND_COMM_INIT:
        fprintf(g_log, "comm_init key=%" PRIx64 " rank=%u nranks=%u\n", op->comm_init->comm_key, op->comm_init->rank,
                op->comm_init->nranks);
        break;
    case HYSIM__OP__KIND_COMM_DESTROY:
        fprintf(g_log, "comm_destroy key=%" PRIx64 " rank=%u\n", op->comm_destroy->comm_key, op->comm_destroy->rank);
        break;
    case HYSIM__OP__KIND_COLLECTIVE: {
        const Hysim__Collective *c = op->collective;
        fprintf(g_log,
                "collective key=%" PRIx64 " rank=%u seq=%" PRIu64 " kind=%d bytes=%" PRIu64 " root=%d group=%" PRIu64
                "\n",
                c->comm_key, c->rank, c->seq, (int)c->kind, c->bytes, c->root, c->group);
        break;
    }
    default: fprintf(g_log, "unknown kind=%d\n", (int)op->kind_case); break;
    }
}

/* Is the waited-for condition true at time t? */
static int holds(session *s, const Hysim__Wait *w, uint64_t t)
{
    switch (w->cond) {
    case HYSIM__WAIT__COND__STREAM_IDLE: return queue_of(s, w->gpu, w->stream)->done_ns <= t;
    case HYSIM__WAIT__COND__EVENT_DONE: return w->event >= MAX_EVENTS || s->event_done[w->event] <= t;
    default:
        for (int i = 0; i < s->nqueues; i++)
            if ((w->cond == HYSIM__WAIT__COND__PROCESS_IDLE || s->queues[i].gpu == w->gpu) && s->queues[i].done_ns > t)
                return 0;
        return 1;
    }
}

static const char *cond_name(Hysim__Wait__Cond c)
{
    static const char *names[] = {"stream_idle", "event_done", "device_idle", "process_idle"};
    return (unsigned)c < 4 ? names[c] : "?";
}

static void reply(session *s, Hysim__Reply *r)
{
    char err[256];
    fflush(g_log);
    if (hs_frame_send_reply(s->fd, r, err, sizeof err) != 0)
        fprintf(stderr, "fake_daemon: %s\n", err);
}

static void on_wait(session *s, const Hysim__Wait *w)
{
    Hysim__Reply r = HYSIM__REPLY__INIT;
    Hysim__EventTime times[8], *ptimes[8];
    /* a small collective's values: at the process's time, none known (it keeps no values) */
    int at_once = w->query || w->cond == HYSIM__WAIT__COND__COLL_VALUES;
    r.now_ns = at_once ? w->host_ns : w->host_ns + opt.wait_ns;
    r.done = w->query ? holds(s, w, w->host_ns) : 1;
    if (!w->query && opt.wait_error)
        r.error = (char *)opt.wait_error;
    fprintf(g_log,
            "wait host=%" PRIu64 " cond=%s gpu=%u stream=%" PRIu64 " event=%" PRIu64 " query=%d -> now=%" PRIu64
            " done=%d",
            w->host_ns, cond_name(w->cond), w->gpu, w->stream, w->event, w->query, r.now_ns, r.done);
    for (size_t i = 0; i < w->n_timed_events && i < 8; i++) {
        uint64_t ev = w->timed_events[i];
        uint64_t done = ev < MAX_EVENTS ? s->event_done[ev] : 0;
        hysim__event_time__init(&times[i]);
        times[i].event = ev;
        times[i].recorded = done != 0;
        times[i].done = done != 0 && done <= r.now_ns;
        times[i].time_ps = times[i].done ? done * 1000 : 0;
        ptimes[i] = &times[i];
        r.n_event_times = i + 1;
        fprintf(g_log, " [event=%" PRIu64 " done=%d time_ps=%" PRIu64 "]", ev, times[i].done, times[i].time_ps);
    }
    r.event_times = ptimes;
    fprintf(g_log, "\n");
    reply(s, &r);
}

static void on_register(session *s, const Hysim__Register *g)
{
    fprintf(g_log, "register server=%u pid=%u first_gpu=%u gpu_count=%u host=%" PRIu64 " version=%u program=%s\n",
            g->server, g->pid, g->first_gpu, g->gpu_count, g->host_ns, g->protocol_version, g->program);
    Hysim__Reply r = HYSIM__REPLY__INIT;
    Hysim__Setup setup = HYSIM__SETUP__INIT;
    setup.gpu_model = "NVIDIA H200";
    setup.gpu_memory_bytes = opt.memory_bytes;
    setup.sm_count = 132;
    setup.cc_major = 9;
    setup.cc_minor = 0;
    setup.gpus_per_server = opt.gpus_per_server;
    setup.host_time = opt.host_time;
    setup.host_time_scale = 1.0;
    setup.host_time_fixed_ns = opt.host_time_fixed_ns;
    setup.epoch_ns = 0;
    setup.total_gpus = opt.total_gpus;
    r.now_ns = g->host_ns;
    if (opt.register_error)
        r.error = (char *)opt.register_error;
    else
        r.setup = &setup;
    reply(s, &r);
}

/* Handles one message; returns 0 to keep the session, -1 to close it. */
static int on_message(session *s, const uint8_t *body, size_t len)
{
    char err[256];
    Hysim__ClientMsg *m = hs_frame_decode_client_msg(body, len, err, sizeof err);
    if (!m) {
        fprintf(g_log, "garbage %s\n", err);
        return -1;
    }
    switch (m->msg_case) {
    case HYSIM__CLIENT_MSG__MSG_REGISTER: on_register(s, m->register_); break;
    case HYSIM__CLIENT_MSG__MSG_BATCH:
        fprintf(g_log, "batch n=%zu\n", m->batch->n_ops);
        for (size_t i = 0; i < m->batch->n_ops; i++)
            log_op(s, m->batch->ops[i]);
        break;
    case HYSIM__CLIENT_MSG__MSG_WAIT: on_wait(s, m->wait); break;
    case HYSIM__CLIENT_MSG__MSG_JOIN: { /* answered where the process is: this daemon simulates nothing */
        Hysim__Reply r = HYSIM__REPLY__INIT;
        r.id = m->join->id;
        r.now_ns = m->join->host_ns;
        r.done = 1;
        reply(s, &r);
        break;
    }
    case HYSIM__CLIENT_MSG__MSG_BYE:
        fprintf(g_log, "bye host=%" PRIu64 " kernels=%" PRIu64 " peaks=", m->bye->host_ns, m->bye->kernels_launched);
        for (size_t i = 0; i < m->bye->n_peak_memory_bytes; i++)
            fprintf(g_log, "%s%" PRIu64, i ? "," : "", m->bye->peak_memory_bytes[i]);
        fprintf(g_log, "\n");
        break;
    default: fprintf(g_log, "unknown message %d\n", (int)m->msg_case); break;
    }
    fflush(g_log);
    hysim__client_msg__free_unpacked(m, NULL);
    if (opt.drop_after && ++s->messages >= opt.drop_after) {
        fprintf(g_log, "dropping the connection\n");
        return -1;
    }
    return 0;
}

static void close_session(session *s)
{
    fprintf(g_log, "closed\n");
    fflush(g_log);
    close(s->fd);
    hs_frame_reader_free(&s->rd);
    s->fd = -1;
}

static void parse_args(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            die("%s needs a value", a);
        i++;
        if (!strcmp(a, "--endpoint"))
            opt.endpoint = v;
        else if (!strcmp(a, "--log"))
            opt.log_path = v;
        else if (!strcmp(a, "--memory-bytes"))
            opt.memory_bytes = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--wait-ns"))
            opt.wait_ns = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--work-ns"))
            opt.work_ns = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--gpus-per-server"))
            opt.gpus_per_server = (uint32_t)atoi(v);
        else if (!strcmp(a, "--total-gpus"))
            opt.total_gpus = (uint32_t)atoi(v);
        else if (!strcmp(a, "--setup-fixed-ns"))
            opt.host_time = 2, opt.host_time_fixed_ns = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--drop-after"))
            opt.drop_after = (uint32_t)atoi(v);
        else if (!strcmp(a, "--wait-error"))
            opt.wait_error = v;
        else if (!strcmp(a, "--register-error"))
            opt.register_error = v;
        else if (!strcmp(a, "--timeout"))
            opt.timeout_s = atoi(v);
        else
            die("unknown option %s", a);
    }
    if (!opt.endpoint || !opt.log_path)
        die("%s", "usage: fake_daemon --endpoint unix:PATH --log FILE [options]");
}

int main(int argc, char **argv)
{
    parse_args(argc, argv);
    signal(SIGPIPE, SIG_IGN);
    g_log = fopen(opt.log_path, "w");
    if (!g_log)
        die("cannot write %s", opt.log_path);
    char err[256];
    int lfd = hs_transport_listen(opt.endpoint, err, sizeof err);
    if (lfd < 0)
        die("%s", err);
    session *ss = calloc(MAX_SESSIONS, sizeof *ss);
    for (int i = 0; i < MAX_SESSIONS; i++)
        ss[i].fd = -1;
    int seen = 0, open = 0;
    time_t end = time(NULL) + opt.timeout_s;
    while (!(seen && !open) && time(NULL) < end) {
        struct pollfd pfd[MAX_SESSIONS + 1];
        int idx[MAX_SESSIONS + 1], n = 0;
        pfd[n] = (struct pollfd){.fd = lfd, .events = POLLIN};
        idx[n++] = -1;
        for (int i = 0; i < MAX_SESSIONS; i++)
            if (ss[i].fd >= 0) {
                pfd[n] = (struct pollfd){.fd = ss[i].fd, .events = POLLIN};
                idx[n++] = i;
            }
        if (poll(pfd, (nfds_t)n, 200) <= 0)
            continue;
        for (int k = 0; k < n; k++) {
            if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            if (idx[k] < 0) {
                int fd = hs_transport_accept(lfd);
                int slot = -1;
                for (int i = 0; fd >= 0 && i < MAX_SESSIONS && slot < 0; i++)
                    if (ss[i].fd < 0)
                        slot = i;
                if (slot < 0) {
                    if (fd >= 0)
                        close(fd);
                    continue;
                }
                memset(&ss[slot], 0, sizeof ss[slot]);
                ss[slot].fd = fd;
                hs_frame_reader_init(&ss[slot].rd);
                fprintf(g_log, "connected\n");
                seen = 1;
                open++;
                continue;
            }
            session *s = &ss[idx[k]];
            long got = hs_frame_reader_fill(&s->rd, s->fd);
            if (got == -1)
                continue; /* EAGAIN */
            int keep = got > 0;
            const uint8_t *body;
            size_t len;
            int rc = 1;
            while (keep && (rc = hs_frame_reader_next(&s->rd, &body, &len)) == HS_FRAME_OK)
                keep = on_message(s, body, len) == 0;
            if (keep && rc != 1) {
                fprintf(g_log, "bad frame: %s\n", hs_frame_status_name(rc));
                keep = 0;
            }
            if (!keep) {
                close_session(s);
                open--;
            }
        }
    }
    hs_transport_unlink(opt.endpoint);
    fclose(g_log);
    free(ss);
    return 0;
}
