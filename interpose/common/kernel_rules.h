/*
 * What hysim assumes and checks of a kernel, wherever it is launched from:
 * the runtime (cudart_launch.c, cudart_functions.c) and the driver
 * (cuda_modules.c) share these, each library its own copy of the object.
 * hysim never sees a kernel's machine code, so what the compiler decides is
 * assumed: no static shared, constant or local memory, and HS_ASSUMED_REGS
 * registers per thread; the rest are Hopper's limits.
 */
#ifndef HYSIM_INTERPOSE_KERNEL_RULES_H
#define HYSIM_INTERPOSE_KERNEL_RULES_H

#include <stddef.h>

#define HS_ASSUMED_REGS             32 /* per thread; with Hopper's 64K registers per SM, never the limit */
#define HS_MAX_THREADS_PER_BLOCK    1024
#define HS_SHARED_PER_BLOCK_DEFAULT 49152  /* dynamic shared memory a kernel may use unless raised */
#define HS_SHARED_PER_BLOCK_OPTIN   232448 /* the most it may be raised to */

#define HS_KERNEL_HIDDEN __attribute__((visibility("hidden")))

/* Resident blocks per SM of block_size threads and dynamic_shared bytes, for a kernel allowed max_dynamic. */
HS_KERNEL_HIDDEN int hs_kernel_blocks_per_sm(int block_size, size_t dynamic_shared, int max_dynamic);

/* Whether v may be set for the function attribute attr (cudaFuncAttribute and CUfunction_attribute
 * number them alike; only 8 .. 15 are settable, some of those read-only). */
HS_KERNEL_HIDDEN int hs_kernel_attr_value_ok(int attr, int v);

/*
 * A launch attribute (cudaLaunchAttributeID and CUlaunchAttributeID number
 * them alike): hysim times a kernel by its name, grid, block and dynamic
 * shared memory, not by how it is launched, so most are accepted and change
 * nothing; those that ask for work the simulator does not do are refused,
 * by name (*name, the runtime's).
 */
enum hs_launch_attr { HS_LAUNCH_ATTR_IGNORED, HS_LAUNCH_ATTR_NOT_SUPPORTED, HS_LAUNCH_ATTR_UNKNOWN };
HS_KERNEL_HIDDEN enum hs_launch_attr hs_kernel_launch_attr(int id, const char **name);
#define HS_LAUNCH_ATTR_MAX 16 /* the largest id declared */

#endif
