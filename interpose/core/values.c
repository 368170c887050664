/*
 * Known device bytes: a sorted array of non-overlapping blocks, each the
 * last small write to its range. A write replaces what it overlaps; the
 * oldest blocks are dropped past HS_VALUES_MAX_TOTAL. docs/values.md says
 * what a program reads back and why.
 */
#include "values.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct block {
    uintptr_t addr;
    size_t len;
    uint64_t age;     /* order of writing: the smallest goes first when over the total */
    uint64_t born;    /* kernels launched when it was written */
    uint64_t read_at; /* kernels launched when it was first read; UINT64_MAX: not read */
    uint8_t *data;
    bool pending;  /* its exact bytes are a collective's, fetched when first read (hs_values_pending) */
    bool computed; /* a kernel's whole output (hs_values_write_computed): a part of it may be read later */
    uint64_t comm_key, seq;
    uint32_t rank;
    int peer; /* a Recv's sender; -1: a collective */
} block;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static block *g_blocks; /* sorted by addr */
static size_t g_n, g_cap, g_total;
static uint64_t g_age;
static _Atomic uint64_t g_kernels; /* launched so far */
static _Atomic(hs_values_fetch_fn) g_fetch;

void hs_values_set_fetch(hs_values_fetch_fn fetch) { atomic_store(&g_fetch, fetch); }

static void remove_at(size_t i);

void hs_values_kernel_launched(void) { atomic_fetch_add_explicit(&g_kernels, 1, memory_order_relaxed); }

uint64_t hs_values_kernels(void) { return atomic_load_explicit(&g_kernels, memory_order_relaxed); }

static uint64_t kernels_since(const block *b, uint64_t kernels) { return kernels - b->born; }

/* Whether a kernel may have overwritten b since (values.h, HS_VALUES_KERNEL_WINDOW). */
static int expired(const block *b, uint64_t kernels)
{
    return kernels_since(b, kernels) > HS_VALUES_KERNEL_WINDOW || (b->read_at != UINT64_MAX && kernels != b->read_at);
}

/* Drops the expired blocks (lock held). */
static void expire_locked(void)
{
    uint64_t k = atomic_load_explicit(&g_kernels, memory_order_relaxed);
    for (size_t i = 0; i < g_n;)
        if (expired(&g_blocks[i], k))
            remove_at(i);
        else
            i++;
}

/* Index of the first block that ends after addr. */
static size_t first_after(uintptr_t addr)
{
    size_t lo = 0, hi = g_n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (g_blocks[mid].addr + g_blocks[mid].len <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void remove_at(size_t i)
{
    g_total -= g_blocks[i].len;
    free(g_blocks[i].data);
    memmove(&g_blocks[i], &g_blocks[i + 1], (g_n - i - 1) * sizeof *g_blocks);
    g_n--;
}

/* Inserts b at index i (its place in address order); 0 when out of memory. */
static int insert_at(size_t i, block b)
{
    if (g_n == g_cap) {
        size_t cap = g_cap ? 2 * g_cap : 64;
        block *nb = realloc(g_blocks, cap * sizeof *nb);
        if (!nb)
            return 0;
        g_blocks = nb;
        g_cap = cap;
    }
    memmove(&g_blocks[i + 1], &g_blocks[i], (g_n - i) * sizeof *g_blocks);
    g_blocks[i] = b;
    g_n++;
    g_total += b.len;
    return 1;
}

/* Cuts [addr, addr + n) out of every block (lock held). */
static void forget_locked(uintptr_t addr, size_t n)
{
    uintptr_t end = addr + n;
    size_t i = first_after(addr);
    while (i < g_n && g_blocks[i].addr < end) {
        block *b = &g_blocks[i];
        uintptr_t bend = b->addr + b->len;
        if (b->addr < addr && bend > end) { /* the hole is inside: split in two */
            block tail = *b;
            tail.addr = end;
            tail.len = bend - end;
            tail.data = malloc(bend - end);
            if (!tail.data) {
                remove_at(i);
                return;
            }
            memcpy(tail.data, b->data + (end - b->addr), tail.len);
            g_total -= bend - addr; /* the head stays; insert_at counts the tail again */
            b->len = addr - b->addr;
            if (!insert_at(i + 1, tail))
                free(tail.data);
            return;
        }
        if (b->addr < addr) { /* keep the head */
            g_total -= bend - addr;
            b->len = addr - b->addr;
            i++;
        } else if (bend > end) { /* keep the tail */
            size_t cut = end - b->addr;
            memmove(b->data, b->data + cut, b->len - cut);
            b->addr = end;
            b->len -= cut;
            g_total -= cut;
            i++;
        } else {
            remove_at(i);
        }
    }
}

static void drop_oldest_locked(void)
{
    while (g_total > HS_VALUES_MAX_TOTAL && g_n > 0) {
        size_t oldest = 0;
        for (size_t i = 1; i < g_n; i++)
            if (g_blocks[i].age < g_blocks[oldest].age)
                oldest = i;
        remove_at(oldest);
    }
}

/* Takes ownership of data (n bytes): the block [dst, dst + n). */
static void put_locked(uintptr_t dst, uint8_t *data, size_t n, bool computed)
{
    forget_locked(dst, n);
    block b = {.addr = dst,
               .len = n,
               .age = ++g_age,
               .born = atomic_load_explicit(&g_kernels, memory_order_relaxed),
               .read_at = UINT64_MAX,
               .data = data,
               .computed = computed,
               .peer = -1};
    if (!insert_at(first_after(dst), b))
        free(data);
    drop_oldest_locked();
}

static void write_block(uintptr_t dst, const void *src, size_t n, bool computed)
{
    uint8_t *data = n && n <= HS_VALUES_MAX_BYTES ? malloc(n) : NULL;
    if (data)
        memcpy(data, src, n);
    pthread_mutex_lock(&g_lock);
    if (data)
        put_locked(dst, data, n, computed);
    else
        forget_locked(dst, n);
    pthread_mutex_unlock(&g_lock);
}

void hs_values_write(uintptr_t dst, const void *src, size_t n) { write_block(dst, src, n, false); }

void hs_values_write_computed(uintptr_t dst, const void *src, size_t n) { write_block(dst, src, n, true); }

void hs_values_fill(uintptr_t dst, int byte, size_t n)
{
    uint8_t *data = (byte & 0xff) && n && n <= HS_VALUES_MAX_BYTES ? malloc(n) : NULL;
    if (data)
        memset(data, byte, n);
    pthread_mutex_lock(&g_lock);
    if (data)
        put_locked(dst, data, n, false);
    else
        forget_locked(dst, n); /* zeros, or too large to keep */
    pthread_mutex_unlock(&g_lock);
}

/* Returns how many of the n bytes were known; a read the program makes (mark) starts its blocks' expiry. */
static size_t read_locked(void *dst, uintptr_t src, size_t n, bool mark)
{
    size_t known = 0;
    memset(dst, 0, n);
    expire_locked();
    uint64_t k = atomic_load_explicit(&g_kernels, memory_order_relaxed);
    uintptr_t end = src + n;
    for (size_t i = first_after(src); i < g_n && g_blocks[i].addr < end; i++) {
        block *b = &g_blocks[i];
        /* Part of a block, after a kernel: most likely a new tensor in reused memory (docs/values.md). */
        if ((b->addr < src || b->addr + b->len > end) && kernels_since(b, k) > 0 && !b->computed)
            continue;
        if (mark && b->read_at == UINT64_MAX)
            b->read_at = k;
        uintptr_t from = b->addr > src ? b->addr : src;
        uintptr_t to = b->addr + b->len < end ? b->addr + b->len : end;
        memcpy((uint8_t *)dst + (from - src), b->data + (from - b->addr), to - from);
        known += to - from;
    }
    return known;
}

/*
 * Fetches the exact bytes of the pending blocks [src, src + n) overlaps, the
 * lock released meanwhile (the fetch waits for the other ranks); returns
 * locked, with none pending there.
 */
static void settle_pending_locked(uintptr_t src, size_t n)
{
    hs_values_fetch_fn fetch = atomic_load(&g_fetch);
    for (;;) {
        expire_locked();
        size_t i = first_after(src);
        while (i < g_n && g_blocks[i].addr < src + n && !g_blocks[i].pending)
            i++;
        if (i >= g_n || g_blocks[i].addr >= src + n)
            return;
        block b = g_blocks[i];
        g_blocks[i].pending = false; /* asked once: a read meanwhile takes what is kept */
        uint8_t *got = fetch ? malloc(b.len) : NULL;
        pthread_mutex_unlock(&g_lock);
        int ok = got && fetch(b.comm_key, b.seq, b.rank, b.peer, got, b.len);
        pthread_mutex_lock(&g_lock);
        size_t j = first_after(b.addr);
        if (ok && j < g_n && g_blocks[j].addr == b.addr && g_blocks[j].len == b.len && g_blocks[j].age == b.age)
            memcpy(g_blocks[j].data, got, b.len); /* still the block the collective wrote */
        free(got);
    }
}

void hs_values_pending(uintptr_t dst, size_t n, uint64_t comm_key, uint64_t seq, uint32_t rank, int peer)
{
    pthread_mutex_lock(&g_lock);
    size_t i = first_after(dst);
    if (!(i < g_n && g_blocks[i].addr == dst && g_blocks[i].len == n)) { /* nothing kept: zeros for now */
        uint8_t *zeros = n <= HS_VALUES_MAX_BYTES ? calloc(1, n) : NULL;
        if (zeros)
            put_locked(dst, zeros, n, false);
        i = first_after(dst);
    }
    if (i < g_n && g_blocks[i].addr == dst && g_blocks[i].len == n) {
        g_blocks[i].pending = true;
        g_blocks[i].comm_key = comm_key;
        g_blocks[i].seq = seq;
        g_blocks[i].rank = rank;
        g_blocks[i].peer = peer;
    }
    pthread_mutex_unlock(&g_lock);
}

static size_t read_values(void *dst, uintptr_t src, size_t n, bool mark)
{
    pthread_mutex_lock(&g_lock);
    settle_pending_locked(src, n);
    size_t known = read_locked(dst, src, n, mark);
    pthread_mutex_unlock(&g_lock);
    return known;
}

size_t hs_values_read(void *dst, uintptr_t src, size_t n) { return read_values(dst, src, n, true); }

size_t hs_values_peek(void *dst, uintptr_t src, size_t n) { return read_values(dst, src, n, false); }

void hs_values_copy(uintptr_t dst, uintptr_t src, size_t n)
{
    pthread_mutex_lock(&g_lock);
    settle_pending_locked(src, n);
    expire_locked();
    size_t i = first_after(src);
    int known = i < g_n && g_blocks[i].addr < src + n;
    uint8_t *data = known && n <= HS_VALUES_MAX_BYTES ? malloc(n) : NULL;
    if (data) {
        read_locked(data, src, n, true);
        put_locked(dst, data, n, false);
    } else {
        forget_locked(dst, n);
    }
    pthread_mutex_unlock(&g_lock);
}

void hs_values_forget(uintptr_t dst, size_t n)
{
    pthread_mutex_lock(&g_lock);
    forget_locked(dst, n);
    pthread_mutex_unlock(&g_lock);
}

size_t hs_values_total(void)
{
    pthread_mutex_lock(&g_lock);
    size_t t = g_total;
    pthread_mutex_unlock(&g_lock);
    return t;
}
