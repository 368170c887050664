// hysim fabric: a lean packet-level (layer-2, no IP/UDP/TCP) model of the GPU
// interconnect, run on ns-3's Simulator, behind include/hysim/fabric.h.
//
// Model
//   - Nodes: GPUs and one NVSwitch per server. Each GPU has a full-duplex link
//     to its server's NVSwitch: one egress port each way, nvlink.gbps_per_gpu
//     each direction, nvlink.latency_ns / 2 per hop (GPU->GPU = latency_ns).
//   - A flow is cut into segments of nvlink.segment_bytes (the last shorter).
//     The source GPU's egress port sends one segment at a time, round-robin
//     over the flows active on that port; the switch is store-and-forward and
//     queues each received segment at the destination port, which also serves
//     its flows round-robin (one segment per flow per turn).
//   - Queues are unbounded: NVLink has credit-based flow control and never
//     drops, so a congested port just backs up (the model does not yet push
//     the back-pressure upstream; the sender's port keeps its line rate).
//   - A flow completes when its last byte reaches the destination GPU.
//   - Several servers (fabric: rail_optimized or single_switch): every GPU also
//     has a PCIe link (pcie.gbps, pcie.latency_ns) to NIC i % nics.per_server
//     of its server, and every NIC a link (nics.gbps, fabric.link_latency_ns)
//     to an Ethernet switch: one per rail (rail_optimized) or one for all
//     (single_switch). A flow between servers goes GPU -> PCIe -> NIC -> switch
//     -> NIC -> PCIe -> GPU in segments of fabric.mtu; on rail_optimized, a flow
//     whose GPUs sit on different rails first crosses NVLink to the source
//     server's GPU on the destination's rail (as NCCL's PXN does). No PFC, ECN,
//     DCQCN or drops yet: Ethernet queues are unbounded as well. leaf_spine and
//     fat_tree are refused.
//
// Event links are our own objects scheduled on ns3::Simulator (no NetDevice,
// no Packet): a port keeps, per flow, only the range of segment numbers it
// holds (segments of one flow stay in order along its single path), so a
// segment is never materialised.
//
// Determinism: every event carries a canonical key (class, flow id, segment
// number, port, kind), and CanonicalScheduler orders equal-time events by it,
// never by insertion order. Classes at equal time: step-limit < flow start <
// delivery to the destination GPU < port events (transmission ends, switch
// arrivals). When a step stops at a completion at time t, only starts and
// deliveries at t have run, no port event; a flow added then with start t
// still starts before every port event at t, exactly as if it had been added
// up front (the deliveries it now follows touch no port).
#include "hysim/fabric.h"

#include "canonical_scheduler.h"

#include <ns3/nstime.h>
#include <ns3/object-factory.h>
#include <ns3/simulator.h>

#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

struct hs_fabric;

namespace {

using ns3::Simulator;

constexpr uint64_t kMaxTimePs = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
constexpr uint64_t kMaxSegments = uint64_t(1) << 40; // segment number field of the key
constexpr uint32_t kMaxPorts = uint32_t(1) << 20;    // port field of the key

// Event classes (key k0): order of equal-time events of different kinds.
enum : uint64_t
{
    kClassLimit = 0,   // end of a next_completion step: runs before anything at that time
    kClassStart = 1,   // a flow starts
    kClassDeliver = 2, // a segment reaches its destination GPU
    kClassNet = 3,     // transmissions and switch arrivals
};

enum Kind : uint8_t
{
    kLimit = 0,
    kStart = 1,
    kTxDone = 2,
    kArrive = 3,
};

void
SetErr(char* err, size_t errlen, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

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

const char*
TopologyName(int t)
{
    switch (t)
    {
    case HS_TOPOLOGY_SINGLE_SWITCH:
        return "single_switch";
    case HS_TOPOLOGY_LEAF_SPINE:
        return "leaf_spine";
    case HS_TOPOLOGY_FAT_TREE:
        return "fat_tree";
    case HS_TOPOLOGY_RAIL_OPTIMIZED:
        return "rail_optimized";
    }
    return "unknown";
}

struct Flow;

// A flow's state at one hop of its path: the segments that have reached the
// hop's node and wait for (or are on) its egress port are [next_seq, next_seq + avail).
struct FlowHop
{
    Flow* flow = nullptr;
    uint32_t hop = 0;
    bool queued = false; // in its port's round-robin list
    uint64_t next_seq = 0;
    uint64_t avail = 0;
};

struct Flow
{
    uint64_t id = 0;
    uint32_t src = 0, dst = 0;
    uint64_t bytes = 0;
    uint64_t start_ps = 0;
    uint32_t seg = 0;  // segment size
    uint64_t nseg = 0; // number of segments
    std::vector<uint32_t> path; // egress ports, source first
    std::vector<FlowHop> hops;  // one per path entry

    uint32_t SegBytes(uint64_t seq) const
    {
        return seq + 1 < nseg ? seg : static_cast<uint32_t>(bytes - uint64_t(seg) * (nseg - 1));
    }
};

// The sending end of one direction of a link.
struct Port
{
    uint32_t id = 0;
    double ps_per_byte = 0; // serialisation time
    uint64_t latency_ps = 0;
    bool busy = false;
    std::deque<FlowHop*> rr; // flows with segments waiting here, round-robin
};

// Our events: pooled, carrying the canonical key.
class FabEvent final : public hysim::CanonicalEvent
{
  public:
    hs_fabric* fab = nullptr;
    Kind kind = kLimit;
    Port* port = nullptr;
    Flow* flow = nullptr;
    uint32_t hop = 0;
    uint64_t seq = 0;

    void Notify() override;

    static void* operator new(size_t size);
    static void operator delete(void* p);
    static void ReleasePool(); // frees the recycled blocks (no event may be live)

  private:
    static std::vector<void*>& Pool()
    {
        static auto* pool = new std::vector<void*>; // never destroyed: usable at exit
        return *pool;
    }
};

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

} // namespace

struct hs_fabric
{
  public:
    bool Build(const hs_scenario* sc, char* err, size_t errlen);
    int AddFlow(uint64_t id, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t start_ps,
                char* err, size_t errlen);
    int NextCompletion(uint64_t limit_ps, hs_flow_done* done);
    static uint64_t Now() { return static_cast<uint64_t>(Simulator::Now().GetTimeStep()); }

    void Handle(FabEvent& ev);

    uint32_t ngpus = 0;
    uint32_t gpus_per_server = 0;
    std::vector<Port> ports;
    std::vector<uint32_t> gpu_up;   // GPU g -> its NVSwitch
    std::vector<uint32_t> gpu_down; // NVSwitch -> GPU g
    uint32_t nvlink_seg = 0;
    // Multi-server only (empty otherwise):
    uint32_t nics_per_server = 0;
    int topology = HS_TOPOLOGY_SINGLE_SWITCH;
    uint32_t mtu = 0;
    std::vector<uint32_t> pcie_up;   // GPU g -> its NIC
    std::vector<uint32_t> pcie_down; // NIC -> GPU g
    std::vector<uint32_t> eth_up;    // NIC n -> its Ethernet switch
    std::vector<uint32_t> eth_down;  // Ethernet switch -> NIC n

    uint32_t Server(uint32_t g) const { return g / gpus_per_server; }
    uint32_t Rail(uint32_t g) const { return (g % gpus_per_server) % nics_per_server; }
    uint32_t Nic(uint32_t server, uint32_t rail) const { return server * nics_per_server + rail; }
    void Route(uint32_t src, uint32_t dst, std::vector<uint32_t>& path, uint32_t& seg) const;

    std::unordered_map<uint64_t, std::unique_ptr<Flow>> flows; // added, not yet complete
    std::unordered_set<uint64_t> ids;                          // every id ever added

    bool have_done = false;
    hs_flow_done pending{};
    uint64_t events_base = 0;
    hs_fabric_stats stats{};

  private:
    uint32_t AddPort(double gbps, uint64_t latency_ps);
    void Schedule(uint64_t at_ps, uint64_t cls, Kind kind, Flow* flow, Port* port, uint32_t hop,
                  uint64_t seq);
    void TryTransmit(Port& p);
};

namespace {

void
FabEvent::Notify()
{
    fab->Handle(*this);
}

bool g_fabric_live = false;
bool g_resolution_set = false;
// Diagnostic for tests only (HYSIM_FABRIC_TIES=insertion): break equal-time
// ties by insertion order like ns-3's own schedulers, to show that a test
// exercises tie ordering at all.
bool g_insertion_ties = false;

} // namespace

uint32_t
hs_fabric::AddPort(double gbps, uint64_t latency_ps)
{
    Port p;
    p.id = static_cast<uint32_t>(ports.size());
    p.ps_per_byte = 8.0 * 1e12 / (gbps * 1e9);
    p.latency_ps = latency_ps;
    ports.push_back(p);
    return p.id;
}

bool
hs_fabric::Build(const hs_scenario* sc, char* err, size_t errlen)
{
    if (sc->servers.count < 1 || sc->servers.gpus_per_server < 1)
    {
        SetErr(err, errlen, "fabric: need at least one server with at least one GPU (got %d × %d)",
               sc->servers.count, sc->servers.gpus_per_server);
        return false;
    }
    if (!(sc->nvlink.gbps_per_gpu > 0) || !std::isfinite(sc->nvlink.gbps_per_gpu))
    {
        SetErr(err, errlen, "fabric: nvlink.gbps_per_gpu must be > 0 (got %g)",
               sc->nvlink.gbps_per_gpu);
        return false;
    }
    if (sc->nvlink.segment_bytes == 0)
    {
        SetErr(err, errlen, "fabric: nvlink.segment_bytes must be > 0");
        return false;
    }
    const bool multi = sc->servers.count > 1;
    if (multi)
    {
        if (!sc->fabric.present)
        {
            SetErr(err, errlen,
                   "fabric: %d servers but the scenario has no fabric: section (which network "
                   "joins them?)",
                   sc->servers.count);
            return false;
        }
        if (sc->fabric.topology != HS_TOPOLOGY_RAIL_OPTIMIZED &&
            sc->fabric.topology != HS_TOPOLOGY_SINGLE_SWITCH)
        {
            SetErr(err, errlen, "fabric topology %s across %d servers is not supported yet",
                   TopologyName(sc->fabric.topology), sc->servers.count);
            return false;
        }
        if (sc->fabric.topology == HS_TOPOLOGY_RAIL_OPTIMIZED && sc->fabric.spines > 0)
        {
            SetErr(err, errlen,
                   "fabric topology rail_optimized with %d spines across %d servers is not "
                   "supported yet (rails without spines are)",
                   sc->fabric.spines, sc->servers.count);
            return false;
        }
        if (sc->nics.per_server < 1 || !(sc->nics.gbps > 0) || !std::isfinite(sc->nics.gbps))
        {
            SetErr(err, errlen, "fabric: %d servers need NICs (nics.per_server %d, %g Gb/s)",
                   sc->servers.count, sc->nics.per_server, sc->nics.gbps);
            return false;
        }
        if (!(sc->pcie.gbps > 0) || !std::isfinite(sc->pcie.gbps))
        {
            SetErr(err, errlen, "fabric: pcie.gbps must be > 0 (got %g)", sc->pcie.gbps);
            return false;
        }
        if (sc->fabric.mtu == 0)
        {
            SetErr(err, errlen, "fabric: fabric.mtu must be > 0");
            return false;
        }
    }
    const uint64_t n = uint64_t(sc->servers.count) * uint64_t(sc->servers.gpus_per_server);
    const uint64_t nnics = multi ? uint64_t(sc->servers.count) * uint64_t(sc->nics.per_server) : 0;
    const uint64_t nports = 2 * n + (multi ? 2 * n + 2 * nnics : 0);
    if (nports >= kMaxPorts)
    {
        SetErr(err, errlen, "fabric: too many GPUs (%" PRIu64 ")", n);
        return false;
    }
    ngpus = static_cast<uint32_t>(n);
    gpus_per_server = static_cast<uint32_t>(sc->servers.gpus_per_server);
    nvlink_seg = sc->nvlink.segment_bytes;
    // Half the GPU->GPU latency on each of the two hops (latency_ns * 1000 ps is even).
    const uint64_t hop_ps = sc->nvlink.latency_ns * 1000 / 2;
    ports.reserve(nports);
    for (uint32_t g = 0; g < ngpus; g++)
    {
        gpu_up.push_back(AddPort(sc->nvlink.gbps_per_gpu, hop_ps));
        gpu_down.push_back(AddPort(sc->nvlink.gbps_per_gpu, hop_ps));
    }
    if (multi)
    {
        // GPU <-> NIC over PCIe (GPU i of a server uses NIC i % per_server, rail-aligned),
        // NIC <-> Ethernet switch (one per rail, or one for all). Ethernet queues are
        // unbounded too for now: no PFC, ECN or drops yet.
        nics_per_server = static_cast<uint32_t>(sc->nics.per_server);
        topology = sc->fabric.topology;
        mtu = sc->fabric.mtu;
        for (uint32_t g = 0; g < ngpus; g++)
        {
            pcie_up.push_back(AddPort(sc->pcie.gbps, sc->pcie.latency_ns * 1000));
            pcie_down.push_back(AddPort(sc->pcie.gbps, sc->pcie.latency_ns * 1000));
        }
        for (uint64_t i = 0; i < nnics; i++)
        {
            eth_up.push_back(AddPort(sc->nics.gbps, sc->fabric.link_latency_ns * 1000));
            eth_down.push_back(AddPort(sc->nics.gbps, sc->fabric.link_latency_ns * 1000));
        }
    }
    return true;
}

void
hs_fabric::Route(uint32_t src, uint32_t dst, std::vector<uint32_t>& path, uint32_t& seg) const
{
    if (Server(src) == Server(dst))
    {
        path = {gpu_up[src], gpu_down[dst]}; // GPU -> NVSwitch -> GPU
        seg = nvlink_seg;
        return;
    }
    // Across servers: segments of one MTU on every hop of the path.
    seg = mtu;
    const uint32_t rail = Rail(dst);
    uint32_t via = src; // the GPU whose NIC sends
    path.clear();
    if (topology == HS_TOPOLOGY_RAIL_OPTIMIZED && Rail(src) != rail)
    {
        // No switch joins two rails: like NCCL's PXN, move the data over NVLink
        // to the source server's GPU on the destination's rail first.
        via = Server(src) * gpus_per_server + rail;
        path.push_back(gpu_up[src]);
        path.push_back(gpu_down[via]);
    }
    const uint32_t nic_src = Nic(Server(src), Rail(via));
    const uint32_t nic_dst = Nic(Server(dst), rail);
    path.push_back(pcie_up[via]);
    path.push_back(eth_up[nic_src]);
    path.push_back(eth_down[nic_dst]);
    path.push_back(pcie_down[dst]);
}

void
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
    const uint64_t now = Now();
    Simulator::Schedule(ns3::TimeStep(at_ps - now), ns3::Ptr<ns3::EventImpl>(ev, false));
}

void
hs_fabric::TryTransmit(Port& p)
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
    uint64_t ser = static_cast<uint64_t>(std::llround(bytes * p.ps_per_byte));
    if (ser == 0)
        ser = 1;
    const uint64_t now = Now();
    p.busy = true;
    stats.packet_hops++;
    Schedule(now + ser, kClassNet, kTxDone, f, &p, fh->hop, seq);
    const bool last_hop = fh->hop + 1 == f->path.size();
    Schedule(now + ser + p.latency_ps, last_hop ? kClassDeliver : kClassNet, kArrive, f, &p,
             fh->hop, seq);
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
        Flow* f = ev.flow;
        FlowHop& h0 = f->hops[0];
        h0.avail = f->nseg;
        h0.queued = true;
        Port& p = ports[f->path[0]];
        p.rr.push_back(&h0);
        TryTransmit(p);
        return;
    }
    case kTxDone:
        ev.port->busy = false;
        TryTransmit(*ev.port);
        return;
    case kArrive: {
        Flow* f = ev.flow;
        const uint32_t next = ev.hop + 1;
        if (next < f->path.size())
        {
            // Store-and-forward: the whole segment is here; queue it at the next port.
            FlowHop& h = f->hops[next];
            h.avail++;
            Port& p = ports[f->path[next]];
            if (!h.queued)
            {
                h.queued = true;
                p.rr.push_back(&h);
            }
            TryTransmit(p);
            return;
        }
        stats.bytes_delivered += f->SegBytes(ev.seq);
        if (ev.seq + 1 == f->nseg)
        {
            // Segments of a flow arrive in order, so this was its last byte.
            pending.flow_id = f->id;
            pending.finish_ps = Now();
            have_done = true;
            flows.erase(f->id); // no pending event refers to it any more
            Simulator::Stop();
        }
        return;
    }
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
    std::vector<uint32_t> path;
    uint32_t seg = 0;
    Route(src, dst, path, seg);
    const uint64_t nseg = (bytes + seg - 1) / seg;
    if (nseg >= kMaxSegments)
    {
        SetErr(err, errlen, "fabric: flow %" PRIu64 ": %" PRIu64 " bytes is too many segments", id,
               bytes);
        return -1;
    }

    auto f = std::make_unique<Flow>();
    f->id = id;
    f->src = src;
    f->dst = dst;
    f->bytes = bytes;
    f->start_ps = start_ps;
    f->seg = seg;
    f->nseg = nseg;
    f->path = std::move(path);
    f->hops.resize(f->path.size());
    for (uint32_t i = 0; i < f->hops.size(); i++)
    {
        f->hops[i].flow = f.get();
        f->hops[i].hop = i;
    }
    Flow* raw = f.get();
    ids.insert(id);
    flows.emplace(id, std::move(f));
    stats.flows_added++;
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
    ns3::EventId limit_id = Simulator::Schedule(ns3::TimeStep(limit_ps - Now()),
                                                ns3::Ptr<ns3::EventImpl>(ev, false));
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

extern "C" {

hs_fabric*
hs_fabric_create(const hs_scenario* sc, char* err, size_t errlen)
{
    if (sc == nullptr)
    {
        SetErr(err, errlen, "fabric: no scenario");
        return nullptr;
    }
    if (g_fabric_live)
    {
        SetErr(err, errlen, "fabric: an hs_fabric already exists in this process (ns-3 is a "
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
    return f->AddFlow(flow_id, src_gpu, dst_gpu, bytes, start_ps, err, errlen);
}

int
hs_fabric_next_completion(hs_fabric* f, uint64_t limit_ps, hs_flow_done* done)
{
    if (f == nullptr)
        return 0;
    return f->NextCompletion(limit_ps, done);
}

uint64_t
hs_fabric_now_ps(const hs_fabric* f)
{
    (void)f;
    return hs_fabric::Now();
}

uint64_t
hs_fabric_flows_in_flight(const hs_fabric* f)
{
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
    *out = f->stats;
}

void
hs_fabric_destroy(hs_fabric* f)
{
    if (f == nullptr)
        return;
    // Pending events refer to the model: drop them (Destroy releases them
    // without running them) before the model goes.
    Simulator::Destroy();
    delete f;
    FabEvent::ReleasePool();
    g_fabric_live = false;
}

} // extern "C"
