/*
 * Open-addressing hash map from a non-zero uintptr_t to a uintptr_t: linear
 * probing, deletion by backward shift (no tombstones), power-of-two capacity
 * kept at most half full. Used for device allocations, streams, events,
 * kernels and pinned host blocks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static size_t slot_of(uintptr_t key, size_t cap)
{
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32 ^ h) & (cap - 1);
}

uintptr_t hs_ptrmap_get(const hs_ptrmap *m, uintptr_t key)
{
    if (m->cap == 0 || key == 0)
        return 0;
    for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key)
            return m->vals[i];
        if (m->keys[i] == 0)
            return 0;
    }
}

static void insert_slot(uintptr_t *keys, uintptr_t *vals, size_t cap, uintptr_t key, uintptr_t val)
{
    size_t i = slot_of(key, cap);
    while (keys[i] != 0 && keys[i] != key)
        i = (i + 1) & (cap - 1);
    keys[i] = key;
    vals[i] = val;
}

static void grow(hs_ptrmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    uintptr_t *keys = calloc(cap, sizeof *keys);
    uintptr_t *vals = calloc(cap, sizeof *vals);
    if (!keys || !vals) {
        fprintf(stderr, "hysim: out of host memory for a map of %zu entries\n", cap);
        abort();
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i])
            insert_slot(keys, vals, cap, m->keys[i], m->vals[i]);
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
}

void hs_ptrmap_put(hs_ptrmap *m, uintptr_t key, uintptr_t val)
{
    if (key == 0)
        return;
    if ((m->len + 1) * 2 > m->cap)
        grow(m);
    size_t i = slot_of(key, m->cap);
    while (m->keys[i] != 0 && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    if (m->keys[i] == 0)
        m->len++;
    m->keys[i] = key;
    m->vals[i] = val;
}

uintptr_t hs_ptrmap_del(hs_ptrmap *m, uintptr_t key)
{
    if (m->cap == 0 || key == 0)
        return 0;
    size_t mask = m->cap - 1, i = slot_of(key, m->cap);
    while (m->keys[i] != key) {
        if (m->keys[i] == 0)
            return 0;
        i = (i + 1) & mask;
    }
    uintptr_t val = m->vals[i];
    /* Backward shift: move later members of the probe run into the hole. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; m->keys[j] != 0; j = (j + 1) & mask) {
        size_t home = slot_of(m->keys[j], m->cap);
        /* j's entry may fill the hole unless its home lies cyclically in (hole, j]. */
        int home_after_hole = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!home_after_hole) {
            m->keys[hole] = m->keys[j];
            m->vals[hole] = m->vals[j];
            hole = j;
        }
    }
    m->keys[hole] = 0;
    m->vals[hole] = 0;
    m->len--;
    return val;
}

void hs_ptrmap_clear(hs_ptrmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}
