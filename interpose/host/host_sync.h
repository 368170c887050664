/*
 * libc's own condition variable calls, for the client core's internal waits
 * (host_sync.c wraps the exported ones so that a program's threads blocked
 * in them can count as waiting; the client's own must not be listed).
 * Private to libhysim.so.
 */
#ifndef HYSIM_INTERPOSE_HOST_SYNC_H
#define HYSIM_INTERPOSE_HOST_SYNC_H

#include <pthread.h>
#include <semaphore.h>

#include "internal.h"

HS_HIDDEN int hs_real_cond_wait(pthread_cond_t *cond, pthread_mutex_t *mutex);
HS_HIDDEN int hs_real_cond_broadcast(pthread_cond_t *cond);
/* libc's pthread_cond_clockwait, its deadline on the machine's clock (timed_waits.c wraps the exported one). */
HS_HIDDEN int hs_real_cond_clockwait(pthread_cond_t *cond, pthread_mutex_t *mutex, clockid_t clock,
                                     const struct timespec *abstime);

/*
 * pthread_cond_timedwait or pthread_cond_clockwait of a thread hysimd can
 * time (core/host_waits.c, hs_client_cond_timedwait): 1 with *rc; 0 when the caller
 * is to wait in real time (a process-shared condition variable, a CPU-time
 * clock, a deadline libc would refuse, a thread hysimd cannot see).
 */
HS_HIDDEN int hs_sync_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *mutex, clockid_t clock,
                                     const struct timespec *abstime, int *rc);

/*
 * sem_timedwait or sem_clockwait of a thread hysimd can time
 * (hs_client_sem_timedwait): 1 with *rc (0, or ETIMEDOUT); 0 when the
 * caller is to wait in real time (as hs_sync_cond_timedwait).
 */
HS_HIDDEN int hs_sync_sem_timedwait(sem_t *sem, clockid_t clock, const struct timespec *abstime, int *rc);
/* The program's pthread_mutex_lock (mutex.c), for the client core's operations on a program's mutex. */
HS_HIDDEN int hs_sync_mutex_lock(pthread_mutex_t *mutex);
/*
 * The program's mutex, held by the caller, let go with libc's unlock by a
 * caller holding the client lock (core/host_waits.c's timed waits): 1 when a thread
 * blocked on it is to be released (the caller releases it under that lock).
 */
HS_HIDDEN int hs_sync_mutex_let_go(pthread_mutex_t *mutex);

#endif
