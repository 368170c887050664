/* Reading /proc/PID/stat, whose command field may hold spaces and parentheses. */
#ifndef HYSIM_TOOLS_PROC_STAT_H
#define HYSIM_TOOLS_PROC_STAT_H

#include <stddef.h>
#include <sys/types.h>

/* The fields after the command (state, parent, ...), read into buf; NULL when the process is gone. */
const char *proc_stat_fields(pid_t pid, char *buf, size_t len);

#endif
