/*
 * NCCL's reductions on the host (element_reduce.h). Floating-point types are
 * reduced in double and rounded once, as NCCL's ring reduces in the element
 * type step by step: the two agree exactly for the small integers and
 * identical values metadata exchanges carry.
 */
#include "element_reduce.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t hs_dtype_size(int type)
{
    static const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
    return type >= 0 && type < (int)(sizeof sizes / sizeof sizes[0]) ? sizes[type] : 0;
}

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0 && man == 0)
        bits = sign;
    else if (exp == 0) { /* subnormal */
        float f = ldexpf((float)man, -24);
        return sign ? -f : f;
    } else if (exp == 31)
        bits = sign | 0x7f800000u | (man << 13);
    else
        bits = sign | ((exp + 112) << 23) | (man << 13);
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static uint16_t float_to_half(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, 4);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000);
    float a = fabsf(f);
    if (isnan(f))
        return sign | 0x7e00;
    if (a >= 65520.0f)
        return sign | 0x7c00;
    if (a < ldexpf(1.0f, -14)) /* subnormal or zero */
        return sign | (uint16_t)lrintf(a * ldexpf(1.0f, 24));
    int e;
    float m = frexpf(a, &e); /* a = m * 2^e, m in [0.5, 1) */
    uint32_t man = (uint32_t)lrintf((m * 2.0f - 1.0f) * 1024.0f);
    if (man == 1024) {
        man = 0;
        e++;
    }
    return sign | (uint16_t)((uint32_t)(e - 1 + 15) << 10) | (uint16_t)man;
}

static float bf16_to_float(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static uint16_t float_to_bf16(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, 4);
    if (isnan(f))
        return (uint16_t)((bits >> 16) | 0x40);
    bits += 0x7fff + ((bits >> 16) & 1); /* round to nearest even */
    return (uint16_t)(bits >> 16);
}

static double combine(int op, double a, double b)
{
    switch (op) {
    case HS_RED_PROD: return a * b;
    case HS_RED_MAX: return b > a ? b : a;
    case HS_RED_MIN: return b < a ? b : a;
    default: return a + b; /* sum, and average's sum */
    }
}

/* One element of each input reduced into *out, through double (floats) or 64-bit integers. */
#define REDUCE_INT(type)                                                    \
    do {                                                                    \
        for (size_t i = 0; i < count; i++) {                                \
            type acc, v;                                                    \
            memcpy(&acc, (const char *)in[0] + i * sizeof acc, sizeof acc); \
            for (int r = 1; r < n; r++) {                                   \
                memcpy(&v, (const char *)in[r] + i * sizeof v, sizeof v);   \
                acc = op == HS_RED_PROD  ? (type)(acc * v)                  \
                      : op == HS_RED_MAX ? (v > acc ? v : acc)              \
                      : op == HS_RED_MIN ? (v < acc ? v : acc)              \
                                         : (type)(acc + v);                 \
            }                                                               \
            if (op == HS_RED_AVG)                                           \
                acc = (type)(acc / (type)n);                                \
            memcpy((char *)out + i * sizeof acc, &acc, sizeof acc);         \
        }                                                                   \
    } while (0)

static double load_float(int type, const void *p)
{
    switch (type) {
    case HS_DT_FLOAT16: {
        uint16_t h;
        memcpy(&h, p, 2);
        return half_to_float(h);
    }
    case HS_DT_BFLOAT16: {
        uint16_t h;
        memcpy(&h, p, 2);
        return bf16_to_float(h);
    }
    case HS_DT_FLOAT32: {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    default: {
        double x;
        memcpy(&x, p, 8);
        return x;
    }
    }
}

static void store_float(int type, void *p, double x)
{
    switch (type) {
    case HS_DT_FLOAT16: {
        uint16_t h = float_to_half((float)x);
        memcpy(p, &h, 2);
        return;
    }
    case HS_DT_BFLOAT16: {
        uint16_t h = float_to_bf16((float)x);
        memcpy(p, &h, 2);
        return;
    }
    case HS_DT_FLOAT32: {
        float f = (float)x;
        memcpy(p, &f, 4);
        return;
    }
    default: memcpy(p, &x, 8); return;
    }
}

int hs_reduce_elements(int type, int op, size_t count, const void *const *in, int n, void *out)
{
    size_t size = hs_dtype_size(type);
    if (n < 1 || size == 0 || op < HS_RED_SUM || op > HS_RED_AVG || type == HS_DT_FLOAT8E4M3 ||
        type == HS_DT_FLOAT8E5M2) {
        if (n >= 1 && out != in[0] && size)
            memmove(out, in[0], count * size);
        return -1;
    }
    switch (type) {
    case HS_DT_INT8: REDUCE_INT(int8_t); return 0;
    case HS_DT_UINT8: REDUCE_INT(uint8_t); return 0;
    case HS_DT_INT32: REDUCE_INT(int32_t); return 0;
    case HS_DT_UINT32: REDUCE_INT(uint32_t); return 0;
    case HS_DT_INT64: REDUCE_INT(int64_t); return 0;
    case HS_DT_UINT64: REDUCE_INT(uint64_t); return 0;
    default: break;
    }
    for (size_t i = 0; i < count; i++) {
        double acc = load_float(type, (const char *)in[0] + i * size);
        for (int r = 1; r < n; r++)
            acc = combine(op, acc, load_float(type, (const char *)in[r] + i * size));
        if (op == HS_RED_AVG)
            acc /= n;
        store_float(type, (char *)out + i * size, acc);
    }
    return 0;
}

size_t hs_coll_in_bytes(enum hs_coll_kind kind, size_t share, int n)
{
    return kind == HS_COLL_REDUCE_SCATTER || kind == HS_COLL_ALL_TO_ALL ? share * (size_t)n : share;
}

size_t hs_coll_out_bytes(enum hs_coll_kind kind, size_t share, int n)
{
    return kind == HS_COLL_ALL_GATHER || kind == HS_COLL_ALL_TO_ALL ? share * (size_t)n : share;
}

void hs_coll_receive(enum hs_coll_kind kind, int type, int op, size_t share, int n, int rank, int root,
                     const void *const *in, void *out)
{
    size_t esize = hs_dtype_size(type), count = esize ? share / esize : 0;
    switch (kind) {
    case HS_COLL_ALL_REDUCE:
    case HS_COLL_REDUCE: hs_reduce_elements(type, op, count, in, n, out); break;
    case HS_COLL_REDUCE_SCATTER: { /* this rank's share of each rank's buffer */
        const void **part = malloc((size_t)n * sizeof(*part));
        if (!part)
            break;
        for (int k = 0; k < n; k++)
            part[k] = (const char *)in[k] + (size_t)rank * share;
        hs_reduce_elements(type, op, count, part, n, out);
        free(part);
        break;
    }
    case HS_COLL_BROADCAST: memcpy(out, in[root], share); break;
    case HS_COLL_ALL_GATHER:
        for (int k = 0; k < n; k++)
            memcpy((char *)out + (size_t)k * share, in[k], share);
        break;
    case HS_COLL_ALL_TO_ALL: /* rank k's share number `rank` */
        for (int k = 0; k < n; k++)
            memcpy((char *)out + (size_t)k * share, (const char *)in[k] + (size_t)rank * share, share);
        break;
    default: break;
    }
}
