/*
 * What a collective leaves in its receive buffer, for the small buffers
 * whose bytes hysim keeps (values.h): every rank is taken to have
 * contributed what this rank did. docs/values.md says why.
 */
#ifndef HS_NCCL_VALUES_H
#define HS_NCCL_VALUES_H

#include <nccl.h>
#include <stddef.h>

#include "client.h" /* enum hs_coll_kind */

/* size: bytes per element of type; count: elements as NCCL counts them for the kind; root: root or peer. */
void hs_nccl_values(enum hs_coll_kind kind, ncclDataType_t type, size_t size, ncclRedOp_t op, size_t count, int nranks,
                    int rank, int root, const void *send, const void *recv);

#endif
