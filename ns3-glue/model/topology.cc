// hysim fabric: building the topology and routing flows over it.
//
// Nodes and links (every link full duplex: one egress port per direction):
//   - GPU <-> its server's NVSwitch (NVLink), every scenario.
//   - Several servers: GPU <-> NIC (PCIe; GPU i uses NIC i % nics.per_server),
//     NIC <-> its leaf switch, leaf <-> every spine (Ethernet,
//     fabric.link_latency_ns). Topologies:
//       single_switch   one switch, every NIC on it;
//       leaf_spine      fabric.leaves leaves, NIC n on leaf n * leaves / NICs
//                       (consecutive servers share a leaf), fabric.spines spines;
//       rail_optimized  one leaf ("rail switch") per NIC index: NIC i of every
//                       server on rail i; fabric.spines spines join the rails
//                       (0: no spines; then a flow for another rail first
//                       crosses NVLink to the source server's GPU on the
//                       destination's rail, as NCCL's PXN does).
//     A leaf's uplink to each spine runs at (NIC Gb/s of its NICs) /
//     oversubscription / spines, so fabric.oversubscription is the leaf's
//     down:up bandwidth ratio.
//       fat_tree        k-ary, 3 tiers (Al-Fares et al.): k pods of k/2 edge
//                       and k/2 aggregation switches, (k/2)^2 cores; given as
//                       fabric.leaves = k^2/2 edges and fabric.spines =
//                       k^2/4 cores; NIC n on edge n * leaves / NICs (at most
//                       k/2 each). Every edge-aggregation and aggregation-core
//                       link runs at (NIC Gb/s × NICs of the fullest edge) /
//                       oversubscription / (k/2). ECMP picks the aggregation
//                       switch and, across pods, the core.
//   - ECMP: each flow is a RoCEv2 connection with its own UDP source port
//     (0xC000 + the number of flows that started before it between the same
//     two NICs, as QPs are numbered); every switch hashes the 5-tuple with a
//     CRC-32 seeded by run.seed (ecmp_hash.h says why that spreads sequential
//     connections evenly). The path is fixed for the flow (no reordering);
//     its ACK/NACK/CNP path back hashes the reversed tuple.
#include "ecmp_hash.h"
#include "fabric_internal.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>

using namespace hysim_fab;

namespace
{

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

bool
Positive(double x)
{
    return x > 0 && std::isfinite(x);
}

std::string
Name(const char* fmt, uint32_t a, const char* fmt2, uint32_t b)
{
    char buf[48];
    char tail[24];
    snprintf(tail, sizeof tail, fmt2, b);
    snprintf(buf, sizeof buf, fmt, a);
    return std::string(buf) + ">" + tail;
}

// Checks the multi-server part of a scenario.
bool
CheckNetwork(const hs_scenario* sc, char* err, size_t errlen)
{
    const auto& fb = sc->fabric;
    if (!fb.present)
    {
        SetErr(err, errlen,
               "fabric: %d servers but the scenario has no fabric: section (which network joins "
               "them?)",
               sc->servers.count);
        return false;
    }
    if (fb.topology < HS_TOPOLOGY_SINGLE_SWITCH || fb.topology > HS_TOPOLOGY_RAIL_OPTIMIZED)
    {
        SetErr(err, errlen, "fabric topology %s across %d servers is not supported yet",
               TopologyName(fb.topology), sc->servers.count);
        return false;
    }
    if (sc->nics.per_server < 1 || !Positive(sc->nics.gbps))
    {
        SetErr(err, errlen, "fabric: %d servers need NICs (nics.per_server %d, %g Gb/s)",
               sc->servers.count, sc->nics.per_server, sc->nics.gbps);
        return false;
    }
    if (!Positive(sc->pcie.gbps))
    {
        SetErr(err, errlen, "fabric: pcie.gbps must be > 0 (got %g)", sc->pcie.gbps);
        return false;
    }
    if (fb.mtu == 0)
    {
        SetErr(err, errlen, "fabric: fabric.mtu must be > 0");
        return false;
    }
    const int nnics = sc->servers.count * sc->nics.per_server;
    if (fb.topology == HS_TOPOLOGY_FAT_TREE)
    {
        const int k = static_cast<int>(std::lround(std::sqrt(2.0 * fb.leaves)));
        if (k < 2 || k % 2 != 0 || fb.leaves != k * k / 2 || fb.spines != k * k / 4)
        {
            SetErr(err, errlen,
                   "fabric: a k-ary fat_tree has leaves = k^2/2 edge switches and spines = k^2/4 "
                   "cores for an even k (k=4: 8 and 4), got leaves %d, spines %d",
                   fb.leaves, fb.spines);
            return false;
        }
        if (nnics > k * k * k / 4)
        {
            SetErr(err, errlen, "fabric: a %d-ary fat_tree holds %d NICs, the scenario has %d", k,
                   k * k * k / 4, nnics);
            return false;
        }
    }
    if (fb.topology == HS_TOPOLOGY_LEAF_SPINE && (fb.leaves < 1 || fb.leaves > nnics))
    {
        SetErr(err, errlen,
               "fabric: leaf_spine needs 1 to %d leaves (one NIC at least each), got %d", nnics,
               fb.leaves);
        return false;
    }
    if (fb.topology == HS_TOPOLOGY_LEAF_SPINE && fb.leaves > 1 && fb.spines < 1)
    {
        SetErr(err, errlen, "fabric: leaf_spine with %d leaves needs at least 1 spine", fb.leaves);
        return false;
    }
    if (fb.topology == HS_TOPOLOGY_RAIL_OPTIMIZED && fb.leaves != 0 &&
        fb.leaves != sc->nics.per_server)
    {
        SetErr(err, errlen,
               "fabric: rail_optimized has one leaf per rail (%d NICs per server), got leaves %d",
               sc->nics.per_server, fb.leaves);
        return false;
    }
    if (fb.spines < 0 || (fb.topology == HS_TOPOLOGY_SINGLE_SWITCH && fb.spines > 0))
    {
        SetErr(err, errlen, "fabric: single_switch has no spines (got %d)", fb.spines);
        return false;
    }
    if (fb.ecn.kmax_kb > 0 && fb.ecn.kmin_kb > fb.ecn.kmax_kb)
    {
        SetErr(err, errlen, "fabric: ecn.kmin_kb %g exceeds kmax_kb %g", fb.ecn.kmin_kb,
               fb.ecn.kmax_kb);
        return false;
    }
    return true;
}

} // namespace

uint32_t
hs_fabric::AddPort(PortKind kind, double gbps, uint64_t latency_ps, std::string name)
{
    Port p;
    p.id = static_cast<uint32_t>(ports.size());
    p.kind = kind;
    p.gbps = gbps;
    p.ps_per_byte = 8.0 * 1e12 / (gbps * 1e9);
    p.latency_ps = latency_ps;
    ports.push_back(std::move(p));
    port_names.push_back(std::move(name));
    return ports.back().id;
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
    if (!Positive(sc->nvlink.gbps_per_gpu))
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
    if (multi && !CheckNetwork(sc, err, errlen))
        return false;
    const uint64_t n = uint64_t(sc->servers.count) * uint64_t(sc->servers.gpus_per_server);
    const uint64_t nnics = multi ? uint64_t(sc->servers.count) * uint64_t(sc->nics.per_server) : 0;
    uint64_t L = 0, S = 0;
    if (multi)
    {
        topology = sc->fabric.topology;
        L = topology == HS_TOPOLOGY_SINGLE_SWITCH    ? 1
            : topology == HS_TOPOLOGY_RAIL_OPTIMIZED ? uint64_t(sc->nics.per_server)
                                                     : uint64_t(sc->fabric.leaves);
        S = L > 1 ? uint64_t(sc->fabric.spines) : 0;
    }
    // A fat tree's k^3 switch-to-switch ports instead of leaf-spine's 2 L S.
    const uint64_t fabric_ports = topology == HS_TOPOLOGY_FAT_TREE
                                      ? 4 * L * uint64_t(std::lround(std::sqrt(double(S))))
                                      : 2 * L * S;
    const uint64_t nports = 2 * n + (multi ? 2 * n + 2 * nnics + fabric_ports : 0);
    if (nports >= kMaxPorts)
    {
        SetErr(err, errlen, "fabric: too many links (%" PRIu64 ")", nports);
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
        const uint32_t s = g / gpus_per_server;
        gpu_up.push_back(
            AddPort(kPortRange, sc->nvlink.gbps_per_gpu, hop_ps, Name("gpu%u", g, "nvs%u", s)));
        gpu_down.push_back(
            AddPort(kPortRange, sc->nvlink.gbps_per_gpu, hop_ps, Name("nvs%u", s, "gpu%u", g)));
    }
    if (!multi)
        return true;

    nics_per_server = static_cast<uint32_t>(sc->nics.per_server);
    mtu = sc->fabric.mtu;
    nic_gbps = sc->nics.gbps;
    nleaves = static_cast<uint32_t>(L);
    nspines = static_cast<uint32_t>(S);
    const char* leaf_fmt = topology == HS_TOPOLOGY_SINGLE_SWITCH    ? "sw%u"
                           : topology == HS_TOPOLOGY_RAIL_OPTIMIZED ? "rail%u"
                           : topology == HS_TOPOLOGY_FAT_TREE       ? "edge%u"
                                                                    : "leaf%u";
    for (uint32_t g = 0; g < ngpus; g++)
    {
        const uint32_t nic = Nic(Server(g), Rail(g));
        pcie_up.push_back(AddPort(kPortRange, sc->pcie.gbps, sc->pcie.latency_ns * 1000,
                                  Name("gpu%u", g, "nic%u", nic)));
        pcie_down.push_back(AddPort(kPortRange, sc->pcie.gbps, sc->pcie.latency_ns * 1000,
                                    Name("nic%u", nic, "gpu%u", g)));
    }
    const uint64_t lat = sc->fabric.link_latency_ns * 1000;
    // fat_tree: edges, then aggregation switches (as many), then cores.
    switches.resize(topology == HS_TOPOLOGY_FAT_TREE ? 2 * L + S : L + S);
    std::vector<uint32_t> nics_on_leaf(L, 0);
    for (uint32_t i = 0; i < nnics; i++)
    {
        uint32_t leaf = 0;
        if (topology == HS_TOPOLOGY_RAIL_OPTIMIZED)
            leaf = i % nics_per_server;
        else if (topology == HS_TOPOLOGY_LEAF_SPINE || topology == HS_TOPOLOGY_FAT_TREE)
            leaf = static_cast<uint32_t>(uint64_t(i) * L / nnics);
        nic_leaf.push_back(leaf);
        nics_on_leaf[leaf]++;
        eth_up.push_back(AddPort(kPortNic, nic_gbps, lat, Name("nic%u", i, leaf_fmt, leaf)));
        ports.back().to_switch = static_cast<int32_t>(leaf);
        eth_down.push_back(AddPort(kPortSwitch, nic_gbps, lat, Name(leaf_fmt, leaf, "nic%u", i)));
    }
    const double oversub = sc->fabric.oversubscription > 0 ? sc->fabric.oversubscription : 1.0;
    if (topology == HS_TOPOLOGY_FAT_TREE)
    {
        // The edges' uplinks carry at most (their NICs' Gb/s) / oversubscription.
        double busiest = 0;
        for (uint32_t c : nics_on_leaf)
            busiest = std::max(busiest, double(c));
        BuildFatTree(busiest * nic_gbps / oversub, lat);
    }
    else
    {
        leaf_up.resize(L * S);
        spine_down.resize(L * S);
        for (uint32_t l = 0; l < L; l++)
            for (uint32_t s = 0; s < S; s++)
            {
                const double up = nics_on_leaf[l] * nic_gbps / oversub / double(S);
                leaf_up[l * S + s] = AddPort(kPortSwitch, up, lat, Name(leaf_fmt, l, "spine%u", s));
                ports.back().to_switch = static_cast<int32_t>(L + s);
                spine_down[s * L + l] =
                    AddPort(kPortSwitch, up, lat, Name("spine%u", s, leaf_fmt, l));
                ports.back().to_switch = static_cast<int32_t>(l);
            }
    }
    if (sc->fabric.rto_ns > kMaxRtoNs)
    {
        // A scenario filled in by hand: the loader refuses such a fabric.rto_us.
        SetErr(err, errlen, "fabric: rto_ns %llu is more than %llu (1000 s)",
               static_cast<unsigned long long>(sc->fabric.rto_ns),
               static_cast<unsigned long long>(kMaxRtoNs));
        return false;
    }
    if (!InitRoce(sc))
    {
        SetErr(err, errlen,
               "fabric: switch_buffer_mib %g is smaller than the PFC headroom and reserve of its "
               "links",
               sc->fabric.switch_buffer_mib);
        return false;
    }
    return true;
}

// Every edge-agg and agg-core link at up_gbps / (k/2) each way.
void
hs_fabric::BuildFatTree(double up_gbps, uint64_t lat)
{
    const uint32_t E = nleaves, k = static_cast<uint32_t>(std::lround(std::sqrt(2.0 * E)));
    const uint32_t h = k / 2, A = E, agg0 = E, core0 = E + A;
    const double gbps = up_gbps / h;
    ft_half = h;
    ft_edge_up.resize(E * h);
    ft_agg_down.resize(A * h);
    ft_agg_up.resize(A * h);
    ft_core_down.resize(h * h * k);
    for (uint32_t e = 0; e < E; e++)
        for (uint32_t j = 0; j < h; j++)
        {
            const uint32_t a = (e / h) * h + j, i = e % h;
            ft_edge_up[e * h + j] = AddPort(kPortSwitch, gbps, lat, Name("edge%u", e, "agg%u", a));
            ports.back().to_switch = static_cast<int32_t>(agg0 + a);
            ft_agg_down[a * h + i] = AddPort(kPortSwitch, gbps, lat, Name("agg%u", a, "edge%u", e));
            ports.back().to_switch = static_cast<int32_t>(e);
        }
    for (uint32_t a = 0; a < A; a++)
        for (uint32_t m = 0; m < h; m++)
        {
            const uint32_t c = (a % h) * h + m, pod = a / h;
            ft_agg_up[a * h + m] = AddPort(kPortSwitch, gbps, lat, Name("agg%u", a, "core%u", c));
            ports.back().to_switch = static_cast<int32_t>(core0 + c);
            ft_core_down[c * k + pod] =
                AddPort(kPortSwitch, gbps, lat, Name("core%u", c, "agg%u", a));
            ports.back().to_switch = static_cast<int32_t>(agg0 + a);
        }
}

// Up to the lowest common tier and down: ECMP picks the aggregation switch
// (hash modulo k/2, as a leaf picks a spine) and, between pods, the core
// (hash bits 16.. modulo k/2: the aggregation tier hashes other bits, as
// switches of two tiers use different hash outputs against polarisation).
void
hs_fabric::FatTreePath(uint32_t nic_a, uint32_t nic_b, uint32_t hash,
                       std::vector<uint32_t>& out) const
{
    const uint32_t h = ft_half, ea = nic_leaf[nic_a], eb = nic_leaf[nic_b];
    const uint32_t pa = ea / h, pb = eb / h, j = hash % h;
    out.push_back(eth_up[nic_a]);
    if (ea != eb)
    {
        out.push_back(ft_edge_up[ea * h + j]);
        uint32_t a = pa * h + j;
        if (pa != pb)
        {
            const uint32_t m = (hash >> 16) % h, c = j * h + m;
            out.push_back(ft_agg_up[a * h + m]);
            out.push_back(ft_core_down[c * 2 * h + pb]);
            a = pb * h + j;
        }
        out.push_back(ft_agg_down[a * h + eb % h]);
    }
    out.push_back(eth_down[nic_b]);
}

void
hs_fabric::EthPath(uint32_t nic_a, uint32_t nic_b, uint32_t hash, std::vector<uint32_t>& out) const
{
    if (topology == HS_TOPOLOGY_FAT_TREE)
    {
        FatTreePath(nic_a, nic_b, hash, out);
        return;
    }
    out.push_back(eth_up[nic_a]);
    const uint32_t la = nic_leaf[nic_a], lb = nic_leaf[nic_b];
    if (la != lb)
    {
        const uint32_t s = hash % nspines; // ECMP: the hash modulo the spines, as switches do
        out.push_back(leaf_up[la * nspines + s]);
        out.push_back(spine_down[s * nleaves + lb]);
    }
    out.push_back(eth_down[nic_b]);
}

void
hs_fabric::Route(Flow& f) const
{
    const uint32_t src = f.src, dst = f.dst;
    f.path.clear();
    if (Server(src) == Server(dst))
    {
        f.path = {gpu_up[src], gpu_down[dst]}; // GPU -> NVSwitch -> GPU
        f.seg = nvlink_seg;
        return;
    }
    // Across servers: segments of one MTU on every hop of the path.
    f.seg = mtu;
    const uint32_t rail = Rail(dst);
    uint32_t via = src; // the GPU whose NIC sends
    if (topology == HS_TOPOLOGY_RAIL_OPTIMIZED && nspines == 0 && Rail(src) != rail)
    {
        // No switch joins two rails: like NCCL's PXN, move the data over NVLink
        // to the source server's GPU on the destination's rail first.
        via = Server(src) * gpus_per_server + rail;
        f.path.push_back(gpu_up[src]);
        f.path.push_back(gpu_down[via]);
    }
    f.nic_src = Nic(Server(src), Rail(via));
    f.nic_dst = Nic(Server(dst), rail);
    f.path.push_back(pcie_up[via]);
    f.net = true;
    f.eth_first = static_cast<uint32_t>(f.path.size());
    // The switch hops ECMP picks are known when the flow starts (OpenConnection);
    // their number is not: it depends on the tiers between the NICs only.
    EthPath(f.nic_src, f.nic_dst, 0, f.path);
    f.eth_last = static_cast<uint32_t>(f.path.size() - 1);
    f.path.push_back(pcie_down[dst]);
}

// At the flow's start, in the canonical order of starts (time, then flow id),
// so that the connection numbers do not depend on the order flows were added.
void
hs_fabric::OpenConnection(Flow& f)
{
    f.udp_src_port = RoceSrcPort(qps_opened[uint64_t(f.nic_src) * nic_leaf.size() + f.nic_dst]++);
    const uint32_t key = EcmpSeed(seed), ip_src = RoceNicIp(f.nic_src),
                   ip_dst = RoceNicIp(f.nic_dst);
    std::vector<uint32_t> eth;
    EthPath(f.nic_src, f.nic_dst, EcmpHash(key, ip_src, ip_dst, f.udp_src_port, kRoceUdpPort), eth);
    std::copy(eth.begin(), eth.end(), f.path.begin() + f.eth_first);
    f.rpath.clear();
    // The responder answers on the same connection: the reversed tuple.
    EthPath(f.nic_dst, f.nic_src, EcmpHash(key, ip_dst, ip_src, f.udp_src_port, kRoceUdpPort),
            f.rpath);
}
