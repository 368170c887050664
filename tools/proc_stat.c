#include "proc_stat.h"

#include <stdio.h>
#include <string.h>

const char *proc_stat_fields(pid_t pid, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f || len == 0) {
        if (f)
            fclose(f);
        return NULL;
    }
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')');
    return paren ? paren + 1 : NULL;
}
