/* The hysimd test harness: runner/children processes and a small protocol client. */
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon_test.h"
#include "transport.h"

static dt_result *g_result; /* the run a child records into */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void dt_record(int idx, uint64_t v)
{
    CHECK(g_result && idx >= 0 && idx < DT_MAX_CHILDREN, "dt_record outside a child");
    int n = g_result->nvalues[idx];
    CHECK(n < DT_MAX_VALUES, "too many values");
    g_result->values[idx][n] = v;
    __atomic_store_n(&g_result->nvalues[idx], n + 1, __ATOMIC_RELEASE);
}

int dt_nvalues(int idx) { return __atomic_load_n(&g_result->nvalues[idx], __ATOMIC_ACQUIRE); }

dt_result *dt_run(const hs_scenario *sc, int nchildren, dt_child_fn fn, void *arg)
{
    static int counter;
    CHECK(nchildren <= DT_MAX_CHILDREN, "too many children");
    dt_result *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(r != MAP_FAILED, "mmap");
    memset(r, 0, sizeof(*r));
    r->rc = 99;
    r->nchildren = nchildren;
    char ep[128];
    snprintf(ep, sizeof(ep), "unix:/tmp/hysimd-test-%d-%d.sock", (int)getpid(), counter++);

    double t0 = now_s();
    fflush(NULL);
    pid_t runner = fork();
    CHECK(runner >= 0, "fork");
    if (runner == 0) {
        g_result = r;
        char err[512] = "";
        hs_daemon *d = hs_daemon_create(sc, ep, err, sizeof(err));
        CHECK(d, "hs_daemon_create: %s", err);
        for (int i = 0; i < nchildren; i++) {
            fflush(NULL);
            pid_t p = fork();
            CHECK(p >= 0, "fork");
            if (p == 0) {
                fn(ep, i, arg);
                _exit(0);
            }
            r->pid[i] = p;
        }
        r->rc = hs_daemon_run(d, r->pid, nchildren, r->status, &r->sum);
        hs_daemon_destroy(d);
        exit(0); /* not _exit: under the sanitizers, the leak check looks at the daemon */
    }
    int st;
    CHECK(waitpid(runner, &st, 0) == runner, "waitpid runner");
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the runner (daemon) process failed: status 0x%x", st);
    r->wall_s = now_s() - t0;
    if (r->sum.error[0])
        fprintf(stderr, "run error: %s\n", r->sum.error);
    return r;
}

void dt_free(dt_result *r) { munmap(r, sizeof(*r)); }

/* ------------------------------------------------------------- client */

typedef struct dt_op {
    Hysim__Op op;
    union {
        Hysim__Kernel kernel;
        Hysim__Copy copy;
        Hysim__Memset memset;
        Hysim__EventRecord record;
        Hysim__StreamWaitEvent wait_event;
        Hysim__StreamCreate stream_create;
        Hysim__CommInit comm_init;
        Hysim__Collective coll;
    } u;
} dt_op;

static void send_msg(dt_client *c, const Hysim__ClientMsg *m)
{
    char err[256];
    CHECK(hs_frame_send_client_msg(c->fd, m, err, sizeof(err)) == HS_FRAME_OK, "send: %s", err);
}

Hysim__Reply *dt_read_reply(dt_client *c)
{
    uint8_t *body;
    size_t len;
    char err[256];
    int rc = hs_frame_read_blocking(c->fd, &body, &len, err, sizeof(err));
    if (rc != HS_FRAME_OK)
        return NULL;
    Hysim__Reply *r = hs_frame_decode_reply(body, len, err, sizeof(err));
    free(body);
    CHECK(r, "reply: %s", err);
    return r;
}

void dt_connect(dt_client *c, const char *endpoint, uint32_t server, uint32_t first_gpu, uint32_t gpu_count,
                uint64_t host_ns)
{
    memset(c, 0, sizeof(*c));
    char err[256];
    c->fd = hs_transport_connect(endpoint, err, sizeof(err));
    CHECK(c->fd >= 0, "connect: %s", err);
    c->gpu = first_gpu;
    c->host_ns = host_ns;
    Hysim__Register reg = HYSIM__REGISTER__INIT;
    reg.server = server;
    reg.pid = (uint32_t)getpid();
    reg.first_gpu = first_gpu;
    reg.gpu_count = gpu_count;
    reg.host_ns = host_ns;
    reg.program = "daemon-test";
    reg.protocol_version = 1;
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_REGISTER;
    m.register_ = &reg;
    send_msg(c, &m);
    Hysim__Reply *r = dt_read_reply(c);
    CHECK(r, "no reply to Register");
    CHECK(!r->error[0], "Register failed: %s", r->error);
    CHECK(r->setup, "Register reply without setup");
    c->setup = *r->setup;
    c->setup.gpu_model = NULL;
    CHECK(strcmp(r->setup->gpu_model, "NVIDIA H200") == 0, "gpu_model %s", r->setup->gpu_model);
    hysim__reply__free_unpacked(r, NULL);
}

static dt_op *new_op(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream, Hysim__Op__KindCase kind)
{
    dt_op *o = calloc(1, sizeof(*o));
    hysim__op__init(&o->op);
    o->op.host_ns = host_ns;
    o->op.gpu = gpu;
    o->op.stream = stream;
    o->op.kind_case = kind;
    o->op.kernel = (void *)&o->u; /* every member of the oneof is a pointer into u */
    if (c->nops == c->capops) {
        c->capops = c->capops ? 2 * c->capops : 16;
        c->ops = realloc(c->ops, c->capops * sizeof(*c->ops));
    }
    c->ops[c->nops++] = &o->op;
    return o;
}

void dt_kernel(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream)
{
    dt_op *o = new_op(c, host_ns, gpu, stream, HYSIM__OP__KIND_KERNEL);
    hysim__kernel__init(&o->u.kernel);
    o->u.kernel.name = "_Z6kernelv";
    o->u.kernel.grid_x = o->u.kernel.block_x = 1;
}

void dt_graph_kernel(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream)
{
    dt_kernel(c, host_ns, gpu, stream);
    c->ops[c->nops - 1]->kernel->graph_node = true;
}

void dt_copy(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream, Hysim__CopyKind kind, uint64_t bytes,
             uint32_t peer)
{
    dt_op *o = new_op(c, host_ns, gpu, stream, HYSIM__OP__KIND_COPY);
    hysim__copy__init(&o->u.copy);
    o->u.copy.kind = kind;
    o->u.copy.bytes = bytes;
    o->u.copy.peer_gpu = peer;
}

void dt_pageable_copy(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream, Hysim__CopyKind kind,
                      uint64_t bytes)
{
    dt_copy(c, host_ns, gpu, stream, kind, bytes, 0);
    c->ops[c->nops - 1]->copy->pageable = true; /* the op dt_copy appended */
}

void dt_memset(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream, uint64_t bytes)
{
    dt_op *o = new_op(c, host_ns, gpu, stream, HYSIM__OP__KIND_MEMSET);
    hysim__memset__init(&o->u.memset);
    o->u.memset.bytes = bytes;
}

void dt_record_event(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream, uint64_t event)
{
    dt_op *o = new_op(c, host_ns, gpu, stream, HYSIM__OP__KIND_EVENT_RECORD);
    hysim__event_record__init(&o->u.record);
    o->u.record.event = event;
}

void dt_wait_event(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream, uint64_t event)
{
    dt_op *o = new_op(c, host_ns, gpu, stream, HYSIM__OP__KIND_WAIT_EVENT);
    hysim__stream_wait_event__init(&o->u.wait_event);
    o->u.wait_event.event = event;
}

void dt_stream_create(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream, bool non_blocking)
{
    dt_op *o = new_op(c, host_ns, gpu, stream, HYSIM__OP__KIND_STREAM_CREATE);
    hysim__stream_create__init(&o->u.stream_create);
    o->u.stream_create.non_blocking = non_blocking;
}

void dt_comm_init(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t comm, uint32_t rank, uint32_t nranks)
{
    dt_op *o = new_op(c, host_ns, gpu, 0, HYSIM__OP__KIND_COMM_INIT);
    hysim__comm_init__init(&o->u.comm_init);
    o->u.comm_init.comm_key = comm;
    o->u.comm_init.rank = rank;
    o->u.comm_init.nranks = nranks;
}

void dt_collective(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream, uint64_t comm, uint32_t rank,
                   uint64_t seq, Hysim__CollKind kind, uint64_t bytes)
{
    dt_op *o = new_op(c, host_ns, gpu, stream, HYSIM__OP__KIND_COLLECTIVE);
    hysim__collective__init(&o->u.coll);
    o->u.coll.comm_key = comm;
    o->u.coll.rank = rank;
    o->u.coll.seq = seq;
    o->u.coll.kind = kind;
    o->u.coll.bytes = bytes;
}

void dt_collective_ex(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream, uint64_t comm, uint32_t rank,
                      uint64_t seq, Hysim__CollKind kind, uint64_t bytes, int32_t root, uint64_t group)
{
    dt_collective(c, host_ns, gpu, stream, comm, rank, seq, kind, bytes);
    dt_op *o = (dt_op *)c->ops[c->nops - 1]; /* the Op is the first member of its dt_op */
    o->u.coll.root = root;
    o->u.coll.group = group;
}

void dt_peer_copy(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream, uint64_t bytes, uint32_t peer,
                  bool from_peer)
{
    dt_copy(c, host_ns, gpu, stream, HYSIM__COPY_KIND__D2D, bytes, peer);
    dt_op *o = (dt_op *)c->ops[c->nops - 1];
    o->u.copy.from_peer = from_peer;
}

void dt_raw_op(dt_client *c, uint64_t host_ns, uint32_t gpu)
{
    dt_op *o = new_op(c, host_ns, gpu, 0, HYSIM__OP__KIND__NOT_SET);
    o->op.kernel = NULL;
}

void dt_flush(dt_client *c)
{
    if (!c->nops)
        return;
    Hysim__Batch b = HYSIM__BATCH__INIT;
    b.n_ops = c->nops;
    b.ops = c->ops;
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_BATCH;
    m.batch = &b;
    send_msg(c, &m);
    for (size_t i = 0; i < c->nops; i++)
        free(c->ops[i]); /* the Op is the first member of its dt_op */
    c->nops = 0;
}

Hysim__Reply *dt_wait_msg(dt_client *c, Hysim__Wait *w)
{
    dt_flush(c);
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_WAIT;
    m.wait = w;
    send_msg(c, &m);
    Hysim__Reply *r = dt_read_reply(c);
    CHECK(r, "no reply to Wait (connection closed)");
    return r;
}

Hysim__Reply *dt_wait(dt_client *c, uint64_t host_ns, Hysim__Wait__Cond cond, uint32_t gpu, uint64_t stream,
                      uint64_t event, bool query, const uint64_t *timed, size_t ntimed)
{
    Hysim__Wait w = HYSIM__WAIT__INIT;
    w.host_ns = host_ns;
    w.cond = cond;
    w.gpu = gpu;
    w.stream = stream;
    w.event = event;
    w.query = query;
    w.n_timed_events = ntimed;
    w.timed_events = (uint64_t *)timed;
    return dt_wait_msg(c, &w);
}

void dt_send(dt_client *c, const Hysim__ClientMsg *m)
{
    dt_flush(c);
    send_msg(c, m);
}

uint64_t dt_sleep_until(dt_client *c, uint64_t host_ns, uint64_t until_ns)
{
    dt_flush(c);
    Hysim__Wait w = HYSIM__WAIT__INIT;
    w.host_ns = host_ns;
    w.cond = HYSIM__WAIT__COND__UNTIL;
    w.until_ns = until_ns;
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_WAIT;
    m.wait = &w;
    send_msg(c, &m);
    Hysim__Reply *r = dt_read_reply(c);
    CHECK(r, "no reply to the UNTIL Wait (connection closed)");
    CHECK(!r->error[0] && r->done, "UNTIL Wait: error \"%s\" done %d", r->error, r->done);
    uint64_t now = r->now_ns;
    hysim__reply__free_unpacked(r, NULL);
    return now;
}

uint64_t dt_sync_stream(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream)
{
    Hysim__Reply *r = dt_wait(c, host_ns, HYSIM__WAIT__COND__STREAM_IDLE, gpu, stream, 0, false, NULL, 0);
    CHECK(!r->error[0], "Wait failed: %s", r->error);
    CHECK(r->done, "blocking Wait answered not done");
    uint64_t now = r->now_ns;
    hysim__reply__free_unpacked(r, NULL);
    return now;
}

void dt_bye(dt_client *c, uint64_t host_ns, const uint64_t *peaks, size_t npeaks)
{
    dt_flush(c);
    Hysim__Bye b = HYSIM__BYE__INIT;
    b.host_ns = host_ns;
    b.n_peak_memory_bytes = npeaks;
    b.peak_memory_bytes = (uint64_t *)peaks;
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_BYE;
    m.bye = &b;
    send_msg(c, &m);
    close(c->fd);
    c->fd = -1;
    free(c->ops);
}

void dt_send_raw(dt_client *c, const void *bytes, size_t len)
{
    const uint8_t *p = bytes;
    while (len) {
        ssize_t w = write(c->fd, p, len);
        CHECK(w > 0, "write");
        p += w;
        len -= (size_t)w;
    }
}

int dt_main(int argc, char **argv, const dt_case *cases, size_t ncases)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (size_t i = 0; argc == 2 && i < ncases; i++)
        if (strcmp(argv[1], cases[i].name) == 0) {
            cases[i].fn();
            printf("%s: ok\n", cases[i].name);
            return 0;
        }
    fprintf(stderr, "usage: %s CASE\ncases:", argv[0]);
    for (size_t i = 0; i < ncases; i++)
        fprintf(stderr, " %s", cases[i].name);
    fputc('\n', stderr);
    return 2;
}
