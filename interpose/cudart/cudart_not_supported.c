/*
 * The one message every runtime function hysim does not implement prints
 * (the generated stubs, and the few hand-written refusals that must fill
 * something in first).
 */
#include <stdatomic.h>
#include <stdio.h>

#include "cudart_internal.h"
#include "cudart_not_supported.h"

cudaError_t hs_rt_not_supported(const char *name, _Atomic int *said)
{
    RT_ENTER();
    if (!atomic_exchange(said, 1))
        fprintf(stderr, "hysim: %s is not supported yet\n", name);
    RT_RETURN(cudaErrorNotSupported);
}
