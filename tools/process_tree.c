/*
 * Ending a run's process tree: docs/architecture.md, "Ending a run".
 * Descendants are found through /proc (parent of each process), so a
 * process that left the program's process group or session (setsid, a
 * daemonizing launcher) is found as well.
 */
#include "process_tree.h"
#include "proc_stat.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct proc_entry {
    pid_t pid, ppid;
} proc_entry;

void process_tree_adopt(void) { (void)prctl(PR_SET_CHILD_SUBREAPER, 1); }

/* Parent and state of one process; 0 when it is gone or already a zombie (nothing left to stop). */
static int read_parent(pid_t pid, pid_t *ppid)
{
    char buf[512];
    const char *p = proc_stat_fields(pid, buf, sizeof buf);
    char state = 0;
    int parent = 0;
    if (!p || sscanf(p, " %c %d", &state, &parent) != 2 || state == 'Z' || state == 'X')
        return 0;
    *ppid = (pid_t)parent;
    return 1;
}

/* Every live process below `root`, into a malloc'd array; returns the count (-1: none could be read). */
static int descendants(pid_t root, pid_t **out)
{
    *out = NULL;
    DIR *dir = opendir("/proc");
    if (!dir)
        return -1;
    proc_entry *all = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        pid_t ppid;
        if (*end || pid <= 0 || !read_parent((pid_t)pid, &ppid))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            proc_entry *grown = realloc(all, cap * sizeof *all);
            if (!grown)
                break;
            all = grown;
        }
        all[n++] = (proc_entry){(pid_t)pid, ppid};
    }
    closedir(dir);
    pid_t *found = malloc((n ? n : 1) * sizeof *found);
    int count = 0;
    if (found) {
        /* breadth first: found[] grows as the parents in it are matched */
        for (int head = -1; head < count; head++) {
            pid_t parent = head < 0 ? root : found[head];
            for (size_t i = 0; i < n; i++)
                if (all[i].ppid == parent && all[i].pid != root)
                    found[count++] = all[i].pid;
        }
    }
    free(all);
    *out = found;
    return found ? count : -1;
}

static void signal_all(int sig)
{
    pid_t *pids;
    int n = descendants(getpid(), &pids);
    for (int i = 0; i < n; i++)
        kill(pids[i], sig);
    free(pids);
}

/* Reaps what has ended; 1 while children remain (alive, or zombies handed over a moment ago). */
static int reap_children(void)
{
    pid_t r;
    while ((r = waitpid(-1, NULL, WNOHANG)) > 0) {}
    return r == 0;
}

/* Children's own children reparented to this process as they died: reaped too, so none outlives it as a zombie. */
static void reap_last(void)
{
    for (int tries = 0; tries < 50 && reap_children(); tries++)
        usleep(2 * 1000);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int process_tree_end(int grace_ms)
{
    reap_children();
    pid_t *pids;
    int running = descendants(getpid(), &pids);
    free(pids);
    if (running <= 0)
        return 0;
    signal_all(SIGTERM);
    for (int64_t until = now_ms() + grace_ms; now_ms() < until;) {
        reap_children();
        int left = descendants(getpid(), &pids);
        free(pids);
        if (left <= 0) {
            reap_last();
            return running;
        }
        usleep(20 * 1000);
    }
    signal_all(SIGKILL);
    for (int tries = 0; tries < 100; tries++) { /* a killed process is gone within moments */
        reap_children();
        int left = descendants(getpid(), &pids);
        free(pids);
        if (left <= 0)
            break;
        usleep(10 * 1000);
    }
    reap_last();
    return running;
}
