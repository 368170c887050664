/*
 * The compute model's grouped GEMM (bridge/compute/grouped_gemm_model.c)
 * against torch._grouped_mm's real kernel times on an H200
 * (bench/real/data/grouped_mm_h200/grouped_mm.csv, bench/real/grouped_mm_sweep.py):
 * every row, each kernel's schedule and tile as the sweep read them from its
 * name, 2 x 1 clusters. Fails when the mean or the largest relative error
 * passes MEAN_PCT or WORST_PCT (bench/RESULTS.md, "Grouped GEMMs"), or when
 * the file holds fewer than ROWS rows.
 * usage: grouped_gemm_calibration_test CSV ROWS MEAN_PCT WORST_PCT
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grouped_gemm_model.h"
#include "hysim/scenario.h"

#define MAX_GROUPS 256

/* One CSV row as the model's product; false if it does not parse. */
static bool parse_row(char *line, hs_grouped_gemm *g, uint32_t *sizes, double *us)
{
    char op[16], split[16], sizes_s[4096], sched[32];
    unsigned groups, tokens, n, k, tm, tn, tk;
    if (sscanf(line, "%15[^,],%u,%u,%u,%u,%15[^,],%4095[^,],%lf,%*f,%31s %ux%ux%u", op, &groups, &tokens, &n, &k, split,
               sizes_s, us, sched, &tm, &tn, &tk) != 12 ||
        groups > MAX_GROUPS)
        return false;
    size_t count = 0;
    for (char *s = strtok(sizes_s, ";"); s && count < groups; s = strtok(NULL, ";"))
        sizes[count++] = (uint32_t)strtoul(s, NULL, 10);
    if (count != groups)
        return false;
    *g = (hs_grouped_gemm){.sizes = sizes,
                           .groups = groups,
                           .tile_m = tm,
                           .tile_n = tn,
                           .cluster_m = 2,
                           .pingpong = !strcmp(sched, "Pingpong")};
    if (!strcmp(op, "fwd")) /* x[T, k] @ w[G, k, n] */
        g->grouped = HS_GROUPED_M, g->n = n, g->k = k;
    else if (!strcmp(op, "dgrad")) /* g[T, n] @ w[G, n, k] */
        g->grouped = HS_GROUPED_M, g->n = k, g->k = n;
    else if (!strcmp(op, "wgrad")) /* x^T[k, T] @ g[T, n]: each group its tokens deep */
        g->grouped = HS_GROUPED_K, g->m = k, g->n = n;
    else
        return false;
    return true;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s CSV ROWS MEAN_PCT WORST_PCT\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    hs_scenario sc;
    char err[1024], line[8192];
    const char *yaml = "gpu: {model: H200}\nservers: {count: 1, gpus_per_server: 1}\n";
    if (hs_scenario_parse(yaml, strlen(yaml), "H200", &sc, err, sizeof err)) {
        fprintf(stderr, "%s", err);
        return 1;
    }
    size_t rows = 0;
    double sum = 0, worst = 0;
    while (fgets(line, sizeof line, f)) {
        hs_grouped_gemm g;
        uint32_t sizes[MAX_GROUPS];
        double real;
        if (!strncmp(line, "op,", 3))
            continue;
        if (!parse_row(line, &g, sizes, &real)) {
            fprintf(stderr, "%s: a row that does not parse: %s", argv[1], line);
            return 1;
        }
        double err_pct = 100 * fabs(hs_grouped_gemm_us(&sc, &g) / real - 1);
        sum += err_pct;
        if (err_pct > worst)
            worst = err_pct;
        rows++;
    }
    fclose(f);
    double mean = rows ? sum / (double)rows : 0;
    printf("%zu rows: mean error %.1f %%, worst %.1f %%\n", rows, mean, worst);
    if (rows < strtoul(argv[2], NULL, 10) || mean > atof(argv[3]) || worst > atof(argv[4])) {
        printf("FAIL: want at least %s rows, mean within %s %%, worst within %s %%\n", argv[2], argv[3], argv[4]);
        return 1;
    }
    printf("ok\n");
    return 0;
}
