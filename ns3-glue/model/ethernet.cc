// hysim fabric: the RoCEv2 Ethernet part: switch ports with a control and a
// data priority, the shared switch buffer with PFC (or drops without it), ECN
// marking, and the NICs (queue pairs, DCQCN pacing, ACK / NACK / CNP, go-back-N
// with a timeout). The model and where its numbers come from: docs/fabric.md,
// "Ethernet in detail".
#include "fabric_internal.h"

#include <algorithm>
#include <cmath>

using namespace hysim_fab;

namespace
{

constexpr int64_t kReserveBytes = 4096;      // per ingress link (HPCC, SimAI: 4 KB; docs/fabric.md)
constexpr int64_t kResumeOffsetBytes = 3072; // XON hysteresis (HPCC, SimAI: 3 KB)
constexpr int kThresholdShift = 3;           // dynamic threshold alpha = 1/8
constexpr double kHeadroomRtts = 3.0;        // headroom = 3 x rate x link delay ...
constexpr uint32_t kHeadroomMtus = 2;        // ... + 2 MTU (in flight when XOFF lands)
constexpr uint32_t kCtlBytes = 64;           // ACK / NACK / CNP / pause frame on the wire
constexpr uint32_t kAckEvery = 16;           // segments per cumulative ACK
constexpr uint64_t kNackIntervalPs = 500'000'000; // 500 us (HPCC)
constexpr uint64_t kDefaultRtoPs = 1'000'000'000; // 1 ms without progress (HS_DEFAULT_RTO_US)

int64_t
SharedUsed(const Port& in)
{
    return std::max<int64_t>(in.in_bytes - kReserveBytes, 0);
}

int64_t
Threshold(const Switch& sw)
{
    const int64_t free = sw.buffer - sw.total_hdrm - sw.total_rsrv - sw.shared_used;
    return free > 0 ? free >> kThresholdShift : 0;
}

bool
Admit(const Switch& sw, const Port& in, int64_t size)
{
    if (in.in_bytes + size <= kReserveBytes)
        return true;
    return in.in_hdrm + size <= in.headroom || SharedUsed(in) + size <= Threshold(sw);
}

void
Account(Switch& sw, Port& in, int64_t size)
{
    const int64_t after = in.in_bytes + size;
    if (after <= kReserveBytes)
    {
        in.in_bytes = after;
        return;
    }
    if (after - kReserveBytes > Threshold(sw) && in.headroom > 0)
    {
        in.in_hdrm += size;
        return;
    }
    sw.shared_used += std::min(size, after - kReserveBytes);
    in.in_bytes = after;
}

void
Unaccount(Switch& sw, Port& in, int64_t size)
{
    const int64_t from_hdrm = std::min(in.in_hdrm, size);
    in.in_hdrm -= from_hdrm;
    const int64_t before = SharedUsed(in);
    in.in_bytes -= size - from_hdrm;
    sw.shared_used -= before - SharedUsed(in);
}

bool
ShouldPause(const Switch& sw, const Port& in)
{
    return !in.xoff && (in.in_hdrm > 0 || SharedUsed(in) >= Threshold(sw));
}

bool
ShouldResume(const Switch& sw, const Port& in)
{
    const int64_t shared = SharedUsed(in);
    return in.xoff && in.in_hdrm == 0 &&
           (shared == 0 || shared + kResumeOffsetBytes <= Threshold(sw));
}

// Uniform in [0, 1) from the port's stream.
double
NextUniform(uint64_t& state)
{
    state = Mix64(state);
    return double(state >> 11) * (1.0 / 9007199254740992.0);
}

} // namespace

bool
hs_fabric::InitRoce(const hs_scenario* sc)
{
    pfc = sc->fabric.pfc;
    dcqcn = sc->fabric.dcqcn;
    rto_ps = sc->fabric.rto_ns != 0 ? sc->fabric.rto_ns * 1000 : kDefaultRtoPs;
    ecn_kmin = sc->fabric.ecn.kmin_kb * 1000.0;
    ecn_kmax = sc->fabric.ecn.kmax_kb * 1000.0;
    ecn_pmax = sc->fabric.ecn.pmax;
    seed = sc->run.seed;
    const double mib = sc->fabric.switch_buffer_mib;
    const int64_t buffer = mib > 0 && std::isfinite(mib) ? std::llround(mib * 1048576.0) : 0;
    for (auto& sw : switches)
        sw.buffer = buffer;
    for (Port& p : ports)
    {
        if (p.kind == kPortSwitch)
            p.ecn_rng = Mix64(seed ^ Mix64(0xec0000000ull + p.id));
        if (p.to_switch < 0)
            continue;
        Switch& sw = switches[p.to_switch];
        sw.total_rsrv += kReserveBytes;
        if (pfc && buffer > 0)
        {
            const double bytes_per_ps = p.gbps * 1e9 / 8.0 / 1e12;
            p.headroom = std::llround(kHeadroomRtts * bytes_per_ps * double(p.latency_ps)) +
                         int64_t(kHeadroomMtus) * mtu;
            sw.total_hdrm += p.headroom;
        }
    }
    for (const auto& sw : switches)
        if (sw.buffer > 0 && sw.total_hdrm + sw.total_rsrv >= sw.buffer)
            return false;
    return true;
}

void
hs_fabric::TryTransmit(Port& p)
{
    if (p.busy)
        return;
    switch (p.kind)
    {
    case kPortRange:
        RangeTransmit(p);
        return;
    case kPortNic:
        NicTransmit(p);
        return;
    case kPortSwitch:
        break;
    }
    if (!p.ctl.empty())
    {
        const Pkt pkt = p.ctl.front();
        p.ctl.pop_front();
        EthTransmit(p, pkt);
        Release(pkt.flow);
        return;
    }
    if (p.paused || p.data.empty())
        return;
    Pkt pkt = p.data.front();
    p.data.pop_front();
    p.queued_bytes -= pkt.bytes;
    Port& in = ports[pkt.in_port];
    Switch& sw = switches[in.to_switch];
    if (sw.buffer > 0)
    {
        Unaccount(sw, in, pkt.bytes);
        if (ShouldResume(sw, in))
            SendPfc(in, kResume);
    }
    if (ecn_kmax > 0)
    {
        // Thresholds scale with the port's rate (they are given for the NIC rate).
        const double scale = p.gbps / nic_gbps;
        const double q = double(p.queued_bytes);
        const double kmin = ecn_kmin * scale, kmax = ecn_kmax * scale;
        bool mark = q > kmax;
        if (!mark && q > kmin)
            mark = NextUniform(p.ecn_rng) < ecn_pmax * (q - kmin) / (kmax - kmin);
        if (mark)
        {
            pkt.ecn = 1;
            p.st.ecn_marks++;
        }
    }
    EthTransmit(p, pkt);
    Release(pkt.flow);
}

void
hs_fabric::EthTransmit(Port& p, const Pkt& pkt)
{
    const uint64_t ser = SerPs(p, pkt.bytes);
    const uint64_t now = Now();
    p.busy = true;
    p.st.bytes += pkt.bytes;
    p.st.packets++;
    stats.packet_hops++;
    Schedule(now + ser, kClassNet, kTxDone, pkt.flow, &p, pkt.hop, pkt.seq);
    FabEvent* ev =
        Schedule(now + ser + p.latency_ps, kClassNet, kArrive, pkt.flow, &p, pkt.hop, pkt.seq);
    ev->bytes = pkt.bytes;
    ev->ptype = pkt.type;
    ev->ecn = pkt.ecn;
}

void
hs_fabric::SendPfc(Port& in, Kind kind)
{
    in.xoff = kind == kPause;
    const uint64_t delay = in.latency_ps + SerPs(in, kCtlBytes);
    Schedule(Now() + delay, kClassNet, kind, nullptr, &in, 0, in.pfc_seq++);
}

void
hs_fabric::OnPfc(FabEvent& ev)
{
    Port& p = *ev.port;
    if (ev.kind == kPause)
    {
        if (!p.paused)
        {
            p.paused = true;
            p.paused_since = Now();
            p.st.pfc_pauses++;
        }
        return;
    }
    if (p.paused)
    {
        p.paused = false;
        p.st.pfc_paused_ps += Now() - p.paused_since;
        TryTransmit(p);
    }
}

void
hs_fabric::EthArrive(FabEvent& ev)
{
    Pkt pkt;
    pkt.flow = ev.flow;
    pkt.seq = ev.seq;
    pkt.bytes = ev.bytes;
    pkt.hop = static_cast<uint16_t>(ev.hop);
    pkt.type = ev.ptype;
    pkt.ecn = ev.ecn;
    pkt.in_port = ev.port->id;
    if (ev.port->to_switch >= 0)
        SwitchArrive(*ev.port, pkt);
    else if (pkt.type == kData)
        NicReceive(pkt);
    else
        SenderControl(pkt);
}

void
hs_fabric::SwitchArrive(Port& in, Pkt pkt)
{
    Flow* f = pkt.flow;
    const auto& route = pkt.type == kData ? f->path : f->rpath;
    pkt.hop++;
    Port& out = ports[route[pkt.hop]];
    if (pkt.type != kData)
    {
        out.ctl.push_back(pkt);
        f->refs++;
        TryTransmit(out);
        return;
    }
    Switch& sw = switches[in.to_switch];
    if (sw.buffer > 0)
    {
        if (!Admit(sw, in, pkt.bytes))
        {
            out.st.drops++;
            return;
        }
        Account(sw, in, pkt.bytes);
        if (pfc && ShouldPause(sw, in))
            SendPfc(in, kPause);
    }
    out.data.push_back(pkt);
    f->refs++;
    out.queued_bytes += pkt.bytes;
    if (out.queued_bytes > out.st.max_queue_bytes)
        out.st.max_queue_bytes = out.queued_bytes;
    TryTransmit(out);
}

void
hs_fabric::NicReceive(const Pkt& pkt)
{
    Flow* f = pkt.flow;
    if (pkt.seq == f->rcv_nxt)
    {
        f->rcv_nxt++;
        QueueAtRangeHop(f, f->eth_last + 1, 1); // on to PCIe
        if (pkt.ecn && DcqcnCnpDue(f))
            SendControl(f, kCnp, 0);
        if (++f->since_ack >= kAckEvery || f->rcv_nxt == f->nseg)
        {
            f->since_ack = 0;
            SendControl(f, kAck, f->rcv_nxt);
        }
        return;
    }
    if (pkt.seq > f->rcv_nxt)
    {
        const uint64_t now = Now();
        if (f->nack_seq != f->rcv_nxt || now - f->nack_ps >= kNackIntervalPs)
        {
            f->nack_seq = f->rcv_nxt;
            f->nack_ps = now;
            SendControl(f, kNack, f->rcv_nxt);
        }
    }
    // seq < rcv_nxt: a duplicate from a go-back-N resend; already delivered.
}

void
hs_fabric::SendControl(Flow* f, uint8_t type, uint64_t seq)
{
    Pkt c;
    c.flow = f;
    c.seq = seq;
    c.bytes = kCtlBytes;
    c.hop = 0;
    c.type = type;
    Port& p = ports[f->rpath[0]];
    if (type == kCnp)
        p.st.cnps++;
    p.ctl.push_back(c);
    f->refs++;
    TryTransmit(p);
}

void
hs_fabric::SenderControl(const Pkt& pkt)
{
    Flow* f = pkt.flow;
    switch (pkt.type)
    {
    case kAck:
        if (pkt.seq > f->snd_una)
        {
            f->snd_una = pkt.seq;
            f->last_active_ps = Now();
            if (f->snd_una >= f->nseg)
                DcqcnAllAcked(f);
        }
        return;
    case kNack:
        if (pkt.seq < f->snd_una)
            return; // stale
        if (pkt.seq > f->snd_una)
        {
            f->snd_una = pkt.seq;
            f->last_active_ps = Now();
            if (f->snd_una >= f->nseg)
                DcqcnAllAcked(f);
        }
        if (f->snd_nxt > pkt.seq)
        {
            f->snd_nxt = pkt.seq; // go back N
            NicHasData(f);
        }
        return;
    case kCnp:
        DcqcnOnCnp(f);
        return;
    }
}

void
hs_fabric::NicHasData(Flow* f)
{
    Port& p = ports[f->path[f->eth_first]];
    if (!f->in_nic_rr && f->snd_nxt < f->nic_avail)
    {
        f->in_nic_rr = true;
        f->refs++;
        p.qps.push_back(f);
    }
    TryTransmit(p);
}

void
hs_fabric::NicTransmit(Port& p)
{
    if (!p.ctl.empty())
    {
        const Pkt pkt = p.ctl.front();
        p.ctl.pop_front();
        EthTransmit(p, pkt);
        Release(pkt.flow);
        return;
    }
    if (p.paused)
        return;
    const uint64_t now = Now();
    uint64_t earliest = kNever;
    for (size_t n = p.qps.size(); n > 0; n--)
    {
        Flow* f = p.qps.front();
        p.qps.pop_front();
        if (f->snd_nxt >= f->nic_avail)
        {
            f->in_nic_rr = false;
            Release(f);
            continue;
        }
        if (f->next_tx_ps > now)
        {
            earliest = std::min(earliest, f->next_tx_ps);
            p.qps.push_back(f);
            continue;
        }
        SendData(p, f);
        if (f->snd_nxt < f->nic_avail)
            p.qps.push_back(f); // round-robin: one packet per flow per turn
        else
        {
            f->in_nic_rr = false;
            Release(f);
        }
        return;
    }
    if (earliest != kNever && earliest < p.wake_ps)
    {
        p.wake_ps = earliest;
        Schedule(earliest, kClassNet, kWake, nullptr, &p, 0, p.pfc_seq++);
    }
}

void
hs_fabric::SendData(Port& p, Flow* f)
{
    const uint64_t seq = f->snd_nxt++;
    Pkt pkt;
    pkt.flow = f;
    pkt.seq = seq;
    pkt.bytes = f->SegBytes(seq);
    pkt.hop = static_cast<uint16_t>(f->eth_first);
    pkt.type = kData;
    if (seq < f->max_sent)
        p.st.retransmissions++;
    else
        f->max_sent = seq + 1;
    const uint64_t now = Now();
    f->last_active_ps = now; // the timeout counts from the last send or ACK
    // DCQCN pacing: below line rate, the next packet of this flow waits.
    DcqcnCatchUp(f);
    f->next_tx_ps = now;
    if (f->cc.rate_gbps < p.gbps)
        f->next_tx_ps += static_cast<uint64_t>(std::llround(pkt.bytes * 8e3 / f->cc.rate_gbps));
    if (!f->rto_armed)
    {
        f->rto_armed = true;
        ArmTimer(f, kRto, now + rto_ps);
    }
    EthTransmit(p, pkt);
}

void
hs_fabric::OnWake(Port& p)
{
    if (Now() == p.wake_ps)
        p.wake_ps = kNever;
    TryTransmit(p);
}

void
hs_fabric::ArmTimer(Flow* f, Kind kind, uint64_t at_ps, uint64_t gen)
{
    Schedule(at_ps, kClassNet, kind, f, nullptr, 0, gen);
}

void
hs_fabric::OnRto(Flow* f)
{
    if (f->snd_una >= f->nseg || f->snd_una >= f->snd_nxt)
    {
        f->rto_armed = false; // nothing outstanding: armed again by the next send
        return;
    }
    const uint64_t now = Now();
    if (f->snd_nxt < f->nic_avail)
        f->last_active_ps = now; // waits for its turn at the NIC (round-robin, pause, pacing)
    else if (now - f->last_active_ps >= rto_ps)
    {
        f->snd_nxt = f->snd_una; // timeout: resend from the first unacknowledged segment
        f->last_active_ps = now;
        NicHasData(f);
    }
    ArmTimer(f, kRto, f->last_active_ps + rto_ps);
}
