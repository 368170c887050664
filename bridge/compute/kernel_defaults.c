/*
 * The kernels the per-kernel default timed, by name and time: the report's
 * list of what to profile first (kernel_time.h declares it).
 */
#include <stdlib.h>
#include <string.h>

#include "daemon_internal.h"
#include "hysimd.h"
#include "kernel_time.h"

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

void hs_kernel_time_note_default(hs_daemon *d, const char *name, uint64_t dur_ps)
{
    if (!name || !*name)
        name = "(unnamed)";
    uint64_t h = name_hash(name);
    uintptr_t i = (uintptr_t)hs_u64map_get(&d->default_of, h);
    if (!i || strcmp(d->defaults[i - 1].name, name)) {
        for (i = 0; i < d->ndefaults && strcmp(d->defaults[i].name, name); i++) /* a hash collision: rare */
            ;
        if (i == d->ndefaults) {
            hs_grow((void **)&d->defaults, &d->capdefaults, d->ndefaults + 1, sizeof(*d->defaults));
            size_t len = strlen(name) + 1;
            char *copy = hs_xcalloc(len, 1);
            memcpy(copy, name, len);
            d->defaults[d->ndefaults] = (hs_default_kernel){copy, 0, 0};
            d->ndefaults++;
            if (!hs_u64map_get(&d->default_of, h))
                hs_u64map_put(&d->default_of, h, (void *)(uintptr_t)d->ndefaults);
        }
        i++;
    }
    d->defaults[i - 1].count++;
    d->defaults[i - 1].ps += dur_ps;
}

static int by_time(const void *a, const void *b)
{
    const hs_default_kernel *x = a, *y = b;
    if (x->ps != y->ps)
        return x->ps > y->ps ? -1 : 1;
    return strcmp(x->name, y->name);
}

const hs_default_kernel *hs_kernel_time_defaults(hs_daemon *d, size_t *n)
{
    if (d->ndefaults > 1)
        qsort(d->defaults, d->ndefaults, sizeof(*d->defaults), by_time);
    hs_u64map_free(&d->default_of); /* the indices moved: rebuilt */
    for (size_t i = 0; i < d->ndefaults; i++)
        hs_u64map_put(&d->default_of, name_hash(d->defaults[i].name), (void *)(uintptr_t)(i + 1));
    *n = d->ndefaults;
    return d->defaults;
}

size_t hs_daemon_default_kernels(hs_daemon *d, const char **names, uint64_t *counts, uint64_t *ps, size_t max)
{
    size_t n;
    const hs_default_kernel *k = hs_kernel_time_defaults(d, &n);
    for (size_t i = 0; i < n && i < max; i++) {
        names[i] = k[i].name;
        counts[i] = k[i].count;
        ps[i] = k[i].ps;
    }
    return n;
}
