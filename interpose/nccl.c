/*
 * libnccl.so.2: every function NCCL 2.28's nccl.h declares (and its pnccl
 * twin, as the real library exports). Communicators and collectives become
 * ops for hysimd, which models them; no data moves.
 *
 * A communicator is keyed across processes by comm_key, the first 8 bytes of
 * a hash (FNV-1a) of its ncclUniqueId. Each rank counts its collectives on a
 * communicator (seq); ranks' parts with equal (comm_key, seq) are one
 * collective. Ops are non-blocking already, so ncclGroupStart/End only keep
 * the nesting depth. Functions not modelled yet print "hysim: NAME is not
 * supported yet" once and return ncclInvalidUsage.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nccl.h>

#include "client.h"

#define UID_MAGIC "hysimUID"

struct ncclComm {
    uint64_t key;
    int rank, nranks, dev;
    uint64_t seq; /* next collective's sequence number */
    int left;     /* CommDestroy sent (finalize, destroy or abort) */
};

static __thread char t_last_error[256];
static __thread int t_group_depth;
static _Atomic uint64_t g_uid_counter;

static ncclResult_t fail(ncclResult_t r, const char *fmt, const char *arg) {
    snprintf(t_last_error, sizeof t_last_error, fmt, arg);
    return r;
}

static ncclResult_t leave(ncclResult_t r) {
    hs_client_leave();
    return r;
}

/* Maps the client core's CUDA error; hysimd being unreachable is a system error. */
static ncclResult_t from_cuda(cudaError_t e, const char *what) {
    switch (e) {
    case cudaSuccess:
        return ncclSuccess;
    case cudaErrorNoDevice:
    case cudaErrorCudartUnloading:
    case cudaErrorInitializationError:
        return fail(ncclSystemError, "%s: no simulated GPUs (see the message above)", what);
    case cudaErrorInvalidValue:
    case cudaErrorInvalidResourceHandle:
    case cudaErrorInvalidDevice:
        return fail(ncclInvalidArgument, "%s: invalid argument (stream, device or buffer)", what);
    case cudaErrorMemoryAllocation:
        return fail(ncclSystemError, "%s: out of device memory", what);
    default:
        return fail(ncclUnhandledCudaError, "%s: CUDA error", what);
    }
}

static uint64_t comm_key_of(const ncclUniqueId *id) {
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a, 64 bits */
    for (size_t i = 0; i < sizeof id->internal; i++) {
        h ^= (uint8_t)id->internal[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* Bytes: a magic, the server, the pid, a per-process counter; the rest zero. */
static void make_unique_id(ncclUniqueId *id) {
    memset(id, 0, sizeof *id);
    uint32_t server = hs_client_gpu_info()->server;
    uint32_t pid = (uint32_t)getpid();
    uint64_t n = atomic_fetch_add(&g_uid_counter, 1);
    memcpy(id->internal, UID_MAGIC, 8);
    memcpy(id->internal + 8, &server, 4);
    memcpy(id->internal + 12, &pid, 4);
    memcpy(id->internal + 16, &n, 8);
}

static size_t type_size(ncclDataType_t t) {
    switch (t) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 0;
    }
}

/* ---- versions, ids, errors ---- */

ncclResult_t ncclGetVersion(int *version) {
    hs_client_enter();
    if (!version)
        return leave(fail(ncclInvalidArgument, "%s: version is NULL", "ncclGetVersion"));
    *version = NCCL_VERSION_CODE;
    return leave(ncclSuccess);
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId) {
    hs_client_enter();
    if (!uniqueId)
        return leave(fail(ncclInvalidArgument, "%s: uniqueId is NULL", "ncclGetUniqueId"));
    ncclResult_t r = from_cuda(hs_client_start(), "ncclGetUniqueId");
    if (r == ncclSuccess)
        make_unique_id(uniqueId);
    return leave(r);
}

const char *ncclGetErrorString(ncclResult_t result) {
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

const char *ncclGetLastError(ncclComm_t comm) {
    (void)comm;
    return t_last_error;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError) {
    hs_client_enter();
    if (!comm || !asyncError)
        return leave(fail(ncclInvalidArgument, "%s: comm or asyncError is NULL", "ncclCommGetAsyncError"));
    *asyncError = ncclSuccess;
    return leave(ncclSuccess);
}

/* ---- communicators ---- */

/* One rank on local device dev joins the communicator `key`. */
static ncclResult_t join(ncclComm_t *out, uint64_t key, int rank, int nranks, int dev, const char *what) {
    ncclResult_t r = from_cuda(hs_client_comm_init(key, rank, nranks, dev), what);
    if (r != ncclSuccess)
        return r;
    struct ncclComm *c = calloc(1, sizeof *c);
    if (!c)
        return fail(ncclSystemError, "%s: out of host memory", what);
    c->key = key;
    c->rank = rank;
    c->nranks = nranks;
    c->dev = dev;
    *out = c;
    return ncclSuccess;
}

static ncclResult_t init_rank(ncclComm_t *comm, int nranks, const ncclUniqueId *id, int rank, const char *what) {
    if (!comm || nranks < 1 || rank < 0 || rank >= nranks)
        return fail(ncclInvalidArgument, "%s: comm is NULL or rank/nranks out of range", what);
    ncclResult_t r = from_cuda(hs_client_start(), what);
    if (r != ncclSuccess)
        return r;
    return join(comm, comm_key_of(id), rank, nranks, hs_client_get_device(), what);
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank) {
    hs_client_enter();
    return leave(init_rank(comm, nranks, &commId, rank, "ncclCommInitRank"));
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank,
                                    ncclConfig_t *config) {
    (void)config; /* blocking, CTA counts, names: nothing hysim models yet */
    hs_client_enter();
    return leave(init_rank(comm, nranks, &commId, rank, "ncclCommInitRankConfig"));
}

ncclResult_t ncclCommInitAll(ncclComm_t *comm, int ndev, const int *devlist) {
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

static ncclResult_t leave_comm(ncclComm_t comm, const char *what) {
    if (comm->left)
        return ncclSuccess;
    comm->left = 1;
    return from_cuda(hs_client_comm_destroy(comm->key, comm->rank, comm->dev), what);
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
    hs_client_enter();
    if (!comm)
        return leave(fail(ncclInvalidArgument, "%s: comm is NULL", "ncclCommFinalize"));
    return leave(leave_comm(comm, "ncclCommFinalize"));
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
    hs_client_enter();
    if (!comm)
        return leave(ncclSuccess);
    ncclResult_t r = leave_comm(comm, "ncclCommDestroy");
    free(comm);
    return leave(r);
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
    hs_client_enter();
    if (!comm)
        return leave(ncclSuccess);
    ncclResult_t r = leave_comm(comm, "ncclCommAbort");
    free(comm);
    return leave(r);
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int *count) {
    hs_client_enter();
    if (!comm || !count)
        return leave(fail(ncclInvalidArgument, "%s: comm or count is NULL", "ncclCommCount"));
    *count = comm->nranks;
    return leave(ncclSuccess);
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *device) {
    hs_client_enter();
    if (!comm || !device)
        return leave(fail(ncclInvalidArgument, "%s: comm or device is NULL", "ncclCommCuDevice"));
    *device = comm->dev;
    return leave(ncclSuccess);
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank) {
    hs_client_enter();
    if (!comm || !rank)
        return leave(fail(ncclInvalidArgument, "%s: comm or rank is NULL", "ncclCommUserRank"));
    *rank = comm->rank;
    return leave(ncclSuccess);
}

/* ---- groups and collectives ---- */

ncclResult_t ncclGroupStart(void) {
    hs_client_enter();
    t_group_depth++;
    return leave(ncclSuccess);
}

ncclResult_t ncclGroupEnd(void) {
    hs_client_enter();
    if (t_group_depth == 0)
        return leave(fail(ncclInvalidUsage, "%s: no ncclGroupStart to end", "ncclGroupEnd"));
    t_group_depth--;
    return leave(ncclSuccess);
}

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
    hs_client_enter();
    const char *what = "ncclAllReduce";
    size_t size = type_size(datatype);
    if (!comm || !size || (int)op < 0 || op >= ncclNumOps)
        return leave(fail(ncclInvalidArgument, "%s: NULL comm, or unknown data type or reduction", what));
    if (count && (hs_client_device_of(sendbuff) != comm->dev || hs_client_device_of(recvbuff) != comm->dev))
        return leave(fail(ncclInvalidArgument, "%s: buffers must be device memory of the communicator's GPU", what));
    ncclResult_t r = from_cuda(hs_client_collective(comm->key, comm->rank, comm->dev, comm->seq,
                                                    HS_COLL_ALL_REDUCE, (uint64_t)count * size, 0, stream),
                               what);
    if (r == ncclSuccess)
        comm->seq++;
    return leave(r);
}

/* ---- the device allocator ---- */

ncclResult_t ncclMemAlloc(void **ptr, size_t size) {
    hs_client_enter();
    if (!ptr)
        return leave(fail(ncclInvalidArgument, "%s: ptr is NULL", "ncclMemAlloc"));
    return leave(from_cuda(hs_client_malloc(size, ptr), "ncclMemAlloc"));
}

ncclResult_t ncclMemFree(void *ptr) {
    hs_client_enter();
    return leave(from_cuda(hs_client_free(ptr), "ncclMemFree"));
}

/* ---- not modelled yet ---- */

static ncclResult_t unsupported(const char *name, _Atomic int *said) {
    hs_client_enter();
    if (!atomic_exchange(said, 1))
        fprintf(stderr, "hysim: %s is not supported yet\n", name);
    return leave(fail(ncclInvalidUsage, "%s is not supported by hysim yet", name));
}

#define UNSUPPORTED(name)                        \
    do {                                         \
        static _Atomic int said_;                \
        return unsupported(#name, &said_);       \
    } while (0)

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"

ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) { UNSUPPORTED(ncclCommRevoke); }

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config) {
    UNSUPPORTED(ncclCommSplit);
}

ncclResult_t ncclCommShrink(ncclComm_t comm, int *excludeRanksList, int excludeRanksCount,
                            ncclComm_t *newcomm, ncclConfig_t *config, int shrinkFlags) {
    UNSUPPORTED(ncclCommShrink);
}

ncclResult_t ncclCommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank, int nId,
                                      ncclUniqueId *commIds, ncclConfig_t *config) {
    UNSUPPORTED(ncclCommInitRankScalable);
}

void ncclResetDebugInit(void) {
    static _Atomic int said;
    (void)unsupported("ncclResetDebugInit", &said);
}

ncclResult_t ncclCommRegister(const ncclComm_t comm, void *buff, size_t size, void **handle) {
    UNSUPPORTED(ncclCommRegister);
}

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void *handle) { UNSUPPORTED(ncclCommDeregister); }

ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win,
                                    int winFlags) {
    UNSUPPORTED(ncclCommWindowRegister);
}

ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
    UNSUPPORTED(ncclCommWindowDeregister);
}

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm) {
    UNSUPPORTED(ncclRedOpCreatePreMulSum);
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) { UNSUPPORTED(ncclRedOpDestroy); }

ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                        ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
    UNSUPPORTED(ncclReduce);
}

ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream) {
    UNSUPPORTED(ncclBcast);
}

ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                           int root, ncclComm_t comm, cudaStream_t stream) {
    UNSUPPORTED(ncclBroadcast);
}

ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream) {
    UNSUPPORTED(ncclReduceScatter);
}

ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
    UNSUPPORTED(ncclAllGather);
}

ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                          ncclComm_t comm, cudaStream_t stream) {
    UNSUPPORTED(ncclAlltoAll);
}

ncclResult_t ncclGather(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                        int root, ncclComm_t comm, cudaStream_t stream) {
    UNSUPPORTED(ncclGather);
}

ncclResult_t ncclScatter(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                         int root, ncclComm_t comm, cudaStream_t stream) {
    UNSUPPORTED(ncclScatter);
}

ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
    UNSUPPORTED(ncclSend);
}

ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
    UNSUPPORTED(ncclRecv);
}

ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t *simInfo) { UNSUPPORTED(ncclGroupSimulateEnd); }

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
