/*
 * What the client core's files share (client.c and the files beside it):
 * the process's connection state, its pending ops, its streams, events and
 * kernels, and the functions one file calls in another. Private to
 * libhysim.so: nothing here is exported.
 */
#ifndef HYSIM_INTERPOSE_CLIENT_INTERNAL_H
#define HYSIM_INTERPOSE_CLIENT_INTERNAL_H

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
#include "messages.h"
#include "hysim/scenario.h"
#include "host_sync.h"
#include "grouped_gemm.h"
#include "internal.h"
#include "kernel_values.h"
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
    hs_kv_model values;   /* what it computes, if hysim computes it (kernel_values.h) */
    hs_gg_kernel grouped; /* its part in a grouped GEMM, if any (grouped_gemm.h) */
} hs_kernel;

typedef struct pending_op {
    Hysim__Op op;
    union {
        Hysim__Kernel kernel;
        struct {
            Hysim__Kernel kernel;
            Hysim__Gemm gemm;
            Hysim__RandomGeneration random;
        } gemm; /* a library kernel: a Kernel carrying a GEMM's shape or a generation's numbers */
        struct {
            Hysim__Kernel kernel;
            Hysim__GroupedGemm grouped;
            uint32_t sizes[HS_GG_MAX_GROUPS];
        } grouped; /* torch's grouped GEMM: a Kernel carrying its groups' products */
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

#define LOCK()       lock_client()
#define UNLOCK()     unlock_client()
#define CAPTURE_ON() (atomic_load_explicit(&g_capture, memory_order_relaxed) != NULL)

typedef struct reply_slot {
    uint64_t id; /* Wait.id; 0 for a CommSplit (at most one: it holds g_lock) */
    Hysim__Reply *reply;
    struct reply_slot *next; /* g_slots: newest first */
} reply_slot;

#define HS_FIRST_WORK_GRACE_NS 250000000ull

extern pthread_mutex_t g_lock;
extern _Atomic int g_state;
extern hs_gpu_info g_info;
extern pending_op g_ops[HS_BATCH_MAX];
extern Hysim__Op *g_op_ptrs[HS_BATCH_MAX];
extern size_t g_nops;
extern uint64_t g_next_stream;
extern uint64_t g_next_event;
extern uint64_t g_kernels_launched;
extern uint64_t g_issued;
extern hs_ptrmap g_streams;
extern hs_ptrmap g_events;
extern hs_ptrmap g_kernels;
extern hs_ptrmap g_kernel_handles;
extern hs_ptrmap g_pinned;
extern hs_ptrmap g_registered;
extern hs_ptrmap g_host_flags;
extern __thread int t_device;
extern __thread int t_works;
extern int g_any_work;
extern __thread int t_joining;
extern uint32_t g_fresh;
extern uint64_t g_fresh_expired;
extern uint64_t g_quiet_starts;
extern uint64_t g_quiet_starts_awaited;
extern uint64_t g_start_grace_given;
extern hs_thread *g_joins;
extern uint32_t g_threads;
extern int g_threads_said;
extern uint32_t g_said;
extern int g_said_outside;
extern uint32_t g_nlisted_io;
extern uint32_t g_quiet_live;
extern uint32_t g_quiet_parked;
extern uint32_t g_work_parked;
extern uint32_t g_spin_outside;
extern uint32_t g_spin_works;
extern hs_parked *g_parked;
extern _Atomic int g_nlisted;
extern pthread_key_t g_works_key;
extern __thread uint64_t *t_ptds;
extern __thread int t_graph_launch;
extern __thread int t_wait_blocked;
extern pthread_key_t g_ptds_key;
extern __thread int t_holds_lock;
extern __thread int t_awaiting;
extern const hs_capture_hooks *_Atomic g_capture;
extern uint64_t g_next_wait_id;

/* client.c */
void lock_client(void);
void unlock_client(void);
int captured(hs_stream_op *op, cudaError_t *e);
cudaError_t capture_check(enum hs_capture_check what, cudaStream_t stream);
void *xcalloc(size_t n, size_t size);
void send_locked(const Hysim__ClientMsg *m);
void expect_reply_locked(reply_slot *slot, uint64_t id);
Hysim__Reply *await_reply(reply_slot *slot);
void flush_locked(void);
void print_daemon_error(const char *error);

/* ops.c */
uint32_t global_gpu(int dev);
uint32_t counted_threads_locked(void);
int all_outside_locked(void);
void send_threads_locked(uint64_t exited);
void join_locked(void);
void thread_left(void *unused);
pending_op *append_locked(int dev, uint64_t stream);
void commit_locked(void);
void send_wait_begin_locked(Hysim__Wait *w, reply_slot *slot);
cudaError_t send_wait_end_locked(const Hysim__Wait *w, Hysim__Reply *r, Hysim__Reply **out);
cudaError_t send_wait_locked(Hysim__Wait *w, Hysim__Reply **out);
void await_first_work_locked(uint64_t length_ns, const int *woken);
cudaError_t wait_locked(Hysim__Wait__Cond cond, int dev, uint64_t stream, uint64_t event, int query, uint64_t *timed,
                        size_t ntimed, Hysim__Reply **out);
cudaError_t query_locked(Hysim__Wait__Cond cond, int dev, uint64_t stream, uint64_t event);

/* host_waits.c */
void expire_fresh_locked(void);
void send_ready_joins_locked(void);
void wake_timed_locked(const void *key, unsigned max);
void tell_counted_locked(void);
void count_parked_locked(const hs_parked *p, int delta);

/* devices.c */
int valid_device(int dev);
void note_primary_active(int dev);
void bind_primary(void);

/* streams.c */
void free_ptds(void *p);
cudaError_t resolve_stream_locked(cudaStream_t s, int dflt, int *dev, uint64_t *id);
void charge_sync(cudaError_t e);
hs_event *event_locked(cudaEvent_t ev);

#endif
