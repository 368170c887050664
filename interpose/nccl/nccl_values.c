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

void hs_nccl_values(enum hs_coll_kind kind, ncclDataType_t type, size_t size, ncclRedOp_t op, size_t count, int nranks,
                    int rank, int root, const void *send, const void *recv)
{
    size_t share = count * size;
    uintptr_t out = (uintptr_t)recv;
    size_t out_bytes = hs_coll_out_bytes(kind, share, nranks);
    if (!recv || !size || out_bytes == 0)
        return;
    if (kind == HS_COLL_SEND)
        return;
    size_t in_bytes = hs_coll_in_bytes(kind, share, nranks);
    int roots_only = kind == HS_COLL_REDUCE && rank != root; /* its receive buffer is not written */
    if (roots_only)
        return;
    uint8_t *in = NULL, *res = NULL;
    const void **ins = NULL;
    if (kind == HS_COLL_RECV || !send || out_bytes > HS_VALUES_MAX_BYTES || in_bytes > HS_VALUES_MAX_BYTES ||
        !(in = malloc(in_bytes)) || !(res = malloc(out_bytes)) || !(ins = malloc((size_t)nranks * sizeof(*ins)))) {
        free(in);
        free(res);
        hs_values_forget(out, out_bytes); /* a peer's data: unknown */
        return;
    }
    hs_values_read(in, (uintptr_t)send, in_bytes);
    for (int r = 0; r < nranks; r++)
        ins[r] = in; /* every rank sent what this one sent */
    hs_coll_receive(kind, (int)type, (int)op, share, nranks, rank, root, ins, res);
    hs_values_write(out, res, out_bytes);
    free(ins);
    free(in);
    free(res);
}

int hs_nccl_values_part(enum hs_coll_kind kind, ncclDataType_t type, size_t size, ncclRedOp_t op, size_t count,
                        int nranks, const void *send, hs_nccl_part *part)
{
    memset(part, 0, sizeof *part);
    size_t share = count * size, in = hs_coll_in_bytes(kind, share, nranks),
           out = hs_coll_out_bytes(kind, share, nranks);
    if (!size || share == 0 || in > HS_VALUES_MAX_BYTES || out > HS_VALUES_MAX_BYTES ||
        (!send && kind != HS_COLL_BROADCAST && kind != HS_COLL_RECV))
        return 0;
    part->kind = kind;
    part->out_bytes = kind == HS_COLL_SEND ? 0 : out;
    part->values = (hs_coll_values){NULL, 0, (int)type, (int)op};
    if (kind == HS_COLL_RECV || !send) /* a Recv's bytes are its Send's; a Broadcast's other ranks send nothing */
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
    hs_values_pending((uintptr_t)recv, part->out_bytes, comm_key, seq, (uint32_t)rank,
                      part->kind == HS_COLL_RECV ? root : -1);
}
