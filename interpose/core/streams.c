/*
 * Streams: creation, flags and priorities, per-thread default streams, and
 * stream synchronisation and queries.
 */
#include "client_internal.h"

void free_ptds(void *p) { free(p); }

static uint64_t ptds_locked(int dev)
{
    if (!t_ptds) {
        t_ptds = xcalloc((size_t)g_info.device_count, sizeof *t_ptds);
        pthread_setspecific(g_ptds_key, t_ptds);
    }
    if (!t_ptds[dev]) {
        t_ptds[dev] = g_next_stream++;
        pending_op *p = append_locked(dev, t_ptds[dev]);
        hysim__stream_create__init(&p->u.stream_create); /* blocking: syncs with the legacy stream */
        p->op.kind_case = HYSIM__OP__KIND_STREAM_CREATE;
        p->op.stream_create = &p->u.stream_create;
        commit_locked();
    }
    return t_ptds[dev];
}

/* Resolves a stream handle; NULL / legacy / per-thread mean those of device dflt. */
cudaError_t resolve_stream_locked(cudaStream_t s, int dflt, int *dev, uint64_t *id)
{
    if (s == NULL || s == cudaStreamLegacy) {
        *dev = dflt;
        *id = 0;
    } else if (s == cudaStreamPerThread) {
        *dev = dflt;
        *id = ptds_locked(dflt);
    } else if (hs_ptrmap_get(&g_streams, (uintptr_t)s)) {
        const hs_stream *st = (const hs_stream *)s;
        *dev = st->dev;
        *id = st->id;
    } else {
        return cudaErrorInvalidResourceHandle;
    }
    return cudaSuccess;
}

cudaError_t hs_client_stream_create(unsigned int flags, int priority, cudaStream_t *out)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    hs_stream *s = xcalloc(1, sizeof *s);
    LOCK();
    s->id = g_next_stream++;
    s->dev = t_device;
    s->flags = flags;
    s->priority = priority;
    hs_ptrmap_put(&g_streams, (uintptr_t)s, 1);
    pending_op *p = append_locked(s->dev, s->id);
    hysim__stream_create__init(&p->u.stream_create);
    p->u.stream_create.non_blocking = (flags & cudaStreamNonBlocking) != 0;
    p->u.stream_create.priority = priority;
    p->op.kind_case = HYSIM__OP__KIND_STREAM_CREATE;
    p->op.stream_create = &p->u.stream_create;
    commit_locked();
    UNLOCK();
    *out = (cudaStream_t)s;
    return cudaSuccess;
}

cudaError_t hs_client_stream_destroy(cudaStream_t stream)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    LOCK();
    hs_stream *s = hs_ptrmap_del(&g_streams, (uintptr_t)stream) ? (hs_stream *)stream : NULL;
    if (s) {
        pending_op *p = append_locked(s->dev, s->id);
        hysim__stream_destroy__init(&p->u.stream_destroy);
        p->op.kind_case = HYSIM__OP__KIND_STREAM_DESTROY;
        p->op.stream_destroy = &p->u.stream_destroy;
        commit_locked();
    }
    UNLOCK();
    free(s);
    return s ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

/* A synchronize that found its work done costs its call (api_cost.h); one that blocked paid the wake-up. */
void charge_sync(cudaError_t e)
{
    if (e == cudaSuccess && !t_wait_blocked)
        hs_client_charge_call(HS_CALL_SYNC);
}

cudaError_t hs_client_stream_synchronize(cudaStream_t stream)
{
    cudaError_t e = hs_client_start();
    if (e == cudaSuccess && CAPTURE_ON())
        e = capture_check(HS_CHECK_STREAM_SYNC, stream);
    if (e != cudaSuccess)
        return e;
    int dev;
    uint64_t id;
    LOCK();
    e = resolve_stream_locked(stream, t_device, &dev, &id);
    if (e == cudaSuccess)
        e = wait_locked(HYSIM__WAIT__COND__STREAM_IDLE, dev, id, 0, 0, NULL, 0, NULL);
    UNLOCK();
    charge_sync(e);
    return e;
}

cudaError_t hs_client_stream_query(cudaStream_t stream)
{
    cudaError_t e = hs_client_start();
    if (e == cudaSuccess && CAPTURE_ON())
        e = capture_check(HS_CHECK_STREAM_SYNC, stream);
    if (e != cudaSuccess)
        return e;
    int dev;
    uint64_t id;
    LOCK();
    e = resolve_stream_locked(stream, t_device, &dev, &id);
    if (e == cudaSuccess)
        e = query_locked(HYSIM__WAIT__COND__STREAM_IDLE, dev, id, 0);
    UNLOCK();
    return e;
}

/* A stream's process-wide id: its wire id x 1024 + its device (the legacy streams' wire id is 0 on every device). */
cudaError_t hs_client_stream_id(cudaStream_t stream, unsigned long long *out)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    int dev;
    uint64_t id;
    LOCK();
    e = resolve_stream_locked(stream, t_device, &dev, &id);
    UNLOCK();
    if (e == cudaSuccess)
        *out = (unsigned long long)id * 1024 + (unsigned long long)dev;
    return e;
}

cudaError_t hs_client_stream_info(cudaStream_t stream, int *dev, unsigned *flags, int *priority)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    LOCK();
    if (stream == NULL || stream == cudaStreamLegacy || stream == cudaStreamPerThread) {
        *dev = t_device;
        *flags = cudaStreamDefault;
        *priority = 0;
    } else if (hs_ptrmap_get(&g_streams, (uintptr_t)stream)) {
        const hs_stream *s = (const hs_stream *)stream;
        *dev = s->dev;
        *flags = s->flags;
        *priority = s->priority;
    } else {
        e = cudaErrorInvalidResourceHandle;
    }
    UNLOCK();
    return e;
}

hs_event *event_locked(cudaEvent_t ev) { return hs_ptrmap_get(&g_events, (uintptr_t)ev) ? (hs_event *)ev : NULL; }

cudaError_t hs_client_stream_wait_event(cudaStream_t stream, cudaEvent_t event)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    hs_client_charge_call(HS_CALL_STREAM_WAIT_EVENT);
    if (CAPTURE_ON()) {
        hs_stream_op op = {.kind = HS_SOP_WAIT_EVENT, .stream = stream, .u.event = event};
        if (captured(&op, &e))
            return e;
    }
    int dev;
    uint64_t id;
    LOCK();
    hs_event *ev = event_locked(event);
    e = ev ? resolve_stream_locked(stream, t_device, &dev, &id) : cudaErrorInvalidResourceHandle;
    if (e == cudaSuccess) {
        pending_op *p = append_locked(dev, id);
        hysim__stream_wait_event__init(&p->u.wait_event);
        p->u.wait_event.event = ev->id;
        p->op.kind_case = HYSIM__OP__KIND_WAIT_EVENT;
        p->op.wait_event = &p->u.wait_event;
        commit_locked();
    }
    UNLOCK();
    return e;
}
