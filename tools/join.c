/*
 * hysim join: starts, on another host, the processes of one server of a run
 * whose hysimd listens on TCP (`hysim run --servers ... --endpoint tcp:...`):
 * the same environment `hysim run` gives its own, with the run's token; the
 * rest (GPUs, host clock, epoch) comes from hysimd's answer to Register.
 * docs/launchers.md, "Several hosts".
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "launcher.h"

void cli_join_help(FILE *out)
{
    fprintf(out, "usage: hysim join [--token-file FILE] tcp:ADDRESS:PORT SERVER -- PROGRAM [ARGS]\n"
                 "\n"
                 "Runs PROGRAM as server SERVER of the run whose hysimd listens at tcp:ADDRESS:PORT\n"
                 "(started with `hysim run --servers LIST --endpoint tcp:ADDRESS:PORT --token-file FILE`\n"
                 "on another host, without SERVER in LIST). The run's token comes from FILE, or from\n"
                 "HYSIM_TOKEN; hysimd refuses a process without it.\n");
}

static int read_token(const char *path, char *out, size_t len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "re");
    if (!f || !fgets(out, (int)len, f)) {
        snprintf(err, errlen, "cannot read the token from %s: %s", path, f ? "it is empty" : strerror(errno));
        if (f)
            fclose(f);
        return -1;
    }
    fclose(f);
    out[strcspn(out, "\r\n")] = '\0';
    return 0;
}

int cli_join(int argc, char **argv)
{
    const char *token_file = NULL, *endpoint = NULL, *server_arg = NULL;
    int separator = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) {
            separator = i;
            break;
        }
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            cli_join_help(stdout);
            return HS_EXIT_OK;
        }
        if (!strcmp(argv[i], "--token-file") && i + 1 < argc)
            token_file = argv[++i];
        else if (!endpoint)
            endpoint = argv[i];
        else if (!server_arg)
            server_arg = argv[i];
        else
            separator = -2;
    }
    char *end = NULL;
    long server = server_arg ? strtol(server_arg, &end, 10) : -1;
    if (separator < 0 || separator + 1 >= argc || !endpoint || strncmp(endpoint, "tcp:", 4) != 0 || !end || *end ||
        server < 0) {
        fprintf(stderr, "hysim join: expected tcp:ADDRESS:PORT, a server number and -- PROGRAM\n");
        cli_join_help(stderr);
        return HS_EXIT_USAGE;
    }
    char token[256] = "", err[1024] = "", lib_dir[PATH_MAX];
    if (token_file && read_token(token_file, token, sizeof token, err, sizeof err) < 0) {
        fprintf(stderr, "hysim join: %s\n", err);
        return HS_EXIT_USAGE;
    }
    char **program = argv + separator + 1;
    if (launcher_find_lib_dir(lib_dir, sizeof lib_dir, err, sizeof err) ||
        launcher_check_program(program[0], err, sizeof err)) {
        fprintf(stderr, "hysim join: %s\n", err);
        return HS_EXIT_USAGE;
    }
    launcher_config cfg = {
        .endpoint = endpoint,
        .token = token[0] ? token : getenv("HYSIM_TOKEN"),
        .lib_dir = lib_dir,
        .argv = program,
    };
    launcher_exec(&cfg, (int)server);
    return HS_EXIT_USAGE; /* not reached: launcher_exec execs or exits */
}
