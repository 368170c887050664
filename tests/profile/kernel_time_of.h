/*
 * The profile tests' view of hysimd's kernel timing: bridge/compute/kernel_time.c on
 * a daemon whose scenario names a GPU model and a profile database, and
 * nothing else. Header-only: each test includes it once.
 */
#ifndef HYSIM_TESTS_PROFILE_KERNEL_TIME_OF_H
#define HYSIM_TESTS_PROFILE_KERNEL_TIME_OF_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "daemon_internal.h"
#include "kernel_time.h"

/* The source of k's duration (enum hs_kernel_source) and the duration in *ps;
 * -1, after printing why, when the database does not load. */
static int kernel_time_of(const char *model, const char *path, const hs_kernel_launch *k, uint64_t *ps)
{
    hs_daemon *d = calloc(1, sizeof *d);
    if (!d)
        return -1;
    hs_scenario_defaults(&d->sc);
    snprintf(d->sc.gpu.model, sizeof d->sc.gpu.model, "%s", model);
    snprintf(d->sc.compute.profiles, sizeof d->sc.compute.profiles, "%s", path);
    char err[512] = "";
    int source = -1;
    if (hs_kernel_time_init(d, err, sizeof err) != 0)
        printf("FAIL: hs_kernel_time_init: %s\n", err);
    else
        source = hs_kernel_time(d, 0, k, ps);
    hs_kernel_time_free(d);
    free(d);
    return source;
}

#endif
