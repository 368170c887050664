// hysim fabric: a lean packet-level (layer-2, no IP/UDP/TCP) model of the GPU
// interconnect, run on ns-3's Simulator, behind include/hysim/fabric.h. This
// file: the C ABI, flows, the event loop and the NVLink / PCIe hops.
//
// Model
//   - Nodes: GPUs and one NVSwitch per server. Each GPU has a full-duplex link
//     to its server's NVSwitch: one egress port each way, nvlink.gbps_per_gpu
//     each direction, nvlink.latency_ns / 2 per hop (GPU->GPU = latency_ns).
//   - A flow is cut into segments of nvlink.segment_bytes (the last shorter).
//     NVLink and PCIe ports serve the flows waiting on them round-robin, one
//     segment per flow per turn, store-and-forward, lossless and unbounded
//     (NVLink has credit-based flow control; no PFC, no ECN there).
//   - A flow completes when its last byte reaches the destination GPU.
//   - Several servers: every GPU also has a PCIe link (pcie.gbps,
//     pcie.latency_ns) to NIC i % nics.per_server of its server, and every NIC
//     a link (nics.gbps, fabric.link_latency_ns) into a RoCEv2 Ethernet
//     fabric (topology.cc: single_switch, leaf_spine, rail_optimized with or
//     without spines; ECMP by a flow hash seeded by run.seed). A flow between
//     servers goes GPU -> PCIe -> NIC -> switches -> NIC -> PCIe -> GPU in
//     segments of fabric.mtu. The Ethernet part (ethernet.cc, dcqcn.cc) has
//     packet FIFOs per port and priority, shared switch buffers with PFC,
//     ECN marking, DCQCN at the sending NIC, and go-back-N loss recovery.
//
// Event links are our own objects scheduled on ns3::Simulator (no NetDevice,
// no ns-3 Packet). Flows are freed when reported complete and no pending
// event or queued packet names them any more (Flow::refs).
//
// Determinism: every event carries a canonical key (class, flow id, number,
// port, kind), and CanonicalScheduler orders equal-time events by it, never by
// insertion order; the numbers in keys (segment, PFC frame, timer) come from
// the simulated history only, random choices (ECN) from streams seeded by
// run.seed, and ECMP from a hash seeded by it over connections numbered in
// the order flows start (topology.cc). Classes at equal time: step-limit < flow start <
// delivery to the destination GPU < everything else. When a step stops at a
// completion at time t, only starts and deliveries at t have run; a flow added
// then with start t still starts before every other event at t, exactly as if
// it had been added up front (the deliveries it now follows touch no port).
#include "fabric_internal.h"
#include "fabric_proxy.h"

#include <ns3/object-factory.h>

#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace hysim_fab;
using ns3::Simulator;

namespace
{

bool g_fabric_live = false;
bool g_resolution_set = false;
// Diagnostic for tests only (HYSIM_FABRIC_TIES=insertion): break equal-time
// ties by insertion order like ns-3's own schedulers, to show that a test
// exercises tie ordering at all.
bool g_insertion_ties = false;
// Diagnostic for tests only (HYSIM_FABRIC_DCQCN_TIMERS=events): DCQCN timers
// as events, as before they were replayed lazily (dcqcn.cc), to show that
// both give the same results.
bool g_dcqcn_timer_events = false;

} // namespace

namespace hysim_fab
{

void
SetErr(char* err, size_t errlen, const char* fmt, ...)
{
    if (err == nullptr || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

void*
FabEvent::operator new(size_t size)
{
    auto& pool = Pool();
    if (size == sizeof(FabEvent) && !pool.empty())
    {
        void* p = pool.back();
        pool.pop_back();
        return p;
    }
    return ::operator new(size);
}

void
FabEvent::operator delete(void* p)
{
    // Blocks are kept for reuse (single-threaded: ns-3 runs on one thread).
    if (p != nullptr)
        Pool().push_back(p);
}

void
FabEvent::ReleasePool()
{
    auto& pool = Pool();
    for (void* p : pool)
        ::operator delete(p);
    pool.clear();
    pool.shrink_to_fit();
}

void
FabEvent::Notify()
{
    fab->cur_k0 = k0;
    fab->cur_k1 = k1;
    fab->cur_k2 = k2;
    fab->Handle(*this);
    if (flow != nullptr)
        fab->Release(flow);
}

} // namespace hysim_fab

void
hs_fabric::Release(Flow* f)
{
    if (--f->refs == 0 && f->done)
        flows.erase(f->id);
}

FabEvent*
hs_fabric::Schedule(uint64_t at_ps, uint64_t cls, Kind kind, Flow* flow, Port* port, uint32_t hop,
                    uint64_t seq)
{
    auto* ev = new FabEvent;
    ev->fab = this;
    ev->kind = kind;
    ev->flow = flow;
    ev->port = port;
    ev->hop = hop;
    ev->seq = seq;
    ev->k0 = cls;
    ev->k1 = flow != nullptr ? flow->id : 0;
    ev->k2 = (seq << 24) | (uint64_t(port != nullptr ? port->id : 0) << 4) | kind;
    if (g_insertion_ties)
    {
        ev->k0 = kClassStart;
        ev->k1 = ev->k2 = 0;
    }
    if (flow != nullptr)
        flow->refs++;
    const uint64_t now = Now();
    Simulator::Schedule(ns3::TimeStep(at_ps - now), ns3::Ptr<ns3::EventImpl>(ev, false));
    return ev;
}

uint64_t
hs_fabric::SerPs(const Port& p, uint32_t bytes) const
{
    const uint64_t ser = static_cast<uint64_t>(std::llround(bytes * p.ps_per_byte));
    return ser == 0 ? 1 : ser;
}

void
hs_fabric::QueueAtRangeHop(Flow* f, uint32_t hop, uint64_t nseg_new)
{
    FlowHop& h = f->hops[hop];
    Port& p = ports[f->path[hop]];
    h.avail += nseg_new;
    p.queued_bytes += nseg_new == 1 ? f->SegBytes(h.next_seq + h.avail - 1) : f->bytes;
    if (p.queued_bytes > p.st.max_queue_bytes)
        p.st.max_queue_bytes = p.queued_bytes;
    if (!h.queued)
    {
        h.queued = true;
        p.rr.push_back(&h);
    }
    RangeTransmit(p);
}

void
hs_fabric::RangeTransmit(Port& p)
{
    if (p.busy || p.rr.empty())
        return;
    FlowHop* fh = p.rr.front();
    p.rr.pop_front();
    const uint64_t seq = fh->next_seq++;
    fh->avail--;
    if (fh->avail > 0)
        p.rr.push_back(fh); // round-robin: one segment per flow per turn
    else
        fh->queued = false;

    Flow* f = fh->flow;
    const uint32_t bytes = f->SegBytes(seq);
    const uint64_t ser = SerPs(p, bytes);
    const uint64_t now = Now();
    p.busy = true;
    p.queued_bytes -= bytes;
    p.st.bytes += bytes;
    p.st.packets++;
    stats.packet_hops++;
    Schedule(now + ser, kClassNet, kTxDone, f, &p, fh->hop, seq);
    const bool last_hop = fh->hop + 1 == f->path.size();
    Schedule(now + ser + p.latency_ps, last_hop ? kClassDeliver : kClassNet, kArrive, f, &p,
             fh->hop, seq);
}

void
hs_fabric::RangeArrive(FabEvent& ev)
{
    Flow* f = ev.flow;
    const uint32_t next = ev.hop + 1;
    if (next < f->path.size())
    {
        if (f->net && next == f->eth_first)
        {
            // The segment is in the source NIC's memory: its queue pair may send it.
            f->nic_avail++;
            NicHasData(f);
            return;
        }
        // Store-and-forward: the whole segment is here; queue it at the next port.
        QueueAtRangeHop(f, next, 1);
        return;
    }
    stats.bytes_delivered += f->SegBytes(ev.seq);
    if (ev.seq + 1 == f->nseg)
    {
        // Segments of a flow reach the GPU in order, so this was its last byte.
        pending.flow_id = f->id;
        pending.finish_ps = Now();
        have_done = true;
        f->done = true; // freed once nothing names it (FabEvent::Notify)
        Simulator::Stop();
    }
}

void
hs_fabric::Handle(FabEvent& ev)
{
    switch (ev.kind)
    {
    case kLimit:
        Simulator::Stop();
        return;
    case kStart: {
        if (ev.flow->net)
            OpenConnection(*ev.flow);
        QueueAtRangeHop(ev.flow, 0, ev.flow->nseg); // every path starts on NVLink or PCIe
        return;
    }
    case kTxDone:
        ev.port->busy = false;
        TryTransmit(*ev.port);
        return;
    case kArrive:
        if (ev.port->kind == kPortRange)
            RangeArrive(ev);
        else
            EthArrive(ev);
        return;
    case kPause:
    case kResume:
        OnPfc(ev);
        return;
    case kWake:
        OnWake(*ev.port);
        return;
    case kAlpha:
    case kDecrease:
    case kIncrease:
        DcqcnTimer(ev.flow, ev.kind, ev.seq);
        return;
    case kDcqcnEnd:
        return; // its only work: releasing the flow (FabEvent::Notify)
    case kRto:
        OnRto(ev.flow);
        return;
    case kSample:
        OnSample();
        return;
    }
}

int
hs_fabric::AddFlow(uint64_t id, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t start_ps,
                   char* err, size_t errlen)
{
    if (src >= ngpus || dst >= ngpus)
    {
        SetErr(err, errlen, "fabric: flow %" PRIu64 ": unknown GPU %u (the fabric has %u GPUs)", id,
               src >= ngpus ? src : dst, ngpus);
        return -1;
    }
    if (src == dst)
    {
        SetErr(err, errlen, "fabric: flow %" PRIu64 ": source and destination are both GPU %u", id,
               src);
        return -1;
    }
    if (bytes == 0)
    {
        SetErr(err, errlen, "fabric: flow %" PRIu64 ": zero bytes", id);
        return -1;
    }
    const uint64_t now = Now();
    if (start_ps < now)
    {
        SetErr(err, errlen,
               "fabric: flow %" PRIu64 ": start %" PRIu64 " ps is in the past (fabric time %" PRIu64
               " ps)",
               id, start_ps, now);
        return -1;
    }
    if (start_ps >= kMaxTimePs)
    {
        SetErr(err, errlen, "fabric: flow %" PRIu64 ": start %" PRIu64 " ps is out of range", id,
               start_ps);
        return -1;
    }
    if (ids.count(id) != 0)
    {
        SetErr(err, errlen, "fabric: flow %" PRIu64 ": duplicate flow id", id);
        return -1;
    }
    auto f = std::make_unique<Flow>();
    f->id = id;
    f->src = src;
    f->dst = dst;
    f->bytes = bytes;
    f->start_ps = start_ps;
    Route(*f);
    f->nseg = (bytes + f->seg - 1) / f->seg;
    if (f->nseg >= kMaxSegments)
    {
        SetErr(err, errlen, "fabric: flow %" PRIu64 ": %" PRIu64 " bytes is too many segments", id,
               bytes);
        return -1;
    }
    f->hops.resize(f->path.size());
    for (uint32_t i = 0; i < f->hops.size(); i++)
    {
        f->hops[i].flow = f.get();
        f->hops[i].hop = i;
    }
    if (f->net)
        DcqcnInit(f.get());
    Flow* raw = f.get();
    ids.insert(id);
    flows.emplace(id, std::move(f));
    stats.flows_added++;
    if (sample_interval_ps != 0 && !sample_pending)
        ResumeSampling();
    // The flow's ports learn about it only when it starts (kClassStart at start_ps).
    Schedule(start_ps, kClassStart, kStart, raw, nullptr, 0, 0);
    return 0;
}

int
hs_fabric::NextCompletion(uint64_t limit_ps, hs_flow_done* done)
{
    if (limit_ps > kMaxTimePs)
        limit_ps = kMaxTimePs;
    if (limit_ps <= Now())
        return 0; // nothing runs before a limit that is not in the future
    // The limit event has the lowest key at its time: it stops the run before
    // anything else at limit_ps happens.
    auto* ev = new FabEvent;
    ev->fab = this;
    ev->kind = kLimit;
    ev->k0 = kClassLimit;
    ns3::EventId limit_id =
        Simulator::Schedule(ns3::TimeStep(limit_ps - Now()), ns3::Ptr<ns3::EventImpl>(ev, false));
    have_done = false;
    Simulator::Run();
    stats.events = Simulator::GetEventCount() - events_base;
    if (have_done)
    {
        Simulator::Remove(limit_id);
        have_done = false;
        if (done != nullptr)
            *done = pending;
        stats.flows_done++;
        return 1;
    }
    return 0;
}

void
hs_fabric::LinkStats(size_t i, hs_fabric_link_stats* out) const
{
    const Port& p = ports[i];
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", port_names[i].c_str());
    out->gbps = p.gbps;
    out->bytes = p.st.bytes;
    out->packets = p.st.packets;
    out->pfc_pauses = p.st.pfc_pauses;
    out->pfc_paused_ps = p.st.pfc_paused_ps + (p.paused ? Now() - p.paused_since : 0);
    out->ecn_marks = p.st.ecn_marks;
    out->drops = p.st.drops;
    out->retransmissions = p.st.retransmissions;
    out->cnps = p.st.cnps;
    out->max_queue_bytes = p.st.max_queue_bytes;
}

void
hs_fabric::EmitSample(uint64_t t_ps)
{
    sample_buf.resize(ports.size());
    for (size_t i = 0; i < ports.size(); i++)
    {
        const Port& p = ports[i];
        hs_fabric_link_sample& s = sample_buf[i];
        s.bytes = p.st.bytes;
        s.queue_bytes = p.kind == kPortNic ? 0 : p.queued_bytes;
        s.pfc_paused_ps = p.st.pfc_paused_ps + (p.paused ? t_ps - p.paused_since : 0);
    }
    sample_fn(sample_ctx, t_ps, sample_buf.data(), sample_buf.size());
}

// A sample event runs first at its time (class kClassLimit, after a step's
// limit) and only reads counters, so no other event moves.
void
hs_fabric::OnSample()
{
    const uint64_t now = Now();
    EmitSample(now);
    next_sample_ps = now + sample_interval_ps;
    sample_pending = !flows.empty(); // idle: stop, so that the model can run dry
    if (sample_pending)
        Schedule(next_sample_ps, kClassLimit, kSample, nullptr, nullptr, 0, 0);
}

void
hs_fabric::ResumeSampling()
{
    const uint64_t now = Now();
    // Nothing has moved since the model went idle: the counters stand as they were.
    for (; next_sample_ps <= now; next_sample_ps += sample_interval_ps)
        EmitSample(next_sample_ps);
    sample_pending = true;
    Schedule(next_sample_ps, kClassLimit, kSample, nullptr, nullptr, 0, 0);
}

extern "C"
{

    int
    hs_fabric_sample_links(hs_fabric* f, uint64_t interval_ps, hs_fabric_sample_fn fn, void* ctx,
                           char* err, size_t errlen)
    {
        if (f == nullptr || fn == nullptr || interval_ps == 0 || interval_ps >= kMaxTimePs)
        {
            SetErr(err, errlen,
                   "fabric: link sampling needs a fabric, a callback and an interval > 0");
            return -1;
        }
        if (f->remote != nullptr)
            return ProxySampleLinks(f, interval_ps, fn, ctx, err, errlen);
        if (f->stats.flows_added != 0)
        {
            SetErr(err, errlen,
                   "fabric: link sampling must be enabled before the first flow is added");
            return -1;
        }
        f->sample_interval_ps = interval_ps;
        f->next_sample_ps = interval_ps;
        f->sample_fn = fn;
        f->sample_ctx = ctx;
        return 0;
    }

    hs_fabric*
    hs_fabric_create(const hs_scenario* sc, char* err, size_t errlen)
    {
        if (sc == nullptr)
        {
            SetErr(err, errlen, "fabric: no scenario");
            return nullptr;
        }
        if (ProxyWanted())
            return ProxyCreate(sc, nullptr, err, errlen);
        if (g_fabric_live)
        {
            SetErr(err, errlen,
                   "fabric: an hs_fabric already exists in this process (ns-3 is a "
                   "process-wide singleton)");
            return nullptr;
        }
        auto f = std::make_unique<hs_fabric>();
        if (!f->Build(sc, err, errlen))
            return nullptr;
        if (!g_resolution_set)
        {
            // Before any Time is used: at the default ns resolution a 1500 B packet
            // at 3.6 Tb/s serialises 10 % too fast.
            ns3::Time::SetResolution(ns3::Time::PS);
            g_resolution_set = true;
        }
        ns3::ObjectFactory factory;
        factory.SetTypeId(hysim::CanonicalScheduler::GetTypeId());
        Simulator::SetScheduler(factory);
        const char* ties = getenv("HYSIM_FABRIC_TIES");
        g_insertion_ties = ties != nullptr && strcmp(ties, "insertion") == 0;
        const char* timers = getenv("HYSIM_FABRIC_DCQCN_TIMERS");
        g_dcqcn_timer_events = timers != nullptr && strcmp(timers, "events") == 0;
        f->lazy_dcqcn = !g_insertion_ties && !g_dcqcn_timer_events;
        f->events_base = Simulator::GetEventCount();
        g_fabric_live = true;
        return f.release();
    }

    int
    hs_fabric_add_flow(hs_fabric* f, uint64_t flow_id, uint32_t src_gpu, uint32_t dst_gpu,
                       uint64_t bytes, uint64_t start_ps, char* err, size_t errlen)
    {
        if (f == nullptr)
        {
            SetErr(err, errlen, "fabric: no fabric");
            return -1;
        }
        if (f->remote != nullptr)
            return ProxyAddFlow(f, flow_id, src_gpu, dst_gpu, bytes, start_ps, err, errlen);
        return f->AddFlow(flow_id, src_gpu, dst_gpu, bytes, start_ps, err, errlen);
    }

    int
    hs_fabric_next_completion(hs_fabric* f, uint64_t limit_ps, hs_flow_done* done)
    {
        if (f == nullptr)
            return 0;
        if (f->remote != nullptr)
            return ProxyNextCompletion(f, limit_ps, done);
        return f->NextCompletion(limit_ps, done);
    }

    uint64_t
    hs_fabric_now_ps(const hs_fabric* f)
    {
        if (f != nullptr && f->remote != nullptr)
            return ProxyNow(f);
        return hs_fabric::Now();
    }

    uint64_t
    hs_fabric_flows_in_flight(const hs_fabric* f)
    {
        if (f != nullptr && f->remote != nullptr)
        {
            hs_fabric_stats st;
            ProxyStats(f, &st);
            return st.flows_added - st.flows_done;
        }
        return f == nullptr ? 0 : f->stats.flows_added - f->stats.flows_done;
    }

    void
    hs_fabric_get_stats(const hs_fabric* f, hs_fabric_stats* out)
    {
        if (out == nullptr)
            return;
        if (f == nullptr)
        {
            memset(out, 0, sizeof *out);
            return;
        }
        if (f->remote != nullptr)
            return ProxyStats(f, out);
        *out = f->stats;
    }

    void
    hs_fabric_destroy(hs_fabric* f)
    {
        if (f == nullptr)
            return;
        if (f->remote != nullptr)
            return ProxyDestroy(f);
        // Pending events refer to the model: drop them (Destroy releases them
        // without running them) before the model goes.
        Simulator::Destroy();
        delete f;
        FabEvent::ReleasePool();
        g_fabric_live = false;
    }

    size_t
    hs_fabric_link_count(const hs_fabric* f)
    {
        if (f != nullptr && f->remote != nullptr)
            return ProxyLinkCount(f);
        return f == nullptr ? 0 : f->ports.size();
    }

    int
    hs_fabric_get_link_stats(const hs_fabric* f, size_t i, hs_fabric_link_stats* out)
    {
        if (f != nullptr && out != nullptr && f->remote != nullptr)
            return ProxyLinkStats(f, i, out);
        if (f == nullptr || out == nullptr || i >= f->ports.size())
            return -1;
        f->LinkStats(i, out);
        return 0;
    }

} // extern "C"
