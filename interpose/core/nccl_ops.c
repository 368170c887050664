/*
 * NCCL's calls as ops: communicators, collectives and splits.
 */
#include "client_internal.h"

cudaError_t hs_client_comm_init(uint64_t comm_key, int rank, int nranks, int device)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    if (!valid_device(device))
        return cudaErrorInvalidDevice;
    LOCK();
    pending_op *p = append_locked(device, 0);
    hysim__comm_init__init(&p->u.comm_init);
    p->u.comm_init.comm_key = comm_key;
    p->u.comm_init.rank = (uint32_t)rank;
    p->u.comm_init.nranks = (uint32_t)nranks;
    p->op.kind_case = HYSIM__OP__KIND_COMM_INIT;
    p->op.comm_init = &p->u.comm_init;
    commit_locked();
    flush_locked(); /* other processes may ask hysimd whether every rank has joined (hs_client_comm_local_ranks) */
    UNLOCK();
    return cudaSuccess;
}

cudaError_t hs_client_comm_local_ranks(uint64_t parent_key, int parent_nranks, int *complete, int *mine)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    LOCK();
    flush_locked();
    Hysim__CommSplit cs = HYSIM__COMM_SPLIT__INIT; /* no calls: a question, answered at once */
    cs.host_ns = hs_clock_now();
    cs.parent_key = parent_key;
    cs.parent_nranks = (uint32_t)parent_nranks;
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_COMM_SPLIT;
    m.comm_split = &cs;
    reply_slot slot;
    expect_reply_locked(&slot, 0);
    send_locked(&m);
    Hysim__Reply *r = await_reply(&slot);
    UNLOCK();
    if (r->error && r->error[0]) {
        print_daemon_error(r->error);
        e = cudaErrorUnknown;
    }
    *complete = r->done;
    *mine = (int)r->n_split;
    hysim__reply__free_unpacked(r, NULL);
    return e;
}

cudaError_t hs_client_comm_split(uint64_t parent_key, int parent_nranks, uint64_t gen, size_t n,
                                 const hs_split_call *calls, hs_split_result *out)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    Hysim__SplitCall *sc = xcalloc(n, sizeof *sc);
    Hysim__SplitCall **ptrs = xcalloc(n, sizeof *ptrs);
    for (size_t i = 0; i < n; i++) {
        hysim__split_call__init(&sc[i]);
        sc[i].rank = (uint32_t)calls[i].rank;
        sc[i].color = calls[i].color;
        sc[i].key = calls[i].key;
        ptrs[i] = &sc[i];
    }
    LOCK();
    flush_locked();
    Hysim__CommSplit cs = HYSIM__COMM_SPLIT__INIT;
    cs.host_ns = hs_clock_now();
    cs.parent_key = parent_key;
    cs.parent_nranks = (uint32_t)parent_nranks;
    cs.gen = gen;
    cs.n_calls = n;
    cs.calls = ptrs;
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_COMM_SPLIT;
    m.comm_split = &cs;
    reply_slot slot;
    expect_reply_locked(&slot, 0);
    send_locked(&m); /* answered once every rank of the parent, in every process, has called */
    Hysim__Reply *r = await_reply(&slot);
    UNLOCK();
    free(ptrs);
    free(sc);
    if (r->error && r->error[0]) {
        print_daemon_error(r->error);
        e = cudaErrorUnknown;
    } else if (r->n_split != n) {
        fprintf(stderr, "hysim: hysimd answered a split of %zu ranks with %zu results\n", n, r->n_split);
        e = cudaErrorUnknown;
    }
    for (size_t i = 0; e == cudaSuccess && i < n; i++)
        out[i] = (hs_split_result){r->split[i]->none, r->split[i]->comm_key, (int)r->split[i]->rank,
                                   (int)r->split[i]->nranks};
    hysim__reply__free_unpacked(r, NULL);
    return e;
}

cudaError_t hs_client_comm_destroy(uint64_t comm_key, int rank, int device)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    if (!valid_device(device))
        return cudaErrorInvalidDevice;
    LOCK();
    pending_op *p = append_locked(device, 0);
    hysim__comm_destroy__init(&p->u.comm_destroy);
    p->u.comm_destroy.comm_key = comm_key;
    p->u.comm_destroy.rank = (uint32_t)rank;
    p->op.kind_case = HYSIM__OP__KIND_COMM_DESTROY;
    p->op.comm_destroy = &p->u.comm_destroy;
    commit_locked();
    UNLOCK();
    return cudaSuccess;
}

cudaError_t hs_client_collective(uint64_t comm_key, int rank, int device, uint64_t seq, enum hs_coll_kind kind,
                                 uint64_t bytes, int root, uint64_t group, uint32_t algo, uint32_t proto,
                                 cudaStream_t stream, const hs_coll_values *values, int *carried)
{
    if (carried)
        *carried = 0;
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    if (!valid_device(device))
        return cudaErrorInvalidDevice;
    if (CAPTURE_ON()) { /* a capture takes it, or renumbers it after the graph launches' collectives */
        hs_stream_op op = {.kind = HS_SOP_COLLECTIVE,
                           .stream = stream,
                           .u.coll = {comm_key, seq, bytes, group, rank, device, root, kind, algo, proto}};
        if (captured(&op, &e))
            return e;
        seq = op.u.coll.seq;
    }
    int dev;
    uint64_t id;
    LOCK();
    e = resolve_stream_locked(stream, device, &dev, &id);
    if (e == cudaSuccess && dev != device)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess) {
        pending_op *p = append_locked(device, id);
        Hysim__Collective *c = &p->u.collective;
        hysim__collective__init(c);
        c->comm_key = comm_key;
        c->rank = (uint32_t)rank;
        c->seq = seq;
        c->kind = (Hysim__CollKind)kind;
        c->bytes = bytes;
        c->root = root;
        c->group = group;
        c->algo = algo;
        c->proto = proto;
        if (values) {
            c->has_values = 1;
            c->values = (ProtobufCBinaryData){values->len, (uint8_t *)values->bytes};
            c->dtype = (uint32_t)values->dtype;
            c->redop = (uint32_t)values->redop;
        }
        p->op.kind_case = HYSIM__OP__KIND_COLLECTIVE;
        p->op.collective = c;
        commit_locked();
        if (values) {
            if (values->len)
                flush_locked(); /* the bytes are the caller's: sent now */
            if (carried)
                *carried = 1;
        }
    }
    UNLOCK();
    return e;
}

int hs_client_coll_values(uint64_t comm_key, uint64_t seq, uint32_t rank, int peer, void *dst, size_t n)
{
    if (hs_client_start() != cudaSuccess)
        return 0;
    Hysim__Wait w = HYSIM__WAIT__INIT;
    w.cond = HYSIM__WAIT__COND__COLL_VALUES;
    w.comm_key = comm_key;
    w.coll_seq = seq;
    w.coll_rank = rank;
    w.coll_peer = peer >= 0 ? (uint32_t)peer + 1 : 0;
    Hysim__Reply *r = NULL;
    LOCK();
    cudaError_t e = send_wait_locked(&w, &r); /* answered at this host time once every rank's part came */
    UNLOCK();
    int got = e == cudaSuccess && r && r->has_values && r->values.len == n;
    if (got)
        memcpy(dst, r->values.data, n);
    if (r)
        hysim__reply__free_unpacked(r, NULL);
    return got;
}
