/*
 * Run folders: docs/architecture.md, "Ending a run", says why a folder names
 * its owner by pid and start time.
 */
#include "run_folder.h"
#include "proc_stat.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define RUN_FOLDER_PARENT "/tmp"
#define RUN_FOLDER_PREFIX "hysim-"
#define OWNER_FILE        "owner"
/* A folder without owner file or socket this old is a dead run's, not one being made. */
#define OWNERLESS_AGE_S 600

/* What hysim puts in a run folder: the only names a sweep removes. */
static const char *const contents[] = {OWNER_FILE, "hysimd.sock", "messages", NULL};

/* A process's start time in clock ticks since boot (/proc/PID/stat field 22): 0 if it is gone. */
static unsigned long long start_time(long pid)
{
    char buf[1024];
    const char *p = proc_stat_fields((pid_t)pid, buf, sizeof buf);
    unsigned long long t = 0;
    if (!p || sscanf(p, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu", &t) != 1)
        return 0;
    return t;
}

int run_folder_create(char *path, size_t len, char *err, size_t errlen)
{
    if (snprintf(path, len, "%s/%sXXXXXX", RUN_FOLDER_PARENT, RUN_FOLDER_PREFIX) >= (int)len || !mkdtemp(path)) {
        snprintf(err, errlen, "cannot create a run folder in %s: %s", RUN_FOLDER_PARENT, strerror(errno));
        return -1;
    }
    char owner[4096];
    if (snprintf(owner, sizeof owner, "%.4000s/%s", path, OWNER_FILE) >= (int)sizeof owner)
        return -1;
    FILE *f = fopen(owner, "we");
    if (!f || fprintf(f, "%ld %llu\n", (long)getpid(), start_time(getpid())) < 0 || fclose(f) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", owner, strerror(errno));
        rmdir(path);
        return -1;
    }
    return 0;
}

void run_folder_remove(const char *path)
{
    char file[4096];
    for (const char *const *name = contents; *name; name++) {
        snprintf(file, sizeof file, "%.4000s/%s", path, *name);
        unlink(file);
    }
    rmdir(path);
}

/* A folder older hysims made has no owner file: dead when its socket refuses, or when it has none and is old. */
static int ownerless_dead(const char *path, const struct stat *st)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (snprintf(sa.sun_path, sizeof sa.sun_path, "%s/hysimd.sock", path) >= (int)sizeof sa.sun_path)
        return 0;
    if (access(sa.sun_path, F_OK) != 0)
        return time(NULL) - st->st_mtime > OWNERLESS_AGE_S;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    int refused = connect(fd, (const struct sockaddr *)&sa, sizeof sa) < 0 && errno == ECONNREFUSED;
    close(fd);
    return refused;
}

/* Whether the folder's owner file names a process that is gone (not one that merely reused its pid). */
static int owner_gone(int dir_fd, const char *path, const struct stat *st)
{
    int fd = openat(dir_fd, OWNER_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno == ENOENT && ownerless_dead(path, st);
    char buf[64];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    long pid = 0;
    unsigned long long started = 0;
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    if (sscanf(buf, "%ld %llu", &pid, &started) != 2 || pid <= 0)
        return 0;
    return start_time(pid) != started;
}

int run_folder_sweep(void)
{
    DIR *dir = opendir(RUN_FOLDER_PARENT);
    if (!dir)
        return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (strncmp(e->d_name, RUN_FOLDER_PREFIX, strlen(RUN_FOLDER_PREFIX)) != 0)
            continue;
        struct stat st;
        if (fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
            st.st_uid != getuid())
            continue;
        int fd = openat(dirfd(dir), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%.256s", RUN_FOLDER_PARENT, e->d_name);
        int gone = owner_gone(fd, path, &st);
        close(fd);
        if (!gone)
            continue;
        run_folder_remove(path);
        removed += access(path, F_OK) != 0;
    }
    closedir(dir);
    return removed;
}
