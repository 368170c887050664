/*
 * The program's threads as the client core sees them (threads.c): libhysim.so
 * wraps pthread_create, pthread_join, pthread_timedjoin_np and
 * pthread_clockjoin_np, so that a thread that issued GPU work and blocks in a
 * join of another such thread waits in hysimd (a THREAD_EXIT Wait) instead
 * of counting as running, and a timed join's deadline is read in simulated
 * time. Private to libhysim.so; nothing here is exported.
 */
#ifndef HYSIM_INTERPOSE_THREADS_H
#define HYSIM_INTERPOSE_THREADS_H

#include <pthread.h>
#include <stdint.h>

#include "internal.h"

/*
 * A thread started by pthread_create while the process runs under hysim.
 * Lives until its thread has exited and no pthread_join holds it.
 */
typedef struct hs_thread {
    /* threads.c, under its own lock */
    pthread_t self;
    void *(*start)(void *);
    void *arg;
    int refs;               /* its creator until listed, its thread until it exits, each join in progress */
    int listed, gone;       /* findable by pthread_t; exited (never listed again) */
    uint64_t exit_ns;       /* once gone: the host clock (hs_clock_now) when it exited */
    struct hs_thread *next;
    /* client.c, under the client lock */
    uint64_t id;            /* Wait.thread / Threads.exited: unique in the process, never 0 */
    int worked;             /* it issued work (an op or a Wait) */
    int fresh;              /* created by a thread that had issued work; has issued none yet */
    int exited;             /* it exited */
    int joiner;             /* a thread that issued work blocks in pthread_join of it */
    void *join_wait;        /* the joiner's THREAD_EXIT Wait, once sent (client.c's reply slot) */
    struct hs_thread *next_join; /* joins whose Wait is not sent yet */
} hs_thread;

/* The calling thread's record, or NULL (the main thread, threads started before hysim knew). */
HS_HIDDEN hs_thread *hs_thread_self(void);

/* libc's pthread_create, for the client core's own threads (not wrapped, not counted). */
HS_HIDDEN int hs_thread_create_untracked(pthread_t *thread, const pthread_attr_t *attr,
                                         void *(*start)(void *), void *arg);

/* ---- client.c, called by threads.c ---- */

/* t is about to be started by the calling thread. */
HS_HIDDEN void hs_client_thread_created(hs_thread *t);
/* t exits (called by t as its thread-specific data is destroyed), or failed to start (by its creator). */
HS_HIDDEN void hs_client_thread_exit(hs_thread *t);
/*
 * The calling thread is about to block in a join of t (pthread_join, or a
 * timed join waiting for t's exit): 1 when hysimd is told (a thread that
 * issued work joins one that has not exited): then hs_client_join_end must
 * follow once t has exited.
 */
HS_HIDDEN int hs_client_join_begin(hs_thread *t);
/* After t has exited (the real pthread_join returned): awaits the THREAD_EXIT Wait's answer, if one was sent. */
HS_HIDDEN void hs_client_join_end(hs_thread *t);

#endif
