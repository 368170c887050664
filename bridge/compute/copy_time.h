/*
 * How long copies and memsets take (docs/compute.md, "Copies and memsets"):
 * between host and GPU over PCIe, within a GPU's memory, and memsets, each
 * from the scenario's rates and the fixed costs measured on real H100 and
 * H200 GPUs. Copies between GPUs are flows in the fabric instead.
 */
#ifndef HYSIM_BRIDGE_COPY_TIME_H
#define HYSIM_BRIDGE_COPY_TIME_H

#include <stdbool.h>
#include <stdint.h>

#include "hysim/scenario.h"

/* Which memories a copy joins (hysim.proto CopyKind's numbering). */
enum hs_copy_kind { HS_COPY_H2D, HS_COPY_D2H, HS_COPY_D2D, HS_COPY_H2H };

/*
 * An op's time: dur_ps, what it takes once started, and early_ps, the part
 * of its fixed cost done while the work before it on its stream runs (it may
 * start no sooner than that after reaching its GPU).
 */
typedef struct hs_copy_time {
    uint64_t dur_ps, early_ps;
} hs_copy_time;

/* A copy between host and GPU of `bytes` in `rows` rows (0 or 1: contiguous), from pageable or pinned memory. */
hs_copy_time hs_copy_time_host(const hs_scenario *sc, bool to_device, bool pageable, uint64_t bytes, uint64_t rows);
/* A cudaMemcpy within one GPU's memory. */
uint64_t hs_copy_time_device(const hs_scenario *sc, uint64_t bytes, uint64_t rows);
/* A memset of `bytes` in `rows` rows. */
hs_copy_time hs_copy_time_memset(const hs_scenario *sc, uint64_t bytes, uint64_t rows);
/* NCCL's copy to self, inside its kernels: the bytes read and written at the HBM rate. */
uint64_t hs_copy_time_local(const hs_scenario *sc, uint64_t bytes);

#endif
