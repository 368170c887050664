/*
 * Shared between the scenario loader (loader.c), the defaults (defaults.c)
 * and the fabric checks (fabric_limits.c): the default values, the GPU
 * presets and what the fabric model requires of a scenario.
 * scenarios/README.md documents each value and where it comes from; keep
 * the two in step.
 */
#ifndef HYSIM_SCENARIOS_INTERNAL_H
#define HYSIM_SCENARIOS_INTERNAL_H

#include "hysim/scenario.h"

#define HS_DEFAULT_NAME               "unnamed"
#define HS_DEFAULT_SERVERS            1
#define HS_DEFAULT_GPUS_PER_SERVER    8
#define HS_DEFAULT_NVLINK_GBPS        3600.0 /* NVLink 4: 18 links, 450 GB/s each way */
#define HS_DEFAULT_NVLINK_LATENCY_NS  500
#define HS_DEFAULT_NVLINK_SEGMENT_KIB 256
#define HS_DEFAULT_PCIE_GEN           5
#define HS_DEFAULT_PCIE_LANES         16
#define HS_DEFAULT_PCIE_LATENCY_NS    1000
/* Host<->device copies, measured on an H100 and an H200 (gen 5 x 16; bench/real/memcpy_kinds_real.sh,
 * bench/RESULTS.md "Host copies: pinned and pageable"): pinned copies reach 0.876 of the encoded rate
 * after a fixed 4 us; pageable ones run at the host's staging rate, 5.9 to 15.3 GB/s there. */
#define HS_PCIE_COPY_SHARE              0.876
#define HS_DEFAULT_PCIE_COPY_LATENCY_NS 4000
#define HS_DEFAULT_PCIE_PAGEABLE_GBPS   96.0
#define HS_DEFAULT_NIC_GBPS             400.0
#define HS_DEFAULT_LINK_LATENCY_NS      600
#define HS_DEFAULT_SWITCH_BUFFER_MIB    32.0 /* SimAI's shared switch buffer */
#define HS_DEFAULT_MTU                  4096
#define HS_MTU_MIN                      256
#define HS_MTU_MAX                      9216
/* SimAI's ECN thresholds at 400 Gb/s; scaled linearly with the NIC rate. */
#define HS_ECN_REF_GBPS     400.0
#define HS_ECN_REF_KMIN_KB  800.0
#define HS_ECN_REF_KMAX_KB  3200.0
#define HS_DEFAULT_ECN_PMAX 0.2
/* fabric.rto_us: hysim's go-back-N timeout, far shorter than a real NIC's (NCCL's
 * NCCL_IB_TIMEOUT, scenarios/README.md) so that a lossy run ends in a useful
 * simulated time; ns3-glue/model/ethernet.cc uses the same value for a field left at 0. */
#define HS_DEFAULT_RTO_US    1000.0
#define HS_RTO_MIN_US        1.0 /* below a fabric round trip every segment would time out */
#define HS_RTO_MAX_US        1e9 /* 1000 s, the bound of every duration in us */
#define HS_DEFAULT_KERNEL_US 10.0
/* H100, kernels queued back to back on one stream: the time between one's end
 * and the next one's start as CUPTI records them, 0.92-1.03 us over grids of
 * 1 to 1056 blocks, 1.09-1.15 us between cuBLAS GEMMs of 1024^3 and 2048^3
 * (bench/RESULTS.md, "Kernel launch gap") */
#define HS_DEFAULT_KERNEL_GAP_US  1.0
#define HS_DEFAULT_SEED           1
#define HS_DEFAULT_BG_MESSAGE_KIB 256 /* background.message_kib */

typedef struct hs_gpu_preset {
    const char *key;   /* what `gpu.model` says, compared without regard to case */
    const char *model; /* the name reported as cudaDeviceProp.name; `gpu.model` may say it too */
    double memory_gib;
    double bf16_tflops;
    double fp32_tflops;
    double hbm_gbps;
    int sm_count;
    int cc_major, cc_minor;
} hs_gpu_preset;

/* The preset whose key or reported name is `name` (any case); NULL when none is. */
const hs_gpu_preset *hs_gpu_preset_find(const char *name);
/* "H200, H100": the preset keys, for messages. */
const char *hs_gpu_preset_list(void);
void hs_gpu_preset_apply(hs_scenario *sc, const hs_gpu_preset *p);

/* GT/s per lane × lanes × 128/130 (Gb/s each way); 0 for a generation we do not know. */
double hs_pcie_default_gbps(int gen, int lanes);

/* SimAI's 800/3200 KB at 400 Gb/s, scaled linearly with nic_gbps. */
void hs_ecn_defaults(double nic_gbps, double *kmin_kb, double *kmax_kb);

/* ---- What the fabric model requires (fabric_limits.c; mirrors ns3-glue/). ---- */

#define HS_FABRIC_MAX_LINKS    (1u << 20)   /* ns3-glue/model/fabric_internal.h kMaxPorts: one per direction */
#define HS_FABRIC_MAX_SEGMENTS (1ull << 40) /* kMaxSegments: segments of one flow */

/* k of a k-ary fat tree with these edges (k²/2) and cores (k²/4), k even; 0 when none fits. */
int hs_scn_fat_tree_k(int leaves, int spines);
/* Links (one per direction) the fabric builds for the scenario. */
uint64_t hs_scn_fabric_links(const hs_scenario *sc);
/* The most bytes the links into one switch take from its buffer (reserve, and PFC headroom
 * with fabric.pfc); `which` names that switch ("rail0", "spine0"). The fabric refuses a
 * buffer of this many bytes or fewer. For a scenario of several servers whose topology
 * the fabric accepts. */
double hs_scn_buffer_need(const hs_scenario *sc, char *which, size_t len);
/* Segments a flow of `bytes` from GPU src to GPU dst takes: NVLink segments within a
 * server, MTU-sized packets across servers. */
uint64_t hs_scn_flow_segments(const hs_scenario *sc, uint32_t src, uint32_t dst, uint64_t bytes);

#endif
