/*
 * Events: creation, records, waits, synchronisation, queries and elapsed time.
 */
#include "client_internal.h"

cudaError_t hs_client_event_create(unsigned int flags, cudaEvent_t *out)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    hs_event *ev = xcalloc(1, sizeof *ev);
    ev->flags = flags;
    LOCK();
    ev->id = g_next_event++;
    ev->dev = t_device;
    hs_ptrmap_put(&g_events, (uintptr_t)ev, 1);
    UNLOCK();
    *out = (cudaEvent_t)ev;
    return cudaSuccess;
}

cudaError_t hs_client_event_destroy(cudaEvent_t event)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    LOCK();
    uintptr_t had = hs_ptrmap_del(&g_events, (uintptr_t)event);
    UNLOCK();
    if (!had)
        return cudaErrorInvalidResourceHandle;
    free(event);
    return cudaSuccess;
}

cudaError_t hs_client_event_record(cudaEvent_t event, cudaStream_t stream)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    hs_client_charge_call(HS_CALL_EVENT_RECORD);
    if (CAPTURE_ON()) {
        hs_stream_op op = {.kind = HS_SOP_EVENT_RECORD, .stream = stream, .u.event = event};
        if (captured(&op, &e))
            return e;
    }
    int dev;
    uint64_t id;
    LOCK();
    hs_event *ev = event_locked(event);
    e = ev ? resolve_stream_locked(stream, t_device, &dev, &id) : cudaErrorInvalidResourceHandle;
    if (e == cudaSuccess) {
        ev->dev = dev;
        ev->recorded = 1;
        pending_op *p = append_locked(dev, id);
        hysim__event_record__init(&p->u.event_record);
        p->u.event_record.event = ev->id;
        p->op.kind_case = HYSIM__OP__KIND_EVENT_RECORD;
        p->op.event_record = &p->u.event_record;
        commit_locked();
    }
    UNLOCK();
    return e;
}

/* An event never recorded is complete, as in CUDA. */
cudaError_t hs_client_event_query(cudaEvent_t event)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    hs_client_charge_call(HS_CALL_EVENT_QUERY);
    LOCK();
    hs_event *ev = event_locked(event);
    if (!ev)
        e = cudaErrorInvalidResourceHandle;
    else if (ev->recorded)
        e = query_locked(HYSIM__WAIT__COND__EVENT_DONE, ev->dev, 0, ev->id);
    UNLOCK();
    return e;
}

cudaError_t hs_client_event_synchronize(cudaEvent_t event)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    LOCK();
    hs_event *ev = event_locked(event);
    t_wait_blocked = 0;
    if (!ev)
        e = cudaErrorInvalidResourceHandle;
    else if (ev->recorded)
        e = wait_locked(HYSIM__WAIT__COND__EVENT_DONE, ev->dev, 0, ev->id, 0, NULL, 0, NULL);
    UNLOCK();
    charge_sync(e);
    return e;
}

/*
 * Milliseconds of simulated time between two completed events: (stop − start)
 * picoseconds / 1e9. As CUDA: an event never recorded or created with
 * cudaEventDisableTiming is an invalid handle here; one not complete yet
 * gives cudaErrorNotReady.
 */
cudaError_t hs_client_event_elapsed(float *ms, cudaEvent_t start, cudaEvent_t stop)
{
    if (!ms)
        return cudaErrorInvalidValue;
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    LOCK();
    hs_event *a = event_locked(start), *b = event_locked(stop);
    if (!a || !b || !a->recorded || !b->recorded || ((a->flags | b->flags) & cudaEventDisableTiming)) {
        UNLOCK();
        return cudaErrorInvalidResourceHandle;
    }
    uint64_t ids[2] = {a->id, b->id};
    Hysim__Reply *r;
    e = wait_locked(HYSIM__WAIT__COND__EVENT_DONE, b->dev, 0, b->id, 1, ids, 2, &r);
    UNLOCK();
    if (e != cudaSuccess)
        return e;
    if (r->n_event_times != 2 || r->event_times[0]->event != ids[0] || r->event_times[1]->event != ids[1]) {
        fprintf(stderr, "hysim: hysimd's answer lacks the times of events %llu and %llu\n", (unsigned long long)ids[0],
                (unsigned long long)ids[1]);
        e = cudaErrorUnknown;
    } else if (!r->event_times[0]->done || !r->event_times[1]->done) {
        e = cudaErrorNotReady;
    } else {
        int64_t d = (int64_t)(r->event_times[1]->time_ps - r->event_times[0]->time_ps);
        *ms = (float)((double)d / 1e9);
    }
    hysim__reply__free_unpacked(r, NULL);
    return e;
}

cudaError_t hs_client_device_synchronize(void)
{
    cudaError_t e = hs_client_start();
    if (e == cudaSuccess && CAPTURE_ON())
        e = capture_check(HS_CHECK_UNSAFE, NULL);
    if (e != cudaSuccess)
        return e;
    LOCK();
    e = wait_locked(HYSIM__WAIT__COND__DEVICE_IDLE, t_device, 0, 0, 0, NULL, 0, NULL);
    UNLOCK();
    charge_sync(e);
    return e;
}

cudaError_t hs_client_device_reset(void)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    LOCK();
    e = wait_locked(HYSIM__WAIT__COND__DEVICE_IDLE, t_device, 0, 0, 0, NULL, 0, NULL);
    if (e == cudaSuccess)
        hs_devmem_reset(t_device);
    UNLOCK();
    return e;
}
