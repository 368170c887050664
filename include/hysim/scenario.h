/*
 * hysim scenario: the simulated cluster, its models' parameters and the run
 * settings, read from one YAML file (scenarios/README.md documents the format).
 *
 * The loader fills every field: what the file leaves out gets the documented
 * default. Units are in the field names; times inside hysim are picoseconds
 * (fabric, daemon) or nanoseconds (host clocks), rates are bits per second.
 */
#ifndef HYSIM_SCENARIO_H
#define HYSIM_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum hs_topology {
    HS_TOPOLOGY_SINGLE_SWITCH = 0,
    HS_TOPOLOGY_LEAF_SPINE,
    HS_TOPOLOGY_FAT_TREE,
    HS_TOPOLOGY_RAIL_OPTIMIZED,
};

enum hs_run_mode { HS_MODE_EXACT = 0, HS_MODE_OPTIMISTIC };

/* Where the fabric model runs (run.fabric.process): DEFAULT = in hysimd's process
 * unless HYSIM_FABRIC_WORKER=1; WORKER = a worker process with checkpoints. */
enum hs_fabric_process { HS_FABRIC_PROCESS_DEFAULT = 0, HS_FABRIC_PROCESS_INLINE, HS_FABRIC_PROCESS_WORKER };

/* NCCL algorithm and protocol (hs_scenario.nccl); AUTO = NCCL's tuner chooses. */
enum hs_nccl_algo { HS_NCCL_ALGO_AUTO = 0, HS_NCCL_ALGO_RING, HS_NCCL_ALGO_TREE, HS_NCCL_ALGO_NVLS };
enum hs_nccl_proto { HS_NCCL_PROTO_AUTO = 0, HS_NCCL_PROTO_LL, HS_NCCL_PROTO_LL128, HS_NCCL_PROTO_SIMPLE };

/* Generated background traffic (hs_scenario.background). */
enum hs_bg_pattern { HS_BG_NONE = 0, HS_BG_PERMUTATION, HS_BG_INCAST };
#define HS_BG_MAX_FLOWS 64 /* explicit background flows per scenario */

/* Most GPUs one server may have (servers.gpus_per_server). A process sees at
 * most one server's GPUs, so this is also the interposer's per-process device
 * bound. Not a modelling limit (one NVSwitch plane has no size): the per-GPU
 * state is small, and the all-reduce flows, O(G^2), bound what is practical. */
#define HS_MAX_GPUS_PER_SERVER 1024

/* How a process's host clock advances between intercepted calls (docs/time.md).
 * "The calls' cost": what each CUDA / cuBLAS / NCCL call of a measured kind
 * costs the calling thread in the real library (interpose/core/api_cost.h). */
enum hs_host_time {
    HS_HOST_TIME_REAL = 0, /* the CPU time the process really spent, plus the calls' cost */
    HS_HOST_TIME_SCALED,   /* real CPU time × host_time_scale, plus the calls' cost */
    HS_HOST_TIME_FIXED,    /* host_time_fixed_ns per intercepted call */
    HS_HOST_TIME_ZERO,     /* nothing: only GPU waits move the clock */
    HS_HOST_TIME_CALLS,    /* the calls' cost only: deterministic */
};

/* How a histogram of values hysim does not know comes out (docs/values.md, "Kernels hysim computes"). */
enum hs_routing {
    HS_ROUTING_BALANCED = 0, /* every bin alike */
    HS_ROUTING_ZIPF,         /* Zipf's law with exponent routing_zipf_s, over bins in a drawn order */
};

typedef struct hs_scenario {
    char path[512]; /* file it was read from ("" if parsed from memory) */
    char name[256];

    struct {
        char model[64];        /* reported as cudaDeviceProp.name, e.g. "NVIDIA H200" */
        uint64_t memory_bytes; /* YAML memory_gib */
        double bf16_tflops;
        double fp32_tflops;
        double hbm_gbps; /* GB/s (bytes) of HBM bandwidth */
        int sm_count;
        int cc_major, cc_minor; /* compute capability */
    } gpu;

    struct {
        int count;
        int gpus_per_server;
    } servers;

    struct {
        double gbps_per_gpu;    /* Gb/s each direction between a GPU and the NVSwitch plane */
        uint64_t latency_ns;    /* one-way GPU→GPU latency through the NVSwitch */
        uint32_t segment_bytes; /* packet size used by the fabric on NVLink (YAML segment_kib) */
    } nvlink;

    struct {
        int gen;     /* 3..6 */
        int lanes;   /* 1..16 */
        double gbps; /* derived from gen and lanes unless given; Gb/s each way */
        uint64_t latency_ns;
        double copy_gbps;         /* a copy engine's rate between pinned host memory and a GPU; Gb/s */
        uint64_t copy_latency_ns; /* a host<->device copy's fixed GPU time */
        double pageable_gbps;     /* a copy's rate from or to pageable host memory (staged by the host) */
    } pcie;

    struct {
        int per_server;
        double gbps;
        bool rail_aligned;
    } nics;

    struct {
        bool present; /* false when the file has no fabric: section */
        enum hs_topology topology;
        int leaves, spines;
        double oversubscription; /* leaf down:up bandwidth ratio, 1.0 = none */
        uint64_t link_latency_ns;
        double switch_buffer_mib;
        uint32_t mtu;
        struct {
            double kmin_kb, kmax_kb, pmax;
        } ecn;
        bool pfc;
        bool dcqcn;
        uint64_t rto_ns; /* go-back-N retransmission timeout of the sending NICs (YAML rto_us);
                                    0 = the default, 1 ms (a scenario filled in by hand, not loaded) */
    } fabric;

    struct {
        uint64_t default_kernel_ns; /* duration of a kernel no model knows */
        uint64_t kernel_gap_ns;     /* the GPU's idle time before a kernel launched on a stream behind
                                       another op of that stream (none for a CUDA graph's nodes) */
        char profiles[512];         /* profile database (bridge/compute/profile_db.h), resolved against
                                       the scenario file's folder; "" = none */
        bool kernel_database;       /* YAML kernel_database: hysim's measured databases time what the
                                       profile lacks (default true) */
        char database_dir[512];     /* where those databases are (every .csv there); not a YAML key: hysim
                                       run sets it beside its own files; "" = none */
    } compute;

    /* How collectives run (scenarios/README.md, "nccl"); overrides NCCL_ALGO/NCCL_PROTO. */
    struct {
        enum hs_nccl_algo algo;
        enum hs_nccl_proto proto;
        int channels;    /* 0 = as NCCL picks them for the topology */
        bool calibrated; /* apply the measured efficiency of NCCL's kernels (bridge/collectives/collective_tuner.c) */
        bool nvls;       /* NVLink SHARP where NCCL would use it (default true; NCCL_NVLS_ENABLE=0 also turns it off) */
        double channel_gbps; /* calibrated, one server: most wire GB/s one channel's flow moves; 0 = no
                                cap; < 0 (default) = each kind's fitted cap (bridge/collectives/collective_tuner.c) */
    } nccl;

    struct {
        enum hs_run_mode mode;
        enum hs_host_time host_time;
        double host_time_scale;      /* for HS_HOST_TIME_SCALED */
        uint64_t host_time_fixed_ns; /* for HS_HOST_TIME_FIXED */
        uint64_t seed;
        double stall_timeout_s;        /* wall seconds without simulated progress before hysimd gives up; 0 = never */
        double checkpoint_interval_us; /* worker-mode fabric: a checkpoint every this much simulated time */
        uint32_t checkpoints_max;      /* worker-mode fabric: paused checkpoints kept (1..64) */
        struct {
            enum hs_fabric_process process;
            bool speculate;             /* worker-mode fabric: run ahead of the safe time while hysimd waits */
            double speculate_window_us; /* ... by at most this much simulated time */
        } fabric;                       /* run.fabric (bridge/speculation/fabric_speculation.c) */
    } run;

    /* Traffic of other tenants (scenarios/README.md, "background"); nothing waits for it. */
    struct {
        int nflows;
        struct hs_bg_flow {
            uint32_t src_gpu, dst_gpu;
            uint64_t bytes;
            uint64_t start_ns;
            uint64_t repeat_ns; /* 0: once; else again every repeat_ns for as long as the run lasts */
        } flows[HS_BG_MAX_FLOWS];
        enum hs_bg_pattern pattern;
        double load; /* fraction of the NIC rate each sender offers */
        uint64_t message_bytes;
        uint64_t start_ns, duration_ns;
        uint32_t target_gpu; /* incast: the GPU every sender sends to */
    } background;

    struct {
        uint64_t interval_ns; /* link sampling period for `hysim run --stats`; 0 = no time series */
    } stats;

    struct {
        char image[256]; /* image for `hysim run --containers`; "" = hysim's own (containers/) */
    } containers;

    struct {
        enum hs_routing routing; /* YAML values.routing: balanced | zipf:S */
        double routing_zipf_s;   /* S, for HS_ROUTING_ZIPF */
    } values;
} hs_scenario;

/* Fills every field with its documented default (scenarios/README.md). */
void hs_scenario_defaults(hs_scenario *sc);

/*
 * Reads and validates a scenario. Returns the number of problems found (0 on
 * success). Every problem is one line "FILE:LINE:COL: message" appended to
 * errbuf (NUL-terminated, truncated to errlen); all problems are reported, not
 * only the first. On failure *sc holds defaults plus whatever was valid.
 */
int hs_scenario_load(const char *path, hs_scenario *sc, char *errbuf, size_t errlen);

/* The same on text in memory; `name` stands for the file name in messages. */
int hs_scenario_parse(const char *text, size_t len, const char *name, hs_scenario *sc, char *errbuf, size_t errlen);

/* Derived figures used by several modules. */
static inline int hs_scenario_gpu_count(const hs_scenario *sc)
{
    return sc->servers.count * sc->servers.gpus_per_server;
}

/* Writes a short human description ("1 server × 8 NVIDIA H200, NVLink 3600 Gb/s") into buf. */
void hs_scenario_describe(const hs_scenario *sc, char *buf, size_t len);

const char *hs_topology_name(enum hs_topology t);
const char *hs_host_time_name(enum hs_host_time h);

#ifdef __cplusplus
}
#endif
#endif
