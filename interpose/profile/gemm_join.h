/*
 * The profile recorder's GEMM bookkeeping, free of CUPTI so it can be tested
 * without a GPU. Each cuBLAS / cuBLASLt GEMM call the program makes is given
 * an id, which the recorder pushes as CUPTI's external correlation id around
 * the real call; CUPTI then reports, for every driver / runtime call made
 * inside, an external-correlation record (its correlation id -> our id), and
 * for every kernel a record with the correlation id of the call that
 * launched it. Those records arrive in any order, within and across buffers,
 * so they are kept and joined once, when the database is written: a GEMM
 * call's time is the sum of its kernels' durations (split-k launches two),
 * one sample under its GEMM key (bridge/compute/profile_db.h).
 *
 * A call made while its stream is captured into a CUDA graph launches
 * nothing: it adds kernel nodes, which run at each launch of the graph. The
 * recorder reports each node created inside a GEMM call and each clone of
 * such a node (instantiation clones them), and CUPTI gives every kernel a
 * graph launch ran its node's id: the kernels of one GEMM's nodes in one
 * launch (same correlation id, that of cudaGraphLaunch) are one sample of it.
 * Not thread-safe: the recorder holds its lock around every call.
 */
#ifndef HYSIM_INTERPOSE_PROFILE_GEMM_JOIN_H
#define HYSIM_INTERPOSE_PROFILE_GEMM_JOIN_H

#include <stddef.h>
#include <stdint.h>

#include "gemm_model.h"
#include "profile_aggregate.h"

typedef struct hs_gemm_join hs_gemm_join;

hs_gemm_join *hs_gemm_join_new(void);
void hs_gemm_join_free(hs_gemm_join *j);

/* A GEMM call about to run: its external correlation id (from 1 up), 0 when
 * out of memory or the shape has no GEMM key (nothing is recorded for it). */
uint64_t hs_gemm_join_begin(hs_gemm_join *j, const hs_gemm_shape *g);

/* The real call failed: whatever it launched is no sample. */
void hs_gemm_join_discard(hs_gemm_join *j, uint64_t id);

/* An external-correlation record of our kind; -1 when out of memory. */
int hs_gemm_join_correlation(hs_gemm_join *j, uint32_t correlation_id, uint64_t external_id);

/* A graph node created inside GEMM call external_id (CUPTI's node id); -1 when out of memory. */
int hs_gemm_join_graph_node(hs_gemm_join *j, uint64_t node_id, uint64_t external_id);

/* Node clone_id was cloned from original_id: it belongs to the same GEMM call, if any. -1 when out of memory. */
int hs_gemm_join_graph_clone(hs_gemm_join *j, uint64_t original_id, uint64_t clone_id);

/* A kernel record: the correlation id of the call that launched it, the id
 * of the graph node it ran for (0: not a graph launch), the GPU model it ran
 * on (kept by pointer: it must outlive the join) and how long it ran. -1
 * when out of memory. */
int hs_gemm_join_kernel(hs_gemm_join *j, uint32_t correlation_id, uint64_t graph_node_id, const char *gpu,
                        uint64_t duration_ns);

/* Joins what arrived, once every record has (at exit, after CUPTI's last
 * buffer): adds one sample to agg under its GEMM key for every call that
 * launched at least one kernel and did not fail, and one for each graph
 * launch that ran a captured call's kernels; *samples counts them. The
 * kernel and correlation records are dropped and no call gives a second
 * sample. 0, or -1 when out of memory. */
int hs_gemm_join_resolve(hs_gemm_join *j, hs_prof_agg *agg, size_t *samples);

#endif
