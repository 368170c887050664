/*
 * hysim run's private folder in /tmp (hysimd's socket, the message clocks):
 * made with an owner file naming the hysim process, removed at the run's
 * end, and, when a run was killed before it could remove its own, removed by
 * the next run once that owner is gone.
 */
#ifndef HYSIM_TOOLS_RUN_FOLDER_H
#define HYSIM_TOOLS_RUN_FOLDER_H

#include <stddef.h>

/* Makes /tmp/hysim-XXXXXX (into path, at least 18 bytes) with its owner file; -1 with err on failure. */
int run_folder_create(char *path, size_t len, char *err, size_t errlen);

/* Removes the folder and what hysim put in it. */
void run_folder_remove(const char *path);

/* Removes this user's run folders whose owner process is gone; returns how many. */
int run_folder_sweep(void);

#endif
