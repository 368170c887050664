/*
 * A process of a job started once for every server (`hysim run --job`,
 * mpirun, srun): its rank, read from the launcher's variables, places it on
 * server rank / gpus_per_server, as the real cluster would (docs/launchers.md).
 */
#ifndef HYSIM_INTERPOSE_JOB_PLACEMENT_H
#define HYSIM_INTERPOSE_JOB_PLACEMENT_H

/* The process's rank and the job's size from the first launcher whose variables are set (torchrun's, Open
 * MPI's, PMI's, Slurm's): 1 when found, 0 when none is set. */
int hs_job_rank(unsigned long *rank, unsigned long *world);

/* The server a job placed this process on, -1 when it was not placed by a job (HYSIM_SERVER given). */
int hs_job_server(void);

#endif
