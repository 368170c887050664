/*
 * The receive buffer's bytes after a collective: at once under the
 * symmetric model of docs/values.md (each of the n ranks sent what this one
 * sent, so a sum is n times this rank's value, a gather n copies of its
 * share), then, for a small collective, as hysimd computes them from every
 * rank's send bytes, fetched when first read.
 */
#include "nccl_values.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "element_reduce.h"
#include "values.h"

/* buf[0, count) reduced with itself n times by op: the symmetric model's reduction. */
static void reduce_all(uint8_t *buf, size_t count, ncclDataType_t t, ncclRedOp_t op, int n)
{
    const void **in = malloc((size_t)n * sizeof(*in));
    if (!in)
        return;
    for (int i = 0; i < n; i++)
        in[i] = buf;
    hs_reduce_elements((int)t, (int)op, count, in, n, buf);
    free(in);
}

/* Bytes of a kind's send and receive buffers, share being count elements. */
static size_t in_bytes_of(enum hs_coll_kind kind, size_t share, int nranks)
{
    return kind == HS_COLL_REDUCE_SCATTER || kind == HS_COLL_ALL_TO_ALL ? share * (size_t)nranks : share;
}
static size_t out_bytes_of(enum hs_coll_kind kind, size_t share, int nranks)
{
    return kind == HS_COLL_ALL_GATHER || kind == HS_COLL_ALL_TO_ALL ? share * (size_t)nranks : share;
}

void hs_nccl_values(enum hs_coll_kind kind, ncclDataType_t type, size_t size, ncclRedOp_t op, size_t count, int nranks,
                    int rank, int root, const void *send, const void *recv)
{
    size_t share = count * size;
    uintptr_t out = (uintptr_t)recv;
    size_t out_bytes = out_bytes_of(kind, share, nranks);
    if (!recv || !size || out_bytes == 0)
        return;
    if (kind == HS_COLL_SEND)
        return;
    uint8_t *in = NULL, *res = NULL;
    size_t in_bytes = in_bytes_of(kind, share, nranks);
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
        reduce_all(res, count, type, op, nranks);
        break;
    case HS_COLL_REDUCE_SCATTER: /* this rank's share of each rank's buffer */
        memcpy(res, in + (size_t)rank * share, share);
        reduce_all(res, count, type, op, nranks);
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

int hs_nccl_values_part(enum hs_coll_kind kind, ncclDataType_t type, size_t size, ncclRedOp_t op, size_t count,
                        int nranks, const void *send, hs_nccl_part *part)
{
    memset(part, 0, sizeof *part);
    size_t share = count * size, in = in_bytes_of(kind, share, nranks), out = out_bytes_of(kind, share, nranks);
    if (kind == HS_COLL_SEND || kind == HS_COLL_RECV || !size || share == 0 || in > HS_VALUES_MAX_BYTES ||
        out > HS_VALUES_MAX_BYTES || (!send && kind != HS_COLL_BROADCAST))
        return 0;
    part->kind = kind;
    part->out_bytes = out;
    part->values = (hs_coll_values){NULL, 0, (int)type, (int)op};
    if (!send) /* a Broadcast's other ranks send nothing: the root's bytes are everyone's */
        return 1;
    void *bytes = malloc(in);
    if (!bytes)
        return 0;
    hs_values_read(bytes, (uintptr_t)send, in); /* zeros where nothing is known: those are the rank's bytes here */
    part->values.bytes = bytes;
    part->values.len = in;
    return 1;
}

void hs_nccl_part_free(hs_nccl_part *part)
{
    free((void *)part->values.bytes);
    part->values.bytes = NULL;
}

void hs_nccl_values_pending(const hs_nccl_part *part, uint64_t comm_key, uint64_t seq, int rank, int root,
                            const void *recv)
{
    if (!recv || !part->out_bytes || (part->kind == HS_COLL_REDUCE && rank != root))
        return; /* a Reduce writes only its root's buffer */
    hs_values_pending((uintptr_t)recv, part->out_bytes, comm_key, seq, (uint32_t)rank);
}
