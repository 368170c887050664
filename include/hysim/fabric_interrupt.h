/*
 * hysim fabric: a way to cut a long hs_fabric_next_completion short.
 *
 * One call can simulate for minutes of wall time (a large collective in fine
 * segments), and the caller must still react within about a second to a stop
 * signal or to a program process that died. The fabric's event loop calls the
 * hook every HS_FABRIC_INTERRUPT_EVERY events in the process that set it (not
 * in a worker process forked from it); when the hook returns nonzero, the
 * current hs_fabric_next_completion returns 0 at once with the fabric's time
 * short of its limit, which breaks the stepping contract (include/hysim/
 * fabric.h) on purpose: the caller then ends the run and steps no further.
 * Normal runs never see it, so results do not depend on it.
 */
#ifndef HYSIM_FABRIC_INTERRUPT_H
#define HYSIM_FABRIC_INTERRUPT_H

#ifdef __cplusplus
extern "C" {
#endif

#define HS_FABRIC_INTERRUPT_EVERY 4096

typedef int (*hs_fabric_interrupt_fn)(void *ctx);

/* Sets the hook (NULL: none). Clear it before hs_fabric_destroy. */
void hs_fabric_set_interrupt(hs_fabric_interrupt_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif

#endif
