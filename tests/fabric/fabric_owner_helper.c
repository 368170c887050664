/*
 * Test helper for test_strays: owns a worker-mode fabric with checkpoints
 * (one rollback done, so a resumed checkpoint serves), prints every process
 * below it on one line ("PIDS pid..."), then waits to be killed.
 */
#include "fabric_test_util.h"

#include <dirent.h>
#include <unistd.h>

#define US 1000000ull

/* Parent of pid from /proc/PID/stat; 0 when it is gone. */
static int parent_of(int pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    int ppid = 0;
    if (p == NULL || sscanf(p + 1, " %*c %d", &ppid) != 1)
        return 0;
    return ppid;
}

static void print_descendants(void)
{
    int pids[4096], n = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL && n < 4096)
        if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
            pids[n++] = atoi(e->d_name);
    if (d)
        closedir(d);
    int tree[4096], nt = 1;
    tree[0] = getpid();
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < n; i++) {
            if (pids[i] == 0)
                continue;
            int pp = parent_of(pids[i]);
            for (int j = 0; j < nt; j++)
                if (pp == tree[j]) {
                    tree[nt++] = pids[i];
                    pids[i] = 0;
                    changed = 1;
                    break;
                }
        }
    }
    printf("PIDS");
    for (int i = 1; i < nt; i++)
        printf(" %d", tree[i]);
    printf("\n");
    fflush(stdout);
}

int main(void)
{
    hs_scenario sc;
    fab_test_scenario(&sc, 64 * 1024);
    hs_fabric_options o = {.worker = 1, .checkpoint_interval_ps = 1 * US, .checkpoints_max = 6};
    char err[512] = "";
    hs_fabric *f = hs_fabric_create_opts(&sc, &o, err, sizeof err);
    if (!f) {
        fprintf(stderr, "helper: %s\n", err);
        return 1;
    }
    fab_test_add(f, 1, 0, 1, 16u << 20, 0);
    hs_flow_done d;
    hs_fabric_next_completion(f, 10 * US, &d);
    fab_test_add(f, 2, 2, 1, 1u << 20, 7 * US); /* late: the worker is now a resumed checkpoint */
    hs_fabric_next_completion(f, 10 * US, &d);
    print_descendants();
    for (;;)
        pause();
}
