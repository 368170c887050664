/*
 * The host name of a process a job placed on a server (job_placement.c):
 * "serverN", as `hysim run --containers` names its containers, so that a
 * program telling servers apart by host name (nccl-tests' local rank, MPI
 * programs' node groups) sees the simulated cluster's servers, not the one
 * machine they all share. Every other process keeps the machine's name.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "internal.h"
#include "job_placement.h"

/* The server's name into buf; 0, or -1 when the process was not placed by a job. */
static int server_name(char *buf, size_t len)
{
    int server = hs_job_server();
    if (server < 0)
        return -1;
    snprintf(buf, len, "server%d", server);
    return 0;
}

HS_API int uname(struct utsname *u)
{
    if (syscall(SYS_uname, u) != 0)
        return -1;
    char name[sizeof u->nodename];
    if (server_name(name, sizeof name) == 0)
        memcpy(u->nodename, name, sizeof name);
    return 0;
}

HS_API int gethostname(char *name, size_t len)
{
    struct utsname u;
    if (uname(&u) != 0)
        return -1;
    size_t n = strlen(u.nodename);
    if (n >= len) { /* as glibc: the truncated name, and ENAMETOOLONG */
        if (len) {
            memcpy(name, u.nodename, len - 1);
            name[len - 1] = '\0';
        }
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(name, u.nodename, n + 1);
    return 0;
}
