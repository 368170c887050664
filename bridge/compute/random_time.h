/*
 * How long a cuRAND generation takes (docs/compute.md): a fixed cost plus
 * the count at the generator's and output's rate, and on a generator's first
 * generation the set-up of its states, as measured on a real H100 and H200
 * (bench/RESULTS.md, "cuRAND"). The interposer's libcurand sends what it
 * generates (hysim.proto RandomGeneration); this times it.
 */
#ifndef HYSIM_BRIDGE_RANDOM_TIME_H
#define HYSIM_BRIDGE_RANDOM_TIME_H

#include <stdint.h>

#include "hysim.pb-c.h"

/* The generation's GPU time in ns on a GPU named gpu_model (an H200's costs for an H200, else an H100's). */
uint64_t hs_random_time_ns(const char *gpu_model, const Hysim__RandomGeneration *r);

#endif
