/*
 * hysimd background traffic: the scenario's `background:` flows and
 * generated patterns (permutation, incast), handed to the fabric as flows no
 * process waits for. They are injected lazily, in start-time order, just
 * before the fabric is stepped past their start, so the fabric sees exactly
 * what it would have seen had they all been added up front: deterministic.
 * The fabric is stepped only while the program has work in it, so background
 * traffic never keeps a run alive, and what is in flight at the end is
 * dropped.
 */
#ifndef HYSIM_BRIDGE_BACKGROUND_H
#define HYSIM_BRIDGE_BACKGROUND_H

#include <stdbool.h>
#include <stdint.h>

#include "hysim/fabric.h"
#include "hysim/scenario.h"

struct hs_daemon;
struct hs_background;

/* Background flow ids start here: far above any id the daemon counts up to. */
#define HS_BG_FLOW_BASE (UINT64_C(1) << 62)

static inline bool hs_bg_is_flow(uint64_t id) { return id >= HS_BG_FLOW_BASE; }

/* NULL when the scenario has no background traffic. */
struct hs_background *hs_bg_create(const hs_scenario *sc);
void hs_bg_free(struct hs_background *bg);

/*
 * Hands the fabric every background flow that starts at or before the
 * fabric's time; returns the start of the next one (UINT64_MAX: none left),
 * which the caller must not step the fabric past. 0, or -1 after failing the run.
 */
int hs_bg_inject(struct hs_daemon *d, uint64_t *next_ps);

/* A background flow completed. */
void hs_bg_flow_done(struct hs_daemon *d, const hs_flow_done *done);

/* Background flows in the fabric now. */
uint64_t hs_bg_in_flight(const struct hs_daemon *d);

/* Background flows injected / completed so far. */
uint64_t hs_bg_injected(const struct hs_daemon *d);

#endif
