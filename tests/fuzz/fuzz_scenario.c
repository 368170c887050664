/*
 * libFuzzer target: the scenario loader (hs_scenario_parse) on arbitrary
 * text. It must report problems, never crash, and keep its promises: a
 * NUL-terminated message within the buffer, and a scenario that parsed
 * describes itself.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hysim/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static hs_scenario sc;
    char errors[2048];
    memset(errors, 'x', sizeof errors);
    int problems = hs_scenario_parse((const char *)data, size, "fuzz.yaml", &sc, errors, sizeof errors);
    if (problems < 0 || !memchr(errors, '\0', sizeof errors))
        abort();
    if (problems > 0 && !errors[0]) {
        fprintf(stderr, "%d problems and no message\n", problems);
        abort();
    }
    if (problems == 0) {
        char description[512];
        hs_scenario_describe(&sc, description, sizeof description);
        if (!memchr(description, '\0', sizeof description) || hs_scenario_gpu_count(&sc) <= 0)
            abort();
    }
    return 0;
}
