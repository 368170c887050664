/*
 * The hysim command line: one function per subcommand, sharing exit codes.
 */
#ifndef HYSIM_TOOLS_CLI_H
#define HYSIM_TOOLS_CLI_H

#include <stdio.h>

/* Exit codes, documented in `hysim --help` and README.md. */
enum {
    HS_EXIT_OK = 0,
    HS_EXIT_PROGRAM_FAILED = 1, /* the simulated program exited non-zero or was killed */
    HS_EXIT_USAGE = 2,          /* bad command line or scenario */
    HS_EXIT_SIMULATION = 3,     /* the simulation itself failed */
};

int cli_run(int argc, char **argv);
int cli_validate(int argc, char **argv);
int cli_plot(int argc, char **argv);
int cli_profile(int argc, char **argv); /* profile.c */
int cli_join(int argc, char **argv);    /* join.c */

void cli_run_help(FILE *out);
void cli_validate_help(FILE *out);
void cli_plot_help(FILE *out);
void cli_profile_help(FILE *out);
void cli_join_help(FILE *out);

#endif
