/*
 * Test double of include/hysim/fabric.h: an analytic fabric in which every
 * flow runs alone, taking bytes × 8 / rate + latency. Rate and latency are
 * NVLink's within a server, the NIC rate and the fabric's link latency between
 * servers. It keeps the stepping contract, so the daemon's use of it is
 * checked too.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hysim/fabric.h"

typedef struct fake_flow {
    uint64_t id, finish_ps, bytes;
    int done;
} fake_flow;

struct hs_fabric {
    hs_scenario sc;
    uint64_t now_ps;
    fake_flow *flows;
    size_t n, cap;
    hs_fabric_stats st;
};

hs_fabric *hs_fabric_create(const hs_scenario *sc, char *err, size_t errlen)
{
    if (hs_scenario_gpu_count(sc) <= 0) {
        snprintf(err, errlen, "fake fabric: no GPUs");
        return NULL;
    }
    hs_fabric *f = calloc(1, sizeof(*f));
    f->sc = *sc;
    return f;
}

int hs_fabric_add_flow(hs_fabric *f, uint64_t flow_id, uint32_t src_gpu, uint32_t dst_gpu, uint64_t bytes,
                       uint64_t start_ps, char *err, size_t errlen)
{
    uint32_t ngpu = (uint32_t)hs_scenario_gpu_count(&f->sc);
    if (src_gpu >= ngpu || dst_gpu >= ngpu || src_gpu == dst_gpu) {
        snprintf(err, errlen, "fake fabric: bad GPUs %u → %u", src_gpu, dst_gpu);
        return -1;
    }
    if (bytes == 0) {
        snprintf(err, errlen, "fake fabric: zero bytes");
        return -1;
    }
    if (start_ps < f->now_ps) {
        snprintf(err, errlen, "fake fabric: flow %llu starts at %llu ps, before now (%llu ps)",
                 (unsigned long long)flow_id, (unsigned long long)start_ps, (unsigned long long)f->now_ps);
        return -1;
    }
    for (size_t i = 0; i < f->n; i++)
        if (f->flows[i].id == flow_id) {
            snprintf(err, errlen, "fake fabric: duplicate flow id %llu", (unsigned long long)flow_id);
            return -1;
        }
    int gps = f->sc.servers.gpus_per_server;
    bool same_server = (int)src_gpu / gps == (int)dst_gpu / gps;
    double gbps = same_server ? f->sc.nvlink.gbps_per_gpu : f->sc.nics.gbps;
    uint64_t lat_ns = same_server ? f->sc.nvlink.latency_ns : f->sc.fabric.link_latency_ns;
    uint64_t dur = (uint64_t)llround((double)bytes * 8000.0 / gbps) + lat_ns * 1000;
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 16;
        f->flows = realloc(f->flows, f->cap * sizeof(*f->flows));
    }
    f->flows[f->n++] = (fake_flow){.id = flow_id, .finish_ps = start_ps + dur, .bytes = bytes};
    f->st.flows_added++;
    return 0;
}

int hs_fabric_next_completion(hs_fabric *f, uint64_t limit_ps, hs_flow_done *done)
{
    fake_flow *best = NULL;
    for (size_t i = 0; i < f->n; i++) {
        fake_flow *x = &f->flows[i];
        if (x->done || x->finish_ps >= limit_ps)
            continue;
        if (!best || x->finish_ps < best->finish_ps || (x->finish_ps == best->finish_ps && x->id < best->id))
            best = x;
    }
    if (!best) {
        if (limit_ps > f->now_ps)
            f->now_ps = limit_ps;
        return 0;
    }
    best->done = 1;
    f->now_ps = best->finish_ps;
    f->st.flows_done++;
    f->st.events++;
    f->st.packet_hops += 2; /* GPU → switch → GPU */
    f->st.bytes_delivered += best->bytes;
    done->flow_id = best->id;
    done->finish_ps = best->finish_ps;
    return 1;
}

uint64_t hs_fabric_now_ps(const hs_fabric *f) { return f->now_ps; }

uint64_t hs_fabric_flows_in_flight(const hs_fabric *f) { return f->st.flows_added - f->st.flows_done; }

void hs_fabric_get_stats(const hs_fabric *f, hs_fabric_stats *out) { *out = f->st; }

/* The analytic fabric has no links: no per-link counters, and nothing to sample. */
size_t hs_fabric_link_count(const hs_fabric *f)
{
    (void)f;
    return 0;
}

int hs_fabric_get_link_stats(const hs_fabric *f, size_t i, hs_fabric_link_stats *out)
{
    (void)f, (void)i, (void)out;
    return -1;
}

int hs_fabric_sample_links(hs_fabric *f, uint64_t interval_ps, hs_fabric_sample_fn fn, void *ctx, char *err,
                           size_t errlen)
{
    (void)f, (void)interval_ps, (void)fn, (void)ctx, (void)err, (void)errlen;
    return 0;
}

void hs_fabric_destroy(hs_fabric *f)
{
    if (!f)
        return;
    free(f->flows);
    free(f);
}

/* Worker mode is not modelled: in-process only, no checkpoints, no rollbacks. */
hs_fabric *hs_fabric_create_opts(const hs_scenario *sc, const hs_fabric_options *opts, char *err, size_t errlen)
{
    if (opts && opts->worker) {
        snprintf(err, errlen, "fake fabric: no worker mode");
        return NULL;
    }
    return hs_fabric_create(sc, err, errlen);
}

int hs_fabric_set_safe_time(hs_fabric *f, uint64_t safe_ps, char *err, size_t errlen)
{
    (void)f, (void)safe_ps, (void)err, (void)errlen;
    return 0;
}

int hs_fabric_next_revision(hs_fabric *f, hs_flow_done *withdrawn)
{
    (void)f, (void)withdrawn;
    return 0;
}

uint64_t hs_fabric_generation(const hs_fabric *f)
{
    (void)f;
    return 0;
}

void hs_fabric_get_checkpoint_stats(const hs_fabric *f, hs_fabric_checkpoint_stats *out)
{
    (void)f;
    memset(out, 0, sizeof(*out));
}
