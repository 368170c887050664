/*
 * What a collective leaves in its receive buffer, for the small buffers
 * whose bytes hysim keeps (values.h). At once: every rank is taken to have
 * contributed what this rank did; then, for a small collective, the exact
 * bytes hysimd computes from every rank's (docs/values.md).
 */
#ifndef HS_NCCL_VALUES_H
#define HS_NCCL_VALUES_H

#include <nccl.h>
#include <stddef.h>

#include "client.h" /* enum hs_coll_kind, hs_coll_values */

/* size: bytes per element of type; count: elements as NCCL counts them for the kind; root: root or peer. */
void hs_nccl_values(enum hs_coll_kind kind, ncclDataType_t type, size_t size, ncclRedOp_t op, size_t count, int nranks,
                    int rank, int root, const void *send, const void *recv);

/* A small collective part's send bytes, for hysimd (hs_client_collective's values); a Recv's carry none. */
typedef struct hs_nccl_part {
    hs_coll_values values;
    enum hs_coll_kind kind;
    size_t out_bytes;
} hs_nccl_part;
/* 1 with part filled (free it with hs_nccl_part_free) when the collective is small enough to carry its bytes. */
int hs_nccl_values_part(enum hs_coll_kind kind, ncclDataType_t type, size_t size, ncclRedOp_t op, size_t count,
                        int nranks, const void *send, hs_nccl_part *part);
void hs_nccl_part_free(hs_nccl_part *part);
/* The part went to hysimd: recv's bytes are to be asked for there when read (values.h, hs_values_pending). */
void hs_nccl_values_pending(const hs_nccl_part *part, uint64_t comm_key, uint64_t seq, int rank, int root,
                            const void *recv);

#endif
