#!/bin/sh
# Fits the cost table of hysim's libcurand (interpose/curand/curand.c) to one GPU's
# run of bench/interpose/curand_gen.cu (bench/real/data/curand_gen_<gpu>.txt)
# and prints its C initializers: per generator, the set-up of its states (the
# median of first - median over the rows of 2^24 and 2^28 numbers), then per
# distribution (uniform, normal, uniform double, uint32) the fixed cost in us
# and the numbers per us through the medians of 2^24 and 2^28 numbers.
# usage: bench/interpose/curand_fit.sh bench/real/data/curand_gen_h200.txt
set -eu
awk '$3 ~ /^[0-9]+$/ && ($3 == 16777216 || $3 == 268435456) {
       g = $1; d = $2; t[g, d, $3] = $5
       if (!(g in seen)) { seen[g] = 1; order[++ng] = g }
       ns[g]++; s[g, ns[g]] = $4 - $5 }
     END {
       nd = split("uniform normal uniform_double uint32", dist, " ")
       for (i = 1; i <= ng; i++) {
         g = order[i]; n = ns[g]
         for (a = 2; a <= n; a++) { x = s[g, a]; for (b = a - 1; b >= 1 && s[g, b] > x; b--) s[g, b + 1] = s[g, b]; s[g, b + 1] = x }
         setup = n % 2 ? s[g, (n + 1) / 2] : (s[g, n / 2] + s[g, n / 2 + 1]) / 2
         line = sprintf("static const gen_costs %s = {%.0f, {", toupper(g), setup)
         for (j = 1; j <= nd; j++) {
           d = dist[j]; t1 = t[g, d, 16777216]; t2 = t[g, d, 268435456]
           rate = (268435456 - 16777216) / (t2 - t1); fixed = t1 - 16777216 / rate
           line = line sprintf("%s{%.1f, %.1fe3}", j > 1 ? ", " : "", fixed, rate / 1e3)
         }
         print line "}};"
       } }' "$1"
