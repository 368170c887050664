/*
 * The profile database loader (bridge/compute/profile_db.h): a valid file is found by
 * its full key and only by it; malformed files are refused with the line and
 * the reason.
 * usage: profile_db_test TMPDIR
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "profile_db.h"

#define HS_CHECK_COUNTS
static int failures;
#include "test_check.h"
static char dir[512];

static const char *write_file(const char *name, const char *text)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f)) {
        perror(path);
        exit(1);
    }
    return path;
}

/* Loading `text` fails with an error containing `want`. */
static void refused(const char *name, const char *text, const char *want)
{
    char err[512] = "";
    hs_profile_db *db = hs_profile_db_load(write_file(name, text), err, sizeof err);
    CHECK_COND(db == NULL);
    hs_profile_db_free(db);
    if (!strstr(err, want)) {
        printf("FAIL %s: error \"%s\" does not contain \"%s\"\n", name, err, want);
        failures++;
    }
}

static void test_lookup(void)
{
    const char *text = "# hysim-profile 1\n"
                       "# gpu,kernel,grid_x,grid_y,grid_z,block_x,block_y,block_z,shared_bytes,us\n"
                       "\n"
                       "NVIDIA H200,_Z4stepPf,1024,1,1,256,1,1,0,12.5\n"
                       "NVIDIA H200,_Z4stepPf,2048,1,1,256,1,1,0,24\n"
                       "NVIDIA H200,_Z4stepPf,1024,1,1,256,1,1,4096,13.25\n"
                       "NVIDIA H100 80GB HBM3,_Z4stepPf,1024,1,1,256,1,1,0,15\r\n";
    char err[512] = "";
    hs_profile_db *db = hs_profile_db_load(write_file("good.csv", text), err, sizeof err);
    CHECK_COND(db != NULL);
    if (!db) {
        printf("  %s\n", err);
        return;
    }
    CHECK_COND(hs_profile_db_size(db) == 4);
    double us = 0;
    hs_profile_key k = {"NVIDIA H200", "_Z4stepPf", {1024, 1, 1}, {256, 1, 1}, 0};
    CHECK_COND(hs_profile_db_lookup(db, &k, &us) && us == 12.5);
    k.grid[0] = 2048;
    CHECK_COND(hs_profile_db_lookup(db, &k, &us) && us == 24);
    k.grid[0] = 1024, k.shared_bytes = 4096;
    CHECK_COND(hs_profile_db_lookup(db, &k, &us) && us == 13.25);
    k.shared_bytes = 0, k.gpu = "NVIDIA H100 80GB HBM3";
    CHECK_COND(hs_profile_db_lookup(db, &k, &us) && us == 15); /* CRLF line ends read */
    /* any other field differing: not found */
    k.gpu = "NVIDIA H200", k.block[0] = 128;
    CHECK_COND(!hs_profile_db_lookup(db, &k, &us));
    k.block[0] = 256, k.grid[1] = 2;
    CHECK_COND(!hs_profile_db_lookup(db, &k, &us));
    k.grid[1] = 1, k.kernel = "_Z4stepPd";
    CHECK_COND(!hs_profile_db_lookup(db, &k, &us));
    k.kernel = "_Z4stepPf", k.gpu = "NVIDIA H20";
    CHECK_COND(!hs_profile_db_lookup(db, &k, &us));
    CHECK_COND(!hs_profile_db_lookup(NULL, &k, &us));
    hs_profile_db_free(db);
}

static void test_refused(void)
{
    char err[512] = "";
    CHECK_COND(hs_profile_db_load("/nonexistent/profiles.csv", err, sizeof err) == NULL);
    CHECK_COND(strstr(err, "cannot open") != NULL);
    refused("empty.csv", "", "empty file");
    refused("magic.csv", "# hysim-profile 2\n", ":1: not a hysim profile database");
    refused("fields.csv", "# hysim-profile 1\nNVIDIA H200,_Z1kv,1,1,1,32,1,1,0\n", ":2: expected 10 comma-separated");
    refused("extra.csv", "# hysim-profile 1\nNVIDIA H200,_Z1kv,1,1,1,32,1,1,0,5,6\n", ":2: expected 10");
    refused("zero_grid.csv", "# hysim-profile 1\n#\nNVIDIA H200,_Z1kv,0,1,1,32,1,1,0,5\n", ":3: grid and block");
    refused("neg.csv", "# hysim-profile 1\nNVIDIA H200,_Z1kv,1,1,1,-32,1,1,0,5\n", ":2: grid and block");
    refused("shared.csv", "# hysim-profile 1\nNVIDIA H200,_Z1kv,1,1,1,32,1,1,x,5\n", ":2: shared_bytes");
    refused("us.csv", "# hysim-profile 1\nNVIDIA H200,_Z1kv,1,1,1,32,1,1,0,0\n", ":2: us must be a positive");
    refused("nan.csv", "# hysim-profile 1\nNVIDIA H200,_Z1kv,1,1,1,32,1,1,0,nan\n", ":2: us must be");
    refused("name.csv", "# hysim-profile 1\nNVIDIA H200,,1,1,1,32,1,1,0,1\n", ":2: empty gpu or kernel");
    refused("dup.csv",
            "# hysim-profile 1\nNVIDIA H200,_Z1kv,1,1,1,32,1,1,0,5\nNVIDIA H200,_Z1kv,2,1,1,32,1,1,0,5\n"
            "NVIDIA H200,_Z1kv,1,1,1,32,1,1,0,6\n",
            ":4: kernel _Z1kv on NVIDIA H200 with this grid, block and shared memory is already on line 2");
}

/* A kernel the database holds at other launch sizes: interpolated in threads, floored, along the top slope above. */
static void test_scaled(void)
{
    const char *text = "# hysim-profile 1\n"
                       "NVIDIA H200,_Z3addPf,10,1,1,128,1,1,0,10\n"
                       "NVIDIA H200,_Z3addPf,100,1,1,128,1,1,0,28\n"
                       "NVIDIA H200,_Z3addPf,40,1,1,64,1,1,0,99\n"
                       "NVIDIA H200,_Z3mulPf,8,1,1,256,1,1,0,4\n"
                       "NVIDIA H100 80GB HBM3,_Z3addPf,1000,1,1,128,1,1,0,500\n";
    char err[512] = "";
    hs_profile_db *db = hs_profile_db_load(write_file("scaled.csv", text), err, sizeof err);
    CHECK_COND(db != NULL);
    if (!db)
        return;
    double us = 0;
    hs_profile_key k = {"NVIDIA H200", "_Z3addPf", {55, 1, 1}, {128, 1, 1}, 0};
    CHECK(hs_profile_db_scaled(db, &k, &us) && fabs(us - 19) < 1e-9, "between two sizes: %g, not 19", us);
    k.grid[0] = 5;
    CHECK(hs_profile_db_scaled(db, &k, &us) && us == 10, "below the smallest: %g, not 10", us);
    k.grid[0] = 50, k.grid[1] = 4; /* 200 blocks: above the largest, on the slope of 10 -> 100 blocks (0.2 us each) */
    CHECK(hs_profile_db_scaled(db, &k, &us) && fabs(us - 48) < 1e-9, "above the largest: %g, not 48", us);
    k.grid[0] = 8000, k.grid[1] = 1, k.block[0] = 256; /* a lone entry (_Z3mulPf's below) is not scaled up */
    k.kernel = "_Z3mulPf";
    CHECK(hs_profile_db_scaled(db, &k, &us) && us == 4, "a lone entry, far above: %g, not 4", us);
    k.kernel = "_Z3addPf", k.block[0] = 128;
    k.grid[0] = 100, k.grid[1] = 1, k.block[0] = 32; /* no entry with this block: all of the name, by threads */
    double want = 99 + (28 - 99) * (3200.0 - 2560) / (12800 - 2560); /* between 40 x 64 and 100 x 128 threads */
    CHECK(hs_profile_db_scaled(db, &k, &us) && fabs(us - want) < 1e-9, "another block: %g, not %g", us, want);
    k.kernel = "_Z3subPf";
    CHECK_COND(!hs_profile_db_scaled(db, &k, &us)); /* a name the database lacks */
    k.kernel = "_Z3mulPf", k.gpu = "NVIDIA H100 80GB HBM3";
    CHECK_COND(!hs_profile_db_scaled(db, &k, &us)); /* another GPU's entries do not count */
    CHECK_COND(!hs_profile_db_scaled(NULL, &k, &us));
    hs_profile_db_free(db);
}

/* A kernel of a template the database has with other arguments: the template's entries, by threads. */
static void test_family(void)
{
    CHECK_COND(hs_profile_family_length("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_3MulEEEviT0_") == 45);
    CHECK_COND(hs_profile_family_length("_Z6kernelIfEvPT_") == 10);
    CHECK_COND(hs_profile_family_length("_Z4stepPf") == 0); /* not a template */
    CHECK_COND(hs_profile_family_length("cudnn_fused_graph") == 0);
    const char *text =
        "# hysim-profile 1\n"
        "NVIDIA H200,_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_3AddEEEviT0_,100,1,1,128,1,1,0,8\n"
        "NVIDIA H200,_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_4GeluEEEviT0_,400,1,1,128,1,1,0,20\n"
        "NVIDIA H200,_ZN2at6native18elementwise_kernelILi128ELi4ENS0_3AddEEEviT1_,300,1,1,128,1,1,0,99\n";
    char err[512] = "";
    hs_profile_db *db = hs_profile_db_load(write_file("family.csv", text), err, sizeof err);
    CHECK_COND(db != NULL);
    if (!db)
        return;
    double us = 0;
    hs_profile_key k = {"NVIDIA H200",
                        "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_3MulEEEviT0_",
                        {200, 1, 1},
                        {128, 1, 1},
                        0};
    CHECK(hs_profile_db_scaled(db, &k, &us) == 2 && fabs(us - 12) < 1e-9, "a family's: %g, not 12", us);
    k.kernel = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_3AddEEEviT0_";
    /* its own name's one entry (100 blocks, 8 us), kept flat above it */
    CHECK(hs_profile_db_scaled(db, &k, &us) == 1 && fabs(us - 8) < 1e-9, "its own name's: %g, not 8", us);
    k.kernel = "_ZN2at6native13reduce_kernelILi512ELi1EEEvT1_";
    CHECK_COND(hs_profile_db_scaled(db, &k, &us) == 0); /* a template the database lacks */
    hs_profile_db_free(db);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s TMPDIR\n", argv[0]);
        return 2;
    }
    snprintf(dir, sizeof dir, "%s", argv[1]);
    mkdir(dir, 0755);
    test_lookup();
    test_scaled();
    test_family();
    test_refused();
    printf(failures ? "FAIL\n" : "ok\n");
    return failures ? 1 : 0;
}
