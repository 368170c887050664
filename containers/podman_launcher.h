/*
 * Container launcher for `hysim run --containers`: one podman container per
 * server of the scenario, each running the program with the interposer, its
 * server's HYSIM_* environment, its own hostname (server0, server1, ...) and
 * hysimd's endpoint (the Unix socket's folder bind-mounted, or TCP on the
 * host's loopback). The processes it starts are the `podman run` clients:
 * hysimd waits on them as it waits on plain processes, since a client exits
 * with its container's status.
 */
#ifndef HYSIM_CONTAINERS_PODMAN_LAUNCHER_H
#define HYSIM_CONTAINERS_PODMAN_LAUNCHER_H

#include <stddef.h>
#include <sys/types.h>

#include "launcher.h"

/* hysim's own image (containers/build-image.sh builds it). */
#define PODMAN_DEFAULT_IMAGE "localhost/hysim-host"

/*
 * Points podman at hysim's containers.conf unless CONTAINERS_CONF is set,
 * then checks that podman runs and that the image (the scenario's, else
 * PODMAN_DEFAULT_IMAGE) exists. 0, or -1 with a message naming what is missing.
 */
int podman_launcher_prepare(const hs_scenario *sc, char *err, size_t errlen);

/*
 * Starts one container per server, named RUN_ID-serverN and labelled
 * hysim.run=RUN_ID; returns how many `podman run` clients were started
 * (pids[0..n)) or -1 with a message (then none is left running).
 */
int podman_launcher_start(const launcher_config *cfg, const char *run_id, pid_t *pids, int max_pids, char *err,
                          size_t errlen);

/* The container name of server `server` in run `run_id`. */
void podman_launcher_container_name(const char *run_id, int server, char *out, size_t len);

/*
 * Stops (no grace period) and removes the containers of run `run_id`, those
 * still running included. 0 when none is left, -1 with a message otherwise.
 */
int podman_launcher_remove(const char *run_id, int servers, char *err, size_t errlen);

#endif
