/*
 * Scenario defaults, GPU presets, and the small describing functions.
 * scenarios/README.md documents every value here.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "scenario_internal.h"

static const hs_gpu_preset presets[] = {
    /* NVIDIA H200 SXM datasheet: 141 GB HBM3e, 4.8 TB/s, 989 dense BF16 TFLOP/s, 67 FP32 */
    {"H200", "NVIDIA H200", 141, 989, 67, 4800, 132, 9, 0},
    /* NVIDIA H100 SXM5 datasheet: 80 GB HBM3, 3.35 TB/s, same SMs and peak FLOP/s as H200 */
    {"H100", "NVIDIA H100 80GB HBM3", 80, 989, 67, 3350, 132, 9, 0},
};

const hs_gpu_preset *hs_gpu_preset_find(const char *name)
{
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (strcasecmp(name, presets[i].key) == 0 || strcasecmp(name, presets[i].model) == 0)
            return &presets[i];
    return NULL;
}

const char *hs_gpu_preset_list(void) { return "H200, H100"; }

void hs_gpu_preset_apply(hs_scenario *sc, const hs_gpu_preset *p)
{
    snprintf(sc->gpu.model, sizeof sc->gpu.model, "%s", p->model);
    sc->gpu.memory_bytes = (uint64_t)llround(p->memory_gib * 1073741824.0);
    sc->gpu.bf16_tflops = p->bf16_tflops;
    sc->gpu.fp32_tflops = p->fp32_tflops;
    sc->gpu.hbm_gbps = p->hbm_gbps;
    sc->gpu.sm_count = p->sm_count;
    sc->gpu.cc_major = p->cc_major;
    sc->gpu.cc_minor = p->cc_minor;
}

double hs_pcie_default_gbps(int gen, int lanes)
{
    /* Raw signalling rate per lane; every generation counted with 128b/130b encoding. */
    static const double gts[] = {[3] = 8, [4] = 16, [5] = 32, [6] = 64};
    if (gen < 3 || gen > 6)
        return 0;
    return gts[gen] * lanes * 128.0 / 130.0;
}

void hs_ecn_defaults(double nic_gbps, double *kmin_kb, double *kmax_kb)
{
    *kmin_kb = HS_ECN_REF_KMIN_KB * nic_gbps / HS_ECN_REF_GBPS;
    *kmax_kb = HS_ECN_REF_KMAX_KB * nic_gbps / HS_ECN_REF_GBPS;
}

void hs_scenario_defaults(hs_scenario *sc)
{
    memset(sc, 0, sizeof *sc);
    snprintf(sc->name, sizeof sc->name, "%s", HS_DEFAULT_NAME);

    hs_gpu_preset_apply(sc, &presets[0]);

    sc->servers.count = HS_DEFAULT_SERVERS;
    sc->servers.gpus_per_server = HS_DEFAULT_GPUS_PER_SERVER;

    sc->nvlink.gbps_per_gpu = HS_DEFAULT_NVLINK_GBPS;
    sc->nvlink.latency_ns = HS_DEFAULT_NVLINK_LATENCY_NS;
    sc->nvlink.segment_bytes = HS_DEFAULT_NVLINK_SEGMENT_KIB * 1024u;

    sc->pcie.gen = HS_DEFAULT_PCIE_GEN;
    sc->pcie.lanes = HS_DEFAULT_PCIE_LANES;
    sc->pcie.gbps = hs_pcie_default_gbps(HS_DEFAULT_PCIE_GEN, HS_DEFAULT_PCIE_LANES);
    sc->pcie.latency_ns = HS_DEFAULT_PCIE_LATENCY_NS;
    sc->pcie.copy_gbps = HS_PCIE_COPY_SHARE * sc->pcie.gbps;
    sc->pcie.copy_latency_ns = HS_DEFAULT_PCIE_COPY_LATENCY_NS;
    sc->pcie.pageable_gbps = HS_DEFAULT_PCIE_PAGEABLE_GBPS;

    sc->nics.per_server = HS_DEFAULT_GPUS_PER_SERVER;
    sc->nics.gbps = HS_DEFAULT_NIC_GBPS;
    sc->nics.rail_aligned = true;

    sc->fabric.present = false;
    sc->fabric.topology = HS_TOPOLOGY_SINGLE_SWITCH;
    sc->fabric.leaves = 1;
    sc->fabric.spines = 0;
    sc->fabric.oversubscription = 1.0;
    sc->fabric.link_latency_ns = HS_DEFAULT_LINK_LATENCY_NS;
    sc->fabric.switch_buffer_mib = HS_DEFAULT_SWITCH_BUFFER_MIB;
    sc->fabric.mtu = HS_DEFAULT_MTU;
    hs_ecn_defaults(HS_DEFAULT_NIC_GBPS, &sc->fabric.ecn.kmin_kb, &sc->fabric.ecn.kmax_kb);
    sc->fabric.ecn.pmax = HS_DEFAULT_ECN_PMAX;
    sc->fabric.pfc = true;
    sc->fabric.dcqcn = true;
    sc->fabric.rto_ns = (uint64_t)llround(HS_DEFAULT_RTO_US * 1000.0);

    sc->compute.default_kernel_ns = (uint64_t)llround(HS_DEFAULT_KERNEL_US * 1000.0);
    sc->compute.kernel_gap_ns = (uint64_t)llround(HS_DEFAULT_KERNEL_GAP_US * 1000.0);
    sc->compute.kernel_database = true;

    sc->run.mode = HS_MODE_EXACT;
    sc->run.host_time = HS_HOST_TIME_REAL;
    sc->run.host_time_scale = 1.0;
    sc->run.host_time_fixed_ns = 0;
    sc->run.seed = HS_DEFAULT_SEED;
    sc->run.stall_timeout_s = 60.0;
    sc->run.checkpoint_interval_us = 100.0;
    sc->run.checkpoints_max = 16;
    sc->run.fabric.speculate = true; /* takes effect with a worker-mode fabric only */
    sc->run.fabric.speculate_window_us = 1000.0;
    sc->background.message_bytes = HS_DEFAULT_BG_MESSAGE_KIB * 1024; /* background and stats: off */
    sc->values.routing = HS_ROUTING_BALANCED;
    sc->values.routing_zipf_s = 1.0;
    sc->nccl.calibrated = true; /* algo, proto AUTO and channels 0: NCCL's own choice */
    sc->nccl.nvls = true;       /* as NCCL on an NVSwitch system of Hopper GPUs or later */
    sc->nccl.channel_gbps = -1; /* each kind's cap fitted on bench/real/data/channels_h200x2.txt */
}

const char *hs_topology_name(enum hs_topology t)
{
    switch (t) {
    case HS_TOPOLOGY_SINGLE_SWITCH: return "single_switch";
    case HS_TOPOLOGY_LEAF_SPINE: return "leaf_spine";
    case HS_TOPOLOGY_FAT_TREE: return "fat_tree";
    case HS_TOPOLOGY_RAIL_OPTIMIZED: return "rail_optimized";
    }
    return "unknown";
}

const char *hs_host_time_name(enum hs_host_time h)
{
    switch (h) {
    case HS_HOST_TIME_REAL: return "real";
    case HS_HOST_TIME_SCALED: return "scaled";
    case HS_HOST_TIME_FIXED: return "fixed";
    case HS_HOST_TIME_ZERO: return "zero";
    case HS_HOST_TIME_CALLS: return "calls";
    }
    return "unknown";
}

void hs_scenario_describe(const hs_scenario *sc, char *buf, size_t len)
{
    if (!buf || len == 0)
        return;
    int n = snprintf(buf, len, "%d server%s \u00d7 %d %s, NVLink %g Gb/s", sc->servers.count,
                     sc->servers.count == 1 ? "" : "s", sc->servers.gpus_per_server, sc->gpu.model,
                     sc->nvlink.gbps_per_gpu);
    if (n < 0 || (size_t)n >= len || !sc->fabric.present)
        return;
    snprintf(buf + n, len - (size_t)n, ", %d \u00d7 %g Gb/s NICs per server, %s fabric", sc->nics.per_server,
             sc->nics.gbps, hs_topology_name(sc->fabric.topology));
}
