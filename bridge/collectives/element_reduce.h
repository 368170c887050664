/*
 * NCCL's reductions computed on the host, element by element: what a
 * collective's receive buffer holds given each rank's send bytes
 * (docs/values.md). Types and operations carry NCCL's numbering
 * (ncclDataType_t, ncclRedOp_t), so neither end needs the other's headers.
 */
#ifndef HS_ELEMENT_REDUCE_H
#define HS_ELEMENT_REDUCE_H

#include <stddef.h>

/* NCCL's numbering: ncclSum .. ncclAvg; ncclInt8 .. ncclFloat8e5m2. */
enum { HS_RED_SUM, HS_RED_PROD, HS_RED_MAX, HS_RED_MIN, HS_RED_AVG };
enum {
    HS_DT_INT8,
    HS_DT_UINT8,
    HS_DT_INT32,
    HS_DT_UINT32,
    HS_DT_INT64,
    HS_DT_UINT64,
    HS_DT_FLOAT16,
    HS_DT_FLOAT32,
    HS_DT_FLOAT64,
    HS_DT_BFLOAT16,
    HS_DT_FLOAT8E4M3,
    HS_DT_FLOAT8E5M2
};

/* Bytes of one element of type; 0 for a type NCCL does not have. */
size_t hs_dtype_size(int type);

/*
 * out[0, count) = in[0] op in[1] op ... op in[n - 1], element by element
 * (ncclAvg: the sum over n). out may be one of the inputs. 8-bit floats and
 * unknown types or operations copy in[0]. Returns 0, or -1 for a type or
 * operation it does not know.
 */
int hs_reduce_elements(int type, int op, size_t count, const void *const *in, int n, void *out);

#endif
