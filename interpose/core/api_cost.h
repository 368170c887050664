/*
 * The CPU time a real CUDA / cuBLAS / NCCL call costs its calling thread
 * inside the library, by kind of call: what the host clock adds for each
 * such call under `host_time: calls`, and on top of the measured host time
 * under `real` and `scaled:F` (docs/time.md; interpose/host/host_clock.c).
 * `fixed:NS` and `zero` add nothing of it. The interposer does far less work
 * per call than the real libraries, so without these costs launch-bound
 * steps come out too short (bench/RESULTS.md, "Training examples").
 *
 * Figures: bench/real/data/api_cost_h200.txt, measured 2026-11-23 on a real
 * H200 host (CUDA 13.0, driver 580.159.04, an Intel Xeon) by
 * bench/interpose/api_cost.cu through bench/real/api_cost_real.sh: per row,
 * the thread's CPU time over a batch of 256 back-to-back calls on one stream,
 * the median of 50 batches; the file holds 7 such runs and a figure here is
 * the median of the 7 (bench/RESULTS.md, "Interposer"), rounded to the ns.
 *
 * Which calls pay which figure:
 *   KERNEL_LAUNCH  every kernel launch (cudaLaunchKernel, <<<>>>,
 *                  cudaLaunchKernelExC, cudaLaunchCooperativeKernel, their
 *                  _ptsz forms), and a cudaGraphLaunch: one launch, however
 *                  many nodes it replays
 *   EVENT_RECORD, STREAM_WAIT_EVENT, EVENT_QUERY  the cudaEvent* / cudaStream* calls
 *   MEMCPY_ASYNC   every asynchronous copy, whatever its kind (measured device
 *                  to device, 4 KiB)
 *   MEMSET         cudaMemsetAsync and cudaMemset (measured 4 KiB, async)
 *   GEMM           every cuBLAS / cuBLASLt GEMM but the Sgemm family (measured:
 *                  cublasGemmEx, bf16, 128³)
 *   SGEMM          cublasSgemm, cublasSgemmStridedBatched, cublasSgemmBatched,
 *                  their _64 forms and cublasSgemmGroupedBatched(_64), once a
 *                  call (measured: cublasSgemm, 128³)
 *   NCCL           every NCCL collective and send/recv outside a group, and
 *                  inside one on a one-rank communicator (two such calls in a
 *                  group cost twice one: 7.1-7.9 against 3.7-4.1 us,
 *                  bench/real/data/api_cost_h200x2_wall.txt), charged at the
 *                  group's end (measured: ncclAllReduce, 4 KiB, one-rank
 *                  communicator)
 *   SYNC           cudaStreamSynchronize, cudaEventSynchronize and
 *                  cudaDeviceSynchronize that found the work done (one that
 *                  blocked pays HS_WAKE_NS after the answer instead)
 *   NCCL_GROUP_DEVICE  an ncclGroupEnd, once per device its thread issued
 *                  NCCL calls for in the group on communicators of more than
 *                  one rank; those calls cost nothing themselves (on 2 ranks a
 *                  group of 4 calls costs what one of 2 does: NCCL launches at
 *                  the group's end)
 * The last two are from 2 x H200 hosts (bench/real/data/api_cost_h200x2.txt,
 * 3 runs; api_cost_h200x2_groups.txt, 3 runs on another host): SYNC is the
 * median of the 6 figures of its two rows in the first file; a 2-rank
 * group's cost per device is 1.35 (first file) and 1.46 (second) times the
 * same host's ungrouped 1-rank call, so NCCL_GROUP_DEVICE is 1.40 x NCCL.
 * Every other call costs 0 (not measured). A call issued while a stream is
 * captured costs what the call costs when issued.
 */
#ifndef HYSIM_INTERPOSE_API_COST_H
#define HYSIM_INTERPOSE_API_COST_H

#include <stdint.h>

#include "client.h" /* HS_API */

/* X(name, ns, the row of api_cost_h200.txt it is the median of) */
#define HS_API_CALLS(X)                                                                             \
    X(HS_CALL_KERNEL_LAUNCH, 4175, "cudaLaunchKernel (empty kernel)")                               \
    X(HS_CALL_EVENT_RECORD, 289, "cudaEventRecord")                                                 \
    X(HS_CALL_STREAM_WAIT_EVENT, 287, "cudaStreamWaitEvent")                                        \
    X(HS_CALL_EVENT_QUERY, 1493, "cudaEventQuery")                                                  \
    X(HS_CALL_MEMCPY_ASYNC, 4907, "cudaMemcpyAsync (4 KiB, device to device)")                      \
    X(HS_CALL_MEMSET, 1174, "cudaMemsetAsync (4 KiB)")                                              \
    X(HS_CALL_GEMM, 9443, "cublasGemmEx (bf16, 128^3)")                                             \
    X(HS_CALL_SGEMM, 11112, "cublasSgemm (128^3)")                                                  \
    X(HS_CALL_NCCL, 5373, "ncclAllReduce (4 KiB, 1 rank)")                                          \
    X(HS_CALL_SYNC, 1802, "cudaStreamSynchronize (idle stream), cudaEventSynchronize (done event)") \
    X(HS_CALL_NCCL_GROUP_DEVICE, 7522, "2-rank groups from one thread, per device: 1.40 x ncclAllReduce (1 rank)")

/*
 * Where an idle launch's time goes on a real H100 (bench/real/data/
 * kernel_gap_h100.txt, runs 4 and 5; bench/RESULTS.md, "Kernel launch gap"):
 * the kernel reaches the GPU 2.8-3.1 us after the launch call returns, and a
 * synchronize returns 2.3-2.6 us after the work it waited for was done. The
 * host clock counts both where it counts the calls' costs: an op reaches its
 * GPU HS_SUBMIT_NS after its call returns (Op.reach_ns), and a Wait that
 * blocked returns HS_WAKE_NS after its answer.
 */
#define HS_SUBMIT_NS 2900
#define HS_WAKE_NS   2400

enum hs_api_call {
#define HS_API_CALL_ENUM(name, ns, row) name,
    HS_API_CALLS(HS_API_CALL_ENUM)
#undef HS_API_CALL_ENUM
        HS_CALL_KINDS
};

/* ns of CPU time one call of the kind costs. */
static inline uint64_t hs_api_call_ns(enum hs_api_call call)
{
    switch (call) {
#define HS_API_CALL_CASE(name, ns, row) \
    case name: return ns;
        HS_API_CALLS(HS_API_CALL_CASE)
#undef HS_API_CALL_CASE
    default: return 0;
    }
}

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The calling thread's current call is one of this kind. Inside an
 * intercepted call (between hs_client_enter and hs_client_leave) the first
 * kind named is what the outermost call costs, added to the host clock when
 * it returns, so the work it issues is stamped with the clock at its entry
 * and the ops a graph launch replays cost nothing more. Outside any (cuBLAS,
 * whose calls the clock does not otherwise see) the cost is added at once:
 * call it after the op was issued. Nothing under host_time fixed or zero.
 */
HS_API void hs_client_charge_call(enum hs_api_call call);
/* As hs_client_charge_call, for `times` calls' worth of the kind (0: nothing). */
HS_API void hs_client_charge_calls(enum hs_api_call call, unsigned times);
/* As hs_client_charge_calls, but added to the current call's cost even when a
 * kind was named already: for a call that pays for two kinds of work
 * (ncclGroupEnd: its launches on each device and its one-rank calls). */
HS_API void hs_client_charge_also(enum hs_api_call call, unsigned times);

#ifdef __cplusplus
}
#endif
#endif
