/*
 * hysim: entry point of the command line. Dispatches to a subcommand and
 * prints help; each subcommand lives in its own file.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

#ifndef HYSIM_VERSION
#define HYSIM_VERSION "0.1.0"
#endif

static void print_help(FILE *out)
{
    fprintf(out,
            "hysim %s — run an unmodified CUDA + NCCL program on a simulated GPU cluster\n"
            "\n"
            "usage: hysim COMMAND [OPTIONS]\n"
            "\n"
            "commands:\n"
            "  run SCENARIO.yaml -- PROGRAM [ARGS]   run PROGRAM on the simulated cluster\n"
            "  validate SCENARIO.yaml...             check scenario files and report every problem\n"
            "  plot RUN_DIR                          PNG figures of a run written by run --out\n"
            "  join tcp:ADDR:PORT SERVER -- PROGRAM  run PROGRAM as SERVER of a run on another host\n"
            "  profile [--out FILE] -- PROGRAM [ARGS]  on a machine WITH a GPU: record PROGRAM's\n"
            "                                        kernel and GEMM-call durations into a\n"
            "                                        profile database\n"
            "  help [COMMAND]                        this text, or a command's\n"
            "  --version                             hysim's version\n"
            "\n"
            "examples:\n"
            "  hysim run scenarios/h200x8.yaml -- build/bin/allreduce_bench -b 1M -e 1G\n"
            "  hysim validate scenarios/*.yaml\n"
            "  hysim run --out run1 scenarios/h200x8.yaml -- build/bin/allreduce_bench -b 1M -e 64M\n"
            "  hysim plot run1\n"
            "  hysim help run\n"
            "\n"
            "exit codes: 0 ok, 1 the program failed, 2 usage or scenario error,\n"
            "            3 simulation error\n",
            HYSIM_VERSION);
}

static int help_for(const char *command)
{
    if (!strcmp(command, "run")) {
        cli_run_help(stdout);
        return HS_EXIT_OK;
    }
    if (!strcmp(command, "validate")) {
        cli_validate_help(stdout);
        return HS_EXIT_OK;
    }
    if (!strcmp(command, "plot")) {
        cli_plot_help(stdout);
        return HS_EXIT_OK;
    }
    if (!strcmp(command, "join")) {
        cli_join_help(stdout);
        return HS_EXIT_OK;
    }
    if (!strcmp(command, "profile")) {
        cli_profile_help(stdout);
        return HS_EXIT_OK;
    }
    fprintf(stderr, "hysim: unknown command \"%s\" (try hysim --help)\n", command);
    return HS_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_help(stderr);
        return HS_EXIT_USAGE;
    }
    const char *command = argv[1];
    if (!strcmp(command, "--help") || !strcmp(command, "-h")) {
        print_help(stdout);
        return HS_EXIT_OK;
    }
    if (!strcmp(command, "--version")) {
        printf("hysim %s\n", HYSIM_VERSION);
        return HS_EXIT_OK;
    }
    if (!strcmp(command, "help")) {
        if (argc > 2)
            return help_for(argv[2]);
        print_help(stdout);
        return HS_EXIT_OK;
    }
    if (!strcmp(command, "run"))
        return cli_run(argc - 1, argv + 1);
    if (!strcmp(command, "validate"))
        return cli_validate(argc - 1, argv + 1);
    if (!strcmp(command, "plot"))
        return cli_plot(argc - 1, argv + 1);
    if (!strcmp(command, "profile"))
        return cli_profile(argc - 1, argv + 1);
    if (!strcmp(command, "join"))
        return cli_join(argc - 1, argv + 1);
    fprintf(stderr, "hysim: unknown command \"%s\" (try hysim --help)\n", command);
    return HS_EXIT_USAGE;
}
