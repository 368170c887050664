/*
 * Job placement: docs/launchers.md. Runs as the library loads, before the
 * program's main reads its environment: it sets HYSIM_SERVER for the client,
 * and rewrites the launcher's local-rank variables to what a process on that
 * server would see (all ranks really share this one machine).
 */
#include "job_placement.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The launchers' variables: rank, size, and the local rank, local size and node index they set. */
typedef struct launcher_vars {
    const char *rank, *size, *local_rank, *local_size, *node;
} launcher_vars;

static const launcher_vars launchers[] = {
    {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK"}, /* torchrun */
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
     "OMPI_COMM_WORLD_NODE_RANK"},                                           /* Open MPI */
    {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", NULL},    /* PMI (MPICH's hydra) */
    {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", NULL, "SLURM_NODEID"}, /* Slurm */
};

static int g_server = -1;

static int env_uint(const char *name, unsigned long *out)
{
    const char *v = name ? getenv(name) : NULL;
    char *end;
    if (!v || !*v || *v == '-')
        return 0;
    unsigned long x = strtoul(v, &end, 10);
    if (*end)
        return 0;
    *out = x;
    return 1;
}

static const launcher_vars *found_launcher(unsigned long *rank, unsigned long *world)
{
    for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++)
        if (env_uint(launchers[i].rank, rank) && env_uint(launchers[i].size, world) && *rank < *world)
            return &launchers[i];
    return NULL;
}

int hs_job_rank(unsigned long *rank, unsigned long *world) { return found_launcher(rank, world) != NULL; }

int hs_job_server(void) { return g_server; }

static void set_uint(const char *name, unsigned long v)
{
    char text[24];
    snprintf(text, sizeof text, "%lu", v);
    if (name)
        setenv(name, text, 1);
}

__attribute__((constructor)) static void job_placement_init(void)
{
    const char *job = getenv("HYSIM_JOB");
    unsigned long gpus, rank, world;
    /* HYSIM_SERVER may be set already: by this placement, in a parent process of the same rank */
    if (!job || strcmp(job, "1") || !env_uint("HYSIM_GPUS", &gpus) || gpus == 0)
        return;
    const launcher_vars *l = found_launcher(&rank, &world);
    if (!l)
        return; /* the launcher itself, or a helper of it: no GPU of its own */
    g_server = (int)(rank / gpus);
    set_uint("HYSIM_SERVER", (unsigned long)g_server);
    /* one GPU per rank: on a real server the ranks there would be its local ranks 0..gpus-1 */
    set_uint(l->local_rank, rank % gpus);
    unsigned long first = (unsigned long)g_server * gpus, end = first + gpus < world ? first + gpus : world;
    set_uint(l->local_size, end - first);
    set_uint(l->node, (unsigned long)g_server);
}
