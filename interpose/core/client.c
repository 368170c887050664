/*
 * The client core: connection to hysimd, op batching, and the CUDA state a
 * process shares between libcudart.so.13, libcuda.so.1 and libnccl.so.2
 * (client.h says what each call means).
 *
 * Connection: lazy, on the first CUDA/NCCL call that needs the daemon
 * (Register → Setup). The first op or Wait is preceded by Join, and so is
 * the return of a thread that blocked outside hysimd (docs/time.md). Non-blocking calls append an Op to a batch of at most
 * HS_BATCH_MAX; the batch is sent before every Wait, when it is full, before
 * kernels are unregistered, and at exit followed by Bye. Every op carries the
 * host clock at issue; ops are appended under the one mutex, so host times
 * on the wire never decrease. A lost connection prints why and exits the
 * process with status 1 (it never hangs and never returns wrong answers).
 * Each call of a kind whose real CPU cost was measured names its kind to the
 * host clock (hs_client_charge_call, api_cost.h) before it is issued or
 * captured; a synchronous copy is not of a measured kind.
 * A watcher thread notices it within milliseconds even while the program
 * computes on the host and makes no CUDA call (watch_connection).
 *
 * Threads: a Wait is sent under the mutex after the pending ops, but its
 * answer is awaited without it, so that other threads issue work and Waits
 * of their own meanwhile. Each Wait carries an id; whichever waiting thread
 * is free reads the next Reply and hands it to the Wait with its id
 * (await_reply). hysimd bounds the simulation at the process's host time
 * until every thread that has issued work waits: each Wait says how many
 * such threads there are, and a Threads message says so when one starts or
 * exits between Waits (a process that only ever works from one thread sends
 * none). A thread hysimd does not know yet, one just started, is given time
 * to issue its first work before a Wait lets hysimd pass the process's host
 * time (await_first_work_locked). CommSplit still holds the mutex until answered.
 *
 * pthread_join (threads.c): a thread that issued work and joins another
 * that did sends a THREAD_EXIT Wait, answered once the joined thread's exit
 * (a Threads message naming it) arrives; meanwhile it counts as waiting, and
 * it awaits the answer after the real join returns. The Wait is held back,
 * the joiner counting as running, while a thread may still issue its first
 * work at the process's host time, which hysimd must not simulate past: the
 * joined thread itself until its first work, and every "fresh" thread, one
 * a thread that had issued work created, until its first work or its exit
 * (the workers a main thread starts and joins). Whichever of those events
 * makes the join ready sends the Wait on the joiner's behalf. A joined
 * thread that never issues work costs nothing.
 *
 * Threads blocked outside CUDA (host_sync.c: condition variables, barriers,
 * semaphores; mutex.c, rwlock.c: mutexes, rwlocks; threads.c: a join hysimd
 * is not told of): each blocked thread
 * is listed by the address it blocks on, and one that issued work counts as
 * waiting, left out of the count hysimd holds (Wait.threads, Threads), so
 * that the simulation may pass the process's host time while it cannot run.
 * The thread that releases it (a signal, a broadcast, the last arrival at a
 * barrier, a post, an exit) runs, so hysimd has not passed the host clock:
 * it counts the released threads in again, and sends the count before its
 * release call returns. A releaser that never issued work is no such proof,
 * so blocked threads are counted out only while every thread that issued no
 * work (the main thread, every thread started under hysim) is blocked too.
 * Which of the threads blocked on an address the real call wakes is libc's
 * choice: a woken thread that was not released takes the release of one
 * that was and still blocks (hysimd needs the count, not who); one that
 * finds none (a signal handler's interruption) counts itself in, which
 * hysimd refuses if the simulation has passed its clock.
 */
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpu_identity.h"
#include "api_cost.h"
#include "frame.h"
#include "hysim/scenario.h"
#include "host_sync.h"
#include "internal.h"
#include "managed_memory.h"
#include "threads.h"
#include "transport.h"
#include "values.h"

#ifndef HS_PROTOCOL_VERSION
#define HS_PROTOCOL_VERSION 1
#endif

#define HS_BATCH_MAX 256

enum client_state {
    ST_IDLE = 0, /* not connected yet */
    ST_READY,    /* Setup received */
    ST_FAILED,   /* no HYSIM_ENDPOINT or refused: every call fails (message printed) */
    ST_FORKED,   /* a child forked after CUDA was initialised: as with real CUDA, unusable */
    ST_CLOSED,   /* Bye sent at exit */
};

typedef struct hs_stream {
    uint64_t id;
    int dev;
    unsigned flags; /* as created: cudaStreamGetFlags */
    int priority;
} hs_stream;

typedef struct hs_event {
    uint64_t id;
    int dev; /* device of the stream it was last recorded on */
    unsigned flags;
    int recorded;
} hs_event;

typedef struct hs_kernel {
    const void *module;
    const void *host_fun;
    char *name;
} hs_kernel;

/* A pending op with room for its one sub-message (pointers stay valid: fixed array). */
typedef struct pending_op {
    Hysim__Op op;
    union {
        Hysim__Kernel kernel;
        struct {
            Hysim__Kernel kernel;
            Hysim__Gemm gemm;
            Hysim__RandomGeneration random;
        } gemm; /* a library kernel: a Kernel carrying a GEMM's shape or a generation's numbers */
        Hysim__Copy copy;
        Hysim__Memset memset;
        Hysim__EventRecord event_record;
        Hysim__StreamWaitEvent wait_event;
        Hysim__StreamCreate stream_create;
        Hysim__StreamDestroy stream_destroy;
        Hysim__CommInit comm_init;
        Hysim__CommDestroy comm_destroy;
        Hysim__Collective collective;
    } u;
} pending_op;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int g_state = ST_IDLE;
static int g_fd = -1;
static char g_endpoint[512];
static hs_gpu_info g_info;

static pending_op g_ops[HS_BATCH_MAX];
static Hysim__Op *g_op_ptrs[HS_BATCH_MAX];
static size_t g_nops;

static uint64_t g_next_stream = 1; /* 0 is every GPU's legacy default stream */
static uint64_t g_next_event = 1;
static uint64_t g_kernels_launched;
static uint64_t g_issued; /* ops and messages the process issued: one more each (a spinning query sees none) */

uint64_t hs_client_issued(void) { return __atomic_load_n(&g_issued, __ATOMIC_RELAXED); }

static hs_ptrmap g_streams;        /* hs_stream * → 1 */
static hs_ptrmap g_events;         /* hs_event * → 1 */
static hs_ptrmap g_kernels;        /* host stub → hs_kernel * */
static hs_ptrmap g_kernel_handles; /* hs_kernel * → 1 */
static hs_ptrmap g_pinned;         /* host block → size */
static hs_ptrmap g_registered;     /* cudaHostRegister'ed range → size */
static hs_ptrmap g_host_flags;     /* start of a pinned block or registered range → its flags (cudaHostGetFlags) */

static __thread int t_device;
static void note_primary_active(int dev); /* contexts, below */
static void bind_primary(void);
static __thread int t_works;     /* this thread has issued work (an op or a Wait) */
static int g_any_work;           /* some thread of the process has (sleeps are real until then) */
static __thread int t_joining;   /* this thread blocks in a pthread_join hysimd knows of */
static uint32_t g_fresh;         /* live threads that a work thread created, which have issued no work, not expired */
static uint64_t g_fresh_expired; /* fresh threads born up to this one no longer hold joins (expire_fresh_locked) */
static uint64_t g_quiet_starts;  /* threads started, and threads that issued no work released (count_parked_locked) */
static uint64_t
    g_quiet_starts_awaited; /* of those, the ones Waits gave time to issue first work (await_first_work_locked) */
static uint64_t g_start_grace_given; /* real time (ns) Waits gave the starts since then */
static hs_thread *g_joins;           /* threads a work thread joins, the join's Wait not sent yet */
static uint32_t g_threads;           /* threads that have issued work and not exited */
static int g_threads_said;           /* a Threads message went out: keep hysimd's count exact */
static uint32_t g_said;              /* the count hysimd holds, as last sent (0 reads as 1) */
static int g_said_outside;           /* the last Threads said every thread blocks outside hysimd */
static uint32_t g_nlisted_io;        /* threads blocked in I/O (hs_client_io_block) */
static uint32_t g_quiet_live = 1;    /* threads that issued no work: the main thread, each one threads.c tracks */
static uint32_t g_quiet_parked;      /* of those, blocked and not released */
static uint32_t g_work_parked;       /* threads that issued work, blocked and not released */
static hs_parked *g_parked;          /* every listed blocked thread, released or not */
static _Atomic int g_nlisted;        /* how many are listed */
static pthread_key_t g_works_key;    /* its destructor counts the thread out */
static __thread uint64_t *t_ptds;    /* per-thread default stream id per device, 0 = none yet */
static __thread int t_graph_launch;  /* this thread issues a CUDA graph's nodes (hs_client_graph_launch) */
static __thread int t_wait_blocked;  /* this thread's last Wait found its work not done (wait_locked) */
static pthread_key_t g_ptds_key;

static __thread int t_holds_lock;  /* a signal handler's sem_post must not take it again (hs_client_release_and) */
static __thread int t_lock_cancel; /* the cancel state lock_client found, restored by unlock_client */
static __thread int t_awaiting;    /* in await_reply (a signal handler's sleep must not wait there again) */

/*
 * The client core is no cancellation point, as real CUDA calls are not:
 * under g_lock it writes to hysimd (sendmsg is one), and a thread that
 * pthread_cancel finds there (a CUDA call, or host_sync.c's park and
 * release, with a cancel pending) would die holding g_lock, possibly
 * listed as blocked on its dead stack, and hang the process. So
 * cancellation is off while g_lock is held (and in await_reply); a pending
 * cancel acts at the program's next cancellation point, such as the real
 * wait of a wrapped pthread_cond_wait or sem_wait, whose cleanup unparks it.
 */
static void lock_client(void)
{
    int old = PTHREAD_CANCEL_ENABLE;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    pthread_mutex_lock(&g_lock);
    t_lock_cancel = old;
    t_holds_lock = 1;
}
static void unlock_client(void)
{
    int old = t_lock_cancel;
    t_holds_lock = 0;
    pthread_mutex_unlock(&g_lock);
    pthread_setcancelstate(old, NULL);
}
#define LOCK()   lock_client()
#define UNLOCK() unlock_client()

/*
 * Stream capture (CUDA graphs) lives in libcudart.so.13 (cudart_capture.c),
 * which installs these hooks when a program first captures; until then a
 * stream op costs one relaxed load more. The hooks are called without the
 * lock: a graph launch issues its nodes through the calls here.
 */
static const hs_capture_hooks *_Atomic g_capture;
#define CAPTURE_ON() (atomic_load_explicit(&g_capture, memory_order_relaxed) != NULL)

void hs_client_set_capture_hooks(const hs_capture_hooks *hooks)
{
    atomic_store_explicit(&g_capture, hooks, memory_order_release);
}

/* 1 when a capture took the op, *e being the call's result. */
static int captured(hs_stream_op *op, cudaError_t *e)
{
    const hs_capture_hooks *h = atomic_load_explicit(&g_capture, memory_order_acquire);
    return h && h->divert(op, e);
}

static cudaError_t capture_check(enum hs_capture_check what, cudaStream_t stream)
{
    const hs_capture_hooks *h = atomic_load_explicit(&g_capture, memory_order_acquire);
    return h ? h->check(what, stream) : cudaSuccess;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p) {
        fprintf(stderr, "hysim: out of host memory\n");
        abort();
    }
    return p;
}

/* ---- connection ---- */

static _Atomic int g_leaving;   /* Bye is on its way: hysimd closing the connection is expected */
static _Atomic int g_lost_said; /* one thread reports the lost connection and exits; others wait for that */

__attribute__((noreturn)) static void lost(const char *why)
{
    if (atomic_exchange(&g_lost_said, 1))
        for (;;)
            pause();
    fprintf(stderr, "hysim: lost connection to hysimd at %s: %s\n", g_endpoint, why);
    fflush(NULL);
    _exit(1);
}

static int unread_bytes(int fd)
{
    int n = 0;
    return ioctl(fd, FIONREAD, &n) == 0 ? n : 0;
}

/*
 * Waits for hysimd's end of the connection to go away (the daemon exited or
 * was killed) and then ends the process, which may be busy on the host and
 * never ask the daemon anything again. Only polls: it never reads, so the
 * replies stay for the calling threads. A reply already in the socket (the
 * reason the run failed, say) gets a moment to be read and printed first.
 */
static void *watch_connection(void *arg)
{
    int fd = (int)(intptr_t)arg;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLRDHUP};
        int r = poll(&p, 1, -1);
        if (atomic_load(&g_leaving))
            return NULL;
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 || (p.revents & POLLNVAL))
            return NULL;
        if (!(p.revents & (POLLRDHUP | POLLHUP | POLLERR)))
            continue;
        for (int i = 0; i < 50 && unread_bytes(fd) > 0 && !atomic_load(&g_leaving); i++)
            hs_client_real_sleep_ns(10000000);
        if (atomic_load(&g_leaving))
            return NULL;
        lost("hysimd closed the connection (it exited or was killed)");
    }
}

/* Starts the watcher with every signal blocked, so that the program's handlers run on its own threads. */
static void start_watcher_locked(void)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 256 * 1024);
    int rc = hs_thread_create_untracked(&t, &a, watch_connection, (void *)(intptr_t)g_fd);
    pthread_attr_destroy(&a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        fprintf(stderr,
                "hysim: note: cannot start the connection watcher (%s); a lost hysimd is noticed "
                "at the next CUDA call only\n",
                strerror(rc));
}

int hs_client_connection_fd(void) { return __atomic_load_n(&g_fd, __ATOMIC_RELAXED); }

static void send_locked(const Hysim__ClientMsg *m)
{
    __atomic_fetch_add(&g_issued, 1, __ATOMIC_RELAXED);
    char err[256];
    if (hs_frame_send_client_msg(g_fd, m, err, sizeof err) != 0)
        lost(err);
}

static Hysim__Reply *read_reply(void)
{
    char err[256];
    uint8_t *body;
    size_t len;
    int rc = hs_frame_read_blocking(g_fd, &body, &len, err, sizeof err);
    if (rc != HS_FRAME_OK)
        lost(err);
    Hysim__Reply *r = hs_frame_decode_reply(body, len, err, sizeof err);
    free(body);
    if (!r)
        lost(err);
    return r;
}

/*
 * Unanswered requests, each awaited by one thread. Lock order: g_lock, then
 * g_reply_lock; await_reply takes only the latter.
 */
typedef struct reply_slot {
    uint64_t id; /* Wait.id; 0 for a CommSplit (at most one: it holds g_lock) */
    Hysim__Reply *reply;
    struct reply_slot *next; /* g_slots: newest first */
} reply_slot;

static pthread_mutex_t g_reply_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_reply_cond = PTHREAD_COND_INITIALIZER;
static reply_slot *g_slots;
static int g_reader_busy; /* a thread reads the socket: the others sleep on g_reply_cond */
static uint64_t g_next_wait_id = 1;

/* Called with g_lock held, before the request is sent. */
static void expect_reply_locked(reply_slot *slot, uint64_t id)
{
    memset(slot, 0, sizeof *slot);
    slot->id = id;
    pthread_mutex_lock(&g_reply_lock);
    slot->next = g_slots;
    g_slots = slot;
    pthread_mutex_unlock(&g_reply_lock);
}

/* Hands r to the request it answers (g_reply_lock held). */
static void deliver_reply(Hysim__Reply *r)
{
    hs_clock_advance_to(r->now_ns); /* before anyone runs on: one host clock per process */
    reply_slot *oldest = NULL;
    for (reply_slot *s = g_slots; s; s = s->next) {
        if (s->reply)
            continue;
        if (s->id == r->id) {
            s->reply = r;
            return;
        }
        oldest = s;
    }
    if (r->id == 0 && oldest) {
        oldest->reply = r; /* hysimd's last word (an error), or a daemon without Wait.id: it answers in order */
        return;
    }
    char why[128];
    snprintf(why, sizeof why, "it answered request %llu, which no thread waits for", (unsigned long long)r->id);
    lost(why);
}

/* Blocks until slot is answered, reading the socket while no other thread does. */
static Hysim__Reply *await_reply(reply_slot *slot)
{
    int cancel = PTHREAD_CANCEL_ENABLE; /* no cancellation point (lock_client says why): its reads and waits are */
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
    t_awaiting = 1;
    pthread_mutex_lock(&g_reply_lock);
    while (!slot->reply) {
        if (g_reader_busy) {
            hs_real_cond_wait(&g_reply_cond, &g_reply_lock); /* the client's own wait: never listed */
            continue;
        }
        g_reader_busy = 1;
        pthread_mutex_unlock(&g_reply_lock);
        Hysim__Reply *r = read_reply(); /* the only reader (g_reader_busy); g_reply_lock is free meanwhile */
        pthread_mutex_lock(&g_reply_lock);
        g_reader_busy = 0;
        deliver_reply(r);
        hs_real_cond_broadcast(&g_reply_cond);
    }
    reply_slot **pp = &g_slots;
    while (*pp != slot)
        pp = &(*pp)->next;
    *pp = slot->next;
    pthread_mutex_unlock(&g_reply_lock);
    t_awaiting = 0;
    pthread_setcancelstate(cancel, NULL);
    return slot->reply;
}

static void flush_locked(void)
{
    if (g_nops == 0)
        return;
    Hysim__Batch b = HYSIM__BATCH__INIT;
    b.n_ops = g_nops;
    b.ops = g_op_ptrs;
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_BATCH;
    m.batch = &b;
    send_locked(&m);
    g_nops = 0;
}

static int parse_env_uint(const char *name, unsigned long max, unsigned long *out)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    unsigned long x = strtoul(v, &end, 10);
    if (*v == '-' || *end || errno || x > max) {
        fprintf(stderr, "hysim: %s=%s is not a number from 0 to %lu\n", name, v, max);
        return -1;
    }
    *out = x;
    return 1;
}

/* A Reply's error as the program's stderr shows it: hysimd's own messages begin "hysim: " already. */
static void print_daemon_error(const char *error)
{
    fprintf(stderr, strncmp(error, "hysim: ", 7) ? "hysim: %s\n" : "%s\n", error);
}

/* Fails the process's CUDA with a message (state ST_FAILED). */
static void fail_locked(const char *msg)
{
    fprintf(stderr, "hysim: %s\n", msg);
    if (g_fd >= 0)
        close(g_fd);
    g_fd = -1;
    atomic_store(&g_state, ST_FAILED);
}

/*
 * The pid hysimd knows this process by: its own, or HYSIM_LAUNCH_PID when it
 * runs in a container (its pid there means nothing to hysimd, which waits on
 * the `podman run` process that hysim started and set this to).
 */
static uint32_t registered_pid(void)
{
    const char *launch = getenv("HYSIM_LAUNCH_PID");
    char *end = NULL;
    unsigned long pid = launch && *launch ? strtoul(launch, &end, 10) : 0;
    return end && !*end && pid > 0 && pid <= UINT32_MAX ? (uint32_t)pid : (uint32_t)getpid();
}
/* The parent, grandparent, ... of this process, nearest first (none in a container: its pids mean nothing to hysimd). */
static size_t host_ancestors(uint32_t *out, size_t max)
{
    const char *launch = getenv("HYSIM_LAUNCH_PID");
    if (launch && *launch)
        return 0;
    size_t n = 0;
    pid_t pid = getppid();
    while (n < max && pid > 1) {
        out[n++] = (uint32_t)pid;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "re");
        if (!f)
            break;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        const char *paren = strrchr(buf, ')'); /* the command may hold spaces and parentheses */
        int ppid = 0;
        if (!paren || sscanf(paren + 1, " %*c %d", &ppid) != 1)
            break;
        pid = ppid;
    }
    return n;
}

static void connect_locked(void)
{
    if (!hs_clock_simulated()) {
        fail_locked("HYSIM_ENDPOINT is not set: run this program under `hysim run SCENARIO -- PROGRAM`");
        return;
    }
    const char *ep = getenv("HYSIM_ENDPOINT");
    snprintf(g_endpoint, sizeof g_endpoint, "%s", ep ? ep : "");
    unsigned long server = 0, gpus = 0;
    if (parse_env_uint("HYSIM_SERVER", 1ul << 20, &server) < 0 || parse_env_uint("HYSIM_GPUS", 1ul << 16, &gpus) < 0) {
        atomic_store(&g_state, ST_FAILED);
        return;
    }
    char err[512];
    uint32_t visible_first = 0, visible = (uint32_t)gpus;
    if (gpus && hs_visible_devices(getenv("CUDA_VISIBLE_DEVICES"), (uint32_t)server, (uint32_t)gpus, &visible_first,
                                   &visible, err, sizeof err) < 0) {
        fail_locked(err);
        return;
    }
    g_fd = hs_transport_connect(g_endpoint, err, sizeof err);
    if (g_fd < 0) {
        fprintf(stderr, "hysim: %s\n", err);
        fflush(NULL);
        _exit(1);
    }

    Hysim__Register reg = HYSIM__REGISTER__INIT;
    reg.server = (uint32_t)server;
    reg.pid = registered_pid();
    /* gpus_per_server only arrives with Setup; a process normally sees a whole server. */
    reg.first_gpu = (uint32_t)(server * gpus) + visible_first;
    reg.gpu_count = visible;
    reg.host_ns = hs_clock_now();
    reg.program = program_invocation_name;
    reg.protocol_version = HS_PROTOCOL_VERSION;
    const char *token = getenv("HYSIM_TOKEN");
    reg.token = (char *)(token ? token : "");
    uint32_t ancestors[16];
    reg.n_ancestors = host_ancestors(ancestors, sizeof ancestors / sizeof ancestors[0]);
    reg.ancestors = ancestors;
    unsigned long rank = 0, world = 0; /* as torchrun and torch.multiprocessing users set them */
    if (parse_env_uint("RANK", UINT32_MAX, &rank) > 0 && parse_env_uint("WORLD_SIZE", UINT32_MAX, &world) > 0 &&
        rank < world) {
        reg.rank = (uint32_t)rank;
        reg.world_size = (uint32_t)world;
    }
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_REGISTER;
    m.register_ = &reg;
    send_locked(&m);
    Hysim__Reply *r = read_reply();
    hs_clock_advance_to(r->now_ns);

    char msg[512] = "";
    const Hysim__Setup *s = r->setup;
    if (r->error && r->error[0])
        snprintf(msg, sizeof msg, "%s", r->error);
    else if (!s || s->gpus_per_server == 0)
        snprintf(msg, sizeof msg, "hysimd answered Register without a Setup");
    else if (gpus > s->gpus_per_server)
        snprintf(msg, sizeof msg, "HYSIM_GPUS=%lu, but the scenario's servers have %u GPUs each", gpus,
                 s->gpus_per_server);
    else if (s->total_gpus && (server + 1) * s->gpus_per_server > s->total_gpus)
        snprintf(msg, sizeof msg, "HYSIM_SERVER=%lu is outside the scenario (%u GPUs, %u per server)", server,
                 s->total_gpus, s->gpus_per_server);
    if (!msg[0]) {
        memset(&g_info, 0, sizeof g_info);
        snprintf(g_info.model, sizeof g_info.model, "%s", s->gpu_model ? s->gpu_model : "");
        g_info.memory_bytes = s->gpu_memory_bytes;
        g_info.sm_count = (int)s->sm_count;
        g_info.cc_major = (int)s->cc_major;
        g_info.cc_minor = (int)s->cc_minor;
        g_info.device_count = gpus ? (int)visible : (int)s->gpus_per_server;
        g_info.server = (uint32_t)server;
        g_info.visible_first = gpus ? visible_first : 0;
        g_info.first_gpu = (uint32_t)server * s->gpus_per_server + g_info.visible_first;
        g_info.gpus_per_server = s->gpus_per_server;
        g_info.total_gpus = s->total_gpus;
        g_info.nvlink_gbps = s->nvlink_gbps_per_gpu;
        hs_clock_apply_setup(s->host_time, s->host_time_scale, s->host_time_fixed_ns, s->epoch_ns);
        (void)hs_devmem_init(g_info.device_count, g_info.memory_bytes, msg, sizeof msg);
    }
    hysim__reply__free_unpacked(r, NULL);
    if (msg[0]) {
        fail_locked(msg);
        return;
    }
    start_watcher_locked();
    atomic_store_explicit(&g_state, ST_READY, memory_order_release);
}

cudaError_t hs_client_start(void)
{
    int st = atomic_load_explicit(&g_state, memory_order_acquire);
    if (st == ST_IDLE) {
        LOCK();
        if (atomic_load(&g_state) == ST_IDLE)
            connect_locked();
        st = atomic_load(&g_state);
        UNLOCK();
    }
    switch (st) {
    case ST_READY: return cudaSuccess;
    case ST_CLOSED: return cudaErrorCudartUnloading;
    case ST_FORKED: {
        static _Atomic int said;
        if (!atomic_exchange(&said, 1))
            fprintf(stderr, "hysim: this process was forked after CUDA was initialised; as with real "
                            "CUDA, the child cannot use the GPUs\n");
        return cudaErrorInitializationError;
    }
    default: return cudaErrorNoDevice;
    }
}

void hs_client_gpu_uuid(int dev, unsigned char out[16]) { hs_gpu_uuid(g_info.first_gpu + (uint32_t)dev, out); }

const hs_gpu_info *hs_client_gpu_info(void)
{
    return atomic_load_explicit(&g_state, memory_order_acquire) == ST_READY ? &g_info : NULL;
}

/* ---- ops and waits ---- */

static uint32_t global_gpu(int dev) { return g_info.first_gpu + (uint32_t)dev; }

/* The threads hysimd counts: those that issued work, less those blocked outside CUDA where that is sound. */
static uint32_t counted_threads_locked(void)
{
    if (g_quiet_parked != g_quiet_live || g_work_parked > g_threads)
        return g_threads;
    return g_threads - g_work_parked;
}

/*
 * Every thread hysim counts blocks outside hysimd: none can issue work until
 * one returns (from a socket or poll, host_io.c, or a wait in real time),
 * whatever the simulation does meanwhile. Only after the process's first work.
 */
static int all_outside_locked(void)
{
    return g_any_work && g_quiet_parked == g_quiet_live && g_work_parked >= g_threads && g_nlisted_io > 0;
}

/* exited: the id of a thread a THREAD_EXIT Wait waits for, which exits; 0 for none. */
static void send_threads_locked(uint64_t exited)
{
    flush_locked();
    Hysim__Threads t = HYSIM__THREADS__INIT;
    t.host_ns = hs_clock_now();
    t.threads = g_said = counted_threads_locked();
    t.exited = exited;
    t.outside = g_said_outside = all_outside_locked();
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_THREADS;
    m.threads = &t;
    send_locked(&m);
    g_threads_said = 1;
}

static void send_ready_joins_locked(void);

/* t issued its first work or exits: it no longer holds joins up. */
static void no_longer_fresh_locked(hs_thread *t)
{
    if (t->fresh) {
        t->fresh = 0;
        if (t->born > g_fresh_expired)
            g_fresh--;
    }
}

/*
 * The process (re)enters the simulation: before its first work, and when a
 * thread returns from blocking outside hysimd (docs/time.md, "Join").
 * hysimd counts it in the safe time from here and says where its clock goes
 * on, which may be later: the simulation may have passed it meanwhile.
 */
static void join_locked(void)
{
    flush_locked(); /* ops issued before are stamped before it */
    Hysim__Join a = HYSIM__JOIN__INIT;
    a.host_ns = hs_clock_now();
    a.id = g_next_wait_id++;
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_JOIN;
    m.join = &a;
    reply_slot slot;
    expect_reply_locked(&slot, a.id);
    send_locked(&m);
    Hysim__Reply *r = await_reply(&slot); /* moves the clock */
    if (r->error && r->error[0])
        print_daemon_error(r->error);
    hysim__reply__free_unpacked(r, NULL);
}

/* The calling thread issues work: counted from its first op or Wait until it exits. */
static void note_work_locked(void)
{
    if (t_works)
        return;
    t_works = 1;
    if (!g_any_work)
        join_locked();
    g_any_work = 1;
    hs_thread *self = hs_thread_self();
    if (self) {
        self->worked = 1; /* counted out by hs_client_thread_exit */
        no_longer_fresh_locked(self);
    } else {
        pthread_setspecific(g_works_key, (void *)1);
    }
    if (self || getpid() == (pid_t)syscall(SYS_gettid))
        g_quiet_live--;  /* a thread counted as one that issued no work */
    if (++g_threads > 1) /* hysimd must not simulate past this thread's work while the others wait */
        send_threads_locked(0);
    if (self)
        send_ready_joins_locked();
}

/* A thread that issued work exits; exited as for send_threads_locked. */
static void count_out_locked(uint64_t exited)
{
    if (g_threads > 0)
        g_threads--;
    if (atomic_load(&g_state) == ST_READY && ((g_threads_said && g_threads > 0) || exited))
        send_threads_locked(exited); /* the others may all wait now */
}

static void thread_left(void *unused)
{
    (void)unused;
    LOCK();
    count_out_locked(0);
    UNLOCK();
}

static void tell_counted_locked(void);
static void wake_timed_locked(const void *key, unsigned max);
static unsigned release_locked(const void *key, unsigned max);

void hs_client_thread_created(hs_thread *t)
{
    LOCK();
    g_quiet_live++; /* it runs, unseen by hysimd: blocked threads count as running while it does */
    t->born = ++g_quiet_starts;
    g_start_grace_given = 0; /* a new start: a whole grace again */
    if (t_works) {           /* a thread that never issued work holds no join up: neither do its threads */
        t->fresh = 1;
        g_fresh++;
    }
    tell_counted_locked();
    UNLOCK();
}

void hs_client_thread_exit(hs_thread *t)
{
    int worked = t->worked; /* set by t itself; fresh too, but for its creator before t started */
    if (worked)
        hs_client_enter(); /* its host time until now precedes the exit */
    LOCK();
    if (!worked) {
        g_quiet_live--;
        tell_counted_locked();
    }
    int was_fresh = t->fresh;
    no_longer_fresh_locked(t);
    if (worked && !t->exited) {
        wake_timed_locked(t, 0); /* timed joins of it (hs_client_join_until), before it is counted out */
        count_out_locked(t->join_wait ? t->id : 0);
    }
    t->exited = 1;
    if (was_fresh)
        send_ready_joins_locked();
    UNLOCK();
    if (worked)
        hs_client_leave();
}

/* A new op on (dev, stream) stamped with the host clock; the caller fills the kind, then commits. */
static pending_op *append_locked(int dev, uint64_t stream)
{
    note_work_locked();
    bind_primary();
    note_primary_active(dev);
    pending_op *p = &g_ops[g_nops];
    hysim__op__init(&p->op);
    p->op.host_ns = hs_clock_now();
    p->op.reach_ns = hs_clock_reach_ns();
    p->op.gpu = global_gpu(dev);
    p->op.stream = stream;
    return p;
}

static void commit_locked(void)
{
    __atomic_fetch_add(&g_issued, 1, __ATOMIC_RELAXED);
    g_op_ptrs[g_nops] = &g_ops[g_nops].op;
    if (++g_nops == HS_BATCH_MAX)
        flush_locked();
}

/* Sends the Wait w (its condition filled in) after the pending ops; its Reply will come to slot. */
static void send_wait_begin_locked(Hysim__Wait *w, reply_slot *slot)
{
    note_work_locked();
    flush_locked();
    w->id = g_next_wait_id++;
    w->threads = g_said = counted_threads_locked();
    w->host_ns = hs_clock_now();
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_WAIT;
    m.wait = w;
    expect_reply_locked(slot, w->id);
    send_locked(&m);
}

/* w's Reply r arrived: into *out (the caller frees it), or freed. cudaErrorUnknown when it carried an error. */
static cudaError_t send_wait_end_locked(const Hysim__Wait *w, Hysim__Reply *r, Hysim__Reply **out)
{
    if (r->error && r->error[0]) {
        print_daemon_error(r->error);
        hysim__reply__free_unpacked(r, NULL);
        return cudaErrorUnknown;
    }
    t_wait_blocked = !w->query && r->now_ns > w->host_ns;
    if (t_wait_blocked)
        hs_clock_woke(r->now_ns); /* it blocked: the host sees the answer a wake-up later */
    if (out)
        *out = r;
    else
        hysim__reply__free_unpacked(r, NULL);
    return cudaSuccess;
}

/*
 * Sends the Wait w (its condition filled in) after the pending ops and
 * returns hysimd's Reply in *out (the caller frees it) or frees it when out
 * is NULL. cudaErrorUnknown when the Reply carried an error (printed).
 * Called and returns with g_lock held, but releases it while the answer is
 * awaited: other threads run meanwhile.
 */
static cudaError_t send_wait_locked(Hysim__Wait *w, Hysim__Reply **out)
{
    reply_slot slot;
    send_wait_begin_locked(w, &slot);
    UNLOCK();
    Hysim__Reply *r = await_reply(&slot);
    LOCK();
    return send_wait_end_locked(w, r, out);
}

/*
 * A thread that has issued no work yet and runs (one just started, or one
 * a release let go from a lock, a barrier, a condition variable) may issue
 * its first work at the process's present host time, which hysimd must not
 * pass before that work arrives: it would refuse the work ("host time went
 * backwards"), or, had the work come after the answer, the thread would
 * start late in simulated time, by as much as real scheduling let the
 * others run ahead. hysimd cannot know of a thread before its first work,
 * so a Wait that may let it pass that time first gives such threads, once
 * per batch of starts (g_quiet_starts), up to length_ns of real time
 * (HS_FIRST_WORK_GRACE_NS in all, over the Waits of a sleep's length that
 * may come first) to issue it, block or exit: the workers a thread-per-GPU
 * program starts all begin at the same host time, however the machine
 * scheduled them, and so does a thread that takes a lock as its first act.
 * A helper thread that never issues work costs one grace per batch, not one
 * per Wait; none while every thread that issued no work is blocked.
 */
#define HS_FIRST_WORK_GRACE_NS 250000000ull
static void expire_fresh_locked(void);
static void await_first_work_locked(uint64_t length_ns)
{
    if (g_quiet_starts == g_quiet_starts_awaited)
        return;
    uint64_t left = HS_FIRST_WORK_GRACE_NS - g_start_grace_given, waited = 0;
    uint64_t grace = length_ns < left ? length_ns : left;
    for (; g_quiet_parked < g_quiet_live && waited < grace; waited += 1000000) {
        UNLOCK();
        hs_client_real_sleep_ns(1000000);
        LOCK();
    }
    g_start_grace_given += waited;
    if (waited < grace || g_start_grace_given >= HS_FIRST_WORK_GRACE_NS) { /* no need, or the whole grace */
        g_quiet_starts_awaited = g_quiet_starts;
        expire_fresh_locked(); /* they hold no join up either */
    }
}

/* A Wait on a GPU's work; see send_wait_locked. */
static cudaError_t wait_locked(Hysim__Wait__Cond cond, int dev, uint64_t stream, uint64_t event, int query,
                               uint64_t *timed, size_t ntimed, Hysim__Reply **out)
{
    if (!query) /* it may block: hysimd may then pass this host time */
        await_first_work_locked(HS_FIRST_WORK_GRACE_NS);
    Hysim__Wait w = HYSIM__WAIT__INIT;
    w.cond = cond;
    w.gpu = global_gpu(dev);
    w.stream = stream;
    w.event = event;
    w.query = query != 0;
    w.n_timed_events = ntimed;
    w.timed_events = timed;
    return send_wait_locked(&w, out);
}

/*
 * The queries the calling thread found not met since its process's host
 * clock last moved or the process last issued anything (query_locked).
 */
#define HS_UNMET_MAX 8
typedef struct unmet_query {
    Hysim__Wait__Cond cond;
    int dev;
    uint64_t stream, event;
} unmet_query;
static int same_query(const unmet_query *a, const unmet_query *b)
{
    return a->cond == b->cond && a->dev == b->dev && a->stream == b->stream && a->event == b->event;
}
static __thread struct {
    unmet_query q[HS_UNMET_MAX];
    int n;
    hs_quiet_mark mark; /* after the last of them */
} t_unmet;

/*
 * A query Wait: cudaSuccess when the condition holds now, cudaErrorNotReady
 * when not. A thread that asks again what it was told is not met, its
 * process's host clock where it was and nothing issued since (a loop on
 * cudaStreamQuery or cudaEventQuery, of one stream or several in turn,
 * under host_time zero, where polls cost nothing), would spin forever at
 * that time: the simulation cannot pass it while the thread runs. That
 * query waits instead, as a synchronisation would, and reports the
 * condition met: the loop ends when the work does, as a real spin would
 * (within a poll).
 */
static cudaError_t query_locked(Hysim__Wait__Cond cond, int dev, uint64_t stream, uint64_t event)
{
    unmet_query me = {cond, dev, stream, event};
    if (!hs_quiet_since(&t_unmet.mark))
        t_unmet.n = 0; /* time passed, or something was issued: the thread is not spinning */
    for (int i = 0; i < t_unmet.n; i++)
        if (same_query(&t_unmet.q[i], &me)) {
            t_unmet.n = 0;
            return wait_locked(cond, dev, stream, event, 0, NULL, 0, NULL);
        }
    Hysim__Reply *r;
    cudaError_t e = wait_locked(cond, dev, stream, event, 1, NULL, 0, &r);
    if (e != cudaSuccess)
        return e;
    e = r->done ? cudaSuccess : cudaErrorNotReady;
    hysim__reply__free_unpacked(r, NULL);
    if (e == cudaErrorNotReady && t_unmet.n < HS_UNMET_MAX)
        t_unmet.q[t_unmet.n++] = me;
    hs_quiet_mark_take(&t_unmet.mark);
    return e;
}

/* ---- pthread_join (threads.c) ---- */

/* The joiner of t waits for t's exit; the Reply goes to t->join_wait, which the joiner awaits. */
static void send_join_wait_locked(hs_thread *t)
{
    flush_locked();
    reply_slot *slot = xcalloc(1, sizeof *slot);
    Hysim__Wait w = HYSIM__WAIT__INIT;
    w.id = g_next_wait_id++;
    w.threads = g_said = counted_threads_locked(); /* the joiner's and t's at least: hysimd keeps the count from here */
    w.host_ns = hs_clock_now();
    w.cond = HYSIM__WAIT__COND__THREAD_EXIT;
    w.thread = t->id;
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_WAIT;
    m.wait = &w;
    expect_reply_locked(slot, w.id);
    send_locked(&m);
    t->join_wait = slot;
    g_threads_said = 1;
}

/*
 * The fresh threads started so far no longer hold joins up: those that have
 * not issued work after a whole grace (await_first_work_locked) are helpers
 * that may never, and a join held for them would count its joiner as
 * running for their whole life (the simulation stalls if the joined threads
 * wait on their GPUs meanwhile).
 */
static void expire_fresh_locked(void)
{
    g_fresh_expired = g_quiet_starts;
    if (g_fresh == 0)
        return;
    g_fresh = 0;
    send_ready_joins_locked();
}

/* Sends the Waits of the joins that are ready: the joined thread issued work, no fresh thread is left. */
static void send_ready_joins_locked(void)
{
    if (g_fresh > 0 || atomic_load(&g_state) != ST_READY)
        return;
    for (hs_thread **pp = &g_joins; *pp;) {
        hs_thread *t = *pp;
        if (t->worked && !t->exited) {
            *pp = t->next_join;
            t->next_join = NULL;
            send_join_wait_locked(t);
        } else {
            pp = &t->next_join;
        }
    }
}

int hs_client_join_begin(hs_thread *t)
{
    if (!t_works || t_joining || atomic_load(&g_state) != ST_READY)
        return 0;      /* a thread that never issued work bounds nothing: its join costs nothing */
    hs_client_enter(); /* the join is an intercepted call: left in hs_client_join_end */
    LOCK();
    int told = !t->exited && !t->joiner;
    if (told) {
        t->joiner = 1;
        t->next_join = g_joins;
        g_joins = t;
        send_ready_joins_locked();
    }
    UNLOCK();
    if (!told)
        hs_client_leave();
    t_joining = told;
    return told;
}

void hs_client_join_end(hs_thread *t)
{
    LOCK();
    for (hs_thread **pp = &g_joins; *pp; pp = &(*pp)->next_join)
        if (*pp == t) { /* never sent: t exited first, or never issued work */
            *pp = t->next_join;
            break;
        }
    reply_slot *slot = t->join_wait;
    t->join_wait = NULL;
    t->joiner = 0;
    UNLOCK();
    if (slot) { /* answered at t's exit, which came before the real join returned */
        Hysim__Reply *r = await_reply(slot);
        if (r->error && r->error[0])
            print_daemon_error(r->error);
        hysim__reply__free_unpacked(r, NULL);
        free(slot);
    }
    t_joining = 0;
    hs_client_leave();
}

/* ---- sleeps (sleep.c) ---- */

/*
 * Blocks the calling thread until the host clock reads until_ns, in hysimd
 * (an UNTIL Wait), once the process has issued GPU work, where the thread
 * issued work or can start to: no other thread that issued work runs or
 * waits there, and every other thread that issued none is blocked (sleep.c
 * says why). HS_SLEEP_REAL otherwise: the caller sleeps in real time.
 * Inside an intercepted call.
 */
/* Whether the calling thread may wait in hysimd until a time (sleep.c says when). */
static int until_wait_ok_locked(void)
{
    return atomic_load(&g_state) == ST_READY && g_any_work &&
           (t_works || (g_threads <= g_work_parked && g_quiet_live - g_quiet_parked <= 1 && g_fresh == 0));
}

enum hs_sleep hs_client_sleep_until(uint64_t until_ns)
{
    uint64_t from = hs_clock_now();
    if (until_ns <= from)
        return HS_SLEEP_DONE;
    if (t_holds_lock || t_awaiting)
        return HS_SLEEP_REAL; /* a signal handler's sleep on a thread inside the core: it may hold its locks */
    LOCK();
    if (!until_wait_ok_locked()) {
        UNLOCK();
        return HS_SLEEP_REAL;
    }
    await_first_work_locked(until_ns - from);
    Hysim__Wait w = HYSIM__WAIT__INIT;
    w.cond = HYSIM__WAIT__COND__UNTIL;
    w.until_ns = until_ns;
    send_wait_locked(&w, NULL); /* an error was printed; the clock moved either way */
    UNLOCK();
    return HS_SLEEP_DONE;
}

/* ---- timed condition variable waits (host_sync.c) ---- */

/* A thread in a timed wait that hysimd times: the UNTIL Wait id, which a signal of key answers early. */
typedef struct timed_waiter {
    const void *key;
    uint64_t id;
    int woken;
    struct timed_waiter *next;
} timed_waiter;

static timed_waiter *g_timed; /* on their threads' stacks */
static _Atomic int g_ntimed;  /* how many: a signal looks at the list only when there are some */

/*
 * Waits in hysimd until the host clock reads until_ns (> now) or a Wake of
 * key comes first: 1 when the deadline came (done), 0 when woken. mutex
 * (when given) is let go, the Wait sent and the waiter listed under the
 * client lock, which a wake takes, so that a wake under mutex is never
 * missed; mutex is not taken again here.
 */
static int timed_wait_locked(const void *key, uint64_t until_ns, pthread_mutex_t *mutex)
{
    Hysim__Wait w = HYSIM__WAIT__INIT;
    w.cond = HYSIM__WAIT__COND__UNTIL;
    w.until_ns = until_ns;
    if (mutex && hs_sync_mutex_let_go(mutex)) /* before the Wait: this thread still runs */
        release_locked(mutex, 1);
    reply_slot slot;
    send_wait_begin_locked(&w, &slot);
    timed_waiter self = {key, w.id, 0, g_timed};
    g_timed = &self;
    atomic_fetch_add(&g_ntimed, 1);
    UNLOCK();
    Hysim__Reply *r = await_reply(&slot);
    LOCK();
    timed_waiter **pp = &g_timed;
    while (*pp != &self)
        pp = &(*pp)->next;
    *pp = self.next;
    atomic_fetch_sub(&g_ntimed, 1);
    Hysim__Reply *got;
    int done = 1;
    if (send_wait_end_locked(&w, r, &got) == cudaSuccess) {
        done = got->done; /* not done: a Wake came first */
        hysim__reply__free_unpacked(got, NULL);
    }
    return done;
}

/*
 * Enters the client core, the lock held, for a timed wait in hysimd: 1; 0
 * (nothing held) where hysimd cannot time the calling thread's wait.
 */
static int begin_timed_wait(void)
{
    if (t_holds_lock || t_awaiting)
        return 0;
    hs_client_enter();
    LOCK();
    if (until_wait_ok_locked())
        return 1;
    UNLOCK();
    hs_client_leave();
    return 0;
}

int hs_client_cond_timedwait(const void *key, pthread_mutex_t *mutex, uint64_t until_ns, int *rc)
{
    if (!begin_timed_wait())
        return 0;
    if (until_ns <= hs_clock_now()) { /* the deadline has passed on the host clock */
        UNLOCK();
        hs_client_leave();
        *rc = ETIMEDOUT;
        return 1;
    }
    await_first_work_locked(until_ns - hs_clock_now());
    int done = timed_wait_locked(key, until_ns, mutex);
    UNLOCK();
    hs_client_leave();
    hs_sync_mutex_lock(mutex);
    *rc = done ? ETIMEDOUT : 0;
    return 1;
}

int hs_client_sem_timedwait(const void *key, uint64_t until_ns, int (*take)(void *), void *arg, int *rc)
{
    if (!begin_timed_wait())
        return 0;
    if (until_ns > hs_clock_now())
        await_first_work_locked(until_ns - hs_clock_now()); /* before the first try: it lets the lock go */
    *rc = ETIMEDOUT;
    for (;;) { /* a post takes the lock to post and wake: tried and listed under it, none is missed */
        if (take(arg)) {
            *rc = 0;
            break;
        }
        if (until_ns <= hs_clock_now() || timed_wait_locked(key, until_ns, NULL)) { /* the deadline came */
            if (take(arg))                                                          /* posted at the deadline */
                *rc = 0;
            break;
        }
    }
    UNLOCK();
    hs_client_leave();
    return 1;
}

int hs_client_join_until(hs_thread *t, uint64_t until_ns, int *exited)
{
    if (t_holds_lock || t_awaiting)
        return 0;
    hs_client_enter();
    LOCK();
    /* just started: it may issue its first work at this host time, and only then can the join wait in
     * hysimd (the other way cannot time out in simulated time): up to HS_FIRST_WORK_GRACE_NS of real time */
    for (uint64_t waited = 0; t->fresh && t->born > g_fresh_expired && !t->exited && waited < HS_FIRST_WORK_GRACE_NS;
         waited += 1000000) {
        UNLOCK();
        hs_client_real_sleep_ns(1000000);
        LOCK();
    }
    /* t issued work: it counts as running until it exits, so its exit's Wake cannot come too late */
    int handled = t_works && t->worked && until_wait_ok_locked();
    if (handled) {
        if (!t->exited && until_ns > hs_clock_now())
            await_first_work_locked(until_ns - hs_clock_now()); /* lets the lock go: t may exit meanwhile */
        if (t->exited)
            *exited = 1;
        else
            *exited = until_ns > hs_clock_now() && !timed_wait_locked(t, until_ns, NULL);
    }
    UNLOCK();
    hs_client_leave();
    return handled;
}

/* Wakes up to max (0: all) timed waits on key, at the host clock's reading. */
static void wake_timed_locked(const void *key, unsigned max)
{
    unsigned n = 0;
    for (timed_waiter *t = g_timed; t && (max == 0 || n < max); t = t->next) {
        if (t->key != key || t->woken)
            continue;
        t->woken = 1;
        n++;
        flush_locked();
        Hysim__Wake k = HYSIM__WAKE__INIT;
        k.host_ns = hs_clock_now();
        k.id = t->id;
        Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
        m.msg_case = HYSIM__CLIENT_MSG__MSG_WAKE;
        m.wake = &k;
        send_locked(&m);
    }
}

void hs_client_wake_timed(const void *key, unsigned max)
{
    if (atomic_load(&g_ntimed) == 0)
        return;
    LOCK();
    wake_timed_locked(key, max);
    UNLOCK();
}

/* ---- threads blocked outside CUDA (host_sync.c, threads.c; the file comment says how) ---- */

/*
 * Tells hysimd the count when it differs from the one it holds, or that
 * every thread now blocks outside it; the caller runs (or blocks next). A
 * process back from outside joins first: the simulation may have passed it.
 */
static void tell_counted_locked(void)
{
    if (atomic_load(&g_state) != ST_READY)
        return;
    uint32_t n = counted_threads_locked();
    int outside = all_outside_locked();
    if (g_said_outside && !outside)
        join_locked();
    if ((n ? n : 1) != (g_said ? g_said : 1) || outside != g_said_outside)
        send_threads_locked(0);
}

static void count_parked_locked(const hs_parked *p, int delta)
{
    if (p->works) {
        g_work_parked += (uint32_t)delta;
        return;
    }
    g_quiet_parked += (uint32_t)delta;
    if (delta < 0) { /* it runs again and may issue its first work: as a start (await_first_work_locked) */
        g_quiet_starts++;
        g_start_grace_given = 0;
    }
}

static void unlist_locked(hs_parked *p)
{
    hs_parked **pp = &g_parked;
    while (*pp != p)
        pp = &(*pp)->next;
    *pp = p->next;
    p->listed = 0;
    atomic_fetch_sub(&g_nlisted, 1);
}

/*
 * Counts up to max (0: all) threads blocked on key as running again; returns
 * how many. A mutex's blocked thread sleeps on its own release, and is woken;
 * handover says the mutex is let go inside libc just after (its thread keeps
 * trying a while, hs_client_block_on_lock).
 */
static unsigned release_handover_locked(const void *key, unsigned max, int handover)
{
    unsigned n = 0;
    for (hs_parked *p = g_parked; p && (max == 0 || n < max); p = p->next)
        if (p->key == key && !p->released) {
            p->handover = handover;
            __atomic_store_n(&p->released, 1, __ATOMIC_RELEASE);
            if (p->sleeps)
                syscall(SYS_futex, &p->released, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
            count_parked_locked(p, -1);
            n++;
        }
    if (n)
        tell_counted_locked();
    return n;
}

static unsigned release_locked(const void *key, unsigned max) { return release_handover_locked(key, max, 0); }

/* Lists p as blocked (the lock held). */
static void list_locked(hs_parked *p)
{
    p->listed = 1;
    p->next = g_parked;
    g_parked = p;
    atomic_fetch_add(&g_nlisted, 1);
    count_parked_locked(p, 1);
    tell_counted_locked(); /* the simulation may pass this thread's clock now */
}

static void park_init(hs_parked *p, const void *key)
{
    memset(p, 0, sizeof *p);
    p->key = key;
    p->works = t_works;
    if (p->works)
        hs_client_enter(); /* the blocking call is an intercepted call: left in hs_client_unpark */
}

int hs_client_park(hs_parked *p, const void *key, unsigned release_at, int (*ready)(void *), void *arg)
{
    park_init(p, key);
    LOCK();
    int blocks = !ready || !ready(arg);
    if (blocks && release_at > 0) {
        unsigned waiting = 0;
        for (const hs_parked *q = g_parked; q; q = q->next)
            waiting += q->key == key && !q->released;
        if (waiting + 1 >= release_at) { /* the last to arrive */
            release_locked(key, 0);
            blocks = 0;
        }
    }
    if (blocks)
        list_locked(p);
    UNLOCK();
    return blocks;
}

int hs_client_park_quiet(hs_parked *p)
{
    if (t_works || t_holds_lock || t_awaiting || atomic_load(&g_state) != ST_READY)
        return 0;
    return hs_client_park(p, p, 0, NULL, NULL);
}

int hs_client_park_join(hs_parked *p, hs_thread *t)
{
    park_init(p, t);
    LOCK();
    int blocks = !t->leaving;
    if (blocks)
        list_locked(p);
    UNLOCK();
    return blocks;
}

void hs_client_thread_leaving(hs_thread *t)
{
    LOCK();
    t->leaving = 1;
    release_locked(t, 0);
    UNLOCK();
}

int hs_client_any_parked(void) { return atomic_load(&g_nlisted) > 0; }

unsigned hs_client_release(const void *key, unsigned max)
{
    if (t_holds_lock) /* a signal handler on a thread inside the core: the thread it wakes counts itself in */
        return 0;
    LOCK();
    unsigned n = release_locked(key, max);
    UNLOCK();
    return n;
}

int hs_client_park_handing(hs_parked *p, const void *key, const void *mutex)
{
    park_init(p, key);
    p->hands = mutex;
    p->hands_tid = (int)syscall(SYS_gettid);
    LOCK();
    release_handover_locked(mutex, 1, 1); /* while this thread runs */
    list_locked(p);
    UNLOCK();
    return 1;
}

int hs_client_release_and(const void *key, unsigned max, int (*post)(void *), void *arg)
{
    if (t_holds_lock) /* a signal handler on a thread inside the core: the thread it wakes counts itself in */
        return post(arg);
    LOCK();
    release_locked(key, max);
    int rc = post(arg);
    if (rc == 0 && atomic_load(&g_ntimed) > 0)
        wake_timed_locked(key, max); /* and as many timed waits on key (hs_client_sem_timedwait) */
    UNLOCK();
    return rc;
}

/* p runs again (the lock held): unlisted, counted in by its release or by taking another's. */
static void unpark_locked(hs_parked *p)
{
    if (p->listed) {
        if (!p->released) { /* woken without a release of its own: take another's, still blocked */
            hs_parked *q = g_parked;
            while (q && (q == p || q->key != p->key || !q->released))
                q = q->next;
            count_parked_locked(p, -1);
            if (q) {
                q->released = 0;
                count_parked_locked(q, 1);
            }
            tell_counted_locked(); /* none to take: it counts itself in (a signal's interruption) */
        }
        unlist_locked(p);
    }
}

void hs_client_unpark(hs_parked *p)
{
    LOCK();
    unpark_locked(p);
    UNLOCK();
    if (p->works)
        hs_client_leave();
}

int hs_client_io_block(hs_parked *p)
{
    if (t_holds_lock || t_awaiting || atomic_load(&g_state) != ST_READY || !g_any_work)
        return 0;
    if (!t_works && !hs_thread_self() && getpid() != (pid_t)syscall(SYS_gettid))
        return 0; /* a thread hysim does not count (the client core's own) */
    park_init(p, p);
    LOCK();
    g_nlisted_io++;
    list_locked(p);
    UNLOCK();
    return 1;
}

void hs_client_io_unblock(hs_parked *p)
{
    LOCK();
    g_nlisted_io--;
    if (!g_said_outside)
        join_locked(); /* the others may all have waited in hysimd, and the simulation passed this thread */
    unpark_locked(p);  /* joins if the whole process was outside */
    UNLOCK();
    if (p->works)
        hs_client_leave();
}

/*
 * How long a thread released by a handover (hs_client_park_handing)
 * keeps trying the mutex, real time: the holder lets it go inside libc just
 * after, in a condition variable's wait, and the released thread must not
 * count as blocked meanwhile. A thread that loses it to another blocks
 * listed again at once, and one that has not got it by then (its holder
 * kept from running that long, or holding it again after its wait) too:
 * the holder runs, and its unlock releases one again.
 */
#define HS_MUTEX_HANDOVER_NS 50000000
/*
 * How long a blocked thread sleeps at most before it tries the mutex again
 * (real time): a timed condition-variable wait that runs in real time
 * (timed_waits.c) lets its mutex go inside libc and wakes no one.
 */
#define HS_MUTEX_RECHECK_NS 10000000

/*
 * Waits until the mutex is free (1), or taken by another than holder or
 * HS_MUTEX_HANDOVER_NS have passed (0). It sleeps on the mutex's lock word
 * as libc's own lock does (0 free, 1 taken, 2 taken with sleepers): marked
 * 2, the word makes libc's unlock, which no wrapper sees, wake a sleeper.
 */
static int await_handover(int *word, const int *owner, int holder)
{
    uint64_t until = hs_clock_real_ns(CLOCK_MONOTONIC) + HS_MUTEX_HANDOVER_NS;
    for (;;) {
        int v = __atomic_load_n(word, __ATOMIC_ACQUIRE);
        if (v == 0)
            return 1;
        if (__atomic_load_n(owner, __ATOMIC_RELAXED) != holder || hs_clock_real_ns(CLOCK_MONOTONIC) >= until)
            return 0;
        if (v == 1 && !__atomic_compare_exchange_n(word, &v, 2, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            continue;                       /* it changed: look again */
        struct timespec nap = {0, 1000000}; /* and the owner again, now and then */
        syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 2, &nap, NULL, 0);
    }
}

/* Counts p, listed, as running (released 1) or blocked (0), and tells hysimd when that changes the count. */
static void set_released_locked(hs_parked *p, int released)
{
    if (p->released == released)
        return;
    p->released = released;
    count_parked_locked(p, released ? -1 : 1);
    tell_counted_locked();
}

/* Whether holder, a thread that holds the mutex key, is blocked in a wait in which libc lets it go. */
static int handed_over_locked(const void *key, int holder)
{
    for (const hs_parked *q = g_parked; q && holder; q = q->next)
        if (q->hands == key && q->hands_tid == holder)
            return 1;
    return 0;
}

int hs_client_block_on_lock(const void *key, pthread_mutex_t *mutex, int (*take)(void *), void *arg)
{
    if (t_holds_lock || t_awaiting) /* a signal handler on a thread inside the core: libc's wait, unlisted */
        return 0;
    int on_word = 0; /* slept on the mutex's word: may have taken a wake meant for a sleeper of libc's */
    hs_parked p;
    park_init(&p, key);
    p.sleeps = 1;
    LOCK();
    while (!take(arg)) {
        int holder = mutex ? __atomic_load_n(&mutex->__data.__owner, __ATOMIC_RELAXED) : 0;
        int handover = p.released && p.handover; /* libc lets it go just after: keep trying */
        p.handover = 0;
        if (!handover && mutex && handed_over_locked(key, holder)) { /* its holder lets it go inside libc */
            handover = 1;
            if (p.listed)
                set_released_locked(&p, 1);
        }
        if (!handover && !p.listed)
            list_locked(&p);
        else if (!handover)
            set_released_locked(&p, 0); /* lost it, if released: blocked again */
        UNLOCK();
        if (handover) {
            await_handover(&mutex->__data.__lock, &mutex->__data.__owner, holder);
            on_word = 1;
        } else {
            struct timespec nap = {0, HS_MUTEX_RECHECK_NS};
            while (!__atomic_load_n(&p.released, __ATOMIC_ACQUIRE) &&
                   syscall(SYS_futex, &p.released, FUTEX_WAIT_PRIVATE, 0, &nap, NULL, 0) == -1 && errno == EINTR) {}
        }
        LOCK();
    }
    unpark_locked(&p);
    UNLOCK();
    if (p.works)
        hs_client_leave();
    return 1 + on_word;
}

void hs_client_unpark_cancelled(void *p) { hs_client_unpark(p); }

/* ---- devices ---- */

int hs_client_get_device(void) { return t_device; }

static int valid_device(int dev) { return dev >= 0 && dev < g_info.device_count; }

/*
 * Contexts, as the driver API sees them: a device's primary context is set up
 * once the runtime makes the device current, allocates on it or gives it work
 * (as CUDA 12 and later do at cudaSetDevice or at the first call that needs a
 * context); each thread has a stack of current contexts, named here by their
 * devices, whose top is the runtime's current device. A runtime call that needs
 * a context when the stack is empty binds its device's primary context, as the
 * real runtime does (bench/real/data/driver_contexts_h100.txt).
 */
#define HS_CTX_DEPTH 16

static _Atomic unsigned char g_primary_active[HS_MAX_GPUS_PER_SERVER];
static __thread int16_t t_ctx[HS_CTX_DEPTH];
static __thread int t_ctx_depth;

/* Called for every op: stores only the first time, so threads issuing work do not keep writing the line. */
static void note_primary_active(int dev)
{
    if (dev >= 0 && dev < HS_MAX_GPUS_PER_SERVER && !atomic_load_explicit(&g_primary_active[dev], memory_order_relaxed))
        atomic_store_explicit(&g_primary_active[dev], 1, memory_order_relaxed);
}

/* A runtime call that needs a context: the current device's primary one, bound if none is current. */
static void bind_primary(void)
{
    if (!t_ctx_depth)
        t_ctx[t_ctx_depth++] = (int16_t)t_device;
    note_primary_active(t_device);
}

int hs_client_primary_active(int device)
{
    return device >= 0 && device < HS_MAX_GPUS_PER_SERVER &&
           atomic_load_explicit(&g_primary_active[device], memory_order_relaxed);
}

void hs_client_set_primary_active(int device, int active)
{
    if (device >= 0 && device < HS_MAX_GPUS_PER_SERVER)
        atomic_store_explicit(&g_primary_active[device], (unsigned char)(active != 0), memory_order_relaxed);
}

int hs_client_ctx_current(void) { return t_ctx_depth ? t_ctx[t_ctx_depth - 1] : -1; }

/* Makes device's context the top of the thread's stack: a new top (push), else in place of the old one. */
static cudaError_t ctx_make_top(int device, int push)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    if (!valid_device(device))
        return cudaErrorInvalidDevice;
    if (push && t_ctx_depth == HS_CTX_DEPTH)
        return cudaErrorMemoryAllocation;
    if (push || !t_ctx_depth)
        t_ctx_depth++;
    t_ctx[t_ctx_depth - 1] = (int16_t)device;
    t_device = device;
    note_primary_active(device);
    return cudaSuccess;
}

cudaError_t hs_client_set_device(int device) { return ctx_make_top(device, 0); }

cudaError_t hs_client_ctx_push(int device) { return ctx_make_top(device, 1); }

int hs_client_ctx_pop(void)
{
    if (!t_ctx_depth)
        return -1;
    int dev = t_ctx[--t_ctx_depth];
    if (t_ctx_depth)
        t_device = t_ctx[t_ctx_depth - 1];
    return dev;
}

cudaError_t hs_client_ctx_set(int device)
{
    if (device >= 0)
        return hs_client_set_device(device);
    if (t_ctx_depth && --t_ctx_depth) /* none: pops the top, if any */
        t_device = t_ctx[t_ctx_depth - 1];
    return cudaSuccess;
}

/* ---- streams ---- */

static void free_ptds(void *p) { free(p); }

static uint64_t ptds_locked(int dev)
{
    if (!t_ptds) {
        t_ptds = xcalloc((size_t)g_info.device_count, sizeof *t_ptds);
        pthread_setspecific(g_ptds_key, t_ptds);
    }
    if (!t_ptds[dev]) {
        t_ptds[dev] = g_next_stream++;
        pending_op *p = append_locked(dev, t_ptds[dev]);
        hysim__stream_create__init(&p->u.stream_create); /* blocking: syncs with the legacy stream */
        p->op.kind_case = HYSIM__OP__KIND_STREAM_CREATE;
        p->op.stream_create = &p->u.stream_create;
        commit_locked();
    }
    return t_ptds[dev];
}

/* Resolves a stream handle; NULL / legacy / per-thread mean those of device dflt. */
static cudaError_t resolve_stream_locked(cudaStream_t s, int dflt, int *dev, uint64_t *id)
{
    if (s == NULL || s == cudaStreamLegacy) {
        *dev = dflt;
        *id = 0;
    } else if (s == cudaStreamPerThread) {
        *dev = dflt;
        *id = ptds_locked(dflt);
    } else if (hs_ptrmap_get(&g_streams, (uintptr_t)s)) {
        const hs_stream *st = (const hs_stream *)s;
        *dev = st->dev;
        *id = st->id;
    } else {
        return cudaErrorInvalidResourceHandle;
    }
    return cudaSuccess;
}

cudaError_t hs_client_stream_create(unsigned int flags, int priority, cudaStream_t *out)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    hs_stream *s = xcalloc(1, sizeof *s);
    LOCK();
    s->id = g_next_stream++;
    s->dev = t_device;
    s->flags = flags;
    s->priority = priority;
    hs_ptrmap_put(&g_streams, (uintptr_t)s, 1);
    pending_op *p = append_locked(s->dev, s->id);
    hysim__stream_create__init(&p->u.stream_create);
    p->u.stream_create.non_blocking = (flags & cudaStreamNonBlocking) != 0;
    p->u.stream_create.priority = priority;
    p->op.kind_case = HYSIM__OP__KIND_STREAM_CREATE;
    p->op.stream_create = &p->u.stream_create;
    commit_locked();
    UNLOCK();
    *out = (cudaStream_t)s;
    return cudaSuccess;
}

cudaError_t hs_client_stream_destroy(cudaStream_t stream)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    LOCK();
    hs_stream *s = hs_ptrmap_del(&g_streams, (uintptr_t)stream) ? (hs_stream *)stream : NULL;
    if (s) {
        pending_op *p = append_locked(s->dev, s->id);
        hysim__stream_destroy__init(&p->u.stream_destroy);
        p->op.kind_case = HYSIM__OP__KIND_STREAM_DESTROY;
        p->op.stream_destroy = &p->u.stream_destroy;
        commit_locked();
    }
    UNLOCK();
    free(s);
    return s ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

/* A synchronize that found its work done costs its call (api_cost.h); one that blocked paid the wake-up. */
static void charge_sync(cudaError_t e)
{
    if (e == cudaSuccess && !t_wait_blocked)
        hs_client_charge_call(HS_CALL_SYNC);
}

cudaError_t hs_client_stream_synchronize(cudaStream_t stream)
{
    cudaError_t e = hs_client_start();
    if (e == cudaSuccess && CAPTURE_ON())
        e = capture_check(HS_CHECK_STREAM_SYNC, stream);
    if (e != cudaSuccess)
        return e;
    int dev;
    uint64_t id;
    LOCK();
    e = resolve_stream_locked(stream, t_device, &dev, &id);
    if (e == cudaSuccess)
        e = wait_locked(HYSIM__WAIT__COND__STREAM_IDLE, dev, id, 0, 0, NULL, 0, NULL);
    UNLOCK();
    charge_sync(e);
    return e;
}

cudaError_t hs_client_stream_query(cudaStream_t stream)
{
    cudaError_t e = hs_client_start();
    if (e == cudaSuccess && CAPTURE_ON())
        e = capture_check(HS_CHECK_STREAM_SYNC, stream);
    if (e != cudaSuccess)
        return e;
    int dev;
    uint64_t id;
    LOCK();
    e = resolve_stream_locked(stream, t_device, &dev, &id);
    if (e == cudaSuccess)
        e = query_locked(HYSIM__WAIT__COND__STREAM_IDLE, dev, id, 0);
    UNLOCK();
    return e;
}

/* A stream's process-wide id: its wire id x 1024 + its device (the legacy streams' wire id is 0 on every device). */
cudaError_t hs_client_stream_id(cudaStream_t stream, unsigned long long *out)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    int dev;
    uint64_t id;
    LOCK();
    e = resolve_stream_locked(stream, t_device, &dev, &id);
    UNLOCK();
    if (e == cudaSuccess)
        *out = (unsigned long long)id * 1024 + (unsigned long long)dev;
    return e;
}

cudaError_t hs_client_stream_info(cudaStream_t stream, int *dev, unsigned *flags, int *priority)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    LOCK();
    if (stream == NULL || stream == cudaStreamLegacy || stream == cudaStreamPerThread) {
        *dev = t_device;
        *flags = cudaStreamDefault;
        *priority = 0;
    } else if (hs_ptrmap_get(&g_streams, (uintptr_t)stream)) {
        const hs_stream *s = (const hs_stream *)stream;
        *dev = s->dev;
        *flags = s->flags;
        *priority = s->priority;
    } else {
        e = cudaErrorInvalidResourceHandle;
    }
    UNLOCK();
    return e;
}

static hs_event *event_locked(cudaEvent_t ev)
{
    return hs_ptrmap_get(&g_events, (uintptr_t)ev) ? (hs_event *)ev : NULL;
}

cudaError_t hs_client_stream_wait_event(cudaStream_t stream, cudaEvent_t event)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    hs_client_charge_call(HS_CALL_STREAM_WAIT_EVENT);
    if (CAPTURE_ON()) {
        hs_stream_op op = {.kind = HS_SOP_WAIT_EVENT, .stream = stream, .u.event = event};
        if (captured(&op, &e))
            return e;
    }
    int dev;
    uint64_t id;
    LOCK();
    hs_event *ev = event_locked(event);
    e = ev ? resolve_stream_locked(stream, t_device, &dev, &id) : cudaErrorInvalidResourceHandle;
    if (e == cudaSuccess) {
        pending_op *p = append_locked(dev, id);
        hysim__stream_wait_event__init(&p->u.wait_event);
        p->u.wait_event.event = ev->id;
        p->op.kind_case = HYSIM__OP__KIND_WAIT_EVENT;
        p->op.wait_event = &p->u.wait_event;
        commit_locked();
    }
    UNLOCK();
    return e;
}

/* ---- events ---- */

cudaError_t hs_client_event_create(unsigned int flags, cudaEvent_t *out)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    hs_event *ev = xcalloc(1, sizeof *ev);
    ev->flags = flags;
    LOCK();
    ev->id = g_next_event++;
    ev->dev = t_device;
    hs_ptrmap_put(&g_events, (uintptr_t)ev, 1);
    UNLOCK();
    *out = (cudaEvent_t)ev;
    return cudaSuccess;
}

cudaError_t hs_client_event_destroy(cudaEvent_t event)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    LOCK();
    uintptr_t had = hs_ptrmap_del(&g_events, (uintptr_t)event);
    UNLOCK();
    if (!had)
        return cudaErrorInvalidResourceHandle;
    free(event);
    return cudaSuccess;
}

cudaError_t hs_client_event_record(cudaEvent_t event, cudaStream_t stream)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    hs_client_charge_call(HS_CALL_EVENT_RECORD);
    if (CAPTURE_ON()) {
        hs_stream_op op = {.kind = HS_SOP_EVENT_RECORD, .stream = stream, .u.event = event};
        if (captured(&op, &e))
            return e;
    }
    int dev;
    uint64_t id;
    LOCK();
    hs_event *ev = event_locked(event);
    e = ev ? resolve_stream_locked(stream, t_device, &dev, &id) : cudaErrorInvalidResourceHandle;
    if (e == cudaSuccess) {
        ev->dev = dev;
        ev->recorded = 1;
        pending_op *p = append_locked(dev, id);
        hysim__event_record__init(&p->u.event_record);
        p->u.event_record.event = ev->id;
        p->op.kind_case = HYSIM__OP__KIND_EVENT_RECORD;
        p->op.event_record = &p->u.event_record;
        commit_locked();
    }
    UNLOCK();
    return e;
}

/* An event never recorded is complete, as in CUDA. */
cudaError_t hs_client_event_query(cudaEvent_t event)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    hs_client_charge_call(HS_CALL_EVENT_QUERY);
    LOCK();
    hs_event *ev = event_locked(event);
    if (!ev)
        e = cudaErrorInvalidResourceHandle;
    else if (ev->recorded)
        e = query_locked(HYSIM__WAIT__COND__EVENT_DONE, ev->dev, 0, ev->id);
    UNLOCK();
    return e;
}

cudaError_t hs_client_event_synchronize(cudaEvent_t event)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    LOCK();
    hs_event *ev = event_locked(event);
    t_wait_blocked = 0;
    if (!ev)
        e = cudaErrorInvalidResourceHandle;
    else if (ev->recorded)
        e = wait_locked(HYSIM__WAIT__COND__EVENT_DONE, ev->dev, 0, ev->id, 0, NULL, 0, NULL);
    UNLOCK();
    charge_sync(e);
    return e;
}

/*
 * Milliseconds of simulated time between two completed events: (stop − start)
 * picoseconds / 1e9. As CUDA: an event never recorded or created with
 * cudaEventDisableTiming is an invalid handle here; one not complete yet
 * gives cudaErrorNotReady.
 */
cudaError_t hs_client_event_elapsed(float *ms, cudaEvent_t start, cudaEvent_t stop)
{
    if (!ms)
        return cudaErrorInvalidValue;
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    LOCK();
    hs_event *a = event_locked(start), *b = event_locked(stop);
    if (!a || !b || !a->recorded || !b->recorded || ((a->flags | b->flags) & cudaEventDisableTiming)) {
        UNLOCK();
        return cudaErrorInvalidResourceHandle;
    }
    uint64_t ids[2] = {a->id, b->id};
    Hysim__Reply *r;
    e = wait_locked(HYSIM__WAIT__COND__EVENT_DONE, b->dev, 0, b->id, 1, ids, 2, &r);
    UNLOCK();
    if (e != cudaSuccess)
        return e;
    if (r->n_event_times != 2 || r->event_times[0]->event != ids[0] || r->event_times[1]->event != ids[1]) {
        fprintf(stderr, "hysim: hysimd's answer lacks the times of events %llu and %llu\n", (unsigned long long)ids[0],
                (unsigned long long)ids[1]);
        e = cudaErrorUnknown;
    } else if (!r->event_times[0]->done || !r->event_times[1]->done) {
        e = cudaErrorNotReady;
    } else {
        int64_t d = (int64_t)(r->event_times[1]->time_ps - r->event_times[0]->time_ps);
        *ms = (float)((double)d / 1e9);
    }
    hysim__reply__free_unpacked(r, NULL);
    return e;
}

cudaError_t hs_client_device_synchronize(void)
{
    cudaError_t e = hs_client_start();
    if (e == cudaSuccess && CAPTURE_ON())
        e = capture_check(HS_CHECK_UNSAFE, NULL);
    if (e != cudaSuccess)
        return e;
    LOCK();
    e = wait_locked(HYSIM__WAIT__COND__DEVICE_IDLE, t_device, 0, 0, 0, NULL, 0, NULL);
    UNLOCK();
    charge_sync(e);
    return e;
}

cudaError_t hs_client_device_reset(void)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    LOCK();
    e = wait_locked(HYSIM__WAIT__COND__DEVICE_IDLE, t_device, 0, 0, 0, NULL, 0, NULL);
    if (e == cudaSuccess)
        hs_devmem_reset(t_device);
    UNLOCK();
    return e;
}

/* ---- memory ---- */

cudaError_t hs_client_malloc_on(int device, size_t size, void **ptr)
{
    if (!ptr)
        return cudaErrorInvalidValue;
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    if (!valid_device(device))
        return cudaErrorInvalidDevice;
    if (size == 0) {
        *ptr = NULL;
        return cudaSuccess;
    }
    bind_primary();
    note_primary_active(device);
    LOCK();
    void *p = hs_devmem_alloc(device, size);
    UNLOCK();
    *ptr = p;
    return p ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t hs_client_malloc(size_t size, void **ptr)
{
    cudaError_t e = CAPTURE_ON() ? capture_check(HS_CHECK_UNSAFE, NULL) : cudaSuccess;
    return e == cudaSuccess ? hs_client_malloc_on(t_device, size, ptr) : e;
}

/* No Wait: hysimd does not model memory, so stream order changes no timing. */
cudaError_t hs_client_free_unordered(void *ptr)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    LOCK();
    int ok = hs_devmem_is_allocation(ptr) && hs_devmem_free(ptr) == 0;
    UNLOCK();
    return ok ? cudaSuccess : cudaErrorInvalidValue;
}

/* cudaFree waits for the pointer's device first, as CUDA's does. */
cudaError_t hs_client_free(void *ptr)
{
    cudaError_t e = hs_client_start();
    if (e == cudaSuccess && ptr && CAPTURE_ON())
        e = capture_check(HS_CHECK_UNSAFE, NULL);
    if (e != cudaSuccess || !ptr)
        return e;
    int dev = hs_devmem_device_of(ptr);
    if (dev < 0)
        return cudaErrorInvalidValue;
    LOCK();
    if (!hs_devmem_is_allocation(ptr))
        e = cudaErrorInvalidValue;
    else
        e = wait_locked(HYSIM__WAIT__COND__DEVICE_IDLE, dev, 0, 0, 0, NULL, 0, NULL);
    if (e == cudaSuccess)
        hs_devmem_free(ptr);
    UNLOCK();
    return e;
}

cudaError_t hs_client_mem_info_on(int dev, size_t *free_bytes, size_t *total_bytes, size_t *used_bytes)
{
    if (!free_bytes || !total_bytes)
        return cudaErrorInvalidValue;
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    if (dev < 0 || dev >= g_info.device_count)
        return cudaErrorInvalidDevice;
    uint64_t total = g_info.memory_bytes & ~(uint64_t)255;
    LOCK();
    uint64_t used = hs_devmem_used(dev);
    UNLOCK();
    *free_bytes = (size_t)(total - used);
    *total_bytes = (size_t)total;
    if (used_bytes)
        *used_bytes = (size_t)used;
    return cudaSuccess;
}

cudaError_t hs_client_mem_info(size_t *free_bytes, size_t *total_bytes)
{
    return hs_client_mem_info_on(t_device, free_bytes, total_bytes, NULL);
}

cudaError_t hs_client_host_alloc(size_t size, unsigned flags, void **ptr)
{
    if (!ptr)
        return cudaErrorInvalidValue;
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    if (size == 0) {
        *ptr = NULL;
        return cudaSuccess;
    }
    void *p;
    if (posix_memalign(&p, 4096, size) != 0) {
        *ptr = NULL;
        return cudaErrorMemoryAllocation;
    }
    LOCK();
    hs_ptrmap_put(&g_pinned, (uintptr_t)p, (uintptr_t)size);
    hs_ptrmap_put(&g_host_flags, (uintptr_t)p, flags);
    UNLOCK();
    *ptr = p;
    return cudaSuccess;
}

cudaError_t hs_client_host_free(void *ptr)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess || !ptr)
        return e;
    LOCK();
    uintptr_t had = hs_ptrmap_del(&g_pinned, (uintptr_t)ptr);
    hs_ptrmap_del(&g_host_flags, (uintptr_t)ptr);
    UNLOCK();
    if (!had)
        return cudaErrorInvalidValue;
    free(ptr);
    return cudaSuccess;
}

int hs_client_device_of(const void *ptr) { return hs_devmem_device_of(ptr); }

/* The start of a range of m (start → size) that overlaps [p, p + size), or 0. */
static uintptr_t range_overlapping(const hs_ptrmap *m, uintptr_t p, size_t size)
{
    for (size_t i = 0; i < m->cap; i++) {
        uintptr_t k = m->keys[i];
        if (k && (p >= k ? p - k < m->vals[i] : k - p < size))
            return k;
    }
    return 0;
}

/* The start of the pinned block or registered range overlapping [p, p + size), or 0 (g_lock held). A
 * range that starts at p is found by its key; one p points inside by a scan. */
static uintptr_t host_range_locked(uintptr_t p, size_t size)
{
    if (p && (hs_ptrmap_get(&g_pinned, p) || hs_ptrmap_get(&g_registered, p)))
        return p;
    uintptr_t k = range_overlapping(&g_pinned, p, size);
    return k ? k : range_overlapping(&g_registered, p, size);
}

void *hs_client_host_block(const void *ptr)
{
    LOCK();
    uintptr_t found = host_range_locked((uintptr_t)ptr, 1);
    UNLOCK();
    return (void *)found;
}

/* cudaHostRegister: the range counts as pinned (copies from it run at the copy engines' rate) until unregistered. */
cudaError_t hs_client_host_register(void *ptr, size_t size, unsigned flags)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    if (!ptr || size == 0)
        return cudaErrorInvalidValue;
    uintptr_t p = (uintptr_t)ptr;
    LOCK();
    if (host_range_locked(p, size))
        e = cudaErrorHostMemoryAlreadyRegistered;
    else {
        hs_ptrmap_put(&g_registered, p, (uintptr_t)size);
        hs_ptrmap_put(&g_host_flags, p, flags);
    }
    UNLOCK();
    return e;
}

cudaError_t hs_client_host_unregister(void *ptr)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    LOCK();
    uintptr_t had = ptr ? hs_ptrmap_del(&g_registered, (uintptr_t)ptr) : 0;
    if (had)
        hs_ptrmap_del(&g_host_flags, (uintptr_t)ptr);
    UNLOCK();
    return had ? cudaSuccess : cudaErrorHostMemoryNotRegistered;
}

cudaError_t hs_client_host_flags(const void *ptr, unsigned *flags)
{
    LOCK(); /* one lock: the block cannot go between finding it and reading its flags */
    uintptr_t block = host_range_locked((uintptr_t)ptr, 1);
    if (block)
        *flags = (unsigned)hs_ptrmap_get(&g_host_flags, block);
    UNLOCK();
    return block ? cudaSuccess : cudaErrorInvalidValue;
}

/* hs_client_copy in `rows` rows of count / rows bytes (1: contiguous); a 2D copy is not captured (cudart_pitched.c). */
static cudaError_t copy_rows(void *dst, const void *src, size_t count, size_t rows, int kind, cudaStream_t stream,
                             int synchronous, unsigned how)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    if (count == 0)
        return cudaSuccess;
    if (!dst || !src)
        return cudaErrorInvalidValue;
    int sd = hs_devmem_device_of(src), dd = hs_devmem_device_of(dst);
    int dir = kind;
    if (kind == cudaMemcpyDefault) {
        dir = sd < 0 ? (dd < 0 ? cudaMemcpyHostToHost : cudaMemcpyHostToDevice)
                     : (dd < 0 ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice);
    } else {
        /* A kind that contradicts the pointers is refused rather than faulting later. */
        int src_dev = dir == cudaMemcpyDeviceToHost || dir == cudaMemcpyDeviceToDevice;
        int dst_dev = dir == cudaMemcpyHostToDevice || dir == cudaMemcpyDeviceToDevice;
        if ((sd >= 0) != src_dev || (dd >= 0) != dst_dev)
            return cudaErrorInvalidValue;
    }
    if (!synchronous)
        hs_client_charge_call(HS_CALL_MEMCPY_ASYNC);
    /* Host memory that is neither pinned, registered nor managed is pageable: the driver
     * stages it through pinned buffers of its own at the host's rate, and cudaMemcpyAsync
     * returns only once its copy is done (bench/RESULTS.md, "Host copies"). */
    const void *host = dir == cudaMemcpyHostToDevice ? src : dir == cudaMemcpyDeviceToHost ? dst : NULL;
    int pageable =
        host && !(how & HS_COPY_AS_PINNED) && !hs_client_host_block(host) && !hs_client_managed_find(host, NULL);
    if (CAPTURE_ON() && synchronous) { /* may be forbidden during a capture */
        if ((e = capture_check(HS_CHECK_UNSAFE, stream)) != cudaSuccess)
            return e;
    } else if (CAPTURE_ON()) {
        hs_stream_op op = {.kind = HS_SOP_COPY, .stream = stream, .u.copy = {dst, src, count, kind}};
        if (captured(&op, &e))
            return e;
    }
    if (pageable && (how & HS_COPY_HOLD_PAGEABLE)) /* not when captured: a graph's launch never waits */
        synchronous = 1;
    static const Hysim__CopyKind wire[] = {
        [cudaMemcpyHostToHost] = HYSIM__COPY_KIND__H2H,
        [cudaMemcpyHostToDevice] = HYSIM__COPY_KIND__H2D,
        [cudaMemcpyDeviceToHost] = HYSIM__COPY_KIND__D2H,
        [cudaMemcpyDeviceToDevice] = HYSIM__COPY_KIND__D2D,
    };
    int dev;
    uint64_t id;
    LOCK();
    e = resolve_stream_locked(stream, t_device, &dev, &id);
    if (e == cudaSuccess) {
        pending_op *p = append_locked(dev, id);
        hysim__copy__init(&p->u.copy);
        p->u.copy.kind = wire[dir];
        p->u.copy.bytes = count;
        int other = dir != cudaMemcpyDeviceToDevice ? dev : sd != dev ? sd : dd;
        p->u.copy.peer_gpu = global_gpu(other);
        p->u.copy.from_peer = dir == cudaMemcpyDeviceToDevice && other == sd && sd != dd; /* peer → dev */
        p->u.copy.pageable = pageable != 0;
        p->u.copy.rows = rows;
        p->op.kind_case = HYSIM__OP__KIND_COPY;
        p->op.copy = &p->u.copy;
        commit_locked();
        if (synchronous && dir != cudaMemcpyDeviceToDevice)
            e = wait_locked(HYSIM__WAIT__COND__STREAM_IDLE, dev, id, 0, 0, NULL, 0, NULL);
    }
    UNLOCK();
    if (e != cudaSuccess)
        return e;
    /* Device memory keeps what copies put there, small ones only (values.h). */
    if (dir == cudaMemcpyHostToDevice)
        rows == 1 ? hs_values_write((uintptr_t)dst, src, count) : hs_values_forget((uintptr_t)dst, count);
    else if (dir == cudaMemcpyDeviceToDevice)
        rows == 1 ? hs_values_copy((uintptr_t)dst, (uintptr_t)src, count) : hs_values_forget((uintptr_t)dst, count);
    if (!(how & HS_COPY_WRITE_HOST))
        return e;
    if (dir == cudaMemcpyHostToHost)
        memmove(dst, src, count);
    else if (dir == cudaMemcpyDeviceToHost)
        hs_values_read(dst, (uintptr_t)src, count); /* zeros but for what copies and collectives put there */
    return cudaSuccess;
}

cudaError_t hs_client_copy(void *dst, const void *src, size_t count, int kind, cudaStream_t stream, int synchronous,
                           unsigned how)
{
    return copy_rows(dst, src, count, 1, kind, stream, synchronous, how);
}

cudaError_t hs_client_copy_2d(void *dst, const void *src, size_t count, size_t rows, int kind, cudaStream_t stream,
                              int synchronous, unsigned how)
{
    if (rows == 0 || count % rows)
        return cudaErrorInvalidValue;
    return copy_rows(dst, src, count, rows, kind, stream, synchronous, how & ~HS_COPY_WRITE_HOST);
}

cudaError_t hs_client_memcpy(void *dst, const void *src, size_t count, int kind, cudaStream_t stream, int synchronous)
{
    return hs_client_copy(dst, src, count, kind, stream, synchronous, HS_COPY_WRITE_HOST | HS_COPY_HOLD_PAGEABLE);
}

cudaError_t hs_client_memset(void *ptr, size_t count, cudaStream_t stream)
{
    return hs_client_memset_2d(ptr, count, 1, stream);
}

cudaError_t hs_client_memset_2d(void *ptr, size_t count, size_t rows, cudaStream_t stream)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess || count == 0)
        return e;
    if (rows == 0 || count % rows)
        return cudaErrorInvalidValue;
    if (hs_devmem_device_of(ptr) < 0)
        return cudaErrorInvalidValue;
    hs_client_charge_call(HS_CALL_MEMSET);
    if (CAPTURE_ON()) {
        hs_stream_op op = {.kind = HS_SOP_MEMSET, .stream = stream, .u.memset = {ptr, count, rows}};
        if (captured(&op, &e))
            return e;
    }
    int dev;
    uint64_t id;
    LOCK();
    e = resolve_stream_locked(stream, t_device, &dev, &id);
    if (e == cudaSuccess) {
        pending_op *p = append_locked(dev, id);
        hysim__memset__init(&p->u.memset);
        p->u.memset.bytes = count;
        p->u.memset.rows = rows;
        p->op.kind_case = HYSIM__OP__KIND_MEMSET;
        p->op.memset = &p->u.memset;
        commit_locked();
    }
    UNLOCK();
    if (e == cudaSuccess)
        hs_values_forget((uintptr_t)ptr, count); /* zeros; cudaMemset then keeps its value (hs_rt_memset) */
    return e;
}

/* ---- kernels ---- */

static void free_kernel(hs_kernel *k)
{
    free(k->name);
    free(k);
}

void hs_client_kernel_register(const void *module, const void *host_fun, const char *device_name)
{
    hs_kernel *k = xcalloc(1, sizeof *k);
    k->module = module;
    k->host_fun = host_fun;
    k->name = strdup(device_name ? device_name : "");
    if (!k->name) {
        fprintf(stderr, "hysim: out of host memory\n");
        abort();
    }
    LOCK();
    hs_kernel *old = (hs_kernel *)hs_ptrmap_get(&g_kernels, (uintptr_t)host_fun);
    if (old) {
        if (atomic_load(&g_state) == ST_READY)
            flush_locked(); /* pending ops may name it */
        hs_ptrmap_del(&g_kernel_handles, (uintptr_t)old);
        free_kernel(old);
    }
    hs_ptrmap_put(&g_kernels, (uintptr_t)host_fun, (uintptr_t)k);
    hs_ptrmap_put(&g_kernel_handles, (uintptr_t)k, 1);
    UNLOCK();
}

void hs_client_module_unregister(const void *module)
{
    LOCK();
    if (atomic_load(&g_state) == ST_READY)
        flush_locked(); /* pending ops may name its kernels */
    size_t n = 0;
    hs_kernel **gone = malloc((g_kernels.len + 1) * sizeof *gone);
    for (size_t i = 0; gone && i < g_kernels.cap; i++) {
        hs_kernel *k = (hs_kernel *)g_kernels.vals[i];
        if (g_kernels.keys[i] && k->module == module)
            gone[n++] = k;
    }
    for (size_t i = 0; i < n; i++) {
        hs_ptrmap_del(&g_kernels, (uintptr_t)gone[i]->host_fun);
        hs_ptrmap_del(&g_kernel_handles, (uintptr_t)gone[i]);
        free_kernel(gone[i]);
    }
    UNLOCK();
    free(gone);
}

void *hs_client_kernel_find(const void *host_fun)
{
    LOCK();
    void *k = (void *)hs_ptrmap_get(&g_kernels, (uintptr_t)host_fun);
    UNLOCK();
    return k;
}

const char *hs_client_kernel_name(const void *host_fun)
{
    LOCK();
    const hs_kernel *k = (const hs_kernel *)hs_ptrmap_get(&g_kernels, (uintptr_t)host_fun);
    const char *name = k ? k->name : NULL; /* kept until its module is unregistered */
    UNLOCK();
    return name;
}

void hs_client_graph_launch(int on) { t_graph_launch = on; }

cudaError_t hs_client_launch(void *kernel, const unsigned grid[3], const unsigned block[3], size_t shared_bytes,
                             cudaStream_t stream)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    /* Hopper's launch limits. */
    uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
    if (!grid[0] || !grid[1] || !grid[2] || grid[0] > 0x7fffffffu || grid[1] > 65535 || grid[2] > 65535 || !threads ||
        block[0] > 1024 || block[1] > 1024 || block[2] > 64 || threads > 1024)
        return cudaErrorInvalidConfiguration;
    hs_client_charge_call(HS_CALL_KERNEL_LAUNCH);
    if (CAPTURE_ON()) {
        hs_stream_op op = {
            .kind = HS_SOP_KERNEL,
            .stream = stream,
            .u.kernel = {kernel, {grid[0], grid[1], grid[2]}, {block[0], block[1], block[2]}, shared_bytes}};
        if (captured(&op, &e))
            return e;
    }
    int dev;
    uint64_t id;
    LOCK();
    const hs_kernel *k = hs_ptrmap_get(&g_kernel_handles, (uintptr_t)kernel) ? kernel : NULL;
    e = k ? resolve_stream_locked(stream, t_device, &dev, &id) : cudaErrorInvalidDeviceFunction;
    if (e == cudaSuccess) {
        pending_op *p = append_locked(dev, id);
        Hysim__Kernel *kk = &p->u.kernel;
        hysim__kernel__init(kk);
        kk->name = k->name;
        kk->grid_x = grid[0];
        kk->grid_y = grid[1];
        kk->grid_z = grid[2];
        kk->block_x = block[0];
        kk->block_y = block[1];
        kk->block_z = block[2];
        kk->shared_bytes = shared_bytes;
        kk->graph_node = t_graph_launch != 0;
        p->op.kind_case = HYSIM__OP__KIND_KERNEL;
        p->op.kernel = kk;
        commit_locked();
        g_kernels_launched++;
        hs_values_kernel_launched();
    }
    UNLOCK();
    return e;
}

/*
 * A kernel a library launches, named by it (a string that outlives the
 * process's ops), on a 1 x 1 x 1 grid: a cuBLAS GEMM (g: its shape, for the
 * roofline), a cuRAND generation (r), or neither.
 */
static cudaError_t library_kernel(const char *name, const hs_gemm_call *g, const hs_random_generation *r,
                                  cudaStream_t stream)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    if (CAPTURE_ON()) {
        hs_stream_op op = {.kind = g ? HS_SOP_GEMM : HS_SOP_LIBRARY, .stream = stream};
        if (g)
            op.u.gemm = (__typeof__(op.u.gemm)){name, *g};
        else
            op.u.library = (__typeof__(op.u.library)){name, r != NULL, r ? *r : (hs_random_generation){0}};
        if (captured(&op, &e))
            return e;
    }
    int dev;
    uint64_t id;
    LOCK();
    e = resolve_stream_locked(stream, t_device, &dev, &id);
    if (e == cudaSuccess) {
        pending_op *p = append_locked(dev, id);
        Hysim__Kernel *kk = &p->u.gemm.kernel;
        hysim__kernel__init(kk);
        kk->name = (char *)name;
        kk->grid_x = kk->grid_y = kk->grid_z = 1;
        kk->block_x = kk->block_y = kk->block_z = 1;
        if (r) {
            Hysim__RandomGeneration *rr = &p->u.gemm.random;
            hysim__random_generation__init(rr);
            rr->generator = (Hysim__RngGenerator)r->generator;
            rr->output = (Hysim__RngOutput)r->output;
            rr->count = r->count;
            rr->first = r->first != 0;
            kk->random = rr;
        }
        if (g) {
            Hysim__Gemm *gg = &p->u.gemm.gemm;
            hysim__gemm__init(gg);
            gg->m = g->m;
            gg->n = g->n;
            gg->k = g->k;
            gg->batch = g->batch;
            gg->dtype = (Hysim__GemmDtype)g->dtype;
            gg->lda = g->lda;
            gg->ldb = g->ldb;
            gg->ldc = g->ldc;
            kk->gemm = gg;
        }
        kk->graph_node = t_graph_launch != 0;
        p->op.kind_case = HYSIM__OP__KIND_KERNEL;
        p->op.kernel = kk;
        commit_locked();
        g_kernels_launched++;
        hs_values_kernel_launched();
    }
    UNLOCK();
    return e;
}

cudaError_t hs_client_random_kernel(const char *name, const hs_random_generation *r, cudaStream_t stream)
{
    return library_kernel(name, NULL, r, stream);
}

cudaError_t hs_client_library_kernel(const char *name, cudaStream_t stream)
{
    return library_kernel(name, NULL, NULL, stream);
}

cudaError_t hs_client_gemm(const char *name, const hs_gemm_call *g, cudaStream_t stream)
{
    return library_kernel(name, g, NULL, stream);
}

/* ---- NCCL ---- */

cudaError_t hs_client_comm_init(uint64_t comm_key, int rank, int nranks, int device)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    if (!valid_device(device))
        return cudaErrorInvalidDevice;
    LOCK();
    pending_op *p = append_locked(device, 0);
    hysim__comm_init__init(&p->u.comm_init);
    p->u.comm_init.comm_key = comm_key;
    p->u.comm_init.rank = (uint32_t)rank;
    p->u.comm_init.nranks = (uint32_t)nranks;
    p->op.kind_case = HYSIM__OP__KIND_COMM_INIT;
    p->op.comm_init = &p->u.comm_init;
    commit_locked();
    flush_locked(); /* other processes may ask hysimd whether every rank has joined (hs_client_comm_local_ranks) */
    UNLOCK();
    return cudaSuccess;
}

cudaError_t hs_client_comm_local_ranks(uint64_t parent_key, int parent_nranks, int *complete, int *mine)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    LOCK();
    flush_locked();
    Hysim__CommSplit cs = HYSIM__COMM_SPLIT__INIT; /* no calls: a question, answered at once */
    cs.host_ns = hs_clock_now();
    cs.parent_key = parent_key;
    cs.parent_nranks = (uint32_t)parent_nranks;
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_COMM_SPLIT;
    m.comm_split = &cs;
    reply_slot slot;
    expect_reply_locked(&slot, 0);
    send_locked(&m);
    Hysim__Reply *r = await_reply(&slot);
    UNLOCK();
    if (r->error && r->error[0]) {
        print_daemon_error(r->error);
        e = cudaErrorUnknown;
    }
    *complete = r->done;
    *mine = (int)r->n_split;
    hysim__reply__free_unpacked(r, NULL);
    return e;
}

cudaError_t hs_client_comm_split(uint64_t parent_key, int parent_nranks, uint64_t gen, size_t n,
                                 const hs_split_call *calls, hs_split_result *out)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    Hysim__SplitCall *sc = xcalloc(n, sizeof *sc);
    Hysim__SplitCall **ptrs = xcalloc(n, sizeof *ptrs);
    for (size_t i = 0; i < n; i++) {
        hysim__split_call__init(&sc[i]);
        sc[i].rank = (uint32_t)calls[i].rank;
        sc[i].color = calls[i].color;
        sc[i].key = calls[i].key;
        ptrs[i] = &sc[i];
    }
    LOCK();
    flush_locked();
    Hysim__CommSplit cs = HYSIM__COMM_SPLIT__INIT;
    cs.host_ns = hs_clock_now();
    cs.parent_key = parent_key;
    cs.parent_nranks = (uint32_t)parent_nranks;
    cs.gen = gen;
    cs.n_calls = n;
    cs.calls = ptrs;
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_COMM_SPLIT;
    m.comm_split = &cs;
    reply_slot slot;
    expect_reply_locked(&slot, 0);
    send_locked(&m); /* answered once every rank of the parent, in every process, has called */
    Hysim__Reply *r = await_reply(&slot);
    UNLOCK();
    free(ptrs);
    free(sc);
    if (r->error && r->error[0]) {
        print_daemon_error(r->error);
        e = cudaErrorUnknown;
    } else if (r->n_split != n) {
        fprintf(stderr, "hysim: hysimd answered a split of %zu ranks with %zu results\n", n, r->n_split);
        e = cudaErrorUnknown;
    }
    for (size_t i = 0; e == cudaSuccess && i < n; i++)
        out[i] = (hs_split_result){r->split[i]->none, r->split[i]->comm_key, (int)r->split[i]->rank,
                                   (int)r->split[i]->nranks};
    hysim__reply__free_unpacked(r, NULL);
    return e;
}

cudaError_t hs_client_comm_destroy(uint64_t comm_key, int rank, int device)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    if (!valid_device(device))
        return cudaErrorInvalidDevice;
    LOCK();
    pending_op *p = append_locked(device, 0);
    hysim__comm_destroy__init(&p->u.comm_destroy);
    p->u.comm_destroy.comm_key = comm_key;
    p->u.comm_destroy.rank = (uint32_t)rank;
    p->op.kind_case = HYSIM__OP__KIND_COMM_DESTROY;
    p->op.comm_destroy = &p->u.comm_destroy;
    commit_locked();
    UNLOCK();
    return cudaSuccess;
}

cudaError_t hs_client_collective(uint64_t comm_key, int rank, int device, uint64_t seq, enum hs_coll_kind kind,
                                 uint64_t bytes, int root, uint64_t group, uint32_t algo, uint32_t proto,
                                 cudaStream_t stream)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    if (!valid_device(device))
        return cudaErrorInvalidDevice;
    if (CAPTURE_ON()) { /* a capture takes it, or renumbers it after the graph launches' collectives */
        hs_stream_op op = {.kind = HS_SOP_COLLECTIVE,
                           .stream = stream,
                           .u.coll = {comm_key, seq, bytes, group, rank, device, root, kind, algo, proto}};
        if (captured(&op, &e))
            return e;
        seq = op.u.coll.seq;
    }
    int dev;
    uint64_t id;
    LOCK();
    e = resolve_stream_locked(stream, device, &dev, &id);
    if (e == cudaSuccess && dev != device)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess) {
        pending_op *p = append_locked(device, id);
        Hysim__Collective *c = &p->u.collective;
        hysim__collective__init(c);
        c->comm_key = comm_key;
        c->rank = (uint32_t)rank;
        c->seq = seq;
        c->kind = (Hysim__CollKind)kind;
        c->bytes = bytes;
        c->root = root;
        c->group = group;
        c->algo = algo;
        c->proto = proto;
        p->op.kind_case = HYSIM__OP__KIND_COLLECTIVE;
        p->op.collective = c;
        commit_locked();
    }
    UNLOCK();
    return e;
}

/* ---- process life ---- */

static void atfork_prepare(void)
{
    LOCK();
    pthread_mutex_lock(&g_reply_lock);
}
static void atfork_parent(void)
{
    pthread_mutex_unlock(&g_reply_lock);
    UNLOCK();
}

/* The child must not speak on its parent's connection; like real CUDA, it cannot use the GPUs its parent initialised. */
static void atfork_child(void)
{
    if (atomic_load(&g_state) == ST_READY) {
        close(g_fd);
        g_fd = -1;
        g_nops = 0;
        atomic_store(&g_state, ST_FORKED);
    }
    g_slots = NULL;  /* the parent's waiting threads are not the child's */
    g_parked = NULL; /* nor its blocked ones: the child's one thread runs */
    atomic_store(&g_nlisted, 0);
    g_quiet_parked = g_work_parked = 0;
    g_quiet_live = t_works ? 0 : 1;
    g_reader_busy = 0;
    pthread_mutex_unlock(&g_reply_lock);
    UNLOCK();
}

__attribute__((constructor)) static void client_init(void)
{
    pthread_key_create(&g_ptds_key, free_ptds);
    pthread_key_create(&g_works_key, thread_left);
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/*
 * Runs after the program's atexit handlers and static destructors (and
 * after the libraries that depend on this one): sends what is pending and
 * Bye. A thread still inside a CUDA call holds the lock; rather than hang at
 * exit, Bye is then left out (hysimd sees the connection close).
 */
__attribute__((destructor)) static void client_fini(void)
{
    atomic_store(&g_leaving, 1); /* exiting: whatever hysimd does now, the watcher keeps quiet */
    int locked = 0;
    for (int i = 0; i < 5000 && !(locked = pthread_mutex_trylock(&g_lock) == 0); i++)
        hs_client_real_sleep_ns(1000000);
    if (!locked)
        return;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &t_lock_cancel); /* as lock_client: UNLOCK restores it */
    pthread_mutex_lock(&g_reply_lock);
    int waiting = g_slots != NULL; /* a thread still blocked in a Wait: as if it held the lock */
    pthread_mutex_unlock(&g_reply_lock);
    if (!waiting && atomic_load(&g_state) == ST_READY) {
        flush_locked();
        uint64_t peaks[hs_devmem_ndevices() + 1];
        Hysim__Bye bye = HYSIM__BYE__INIT;
        bye.host_ns = hs_clock_now();
        bye.n_peak_memory_bytes = (size_t)hs_devmem_ndevices();
        for (size_t i = 0; i < bye.n_peak_memory_bytes; i++)
            peaks[i] = hs_devmem_peak((int)i);
        bye.peak_memory_bytes = peaks;
        bye.kernels_launched = g_kernels_launched;
        Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
        m.msg_case = HYSIM__CLIENT_MSG__MSG_BYE;
        m.bye = &bye;
        send_locked(&m); /* g_leaving is set: hysimd closes its end once it has Bye */
        close(g_fd);
        g_fd = -1;
        atomic_store(&g_state, ST_CLOSED);
    }
    UNLOCK();
}
