/*
 * hysim-profile: `hysim profile` alone, for a GPU machine that has CUDA but
 * not hysim's simulation dependencies (ns-3, protobuf-c, libyaml). Built by
 * bench/real/profile_real.sh with gcc from tools/profile.c and
 * bridge/compute/profile_db.c; takes the arguments of `hysim profile`.
 */
#include "cli.h"

int main(int argc, char **argv) { return cli_profile(argc, argv); }
