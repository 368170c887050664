/*
 * The CPU time the real CUDA and NCCL calls cost, measured, which the host
 * clock charges under host_time real, scaled and calls: docs/time.md, "What
 * the real calls cost".
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
