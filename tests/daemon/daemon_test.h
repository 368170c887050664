/*
 * Harness for the hysimd protocol tests: every run forks a runner process
 * that creates the daemon, forks the "application" children and calls
 * hs_daemon_run (ns-3 allows one fabric per process, so each run gets its
 * own). Children speak the wire protocol through transport.h/frame.h and
 * report what they saw into shared memory.
 */
#ifndef HYSIM_TESTS_DAEMON_TEST_H
#define HYSIM_TESTS_DAEMON_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#include "messages.h"
#include "hysimd.h"

#define DT_MAX_CHILDREN 8
#define DT_MAX_VALUES   64

#include "test_check.h" /* CHECK fails the current process (runner, child or test) */

#define CHECK_EQ(a, b)                                                                                      \
    CHECK((uint64_t)(a) == (uint64_t)(b), "%s = %llu, expected %s = %llu", #a, (unsigned long long)(a), #b, \
          (unsigned long long)(b))

/* What one run produced. */
typedef struct dt_result {
    int rc; /* hs_daemon_run's return */
    hs_run_summary sum;
    int nchildren;
    pid_t pid[DT_MAX_CHILDREN];
    int status[DT_MAX_CHILDREN];                     /* wait statuses */
    uint64_t values[DT_MAX_CHILDREN][DT_MAX_VALUES]; /* what each child recorded */
    int nvalues[DT_MAX_CHILDREN];
    double wall_s;
} dt_result;

/* A child's body: idx is its number, values are for it to record into. */
typedef void (*dt_child_fn)(const char *endpoint, int idx, void *arg);

/* The scenario the tests' arithmetic uses (see daemon_test.c). */
void dt_scenario(hs_scenario *sc);

/* Runs the daemon with n children; the result lies in shared memory (dt_free it). */
dt_result *dt_run(const hs_scenario *sc, int nchildren, dt_child_fn fn, void *arg);
void dt_free(dt_result *r);

/* In a child: records a value the test compares later. */
void dt_record(int idx, uint64_t v);
/* In a child: how many values child idx has recorded so far (for simple handshakes). */
int dt_nvalues(int idx);

/* True when the daemon runs against the analytic test fabric. */
bool dt_fake_fabric(void);

/* One test case of a program: `PROGRAM CASE` runs it. */
typedef struct dt_case {
    const char *name;
    void (*fn)(void);
} dt_case;
#define DT_NCASES(cases) (sizeof(cases) / sizeof((cases)[0]))

/* main of a test program: runs the case argv[1] names, prints "CASE: ok" and
 * returns 0; with no such case prints the usage and the cases, returns 2. */
int dt_main(int argc, char **argv, const dt_case *cases, size_t ncases);

/* ------------------------------------------------------------- client */

typedef struct dt_client {
    int fd;
    uint64_t host_ns;
    uint32_t gpu;       /* first global GPU */
    Hysim__Setup setup; /* copy of the Register answer (strings not kept) */
    Hysim__Op **ops;
    size_t nops, capops;
} dt_client;

/* Connects and registers; checks the Setup against the scenario. */
void dt_connect(dt_client *c, const char *endpoint, uint32_t server, uint32_t first_gpu, uint32_t gpu_count,
                uint64_t host_ns);

/* Ops, buffered until the next Wait/Bye/dt_flush. `gpu` is global. */
void dt_kernel(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream);
/* A kernel a CUDA graph launch issues (Kernel.graph_node): no launch gap. */
void dt_graph_kernel(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream);
void dt_copy(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream, Hysim__CopyKind kind, uint64_t bytes,
             uint32_t peer);
/* A host<->device copy of pageable host memory. */
void dt_pageable_copy(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream, Hysim__CopyKind kind,
                      uint64_t bytes);
void dt_memset(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream, uint64_t bytes);
void dt_record_event(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream, uint64_t event);
void dt_wait_event(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream, uint64_t event);
void dt_stream_create(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream, bool non_blocking);
void dt_comm_init(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t comm, uint32_t rank, uint32_t nranks);
void dt_collective(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream, uint64_t comm, uint32_t rank,
                   uint64_t seq, Hysim__CollKind kind, uint64_t bytes);
/* Appends an op whose kind is not set (for protocol-violation tests). */
/* A collective part with a root (or Send/Recv peer) and an NCCL group number (0: none). */
void dt_collective_ex(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream, uint64_t comm, uint32_t rank,
                      uint64_t seq, Hysim__CollKind kind, uint64_t bytes, int32_t root, uint64_t group);
/* A copy between GPUs; from_peer: bytes flow peer → gpu. */
void dt_peer_copy(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream, uint64_t bytes, uint32_t peer,
                  bool from_peer);
void dt_raw_op(dt_client *c, uint64_t host_ns, uint32_t gpu);
void dt_flush(dt_client *c);

/* Wait w as given (fields dt_wait does not set); flushes first. The reply is the caller's. */
Hysim__Reply *dt_wait_msg(dt_client *c, Hysim__Wait *w);
/* A Wait; flushes first. The reply is the caller's (hysim__reply__free_unpacked). */
Hysim__Reply *dt_wait(dt_client *c, uint64_t host_ns, Hysim__Wait__Cond cond, uint32_t gpu, uint64_t stream,
                      uint64_t event, bool query, const uint64_t *timed, size_t ntimed);
/* Wait for a stream to go idle; returns now_ns (checks done and no error). */
uint64_t dt_sync_stream(dt_client *c, uint64_t host_ns, uint32_t gpu, uint64_t stream);
/* Sends m after the pending ops (no reply read). */
void dt_send(dt_client *c, const Hysim__ClientMsg *m);
/* A sleep (an UNTIL Wait) until until_ns; returns now_ns (checks done and no error). */
uint64_t dt_sleep_until(dt_client *c, uint64_t host_ns, uint64_t until_ns);
/* Reads one reply, NULL at EOF. */
Hysim__Reply *dt_read_reply(dt_client *c);
void dt_bye(dt_client *c, uint64_t host_ns, const uint64_t *peaks, size_t npeaks);
void dt_send_raw(dt_client *c, const void *bytes, size_t len);

#endif
