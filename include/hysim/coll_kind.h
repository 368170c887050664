/*
 * The kinds of NCCL call hysim models: the numbers hysim.proto's CollKind
 * carries, shared by the replacement NCCL library and hysimd's collectives
 * (docs/nccl.md).
 */
#ifndef HYSIM_COLL_KIND_H
#define HYSIM_COLL_KIND_H

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

#endif
