/*
 * Profile database loader and lookup (profile_db.h). Entries are kept sorted
 * by key, so a lookup is a binary search and the result never depends on
 * the order of the file beyond the duplicate check.
 */
#include "profile_db.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HS_PROFILE_MAGIC "# hysim-profile 1"

typedef struct entry {
    char *gpu, *kernel;
    uint32_t grid[3], block[3];
    uint64_t shared_bytes;
    double us;
    size_t line;
} entry;

struct hs_profile_db {
    entry *e;
    size_t n, cap;
};

static int cmp_u64(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }

static int cmp_key(const entry *a, const hs_profile_key *k)
{
    int c = strcmp(a->gpu, k->gpu);
    if (!c)
        c = strcmp(a->kernel, k->kernel);
    for (int i = 0; i < 3 && !c; i++)
        c = cmp_u64(a->grid[i], k->grid[i]);
    for (int i = 0; i < 3 && !c; i++)
        c = cmp_u64(a->block[i], k->block[i]);
    return c ? c : cmp_u64(a->shared_bytes, k->shared_bytes);
}

static hs_profile_key key_of(const entry *e)
{
    hs_profile_key k = {e->gpu,
                        e->kernel,
                        {e->grid[0], e->grid[1], e->grid[2]},
                        {e->block[0], e->block[1], e->block[2]},
                        e->shared_bytes};
    return k;
}

static int cmp_entries(const void *a, const void *b)
{
    hs_profile_key kb = key_of(b);
    return cmp_key(a, &kb);
}

static bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    if (!*s || *s == '-' || *s == '+')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > max)
        return false;
    *out = v;
    return true;
}

/* Splits line (modified) into exactly 10 fields; false if the count differs. */
static bool split_fields(char *line, char *f[10])
{
    int n = 0;
    for (char *p = line;; p++) {
        if (n == 10)
            return false;
        f[n++] = p;
        p = strchr(p, ',');
        if (!p)
            break;
        *p = '\0';
    }
    return n == 10;
}

static const char *parse_entry(char *line, entry *e)
{
    char *f[10];
    if (!split_fields(line, f))
        return "expected 10 comma-separated fields: "
               "gpu,kernel,grid_x,grid_y,grid_z,block_x,block_y,block_z,shared_bytes,us";
    if (!*f[0] || !*f[1])
        return "empty gpu or kernel name";
    uint64_t v[7];
    for (int i = 0; i < 7; i++)
        if (!parse_u64(f[2 + i], i < 6 ? UINT32_MAX : UINT64_MAX, &v[i]) || (i < 6 && v[i] == 0))
            return i < 6 ? "grid and block dimensions must be integers from 1 to 4294967295"
                         : "shared_bytes must be a non-negative integer";
    char *end;
    errno = 0;
    double us = strtod(f[9], &end);
    if (errno || *end || end == f[9] || !(us > 0) || us > 1e12)
        return "us must be a positive number of microseconds";
    e->gpu = strdup(f[0]);
    e->kernel = strdup(f[1]);
    if (!e->gpu || !e->kernel)
        return "out of memory";
    for (int i = 0; i < 3; i++) {
        e->grid[i] = (uint32_t)v[i];
        e->block[i] = (uint32_t)v[3 + i];
    }
    e->shared_bytes = v[6];
    e->us = us;
    return NULL;
}

static void free_entries(hs_profile_db *db)
{
    for (size_t i = 0; i < db->n; i++) {
        free(db->e[i].gpu);
        free(db->e[i].kernel);
    }
    free(db->e);
    free(db);
}

static bool push(hs_profile_db *db, const entry *e)
{
    if (db->n == db->cap) {
        size_t cap = db->cap ? 2 * db->cap : 64;
        entry *ne = realloc(db->e, cap * sizeof *ne);
        if (!ne)
            return false;
        db->e = ne;
        db->cap = cap;
    }
    db->e[db->n++] = *e;
    return true;
}

/* Sorts and refuses duplicate keys (naming both lines). */
static bool check_duplicates(hs_profile_db *db, const char *path, char *err, size_t errlen)
{
    qsort(db->e, db->n, sizeof *db->e, cmp_entries);
    for (size_t i = 1; i < db->n; i++)
        if (!cmp_entries(&db->e[i - 1], &db->e[i])) {
            size_t a = db->e[i - 1].line, b = db->e[i].line;
            snprintf(err, errlen,
                     "%s:%zu: kernel %s on %s with this grid, block and shared memory is already on line %zu", path,
                     a > b ? a : b, db->e[i].kernel, db->e[i].gpu, a < b ? a : b);
            return false;
        }
    return true;
}

hs_profile_db *hs_profile_db_load(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open the profile database: %s", path, strerror(errno));
        return NULL;
    }
    hs_profile_db *db = calloc(1, sizeof *db);
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t len;
    bool ok = db != NULL;
    while (ok && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (lineno == 1) {
            if (strcmp(line, HS_PROFILE_MAGIC) != 0) {
                snprintf(err, errlen, "%s:1: not a hysim profile database (the first line must be \"%s\")", path,
                         HS_PROFILE_MAGIC);
                ok = false;
            }
            continue;
        }
        if (len == 0 || line[0] == '#')
            continue;
        entry e = {0};
        e.line = lineno;
        const char *why = parse_entry(line, &e);
        if (why || !push(db, &e)) {
            snprintf(err, errlen, "%s:%zu: %s", path, lineno, why ? why : "out of memory");
            free(e.gpu);
            free(e.kernel);
            ok = false;
        }
    }
    if (ok && lineno == 0) {
        snprintf(err, errlen, "%s: empty file: a hysim profile database starts with \"%s\"", path, HS_PROFILE_MAGIC);
        ok = false;
    }
    free(line);
    fclose(f);
    if (ok && !check_duplicates(db, path, err, errlen))
        ok = false;
    if (!ok && db) {
        free_entries(db);
        return NULL;
    }
    if (!db)
        snprintf(err, errlen, "%s: out of memory", path);
    return db;
}

bool hs_profile_db_lookup(const hs_profile_db *db, const hs_profile_key *key, double *us)
{
    size_t lo = 0, hi = db ? db->n : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_key(&db->e[mid], key);
        if (c == 0) {
            *us = db->e[mid].us;
            return true;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* The first entry of gpu whose kernel name sorts at or after name's first len bytes (the entries are sorted). */
static size_t first_from(const hs_profile_db *db, const char *gpu, const char *name, size_t len)
{
    size_t lo = 0, hi = db->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(db->e[mid].gpu, gpu);
        if (!c)
            c = strncmp(db->e[mid].kernel, name, len);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static double threads(const uint32_t grid[3], const uint32_t block[3])
{
    return (double)grid[0] * grid[1] * grid[2] * (double)block[0] * block[1] * block[2];
}

static bool same_block(const entry *e, const hs_profile_key *k)
{
    return e->block[0] == k->block[0] && e->block[1] == k->block[1] && e->block[2] == k->block[2] &&
           e->shared_bytes == k->shared_bytes;
}

/* Whether e is of key's GPU and its kernel's name begins with key's first len bytes (all of it: exact). */
static bool matches(const entry *e, const hs_profile_key *k, size_t len, bool exact)
{
    return !strcmp(e->gpu, k->gpu) && (exact ? !strcmp(e->kernel, k->kernel) : !strncmp(e->kernel, k->kernel, len));
}

/*
 * Above the largest entry: on along the slope of the two largest (a launch's extra threads cost what they
 * cost there), never below the largest's time nor above proportional to work (a launch wholly bound by its
 * throughput); a lone entry stays flat: one time does not tell a latency-bound launch from a throughput-bound
 * one, and scaling a 2 µs launch by a thousand times its threads gave kernels of milliseconds.
 */
static double beyond_largest(const entry *largest, double wl, const entry *second, double w2, double w)
{
    if (!second || wl <= w2)
        return largest->us;
    double us = largest->us + (largest->us - second->us) * (w - wl) / (wl - w2), cap = largest->us * w / wl;
    return us < largest->us ? largest->us : us > cap ? cap : us;
}

/* The scaled time among the entries matches() takes (hs_profile_db_scaled); false when there are none. */
static bool scaled_among(const hs_profile_db *db, const hs_profile_key *key, size_t len, bool exact, double *us)
{
    size_t plen = exact ? strlen(key->kernel) : len; /* the entries that may match begin with these bytes */
    size_t first = first_from(db, key->gpu, key->kernel, plen), end = first;
    bool any_block = false;
    while (end < db->n && matches(&db->e[end], key, plen, false)) {
        any_block |= matches(&db->e[end], key, len, exact) && same_block(&db->e[end], key);
        end++;
    }
    double w = threads(key->grid, key->block);
    /* the entries just below and above w in work, the smallest, the largest and the next largest, with their work */
    const entry *below = NULL, *above = NULL, *smallest = NULL, *largest = NULL, *second = NULL;
    double wb = 0, wa = 0, ws = 0, wl = 0, w2 = 0;
    for (size_t i = first; i < end; i++) {
        const entry *e = &db->e[i];
        if (!matches(e, key, len, exact) || (any_block && !same_block(e, key)))
            continue;
        double we = threads(e->grid, e->block);
        if (!smallest || we < ws)
            smallest = e, ws = we;
        if (!largest || we > wl) {
            if (largest)
                second = largest, w2 = wl;
            largest = e, wl = we;
        } else if (we < wl && (!second || we > w2)) {
            second = e, w2 = we;
        }
        if (we <= w && (!below || we > wb))
            below = e, wb = we;
        if (we >= w && (!above || we < wa))
            above = e, wa = we;
    }
    if (!smallest)
        return false;
    if (!below)
        *us = smallest->us;
    else if (!above)
        *us = beyond_largest(largest, wl, second, w2, w);
    else
        *us = wa > wb ? below->us + (above->us - below->us) * (w - wb) / (wa - wb) : below->us;
    return *us > 0;
}

size_t hs_profile_family_length(const char *kernel)
{
    const char *p = kernel;
    if (strncmp(p, "_Z", 2) != 0)
        return 0;
    p += 2;
    bool nested = *p == 'N';
    p += nested;
    size_t parts = 0;
    while (*p >= '1' && *p <= '9') { /* <length><identifier>, one per scope */
        char *end;
        unsigned long n = strtoul(p, &end, 10);
        if (strnlen(end, n) < n)
            return 0;
        p = end + n;
        parts++;
        if (!nested)
            break;
    }
    return parts && *p == 'I' ? (size_t)(p - kernel) + 1 : 0; /* a template: its name and the I opening its arguments */
}

int hs_profile_db_scaled(const hs_profile_db *db, const hs_profile_key *key, double *us)
{
    if (!db || !db->n || !key->kernel)
        return 0;
    if (scaled_among(db, key, 0, true, us))
        return 1;
    size_t len = hs_profile_family_length(key->kernel);
    return len && scaled_among(db, key, len, false, us) ? 2 : 0;
}

size_t hs_profile_db_size(const hs_profile_db *db) { return db ? db->n : 0; }

void hs_profile_db_free(hs_profile_db *db)
{
    if (db)
        free_entries(db);
}

int hs_profile_db_write_header(FILE *f)
{
    return fprintf(f, "%s\n# gpu,kernel,grid_x,grid_y,grid_z,block_x,block_y,block_z,shared_bytes,us\n",
                   HS_PROFILE_MAGIC) < 0
               ? -1
               : 0;
}

/* The shortest of %.15g, %.16g, %.17g that reads back as the same double (12.5, not 12.500000000000002). */
static void shortest_double(double v, char *out, size_t len)
{
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(out, len, "%.*g", digits, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

/* A name the loader reads back unchanged: not empty, no field or line separator. */
static bool writable_name(const char *s) { return s && *s && !strpbrk(s, ",\r\n"); }

int hs_profile_db_write_entry(FILE *f, const hs_profile_key *k, double us)
{
    if (!writable_name(k->gpu) || !writable_name(k->kernel) || !(us > 0) || us > 1e12 || k->gpu[0] == '#')
        return -1;
    for (int i = 0; i < 3; i++)
        if (!k->grid[i] || !k->block[i])
            return -1;
    char num[32];
    shortest_double(us, num, sizeof num);
    return fprintf(f, "%s,%s,%u,%u,%u,%u,%u,%u,%llu,%s\n", k->gpu, k->kernel, (unsigned)k->grid[0],
                   (unsigned)k->grid[1], (unsigned)k->grid[2], (unsigned)k->block[0], (unsigned)k->block[1],
                   (unsigned)k->block[2], (unsigned long long)k->shared_bytes, num) < 0
               ? -1
               : 0;
}

bool hs_profile_gemm_key(const char *gpu, const char *dtype, uint64_t m, uint64_t n, uint64_t k, uint64_t batch,
                         char *name, size_t namelen, hs_profile_key *out)
{
    const uint64_t dims[4] = {m, n, k, batch};
    if (!dtype)
        return false;
    for (int i = 0; i < 4; i++)
        if (dims[i] == 0 || dims[i] > UINT32_MAX)
            return false;
    int len = snprintf(name, namelen, HS_PROFILE_GEMM_PREFIX "%s", dtype);
    if (len < 0 || (size_t)len >= namelen)
        return false;
    *out = (hs_profile_key){gpu, name, {(uint32_t)m, (uint32_t)n, (uint32_t)k}, {(uint32_t)batch, 1, 1}, 0};
    return true;
}
