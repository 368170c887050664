/*
 * The wire's messages into the daemon's own types and its answers back
 * (session_wire.h). Enumerations carry the same numbers on both sides; the
 * assertions below keep them so.
 */
#include <stdlib.h>

#include "session_wire.h"

_Static_assert((int)HS_GEMM_FP32 == (int)HYSIM__GEMM_DTYPE__GEMM_FP32 &&
                   (int)HS_GEMM_FP16 == (int)HYSIM__GEMM_DTYPE__GEMM_FP16 &&
                   (int)HS_GEMM_BF16 == (int)HYSIM__GEMM_DTYPE__GEMM_BF16 &&
                   (int)HS_GEMM_FP64 == (int)HYSIM__GEMM_DTYPE__GEMM_FP64 &&
                   (int)HS_GEMM_TF32 == (int)HYSIM__GEMM_DTYPE__GEMM_TF32 &&
                   (int)HS_GEMM_FP8 == (int)HYSIM__GEMM_DTYPE__GEMM_FP8,
               "hysim/gemm_dtype.h and hysim.proto's GemmDtype differ");
_Static_assert((int)HS_COLL_ALL_REDUCE == (int)HYSIM__COLL_KIND__ALL_REDUCE &&
                   (int)HS_COLL_ALL_GATHER == (int)HYSIM__COLL_KIND__ALL_GATHER &&
                   (int)HS_COLL_REDUCE_SCATTER == (int)HYSIM__COLL_KIND__REDUCE_SCATTER &&
                   (int)HS_COLL_BROADCAST == (int)HYSIM__COLL_KIND__BROADCAST &&
                   (int)HS_COLL_REDUCE == (int)HYSIM__COLL_KIND__REDUCE &&
                   (int)HS_COLL_SEND == (int)HYSIM__COLL_KIND__SEND &&
                   (int)HS_COLL_RECV == (int)HYSIM__COLL_KIND__RECV &&
                   (int)HS_COLL_ALL_TO_ALL == (int)HYSIM__COLL_KIND__ALL_TO_ALL,
               "hysim/coll_kind.h and hysim.proto's CollKind differ");
_Static_assert((int)HS_COPY_H2D == (int)HYSIM__COPY_KIND__H2D && (int)HS_COPY_D2H == (int)HYSIM__COPY_KIND__D2H &&
                   (int)HS_COPY_D2D == (int)HYSIM__COPY_KIND__D2D && (int)HS_COPY_H2H == (int)HYSIM__COPY_KIND__H2H,
               "copy_time.h and hysim.proto's CopyKind differ");
_Static_assert((int)HS_RNG_XORWOW == (int)HYSIM__RNG_GENERATOR__RNG_XORWOW &&
                   (int)HS_RNG_MRG32K3A == (int)HYSIM__RNG_GENERATOR__RNG_MRG32K3A &&
                   (int)HS_RNG_MTGP32 == (int)HYSIM__RNG_GENERATOR__RNG_MTGP32 &&
                   (int)HS_RNG_MT19937 == (int)HYSIM__RNG_GENERATOR__RNG_MT19937 &&
                   (int)HS_RNG_PHILOX == (int)HYSIM__RNG_GENERATOR__RNG_PHILOX &&
                   (int)HS_RNG_SOBOL32 == (int)HYSIM__RNG_GENERATOR__RNG_SOBOL32 &&
                   (int)HS_RNG_SCRAMBLED_SOBOL32 == (int)HYSIM__RNG_GENERATOR__RNG_SCRAMBLED_SOBOL32 &&
                   (int)HS_RNG_SOBOL64 == (int)HYSIM__RNG_GENERATOR__RNG_SOBOL64 &&
                   (int)HS_RNG_SCRAMBLED_SOBOL64 == (int)HYSIM__RNG_GENERATOR__RNG_SCRAMBLED_SOBOL64,
               "random_time.h and hysim.proto's RngGenerator differ");
_Static_assert((int)HS_RNG_UINT32 == (int)HYSIM__RNG_OUTPUT__RNG_UINT32 &&
                   (int)HS_RNG_UINT64 == (int)HYSIM__RNG_OUTPUT__RNG_UINT64 &&
                   (int)HS_RNG_UNIFORM == (int)HYSIM__RNG_OUTPUT__RNG_UNIFORM &&
                   (int)HS_RNG_UNIFORM_DOUBLE == (int)HYSIM__RNG_OUTPUT__RNG_UNIFORM_DOUBLE &&
                   (int)HS_RNG_NORMAL == (int)HYSIM__RNG_OUTPUT__RNG_NORMAL &&
                   (int)HS_RNG_NORMAL_DOUBLE == (int)HYSIM__RNG_OUTPUT__RNG_NORMAL_DOUBLE &&
                   (int)HS_RNG_POISSON == (int)HYSIM__RNG_OUTPUT__RNG_POISSON,
               "random_time.h and hysim.proto's RngOutput differ");
_Static_assert((int)HS_GROUPED_M == (int)HYSIM__GROUPED_DIM__GROUPED_M &&
                   (int)HS_GROUPED_N == (int)HYSIM__GROUPED_DIM__GROUPED_N &&
                   (int)HS_GROUPED_K == (int)HYSIM__GROUPED_DIM__GROUPED_K,
               "grouped_gemm_model.h and hysim.proto's GroupedDim differ");
_Static_assert((int)HS_WAIT_STREAM_IDLE == (int)HYSIM__WAIT__COND__STREAM_IDLE &&
                   (int)HS_WAIT_EVENT_DONE == (int)HYSIM__WAIT__COND__EVENT_DONE &&
                   (int)HS_WAIT_DEVICE_IDLE == (int)HYSIM__WAIT__COND__DEVICE_IDLE &&
                   (int)HS_WAIT_PROCESS_IDLE == (int)HYSIM__WAIT__COND__PROCESS_IDLE &&
                   (int)HS_WAIT_THREAD_EXIT == (int)HYSIM__WAIT__COND__THREAD_EXIT &&
                   (int)HS_WAIT_UNTIL == (int)HYSIM__WAIT__COND__UNTIL &&
                   (int)HS_WAIT_COLL_VALUES == (int)HYSIM__WAIT__COND__COLL_VALUES,
               "requests.h and hysim.proto's Wait.Cond differ");

static hs_kernel_launch kernel_of(const Hysim__Kernel *k)
{
    hs_kernel_launch l = {.name = k->name,
                          .grid = {k->grid_x, k->grid_y, k->grid_z},
                          .block = {k->block_x, k->block_y, k->block_z},
                          .shared_bytes = k->shared_bytes,
                          .graph_node = k->graph_node};
    if (k->gemm) {
        const Hysim__Gemm *g = k->gemm;
        l.has_gemm = true;
        l.gemm = (hs_gemm_shape){g->m, g->n, g->k, g->batch, (int)g->dtype, g->lda, g->ldb, g->ldc};
    }
    if (k->grouped_gemm) {
        const Hysim__GroupedGemm *g = k->grouped_gemm;
        l.has_grouped = true;
        l.grouped = (hs_grouped_gemm){g->m,         g->n,       g->k,      (enum hs_grouped_dim)g->grouped,
                                      g->sizes,     g->n_sizes, g->tile_m, g->tile_n,
                                      g->cluster_m, g->pingpong};
    }
    if (k->random) {
        const Hysim__RandomGeneration *r = k->random;
        l.has_random = true;
        l.random =
            (hs_rng_generation){(enum hs_rng_generator)r->generator, (enum hs_rng_output)r->output, r->count, r->first};
    }
    return l;
}

static hs_coll_call coll_of(const Hysim__Collective *k)
{
    return (hs_coll_call){.comm_key = k->comm_key,
                          .rank = k->rank,
                          .seq = k->seq,
                          .kind = (enum hs_coll_kind)k->kind,
                          .bytes = k->bytes,
                          .root = k->root,
                          .group = k->group,
                          .algo = k->algo,
                          .proto = k->proto,
                          .has_values = k->has_values,
                          .values = k->values.data,
                          .values_len = k->values.len,
                          .dtype = k->dtype,
                          .redop = k->redop};
}

void hs_wire_op(const Hysim__Op *m, hs_issued_op *op)
{
    *op = (hs_issued_op){.host_ns = m->host_ns, .gpu = m->gpu, .stream = m->stream, .reach_ns = m->reach_ns};
    if (m->kind_case == HYSIM__OP__KIND__NOT_SET || m->kernel == NULL) /* a present oneof's member is set */
        return;
    switch (m->kind_case) {
    case HYSIM__OP__KIND_KERNEL:
        op->kind = HS_ISSUED_KERNEL;
        op->kernel = kernel_of(m->kernel);
        break;
    case HYSIM__OP__KIND_COPY:
        op->kind = HS_ISSUED_COPY;
        op->copy = (hs_copy_call){(enum hs_copy_kind)m->copy->kind,
                                  m->copy->bytes,
                                  m->copy->peer_gpu,
                                  m->copy->from_peer,
                                  m->copy->pageable,
                                  m->copy->rows};
        break;
    case HYSIM__OP__KIND_MEMSET:
        op->kind = HS_ISSUED_MEMSET;
        op->memset.bytes = m->memset->bytes;
        op->memset.rows = m->memset->rows;
        break;
    case HYSIM__OP__KIND_EVENT_RECORD:
        op->kind = HS_ISSUED_EVENT_RECORD;
        op->event = m->event_record->event;
        break;
    case HYSIM__OP__KIND_WAIT_EVENT:
        op->kind = HS_ISSUED_WAIT_EVENT;
        op->event = m->wait_event->event;
        break;
    case HYSIM__OP__KIND_STREAM_CREATE:
        op->kind = HS_ISSUED_STREAM_CREATE;
        op->non_blocking = m->stream_create->non_blocking;
        break;
    case HYSIM__OP__KIND_STREAM_DESTROY: op->kind = HS_ISSUED_STREAM_DESTROY; break;
    case HYSIM__OP__KIND_COMM_INIT:
        op->kind = HS_ISSUED_COMM_INIT;
        op->comm.key = m->comm_init->comm_key;
        op->comm.rank = m->comm_init->rank;
        op->comm.nranks = m->comm_init->nranks;
        break;
    case HYSIM__OP__KIND_COMM_DESTROY:
        op->kind = HS_ISSUED_COMM_DESTROY;
        op->comm.key = m->comm_destroy->comm_key;
        op->comm.rank = m->comm_destroy->rank;
        break;
    case HYSIM__OP__KIND_COLLECTIVE:
        op->kind = HS_ISSUED_COLLECTIVE;
        op->coll = coll_of(m->collective);
        break;
    default: break; /* a kind this daemon does not know: HS_ISSUED_NONE */
    }
}

void hs_wire_split(const Hysim__CommSplit *m, hs_split_request *r, hs_split_rank_call **calls)
{
    *calls = hs_xcalloc(m->n_calls ? m->n_calls : 1, sizeof(**calls));
    for (size_t i = 0; i < m->n_calls; i++)
        (*calls)[i] = (hs_split_rank_call){m->calls[i]->rank, m->calls[i]->color, m->calls[i]->key};
    *r = (hs_split_request){.host_ns = m->host_ns,
                            .parent_key = m->parent_key,
                            .parent_nranks = m->parent_nranks,
                            .gen = m->gen,
                            .calls = *calls,
                            .ncalls = m->n_calls};
}

enum hs_wait_cond hs_wire_wait_cond(Hysim__Wait__Cond c) { return (enum hs_wait_cond)c; }

void hs_session_send(hs_session *s, const Hysim__Reply *r)
{
    char err[256];
    if (s->fd >= 0 && hs_frame_send_reply(s->fd, r, err, sizeof(err)) != HS_FRAME_OK)
        s->io_error = true; /* the peer is gone: EOF handling names it */
}

void hs_session_reply(hs_session *s, const hs_answer *a)
{
    Hysim__Reply r = HYSIM__REPLY__INIT;
    r.now_ns = a->now_ns;
    r.done = a->done;
    r.id = a->id;
    r.error = (char *)a->error;
    size_t nev = a->nevent_times, nsplit = a->nsplit;
    Hysim__EventTime *et = nev ? hs_xcalloc(nev, sizeof(*et)) : NULL; /* most answers carry none */
    Hysim__EventTime **etp = nev ? hs_xcalloc(nev, sizeof(*etp)) : NULL;
    for (size_t i = 0; i < nev; i++) {
        hysim__event_time__init(&et[i]);
        et[i].event = a->event_times[i].event;
        et[i].done = a->event_times[i].done;
        et[i].recorded = a->event_times[i].recorded;
        et[i].time_ps = a->event_times[i].time_ps;
        etp[i] = &et[i];
    }
    r.n_event_times = nev;
    r.event_times = etp;
    Hysim__SplitRank *sr = nsplit ? hs_xcalloc(nsplit, sizeof(*sr)) : NULL;
    Hysim__SplitRank **srp = nsplit ? hs_xcalloc(nsplit, sizeof(*srp)) : NULL;
    for (size_t i = 0; i < nsplit; i++) {
        hysim__split_rank__init(&sr[i]);
        sr[i].none = a->split[i].none;
        sr[i].comm_key = a->split[i].comm_key;
        sr[i].rank = a->split[i].rank;
        sr[i].nranks = a->split[i].nranks;
        srp[i] = &sr[i];
    }
    r.n_split = nsplit;
    r.split = srp;
    r.has_values = a->has_values;
    r.values = (ProtobufCBinaryData){a->values_len, (uint8_t *)a->values};
    hs_session_send(s, &r);
    free(srp);
    free(sr);
    free(etp);
    free(et);
}
