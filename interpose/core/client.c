/*
 * The client core's connection to hysimd (Register, Setup, Join, lost
 * connections) and the process's life (fork, exit, Bye); the shared state
 * is in client_internal.h, the other jobs in the files beside this one.
 * How the core batches ops, answers Waits and counts threads:
 * docs/client.md.
 */
#include "client_internal.h"
#include "values.h"
#include "job_placement.h"

/* A pending op with room for its one sub-message (pointers stay valid: fixed array). */

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
_Atomic int g_state = ST_IDLE;
static int g_fd = -1;
static char g_endpoint[512];
hs_gpu_info g_info;

pending_op g_ops[HS_BATCH_MAX];
Hysim__Op *g_op_ptrs[HS_BATCH_MAX];
size_t g_nops;

uint64_t g_next_stream = 1; /* 0 is every GPU's legacy default stream */
uint64_t g_next_event = 1;
uint64_t g_kernels_launched;
uint64_t g_issued; /* ops and messages the process issued: one more each (a spinning query sees none) */

uint64_t hs_client_issued(void) { return __atomic_load_n(&g_issued, __ATOMIC_RELAXED); }

hs_ptrmap g_streams;        /* hs_stream * → 1 */
hs_ptrmap g_events;         /* hs_event * → 1 */
hs_ptrmap g_kernels;        /* host stub → hs_kernel * */
hs_ptrmap g_kernel_handles; /* hs_kernel * → 1 */
hs_ptrmap g_pinned;         /* host block → size */
hs_ptrmap g_registered;     /* cudaHostRegister'ed range → size */
hs_ptrmap g_host_flags;     /* start of a pinned block or registered range → its flags (cudaHostGetFlags) */

__thread int t_device;
__thread int t_works;            /* this thread has issued work (an op or a Wait) */
int g_any_work;                  /* some thread of the process has (sleeps are real until then) */
__thread int t_joining;          /* this thread blocks in a pthread_join hysimd knows of */
uint32_t g_fresh;                /* live threads that a work thread created, which have issued no work, not expired */
uint64_t g_fresh_expired;        /* fresh threads born up to this one no longer hold joins (expire_fresh_locked) */
uint64_t g_quiet_starts;         /* threads started, and threads that issued no work released (count_parked_locked) */
uint64_t g_quiet_starts_awaited; /* of those, the ones Waits gave time to issue first work (await_first_work_locked) */
uint64_t g_start_grace_given;    /* real time (ns) Waits gave the starts since then */
hs_thread *g_joins;              /* threads a work thread joins, the join's Wait not sent yet */
uint32_t g_threads;              /* threads that have issued work and not exited */
int g_threads_said;              /* a Threads message went out: keep hysimd's count exact */
uint32_t g_said;                 /* the count hysimd holds, as last sent (0 reads as 1) */
int g_said_outside;              /* the last Threads said every thread blocks outside hysimd */
uint32_t g_nlisted_io;           /* threads blocked in I/O (hs_client_io_block) */
uint32_t g_quiet_live = 1;       /* threads that issued no work: the main thread, each one threads.c tracks */
uint32_t g_quiet_parked;         /* of those, blocked and not released */
uint32_t g_work_parked;          /* threads that issued work, blocked and not released */
uint32_t g_spin_outside;         /* threads spinning outside hysimd (hs_client_spin_outside) */
uint32_t g_spin_works;           /* ... of which threads that issued work */
hs_parked *g_parked;             /* every listed blocked thread, released or not */
_Atomic int g_nlisted;           /* how many are listed */
pthread_key_t g_works_key;       /* its destructor counts the thread out */
__thread uint64_t *t_ptds;       /* per-thread default stream id per device, 0 = none yet */
__thread int t_graph_launch;     /* this thread issues a CUDA graph's nodes (hs_client_graph_launch) */
__thread int t_wait_blocked;     /* this thread's last Wait found its work not done (wait_locked) */
pthread_key_t g_ptds_key;

__thread int t_holds_lock;         /* a signal handler's sem_post must not take it again (hs_client_release_and) */
static __thread int t_lock_cancel; /* the cancel state lock_client found, restored by unlock_client */
__thread int t_awaiting;           /* in await_reply (a signal handler's sleep must not wait there again) */

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
void lock_client(void)
{
    int old = PTHREAD_CANCEL_ENABLE;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    pthread_mutex_lock(&g_lock);
    t_lock_cancel = old;
    t_holds_lock = 1;
}
void unlock_client(void)
{
    int old = t_lock_cancel;
    t_holds_lock = 0;
    pthread_mutex_unlock(&g_lock);
    pthread_setcancelstate(old, NULL);
}

/*
 * Stream capture (CUDA graphs) lives in libcudart.so.13 (cudart_capture.c),
 * which installs these hooks when a program first captures; until then a
 * stream op costs one relaxed load more. The hooks are called without the
 * lock: a graph launch issues its nodes through the calls here.
 */
const hs_capture_hooks *_Atomic g_capture;

void hs_client_set_capture_hooks(const hs_capture_hooks *hooks)
{
    atomic_store_explicit(&g_capture, hooks, memory_order_release);
}

/* 1 when a capture took the op, *e being the call's result. */
int captured(hs_stream_op *op, cudaError_t *e)
{
    const hs_capture_hooks *h = atomic_load_explicit(&g_capture, memory_order_acquire);
    return h && h->divert(op, e);
}

cudaError_t capture_check(enum hs_capture_check what, cudaStream_t stream)
{
    const hs_capture_hooks *h = atomic_load_explicit(&g_capture, memory_order_acquire);
    return h ? h->check(what, stream) : cudaSuccess;
}

void *xcalloc(size_t n, size_t size)
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

/* hysim run's pid (HYSIM_RUN_PID), or 0 where it means nothing (a container, or no such variable). */
static long run_pid(void)
{
    static _Atomic long cached = -1;
    long pid = atomic_load_explicit(&cached, memory_order_relaxed);
    if (pid >= 0)
        return pid;
    const char *v = getenv("HYSIM_RUN_PID"), *launch = getenv("HYSIM_LAUNCH_PID");
    char *end = NULL;
    pid = v && *v && !(launch && *launch) ? strtol(v, &end, 10) : 0;
    if (!end || *end || pid <= 1)
        pid = 0;
    atomic_store_explicit(&cached, pid, memory_order_relaxed);
    return pid;
}

void hs_client_check_run(void)
{
    if (atomic_load_explicit(&g_state, memory_order_relaxed) != ST_IDLE)
        return; /* a registered process learns of the run's end from its connection */
    static _Atomic uint64_t next_ns;
    uint64_t now = hs_clock_real_ns(CLOCK_MONOTONIC_COARSE);
    uint64_t due = atomic_load_explicit(&next_ns, memory_order_relaxed);
    if (now < due || !atomic_compare_exchange_strong(&next_ns, &due, now + HS_RUN_CHECK_NS))
        return;
    long pid = run_pid();
    int saved = errno;
    if (pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH) {
        fprintf(stderr,
                "hysim: %s (pid %d) never registered with hysimd, and its run is over (hysim, pid %ld, is gone): "
                "exiting\n",
                program_invocation_short_name, (int)getpid(), pid);
        _exit(1);
    }
    errno = saved;
}

void send_locked(const Hysim__ClientMsg *m)
{
    __atomic_fetch_add(&g_issued, 1, __ATOMIC_RELAXED);
    char err[256];
    if (hs_frame_send_client_msg(g_fd, m, err, sizeof err) != 0 && !atomic_load(&g_leaving))
        lost(err); /* when exiting (client_fini's Bye), hysimd's end may be gone already: nothing is lost */
}

static Hysim__Reply *read_reply(void)
{
    char err[256];
    uint8_t *body;
    size_t len;
    int rc = hs_frame_read_blocking(g_fd, &body, &len, err, sizeof err);
    if (rc != HS_FRAME_OK && atomic_load(&g_leaving))
        for (;;)
            pause(); /* a thread still in a Wait while the process exits: hysimd closed after Bye */
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

static pthread_mutex_t g_reply_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_reply_cond = PTHREAD_COND_INITIALIZER;
static reply_slot *g_slots;
static int g_reader_busy; /* a thread reads the socket: the others sleep on g_reply_cond */
uint64_t g_next_wait_id = 1;

/* Called with g_lock held, before the request is sent. */
void expect_reply_locked(reply_slot *slot, uint64_t id)
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
Hysim__Reply *await_reply(reply_slot *slot)
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

void flush_locked(void)
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
void print_daemon_error(const char *error)
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
    unsigned long rank = 0, world = 0; /* torchrun's, torch.multiprocessing users', MPI's, Slurm's */
    if (hs_job_rank(&rank, &world) && world <= UINT32_MAX) {
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
        hs_kv_setup(s->routing == HS_ROUTING_ZIPF ? HS_KV_ROUTING_ZIPF : HS_KV_ROUTING_BALANCED, s->routing_zipf_s,
                    s->seed);
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
    g_quiet_parked = g_work_parked = g_spin_outside = g_spin_works = 0;
    t_spin_outside = 0;
    g_quiet_live = t_works ? 0 : 1;
    g_reader_busy = 0;
    pthread_mutex_unlock(&g_reply_lock);
    UNLOCK();
}

__attribute__((constructor)) static void client_init(void)
{
    hs_values_set_fetch(hs_client_coll_values); /* small collectives' exact bytes, when first read */
    pthread_key_create(&g_ptds_key, free_ptds);
    pthread_key_create(&g_works_key, thread_left);
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/*
 * Runs after the program's atexit handlers and static destructors (and
 * after the libraries that depend on this one): sends what is pending and
 * Bye, also while other threads wait in hysimd (a watchdog's timed wait: the
 * process ends them). A thread still inside a CUDA call holds the lock;
 * rather than hang at exit, Bye is then left out (hysimd sees the connection
 * close).
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
    if (atomic_load(&g_state) == ST_READY) {
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
