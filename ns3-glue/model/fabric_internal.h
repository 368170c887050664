// hysim fabric: the model's private types, shared by fabric.cc (ABI, flows,
// events, NVLink/PCIe hops), topology.cc (building, routing, ECMP),
// ethernet.cc (RoCEv2 ports: switch queues, PFC, ECN, NIC send/receive with
// go-back-N) and dcqcn.cc (congestion control at the sending NIC).
//
// Two kinds of egress port:
//   - range ports (NVLink, PCIe): lossless, unbounded; a port keeps, per flow,
//     only the range of segment numbers waiting there (segments of one flow
//     stay in order on these hops), served round-robin over flows.
//   - Ethernet ports (NIC -> switch, switch -> switch/NIC): real packets in a
//     FIFO per priority (data; control for ACK/NACK/CNP, served first). A NIC
//     port serves its flows (queue pairs) round-robin, each paced by its
//     DCQCN rate. PFC pause frames act on the data priority only.
#ifndef HYSIM_NS3GLUE_FABRIC_INTERNAL_H
#define HYSIM_NS3GLUE_FABRIC_INTERNAL_H

#include "hysim/fabric.h"

#include "canonical_scheduler.h"

#include <ns3/nstime.h>
#include <ns3/simulator.h>

#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace hysim_fab
{

struct WorkerProxy;

constexpr uint64_t kMaxTimePs = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
constexpr uint64_t kMaxSegments = uint64_t(1) << 40; // segment number field of the key
constexpr uint32_t kMaxPorts = uint32_t(1) << 20;    // port field of the key
constexpr uint64_t kMaxRtoNs = 1'000'000'000'000;    // 1000 s: fabric.rto_us at most 1e9 (loader.c)
constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

// Event classes (key k0): order of equal-time events of different kinds.
enum : uint64_t
{
    kClassLimit = 0,   // end of a next_completion step: runs before anything at that time
    kClassStart = 1,   // a flow starts
    kClassDeliver = 2, // a segment reaches its destination GPU
    kClassNet = 3,     // everything else: transmissions, arrivals, PFC, timers
};

enum Kind : uint8_t
{
    kLimit = 0,
    kStart = 1,
    kTxDone = 2,
    kArrive = 3,
    kPause = 4,  // a PFC XOFF frame reaches the port it pauses
    kResume = 5, // a PFC XON frame reaches the port
    kWake = 6,   // a NIC port's earliest paced flow may send again
    kAlpha = 7,  // DCQCN alpha update timer
    kDecrease = 8,
    kIncrease = 9,
    kRto = 10,      // go-back-N retransmission timeout
    kSample = 11,   // link sampling for statistics (reads the model only)
    kDcqcnEnd = 12, // lazy DCQCN timers: holds the flow until its last timer would have run
};

enum PortKind : uint8_t
{
    kPortRange = 0, // NVLink / PCIe
    kPortNic = 1,   // NIC -> switch
    kPortSwitch = 2 // switch -> switch or NIC
};

enum PktType : uint8_t
{
    kData = 0,
    kAck = 1,  // cumulative: every segment below seq arrived in order
    kNack = 2, // out-of-order arrival: resend from seq (go-back-N)
    kCnp = 3,  // congestion notification, receiver -> sender
};

struct Flow;

// An Ethernet packet; seq is the segment number (data) or the acknowledged
// segment (ACK/NACK). hop indexes the flow's path (data) or reverse path (control).
struct Pkt
{
    Flow* flow = nullptr;
    uint64_t seq = 0;
    uint32_t bytes = 0;
    uint16_t hop = 0;
    uint8_t type = kData;
    uint8_t ecn = 0;
    uint32_t in_port = 0; // the link it arrived over (switch buffer accounting)
};

// A flow's state at one range hop: segments [next_seq, next_seq + avail) wait there.
struct FlowHop
{
    Flow* flow = nullptr;
    uint32_t hop = 0;
    bool queued = false; // in its port's round-robin list
    uint64_t next_seq = 0;
    uint64_t avail = 0;
};

// DCQCN state of one queue pair at the sending NIC (dcqcn.cc).
struct Dcqcn
{
    double rate_gbps = 0;   // current rate (starts at line rate)
    double target_gbps = 0; // rate to recover to
    double alpha = 1.0;
    bool first_cnp = true;      // no CNP seen yet: timers not running
    bool cnp_for_alpha = false; // a CNP arrived since the last alpha update
    bool cnp_for_decrease = false;
    uint32_t inc_stage = 0; // rate-increase events since the last decrease
    uint64_t inc_gen = 0;   // identifies the live rate-increase timer
    // Lazy timers (dcqcn.cc): when each would run next (kNever: not armed);
    // no events, replayed when the flow's rate or flags are next needed.
    bool lazy = false; // lazy timers running
    uint64_t alpha_ps = kNever;
    uint64_t decrease_ps = kNever;
    uint64_t increase_ps = kNever;
    uint64_t last_increase_ps = 0; // latest rate-increase timer armed, superseded or not
    uint64_t alpha_lag = 0;        // alpha updates without a CNP not yet multiplied in (dcqcn.cc)
};

struct Flow
{
    uint64_t id = 0;
    uint32_t src = 0, dst = 0;
    uint64_t bytes = 0;
    uint64_t start_ps = 0;
    uint32_t seg = 0;           // segment size
    uint64_t nseg = 0;          // number of segments
    std::vector<uint32_t> path; // egress ports, source first
    std::vector<FlowHop> hops;  // one per path entry (used on range hops)
    uint32_t refs = 0;          // pending events and queued packets naming it
    bool done = false;          // last byte delivered and reported

    // Ethernet part (net == true): path[eth_first] is the source NIC's port,
    // path[eth_last] the switch port into the destination NIC.
    bool net = false;
    uint32_t eth_first = 0, eth_last = 0;
    std::vector<uint32_t> rpath;       // destination NIC -> source NIC (ACK, NACK, CNP)
    uint32_t nic_src = 0, nic_dst = 0; // the NICs it leaves and enters by
    uint16_t udp_src_port = 0;         // RoCEv2: from its QP (ecmp_hash.h); what ECMP hashes

    // Sender (go-back-N): segments [0, nic_avail) have reached the source NIC.
    uint64_t nic_avail = 0, snd_nxt = 0, snd_una = 0, max_sent = 0;
    bool in_nic_rr = false;
    uint64_t next_tx_ps = 0; // DCQCN pacing: earliest start of the next data packet
    bool rto_armed = false;
    uint64_t last_active_ps = 0; // last data sent or ACK progress (retransmission timer)
    Dcqcn cc;

    // Receiver.
    uint64_t rcv_nxt = 0;
    uint32_t since_ack = 0;
    uint64_t nack_seq = kNever, nack_ps = 0;
    uint64_t cnp_ps = kNever; // last CNP sent (kNever: none yet)

    uint32_t
    SegBytes(uint64_t seq) const
    {
        return seq + 1 < nseg ? seg : static_cast<uint32_t>(bytes - uint64_t(seg) * (nseg - 1));
    }
};

struct LinkCounters
{
    uint64_t bytes = 0, packets = 0;
    uint64_t pfc_pauses = 0, pfc_paused_ps = 0;
    uint64_t ecn_marks = 0, drops = 0, retransmissions = 0, cnps = 0;
    uint64_t max_queue_bytes = 0;
};

// The sending end of one direction of a link.
struct Port
{
    uint32_t id = 0;
    PortKind kind = kPortRange;
    double gbps = 0;
    double ps_per_byte = 0; // serialisation time
    uint64_t latency_ps = 0;
    bool busy = false;
    uint64_t queued_bytes = 0; // data waiting here (range ports, switch ports)

    // Range ports.
    std::deque<FlowHop*> rr; // flows with segments waiting here, round-robin

    // Ethernet ports.
    int32_t to_switch = -1;    // switch the link leads into (-1: a NIC)
    std::deque<Pkt> ctl;       // control priority, strict priority over data
    std::deque<Pkt> data;      // switch ports: data FIFO
    std::deque<Flow*> qps;     // NIC ports: flows with data to send, round-robin
    uint64_t wake_ps = kNever; // NIC ports: pending wake-up
    uint64_t pfc_seq = 0;      // distinct keys for PFC / wake events at this port
    bool paused = false;       // data priority paused by the downstream switch
    uint64_t paused_since = 0;
    uint64_t ecn_rng = 0; // switch ports: marking random stream

    // Ingress accounting at the downstream switch for packets that came over this link.
    int64_t in_bytes = 0; // reserve + shared
    int64_t in_hdrm = 0;  // headroom in use
    int64_t headroom = 0;
    bool xoff = false; // the switch has paused this port (XON not sent yet)

    LinkCounters st;
};

// An Ethernet switch's shared buffer (PFC / admission, docs/fabric.md).
struct Switch
{
    int64_t buffer = 0; // 0: unbounded, no admission control and no PFC
    int64_t total_hdrm = 0, total_rsrv = 0, shared_used = 0;
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
    uint32_t bytes = 0; // Ethernet arrivals: the packet
    uint8_t ptype = kData;
    uint8_t ecn = 0;

    void Notify() override;

    static void* operator new(size_t size);
    static void operator delete(void* p);
    static void ReleasePool(); // frees the recycled blocks (no event may be live)

private:
    static std::vector<void*>&
    Pool()
    {
        static auto* pool = new std::vector<void*>; // never destroyed: usable at exit
        return *pool;
    }
};

// printf into a caller's error buffer (nothing when err is null or errlen is 0).
void SetErr(char* err, size_t errlen, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

// splitmix64: the model's deterministic hash and random stream.
inline uint64_t
Mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

} // namespace hysim_fab

struct hs_fabric
{
    using Flow = hysim_fab::Flow;
    using Port = hysim_fab::Port;
    using Pkt = hysim_fab::Pkt;
    using FabEvent = hysim_fab::FabEvent;

    // fabric.cc
    int AddFlow(uint64_t id, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t start_ps,
                char* err, size_t errlen);
    int NextCompletion(uint64_t limit_ps, hs_flow_done* done);
    static uint64_t
    Now()
    {
        return static_cast<uint64_t>(ns3::Simulator::Now().GetTimeStep());
    }
    void Handle(FabEvent& ev);
    void Release(Flow* f);
    FabEvent* Schedule(uint64_t at_ps, uint64_t cls, hysim_fab::Kind kind, Flow* flow, Port* port,
                       uint32_t hop, uint64_t seq);
    uint64_t SerPs(const Port& p, uint32_t bytes) const;
    void RangeTransmit(Port& p);
    void RangeArrive(FabEvent& ev);
    void QueueAtRangeHop(Flow* f, uint32_t hop, uint64_t nseg_new);
    void LinkStats(size_t i, hs_fabric_link_stats* out) const;
    void EmitSample(uint64_t t_ps);
    void OnSample();
    void ResumeSampling(); // a flow is added: report the idle stretch, sample again

    // topology.cc
    bool Build(const hs_scenario* sc, char* err, size_t errlen);
    void Route(Flow& f) const;
    void OpenConnection(Flow& f); // at its start: UDP source port, ECMP hops, path back
    void EthPath(uint32_t nic_a, uint32_t nic_b, uint32_t hash, std::vector<uint32_t>& out) const;
    void BuildFatTree(double oversub, uint64_t lat);
    void FatTreePath(uint32_t nic_a, uint32_t nic_b, uint32_t hash,
                     std::vector<uint32_t>& out) const;

    // ethernet.cc
    bool InitRoce(const hs_scenario* sc); // false: headroom and reserve exceed the buffer
    void TryTransmit(Port& p);            // any port kind
    void EthTransmit(Port& p, const Pkt& pkt);
    void EthArrive(FabEvent& ev);
    void SwitchArrive(Port& in, Pkt pkt);
    void SendPfc(Port& in, hysim_fab::Kind kind);
    void SendData(Port& p, Flow* f);
    void NicReceive(const Pkt& pkt);
    void SenderControl(const Pkt& pkt);
    void SendControl(Flow* f, uint8_t type, uint64_t seq);
    void NicHasData(Flow* f);
    void NicTransmit(Port& p);
    void OnPfc(FabEvent& ev);
    void OnWake(Port& p);
    void OnRto(Flow* f);
    void ArmTimer(Flow* f, hysim_fab::Kind kind, uint64_t at_ps, uint64_t gen = 0);

    // dcqcn.cc
    void DcqcnOnCnp(Flow* f);
    void DcqcnTimer(Flow* f, hysim_fab::Kind kind, uint64_t gen);
    void DcqcnInit(Flow* f);
    bool DcqcnCnpDue(Flow* f);   // receiver: may a CNP go out now?
    void DcqcnCatchUp(Flow* f);  // lazy timers: run those due before the current event
    void DcqcnAllAcked(Flow* f); // every segment acknowledged: the timers stop
    // Would an event with this key have run before the current one?
    bool BeforeCurrent(uint64_t now, uint64_t at_ps, uint64_t k0, uint64_t k1, uint64_t k2) const;

    uint32_t ngpus = 0;
    uint32_t gpus_per_server = 0;
    std::vector<Port> ports;
    std::vector<std::string> port_names;
    std::vector<hysim_fab::Switch> switches;
    std::vector<uint32_t> gpu_up;   // GPU g -> its NVSwitch
    std::vector<uint32_t> gpu_down; // NVSwitch -> GPU g
    uint32_t nvlink_seg = 0;
    // Multi-server only (empty otherwise):
    uint32_t nics_per_server = 0;
    int topology = HS_TOPOLOGY_SINGLE_SWITCH;
    uint32_t nleaves = 0, nspines = 0;
    uint32_t mtu = 0;
    double nic_gbps = 0;
    std::vector<uint32_t> pcie_up;    // GPU g -> its NIC
    std::vector<uint32_t> pcie_down;  // NIC -> GPU g
    std::vector<uint32_t> nic_leaf;   // NIC n -> its leaf (or only) switch
    std::vector<uint32_t> eth_up;     // NIC n -> its switch
    std::vector<uint32_t> eth_down;   // switch -> NIC n
    std::vector<uint32_t> leaf_up;    // leaf l -> spine s at [l * nspines + s]
    std::vector<uint32_t> spine_down; // spine s -> leaf l at [s * nleaves + l]
    // fat_tree (k-ary, 3 tiers; topology.cc): h = k / 2; edge e is in pod e / h,
    // aggregation switch p * h + j is the j-th of pod p, core j * h + m sits
    // above the j-th aggregation switch of every pod.
    uint32_t ft_half = 0;               // k / 2
    std::vector<uint32_t> ft_edge_up;   // edge e -> its pod's agg j at [e * h + j]
    std::vector<uint32_t> ft_agg_down;  // agg a -> its pod's edge i at [a * h + i]
    std::vector<uint32_t> ft_agg_up;    // agg a -> core (a % h) * h + m at [a * h + m]
    std::vector<uint32_t> ft_core_down; // core c -> pod p's agg at [c * k + p]

    // RoCE settings (ethernet.cc documents the values).
    bool pfc = false, dcqcn = false;
    uint64_t rto_ps = 0; // go-back-N retransmission timeout (fabric.rto_us)
    // DCQCN timers as replayed state instead of events (off only with the
    // insertion-order tie diagnostic, where no key orders them).
    bool lazy_dcqcn = true;
    // Key of the event now running (FabEvent::Notify): what lazy timers compare with.
    uint64_t cur_k0 = 0, cur_k1 = 0, cur_k2 = 0;
    double ecn_kmin = 0, ecn_kmax = 0, ecn_pmax = 0; // bytes; kmax 0: no marking
    uint64_t seed = 0;
    // Connections opened from NIC a to NIC b, at [a * NICs + b] (ecmp_hash.h):
    // the next flow between them takes the next QP's UDP source port.
    std::unordered_map<uint64_t, uint32_t> qps_opened;

    uint32_t
    Server(uint32_t g) const
    {
        return g / gpus_per_server;
    }
    uint32_t
    Rail(uint32_t g) const
    {
        return (g % gpus_per_server) % nics_per_server;
    }
    uint32_t
    Nic(uint32_t server, uint32_t rail) const
    {
        return server * nics_per_server + rail;
    }

    std::unordered_map<uint64_t, std::unique_ptr<Flow>> flows; // added, not yet released
    std::unordered_set<uint64_t> ids;                          // every id ever added

    // Worker mode (fabric_proxy.cc): the model lives in another process.
    hysim_fab::WorkerProxy* remote = nullptr;

    bool have_done = false;
    hs_flow_done pending{};
    uint64_t events_base = 0;
    hs_fabric_stats stats{};

    // Link sampling (hs_fabric_sample_links); interval 0: off.
    uint64_t sample_interval_ps = 0;
    uint64_t next_sample_ps = 0; // next grid point not yet reported
    bool sample_pending = false; // a kSample event is scheduled
    hs_fabric_sample_fn sample_fn = nullptr;
    void* sample_ctx = nullptr;
    std::vector<hs_fabric_link_sample> sample_buf;

private:
    uint32_t AddPort(hysim_fab::PortKind kind, double gbps, uint64_t latency_ps, std::string name);
};

#endif
