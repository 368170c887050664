/*
 * The recorder's side of a cuBLAS / cuBLASLt GEMM call (cupti_recorder.c),
 * for the forwarders that wrap the real calls (cublas_forward.c): a GEMM
 * region around the real call, in which CUPTI tags what the call launches
 * with the call's id (gemm_join.h).
 */
#ifndef HYSIM_INTERPOSE_PROFILE_CUPTI_RECORDER_H
#define HYSIM_INTERPOSE_PROFILE_CUPTI_RECORDER_H

#include <stdbool.h>
#include <stdint.h>

#include "gemm_model.h"

/* Opens the region of a call of this shape: its id, or 0 when nothing is
 * recorded (CUPTI not started yet, no GEMM key, out of memory). */
uint64_t hs_recorder_gemm_begin(const hs_gemm_shape *g);

/* Closes the region `id` opened (none for 0); ok: the real call succeeded. */
void hs_recorder_gemm_end(uint64_t id, bool ok);

#endif
