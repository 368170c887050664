/*
 * libnccl.so.2: every function NCCL 2.28's nccl.h declares (and its pnccl
 * twin, as the real library exports). Communicators and collectives become
 * ops for hysimd, which models them; no data moves.
 *
 * A communicator is keyed across processes by comm_key, the first 8 bytes of
 * a hash (FNV-1a) of its ncclUniqueId. Each rank counts its collectives on a
 * communicator (seq); ranks' parts with equal (comm_key, seq) are one
 * collective; Sends and Recvs are counted per peer instead, and hysimd matches
 * the k-th Send from a to b with the k-th Recv at b from a. Ops never block, so
 * many from one thread may be issued inside ncclGroupStart/End; each op of a
 * group carries the group's number, and hysimd runs a group's ops on one
 * stream as one operation, as NCCL launches one kernel per stream (so a Send
 * and a Recv of one group never wait for each other). Functions not modelled
 * yet print "hysim: NAME is not supported yet" once and return
 * ncclInvalidUsage.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <nccl.h>

#include "api_cost.h"
#include "client.h"
#include "nccl_values.h"

#define UID_MAGIC "hysimUID"

struct ncclComm {
    uint64_t key;
    int rank, nranks, dev;
    uint64_t seq;            /* next collective's sequence number */
    uint64_t *sends, *recvs; /* [nranks]: Sends to / Recvs from each peer so far */
    int left;                /* CommDestroy sent (finalize, destroy or abort) */
    uint64_t splits;         /* ncclCommSplit calls made on it so far */
    int by_init_rank;        /* joined by ncclCommInitRank: this process's other ranks may join later */
    uint64_t custom_ops;     /* bit i: ncclRedOpCreatePreMulSum's op ncclNumOps + i is live */
};

/* The custom reductions a communicator may hold at once (NCCL allows many more; FSDP2 makes one at a time). */
#define HS_CUSTOM_OPS 64

/* A reduction the communicator knows: one of NCCL's, or a live PreMulSum of its own. */
static int op_known(const struct ncclComm *comm, ncclRedOp_t op)
{
    if ((int)op >= 0 && op < ncclNumOps)
        return 1;
    unsigned i = (unsigned)op - (unsigned)ncclNumOps;
    return comm && (int)op >= (int)ncclNumOps && i < HS_CUSTOM_OPS && (comm->custom_ops >> i & 1);
}

static __thread char t_last_error[256];
static __thread int t_group_depth;
static __thread uint64_t t_group; /* number of the open group; 0 outside groups */
/* The devices this thread's open group issued NCCL calls for on communicators of more than one rank: its
 * ncclGroupEnd launches on each, and pays for each (api_cost.h); those calls themselves only queue. A call
 * on a one-rank communicator costs what it costs outside a group, wherever it is (measured: two such calls
 * in a group cost twice one), so the group counts those calls instead. */
#define HS_GROUP_DEVICE_WORDS 4
static __thread uint64_t t_group_devices[HS_GROUP_DEVICE_WORDS];
static __thread unsigned t_group_one_rank_calls;

static void group_device_add(int dev)
{
    if (dev >= 0 && dev < 64 * HS_GROUP_DEVICE_WORDS)
        t_group_devices[dev / 64] |= 1ull << (dev % 64);
}

/* How many devices the group issued for; forgets them. */
static unsigned group_devices_take(void)
{
    unsigned n = 0;
    for (int i = 0; i < HS_GROUP_DEVICE_WORDS; i++) {
        n += (unsigned)__builtin_popcountll(t_group_devices[i]);
        t_group_devices[i] = 0;
    }
    return n;
}
static _Atomic uint64_t g_uid_counter, g_group_counter;

static ncclResult_t fail(ncclResult_t r, const char *fmt, const char *arg)
{
    snprintf(t_last_error, sizeof t_last_error, fmt, arg);
    return r;
}

static ncclResult_t leave(ncclResult_t r)
{
    hs_client_leave();
    return r;
}

/* Maps the client core's CUDA error; hysimd being unreachable is a system error. */
static ncclResult_t from_cuda(cudaError_t e, const char *what)
{
    switch (e) {
    case cudaSuccess: return ncclSuccess;
    case cudaErrorNoDevice:
    case cudaErrorCudartUnloading:
    case cudaErrorInitializationError:
        return fail(ncclSystemError, "%s: no simulated GPUs (see the message above)", what);
    case cudaErrorInvalidValue:
    case cudaErrorInvalidResourceHandle:
    case cudaErrorInvalidDevice:
        return fail(ncclInvalidArgument, "%s: invalid argument (stream, device or buffer)", what);
    case cudaErrorMemoryAllocation: return fail(ncclSystemError, "%s: out of device memory", what);
    default: return fail(ncclUnhandledCudaError, "%s: CUDA error", what);
    }
}

static uint64_t comm_key_of(const ncclUniqueId *id)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a, 64 bits */
    for (size_t i = 0; i < sizeof id->internal; i++) {
        h ^= (uint8_t)id->internal[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* Bytes: a magic, the server, the pid, a per-process counter; the rest zero. */
static void make_unique_id(ncclUniqueId *id)
{
    memset(id, 0, sizeof *id);
    uint32_t server = hs_client_gpu_info()->server;
    uint32_t pid = (uint32_t)getpid();
    uint64_t n = atomic_fetch_add(&g_uid_counter, 1);
    memcpy(id->internal, UID_MAGIC, 8);
    memcpy(id->internal + 8, &server, 4);
    memcpy(id->internal + 12, &pid, 4);
    memcpy(id->internal + 16, &n, 8);
}

static size_t type_size(ncclDataType_t t)
{
    switch (t) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2: return 1;
    case ncclFloat16:
    case ncclBfloat16: return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32: return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64: return 8;
    default: return 0;
    }
}

/* ---- versions, ids, errors ---- */

ncclResult_t ncclGetVersion(int *version)
{
    hs_client_enter();
    if (!version)
        return leave(fail(ncclInvalidArgument, "%s: version is NULL", "ncclGetVersion"));
    *version = NCCL_VERSION_CODE;
    return leave(ncclSuccess);
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId)
{
    hs_client_enter();
    if (!uniqueId)
        return leave(fail(ncclInvalidArgument, "%s: uniqueId is NULL", "ncclGetUniqueId"));
    ncclResult_t r = from_cuda(hs_client_start(), "ncclGetUniqueId");
    if (r == ncclSuccess)
        make_unique_id(uniqueId);
    return leave(r);
}

const char *ncclGetErrorString(ncclResult_t result)
{
    switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
    }
}

const char *ncclGetLastError(ncclComm_t comm)
{
    (void)comm;
    return t_last_error;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError)
{
    hs_client_enter();
    if (!comm || !asyncError)
        return leave(fail(ncclInvalidArgument, "%s: comm or asyncError is NULL", "ncclCommGetAsyncError"));
    *asyncError = ncclSuccess;
    return leave(ncclSuccess);
}

/* ---- communicators ---- */

/* Ranks of each communicator that joined in this process (ncclCommSplit needs all of them here). */
static pthread_mutex_t g_local_lock = PTHREAD_MUTEX_INITIALIZER;
static struct local_count {
    uint64_t key;
    int ranks;
} * g_local;
static size_t g_nlocal;

static void count_local_rank(uint64_t key)
{
    pthread_mutex_lock(&g_local_lock);
    size_t i = 0;
    while (i < g_nlocal && g_local[i].key != key)
        i++;
    if (i == g_nlocal) {
        struct local_count *grown = realloc(g_local, (g_nlocal + 1) * sizeof *grown);
        if (grown) {
            g_local = grown;
            g_local[g_nlocal++] = (struct local_count){key, 0};
        }
    }
    if (i < g_nlocal)
        g_local[i].ranks++;
    pthread_mutex_unlock(&g_local_lock);
}

static int local_ranks(uint64_t key)
{
    pthread_mutex_lock(&g_local_lock);
    int n = 0;
    for (size_t i = 0; i < g_nlocal; i++)
        if (g_local[i].key == key)
            n = g_local[i].ranks;
    pthread_mutex_unlock(&g_local_lock);
    return n;
}

/* One rank on local device dev joins the communicator `key`. */
static ncclResult_t join(ncclComm_t *out, uint64_t key, int rank, int nranks, int dev, const char *what)
{
    ncclResult_t r = from_cuda(hs_client_comm_init(key, rank, nranks, dev), what);
    if (r != ncclSuccess)
        return r;
    struct ncclComm *c = calloc(1, sizeof *c);
    uint64_t *counts = calloc(2 * (size_t)nranks, sizeof *counts);
    if (!c || !counts) {
        free(c);
        free(counts);
        return fail(ncclSystemError, "%s: out of host memory", what);
    }
    c->sends = counts;
    c->recvs = counts + nranks;
    c->key = key;
    c->rank = rank;
    c->nranks = nranks;
    c->dev = dev;
    *out = c;
    count_local_rank(key);
    return ncclSuccess;
}

/* NCCL takes one rank per GPU: a communicator of more ranks than the scenario has GPUs could never
 * complete (its missing ranks would never join), so it is refused at once, with a message. */
static ncclResult_t too_many_ranks(int nranks, const char *what)
{
    uint32_t gpus = hs_client_gpu_info()->total_gpus;
    if (!gpus || (uint32_t)nranks <= gpus)
        return ncclSuccess;
    char msg[160];
    snprintf(msg, sizeof msg, "a communicator of %d ranks, but the scenario has %u GPUs (one rank per GPU)", nranks,
             gpus);
    fprintf(stderr, "hysim: %s: %s\n", what, msg);
    snprintf(t_last_error, sizeof t_last_error, "%s: %s", what, msg);
    return ncclInvalidUsage;
}

static ncclResult_t init_rank(ncclComm_t *comm, int nranks, const ncclUniqueId *id, int rank, const char *what)
{
    if (!comm || nranks < 1 || rank < 0 || rank >= nranks)
        return fail(ncclInvalidArgument, "%s: comm is NULL or rank/nranks out of range", what);
    ncclResult_t r = from_cuda(hs_client_start(), what);
    if (r != ncclSuccess)
        return r;
    r = too_many_ranks(nranks, what);
    if (r != ncclSuccess)
        return r;
    r = join(comm, comm_key_of(id), rank, nranks, hs_client_get_device(), what);
    if (r == ncclSuccess)
        (*comm)->by_init_rank = 1;
    return r;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
    hs_client_enter();
    return leave(init_rank(comm, nranks, &commId, rank, "ncclCommInitRank"));
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t *config)
{
    (void)config; /* blocking, CTA counts, names: nothing hysim models yet */
    hs_client_enter();
    return leave(init_rank(comm, nranks, &commId, rank, "ncclCommInitRankConfig"));
}

ncclResult_t ncclCommInitAll(ncclComm_t *comm, int ndev, const int *devlist)
{
    hs_client_enter();
    if (!comm || ndev < 1)
        return leave(fail(ncclInvalidArgument, "%s: comm is NULL or ndev < 1", "ncclCommInitAll"));
    ncclResult_t r = from_cuda(hs_client_start(), "ncclCommInitAll");
    if (r != ncclSuccess)
        return leave(r);
    int count = hs_client_gpu_info()->device_count;
    for (int i = 0; i < ndev; i++) {
        int d = devlist ? devlist[i] : i;
        if (d < 0 || d >= count)
            return leave(fail(ncclInvalidArgument, "%s: device out of range", "ncclCommInitAll"));
        for (int j = 0; j < i; j++)
            if (devlist && devlist[j] == d)
                return leave(fail(ncclInvalidUsage, "%s: duplicate GPU in devlist", "ncclCommInitAll"));
    }
    ncclUniqueId id;
    make_unique_id(&id);
    uint64_t key = comm_key_of(&id);
    for (int i = 0; i < ndev && r == ncclSuccess; i++)
        r = join(&comm[i], key, i, ndev, devlist ? devlist[i] : i, "ncclCommInitAll");
    return leave(r);
}

static ncclResult_t leave_comm(ncclComm_t comm, const char *what)
{
    if (comm->left)
        return ncclSuccess;
    comm->left = 1;
    return from_cuda(hs_client_comm_destroy(comm->key, comm->rank, comm->dev), what);
}

ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
    hs_client_enter();
    if (!comm)
        return leave(fail(ncclInvalidArgument, "%s: comm is NULL", "ncclCommFinalize"));
    return leave(leave_comm(comm, "ncclCommFinalize"));
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    hs_client_enter();
    if (!comm)
        return leave(ncclSuccess);
    ncclResult_t r = leave_comm(comm, "ncclCommDestroy");
    free(comm->sends);
    free(comm);
    return leave(r);
}

ncclResult_t ncclCommAbort(ncclComm_t comm)
{
    hs_client_enter();
    if (!comm)
        return leave(ncclSuccess);
    ncclResult_t r = leave_comm(comm, "ncclCommAbort");
    free(comm->sends);
    free(comm);
    return leave(r);
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int *count)
{
    hs_client_enter();
    if (!comm || !count)
        return leave(fail(ncclInvalidArgument, "%s: comm or count is NULL", "ncclCommCount"));
    *count = comm->nranks;
    return leave(ncclSuccess);
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *device)
{
    hs_client_enter();
    if (!comm || !device)
        return leave(fail(ncclInvalidArgument, "%s: comm or device is NULL", "ncclCommCuDevice"));
    *device = comm->dev;
    return leave(ncclSuccess);
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank)
{
    hs_client_enter();
    if (!comm || !rank)
        return leave(fail(ncclInvalidArgument, "%s: comm or rank is NULL", "ncclCommUserRank"));
    *rank = comm->rank;
    return leave(ncclSuccess);
}

/* ---- ncclCommSplit ---- */

/*
 * ncclCommSplit is collective over the parent: every rank calls it, and each
 * new communicator holds the ranks of one color, ordered by (key, parent
 * rank); NCCL_SPLIT_NOCOLOR gets NULL. The ranks meet in a rendezvous of this
 * process: the k-th split of a parent gathers its ranks' calls, the last one
 * to arrive creates every new communicator, and a call outside a group waits
 * for it (inside a group a call returns at once, as in NCCL, and its newcomm is
 * set once the last rank has called). The new communicator's key is derived
 * from the parent's, the split's number and the color, as every rank can
 * compute it. A parent with ranks in other processes: once all of this
 * process's ranks of the parent have called, the last of them sends their
 * calls to hysimd (hs_client_comm_split), which answers once every process's
 * ranks have called, with each rank's new rank, size and communicator key
 * (comm_split.c in hysimd); that caller then creates this process's new
 * communicators. Inside a group the calls before the last return at once, so
 * one thread driving several ranks does not block itself.
 */
typedef struct split_member {
    int color, key, dev;
    ncclComm_t *out;
    int called;
} split_member;

typedef struct split_meet {
    uint64_t parent, gen;
    int nranks, arrived, done;
    int waiting; /* callers outside a group blocked until done */
    ncclResult_t result;
    split_member *m; /* [nranks], by parent rank */
    struct split_meet *next;
} split_meet;

static pthread_mutex_t g_split_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_split_cv = PTHREAD_COND_INITIALIZER;
static split_meet *g_splits;

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t split_key(uint64_t parent, uint64_t gen, int color)
{
    return mix64(parent ^ mix64(gen * 0x9e3779b97f4a7c15ull + (uint32_t)color + 1));
}

/* Creates every new communicator of the split; called by the last rank, under g_split_lock. */
static ncclResult_t split_resolve(split_meet *sm)
{
    ncclResult_t r = ncclSuccess;
    for (int i = 0; i < sm->nranks; i++) {
        const split_member *me = &sm->m[i];
        *me->out = NULL;
        if (me->color == NCCL_SPLIT_NOCOLOR)
            continue;
        int n = 0, rank = 0;
        for (int j = 0; j < sm->nranks; j++) {
            const split_member *o = &sm->m[j];
            if (o->color != me->color)
                continue;
            n++;
            if (o->key < me->key || (o->key == me->key && j < i))
                rank++;
        }
        if (r == ncclSuccess)
            r = join(me->out, split_key(sm->parent, sm->gen, me->color), rank, n, me->dev, "ncclCommSplit");
    }
    return r;
}

/*
 * The split across processes: this process's calls go to hysimd, which
 * answers with every rank's new communicator; called by the last local rank
 * to arrive, under g_split_lock (released while hysimd gathers the others).
 */
static ncclResult_t split_exchange(split_meet *sm)
{
    int n = 0;
    hs_split_call *calls = calloc((size_t)sm->nranks, sizeof *calls);
    hs_split_result *res = calloc((size_t)sm->nranks, sizeof *res);
    if (!calls || !res) {
        free(calls);
        free(res);
        return fail(ncclSystemError, "%s: out of host memory", "ncclCommSplit");
    }
    for (int i = 0; i < sm->nranks; i++)
        if (sm->m[i].called)
            calls[n++] = (hs_split_call){i, sm->m[i].color, sm->m[i].key};
    pthread_mutex_unlock(&g_split_lock);
    ncclResult_t r =
        from_cuda(hs_client_comm_split(sm->parent, sm->nranks, sm->gen, (size_t)n, calls, res), "ncclCommSplit");
    pthread_mutex_lock(&g_split_lock);
    for (int i = 0; i < n; i++) {
        const split_member *me = &sm->m[calls[i].rank];
        *me->out = NULL;
        if (r == ncclSuccess && !res[i].none)
            r = join(me->out, res[i].comm_key, res[i].rank, res[i].nranks, me->dev, "ncclCommSplit");
    }
    free(calls);
    free(res);
    return r;
}

/*
 * This process's ranks of comm's communicator. ncclCommInitAll and
 * ncclCommSplit create all of them before any can be used, so counting them
 * here is exact. With ncclCommInitRank, one thread per rank, a thread can
 * reach its split before another has even started its init, and nothing here
 * tells whether more ranks will come: hysimd, which sees every process's
 * ranks join, says how many are this process's once every rank has joined;
 * until then this asks again every millisecond, leaving the connection free
 * to the threads still initialising.
 */
static ncclResult_t parent_local_ranks(ncclComm_t comm, int *nlocal)
{
    *nlocal = local_ranks(comm->key);
    if (!comm->by_init_rank || *nlocal == comm->nranks)
        return ncclSuccess;
    for (;;) {
        int complete = 0;
        ncclResult_t r =
            from_cuda(hs_client_comm_local_ranks(comm->key, comm->nranks, &complete, nlocal), "ncclCommSplit");
        if (r != ncclSuccess || complete)
            return r;
        hs_client_real_sleep_ns(1000000);
    }
}

static ncclResult_t comm_split(ncclComm_t comm, int color, int key, ncclComm_t *newcomm)
{
    if (!comm || !newcomm || (color < 0 && color != NCCL_SPLIT_NOCOLOR))
        return fail(ncclInvalidArgument, "%s: NULL comm or newcomm, or a negative color", "ncclCommSplit");
    int nlocal;
    ncclResult_t lr = parent_local_ranks(comm, &nlocal);
    if (lr != ncclSuccess)
        return lr;
    uint64_t gen = comm->splits++;
    *newcomm = NULL;
    pthread_mutex_lock(&g_split_lock);
    split_meet *sm = g_splits;
    while (sm && (sm->parent != comm->key || sm->gen != gen))
        sm = sm->next;
    if (!sm) {
        sm = calloc(1, sizeof *sm);
        split_member *m = calloc((size_t)comm->nranks, sizeof *m);
        if (!sm || !m) {
            free(sm);
            free(m);
            pthread_mutex_unlock(&g_split_lock);
            return fail(ncclSystemError, "%s: out of host memory", "ncclCommSplit");
        }
        *sm = (split_meet){.parent = comm->key, .gen = gen, .nranks = comm->nranks, .m = m, .next = g_splits};
        g_splits = sm;
    }
    sm->m[comm->rank] = (split_member){color, key, comm->dev, newcomm, 1};
    ncclResult_t r = ncclSuccess;
    if (++sm->arrived == nlocal) {
        r = sm->result = nlocal == sm->nranks ? split_resolve(sm) : split_exchange(sm);
        sm->done = 1;
        pthread_cond_broadcast(&g_split_cv);
    } else if (t_group_depth == 0) {
        sm->waiting++;
        while (!sm->done)
            pthread_cond_wait(&g_split_cv, &g_split_lock);
        sm->waiting--;
        r = sm->result;
    }
    if (sm->done && sm->waiting == 0) { /* nobody reads it any more */
        split_meet **pp = &g_splits;
        while (*pp != sm)
            pp = &(*pp)->next;
        *pp = sm->next;
        free(sm->m);
        free(sm);
    }
    pthread_mutex_unlock(&g_split_lock);
    return r;
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config)
{
    (void)config; /* blocking, CTA counts, names: nothing hysim models yet */
    hs_client_enter();
    return leave(comm_split(comm, color, key, newcomm));
}

/* ---- groups and collectives ---- */

ncclResult_t ncclGroupStart(void)
{
    hs_client_enter();
    if (t_group_depth++ == 0)
        t_group = atomic_fetch_add(&g_group_counter, 1) + 1;
    return leave(ncclSuccess);
}

static ncclResult_t issue_deferred(void);

ncclResult_t ncclGroupEnd(void)
{
    hs_client_enter();
    if (t_group_depth == 0)
        return leave(fail(ncclInvalidUsage, "%s: no ncclGroupStart to end", "ncclGroupEnd"));
    if (--t_group_depth == 0) {
        ncclResult_t r =
            issue_deferred(); /* the group's kernel launches now, after whatever its stream got meanwhile */
        t_group = 0;
        if (r != ncclSuccess) {
            group_devices_take();
            t_group_one_rank_calls = 0;
            return leave(r);
        }
        hs_client_charge_calls(HS_CALL_NCCL_GROUP_DEVICE, group_devices_take());
        hs_client_charge_also(HS_CALL_NCCL, t_group_one_rank_calls);
        t_group_one_rank_calls = 0;
    }
    return leave(ncclSuccess);
}

/* One collective call: what it moves and which of its buffers must be device memory of the comm's GPU. */
typedef struct coll_call {
    const char *what;
    enum hs_coll_kind kind;
    size_t count; /* elements, as NCCL counts them for the kind (hysim.proto: Collective.bytes) */
    ncclDataType_t type;
    int reduces; /* takes an ncclRedOp_t */
    ncclRedOp_t op;
    int root;            /* Broadcast/Reduce root, Send/Recv peer; -1: none */
    const void *bufs[2]; /* checked when count > 0; NULL: not used by this rank */
} coll_call;

/*
 * What the call costs its thread (api_cost.h). On a communicator of several
 * ranks: NCCL outside a group; inside one nothing now, its ncclGroupEnd pays
 * per device. On one rank NCCL only copies, out of place (a real in-place
 * all-reduce on one rank costs 0.1 us: bench/real/data/host_calls_h200x2.txt,
 * mlp_train --gpus 1), and such a call costs the same in a group or not.
 */
static void charge(const struct ncclComm *comm, const coll_call *c)
{
    if (comm->nranks == 1 && c->bufs[0] == c->bufs[1])
        return;
    if (t_group_depth == 0)
        hs_client_charge_call(HS_CALL_NCCL);
    else if (comm->nranks == 1)
        t_group_one_rank_calls++;
}

/*
 * NCCL_ALGO / NCCL_PROTO as hysim.proto's Collective numbers them (0: unset,
 * or a list or exclusion NCCL accepts but hysim passes on as "tuner's choice").
 */
static uint32_t env_choice(const char *var, const char *const names[], _Atomic int *said)
{
    const char *v = getenv(var);
    for (uint32_t i = 0; v && names[i]; i++)
        if (!strcasecmp(v, names[i]))
            return i + 1;
    /* one name hysim does not model (NVLSTree, CollNet, PAT): said once, not silently dropped */
    if (v && *v && !strpbrk(v, ",;^:") && !atomic_exchange(said, 1)) {
        char known[64] = "";
        for (uint32_t i = 0; names[i]; i++)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "", names[i]);
        fprintf(stderr, "hysim: %s=%s is not modelled yet (hysim models %s); the tuner chooses instead\n", var, v,
                known);
    }
    return 0;
}

static uint32_t env_algo(void)
{
    static const char *const names[] = {"Ring", "Tree", "NVLS", NULL};
    static _Atomic int said;
    return env_choice("NCCL_ALGO", names, &said);
}

static uint32_t env_proto(void)
{
    static const char *const names[] = {"LL", "LL128", "Simple", NULL};
    static _Atomic int said;
    return env_choice("NCCL_PROTO", names, &said);
}

/* Whether a kind's call names a root or peer (Broadcast, Reduce, Send, Recv). */
static int has_root(enum hs_coll_kind k)
{
    return k != HS_COLL_ALL_REDUCE && k != HS_COLL_ALL_GATHER && k != HS_COLL_REDUCE_SCATTER && k != HS_COLL_ALL_TO_ALL;
}

/* Sends one validated call to hysimd as part `seq` of its kind on comm, in group `group` (0: none). */
static ncclResult_t issue(ncclComm_t comm, const coll_call *c, cudaStream_t stream, uint64_t seq, uint64_t group)
{
    size_t size = type_size(c->type);
    int rooted = has_root(c->kind);
    ncclRedOp_t op = c->op < ncclNumOps ? c->op : ncclSum; /* PreMulSum: a sum (docs/values.md) */
    /* A small collective carries this rank's send bytes: hysimd answers every rank's receive bytes */
    const void *send = c->bufs[0], *recv = c->bufs[1];
    if (c->kind == HS_COLL_RECV) /* its one buffer receives */
        recv = send, send = NULL;
    hs_nccl_part part;
    int exact = hs_nccl_values_part(c->kind, c->type, size, op, c->count, comm->nranks, send, &part);
    int carried = 0;
    ncclResult_t r = from_cuda(hs_client_collective(comm->key, comm->rank, comm->dev, seq, c->kind,
                                                    (uint64_t)c->count * size, rooted ? c->root : 0, group, env_algo(),
                                                    env_proto(), stream, exact ? &part.values : NULL, &carried),
                               c->what);
    if (r == ncclSuccess) {
        hs_nccl_values(c->kind, c->type, size, op, c->count, comm->nranks, comm->rank, c->root, send, recv);
        if (carried)
            hs_nccl_values_pending(&part, comm->key, seq, comm->rank, c->root, recv);
    }
    hs_nccl_part_free(&part);
    return r;
}

/*
 * The calls of an open group: NCCL launches a group's work at its
 * ncclGroupEnd, so what the program put on the stream between the calls (an
 * event wait, as PyTorch puts before each of batch_isend_irecv's) comes
 * first, and the group's sends and receives stay together (two ranks that
 * each send, then receive, in one group do not wait on each other).
 */
typedef struct deferred_call {
    ncclComm_t comm;
    coll_call c;
    cudaStream_t stream;
    uint64_t seq, group;
} deferred_call;
static __thread deferred_call *t_deferred;
static __thread size_t t_ndeferred, t_capdeferred;

static ncclResult_t issue_deferred(void)
{
    ncclResult_t first = ncclSuccess;
    for (size_t i = 0; i < t_ndeferred; i++) {
        const deferred_call *d = &t_deferred[i];
        ncclResult_t r = issue(d->comm, &d->c, d->stream, d->seq, d->group);
        if (first == ncclSuccess)
            first = r;
    }
    t_ndeferred = 0;
    return first;
}

static ncclResult_t defer(ncclComm_t comm, const coll_call *c, cudaStream_t stream, uint64_t seq)
{
    if (t_ndeferred == t_capdeferred) {
        size_t cap = t_capdeferred ? 2 * t_capdeferred : 16;
        deferred_call *n = realloc(t_deferred, cap * sizeof *n);
        if (!n)
            return fail(ncclSystemError, "%s: out of host memory in a group", c->what);
        t_deferred = n;
        t_capdeferred = cap;
    }
    t_deferred[t_ndeferred++] = (deferred_call){comm, *c, stream, seq, t_group};
    return ncclSuccess;
}

static ncclResult_t enqueue(ncclComm_t comm, const coll_call *c, cudaStream_t stream)
{
    size_t size = type_size(c->type);
    if (!comm || !size || (c->reduces && !op_known(comm, c->op)))
        return fail(ncclInvalidArgument, "%s: NULL comm, or unknown data type or reduction", c->what);
    int rooted = has_root(c->kind);
    if (rooted && (c->root < 0 || c->root >= comm->nranks))
        return fail(ncclInvalidArgument, "%s: root or peer out of range", c->what);
    for (int i = 0; i < 2; i++)
        if (c->count && c->bufs[i] && hs_client_device_of(c->bufs[i]) != comm->dev)
            return fail(ncclInvalidArgument, "%s: buffers must be device memory of the communicator's GPU", c->what);
    uint64_t *seq = c->kind == HS_COLL_SEND   ? &comm->sends[c->root]
                    : c->kind == HS_COLL_RECV ? &comm->recvs[c->root]
                                              : &comm->seq;
    charge(comm, c);
    ncclResult_t r = t_group_depth > 0 ? defer(comm, c, stream, *seq) : issue(comm, c, stream, *seq, 0);
    if (r == ncclSuccess) {
        (*seq)++;
        if (t_group_depth > 0 && comm->nranks > 1)
            group_device_add(comm->dev);
    }
    return r;
}

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream)
{
    hs_client_enter();
    coll_call c = {"ncclAllReduce", HS_COLL_ALL_REDUCE, count, datatype, 1, op, -1, {sendbuff, recvbuff}};
    return leave(enqueue(comm, &c, stream));
}

/* bytes = sendcount × type size: one rank's share */
ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream)
{
    hs_client_enter();
    coll_call c = {"ncclAllGather", HS_COLL_ALL_GATHER, sendcount, datatype, 0, ncclSum, -1, {sendbuff, recvbuff}};
    return leave(enqueue(comm, &c, stream));
}

/* bytes = recvcount × type size: one rank's share */
ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
    hs_client_enter();
    coll_call c = {"ncclReduceScatter", HS_COLL_REDUCE_SCATTER, recvcount, datatype, 1, op, -1, {sendbuff, recvbuff}};
    return leave(enqueue(comm, &c, stream));
}

static int is_root(ncclComm_t comm, int root) { return comm && comm->rank == root; }

/* sendbuff is read on the root only */
ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream)
{
    hs_client_enter();
    coll_call c = {"ncclBroadcast",
                   HS_COLL_BROADCAST,
                   count,
                   datatype,
                   0,
                   ncclSum,
                   root,
                   {is_root(comm, root) ? sendbuff : NULL, recvbuff}};
    return leave(enqueue(comm, &c, stream));
}

ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream)
{
    hs_client_enter();
    coll_call c = {"ncclBcast", HS_COLL_BROADCAST, count, datatype,
                   0,           ncclSum,           root,  {is_root(comm, root) ? buff : NULL, buff}};
    return leave(enqueue(comm, &c, stream));
}

/* recvbuff is written on the root only */
ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream)
{
    hs_client_enter();
    coll_call c = {
        "ncclReduce", HS_COLL_REDUCE, count, datatype, 1, op, root, {sendbuff, is_root(comm, root) ? recvbuff : NULL}};
    return leave(enqueue(comm, &c, stream));
}

ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream)
{
    hs_client_enter();
    coll_call c = {"ncclSend", HS_COLL_SEND, count, datatype, 0, ncclSum, peer, {sendbuff, NULL}};
    return leave(enqueue(comm, &c, stream));
}

ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream)
{
    hs_client_enter();
    coll_call c = {"ncclRecv", HS_COLL_RECV, count, datatype, 0, ncclSum, peer, {recvbuff, NULL}};
    return leave(enqueue(comm, &c, stream));
}

/* bytes = count × type size: what one rank sends to each other rank */
ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                          cudaStream_t stream)
{
    hs_client_enter();
    coll_call c = {"ncclAlltoAll", HS_COLL_ALL_TO_ALL, count, datatype, 0, ncclSum, -1, {sendbuff, recvbuff}};
    return leave(enqueue(comm, &c, stream));
}

/* ---- the device allocator ---- */

ncclResult_t ncclMemAlloc(void **ptr, size_t size)
{
    hs_client_enter();
    if (!ptr)
        return leave(fail(ncclInvalidArgument, "%s: ptr is NULL", "ncclMemAlloc"));
    return leave(from_cuda(hs_client_malloc(size, ptr), "ncclMemAlloc"));
}

ncclResult_t ncclMemFree(void *ptr)
{
    hs_client_enter();
    return leave(from_cuda(hs_client_free(ptr), "ncclMemFree"));
}

/* ---- not modelled yet ---- */

static ncclResult_t unsupported(const char *name, _Atomic int *said)
{
    hs_client_enter();
    if (!atomic_exchange(said, 1))
        fprintf(stderr, "hysim: %s is not supported yet\n", name);
    return leave(fail(ncclInvalidUsage, "%s is not supported by hysim yet", name));
}

#define UNSUPPORTED(name)                  \
    do {                                   \
        static _Atomic int said_;          \
        return unsupported(#name, &said_); \
    } while (0)

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"

ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) { UNSUPPORTED(ncclCommRevoke); }

ncclResult_t ncclCommShrink(ncclComm_t comm, int *excludeRanksList, int excludeRanksCount, ncclComm_t *newcomm,
                            ncclConfig_t *config, int shrinkFlags)
{
    UNSUPPORTED(ncclCommShrink);
}

ncclResult_t ncclCommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank, int nId, ncclUniqueId *commIds,
                                      ncclConfig_t *config)
{
    UNSUPPORTED(ncclCommInitRankScalable);
}

void ncclResetDebugInit(void)
{
    static _Atomic int said;
    (void)unsupported("ncclResetDebugInit", &said);
}

ncclResult_t ncclCommRegister(const ncclComm_t comm, void *buff, size_t size, void **handle)
{
    UNSUPPORTED(ncclCommRegister);
}

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void *handle) { UNSUPPORTED(ncclCommDeregister); }

ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win, int winFlags)
{
    UNSUPPORTED(ncclCommWindowRegister);
}

ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) { UNSUPPORTED(ncclCommWindowDeregister); }

/* A sum of the inputs each multiplied by the scalar (FSDP2 divides its gradients so): timed as a sum, its
 * values those of a sum (docs/values.md: the scalar, which may live on the GPU, is not applied). */
ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm)
{
    if (!op || !scalar || !comm || !type_size(datatype) ||
        (residence != ncclScalarDevice && residence != ncclScalarHostImmediate))
        return fail(ncclInvalidArgument, "%s: NULL op, scalar or comm, or a bad type or residence",
                    "ncclRedOpCreatePreMulSum");
    for (unsigned i = 0; i < HS_CUSTOM_OPS; i++)
        if (!(comm->custom_ops >> i & 1)) {
            comm->custom_ops |= 1ull << i;
            *op = (ncclRedOp_t)((unsigned)ncclNumOps + i);
            return ncclSuccess;
        }
    return fail(ncclInternalError, "%s: more than 64 custom reductions live on one communicator",
                "ncclRedOpCreatePreMulSum");
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm)
{
    if (!comm || (int)op < (int)ncclNumOps || !op_known(comm, op))
        return fail(ncclInvalidArgument, "%s: not a custom reduction of this communicator", "ncclRedOpDestroy");
    comm->custom_ops &= ~(1ull << ((unsigned)op - (unsigned)ncclNumOps));
    return ncclSuccess;
}

ncclResult_t ncclGather(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream)
{
    UNSUPPORTED(ncclGather);
}

ncclResult_t ncclScatter(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream)
{
    UNSUPPORTED(ncclScatter);
}

ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t *simInfo) { UNSUPPORTED(ncclGroupSimulateEnd); }

/* Device communicators (nccl_device/core.h, a C++ header; its types are
 * opaque here): torch links them for its symmetric-memory kernels. */
ncclResult_t ncclDevCommCreate(ncclComm_t comm, const void *requirements, void *outDevComm);
ncclResult_t ncclDevCommDestroy(ncclComm_t comm, const void *devComm);

ncclResult_t ncclDevCommCreate(ncclComm_t comm, const void *requirements, void *outDevComm)
{
    UNSUPPORTED(ncclDevCommCreate);
}

ncclResult_t ncclDevCommDestroy(ncclComm_t comm, const void *devComm) { UNSUPPORTED(ncclDevCommDestroy); }

#pragma GCC diagnostic pop

/* ---- the profiling interface: pncclX is ncclX, as in the real library ---- */

#define PNCCL(name) extern __typeof__(name) p##name __attribute__((alias(#name)))

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
PNCCL(ncclMemAlloc);
PNCCL(ncclMemFree);
PNCCL(ncclGetVersion);
PNCCL(ncclGetUniqueId);
PNCCL(ncclCommInitRankConfig);
PNCCL(ncclCommInitRank);
PNCCL(ncclCommInitAll);
PNCCL(ncclCommFinalize);
PNCCL(ncclCommDestroy);
PNCCL(ncclCommAbort);
PNCCL(ncclCommRevoke);
PNCCL(ncclCommSplit);
PNCCL(ncclCommShrink);
PNCCL(ncclCommInitRankScalable);
PNCCL(ncclGetErrorString);
PNCCL(ncclGetLastError);
PNCCL(ncclResetDebugInit);
PNCCL(ncclCommGetAsyncError);
PNCCL(ncclCommCount);
PNCCL(ncclCommCuDevice);
PNCCL(ncclCommUserRank);
PNCCL(ncclCommRegister);
PNCCL(ncclCommDeregister);
PNCCL(ncclCommWindowRegister);
PNCCL(ncclCommWindowDeregister);
PNCCL(ncclRedOpCreatePreMulSum);
PNCCL(ncclRedOpDestroy);
PNCCL(ncclReduce);
PNCCL(ncclBcast);
PNCCL(ncclBroadcast);
PNCCL(ncclAllReduce);
PNCCL(ncclReduceScatter);
PNCCL(ncclAllGather);
PNCCL(ncclAlltoAll);
PNCCL(ncclGather);
PNCCL(ncclScatter);
PNCCL(ncclSend);
PNCCL(ncclRecv);
PNCCL(ncclGroupStart);
PNCCL(ncclGroupEnd);
PNCCL(ncclGroupSimulateEnd);
#pragma GCC diagnostic pop
