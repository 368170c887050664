/*
 * hysim validate: loads each scenario file and reports every problem in it.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "hysim/scenario.h"

void cli_validate_help(FILE *out)
{
    fprintf(out, "usage: hysim validate SCENARIO.yaml...\n"
                 "\n"
                 "Reads each scenario, fills defaults and checks every value. Prints\n"
                 "\"FILE: ok\" and a one-line description per valid file, and every problem\n"
                 "as FILE:LINE:COL: message otherwise. Exit code 2 if any file has a problem.\n"
                 "\n"
                 "example:\n"
                 "  hysim validate scenarios/h200x8.yaml\n");
}

int cli_validate(int argc, char **argv)
{
    if (argc < 2) {
        cli_validate_help(stderr);
        return HS_EXIT_USAGE;
    }
    int status = HS_EXIT_OK;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            cli_validate_help(stdout);
            return HS_EXIT_OK;
        }
        if (argv[i][0] == '-' && argv[i][1]) { /* not a file's "cannot open" */
            fprintf(stderr, "hysim validate: unknown option %s (it takes scenario files only)\n", argv[i]);
            return HS_EXIT_USAGE;
        }
    }
    for (int i = 1; i < argc; i++) {
        static hs_scenario sc;
        char errors[8192];
        errors[0] = '\0';
        int problems = hs_scenario_load(argv[i], &sc, errors, sizeof errors);
        if (problems) {
            fputs(errors, stderr);
            if (errors[0] && errors[strlen(errors) - 1] != '\n')
                fputc('\n', stderr);
            fprintf(stderr, "%s: %d problem%s\n", argv[i], problems, problems == 1 ? "" : "s");
            status = HS_EXIT_USAGE;
            continue;
        }
        char description[512];
        hs_scenario_describe(&sc, description, sizeof description);
        printf("%s: ok — %s\n", argv[i], description);
    }
    return status;
}
