/*
 * Launch bookkeeping and the database writer (profile_aggregate.h). A
 * program launches few distinct kernels, so keys are a plain array searched
 * linearly from the last hit; durations are kept whole so the median is exact.
 */
#include "profile_aggregate.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct agg_key {
    char *gpu, *kernel;
    uint32_t grid[3], block[3];
    uint64_t shared_bytes;
    uint64_t *ns;
    size_t n, cap;
} agg_key;

struct hs_prof_agg {
    agg_key *k;
    size_t n, cap;
    size_t last; /* the key hit last: consecutive launches are usually of the same kernel */
    uint64_t launches;
};

hs_prof_agg *hs_prof_agg_new(void) { return calloc(1, sizeof(hs_prof_agg)); }

void hs_prof_agg_free(hs_prof_agg *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++) {
        free(a->k[i].gpu);
        free(a->k[i].kernel);
        free(a->k[i].ns);
    }
    free(a->k);
    free(a);
}

static int cmp_u64(uint64_t x, uint64_t y) { return x < y ? -1 : x > y; }

/* The order of bridge/compute/profile_db.c, so the file reads sorted. */
static int cmp_key(const agg_key *e, const hs_profile_key *k)
{
    int c = strcmp(e->gpu, k->gpu);
    if (!c)
        c = strcmp(e->kernel, k->kernel);
    for (int i = 0; i < 3 && !c; i++)
        c = cmp_u64(e->grid[i], k->grid[i]);
    for (int i = 0; i < 3 && !c; i++)
        c = cmp_u64(e->block[i], k->block[i]);
    return c ? c : cmp_u64(e->shared_bytes, k->shared_bytes);
}

static hs_profile_key key_of(const agg_key *e)
{
    hs_profile_key k = {e->gpu,
                        e->kernel,
                        {e->grid[0], e->grid[1], e->grid[2]},
                        {e->block[0], e->block[1], e->block[2]},
                        e->shared_bytes};
    return k;
}

static agg_key *find(hs_prof_agg *a, const hs_profile_key *key)
{
    for (size_t j = 0; j < a->n; j++) {
        size_t i = (a->last + j) % a->n;
        if (!cmp_key(&a->k[i], key)) {
            a->last = i;
            return &a->k[i];
        }
    }
    return NULL;
}

static agg_key *insert(hs_prof_agg *a, const hs_profile_key *key)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 16;
        agg_key *nk = realloc(a->k, cap * sizeof *nk);
        if (!nk)
            return NULL;
        a->k = nk;
        a->cap = cap;
    }
    agg_key *e = &a->k[a->n];
    memset(e, 0, sizeof *e);
    e->gpu = strdup(key->gpu ? key->gpu : "");
    e->kernel = strdup(key->kernel ? key->kernel : "");
    if (!e->gpu || !e->kernel) {
        free(e->gpu);
        free(e->kernel);
        return NULL;
    }
    memcpy(e->grid, key->grid, sizeof e->grid);
    memcpy(e->block, key->block, sizeof e->block);
    e->shared_bytes = key->shared_bytes;
    a->last = a->n++;
    return e;
}

int hs_prof_agg_add(hs_prof_agg *a, const hs_profile_key *key, uint64_t duration_ns)
{
    agg_key *e = find(a, key);
    if (!e && !(e = insert(a, key)))
        return -1;
    if (e->n == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 8;
        uint64_t *ns = realloc(e->ns, cap * sizeof *ns);
        if (!ns)
            return -1;
        e->ns = ns;
        e->cap = cap;
    }
    e->ns[e->n++] = duration_ns;
    a->launches++;
    return 0;
}

size_t hs_prof_agg_keys(const hs_prof_agg *a) { return a ? a->n : 0; }
uint64_t hs_prof_agg_launches(const hs_prof_agg *a) { return a ? a->launches : 0; }

static int cmp_ns(const void *x, const void *y) { return cmp_u64(*(const uint64_t *)x, *(const uint64_t *)y); }

/* Statistics of one key's durations (sorted in place: their order carries no meaning). */
static void stats_of(agg_key *e, hs_prof_stats *s)
{
    qsort(e->ns, e->n, sizeof *e->ns, cmp_ns);
    double sum = 0;
    for (size_t i = 0; i < e->n; i++)
        sum += (double)e->ns[i];
    double median_ns = e->n % 2 ? (double)e->ns[e->n / 2] : ((double)e->ns[e->n / 2 - 1] + (double)e->ns[e->n / 2]) / 2;
    s->launches = e->n;
    s->median_us = median_ns / 1e3;
    s->mean_us = sum / (double)e->n / 1e3;
    s->min_us = (double)e->ns[0] / 1e3;
    s->max_us = (double)e->ns[e->n - 1] / 1e3;
}

int hs_prof_agg_stats(hs_prof_agg *a, const hs_profile_key *key, hs_prof_stats *out)
{
    agg_key *e = find(a, key);
    if (!e)
        return -1;
    stats_of(e, out);
    return 0;
}

static int cmp_entries(const void *x, const void *y)
{
    hs_profile_key ky = key_of(y);
    return cmp_key(x, &ky);
}

/* The readable name, when the program carries the C++ runtime's demangler. */
static void comment_name(FILE *f, const char *mangled)
{
    typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
    demangle_fn demangle = (demangle_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    int status = -1;
    char *readable = demangle ? demangle(mangled, NULL, NULL, &status) : NULL;
    if (readable && status == 0 && !strpbrk(readable, "\r\n"))
        fprintf(f, ": %s", readable);
    free(readable);
}

static int write_entries(hs_prof_agg *a, FILE *f, size_t *skipped)
{
    qsort(a->k, a->n, sizeof *a->k, cmp_entries);
    a->last = 0;
    for (size_t i = 0; i < a->n; i++) {
        hs_prof_stats s;
        stats_of(&a->k[i], &s);
        hs_profile_key key = key_of(&a->k[i]);
        /* a launch shorter than the clock's 1 ns still took time */
        double us = s.median_us > 0 ? s.median_us : 1e-3;
        if (fprintf(f, "# %llu launches, mean %.3f us, min %.3f us, max %.3f us", (unsigned long long)s.launches,
                    s.mean_us, s.min_us, s.max_us) < 0)
            return -1;
        comment_name(f, key.kernel);
        fputc('\n', f);
        if (hs_profile_db_write_entry(f, &key, us) != 0) {
            if (ferror(f))
                return -1;
            fprintf(f, "# (left out: this key cannot be written in the format)\n");
            (*skipped)++;
        }
    }
    return 0;
}

int hs_prof_agg_write(hs_prof_agg *a, const char *path, size_t *skipped, char *err, size_t errlen)
{
    char tmp[4096];
    *skipped = 0;
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp) {
        snprintf(err, errlen, "%s: path too long", path);
        return -1;
    }
    FILE *f = fopen(tmp, "we");
    if (!f) {
        snprintf(err, errlen, "%s: cannot write the profile database: %s", tmp, strerror(errno));
        return -1;
    }
    int rc = hs_profile_db_write_header(f) == 0 && write_entries(a, f, skipped) == 0 ? 0 : -1;
    if (fclose(f) != 0)
        rc = -1;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1;
    if (rc != 0) {
        snprintf(err, errlen, "%s: cannot write the profile database: %s", path, strerror(errno));
        remove(tmp);
    }
    return rc;
}
