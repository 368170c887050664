/*
 * Scenario loader: YAML (libyaml's document API, so every node keeps its line
 * and column) → hs_scenario, with every problem reported as one line
 * "FILE:LINE:COL: message" (1-based). scenarios/README.md documents the format.
 *
 * The loader never stops at the first problem: each section is read key by
 * key, a bad value leaves its default in place and is reported, and the checks
 * that tie sections together run on whatever was valid.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "scenario_internal.h"

#define HS_MAX_FILE_BYTES (16u << 20) /* "larger than 16 MiB" below */
/* A scenario nests a few levels (background.flows[i].x is 4); the YAML loader slows with depth squared. */
#define HS_MAX_NESTING    32
#define HS_MAX_NS         1e12 /* 1000 s: far beyond any latency or per-call host cost */
#define HS_MAX_GBPS       1e6  /* rates (Gb/s, GB/s): 1 Pb/s, far beyond any link or memory */
#define HS_MAX_TFLOPS     1e6
#define HS_MAX_BUFFER_MIB 1048576.0 /* 1 TiB of switch buffer */
#define HS_MAX_ECN_KB     1e9       /* 1 TB of queue */
#define HS_MAX_OVERSUB    1000.0

/* ---------------------------------------------------------------- problems */

typedef struct problem {
    unsigned long line, col;
    size_t seq; /* order of discovery, to keep the sort stable */
    char *msg;
} problem;

typedef struct ctx {
    const char *file; /* name used in messages */
    yaml_document_t *doc;
    char *err;
    size_t errlen;
    size_t used;
    int count;
    problem *list; /* problems with a position, written out sorted by it */
    size_t nlist, caplist;
} ctx;

static void append(ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(ctx *c, const char *fmt, ...)
{
    if (!c->err || c->used + 1 >= c->errlen)
        return;
    size_t room = c->errlen - c->used;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(c->err + c->used, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        c->used += (size_t)n < room ? (size_t)n : room - 1;
}

static void problem_at(ctx *c, unsigned long line, unsigned long col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void problem_at(ctx *c, unsigned long line, unsigned long col, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->count++;
    if (c->nlist == c->caplist) {
        size_t cap = c->caplist ? 2 * c->caplist : 16;
        problem *bigger = realloc(c->list, cap * sizeof *bigger);
        if (!bigger) { /* out of memory: write it unsorted rather than lose it */
            append(c, "%s:%lu:%lu: %s\n", c->file, line, col, msg);
            return;
        }
        c->list = bigger;
        c->caplist = cap;
    }
    problem *p = &c->list[c->nlist];
    p->msg = strdup(msg);
    if (!p->msg) {
        append(c, "%s:%lu:%lu: %s\n", c->file, line, col, msg);
        return;
    }
    p->line = line;
    p->col = col;
    p->seq = c->nlist++;
}

static int by_position(const void *a, const void *b)
{
    const problem *x = a, *y = b;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    if (x->col != y->col)
        return x->col < y->col ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Writes the problems in file order and frees them. */
static void flush(ctx *c)
{
    if (c->nlist)
        qsort(c->list, c->nlist, sizeof *c->list, by_position);
    for (size_t i = 0; i < c->nlist; i++) {
        append(c, "%s:%lu:%lu: %s\n", c->file, c->list[i].line, c->list[i].col, c->list[i].msg);
        free(c->list[i].msg);
    }
    free(c->list);
    c->list = NULL;
    c->nlist = c->caplist = 0;
}

/* libyaml marks are 0-based; messages are 1-based. */
#define AT(mark) (unsigned long)(mark).line + 1, (unsigned long)(mark).column + 1

/* -------------------------------------------------------------- node helpers */

static yaml_node_t *node_of(ctx *c, int id) { return yaml_document_get_node(c->doc, id); }

static const char *scalar(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

/* A scalar whose text has no NUL inside (so C string functions see all of it). */
static bool clean_scalar(const yaml_node_t *n)
{
    return n->type == YAML_SCALAR_NODE && strlen(scalar(n)) == n->data.scalar.length;
}

static bool quoted(const yaml_node_t *n)
{
    return n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
           n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
}

static bool is_null(const yaml_node_t *n)
{
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    const char *s = scalar(n);
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

/* What a node is, for "got ..." in messages: `"text"` (shortened, one line), "nothing", "a mapping". */
static const char *what(const yaml_node_t *n, char *buf, size_t len)
{
    if (n->type == YAML_MAPPING_NODE)
        return "a mapping";
    if (n->type == YAML_SEQUENCE_NODE)
        return "a sequence";
    if (is_null(n))
        return *scalar(n) ? "null" : "nothing";
    const unsigned char *s = n->data.scalar.value;
    size_t slen = n->data.scalar.length, o = 0, max = 40;
    buf[o++] = '"';
    for (size_t i = 0; i < slen && o + 5 < len; i++) {
        if (i == max) {
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }
        unsigned char ch = s[i];
        buf[o++] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
    }
    buf[o++] = '"';
    buf[o] = 0;
    return buf;
}

/* ------------------------------------------------------------- suggestions */

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return SIZE_MAX;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            char ca = a[i - 1], cb = b[j - 1];
            if (ca >= 'A' && ca <= 'Z')
                ca = (char)(ca - 'A' + 'a');
            if (cb >= 'A' && cb <= 'Z')
                cb = (char)(cb - 'A' + 'a');
            size_t best = diag + (ca != cb);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* The closest name within a small edit distance, or NULL. */
static const char *suggest(const char *word, const char *const names[])
{
    size_t limit = strlen(word) <= 3 ? 1 : strlen(word) <= 6 ? 2 : 3;
    const char *best = NULL;
    size_t best_d = limit + 1;
    for (size_t i = 0; names[i]; i++) {
        size_t d = edit_distance(word, names[i]);
        if (d < best_d) {
            best_d = d;
            best = names[i];
        }
    }
    return best;
}

static void join(const char *const names[], char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = 0;
    for (size_t i = 0; names[i] && o < len; i++) {
        int n = snprintf(buf + o, len - o, "%s%s", i ? ", " : "", names[i]);
        if (n < 0)
            break;
        o += (size_t)n;
    }
}

/* ---------------------------------------------------------------- mappings */

/* One key of a section: where its key and value are; NULL when the file leaves it out. */
typedef struct slot {
    yaml_node_t *key, *val;
} slot;

/*
 * Reads the mapping `map` (the value of section `where`, or the root when
 * where is NULL) into out[], one slot per name in keys[] (NULL-terminated).
 * Reports unknown and duplicate keys; returns false when `map` is no mapping
 * (reported). An empty value (`nvlink:`) or none at all (map NULL: the
 * section is left out) counts as an empty mapping.
 */
static bool collect(ctx *c, yaml_node_t *map, const char *where, const char *const keys[], slot out[])
{
    size_t nkeys = 0;
    while (keys[nkeys])
        nkeys++;
    memset(out, 0, nkeys * sizeof *out);
    if (!map || is_null(map))
        return true;
    if (map->type != YAML_MAPPING_NODE) {
        char buf[64];
        if (where)
            problem_at(c, AT(map->start_mark), "%s: expected a mapping, got %s", where, what(map, buf, sizeof buf));
        else
            problem_at(c, AT(map->start_mark), "expected a mapping at the top level, got %s",
                       what(map, buf, sizeof buf));
        return false;
    }
    char in[64];
    if (where)
        snprintf(in, sizeof in, "%s", where);
    else
        snprintf(in, sizeof in, "the top level");
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node_of(c, p->key), *v = node_of(c, p->value);
        if (!k || !v)
            continue;
        char buf[64];
        if (k->type != YAML_SCALAR_NODE || is_null(k)) {
            problem_at(c, AT(k->start_mark), "expected a key name in %s, got %s", in, what(k, buf, sizeof buf));
            continue;
        }
        size_t i = 0;
        if (clean_scalar(k))
            while (i < nkeys && strcmp(scalar(k), keys[i]))
                i++;
        else
            i = nkeys;
        if (i == nkeys) {
            const char *s = clean_scalar(k) ? suggest(scalar(k), keys) : NULL;
            if (s) {
                problem_at(c, AT(k->start_mark), "unknown key %s in %s (did you mean \"%s\"?)",
                           what(k, buf, sizeof buf), in, s);
            } else {
                char list[512];
                join(keys, list, sizeof list);
                problem_at(c, AT(k->start_mark), "unknown key %s in %s (expected one of: %s)", what(k, buf, sizeof buf),
                           in, list);
            }
            continue;
        }
        if (out[i].key) {
            problem_at(c, AT(k->start_mark), "duplicate key \"%s\" in %s (first given at %lu:%lu)", keys[i], in,
                       AT(out[i].key->start_mark));
            continue;
        }
        out[i].key = k;
        out[i].val = v;
    }
    return true;
}

/* Reports a key a section must have; `sec` is the section's key node (where it is written). */
static void missing(ctx *c, const yaml_node_t *sec, const char *where, const char *key, const char *why)
{
    problem_at(c, AT(sec->start_mark), "%s: missing required key \"%s\"%s", where, key, why ? why : "");
}

/* ------------------------------------------------------------------ values */

/* Accepts YAML 1.2 core-schema integers and decimals: [-+]?(digits[.digits]|.digits)([eE][-+]?digits)? */
static bool number_text(const char *s, double *out)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    size_t digits = 0;
    while (*p >= '0' && *p <= '9')
        p++, digits++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9')
            p++, digits++;
    }
    if (!digits)
        return false;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p)
        return false;
    errno = 0;
    double v = strtod(s, NULL);
    if (!isfinite(v))
        return false;
    *out = v;
    return true;
}

typedef struct numspec {
    double min;    /* lowest allowed value */
    bool min_open; /* min itself excluded ("positive") */
    double max;    /* highest allowed value (inclusive); INFINITY for none */
    bool whole;    /* a whole number */
} numspec;

static const numspec NONNEG_NS = {0, false, HS_MAX_NS, true};

/* A bound as people write it: 4194303, 0.001, 1/1024 (an exact 1/N that %.6g would round), not 4.1943e+06. */
static const char *bound_text(double v, char *buf, size_t len)
{
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, len, "%.0f", v);
        return buf;
    }
    snprintf(buf, len, "%.6g", v);
    if (strtod(buf, NULL) != v && v > 0 && v < 1 && 1 / v == floor(1 / v) && 1 / v < 1e15)
        snprintf(buf, len, "1/%.0f", 1 / v);
    return buf;
}

/* The unit a key's name gives its value ("Gb/s" for nics.gbps), or NULL: scenarios/README.md, "Format" (units). */
static const char *unit_of(const char *path)
{
    const char *key = strrchr(path, '.');
    key = key ? key + 1 : path;
    static const char *const exact[][2] = {
        {"hbm_gbps", "GB/s"}, {"channel_gbps", "GB/s"}, {"mtu", "bytes"}, {"bytes", "bytes"}};
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (!strcmp(key, exact[i][0]))
            return exact[i][1];
    static const char *const suffix[][2] = {
        {"gbps", "Gb/s"}, {"gbps_per_gpu", "Gb/s"}, {"_tflops", "TFLOP/s"}, {"_ns", "ns"},   {"_us", "\u00b5s"},
        {"_s", "s"},      {"_kib", "KiB"},          {"_mib", "MiB"},        {"_gib", "GiB"}, {"_kb", "KB"}};
    size_t klen = strlen(key);
    for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
        size_t n = strlen(suffix[i][0]);
        if (klen >= n && !strcmp(key + klen - n, suffix[i][0]))
            return suffix[i][1];
    }
    return NULL;
}

/* True when `s` is a number with a unit or word after it ("3600 Gb/s", "400G", "1.5us"). */
static bool number_then_unit(const char *s)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    size_t digits = strspn(p, "0123456789");
    p += digits;
    if (*p == '.') {
        size_t frac = strspn(p + 1, "0123456789");
        digits += frac;
        p += 1 + frac;
    }
    if (!digits)
        return false;
    if ((*p == 'e' || *p == 'E') && (p[1] >= '0' && p[1] <= '9'))
        p += 1 + strspn(p + 1, "0123456789");
    else if ((*p == 'e' || *p == 'E') && (p[1] == '+' || p[1] == '-') && p[2] >= '0' && p[2] <= '9')
        p += 2 + strspn(p + 2, "0123456789");
    p += strspn(p, " ");
    bool word = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (unsigned char)*p >= 0x80 || *p == '%';
    return word && !strpbrk(p, "0123456789") && !(*p == 'x' || *p == 'X');
}

/* Writes what a value must be ("a positive number"); true when that names the maximum. */
static bool expected_text(const numspec *s, char *buf, size_t len)
{
    if (s->whole) {
        if (isinf(s->max))
            snprintf(buf, len, "a whole number of at least %.0f", s->min);
        else if (s->min == 0 && s->max >= HS_MAX_NS)
            snprintf(buf, len, "a whole number of 0 or more");
        else
            return snprintf(buf, len, "a whole number from %.0f to %.0f", s->min, s->max), true;
    } else if (s->min == 0 && s->min_open) {
        snprintf(buf, len, "a positive number");
    } else if (s->min == 0 && isinf(s->max)) {
        snprintf(buf, len, "a number of 0 or more");
    } else {
        char lo[32], hi[32];
        return snprintf(buf, len, "a number from %s to %s", bound_text(s->min, lo, sizeof lo),
                        bound_text(s->max, hi, sizeof hi)),
               true;
    }
    return false;
}

/* Reads a number into *out; false (reported unless absent) when it is absent or invalid. */
static bool get_num(ctx *c, const slot *sl, const char *path, const numspec *s, double *out)
{
    if (!sl->val)
        return false;
    const yaml_node_t *n = sl->val;
    char exp[128], buf[64];
    bool names_max = expected_text(s, exp, sizeof exp);
    const char *range_unit = names_max ? unit_of(path) : NULL;
    if (range_unit) /* "from 1 to 1000000000 µs": the bounds in the key's unit */
        snprintf(exp + strlen(exp), sizeof exp - strlen(exp), " %s", range_unit);
    if (n->type != YAML_SCALAR_NODE || is_null(n)) {
        problem_at(c, AT(n->start_mark), "%s: expected %s, got %s", path, exp, what(n, buf, sizeof buf));
        return false;
    }
    double v;
    if (!clean_scalar(n) || !number_text(scalar(n), &v)) {
        const char *unit = unit_of(path);
        char hint[96] = "";
        if (clean_scalar(n) && number_then_unit(scalar(n)))
            snprintf(hint, sizeof hint, ": write the number alone%s%s%s", unit ? ", the unit is the key's (" : "",
                     unit ? unit : "", unit ? ")" : "");
        problem_at(c, AT(n->start_mark), "%s: expected %s, got %s%s", path, exp, what(n, buf, sizeof buf), hint);
        return false;
    }
    if (quoted(n)) {
        problem_at(c, AT(n->start_mark), "%s: expected %s, got the quoted string %s (write numbers without quotes)",
                   path, exp, what(n, buf, sizeof buf));
        return false;
    }
    if (v < s->min || (s->min_open && v == s->min) || (s->whole && v != floor(v)) || (v > s->max && names_max)) {
        problem_at(c, AT(n->start_mark), "%s: expected %s, got %s", path, exp, what(n, buf, sizeof buf));
        return false;
    }
    if (v > s->max) {
        const char *unit = unit_of(path);
        char hi[32];
        problem_at(c, AT(n->start_mark), "%s: expected %s, got %s (the largest allowed is %s%s%s)", path, exp,
                   what(n, buf, sizeof buf), bound_text(s->max, hi, sizeof hi), unit ? " " : "", unit ? unit : "");
        return false;
    }
    *out = v;
    return true;
}

static bool get_int(ctx *c, const slot *sl, const char *path, int lo, int hi, int *out)
{
    numspec s = {lo, false, hi, true};
    double v;
    if (!get_num(c, sl, path, &s, &v))
        return false;
    *out = (int)v;
    return true;
}

static bool get_ns(ctx *c, const slot *sl, const char *path, uint64_t *out)
{
    double v;
    if (!get_num(c, sl, path, &NONNEG_NS, &v))
        return false;
    *out = (uint64_t)v;
    return true;
}

/* A number above 0 and at most `max`: every rate, size and ratio has a bound (scenarios/README.md). */
static bool get_positive(ctx *c, const slot *sl, const char *path, double max, double *out)
{
    numspec s = {0, true, max, false};
    return get_num(c, sl, path, &s, out);
}

static bool get_bool(ctx *c, const slot *sl, const char *path, bool *out)
{
    if (!sl->val)
        return false;
    const yaml_node_t *n = sl->val;
    if (n->type == YAML_SCALAR_NODE && !quoted(n) && clean_scalar(n)) {
        const char *s = scalar(n);
        if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) {
            *out = true;
            return true;
        }
        if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) {
            *out = false;
            return true;
        }
    }
    char buf[64];
    problem_at(c, AT(n->start_mark), "%s: expected true or false, got %s", path, what(n, buf, sizeof buf));
    return false;
}

/* A non-empty string scalar of at most cap-1 bytes. */
static bool get_string(ctx *c, const slot *sl, const char *path, char *dst, size_t cap)
{
    if (!sl->val)
        return false;
    const yaml_node_t *n = sl->val;
    char buf[64];
    if (n->type != YAML_SCALAR_NODE || is_null(n) || !n->data.scalar.length) {
        problem_at(c, AT(n->start_mark), "%s: expected a non-empty string, got %s", path, what(n, buf, sizeof buf));
        return false;
    }
    if (!clean_scalar(n)) {
        problem_at(c, AT(n->start_mark), "%s: expected a string without NUL characters, got %s", path,
                   what(n, buf, sizeof buf));
        return false;
    }
    if (n->data.scalar.length >= cap) {
        problem_at(c, AT(n->start_mark), "%s: expected at most %zu bytes, got %zu", path, cap - 1,
                   n->data.scalar.length);
        return false;
    }
    memcpy(dst, scalar(n), n->data.scalar.length + 1);
    return true;
}

static bool get_enum(ctx *c, const slot *sl, const char *path, const char *const names[], int *out)
{
    if (!sl->val)
        return false;
    const yaml_node_t *n = sl->val;
    if (n->type == YAML_SCALAR_NODE && clean_scalar(n))
        for (int i = 0; names[i]; i++)
            if (!strcmp(scalar(n), names[i])) {
                *out = i;
                return true;
            }
    char list[256], buf[64], hint[96] = "";
    join(names, list, sizeof list);
    const char *s = n->type == YAML_SCALAR_NODE && clean_scalar(n) ? suggest(scalar(n), names) : NULL;
    if (s)
        snprintf(hint, sizeof hint, " (did you mean \"%s\"?)", s);
    problem_at(c, AT(n->start_mark), "%s: expected one of %s, got %s%s", path, list, what(n, buf, sizeof buf), hint);
    return false;
}

/* ---------------------------------------------------------------- sections */

static const char *const TOP_KEYS[] = {"name", "gpu",        "servers", "nvlink", "pcie",
                                       "nics", "fabric",     "compute", "run",    "containers",
                                       "nccl", "background", "stats",   "values", NULL};
enum {
    T_NAME,
    T_GPU,
    T_SERVERS,
    T_NVLINK,
    T_PCIE,
    T_NICS,
    T_FABRIC,
    T_COMPUTE,
    T_RUN,
    T_CONTAINERS,
    T_NCCL,
    T_BACKGROUND,
    T_STATS,
    T_VALUES,
    T_COUNT
};

static void load_gpu(ctx *c, const slot *sec, hs_scenario *sc)
{
    static const char *const keys[] = {"model",    "memory_gib", "bf16_tflops",        "fp32_tflops",
                                       "hbm_gbps", "sm_count",   "compute_capability", NULL};
    enum { MODEL, MEMORY, BF16, FP32, HBM, SMS, CC };
    slot k[7];
    if (!collect(c, sec->val, "gpu", keys, k))
        return;

    char model[sizeof sc->gpu.model];
    if (get_string(c, &k[MODEL], "gpu.model", model, sizeof model)) {
        const hs_gpu_preset *p = hs_gpu_preset_find(model);
        if (p) {
            hs_gpu_preset_apply(sc, p);
        } else {
            /* Not a preset: the name as written; the figures the roofline cannot guess must be given. */
            memcpy(sc->gpu.model, model, sizeof model);
            static const int need[] = {MEMORY, BF16};
            for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
                if (!k[need[i]].key)
                    problem_at(c, AT(k[MODEL].val->start_mark),
                               "gpu.%s: required because gpu.model \"%s\" is no preset (presets: %s)", keys[need[i]],
                               model, hs_gpu_preset_list());
        }
    }

    double v;
    numspec gib = {0, true, 1e9, false};
    if (get_num(c, &k[MEMORY], "gpu.memory_gib", &gib, &v))
        sc->gpu.memory_bytes = (uint64_t)llround(v * 1073741824.0);
    get_positive(c, &k[BF16], "gpu.bf16_tflops", HS_MAX_TFLOPS, &sc->gpu.bf16_tflops);
    get_positive(c, &k[FP32], "gpu.fp32_tflops", HS_MAX_TFLOPS, &sc->gpu.fp32_tflops);
    get_positive(c, &k[HBM], "gpu.hbm_gbps", HS_MAX_GBPS, &sc->gpu.hbm_gbps);
    get_int(c, &k[SMS], "gpu.sm_count", 1, 100000, &sc->gpu.sm_count);

    if (k[CC].val) {
        const yaml_node_t *n = k[CC].val;
        int major = 0, minor = 0, used = 0;
        bool ok = n->type == YAML_SCALAR_NODE && clean_scalar(n) && n->data.scalar.length <= 5 &&
                  sscanf(scalar(n), "%2d.%1d%n", &major, &minor, &used) == 2 && scalar(n)[used] == 0 &&
                  scalar(n)[0] >= '0' && scalar(n)[0] <= '9' && major >= 1;
        if (ok) {
            sc->gpu.cc_major = major;
            sc->gpu.cc_minor = minor;
        } else {
            char buf[64];
            problem_at(c, AT(n->start_mark), "gpu.compute_capability: expected \"MAJOR.MINOR\" such as \"9.0\", got %s",
                       what(n, buf, sizeof buf));
        }
    }
}

static void load_servers(ctx *c, const slot *sec, hs_scenario *sc)
{
    static const char *const keys[] = {"count", "gpus_per_server", NULL};
    slot k[2];
    if (!collect(c, sec->val, "servers", keys, k))
        return;
    for (int i = 0; i < 2; i++)
        if (!k[i].key)
            missing(c, sec->key, "servers", keys[i], NULL);
    get_int(c, &k[0], "servers.count", 1, 1000000, &sc->servers.count);
    get_int(c, &k[1], "servers.gpus_per_server", 1, HS_MAX_GPUS_PER_SERVER, &sc->servers.gpus_per_server);
}

static void load_nvlink(ctx *c, const slot *sec, hs_scenario *sc)
{
    static const char *const keys[] = {"gbps_per_gpu", "latency_ns", "segment_kib", NULL};
    slot k[3];
    if (!collect(c, sec->val, "nvlink", keys, k))
        return;
    get_positive(c, &k[0], "nvlink.gbps_per_gpu", HS_MAX_GBPS, &sc->nvlink.gbps_per_gpu);
    get_ns(c, &k[1], "nvlink.latency_ns", &sc->nvlink.latency_ns);
    /* Up to 4 GiB − 1 KiB so segment_bytes fits 32 bits; at least one byte. */
    numspec kib = {1.0 / 1024, false, 4194303, false};
    double v;
    if (get_num(c, &k[2], "nvlink.segment_kib", &kib, &v))
        sc->nvlink.segment_bytes = (uint32_t)llround(v * 1024.0);
}

static void load_pcie(ctx *c, const slot *sec, hs_scenario *sc)
{
    static const char *const keys[] = {"gen",       "lanes",           "gbps",          "latency_ns",
                                       "copy_gbps", "copy_latency_ns", "pageable_gbps", NULL};
    slot k[7];
    if (!collect(c, sec->val, "pcie", keys, k))
        return;
    get_int(c, &k[0], "pcie.gen", 3, 6, &sc->pcie.gen);
    get_int(c, &k[1], "pcie.lanes", 1, 16, &sc->pcie.lanes);
    if (!get_positive(c, &k[2], "pcie.gbps", HS_MAX_GBPS, &sc->pcie.gbps))
        sc->pcie.gbps = hs_pcie_default_gbps(sc->pcie.gen, sc->pcie.lanes);
    get_ns(c, &k[3], "pcie.latency_ns", &sc->pcie.latency_ns);
    /* the copy engines get the measured share of whatever the link is */
    if (!get_positive(c, &k[4], "pcie.copy_gbps", HS_MAX_GBPS, &sc->pcie.copy_gbps))
        sc->pcie.copy_gbps = HS_PCIE_COPY_SHARE * sc->pcie.gbps;
    get_ns(c, &k[5], "pcie.copy_latency_ns", &sc->pcie.copy_latency_ns);
    get_positive(c, &k[6], "pcie.pageable_gbps", HS_MAX_GBPS, &sc->pcie.pageable_gbps);
}

static void load_nics(ctx *c, const slot *sec, hs_scenario *sc)
{
    static const char *const keys[] = {"per_server", "gbps", "rail_aligned", NULL};
    slot k[3];
    sc->nics.per_server = sc->servers.gpus_per_server;
    if (!collect(c, sec->val, "nics", keys, k))
        return;
    get_int(c, &k[0], "nics.per_server", 1, 64, &sc->nics.per_server);
    get_positive(c, &k[1], "nics.gbps", HS_MAX_GBPS, &sc->nics.gbps);
    get_bool(c, &k[2], "nics.rail_aligned", &sc->nics.rail_aligned);
}

static const char *const TOPOLOGIES[] = {"single_switch", "leaf_spine", "fat_tree", "rail_optimized", NULL};

static void load_fabric(ctx *c, const slot *sec, hs_scenario *sc)
{
    static const char *const keys[] = {
        "topology", "leaves", "spines", "oversubscription", "link_latency_ns", "switch_buffer_mib", "mtu", "ecn", "pfc",
        "dcqcn",    "rto_us", NULL};
    enum { TOPO, LEAVES, SPINES, OVERSUB, LATENCY, BUFFER, MTU, ECN, PFC, DCQCN, RTO, NK };
    slot k[NK];

    /* ECN thresholds follow the NIC rate unless given. */
    hs_ecn_defaults(sc->nics.gbps, &sc->fabric.ecn.kmin_kb, &sc->fabric.ecn.kmax_kb);
    if (!sec->val)
        return;
    sc->fabric.present = true;
    if (!collect(c, sec->val, "fabric", keys, k))
        return;

    int topo = (int)sc->fabric.topology;
    bool topo_ok = !k[TOPO].val || get_enum(c, &k[TOPO], "fabric.topology", TOPOLOGIES, &topo);
    sc->fabric.topology = (enum hs_topology)topo;

    bool leaves_ok = get_int(c, &k[LEAVES], "fabric.leaves", 1, 100000, &sc->fabric.leaves);
    bool spines_ok = get_int(c, &k[SPINES], "fabric.spines", 0, 100000, &sc->fabric.spines);
    if (topo_ok) {
        const char *tn = hs_topology_name(sc->fabric.topology);
        char why[96];
        snprintf(why, sizeof why, " (topology %s needs it)", tn);
        switch (sc->fabric.topology) {
        case HS_TOPOLOGY_SINGLE_SWITCH:
            if (leaves_ok && sc->fabric.leaves != 1)
                problem_at(c, AT(k[LEAVES].val->start_mark),
                           "fabric.leaves: a single_switch fabric has exactly 1 switch, got %d", sc->fabric.leaves);
            if (spines_ok && sc->fabric.spines != 0)
                problem_at(c, AT(k[SPINES].val->start_mark),
                           "fabric.spines: a single_switch fabric has no spines, got %d", sc->fabric.spines);
            sc->fabric.leaves = 1;
            sc->fabric.spines = 0;
            break;
        case HS_TOPOLOGY_LEAF_SPINE:
        case HS_TOPOLOGY_FAT_TREE:
            if (!k[LEAVES].key)
                missing(c, sec->key, "fabric", "leaves", why);
            if (!k[SPINES].key)
                missing(c, sec->key, "fabric", "spines", why);
            else if (spines_ok && sc->fabric.spines < 1)
                problem_at(c, AT(k[SPINES].val->start_mark), "fabric.spines: topology %s needs at least 1 spine, got 0",
                           tn);
            break;
        case HS_TOPOLOGY_RAIL_OPTIMIZED:
            /* One leaf per rail (NIC index) unless given; no spines unless given. */
            if (!k[LEAVES].key)
                sc->fabric.leaves = sc->nics.per_server;
            break;
        }
    }

    get_positive(c, &k[OVERSUB], "fabric.oversubscription", HS_MAX_OVERSUB, &sc->fabric.oversubscription);
    get_ns(c, &k[LATENCY], "fabric.link_latency_ns", &sc->fabric.link_latency_ns);
    get_positive(c, &k[BUFFER], "fabric.switch_buffer_mib", HS_MAX_BUFFER_MIB, &sc->fabric.switch_buffer_mib);
    int mtu;
    if (get_int(c, &k[MTU], "fabric.mtu", HS_MTU_MIN, HS_MTU_MAX, &mtu))
        sc->fabric.mtu = (uint32_t)mtu;
    get_bool(c, &k[PFC], "fabric.pfc", &sc->fabric.pfc);
    get_bool(c, &k[DCQCN], "fabric.dcqcn", &sc->fabric.dcqcn);
    static const numspec rto = {HS_RTO_MIN_US, false, HS_RTO_MAX_US, false};
    double rto_us;
    if (get_num(c, &k[RTO], "fabric.rto_us", &rto, &rto_us))
        sc->fabric.rto_ns = (uint64_t)llround(rto_us * 1000.0);

    static const char *const ecn_keys[] = {"kmin_kb", "kmax_kb", "pmax", NULL};
    slot e[3];
    if (k[ECN].val && collect(c, k[ECN].val, "fabric.ecn", ecn_keys, e)) {
        bool kmin = get_positive(c, &e[0], "fabric.ecn.kmin_kb", HS_MAX_ECN_KB, &sc->fabric.ecn.kmin_kb);
        bool kmax = get_positive(c, &e[1], "fabric.ecn.kmax_kb", HS_MAX_ECN_KB, &sc->fabric.ecn.kmax_kb);
        numspec unit = {0, false, 1, false};
        get_num(c, &e[2], "fabric.ecn.pmax", &unit, &sc->fabric.ecn.pmax);
        /* Only when what was given is valid, and something was: the defaults are in order. */
        bool bad = (e[0].key && !kmin) || (e[1].key && !kmax);
        if (!bad && (kmin || kmax) && sc->fabric.ecn.kmin_kb > sc->fabric.ecn.kmax_kb)
            problem_at(c, AT((kmin ? e[0] : e[1]).val->start_mark),
                       "fabric.ecn: kmin_kb (%g%s) must not exceed kmax_kb (%g%s)", sc->fabric.ecn.kmin_kb,
                       kmin ? "" : ", the default for these NICs", sc->fabric.ecn.kmax_kb,
                       kmax ? "" : ", the default for these NICs");
    }
}

/* The value of `key` in the mapping `map` (a section already read by collect), or NULL. */
static yaml_node_t *value_of(ctx *c, yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node_of(c, p->key);
        if (k && clean_scalar(k) && !strcmp(scalar(k), key))
            return node_of(c, p->value);
    }
    return NULL;
}

/* The shape the fabric gives a topology (ns3-glue/model/topology.cc, CheckNetwork); false when reported. */
static bool check_fabric_shape(ctx *c, yaml_node_t *fabric, yaml_node_t *nics, const hs_scenario *sc)
{
    yaml_node_t *leaves = value_of(c, fabric, "leaves");
    if (sc->fabric.topology == HS_TOPOLOGY_RAIL_OPTIMIZED && leaves && sc->fabric.leaves != sc->nics.per_server) {
        yaml_node_t *per = value_of(c, nics, "per_server");
        char from[64];
        if (per)
            snprintf(from, sizeof from, "given at %lu:%lu", AT(per->start_mark));
        else
            snprintf(from, sizeof from, "the default: servers.gpus_per_server");
        problem_at(c, AT(leaves->start_mark),
                   "fabric.leaves: a rail_optimized fabric has one leaf (rail switch) per NIC of a server, and "
                   "nics.per_server is %d (%s), got %d",
                   sc->nics.per_server, from, sc->fabric.leaves);
        return false;
    }
    bool fat = sc->fabric.topology == HS_TOPOLOGY_FAT_TREE;
    if (fat && leaves && !hs_scn_fat_tree_k(sc->fabric.leaves, sc->fabric.spines)) {
        problem_at(c, AT(leaves->start_mark),
                   "fabric.leaves, fabric.spines: a k-ary fat_tree has leaves = k^2/2 edge switches and spines = "
                   "k^2/4 cores for an even k (k=4: 8 and 4), got leaves %d, spines %d",
                   sc->fabric.leaves, sc->fabric.spines);
        return false;
    }
    return true;
}

/* How many NICs the fabric can take, and how many links it can build; false when reported. */
static bool check_fabric_size(ctx *c, yaml_node_t *fabric, const yaml_node_t *count, const hs_scenario *sc)
{
    yaml_node_t *leaves = value_of(c, fabric, "leaves");
    long long nnics = (long long)sc->servers.count * sc->nics.per_server;
    bool fat = sc->fabric.topology == HS_TOPOLOGY_FAT_TREE;
    int k = fat ? hs_scn_fat_tree_k(sc->fabric.leaves, sc->fabric.spines) : 0;
    if (k && leaves && nnics > (long long)k * k * k / 4) {
        problem_at(c, AT(leaves->start_mark),
                   "fabric.leaves: a %d-ary fat_tree (leaves %d, spines %d) holds %d NICs, and the scenario has "
                   "%lld (%d servers \u00d7 %d NICs)",
                   k, sc->fabric.leaves, sc->fabric.spines, k * k * k / 4, nnics, sc->servers.count,
                   sc->nics.per_server);
        return false;
    }
    if (sc->fabric.topology == HS_TOPOLOGY_LEAF_SPINE && leaves && sc->fabric.leaves > nnics) {
        problem_at(c, AT(leaves->start_mark),
                   "fabric.leaves: leaf_spine needs 1 to %lld leaves (one NIC at least each: %d servers \u00d7 %d "
                   "NICs), got %d",
                   nnics, sc->servers.count, sc->nics.per_server, sc->fabric.leaves);
        return false;
    }
    uint64_t links = hs_scn_fabric_links(sc);
    if (links >= HS_FABRIC_MAX_LINKS) {
        problem_at(c, AT(count->start_mark),
                   "servers.count: the fabric model builds fewer than %u links (one per direction), and %d servers "
                   "on this fabric need %llu",
                   HS_FABRIC_MAX_LINKS, sc->servers.count, (unsigned long long)links);
        return false;
    }
    return true;
}

/* The switch buffer must hold every ingress link's reserve and PFC headroom (ns3-glue/model/ethernet.cc, InitRoce). */
static void check_switch_buffer(ctx *c, const slot *fabric, const hs_scenario *sc)
{
    char which[32] = "", need_text[32], have_text[32];
    double need = hs_scn_buffer_need(sc, which, sizeof which);
    double mib = sc->fabric.switch_buffer_mib;
    if (need < (double)llround(mib * 1048576.0))
        return;
    yaml_node_t *given = value_of(c, fabric->val, "switch_buffer_mib");
    const yaml_node_t *at = given ? given : fabric->key;
    /* the shortest decimal that the fabric rounds to a buffer of more than `need` bytes */
    for (int digits = 4; digits <= 17; digits++) {
        snprintf(need_text, sizeof need_text, "%.*g", digits, (need + 1) / 1048576.0);
        if ((double)llround(strtod(need_text, NULL) * 1048576.0) > need)
            break;
    }
    char advice[160];
    if ((need + 1) / 1048576.0 > HS_MAX_BUFFER_MIB)
        snprintf(advice, sizeof advice,
                 "more than the largest buffer allowed (%.0f MiB): spread the NICs over "
                 "more switches or shorten the links",
                 HS_MAX_BUFFER_MIB);
    else
        snprintf(advice, sizeof advice, "give at least %s", need_text);
    problem_at(c, AT(at->start_mark),
               "fabric.switch_buffer_mib: %s%s MiB is smaller than the %s of the links into switch %s "
               "(%.0f bytes with these NICs, link_latency_ns and mtu): %s",
               given ? "" : "the default ", bound_text(mib, have_text, sizeof have_text),
               sc->fabric.pfc ? "PFC headroom and reserve" : "reserve", which, need, advice);
}

/*
 * What the fabric model refuses when it builds the network (fabric_limits.c
 * mirrors ns3-glue/), reported at the key that decides it: the topology's
 * shape whenever a fabric is given, its size and switch buffers when it joins
 * several servers. Runs only when servers, nics and fabric were read without
 * a problem, so every figure is the file's.
 */
static void check_fabric_model(ctx *c, const slot *servers, const slot *nics, const slot *fabric, const hs_scenario *sc)
{
    if (!fabric->key || !check_fabric_shape(c, fabric->val, nics->val, sc) || sc->servers.count < 2)
        return;
    const yaml_node_t *count = value_of(c, servers->val, "count");
    if (check_fabric_size(c, fabric->val, count ? count : servers->key, sc))
        check_switch_buffer(c, fabric, sc);
}

/* compute.profiles: a path relative to the scenario file's folder (profile_db.h reads the file). */
static void load_profiles_path(ctx *c, const slot *sl, hs_scenario *sc)
{
    char given[sizeof sc->compute.profiles];
    if (!sl->key || !get_string(c, sl, "compute.profiles", given, sizeof given))
        return;
    const char *slash = strrchr(sc->path, '/');
    int dirlen = given[0] == '/' || !slash ? 0 : (int)(slash - sc->path + 1);
    int n = snprintf(sc->compute.profiles, sizeof sc->compute.profiles, "%.*s%s", dirlen, sc->path, given);
    if (n < 0 || (size_t)n >= sizeof sc->compute.profiles) {
        problem_at(c, AT(sl->val->start_mark), "compute.profiles: the path %s%s is longer than %zu bytes",
                   dirlen ? "relative to the scenario, " : "", given, sizeof sc->compute.profiles - 1);
        sc->compute.profiles[0] = '\0';
    }
}

static void load_compute(ctx *c, const slot *sec, hs_scenario *sc)
{
    static const char *const keys[] = {"default_kernel_us", "profiles", "kernel_gap_us", "kernel_database", NULL};
    slot k[4];
    if (!collect(c, sec->val, "compute", keys, k))
        return;
    numspec us = {0, false, 1e9, false};
    double v;
    if (get_num(c, &k[0], "compute.default_kernel_us", &us, &v))
        sc->compute.default_kernel_ns = (uint64_t)llround(v * 1000.0);
    load_profiles_path(c, &k[1], sc);
    if (get_num(c, &k[2], "compute.kernel_gap_us", &us, &v))
        sc->compute.kernel_gap_ns = (uint64_t)llround(v * 1000.0);
    get_bool(c, &k[3], "compute.kernel_database", &sc->compute.kernel_database);
}

/* host_time: real | calls | zero | fixed:NS | scaled:F */
static void load_host_time(ctx *c, const slot *sl, hs_scenario *sc)
{
    const yaml_node_t *n = sl->val;
    if (n->type == YAML_SCALAR_NODE && clean_scalar(n)) {
        const char *s = scalar(n);
        double v;
        if (!strcmp(s, "real")) {
            sc->run.host_time = HS_HOST_TIME_REAL;
            return;
        }
        if (!strcmp(s, "zero")) {
            sc->run.host_time = HS_HOST_TIME_ZERO;
            return;
        }
        if (!strcmp(s, "calls")) {
            sc->run.host_time = HS_HOST_TIME_CALLS;
            return;
        }
        if (!strncmp(s, "fixed:", 6) && number_text(s + 6, &v) && v >= 0 && v == floor(v) && v <= HS_MAX_NS) {
            sc->run.host_time = HS_HOST_TIME_FIXED;
            sc->run.host_time_fixed_ns = (uint64_t)v;
            return;
        }
        if (!strncmp(s, "scaled:", 7) && number_text(s + 7, &v) && v > 0 && v <= 1e6) {
            sc->run.host_time = HS_HOST_TIME_SCALED;
            sc->run.host_time_scale = v;
            return;
        }
    }
    char buf[64];
    problem_at(c, AT(n->start_mark),
               "run.host_time: expected real, calls, zero, fixed:NS (whole nanoseconds per intercepted call) "
               "or scaled:F (a positive factor), got %s",
               what(n, buf, sizeof buf));
}

/* run.fabric: {process: inline|worker, speculate, speculate_window_us} (bridge/speculation/fabric_speculation.c). */
static void load_run_fabric(ctx *c, const slot *sec, hs_scenario *sc)
{
    static const char *const keys[] = {"process", "speculate", "speculate_window_us", NULL};
    static const char *const processes[] = {"inline", "worker", NULL};
    slot k[3];
    if (!collect(c, sec->val, "run.fabric", keys, k))
        return;
    int process;
    if (get_enum(c, &k[0], "run.fabric.process", processes, &process))
        sc->run.fabric.process = process == 0 ? HS_FABRIC_PROCESS_INLINE : HS_FABRIC_PROCESS_WORKER;
    bool speculate;
    if (get_bool(c, &k[1], "run.fabric.speculate", &speculate)) {
        sc->run.fabric.speculate = speculate;
        if (speculate && sc->run.fabric.process == HS_FABRIC_PROCESS_INLINE)
            problem_at(c, AT(k[1].val->start_mark),
                       "run.fabric.speculate: true needs run.fabric.process: worker (only a worker-process "
                       "fabric can roll back)");
    }
    static const numspec window = {0, true, 1e9, false};
    get_num(c, &k[2], "run.fabric.speculate_window_us", &window, &sc->run.fabric.speculate_window_us);
}

static void load_run(ctx *c, const slot *sec, hs_scenario *sc)
{
    static const char *const keys[] = {
        "mode", "host_time", "seed", "stall_timeout_s", "checkpoint_interval_us", "checkpoints_max", "fabric", NULL};
    static const char *const modes[] = {"exact", "optimistic", NULL};
    slot k[7];
    if (!collect(c, sec->val, "run", keys, k))
        return;
    load_run_fabric(c, &k[6], sc);
    int mode;
    if (get_enum(c, &k[0], "run.mode", modes, &mode))
        sc->run.mode = (enum hs_run_mode)mode;
    /* bridge/speculation/fabric_speculation.c refuses the pair when the fabric is created */
    yaml_node_t *process = value_of(c, k[6].val, "process");
    if (process && sc->run.mode == HS_MODE_OPTIMISTIC && sc->run.fabric.process == HS_FABRIC_PROCESS_WORKER)
        problem_at(c, AT(process->start_mark),
                   "run.fabric.process: worker does not work with run.mode: optimistic (a speculation forks the "
                   "daemon, and the worker process cannot be shared by two copies); use process: inline or "
                   "mode: exact");
    if (k[1].val)
        load_host_time(c, &k[1], sc);
    /* seconds of wall time; 0 disables the stall watchdog; at most a year */
    static const numspec stall = {0, false, 31536000.0, false};
    get_num(c, &k[3], "run.stall_timeout_s", &stall, &sc->run.stall_timeout_s);
    /* worker-mode fabric checkpoints (include/hysim/fabric.h): > 0 us, 1..64 kept */
    static const numspec ckpt_us = {0, true, 1e9, false};
    get_num(c, &k[4], "run.checkpoint_interval_us", &ckpt_us, &sc->run.checkpoint_interval_us);
    static const numspec ckpt_max = {1, false, 64, true};
    double cmax;
    if (get_num(c, &k[5], "run.checkpoints_max", &ckpt_max, &cmax))
        sc->run.checkpoints_max = (uint32_t)cmax;
    if (k[2].val) {
        /* Full 64-bit range for integers written as digits; other numbers through get_num. */
        const yaml_node_t *n = k[2].val;
        const char *s = n->type == YAML_SCALAR_NODE && clean_scalar(n) && !quoted(n) ? scalar(n) : "";
        if (*s && strspn(s, "0123456789") == strlen(s)) {
            errno = 0;
            unsigned long long v = strtoull(s, NULL, 10);
            if (errno == 0) {
                sc->run.seed = v;
                return;
            }
            problem_at(c, AT(n->start_mark), "run.seed: expected a whole number from 0 to %llu, got \"%s\"",
                       (unsigned long long)UINT64_MAX, s);
            return;
        }
        numspec seed = {0, false, 9007199254740992.0, true};
        double v;
        if (get_num(c, &k[2], "run.seed", &seed, &v))
            sc->run.seed = (uint64_t)v;
    }
}

/* nccl: {algo, proto, channels, calibrated, channel_gbps, nvls} — forces what NCCL's tuner would choose. */
static void load_nccl(ctx *c, const slot *sec, hs_scenario *sc)
{
    static const char *const keys[] = {"algo", "proto", "channels", "calibrated", "channel_gbps", "nvls", NULL};
    static const char *const algos[] = {"auto", "ring", "tree", "nvls", NULL};
    static const char *const protos[] = {"auto", "ll", "ll128", "simple", NULL};
    slot k[6];
    if (!collect(c, sec->val, "nccl", keys, k))
        return;
    int v;
    if (get_enum(c, &k[0], "nccl.algo", algos, &v))
        sc->nccl.algo = (enum hs_nccl_algo)v;
    if (get_enum(c, &k[1], "nccl.proto", protos, &v))
        sc->nccl.proto = (enum hs_nccl_proto)v;
    get_int(c, &k[2], "nccl.channels", 1, 64, &sc->nccl.channels);
    get_bool(c, &k[3], "nccl.calibrated", &sc->nccl.calibrated);
    static const numspec gbps = {0, false, HS_MAX_GBPS, false}; /* 0 = no per-channel cap */
    get_num(c, &k[4], "nccl.channel_gbps", &gbps, &sc->nccl.channel_gbps);
    get_bool(c, &k[5], "nccl.nvls", &sc->nccl.nvls);
}

/* containers: {image: NAME} — the image `hysim run --containers` starts instead of hysim's own. */
static void load_containers(ctx *c, const slot *sec, hs_scenario *sc)
{
    static const char *const keys[] = {"image", NULL};
    slot k[1];
    if (!collect(c, sec->val, "containers", keys, k))
        return;
    get_string(c, &k[0], "containers.image", sc->containers.image, sizeof sc->containers.image);
}

/* ---------------------------------------------------- background, stats */

static const numspec US = {0, false, 1e9, false}; /* microseconds, up to 1000 s */

static bool get_us(ctx *c, const slot *sl, const char *path, uint64_t *ns)
{
    double v;
    if (!get_num(c, sl, path, &US, &v))
        return false;
    *ns = (uint64_t)llround(v * 1000.0);
    return true;
}

static bool get_gpu(ctx *c, const slot *sl, const char *path, const hs_scenario *sc, uint32_t *out)
{
    int gpus = hs_scenario_gpu_count(sc), g;
    if (gpus <= 0 || !get_int(c, sl, path, 0, gpus - 1, &g))
        return false;
    *out = (uint32_t)g;
    return true;
}

/* One explicit background flow: {src, dst, bytes, start_us, repeat_us}. */
static void load_bg_flow(ctx *c, yaml_node_t *map, int i, hs_scenario *sc)
{
    static const char *const keys[] = {"src", "dst", "bytes", "start_us", "repeat_us", NULL};
    enum { SRC, DST, BYTES, START, REPEAT };
    char where[64];
    snprintf(where, sizeof where, "background.flows[%d]", i);
    slot k[5];
    if (!collect(c, map, where, keys, k))
        return;
    struct hs_bg_flow *f = &sc->background.flows[sc->background.nflows];
    memset(f, 0, sizeof *f);
    char path[96];
    bool ok = true;
    const char *need[] = {"src", "dst", "bytes"};
    for (int n = 0; n < 3; n++)
        if (!k[n].val) {
            problem_at(c, AT(map->start_mark), "%s: missing required key \"%s\"", where, need[n]);
            ok = false;
        }
    snprintf(path, sizeof path, "%s.src", where);
    ok &= !k[SRC].val || get_gpu(c, &k[SRC], path, sc, &f->src_gpu);
    snprintf(path, sizeof path, "%s.dst", where);
    ok &= !k[DST].val || get_gpu(c, &k[DST], path, sc, &f->dst_gpu);
    numspec bytes = {1, false, 1125899906842624.0, true}; /* 1 B .. 1 PiB */
    double b = 0;
    snprintf(path, sizeof path, "%s.bytes", where);
    ok &= !k[BYTES].val || get_num(c, &k[BYTES], path, &bytes, &b);
    f->bytes = (uint64_t)b;
    snprintf(path, sizeof path, "%s.start_us", where);
    ok &= !k[START].val || get_us(c, &k[START], path, &f->start_ns);
    snprintf(path, sizeof path, "%s.repeat_us", where);
    ok &= !k[REPEAT].val || get_us(c, &k[REPEAT], path, &f->repeat_ns);
    if (k[SRC].val && k[DST].val && ok && f->src_gpu == f->dst_gpu) {
        problem_at(c, AT(k[DST].val->start_mark), "%s: src and dst are both GPU %u", where, f->dst_gpu);
        ok = false;
    }
    if (ok && k[REPEAT].val && f->repeat_ns == 0) {
        problem_at(c, AT(k[REPEAT].val->start_mark), "%s.repeat_us: expected a positive number, got 0", where);
        ok = false;
    }
    /* The fabric numbers a flow's segments in 40 bits (ns3-glue/model/fabric.cc, AddFlow). */
    if (ok && hs_scn_flow_segments(sc, f->src_gpu, f->dst_gpu, f->bytes) >= HS_FABRIC_MAX_SEGMENTS) {
        bool nvlink =
            f->src_gpu / (uint32_t)sc->servers.gpus_per_server == f->dst_gpu / (uint32_t)sc->servers.gpus_per_server;
        problem_at(c, AT(k[BYTES].val->start_mark),
                   "%s.bytes: %llu bytes are %llu segments of %u bytes (%s), and the fabric model takes fewer than "
                   "2^40 per flow",
                   where, (unsigned long long)f->bytes,
                   (unsigned long long)hs_scn_flow_segments(sc, f->src_gpu, f->dst_gpu, f->bytes),
                   nvlink ? sc->nvlink.segment_bytes : sc->fabric.mtu,
                   nvlink ? "nvlink.segment_kib, within a server" : "fabric.mtu, across servers");
        ok = false;
    }
    if (ok)
        sc->background.nflows++;
}

static void load_bg_flows(ctx *c, const slot *sl, hs_scenario *sc)
{
    yaml_node_t *seq = sl->val;
    char buf[64];
    if (seq->type != YAML_SEQUENCE_NODE) {
        problem_at(c, AT(seq->start_mark), "background.flows: expected a list of flows, got %s",
                   what(seq, buf, sizeof buf));
        return;
    }
    int i = 0;
    for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++, i++) {
        yaml_node_t *n = node_of(c, *it);
        if (!n)
            continue;
        if (i >= HS_BG_MAX_FLOWS) {
            problem_at(c, AT(n->start_mark), "background.flows: at most %d flows (use a pattern for more)",
                       HS_BG_MAX_FLOWS);
            return;
        }
        if (n->type != YAML_MAPPING_NODE) {
            problem_at(c, AT(n->start_mark), "background.flows[%d]: expected a mapping {src, dst, bytes, ...}, got %s",
                       i, what(n, buf, sizeof buf));
            continue;
        }
        load_bg_flow(c, n, i, sc);
    }
}

/*
 * background: explicit flows and/or one generated pattern:
 *   {flows: [...], pattern: permutation|incast, load, message_kib, start_us, duration_us, target}
 */
static void load_background(ctx *c, const slot *sec, hs_scenario *sc)
{
    static const char *const keys[] = {"flows",    "pattern",     "load",   "message_kib",
                                       "start_us", "duration_us", "target", NULL};
    static const char *const patterns[] = {"none", "permutation", "incast", NULL};
    enum { FLOWS, PATTERN, LOAD, MSG, START, DURATION, TARGET };
    slot k[7];
    if (!collect(c, sec->val, "background", keys, k))
        return;
    if (k[FLOWS].val)
        load_bg_flows(c, &k[FLOWS], sc);
    int pattern = HS_BG_NONE;
    if (k[PATTERN].val && !get_enum(c, &k[PATTERN], "background.pattern", patterns, &pattern))
        return;
    sc->background.pattern = (enum hs_bg_pattern)pattern;
    if (pattern == HS_BG_NONE) {
        for (int i = LOAD; i <= TARGET; i++)
            if (k[i].key)
                problem_at(c, AT(k[i].key->start_mark),
                           "background.%s: only used with a pattern "
                           "(background.pattern: permutation or incast)",
                           keys[i]);
        return;
    }
    if (sc->servers.count < 2)
        problem_at(c, AT(k[PATTERN].val->start_mark),
                   "background.pattern: %s traffic crosses the fabric between servers, and the scenario has %d server",
                   patterns[pattern], sc->servers.count);
    if (!k[LOAD].val)
        missing(c, sec->key, "background", "load", " (the fraction of the NIC rate each sender offers)");
    if (!k[DURATION].val)
        missing(c, sec->key, "background", "duration_us", " (how long the pattern runs)");
    static const numspec load = {0, true, 1, false};
    get_num(c, &k[LOAD], "background.load", &load, &sc->background.load);
    static const numspec kib = {0, true, 1048576, false}; /* up to 1 GiB */
    double v;
    if (get_num(c, &k[MSG], "background.message_kib", &kib, &v))
        sc->background.message_bytes = (uint64_t)llround(v * 1024.0) ? (uint64_t)llround(v * 1024.0) : 1;
    get_us(c, &k[START], "background.start_us", &sc->background.start_ns);
    if (get_us(c, &k[DURATION], "background.duration_us", &sc->background.duration_ns) &&
        sc->background.duration_ns == 0)
        problem_at(c, AT(k[DURATION].val->start_mark), "background.duration_us: expected a positive number, got 0");
    if (k[TARGET].key && pattern != HS_BG_INCAST)
        problem_at(c, AT(k[TARGET].key->start_mark), "background.target: only used with pattern incast");
    else if (k[TARGET].val)
        get_gpu(c, &k[TARGET], "background.target", sc, &sc->background.target_gpu);
}

/* stats: {interval_us} — how often `hysim run --stats` samples every link. */
static void load_stats(ctx *c, const slot *sec, hs_scenario *sc)
{
    static const char *const keys[] = {"interval_us", NULL};
    slot k[1];
    if (!collect(c, sec->val, "stats", keys, k))
        return;
    get_us(c, &k[0], "stats.interval_us", &sc->stats.interval_ns);
}

/* values: {routing: balanced | zipf:S} — what a histogram of unknown values reads (docs/values.md). */
static void load_values(ctx *c, const slot *sec, hs_scenario *sc)
{
    static const char *const keys[] = {"routing", NULL};
    slot k[1];
    if (!collect(c, sec->val, "values", keys, k) || !k[0].val)
        return;
    const yaml_node_t *n = k[0].val;
    double s;
    if (n->type == YAML_SCALAR_NODE && clean_scalar(n)) {
        if (!strcmp(scalar(n), "balanced")) {
            sc->values.routing = HS_ROUTING_BALANCED;
            return;
        }
        if (!strncmp(scalar(n), "zipf:", 5) && number_text(scalar(n) + 5, &s) && s > 0 && s <= 10) {
            sc->values.routing = HS_ROUTING_ZIPF;
            sc->values.routing_zipf_s = s;
            return;
        }
    }
    char buf[64];
    problem_at(c, AT(n->start_mark),
               "values.routing: expected balanced or zipf:S (an exponent, 0 < S <= 10, e.g. zipf:1.2), got %s",
               what(n, buf, sizeof buf));
}

/* The scenario's default name: the file name without its directory and .yaml/.yml. */
static void name_from_file(const char *file, char *dst, size_t cap)
{
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    size_t len = strlen(base);
    if (len > 5 && !strcmp(base + len - 5, ".yaml"))
        len -= 5;
    else if (len > 4 && !strcmp(base + len - 4, ".yml"))
        len -= 4;
    if (!len)
        return;
    if (len >= cap)
        len = cap - 1;
    memcpy(dst, base, len);
    dst[len] = 0;
}

static void load_root(ctx *c, yaml_node_t *root, hs_scenario *sc)
{
    slot t[T_COUNT];
    if (!collect(c, root, NULL, TOP_KEYS, t))
        return;
    get_string(c, &t[T_NAME], "name", sc->name, sizeof sc->name);
    if (t[T_GPU].val)
        load_gpu(c, &t[T_GPU], sc);
    int before_servers = c->count;
    if (t[T_SERVERS].val)
        load_servers(c, &t[T_SERVERS], sc);
    else
        problem_at(c, 1, 1, "missing required section \"servers\"");
    bool servers_ok = c->count == before_servers;
    if (t[T_NVLINK].val)
        load_nvlink(c, &t[T_NVLINK], sc);
    int before_network = c->count;
    load_pcie(c, &t[T_PCIE], sc);
    load_nics(c, &t[T_NICS], sc);
    load_fabric(c, &t[T_FABRIC], sc);
    if (servers_ok && c->count == before_network)
        check_fabric_model(c, &t[T_SERVERS], &t[T_NICS], &t[T_FABRIC], sc);
    if (t[T_COMPUTE].val)
        load_compute(c, &t[T_COMPUTE], sc);
    if (t[T_RUN].val)
        load_run(c, &t[T_RUN], sc);
    if (t[T_CONTAINERS].val)
        load_containers(c, &t[T_CONTAINERS], sc);
    if (t[T_NCCL].val)
        load_nccl(c, &t[T_NCCL], sc);
    if (t[T_BACKGROUND].val)
        load_background(c, &t[T_BACKGROUND], sc);
    if (t[T_STATS].val)
        load_stats(c, &t[T_STATS], sc);
    if (t[T_VALUES].val)
        load_values(c, &t[T_VALUES], sc);

    if (t[T_SERVERS].key && sc->servers.count > 1 && !t[T_FABRIC].key)
        problem_at(c, AT(t[T_SERVERS].key->start_mark),
                   "servers: %d servers need a fabric: section to connect them, and there is none", sc->servers.count);
}

/* ------------------------------------------------------------------ parsing */

static void offset_to_mark(const char *text, size_t len, size_t off, unsigned long *line, unsigned long *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off && i < len; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

static void syntax_problem(ctx *c, const yaml_parser_t *p, const char *text, size_t len)
{
    const char *problem = p->problem ? p->problem : "unknown problem";
    switch (p->error) {
    case YAML_MEMORY_ERROR: problem_at(c, 1, 1, "out of memory while reading YAML"); return;
    case YAML_READER_ERROR: {
        unsigned long line, col;
        offset_to_mark(text, len, p->problem_offset, &line, &col);
        if (p->problem_value != -1)
            problem_at(c, line, col, "invalid input: %s (byte 0x%02x)", problem, (unsigned)p->problem_value & 0xffu);
        else
            problem_at(c, line, col, "invalid input: %s", problem);
        return;
    }
    default: break;
    }
    if (p->context)
        problem_at(c, AT(p->problem_mark), "YAML syntax error: %s (%s at %lu:%lu)", problem, p->context,
                   AT(p->context_mark));
    else
        problem_at(c, AT(p->problem_mark), "YAML syntax error: %s", problem);
}

/*
 * Refuses nesting deeper than HS_MAX_NESTING before the document is loaded:
 * the event parser stops at the first collection too deep, so a hostile file
 * costs no more than HS_MAX_NESTING levels. 0 when the nesting is within
 * bounds or the file has a syntax error (the loader reports it), -1 when it
 * reported the depth.
 */
static int check_nesting(ctx *c, const char *text, size_t len)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return 0;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int depth = 0, rc = 0;
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev))
            break;
        yaml_event_type_t type = ev.type;
        if (type == YAML_MAPPING_START_EVENT || type == YAML_SEQUENCE_START_EVENT) {
            if (++depth > HS_MAX_NESTING) {
                problem_at(c, AT(ev.start_mark),
                           "nested deeper than %d levels: expected a scenario (sections of keys, a few levels deep)",
                           HS_MAX_NESTING);
                rc = -1;
            }
        } else if (type == YAML_MAPPING_END_EVENT || type == YAML_SEQUENCE_END_EVENT) {
            depth--;
        }
        yaml_event_delete(&ev);
        if (rc < 0 || type == YAML_STREAM_END_EVENT)
            break;
    }
    yaml_parser_delete(&parser);
    return rc;
}

static int parse(const char *text, size_t len, const char *file, hs_scenario *sc, ctx *c)
{
    if (check_nesting(c, text, len) < 0) {
        flush(c);
        return c->count;
    }
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        problem_at(c, 1, 1, "out of memory while reading YAML");
        flush(c);
        return c->count;
    }
    name_from_file(file, sc->name, sizeof sc->name);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        syntax_problem(c, &parser, text, len);
        yaml_parser_delete(&parser);
        flush(c);
        return c->count;
    }
    c->doc = &doc;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root) {
        problem_at(c, 1, 1, "empty file: expected a mapping with at least a \"servers\" section");
    } else {
        load_root(c, root, sc);
        yaml_document_t next;
        if (!yaml_parser_load(&parser, &next)) {
            syntax_problem(c, &parser, text, len);
        } else {
            yaml_node_t *r2 = yaml_document_get_root_node(&next);
            if (r2)
                problem_at(c, AT(r2->start_mark),
                           "a second YAML document: a scenario file holds exactly one (remove the \"---\")");
            yaml_document_delete(&next);
        }
    }
    c->doc = NULL;
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    flush(c);
    return c->count;
}

static void ctx_init(ctx *c, const char *file, char *errbuf, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->file = file;
    c->err = errbuf;
    c->errlen = errbuf ? errlen : 0;
    if (c->errlen)
        errbuf[0] = 0;
}

int hs_scenario_parse(const char *text, size_t len, const char *name, hs_scenario *sc, char *errbuf, size_t errlen)
{
    ctx c;
    ctx_init(&c, name ? name : "<memory>", errbuf, errlen);
    hs_scenario_defaults(sc);
    return parse(text ? text : "", text ? len : 0, c.file, sc, &c);
}

/* Reads all of fd into a malloc'd buffer; 0, or an errno value (EFBIG past HS_MAX_FILE_BYTES). */
static int read_all(int fd, char **text, size_t *len)
{
    size_t cap = 4096, used = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf)
            return ENOMEM;
        if (used == cap) {
            if (cap >= HS_MAX_FILE_BYTES) {
                free(buf);
                return EFBIG;
            }
            char *bigger = realloc(buf, cap * 2);
            if (!bigger)
                free(buf);
            buf = bigger;
            cap *= 2;
            continue;
        }
        ssize_t n = read(fd, buf + used, cap - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            free(buf);
            return e;
        }
        if (n == 0)
            break;
        used += (size_t)n;
    }
    *text = buf;
    *len = used;
    return 0;
}

int hs_scenario_load(const char *path, hs_scenario *sc, char *errbuf, size_t errlen)
{
    ctx c;
    ctx_init(&c, path, errbuf, errlen);
    hs_scenario_defaults(sc);

    if (strlen(path) >= sizeof sc->path) {
        c.count++;
        append(&c, "%s: cannot open: path longer than %zu bytes\n", path, sizeof sc->path - 1);
        return c.count;
    }
    memcpy(sc->path, path, strlen(path) + 1);

    struct stat st;
    /* O_NONBLOCK: a FIFO given as the scenario must not block the open until a writer comes */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    int e = fd < 0 ? errno : fstat(fd, &st) ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0;
    if (e) {
        if (fd >= 0)
            close(fd);
        c.count++;
        append(&c, "%s: cannot open: %s\n", path, strerror(e));
        return c.count;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        c.count++;
        append(&c, "%s: not a regular file (%s): expected a scenario file\n", path,
               S_ISFIFO(st.st_mode)   ? "a FIFO or pipe"
               : S_ISCHR(st.st_mode)  ? "a character device"
               : S_ISBLK(st.st_mode)  ? "a block device"
               : S_ISSOCK(st.st_mode) ? "a socket"
                                      : "not a file");
        return c.count;
    }
    char *text = NULL;
    size_t len = 0;
    e = read_all(fd, &text, &len);
    close(fd);
    if (e) {
        c.count++;
        append(&c, "%s: cannot read: %s\n", path,
               e == EFBIG ? "larger than 16 MiB; a scenario is a short file" : strerror(e));
        return c.count;
    }
    parse(text, len, path, sc, &c);
    free(text);
    return c.count;
}
