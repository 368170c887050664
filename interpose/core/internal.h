/*
 * Private to the client core (libhysim.so): the host clock, the virtual
 * device memory and a small pointer map. Nothing here is exported.
 */
#ifndef HYSIM_INTERPOSE_INTERNAL_H
#define HYSIM_INTERPOSE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "client.h"

#define HS_HIDDEN __attribute__((visibility("hidden")))

/* ---- next_symbol.c ---- */

/* The next definition of name after libhysim.so's, libc's (version NULL: the default one), or NULL. */
HS_HIDDEN void *hs_next_symbol(const char *name, const char *version);

/* ---- client.c ---- */

/* How often a process that never registered looks whether its run is still there (real time). */
#define HS_RUN_CHECK_NS 1000000000ull
/* In a process that never registered: exits, saying why, once hysim run (HYSIM_RUN_PID) is gone. Cheap
 * otherwise: called at every intercepted call. */
HS_HIDDEN void hs_client_check_run(void);
/* The calling thread spins waiting for another process (sleep.c, sched_yield): it counts as blocked outside
 * hysimd until its next intercepted call, where hs_client_enter calls hs_client_spin_return. */
HS_HIDDEN void hs_client_spin_outside(void);
HS_HIDDEN void hs_client_spin_return(void);
extern __thread int t_spin_outside; /* this thread spins outside (hs_client_spin_outside) */

/* ---- host_clock.c ---- */

/* True when the process runs under hysim (HYSIM_ENDPOINT was set at start). */
HS_HIDDEN int hs_clock_simulated(void);
/* The process's host clock, ns of simulated time. */
HS_HIDDEN uint64_t hs_clock_now(void);
/*
 * The clock as a message sent now carries it (message_clocks.c): under host
 * time real and scaled, with the CPU time since the thread's last call
 * credited first; no call's fixed cost is added.
 */
HS_HIDDEN uint64_t hs_clock_sending_now(void);
/* clock = max(clock, ns): a Wait's answer. */
HS_HIDDEN void hs_clock_advance_to(uint64_t ns);
/*
 * How long after the clock's present reading an op the calling thread issues
 * now reaches its GPU (Op.reach_ns): what its call still costs the host and
 * the submission latency, where the mode counts the calls' costs; else 0.
 */
HS_HIDDEN uint64_t hs_clock_reach_ns(void);
/* A Wait that blocked was answered at answer_ns: the host sees it the wake latency later (same modes). */
HS_HIDDEN void hs_clock_woke(uint64_t answer_ns);
/* Whether clock id reads the simulated clock (monotonic and real-time clocks, under hysim). */
HS_HIDDEN int hs_clock_reads_simulated(clockid_t id);
/*
 * An absolute time on clock id, as the program computed it from that clock's
 * simulated reading, as a host clock reading (hs_clock_now): less the epoch
 * on real-time clocks. 0 for times before the clock's start, UINT64_MAX for
 * ones beyond it. abstime's tv_nsec must lie in [0, 1e9).
 */
HS_HIDDEN uint64_t hs_clock_host_deadline(clockid_t id, const struct timespec *abstime);
/* libc's own reading of clock id, ns (real time, not the simulated clock). */
HS_HIDDEN uint64_t hs_clock_real_ns(clockid_t id);
/*
 * The calling thread was idle since its last intercepted call, blocked or
 * spinning where nothing interposes (an OpenMP worker in libgomp's pool):
 * under host_time real and scaled, that time is not host time.
 */
HS_HIDDEN void hs_clock_thread_was_idle(void);
/* The descriptor of the connection to hysimd (-1: none), whose frames are not the program's messages. */
HS_HIDDEN int hs_client_connection_fd(void);
/* How many ops and messages the process has issued to hysimd: one more each (client.c). */
HS_HIDDEN uint64_t hs_client_issued(void);
/*
 * What a spin check compares (client.c's repeated queries, host_clock.c's
 * clock reads): the process's host clock and hs_client_issued() when taken.
 */
typedef struct hs_quiet_mark {
    uint64_t host_ns, issued;
} hs_quiet_mark;
/* Takes *m now. */
HS_HIDDEN void hs_quiet_mark_take(hs_quiet_mark *m);
/* Whether nothing happened since *m was taken: the clock reads as then and nothing was issued. */
HS_HIDDEN int hs_quiet_since(const hs_quiet_mark *m);

/* ---- sleeps: sleep.c, and client.c's part ---- */

enum hs_sleep {
    HS_SLEEP_DONE, /* the host clock reads the sleep's end: return */
    HS_SLEEP_REAL, /* the thread's time is not the clock's to move: sleep in real time */
};
/* Sleeps until the host clock reads until_ns, in simulated time where that is sound (client.c). */
HS_HIDDEN enum hs_sleep hs_client_sleep_until(uint64_t until_ns);
/*
 * Setup's host-time settings (enum hs_host_time values); used only for what
 * HYSIM_HOST_TIME / HYSIM_EPOCH_NS did not set.
 */
HS_HIDDEN void hs_clock_apply_setup(uint32_t host_time, double scale, uint64_t fixed_ns, uint64_t epoch_ns);

/* ---- device_memory.c (callers hold the client lock, except hs_devmem_device_of) ---- */

/* Reserves one inaccessible range of `capacity` bytes per device. -1 with err on failure. */
HS_HIDDEN int hs_devmem_init(int ndevices, uint64_t capacity, char *err, size_t errlen);
/* 256-byte aligned first fit; NULL when the device is full (size 0 is never asked). */
HS_HIDDEN void *hs_devmem_alloc(int device, size_t size);
/* Whether ptr is the start of an allocation (a managed one too). */
HS_HIDDEN int hs_devmem_is_allocation(const void *ptr);
/* Frees an allocation's start address (a managed one: its host memory and its extent); -1 when ptr is not one. */
HS_HIDDEN int hs_devmem_free(void *ptr);
/*
 * Device whose range holds ptr, or whose managed allocation holds it
 * (managed_memory.h), or -1. Needs no client lock: ranges never change after
 * init, and the managed table has a lock of its own.
 */
HS_HIDDEN int hs_devmem_device_of(const void *ptr);
/* Frees every allocation of a device (cudaDeviceReset). */
HS_HIDDEN void hs_devmem_reset(int device);
HS_HIDDEN uint64_t hs_devmem_used(int device);
HS_HIDDEN uint64_t hs_devmem_peak(int device);
HS_HIDDEN int hs_devmem_ndevices(void);

/* ---- ptrmap.c: open-addressing map from a non-zero key to a value ---- */

typedef struct hs_ptrmap {
    uintptr_t *keys;
    uintptr_t *vals;
    size_t cap, len;
} hs_ptrmap;

/* Returns the value, or 0 when the key is absent. */
HS_HIDDEN uintptr_t hs_ptrmap_get(const hs_ptrmap *m, uintptr_t key);
/* Inserts or replaces; aborts on allocation failure (a map of handles cannot degrade). */
HS_HIDDEN void hs_ptrmap_put(hs_ptrmap *m, uintptr_t key, uintptr_t val);
/* Removes the key and returns its value (0 when absent). */
HS_HIDDEN uintptr_t hs_ptrmap_del(hs_ptrmap *m, uintptr_t key);
HS_HIDDEN void hs_ptrmap_clear(hs_ptrmap *m);

/* Iteration: for (size_t i = 0; i < m->cap; i++) if (m->keys[i]) ... */

#endif
