/*
 * NCCL's reductions computed on the host, element by element: what a
 * collective's receive buffer holds given each rank's send bytes
 * (docs/values.md). Types and operations carry NCCL's numbering
 * (ncclDataType_t, ncclRedOp_t), so neither end needs the other's headers.
 */
#ifndef HS_ELEMENT_REDUCE_H
#define HS_ELEMENT_REDUCE_H

#include <stddef.h>

#include "hysim/coll_kind.h"

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

/* Bytes of one rank's send and receive buffers for a kind whose call names share bytes, among n ranks. */
size_t hs_coll_in_bytes(enum hs_coll_kind kind, size_t share, int n);
size_t hs_coll_out_bytes(enum hs_coll_kind kind, size_t share, int n);
/*
 * Rank's receive bytes (hs_coll_out_bytes of them) from the n ranks' send
 * bytes in[0..n) (hs_coll_in_bytes each; a Broadcast reads in[root] alone):
 * what the GPUs leave in its receive buffer. Send and Recv: nothing.
 */
void hs_coll_receive(enum hs_coll_kind kind, int type, int op, size_t share, int n, int rank, int root,
                     const void *const *in, void *out);

#endif
