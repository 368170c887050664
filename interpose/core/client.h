/*
 * The interposer's client core (libhysim.so), as the replacement libraries
 * (libcudart.so.13, libcuda.so.1, libnccl.so.2) see it.
 *
 * The core owns everything a process shares between those libraries: the
 * connection to hysimd (connected lazily, Register → Setup), the batch of
 * pending operations, the host clock, the current device, streams, events,
 * kernels and the virtual device memory. One mutex guards it; every function
 * here is thread-safe.
 *
 * Results are cudaError_t values (the richest error set of the three APIs);
 * libnccl.so.2 and libcuda.so.1 map them to their own codes.
 *
 * Stream handles are cudaStream_t values: NULL and cudaStreamLegacy name the
 * legacy default stream of a device (stream 0 on the wire), cudaStreamPerThread
 * the calling thread's default stream of that device, anything else a handle
 * from hs_client_stream_create. Event and kernel handles come from this core.
 */
#ifndef HYSIM_INTERPOSE_CLIENT_H
#define HYSIM_INTERPOSE_CLIENT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <driver_types.h>

#include "hysim/coll_kind.h"

#define HS_API __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Every exported CUDA and NCCL entry point calls hs_client_enter first and
 * hs_client_leave last: the host clock advances at the entry of the outermost
 * intercepted call by the host time since the previous one returned
 * (docs/time.md).
 */
HS_API void hs_client_enter(void);
HS_API void hs_client_leave(void);
/* Sleeps ns of real time, whatever the clocks read (libc's nanosleep; signals do not cut it short). */
HS_API void hs_client_real_sleep_ns(uint64_t ns);
/*
 * libc's pthread_mutex_lock and pthread_mutex_unlock, for hysim's own
 * mutexes: its libraries are built with those two renamed to these
 * (interpose/CMakeLists.txt), as the exported ones (mutex.c) are the
 * program's, whose blocked threads count as waiting.
 */
HS_API int hs_client_own_mutex_lock(pthread_mutex_t *mutex);
HS_API int hs_client_own_mutex_unlock(pthread_mutex_t *mutex);
/* libc's syscall, which hysim's own libraries call instead of the exported one (futex.c). */
HS_API long hs_client_own_syscall(long number, ...);

/*
 * Connects to hysimd on the first call (HYSIM_ENDPOINT) and returns
 * cudaSuccess once the Setup arrived. cudaErrorNoDevice when the process
 * runs outside `hysim run` (the message is printed once) or hysimd refused
 * it; cudaErrorCudartUnloading after the process said Bye at exit.
 * A lost connection never returns: it prints why and exits with status 1.
 */
HS_API cudaError_t hs_client_start(void);

/* What Setup said about the simulated GPUs (valid after hs_client_start). */
typedef struct hs_gpu_info {
    char model[256];
    uint64_t memory_bytes; /* per GPU */
    int sm_count;
    int cc_major, cc_minor;
    int device_count;       /* local devices this process sees */
    uint32_t server;        /* HYSIM_SERVER */
    uint32_t first_gpu;     /* global index of local device 0 */
    uint32_t visible_first; /* local device 0's index in its server (CUDA_VISIBLE_DEVICES) */
    uint32_t gpus_per_server;
    uint32_t total_gpus;
    double nvlink_gbps; /* each way, per GPU, to the NVSwitch plane; 0: no NVLink */
} hs_gpu_info;

HS_API const hs_gpu_info *hs_client_gpu_info(void);
/* A local device's UUID (cudaDeviceProp.uuid, cuDeviceGetUuid): unique in the scenario. */
HS_API void hs_client_gpu_uuid(int dev, unsigned char out[16]);

/* Current device of the calling thread (0 until set). */
HS_API int hs_client_get_device(void);
HS_API cudaError_t hs_client_set_device(int device);
/* Whether the device's primary context is set up (the driver's cuDevicePrimaryCtxGetState); set or
 * clear it (cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxReset). */
HS_API int hs_client_primary_active(int device);
HS_API void hs_client_set_primary_active(int device, int active);
/* The calling thread's stack of current contexts, by device (the driver's cuCtx*Current): the top's
 * device or -1; set replaces the top (-1 pops it), push and pop; each makes the new top's device the
 * runtime's current one. hs_client_set_device is set. */
HS_API int hs_client_ctx_current(void);
HS_API cudaError_t hs_client_ctx_set(int device);
HS_API cudaError_t hs_client_ctx_push(int device);
HS_API int hs_client_ctx_pop(void);

/*
 * Device attribute by cudaDeviceAttr number (the driver's CUdevice_attribute
 * uses the same numbers): cudaErrorInvalidDevice for a bad device,
 * cudaErrorInvalidValue for an attribute hysim does not model.
 */
HS_API cudaError_t hs_client_device_attribute(int attr, int device, int *value);

/* ---- memory ---- */
HS_API cudaError_t hs_client_malloc(size_t size, void **ptr); /* current device */
HS_API cudaError_t hs_client_free(void *ptr);                 /* synchronises its device */
/* cudaMallocAsync's allocation on a given device; cudaErrorInvalidDevice for a bad one. */
HS_API cudaError_t hs_client_malloc_on(int device, size_t size, void **ptr);
/* Frees an allocation's start without waiting (cudaFreeAsync); cudaErrorInvalidValue otherwise. */
HS_API cudaError_t hs_client_free_unordered(void *ptr);
HS_API cudaError_t hs_client_mem_info(size_t *free_bytes, size_t *total_bytes);
/* The same for local device dev, and the bytes allocated on it (cudaErrorInvalidDevice for a bad one). */
HS_API cudaError_t hs_client_mem_info_on(int dev, size_t *free_bytes, size_t *total_bytes, size_t *used_bytes);
/* real, page-aligned; flags as cudaHostGetFlags reports them */
HS_API cudaError_t hs_client_host_alloc(size_t size, unsigned flags, void **ptr);
HS_API cudaError_t hs_client_host_free(void *ptr);
/* Local device whose reserved range holds ptr, or whose managed allocation does (managed_memory.h), or -1 (host memory). */
HS_API int hs_client_device_of(const void *ptr);
/* Start of the cudaMallocHost / cudaHostAlloc block or cudaHostRegister'ed range holding ptr, or NULL. */
HS_API void *hs_client_host_block(const void *ptr);
/* cudaHostRegister / cudaHostUnregister (their CUDA errors: already / not registered). */
HS_API cudaError_t hs_client_host_register(void *ptr, size_t size, unsigned flags);
HS_API cudaError_t hs_client_host_unregister(void *ptr);
/* The flags of the pinned block or registered range holding ptr; cudaErrorInvalidValue for other memory. */
HS_API cudaError_t hs_client_host_flags(const void *ptr, unsigned *flags);

/*
 * A copy: kind as cudaMemcpyKind (cudaMemcpyDefault resolved from the
 * pointers). synchronous != 0 waits for the stream as cudaMemcpy does
 * (except device to device). A host side that is neither pinned, registered
 * nor managed is pageable: the host stages it, at pcie.pageable_gbps
 * instead of the copy engines' pcie.copy_gbps. how, of HS_COPY_*:
 *   WRITE_HOST     device→host copies write zeros into dst, host→host
 *                  copies really copy (else the op is only timed);
 *   HOLD_PAGEABLE  a pageable host side holds the caller until the copy is
 *                  done, as cudaMemcpyAsync of pageable memory returns;
 *   AS_PINNED      the copy engines' rate whatever the host pointer (a
 *                  managed prefetch's migration).
 * (Copies to or from managed memory really move its data too: the runtime
 * layer does that, cudart_managed.c.)
 */
#define HS_COPY_WRITE_HOST    1u
#define HS_COPY_HOLD_PAGEABLE 2u
#define HS_COPY_AS_PINNED     4u
HS_API cudaError_t hs_client_copy(void *dst, const void *src, size_t count, int kind, cudaStream_t stream,
                                  int synchronous, unsigned how);
/* A 2D copy's op: count bytes in `rows` equal rows (rows divides count), how as hs_client_copy's but
 * host memory left as it is (cudart_pitched.c writes the rows); not for a capturing stream. */
HS_API cudaError_t hs_client_copy_2d(void *dst, const void *src, size_t count, size_t rows, int kind,
                                     cudaStream_t stream, int synchronous, unsigned how);
/* The runtime's cudaMemcpy family: hs_client_copy with WRITE_HOST and HOLD_PAGEABLE. */
HS_API cudaError_t hs_client_memcpy(void *dst, const void *src, size_t count, int kind, cudaStream_t stream,
                                    int synchronous);
HS_API cudaError_t hs_client_memset(void *ptr, size_t count, cudaStream_t stream);
/* A 2D memset's op: count bytes in `rows` equal rows (cudaMemset2D). */
HS_API cudaError_t hs_client_memset_2d(void *ptr, size_t count, size_t rows, cudaStream_t stream);

/* ---- streams and events ---- */
HS_API cudaError_t hs_client_stream_create(unsigned int flags, int priority, cudaStream_t *out);
HS_API cudaError_t hs_client_stream_destroy(cudaStream_t stream);
/*
 * A stream's device, creation flags and priority. The default streams are
 * the current device's, blocking (flags 0), priority 0.
 * cudaErrorInvalidResourceHandle for an unknown handle.
 */
/* cudaStreamGetId: unique in the process, the legacy and per-thread streams included. */
HS_API cudaError_t hs_client_stream_id(cudaStream_t stream, unsigned long long *id);
HS_API cudaError_t hs_client_stream_info(cudaStream_t stream, int *dev, unsigned *flags, int *priority);
HS_API cudaError_t hs_client_stream_synchronize(cudaStream_t stream);
HS_API cudaError_t hs_client_stream_query(cudaStream_t stream);
HS_API cudaError_t hs_client_stream_wait_event(cudaStream_t stream, cudaEvent_t event);
HS_API cudaError_t hs_client_event_create(unsigned int flags, cudaEvent_t *out);
HS_API cudaError_t hs_client_event_destroy(cudaEvent_t event);
HS_API cudaError_t hs_client_event_record(cudaEvent_t event, cudaStream_t stream);
HS_API cudaError_t hs_client_event_query(cudaEvent_t event);
HS_API cudaError_t hs_client_event_synchronize(cudaEvent_t event);
HS_API cudaError_t hs_client_event_elapsed(float *ms, cudaEvent_t start, cudaEvent_t stop);
HS_API cudaError_t hs_client_device_synchronize(void);
HS_API cudaError_t hs_client_device_reset(void);

/* ---- kernels ---- */
/* Registration never connects; the name is copied. module groups kernels for unregistering. */
HS_API void hs_client_kernel_register(const void *module, const void *host_fun, const char *device_name);
HS_API void hs_client_module_unregister(const void *module);
/* Kernel handle for a host stub, or NULL when none is registered. */
HS_API void *hs_client_kernel_find(const void *host_fun);
/* The device function name a registered kernel's host stub stands for (cudaFuncGetName), or NULL. */
HS_API const char *hs_client_kernel_name(const void *host_fun);
/* args: the launch's arguments (cudaLaunchKernel's), for the kernels whose values hysim computes; NULL: none. */
HS_API cudaError_t hs_client_launch(void *kernel, const unsigned grid[3], const unsigned block[3], size_t shared_bytes,
                                    cudaStream_t stream, void *const *args);
/*
 * 1 while the calling thread issues a CUDA graph's nodes, 0 after: its
 * kernels are marked graph nodes (hysim.proto Kernel.graph_node), which a GPU
 * runs without a stream launch's gap.
 */
HS_API void hs_client_graph_launch(int on);

/*
 * A library GEMM (libcublas.so.13, libcublasLt.so.13): one kernel on `stream`
 * that hysimd times by its shape (hysim.proto Gemm). name must outlive the
 * process (a string literal).
 */
typedef struct hs_gemm_call {
    uint64_t m, n, k, batch;
    int dtype;              /* hysim.proto GemmDtype */
    uint64_t lda, ldb, ldc; /* leading dimensions (elements); 0: not known */
} hs_gemm_call;
HS_API cudaError_t hs_client_gemm(const char *name, const hs_gemm_call *g, cudaStream_t stream);
/* A cuRAND generation (hysim.proto RandomGeneration): hysimd times it (bridge/compute/random_time.c). */
typedef struct hs_random_generation {
    uint32_t generator; /* hysim.proto RngGenerator */
    uint32_t output;    /* hysim.proto RngOutput */
    uint64_t count;     /* numbers generated */
    int first;          /* the generator's first generation since it was created or seeded */
} hs_random_generation;
/* A generation as one kernel named name (a string that outlives the process's ops: a literal); a
 * profile database entry under name with a 1 x 1 x 1 grid and block wins over the model. */
HS_API cudaError_t hs_client_random_kernel(const char *name, const hs_random_generation *r, cudaStream_t stream);
/* A library kernel hysim has no model for (name as for hs_client_random_kernel): timed by a profile
 * database entry under name with a 1 x 1 x 1 grid and block, else by the per-kernel default. */
HS_API cudaError_t hs_client_library_kernel(const char *name, cudaStream_t stream);

/* ---- NCCL ---- */

/* One rank (on local device `device`) joins / leaves communicator comm_key. */
HS_API cudaError_t hs_client_comm_init(uint64_t comm_key, int rank, int nranks, int device);
HS_API cudaError_t hs_client_comm_destroy(uint64_t comm_key, int rank, int device);
/*
 * A small collective part's send bytes (hysim.proto Collective.values): NCCL's
 * datatype and reduction numbers, and the bytes (zeros where unknown).
 */
typedef struct hs_coll_values {
    const void *bytes;
    size_t len;
    int dtype, redop;
} hs_coll_values;
/*
 * One rank's part of a collective on `stream` (NULL: the legacy stream of
 * `device`); cudaErrorInvalidValue when the stream belongs to another device.
 * group: the NCCL group it was issued in, 0 for none; algo, proto: NCCL_ALGO
 * and NCCL_PROTO as numbered in hysim.proto's Collective, 0 when unset.
 * values (NULL: none): the part's send bytes; *carried (may be NULL) says
 * whether hysimd got them (not in a stream capture), so that the rank's
 * receive bytes can be asked for with hs_client_coll_values.
 */
HS_API cudaError_t hs_client_collective(uint64_t comm_key, int rank, int device, uint64_t seq, enum hs_coll_kind kind,
                                        uint64_t bytes, int root, uint64_t group, uint32_t algo, uint32_t proto,
                                        cudaStream_t stream, const hs_coll_values *values, int *carried);
/*
 * Rank's receive bytes of collective (comm_key, seq), computed by hysimd from
 * every rank's send bytes once all have come, or with peer >= 0 of its Recv
 * number seq from peer, once the Send came (the caller blocks until then):
 * 1 with n bytes in dst, 0 when they are not known.
 */
HS_API int hs_client_coll_values(uint64_t comm_key, uint64_t seq, uint32_t rank, int peer, void *dst, size_t n);
/* One rank's ncclCommSplit call, and its answer (hysim.proto SplitCall, SplitRank). */
typedef struct hs_split_call {
    int rank, color, key;
} hs_split_call;
typedef struct hs_split_result {
    int none;
    uint64_t comm_key;
    int rank, nranks;
} hs_split_result;
/*
 * How many ranks of communicator parent_key (of parent_nranks) this process
 * holds, as hysimd knows them after the pending ops: *complete = 1 and *mine
 * once every rank has joined, in any process; *complete = 0 before. Answered
 * at once; the host clock does not move.
 */
HS_API cudaError_t hs_client_comm_local_ranks(uint64_t parent_key, int parent_nranks, int *complete, int *mine);
/*
 * The gen-th split of parent_key, for this process's ranks (calls[0..n)):
 * sends them after the pending ops and blocks until hysimd has every parent
 * rank's call; out[i] answers calls[i]. Advances the host clock to the answer.
 */
HS_API cudaError_t hs_client_comm_split(uint64_t parent_key, int parent_nranks, uint64_t gen, size_t n,
                                        const hs_split_call *calls, hs_split_result *out);

/* ---- stream capture (CUDA graphs: libcudart.so.13's cudart_graphs.c) ---- */

/* Work for one stream, as the calls above were given it, before it becomes an op. */
enum hs_stream_op_kind {
    HS_SOP_KERNEL,
    HS_SOP_GEMM,
    HS_SOP_COPY,
    HS_SOP_MEMSET,
    HS_SOP_EVENT_RECORD,
    HS_SOP_WAIT_EVENT,
    HS_SOP_COLLECTIVE,
    HS_SOP_HOST,    /* a host function (cudaLaunchHostFunc, a graph's host node): cudart_graphs.c runs it */
    HS_SOP_LIBRARY, /* a library kernel without a GEMM (hs_client_library_kernel, hs_client_random_kernel) */
};
typedef struct hs_stream_op {
    enum hs_stream_op_kind kind;
    cudaStream_t stream;
    union {
        struct {
            void *kernel;
            unsigned grid[3], block[3];
            size_t shared;
        } kernel;
        struct {
            const char *name;
            hs_gemm_call g;
        } gemm;
        /* rows > 1: a 2D copy of count / rows bytes a row, its rows dpitch and spitch bytes apart */
        struct {
            void *dst;
            const void *src;
            size_t count;
            int kind;
            size_t rows, dpitch, spitch;
        } copy;
        struct {
            void *ptr;
            size_t count, rows;
        } memset;          /* rows: a 2D memset's (0 or 1: one range) */
        cudaEvent_t event; /* EVENT_RECORD, WAIT_EVENT */
        struct {
            cudaHostFn_t fn;
            void *data;
        } host;
        struct {
            const char *name;
            int random; /* a cuRAND generation, as r says */
            hs_random_generation r;
        } library;
        struct {
            uint64_t comm_key, seq, bytes, group;
            int rank, device, root;
            enum hs_coll_kind kind;
            uint32_t algo, proto;
        } coll;
    } u;
} hs_stream_op;

/* Calls that a capture in progress may forbid (cudaErrorStreamCaptureUnsupported). */
enum hs_capture_check {
    HS_CHECK_STREAM_SYNC, /* synchronize or query `stream` */
    HS_CHECK_UNSAFE,      /* a call that may synchronise implicitly: cudaMalloc, cudaFree, cudaMemcpy, device sync */
};

typedef struct hs_capture_hooks {
    /*
     * Called for every stream op before it is issued: 1 when the capture took
     * it (into a graph, or refused it), with *err what the call returns; 0 to
     * issue it, possibly with op->u.coll.seq renumbered.
     */
    int (*divert)(hs_stream_op *op, cudaError_t *err);
    /* cudaSuccess, or the error the call returns because of a capture in progress. */
    cudaError_t (*check)(enum hs_capture_check what, cudaStream_t stream);
} hs_capture_hooks;

/* Installs the hooks (once, before the first capture begins; they stay). */
HS_API void hs_client_set_capture_hooks(const hs_capture_hooks *hooks);

#ifdef __cplusplus
}
#endif
#endif
