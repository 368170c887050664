/* hysimd: allocation helpers and the uint64 → pointer hash map. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_internal.h"

static void out_of_memory(size_t n, size_t size)
{
    fprintf(stderr, "hysimd: out of memory (%zu × %zu bytes)\n", n, size);
    abort();
}

void *hs_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        out_of_memory(n, size);
    return p;
}

void *hs_xrealloc(void *p, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        out_of_memory(n, size);
    size_t bytes = n * size;
    void *q = realloc(p, bytes ? bytes : 1);
    if (!q)
        out_of_memory(n, size);
    return q;
}

void hs_grow(void **arr, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return;
    size_t ncap = *cap ? *cap : 8;
    while (ncap < need)
        ncap *= 2;
    *arr = hs_xrealloc(*arr, ncap, size);
    memset((char *)*arr + *cap * size, 0, (ncap - *cap) * size);
    *cap = ncap;
}

/* ---------------------------------------------------------------- u64map */

static size_t slot_of(uint64_t key, size_t cap)
{
    /* splitmix64 finaliser: keys are often small consecutive integers */
    key ^= key >> 30;
    key *= 0xbf58476d1ce4e5b9ULL;
    key ^= key >> 27;
    key *= 0x94d049bb133111ebULL;
    key ^= key >> 31;
    return (size_t)key & (cap - 1);
}

void *hs_u64map_get(const hs_u64map *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (!m->used[i])
            return NULL;
        if (m->keys[i] == key)
            return m->vals[i];
    }
}

static void rehash(hs_u64map *m, size_t ncap)
{
    hs_u64map n = {
        .keys = hs_xcalloc(ncap, sizeof(uint64_t)),
        .vals = hs_xcalloc(ncap, sizeof(void *)),
        .used = hs_xcalloc(ncap, 1),
        .cap = ncap,
    };
    for (size_t i = 0; i < m->cap; i++)
        if (m->used[i])
            hs_u64map_put(&n, m->keys[i], m->vals[i]);
    hs_u64map_free(m);
    *m = n;
}

void hs_u64map_put(hs_u64map *m, uint64_t key, void *val)
{
    if ((m->len + 1) * 4 > m->cap * 3)
        rehash(m, m->cap ? m->cap * 2 : 16);
    size_t i = slot_of(key, m->cap);
    while (m->used[i] && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    if (!m->used[i]) {
        m->used[i] = 1;
        m->keys[i] = key;
        m->len++;
    }
    m->vals[i] = val;
}

void *hs_u64map_del(hs_u64map *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    size_t mask = m->cap - 1, i = slot_of(key, m->cap);
    while (m->used[i] && m->keys[i] != key)
        i = (i + 1) & mask;
    if (!m->used[i])
        return NULL;
    void *val = m->vals[i];
    /* backward-shift deletion keeps probe chains intact without tombstones */
    for (size_t j = (i + 1) & mask; m->used[j]; j = (j + 1) & mask) {
        size_t home = slot_of(m->keys[j], m->cap);
        /* move j into the hole at i unless its home lies cyclically in (i, j] */
        bool stays = (i <= j) ? (i < home && home <= j) : (i < home || home <= j);
        if (!stays) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            i = j;
        }
    }
    m->used[i] = 0;
    m->len--;
    return val;
}

void hs_u64map_free(hs_u64map *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof(*m));
}

size_t hs_appendf(char *buf, size_t len, size_t at, const char *fmt, ...)
{
    if (at >= len)
        return at;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + at, len - at, fmt, ap);
    va_end(ap);
    return w < 0 ? at : at + (size_t)w;
}
