/*
 * No stray processes: the owner of a worker-mode fabric (fabric_owner_helper)
 * is killed with SIGKILL or SIGINT; within 2 s neither its worker nor any
 * checkpoint may remain. This process is a child subreaper, so the orphans
 * are re-parented here and reaped, and "gone" means really gone.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "KILL") != 0 && strcmp(argv[1], "INT") != 0)) {
        fprintf(stderr, "usage: %s KILL|INT HELPER\n", argv[0]);
        return 2;
    }
    const int sig = strcmp(argv[1], "KILL") == 0 ? SIGKILL : SIGINT;
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    int pp[2];
    if (pipe(pp) != 0)
        return 1;
    const pid_t owner = fork();
    if (owner == 0) {
        dup2(pp[1], 1);
        close(pp[0]);
        close(pp[1]);
        execl(argv[2], argv[2], (char *)NULL);
        _exit(127);
    }
    close(pp[1]);
    FILE *in = fdopen(pp[0], "r");
    char line[65536];
    if (!in || !fgets(line, sizeof line, in) || strncmp(line, "PIDS", 4) != 0) {
        fprintf(stderr, "FAILED: the helper printed no pid list\n");
        kill(owner, SIGKILL);
        return 1;
    }
    int pids[1024], n = 0;
    for (char *tok = strtok(line + 4, " \n"); tok && n < 1024; tok = strtok(NULL, " \n"))
        pids[n++] = atoi(tok);
    printf("owner %d, %d processes below it\n", (int)owner, n);
    /* hub + worker + at least a few checkpoints */
    if (n < 4) {
        fprintf(stderr, "FAILED: expected a hub, a worker and checkpoints, got %d pids\n", n);
        kill(owner, SIGKILL);
        return 1;
    }
    kill(owner, sig);
    const double t0 = now_s();
    int alive = n;
    while (now_s() - t0 < 2.0) {
        while (waitpid(-1, NULL, WNOHANG) > 0) {}
        alive = 0;
        for (int i = 0; i < n; i++)
            alive += !(kill(pids[i], 0) != 0 && errno == ESRCH);
        if (alive == 0)
            break;
        usleep(2000);
    }
    if (alive != 0) {
        fprintf(stderr, "FAILED: %d of %d processes remain 2 s after SIG%s of their owner\n", alive, n, argv[1]);
        for (int i = 0; i < n; i++)
            kill(pids[i], SIGKILL);
        return 1;
    }
    printf("all %d gone %.1f ms after SIG%s\n", n, (now_s() - t0) * 1e3, argv[1]);
    printf("ok\n");
    return 0;
}
