/*
 * torch's grouped GEMMs (torch._grouped_mm, a mixture of experts' experts),
 * for hysimd's grouped-GEMM model (docs/compute.md, "Grouped GEMMs"): torch
 * launches prepare_grouped_gemm_data, whose arguments say the groups'
 * products, then the CUTLASS kernel, whose name says its tile and schedule.
 * Arguments are read as the pinned torch lays them out; a kernel whose name
 * does not check out is timed as any other. Prefix hs_gg_: grouped GEMM.
 */
#ifndef HS_GROUPED_GEMM_H
#define HS_GROUPED_GEMM_H

#include <stdbool.h>
#include <stdint.h>

/* Groups beyond this are not modelled: the kernel is timed by its launch. */
#define HS_GG_MAX_GROUPS 512

enum hs_gg_role { HS_GG_NONE, HS_GG_PREPARE, HS_GG_GEMM };

/* A kernel's part, decided once from its mangled name; a GEMM's tile and schedule. */
typedef struct hs_gg_kernel {
    enum hs_gg_role role;
    uint32_t tile_m, tile_n, cluster_m;
    bool pingpong;
} hs_gg_kernel;

hs_gg_kernel hs_gg_kernel_of(const char *mangled);

/* The grouped dimension (hysim.proto GroupedDim). */
enum hs_gg_dim { HS_GG_DIM_M, HS_GG_DIM_N, HS_GG_DIM_K };

/* The products a prepare_grouped_gemm_data launch sets up. */
typedef struct hs_gg_problem {
    uint64_t m, n, k; /* the shared dimensions; the grouped one 0 */
    enum hs_gg_dim grouped;
    uint32_t groups;
    uint32_t sizes[HS_GG_MAX_GROUPS]; /* the grouped dimension per group */
    bool exact;                       /* from the offsets' values; else the total split evenly */
} hs_gg_problem;

/* Reads a prepare launch's arguments (cudaLaunchKernel's; groups: its block's x); false if they do not check out. */
bool hs_gg_read(void *const *args, uint32_t groups, hs_gg_problem *p);

#endif
