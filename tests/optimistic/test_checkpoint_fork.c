/*
 * A checkpoint fork that fails in the worker-mode fabric (HYSIM_FAULT_FORK=1:
 * the worker's first fork, its checkpoint at time 0) makes the fabric call
 * fail with a message naming the fork, at once: no hang, no fabric that
 * silently lacks its checkpoints.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_test_util.h"

int main(void)
{
    hs_scenario sc;
    fab_test_scenario(&sc, 64 << 10);
    setenv("HYSIM_FAULT_FORK", "1", 1);
    hs_fabric_options o = {.worker = 1, .checkpoint_interval_ps = 1000000, .checkpoints_max = 4};
    char err[512] = "";
    hs_fabric *f = hs_fabric_create_opts(&sc, &o, err, sizeof err);
    printf("error: %s\n", err);
    if (f) {
        fprintf(stderr, "FAIL: the fabric was created although its checkpoint fork failed\n");
        hs_fabric_destroy(f);
        return 1;
    }
    if (!strstr(err, "fork for a checkpoint failed") || !strstr(err, "Resource temporarily unavailable")) {
        fprintf(stderr, "FAIL: the message does not name the failed fork: %s\n", err);
        return 1;
    }
    /* without the fault the same fabric comes up */
    unsetenv("HYSIM_FAULT_FORK");
    f = hs_fabric_create_opts(&sc, &o, err, sizeof err);
    if (!f) {
        fprintf(stderr, "FAIL: hs_fabric_create_opts: %s\n", err);
        return 1;
    }
    hs_fabric_checkpoint_stats st;
    hs_fabric_get_checkpoint_stats(f, &st);
    hs_fabric_destroy(f);
    if (st.taken < 1 || st.worker_pid == 0) {
        fprintf(stderr, "FAIL: no checkpoint without the fault (%llu)\n", (unsigned long long)st.taken);
        return 1;
    }
    printf("ok\n");
    return 0;
}
