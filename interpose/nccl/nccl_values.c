/*
 * The receive buffer's bytes after a collective under the symmetric model
 * of docs/values.md: each of the n ranks sent what this one sent, so a sum
 * is n times this rank's value, a gather n copies of its share.
 */
#include "nccl_values.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "values.h"

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

/* x combined with itself n times by op, in place (one element of type t). */
static void reduce_n(void *x, ncclDataType_t t, ncclRedOp_t op, int n)
{
    if (op != ncclSum && op != ncclProd)
        return; /* max, min and average of n equal values: the value */
#define INT_CASE(type)                                         \
    {                                                          \
        type v, r;                                             \
        memcpy(&v, x, sizeof v);                               \
        r = op == ncclSum ? (type)0 : (type)1;                 \
        for (int i = 0; i < n; i++)                            \
            r = op == ncclSum ? (type)(r + v) : (type)(r * v); \
        memcpy(x, &r, sizeof r);                               \
        return;                                                \
    }
    switch (t) {
    case ncclInt8: INT_CASE(int8_t)
    case ncclUint8: INT_CASE(uint8_t)
    case ncclInt32: INT_CASE(int32_t)
    case ncclUint32: INT_CASE(uint32_t)
    case ncclInt64: INT_CASE(int64_t)
    case ncclUint64: INT_CASE(uint64_t)
    case ncclFloat32: {
        float v;
        memcpy(&v, x, 4);
        v = op == ncclSum ? v * (float)n : powf(v, (float)n);
        memcpy(x, &v, 4);
        return;
    }
    case ncclFloat64: {
        double v;
        memcpy(&v, x, 8);
        v = op == ncclSum ? v * n : pow(v, n);
        memcpy(x, &v, 8);
        return;
    }
    case ncclFloat16:
    case ncclBfloat16: {
        uint16_t h;
        memcpy(&h, x, 2);
        float v = t == ncclFloat16 ? half_to_float(h) : bf16_to_float(h);
        v = op == ncclSum ? v * (float)n : powf(v, (float)n);
        h = t == ncclFloat16 ? float_to_half(v) : float_to_bf16(v);
        memcpy(x, &h, 2);
        return;
    }
    default: return; /* 8-bit floats: left as they are */
    }
#undef INT_CASE
}

static void reduce_all(uint8_t *buf, size_t count, size_t size, ncclDataType_t t, ncclRedOp_t op, int n)
{
    for (size_t i = 0; i < count; i++)
        reduce_n(buf + i * size, t, op, n);
}

void hs_nccl_values(enum hs_coll_kind kind, ncclDataType_t type, size_t size, ncclRedOp_t op, size_t count, int nranks,
                    int rank, int root, const void *send, const void *recv)
{
    size_t share = count * size;
    uintptr_t out = (uintptr_t)recv;
    size_t out_bytes = kind == HS_COLL_ALL_GATHER || kind == HS_COLL_ALL_TO_ALL ? share * (size_t)nranks : share;
    if (!recv || !size || out_bytes == 0)
        return;
    if (kind == HS_COLL_SEND)
        return;
    uint8_t *in = NULL, *res = NULL;
    size_t in_bytes = kind == HS_COLL_REDUCE_SCATTER || kind == HS_COLL_ALL_TO_ALL ? share * (size_t)nranks : share;
    int roots_only = kind == HS_COLL_REDUCE && rank != root; /* its receive buffer is not written */
    if (roots_only)
        return;
    if (kind == HS_COLL_RECV || !send || out_bytes > HS_VALUES_MAX_BYTES || in_bytes > HS_VALUES_MAX_BYTES ||
        !(in = malloc(in_bytes)) || !(res = malloc(out_bytes))) {
        free(in);
        hs_values_forget(out, out_bytes); /* a peer's data: unknown */
        return;
    }
    hs_values_read(in, (uintptr_t)send, in_bytes);
    switch (kind) {
    case HS_COLL_ALL_REDUCE:
    case HS_COLL_REDUCE:
        memcpy(res, in, share);
        reduce_all(res, count, size, type, op, nranks);
        break;
    case HS_COLL_REDUCE_SCATTER: /* this rank's share of each rank's buffer */
        memcpy(res, in + (size_t)rank * share, share);
        reduce_all(res, count, size, type, op, nranks);
        break;
    case HS_COLL_ALL_GATHER:
        for (int r = 0; r < nranks; r++)
            memcpy(res + (size_t)r * share, in, share);
        break;
    case HS_COLL_ALL_TO_ALL: /* rank r sends this rank its share number `rank`, as this rank does */
        for (int r = 0; r < nranks; r++)
            memcpy(res + (size_t)r * share, in + (size_t)rank * share, share);
        break;
    case HS_COLL_BROADCAST:
    default: memcpy(res, in, share); break;
    }
    hs_values_write(out, res, out_bytes);
    free(in);
    free(res);
}
