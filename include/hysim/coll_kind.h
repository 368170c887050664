/*
 * The kinds of NCCL call hysim models: the numbers hysim.proto's CollKind
 * carries, shared by the replacement NCCL library and hysimd's collectives
 * (docs/nccl.md).
 */
#ifndef HYSIM_COLL_KIND_H
#define HYSIM_COLL_KIND_H

#include <stdbool.h>

enum hs_coll_kind {
    HS_COLL_ALL_REDUCE = 0,
    HS_COLL_ALL_GATHER = 1,
    HS_COLL_REDUCE_SCATTER = 2,
    HS_COLL_BROADCAST = 3,
    HS_COLL_REDUCE = 4,
    HS_COLL_SEND = 5,
    HS_COLL_RECV = 6,
    HS_COLL_ALL_TO_ALL = 7,
};

/* Every rank's buffer goes round the ring: all-reduce, all-gather, reduce-scatter. */
static inline bool hs_coll_kind_ring(enum hs_coll_kind k)
{
    return k == HS_COLL_ALL_REDUCE || k == HS_COLL_ALL_GATHER || k == HS_COLL_REDUCE_SCATTER;
}
/* From or to one root rank, a chain: broadcast, reduce. */
static inline bool hs_coll_kind_rooted(enum hs_coll_kind k) { return k == HS_COLL_BROADCAST || k == HS_COLL_REDUCE; }
/* Between two ranks: send, recv. */
static inline bool hs_coll_kind_p2p(enum hs_coll_kind k) { return k == HS_COLL_SEND || k == HS_COLL_RECV; }

#endif
