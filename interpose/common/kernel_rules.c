/*
 * Kernel limits, function attributes and launch attributes as hysim checks
 * them (kernel_rules.h): Hopper's per-SM limits for occupancy, the values a
 * function attribute may take, and which launch attributes are honoured.
 */
#include <cuda_runtime_api.h>

#include "kernel_rules.h"

#define MAX_WARPS_PER_SM          64
#define MAX_BLOCKS_PER_SM         32
#define REGS_PER_SM               65536
#define SHARED_PER_SM             233472 /* 228 KiB */
#define SHARED_RESERVED_PER_BLOCK 1024
#define SHARED_GRANULE            128

/* The least of what warps, blocks, registers and shared memory allow. */
int hs_kernel_blocks_per_sm(int block_size, size_t dynamic_shared, int max_dynamic)
{
    if (block_size > HS_MAX_THREADS_PER_BLOCK || dynamic_shared > (size_t)max_dynamic)
        return 0;
    int warps = (block_size + 31) / 32;
    int n = MAX_BLOCKS_PER_SM;
    if (MAX_WARPS_PER_SM / warps < n)
        n = MAX_WARPS_PER_SM / warps;
    int regs_per_block = warps * 32 * HS_ASSUMED_REGS;
    if (REGS_PER_SM / regs_per_block < n)
        n = REGS_PER_SM / regs_per_block;
    size_t shared = dynamic_shared + SHARED_RESERVED_PER_BLOCK;
    shared = (shared + SHARED_GRANULE - 1) / SHARED_GRANULE * SHARED_GRANULE;
    if (SHARED_PER_SM / shared < (size_t)n)
        n = (int)(SHARED_PER_SM / shared);
    return n;
}

int hs_kernel_attr_value_ok(int attr, int v)
{
    switch ((enum cudaFuncAttribute)attr) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize: return v >= 0 && v <= HS_SHARED_PER_BLOCK_OPTIN;
    case cudaFuncAttributePreferredSharedMemoryCarveout: return v >= -1 && v <= 100;
    case cudaFuncAttributeClusterDimMustBeSet: return 0; /* read-only */
    case cudaFuncAttributeRequiredClusterWidth:
    case cudaFuncAttributeRequiredClusterHeight:
    case cudaFuncAttributeRequiredClusterDepth: return 0; /* read-only (set at compile time) */
    case cudaFuncAttributeNonPortableClusterSizeAllowed: return v == 0 || v == 1;
    case cudaFuncAttributeClusterSchedulingPolicyPreference: return v >= 0 && v <= 2;
    default: return 0;
    }
}

/*
 * Accepted: cluster shapes and their scheduling, the cooperative flag (a
 * simulated grid runs as one unit), cache and shared-memory hints, priorities
 * (streams' are not modelled either), memory-sync domains, NVLink scheduling
 * hints and programmatic stream serialization (an overlap with the previous
 * kernel the runtime may allow, never must: waiting for it is a valid
 * schedule). Refused: events a launch records at points inside the kernel,
 * and device-updatable graph nodes, which the simulator would have to model.
 */
enum hs_launch_attr hs_kernel_launch_attr(int id, const char **name)
{
    switch ((cudaLaunchAttributeID)id) {
    case cudaLaunchAttributeIgnore:
    case cudaLaunchAttributeAccessPolicyWindow:
    case cudaLaunchAttributeCooperative:
    case cudaLaunchAttributeSynchronizationPolicy:
    case cudaLaunchAttributeClusterDimension:
    case cudaLaunchAttributeClusterSchedulingPolicyPreference:
    case cudaLaunchAttributeProgrammaticStreamSerialization:
    case cudaLaunchAttributePriority:
    case cudaLaunchAttributeMemSyncDomainMap:
    case cudaLaunchAttributeMemSyncDomain:
    case cudaLaunchAttributePreferredClusterDimension:
    case cudaLaunchAttributePreferredSharedMemoryCarveout:
    case cudaLaunchAttributeNvlinkUtilCentricScheduling: return HS_LAUNCH_ATTR_IGNORED;
    case cudaLaunchAttributeProgrammaticEvent:
        *name = "cudaLaunchAttributeProgrammaticEvent";
        return HS_LAUNCH_ATTR_NOT_SUPPORTED;
    case cudaLaunchAttributeLaunchCompletionEvent:
        *name = "cudaLaunchAttributeLaunchCompletionEvent";
        return HS_LAUNCH_ATTR_NOT_SUPPORTED;
    case cudaLaunchAttributeDeviceUpdatableKernelNode:
        *name = "cudaLaunchAttributeDeviceUpdatableKernelNode";
        return HS_LAUNCH_ATTR_NOT_SUPPORTED;
    }
    return HS_LAUNCH_ATTR_UNKNOWN; /* not an id the header declares */
}
